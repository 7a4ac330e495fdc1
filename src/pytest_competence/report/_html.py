"""The HTML report: one self-contained page rendered from a results document.

The page needs nothing beyond itself — no script, no network, no external CSS or fonts — so it
opens from disk, from a CI artifact or from an archive years later. Plots are inline SVG drawn
by :mod:`pytest_competence.report._svg`. Every string that came from a model or a user (prompts,
answers, model names, node ids, the family's repr) is escaped, and a Content-Security-Policy
forbids script outright as a second line of defence. The output depends only on the document:
no timestamps, no randomness, so serial and ``-n auto`` runs give byte-identical pages.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_competence.report._cells import family_html, html_table
from pytest_competence.report._diagnosis import diagnosis_html
from pytest_competence.report._matrix import family_matrices
from pytest_competence.drawing import SHOWN_PRESENTATIONS, esc
from pytest_competence.report._svg import result_plots
from pytest_competence.report._terminal import verdict

__all__ = ["render_html"]

LEGEND = [
    ("R", "robust-correct: every presentation right, on jointly parsed instances"),
    ("D", "shared-wrong: every presentation wrong, on jointly parsed instances"),
    ("U", "presentation-dependent: right under some presentations only (R + D + U = 1)"),
    ("ι", "invariance R + D; strict ι counts an unparsed answer as a disagreement"),
    ("κₙ", "chance-corrected invariance (ι − ιₑ)/(1 − ιₑ), ιₑ = q² + (1 − q)², q the "
           "yes-rate; κ̄ averages the defined κₙ"),
    ("accuracy", "all prompts, invalid answers counted wrong; band: 95% Wilson interval on R"),
    ("any / fraction / all", "any presentation right; share of prompts right; all right"),
    ("McNemar b, c", "discordant pairs: first right and second wrong, and the reverse"),
    ("—", "undefined (for example κ for constant answers), never zero"),
]

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
color:#24292f;background:#f6f7f9;margin:0;padding:24px 32px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:0 0 10px;word-break:break-all}
h3{font-size:15px;margin:18px 0 6px}code,pre{font:12.5px ui-monospace,Menlo,Consolas,monospace}
pre{white-space:pre-wrap;word-break:break-word;background:#f3f4f6;padding:6px 8px;margin:0;
border-radius:4px;max-height:24em;overflow:auto}
section{background:#fff;border:1px solid #d8dde3;border-radius:8px;padding:16px 20px;
margin:0 0 20px}
table{border-collapse:collapse;font-size:13px;margin:4px 0}th,td{padding:3px 8px;
border-bottom:1px solid #e6e9ed;text-align:right;vertical-align:top;white-space:nowrap}
td.l{white-space:normal}th{background:#f3f4f6;white-space:normal}
td.l,th.l{text-align:left}.wide{overflow-x:auto}table.kv td{text-align:left}
table.kv td:first-child{color:#57606a}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;color:#fff;font-size:12px;font-weight:600;margin-right:6px}.passed{background:#2c7a4b}
.failed{background:#c0392b}.other{background:#6a737d}.muted{color:#57606a}
.plots{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:12px 20px}
figure{margin:0}figcaption{font-weight:600;font-size:13px;margin:0 0 2px}
figcaption span{font-weight:400;color:#57606a}svg.chart{width:100%;height:auto}
svg text{font:11px system-ui,sans-serif;fill:#24292f}svg text.axis{font-size:12px}
svg text.rule,svg text.small{fill:#57606a;font-size:10px}svg text.note{fill:#57606a;font-size:13px}
svg text.onbar{fill:#fff;font-size:10px}.warn{background:#fff4d6;border-left:4px solid #e0a526;
padding:6px 10px;margin:6px 0}dl.legend{display:grid;grid-template-columns:max-content 1fr;
gap:2px 12px;margin:8px 0 0}dl.legend dt{font-weight:600}dl.legend dd{margin:0}
"""


def _num(value: Any, digits: int = 3, signed: bool = False) -> str:
    if value is None or isinstance(value, bool) or not math.isfinite(value):
        return "—"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def _p(value: Any) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:.1e}" if value < 1e-3 else f"{value:.3f}"


def _interval(triple: Any, signed: bool = False) -> str:
    """``estimate [low, high]`` from an ``[estimate, low, high]`` triple."""
    if not triple or triple[0] is None:
        return "—"
    est, low, high = (_num(v, signed=signed) for v in triple)
    return f"{est} [{low}, {high}]"


def _value(value: Any) -> str:
    """Any JSON value as escaped text: numbers to three places, mappings as ``key: value``."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return _num(value)
    if isinstance(value, Mapping):
        return ", ".join(f"{esc(k)}: {_value(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_value(v) for v in value)
    return esc(value)


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> str:
    """A table of already-escaped cells; the first ``left`` columns align left."""
    def cells(tag: str, row: Sequence[str]) -> str:
        return "".join(f'<{tag}{" class=l" if i < left else ""}>{c}</{tag}>'
                       for i, c in enumerate(row))
    body = "".join(f"<tr>{cells('td', row)}</tr>" for row in rows)
    return f'<div class="wide"><table><tr>{cells("th", head)}</tr>{body}</table></div>'


def _kv(rows: Sequence[tuple[str, str]]) -> str:
    return '<table class="kv">' + "".join(f"<tr><td>{k}</td><td>{v}</td></tr>"
                                          for k, v in rows) + "</table>"


def _badge(r: Mapping[str, Any]) -> str:
    """The terminal's verdict: pytest's outcome, or the condition itself in report-only runs."""
    text = verdict(r)
    kind = "passed" if text == "PASS" else "failed" if text.startswith("FAIL") else "other"
    return f'<span class="badge {kind}">{esc(text)}</span>'


def _plots(r: Mapping[str, Any]) -> str:
    figures = "".join(f"<figure><figcaption>{esc(title)} <span>{esc(note)}</span></figcaption>"
                      f"{svg}</figure>" for title, note, svg in result_plots(r))
    return f'<div class="plots">{figures}</div>'


def _level_table(r: Mapping[str, Any]) -> str:
    shown = r["presentations"]
    head = (["n", "instances", "joint"] + [f"acc [{esc(p)}]" for p in shown]
            + ["mean acc (joint)", "R", "R 95% CI", "D", "U", "ι", "strict ι", "yes-rate", "κₙ",
               "coverage", "any", "fraction", "all"])
    rows = []
    for lv in r["levels"]:
        ci = lv.get("robust_correct_ci")
        rows.append([esc(lv["n"]), esc(lv["instances"]), esc(lv["jointly_parsed"])]
                    + [_num(lv["accuracy_by_presentation"].get(p)) for p in shown]
                    + [_num(lv.get(k)) for k in ("mean_accuracy_joint", "robust_correct")]
                    + ["—" if not ci else f"[{_num(ci[0])}, {_num(ci[1])}]"]
                    + [_num(lv.get(k)) for k in (
                        "shared_wrong", "presentation_dependent", "invariance",
                        "strict_invariance", "yes_rate", "kappa", "coverage", "any_correct",
                        "fraction_correct", "all_correct")])
    return _table(head, rows) if rows else '<p class="muted">No levels.</p>'


def _pairs_table(r: Mapping[str, Any]) -> str:
    rows = []
    for lv in r["levels"]:
        for name, pr in lv.get("pairs", {}).items():
            m = pr.get("mcnemar") or {}
            rows.append([esc(lv["n"]), f"{esc(r['presentations'][0])} vs {esc(name)}",
                         esc(pr.get("jointly_parsed"))]
                        + [_num(pr.get(k)) for k in ("invariance", "strict_invariance",
                                                     "yes_rate", "kappa", "consistency")]
                        + [esc(m.get("b")), esc(m.get("c")), esc(m.get("method")),
                           _p(m.get("p_value")), _p(m.get("p_holm"))])
    if not rows:
        return ""
    head = ["n", "pair", "joint", "ι", "strict ι", "yes-rate", "κₙ", "both right", "b", "c",
            "test", "p", "p (Holm)"]
    table = _table(head, rows, left=2)
    if len(r["presentations"]) > SHOWN_PRESENTATIONS:  # variations, intervention cells: folded
        return (f"<details><summary><b>Paired figures per level</b> ({len(rows)} pairs)"
                f"</summary>{table}</details>")
    return "<h3>Paired figures per level</h3>" + table


def _summary(r: Mapping[str, Any]) -> str:
    s, shown = r["summary"], r["presentations"]
    boot = s.get("bootstrap") or {}

    def ci(key: str, signed: bool = False) -> str:
        triple = boot.get(key)
        if not triple or triple[1] is None:
            return ""
        low, high = _num(triple[1], signed=signed), _num(triple[2], signed=signed)
        return f" (95% interval [{low}, {high}])"

    rows = [("instances", esc(s.get("instances"))),
            ("accuracy (pooled)", _value(s.get("accuracy_by_presentation") or {})),
            ("all correct (pooled)", _num(s.get("all_correct"))),
            ("κ̄", _num(s.get("kappa_bar")) + ci("kappa_bar"))]
    for key, label in (("robust_correct", "R (pooled)"), ("invariance", "ι (pooled)")):
        if key in boot:
            rows.append((label, _num(boot[key][0]) + ci(key)))
    per_pair: list[tuple[str, str]] = []  # one row per non-original presentation
    for key, value in boot.items():
        if key.startswith("accuracy_difference["):
            pair = key[len("accuracy_difference["):-1].replace("-", " − ", 1)
            per_pair.append((f"accuracy difference {esc(pair)}",
                             _num(value[0], signed=True) + ci(key, signed=True)))
    for name, m in (s.get("mcnemar") or {}).items():
        per_pair.append((f"McNemar {esc(shown[0])} vs {esc(name)}",
                         f"b = {esc(m.get('b'))}, c = {esc(m.get('c'))}, {esc(m.get('method'))}, "
                         f"statistic {_num(m.get('statistic'))}, p = {_p(m.get('p_value'))}"))
    folded = len(shown) > SHOWN_PRESENTATIONS
    if not folded:
        rows.extend(per_pair)
    if "repeat_agreement" in s:
        rows.append(("repeat agreement", _value(s["repeat_agreement"])))
    if boot:
        rows.append(("intervals", f"paired bootstrap, B = {esc(boot.get('B'))}, seed "
                                  f"{esc(boot.get('seed'))}, stratified by "
                                  f"{esc(boot.get('stratified_by'))}"))
    html = _kv(rows)
    if folded and per_pair:
        html += (f"<details><summary>accuracy differences and McNemar tests for "
                 f"{len(shown) - 1} presentations</summary>{_kv(per_pair)}</details>")
    b = s.get("boundary")
    if b:
        tau = "—" if b.get("tau") is None else f"{b['tau']:g}"
        # The schema's names; stats.BoundaryReproducibility.as_dict() calls them differently.
        crossing = b["crossing"] if "crossing" in b else b.get("observed_level")
        again = b["reproducibility"] if "reproducibility" in b else b.get(
            "reproduction_probability")
        if crossing is None:
            text = f"ι stays at or above τ = {tau} at every level"
        else:
            text = f"ι first falls below τ = {tau} at n = {esc(crossing)}"
        if again is not None:
            text += f"; the same crossing recurs in {again:.0%} of parametric bootstrap resamples"
        html += f"<p><b>Boundary.</b> {text}.</p>"
        if b.get("coin_flip"):
            html += ('<p class="warn">The crossing is close to a coin flip: the curve sits near '
                     "τ there, so read the shape of the profile, not the crossing point.</p>")
    return "<h3>Summary</h3>" + html


def _answer_map(mapping: Mapping[str, Any]) -> str:
    if all(k == v for k, v in mapping.items()):
        return "identity"
    return ", ".join(f"{esc(k)}→{esc(v)}" for k, v in mapping.items())


def _failing_case(case: Mapping[str, Any] | None) -> str:
    if not case:
        return '<h3>Minimal failing case</h3><p class="muted">None: the condition holds.</p>'
    minimal = case.get("minimal") or {}
    title = ("First failing case of the design" if minimal.get("observations")
             else "Minimal failing case")
    also = case.get("also_failing") or []
    text = (f"Level n = {esc(case.get('level'))}: {esc(case.get('what'))}"
            + (f"; also failing at n = {', '.join(esc(n) for n in also)}" if also else "")
            + (f". Instance <code>{esc(case['instance_id'])}</code>."
               if case.get("instance_id") is not None else "."))
    rows = _observation_table(case.get("observations") or [])
    return f"<h3>{title}</h3><p>{text}</p>{rows}{_minimal_case(minimal)}"


def _observation_table(observations: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for o in observations:
        parsed = esc(o.get("parsed")) if o.get("valid") else f"invalid ({esc(o.get('reason'))})"
        rows.append([esc(o.get("presentation")), _answer_map(o.get("answer_map") or {}),
                     esc(o.get("gold")), parsed, "right" if o.get("correct") else "<b>wrong</b>",
                     f"<pre>{esc(o.get('raw'))}</pre>",
                     f"<details><summary>prompt</summary><pre>{esc(o.get('prompt'))}</pre>"
                     "</details>"])
    head = ["presentation", "answer map", "gold", "parsed", "verdict", "raw answer", "prompt"]
    return _table(head, rows, left=7) if rows else ""


def _minimal_case(m: Mapping[str, Any]) -> str:
    """The minimised case (``failing_case.minimal``): θ, its cost, every presentation."""
    if not m:
        return ""
    if not m.get("observations"):
        return f"<h3>Minimal failing case</h3><p class=muted>{esc(m.get('verdict'))}</p>"
    title = ("Failing case that did not reproduce" if m.get("status") == "not_reproduced"
             else "Minimal failing case")
    calls = m.get("calls") or {}
    spent = ", ".join(f"{esc(k)} {esc(v)}" for k, v in calls.items() if k != "total")
    boundary = m.get("boundary") or {}
    found = (f" Boundary search on n: n = {esc(boundary.get('n'))} fails, in "
             f"{esc(boundary.get('calls'))} calls (at most {esc(boundary.get('bound'))})."
             if boundary.get("trail") else "")
    return (f"<h3>{title}</h3><p><b>{esc(m.get('summary'))}</b></p>"
            f"<p>{esc(calls.get('total'))} model calls ({spent}); {esc(m.get('prompts_sent'))} "
            f"prompts.{found}</p>"
            f"<p>{esc(m.get('verdict'))}</p>{_observation_table(m['observations'])}")


def _result(index: int, r: Mapping[str, Any]) -> str:
    design = r.get("design") or {}
    require = design.get("require")
    meta = _kv([
        ("model", f"<code>{esc(r['model'])}</code>"),
        ("family", f"<code>{esc(r.get('family'))}</code>"),
        ("condition", esc(r.get("condition"))),
        ("presentations", ", ".join(esc(p) for p in r["presentations"])),
        ("design", f"levels {_value(design.get('levels'))}; {esc(design.get('pairs'))} pairs "
                   f"per level; seed {esc(design.get('seed'))}; require "
                   f"<code>{esc(require if isinstance(require, str) else json.dumps(require))}"
                   "</code>"),
    ])
    return (f'<section id="result-{index}"><h2>{_badge(r)}'
            f"<code>{esc(r['nodeid'])}</code></h2>{meta}{_plots(r)}"
            # A family's own figures and tables (Family.figures, Family.tables) lead.
            f"{family_html(r)}{diagnosis_html(r)}<h3>Per level</h3>"
            f"{_level_table(r)}{_pairs_table(r)}{_summary(r)}"
            f"{_failing_case(r.get('failing_case'))}</section>")


def _comparisons(blocks: Sequence[Mapping[str, Any]]) -> str:
    if not blocks:
        return ""
    out = ["<section><h2>Model comparisons</h2><p class=muted>McNemar on all prompts (invalid "
           "counts wrong), Holm across models; Δ accuracy = model − reference with a paired "
           "bootstrap interval stratified by n. b: model right, reference wrong.</p>"]
    head = ["model", "presentation", "n", "Δ accuracy [95% CI]", "b", "c", "test", "p", "p (Holm)"]
    for block in blocks:
        deltas = block.get("accuracy_delta") or {}
        rows: list[list[str]] = []
        per_level: list[list[str]] = []
        for row in block.get("mcnemar") or []:
            for t in row.get("tests") or []:
                delta = (deltas.get(t["model"]) or {}).get(row["presentation"])
                cells = [f"<code>{esc(t['model'])}</code>", esc(row["presentation"]),
                         esc(row["n"]), _interval(delta, signed=True) if row["n"] == "all"
                         else "", esc(t.get("b")), esc(t.get("c")), esc(t.get("method")),
                         _p(t.get("p_value")), _p(t.get("p_holm"))]
                (rows if row["n"] == "all" else per_level).append(cells)
        out.append(f"<h3><code>{esc(block['test'])}</code>: against "
                   f"<code>{esc(block['reference'])}</code></h3>" + _table(head, rows, left=2))
        if per_level:
            out.append("<details><summary>per level</summary>"
                       + _table(head, per_level, left=2) + "</details>")
    return "".join(out) + "</section>"


def _matrix(document: Mapping[str, Any]) -> str:
    """Which suite catches which model, one table per family; n/a models named under it."""
    matrices = family_matrices(document)
    if not matrices:
        return ""
    out = ["<section id=matrix><h2>Which suite catches which model</h2><p class=muted>The "
           "condition and gates per test × model: FAIL means the suite caught the model; n/a "
           "means the model does not read the family's prompts (skipped, never caught).</p>"]
    for m in matrices:
        out.append(f"<h3>{esc(m.family)}</h3>{html_table(m.rows)}")
        if m.not_applicable:
            out.append(f"<p class=muted>n/a (they do not read {esc(m.family)} prompts): "
                       + ", ".join(f"<code>{esc(name)}</code>" for name in m.not_applicable)
                       + "</p>")
    return "".join(out) + "</section>"


def _header(document: Mapping[str, Any]) -> str:
    results = document.get("results") or []
    counts = {k: sum(r.get("outcome") == k for r in results) for k in ("passed", "failed")}
    caught = sum(verdict(r) == "FAIL (report only)" for r in results)
    skipped = len(document.get("not_applicable") or [])
    index = _table(["", "test × model", "κ̄", "all correct", "first failing n"], [
        [_badge(r), f'<a href="#result-{i}"><code>{esc(r["nodeid"])}</code></a>',
         _num(r["summary"].get("kappa_bar")), _num(r["summary"].get("all_correct")),
         esc((r.get("failing_case") or {}).get("level", "—"))]
        for i, r in enumerate(results)], left=2)
    legend = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in LEGEND)
    models = ", ".join(f"<code>{esc(m)}</code>" for m in document.get("models") or []) or "—"
    return (f"<section><h1>pytest-competence report</h1><p class=muted>plugin version "
            f"{esc(document.get('plugin_version'))} · schema {esc(document.get('schema'))} · "
            f"models {models} · {len(results)} result{'' if len(results) == 1 else 's'}: "
            f"{counts['passed']} passed, "
            f"{counts['failed']} failed"
            f"{f' ({caught} fail the condition, reported only)' if caught else ''}"
            f"{f'; {skipped} test × model pairs n/a' if skipped else ''}</p>{index}<dl class=legend>{legend}</dl></section>")


def render_html(document: Mapping[str, Any]) -> str:
    """The whole report as one HTML page: header, the matrix of which suite catches which
    model, one section per result, comparisons."""
    results = document.get("results") or []
    body = "".join(_result(i, r) for i, r in enumerate(results))
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>pytest-competence report</title><style>{CSS}</style></head><body>"
        f"{_header(document)}{_matrix(document)}{body}{_comparisons(document.get('comparisons') or [])}"
        "</body></html>\n"
    )
