"""One result's section of the HTML report: its plots, summary, levels, pairs and failing cases.

:func:`result_section` renders one ``results[]`` entry of a results document; the page around
the sections is :func:`pytest_competence.report._html.render_html`'s. Every string that came
from a model or a user is escaped (:func:`~pytest_competence.drawing.esc`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_competence.drawing import SHOWN_PRESENTATIONS, esc
from pytest_competence.report._cells import family_html
from pytest_competence.report._diagnosis import diagnosis_html
from pytest_competence.report._gate import gate_html
from pytest_competence.report._matrix import level_name
from pytest_competence.report._probes import probes_html
from pytest_competence.report._svg import result_plots
from pytest_competence.report._terminal import verdict

__all__ = ["badge", "interval", "num", "p_value", "result_section", "table"]


def num(value: Any, digits: int = 3, signed: bool = False) -> str:
    if value is None or isinstance(value, bool) or not math.isfinite(value):
        return "—"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def p_value(value: Any) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:.1e}" if value < 1e-3 else f"{value:.3f}"


def interval(triple: Any, signed: bool = False) -> str:
    """``estimate [low, high]`` from an ``[estimate, low, high]`` triple."""
    if not triple or triple[0] is None:
        return "—"
    est, low, high = (num(v, signed=signed) for v in triple)
    return f"{est} [{low}, {high}]"


def _value(value: Any) -> str:
    """Any JSON value as escaped text: numbers to three places, mappings as ``key: value``."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return num(value)
    if isinstance(value, Mapping):
        return ", ".join(f"{esc(k)}: {_value(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_value(v) for v in value)
    return esc(value)


def table(head: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> str:
    """A table of already-escaped cells; the first ``left`` columns align left."""

    def cells(tag: str, row: Sequence[str]) -> str:
        return "".join(
            f"<{tag}{' class=l' if i < left else ''}>{c}</{tag}>" for i, c in enumerate(row)
        )

    body = "".join(f"<tr>{cells('td', row)}</tr>" for row in rows)
    return f'<div class="wide"><table><tr>{cells("th", head)}</tr>{body}</table></div>'


def _kv(rows: Sequence[tuple[str, str]]) -> str:
    return (
        '<table class="kv">'
        + "".join(f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in rows)
        + "</table>"
    )


def badge(r: Mapping[str, Any]) -> str:
    """The terminal's verdict: pytest's outcome, or the condition itself in report-only runs."""
    text = verdict(r)
    kind = "passed" if text == "PASS" else "failed" if text.startswith("FAIL") else "other"
    return f'<span class="badge {kind}">{esc(text)}</span>'


def _plots(r: Mapping[str, Any]) -> str:
    figures = "".join(
        f"<figure><figcaption>{esc(title)} <span>{esc(note)}</span></figcaption>{svg}</figure>"
        for title, note, svg in result_plots(r)
    )
    return f'<div class="plots">{figures}</div>'


def _level_table(r: Mapping[str, Any]) -> str:
    shown = r["presentations"]
    head = (
        [esc(level_name(r)), "instances", "joint"]
        + [f"acc [{esc(p)}]" for p in shown]
        + [
            "mean acc (joint)",
            "R",
            "R 95% CI",
            "D",
            "U",
            "ι",
            "strict ι",
            "yes-rate",
            "κₙ",
            "coverage",
            "any",
            "fraction",
            "all",
        ]
    )
    rows = []
    for lv in r["levels"]:
        ci = lv.get("robust_correct_ci")
        rows.append(
            [esc(lv["n"]), esc(lv["instances"]), esc(lv["jointly_parsed"])]
            + [num(lv["accuracy_by_presentation"].get(p)) for p in shown]
            + [num(lv.get(k)) for k in ("mean_accuracy_joint", "robust_correct")]
            + ["—" if not ci else f"[{num(ci[0])}, {num(ci[1])}]"]
            + [
                num(lv.get(k))
                for k in (
                    "shared_wrong",
                    "presentation_dependent",
                    "invariance",
                    "strict_invariance",
                    "yes_rate",
                    "kappa",
                    "coverage",
                    "any_correct",
                    "fraction_correct",
                    "all_correct",
                )
            ]
        )
    return table(head, rows) if rows else '<p class="muted">No levels.</p>'


def _pairs_table(r: Mapping[str, Any]) -> str:
    rows = []
    for lv in r["levels"]:
        for name, pr in lv.get("pairs", {}).items():
            m = pr.get("mcnemar") or {}
            rows.append(
                [
                    esc(lv["n"]),
                    f"{esc(r['presentations'][0])} vs {esc(name)}",
                    esc(pr.get("jointly_parsed")),
                ]
                + [
                    num(pr.get(k))
                    for k in ("invariance", "strict_invariance", "yes_rate", "kappa", "consistency")
                ]
                + [
                    esc(m.get("b")),
                    esc(m.get("c")),
                    esc(m.get("method")),
                    p_value(m.get("p_value")),
                    p_value(m.get("p_holm")),
                ]
            )
    if not rows:
        return ""
    head = [
        esc(level_name(r)),
        "pair",
        "joint",
        "ι",
        "strict ι",
        "yes-rate",
        "κₙ",
        "both right",
        "b",
        "c",
        "test",
        "p",
        "p (Holm)",
    ]
    shown = table(head, rows, left=2)
    if len(r["presentations"]) > SHOWN_PRESENTATIONS:  # variations, intervention cells: folded
        return (
            f"<details><summary><b>Paired figures per level</b> ({len(rows)} pairs)"
            f"</summary>{shown}</details>"
        )
    return "<h3>Paired figures per level</h3>" + shown


def _summary(r: Mapping[str, Any]) -> str:
    s, shown = r["summary"], r["presentations"]
    boot = s.get("bootstrap") or {}

    def ci(key: str, signed: bool = False) -> str:
        triple = boot.get(key)
        if not triple or triple[1] is None:
            return ""
        low, high = num(triple[1], signed=signed), num(triple[2], signed=signed)
        return f" (95% interval [{low}, {high}])"

    rows = [
        ("instances", esc(s.get("instances"))),
        ("accuracy (pooled)", _value(s.get("accuracy_by_presentation") or {})),
        ("all correct (pooled)", num(s.get("all_correct"))),
        ("κ̄", num(s.get("kappa_bar")) + ci("kappa_bar")),
    ]
    for key, label in (("robust_correct", "R (pooled)"), ("invariance", "ι (pooled)")):
        if key in boot:
            rows.append((label, num(boot[key][0]) + ci(key)))
    per_pair: list[tuple[str, str]] = []  # one row per non-original presentation
    for key, value in boot.items():
        if key.startswith("accuracy_difference["):
            pair = key[len("accuracy_difference[") : -1].replace("-", " − ", 1)
            per_pair.append(
                (
                    f"accuracy difference {esc(pair)}",
                    num(value[0], signed=True) + ci(key, signed=True),
                )
            )
    for name, m in (s.get("mcnemar") or {}).items():
        per_pair.append(
            (
                f"McNemar {esc(shown[0])} vs {esc(name)}",
                f"b = {esc(m.get('b'))}, c = {esc(m.get('c'))}, {esc(m.get('method'))}, "
                f"statistic {num(m.get('statistic'))}, p = {p_value(m.get('p_value'))}",
            )
        )
    folded = len(shown) > SHOWN_PRESENTATIONS
    if not folded:
        rows.extend(per_pair)
    if "repeat_agreement" in s:
        rows.append(("repeat agreement", _value(s["repeat_agreement"])))
    if boot:
        rows.append(
            (
                "intervals",
                f"paired bootstrap, B = {esc(boot.get('B'))}, seed "
                f"{esc(boot.get('seed'))}, stratified by "
                f"{esc(boot.get('stratified_by'))}",
            )
        )
    html = _kv(rows)
    if folded and per_pair:
        html += (
            f"<details><summary>accuracy differences and McNemar tests for "
            f"{len(shown) - 1} presentations</summary>{_kv(per_pair)}</details>"
        )
    b = s.get("boundary")
    if b:
        tau = "—" if b.get("tau") is None else f"{b['tau']:g}"
        # The schema's names; stats.BoundaryReproducibility.as_dict() calls them differently.
        crossing = b["crossing"] if "crossing" in b else b.get("observed_level")
        again = (
            b["reproducibility"] if "reproducibility" in b else b.get("reproduction_probability")
        )
        if crossing is None:
            text = f"ι stays at or above τ = {tau} at every level"
        else:
            text = f"ι first falls below τ = {tau} at {esc(level_name(r))} = {esc(crossing)}"
        if again is not None:
            text += f"; the same crossing recurs in {again:.0%} of parametric bootstrap resamples"
        html += f"<p><b>Boundary.</b> {text}.</p>"
        if b.get("coin_flip"):
            html += (
                '<p class="warn">The crossing is close to a coin flip: the curve sits near '
                "τ there, so read the shape of the profile, not the crossing point.</p>"
            )
    return "<h3>Summary</h3>" + html


def _answer_map(mapping: Mapping[str, Any]) -> str:
    if all(k == v for k, v in mapping.items()):
        return "identity"
    return ", ".join(f"{esc(k)}→{esc(v)}" for k, v in mapping.items())


def _failing_case(r: Mapping[str, Any]) -> str:
    case, name = r.get("failing_case"), esc(level_name(r))
    if not case:
        return '<h3>Failing case</h3><p class="muted">None: the condition holds.</p>'
    minimal = case.get("minimal") or {}
    title = "First failing case of the design"
    also = case.get("also_failing") or []
    text = (
        f"Level {name} = {esc(case.get('level'))}: {esc(case.get('what'))}"
        + (f"; also failing at {name} = {', '.join(esc(n) for n in also)}" if also else "")
        + (
            f". Instance <code>{esc(case['instance_id'])}</code>."
            if case.get("instance_id") is not None
            else "."
        )
    )
    rows = _observation_table(case.get("observations") or [])
    return f"<h3>{title}</h3><p>{text}</p>{rows}{_minimal_case(minimal, name)}"


def _observation_table(observations: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for o in observations:
        parsed = esc(o.get("parsed")) if o.get("valid") else f"invalid ({esc(o.get('reason'))})"
        rows.append(
            [
                esc(o.get("presentation")),
                _answer_map(o.get("answer_map") or {}),
                esc(o.get("gold")),
                parsed,
                "right" if o.get("correct") else "<b>wrong</b>",
                f"<pre>{esc(o.get('raw'))}</pre>",
                f"<details><summary>prompt</summary><pre>{esc(o.get('prompt'))}</pre></details>",
            ]
        )
    head = ["presentation", "answer map", "gold", "parsed", "verdict", "raw answer", "prompt"]
    return table(head, rows, left=7) if rows else ""


def _minimal_case(m: Mapping[str, Any], name: str = "n") -> str:
    """The minimised case (``failing_case.minimal``): θ, its cost, every presentation."""
    if not m:
        return ""
    if not m.get("observations"):  # not minimised: the verdict says why
        return f"<h3>Minimisation</h3><p class=muted>{esc(m.get('verdict'))}</p>"
    title = (
        "Failing case that did not reproduce"
        if m.get("status") == "not_reproduced"
        else "Minimal failing case"
    )
    calls = m.get("calls") or {}
    spent = ", ".join(f"{esc(k)} {esc(v)}" for k, v in calls.items() if k != "total")
    boundary = m.get("boundary") or {}
    found = (
        f" Boundary search on {name}: {name} = {esc(boundary.get('n'))} fails, in "
        f"{esc(boundary.get('calls'))} calls (at most {esc(boundary.get('bound'))})."
        if boundary.get("trail")
        else ""
    )
    outside = m.get("outside") or {}
    beyond = (
        f"<h3>Also fails outside this suite</h3><p><b>{esc(outside['summary'])}</b></p>"
        f"<p class=muted>A case this suite's design cannot draw, found in "
        f"{esc(outside['calls']['total'])} more model calls: a finding of its own, not the "
        f"test's failing case.</p>{_observation_table(outside['observations'])}"
        if outside.get("observations")
        else ""
    )
    return (
        f"<h3>{title}</h3><p><b>{esc(m.get('summary'))}</b></p>"
        f"<p>{esc(calls.get('total'))} model calls ({spent}); {esc(m.get('prompts_sent'))} "
        f"prompts.{found}</p>"
        f"<p>{esc(m.get('verdict'))}</p>{_observation_table(m['observations'])}{beyond}"
    )


def _back(href: str) -> str:
    return f'<a class=back href="{esc(href)}">↑ back to its row</a>' if href else ""


def result_section(index: int, r: Mapping[str, Any], back: str = "") -> str:
    """The section of result ``index``: its heading (with a link ``back`` to the row that
    leads to it), plots, tables and failing cases."""
    design = r.get("design") or {}
    require = design.get("require")
    meta = _kv(
        [
            ("model", f"<code>{esc(r['model'])}</code>"),
            ("family", f"<code>{esc(r.get('family'))}</code>"),
            ("condition", esc(r.get("condition"))),
            ("presentations", ", ".join(esc(p) for p in r["presentations"])),
            (
                "design",
                f"levels {_value(design.get('levels'))}; {esc(design.get('pairs'))} pairs "
                f"per level; seed {esc(design.get('seed'))}; require "
                f"<code>{esc(require if isinstance(require, str) else json.dumps(require))}"
                "</code>",
            ),
        ]
    )
    errors = r.get("errors") if r.get("outcome") == "error" else None
    if errors:  # the figures count the lost prompts as invalid: no verdict on the model
        meta += (
            f'<p class="warn"><b>Infrastructure errors</b>, so the condition was not judged '
            f"(the figures below count the prompts without an answer as invalid): "
            f"{esc(errors['message'])}</p>"
        )
    verdict = "" if errors else _failing_case(r)
    return (
        f'<section id="result-{index}"><h2>{badge(r)}'
        f"<code>{esc(r['nodeid'])}</code>{_back(back)}</h2>{meta}{_plots(r)}"
        # A family's own figures and tables (Family.figures, Family.tables) lead.
        f"{family_html(r, f'result-{index}-')}{diagnosis_html(r)}{probes_html(index, r)}"
        f"<h3>Per level</h3>{_level_table(r)}{_pairs_table(r)}{_summary(r)}{gate_html(r)}"
        f"{verdict}</section>"
    )
