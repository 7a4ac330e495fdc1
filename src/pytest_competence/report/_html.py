"""The HTML report: one self-contained page rendered from a results document.

The page needs nothing beyond itself — no script, no network, no external CSS or fonts — so it
opens from disk, from a CI artifact or from an archive years later. Plots are inline SVG drawn
by :mod:`pytest_competence.report._svg`. Every string that came from a model or a user (prompts,
answers, model names, node ids, the family's repr) is escaped, and a Content-Security-Policy
forbids script outright as a second line of defence. The output depends only on the document:
no timestamps, no randomness, so serial and ``-n auto`` runs give byte-identical pages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_competence.drawing import esc
from pytest_competence.report._cells import html_table
from pytest_competence.report._html_result import (
    badge,
    interval,
    num,
    p_value,
    result_section,
    table,
)
from pytest_competence.report._matrix import family_matrices, level_text
from pytest_competence.report._terminal import verdict
from pytest_competence.report._warnings import warnings_html

__all__ = ["render_html"]

LEGEND = [
    ("R", "robust-correct: every presentation right, on jointly parsed instances"),
    ("D", "shared-wrong: every presentation wrong, on jointly parsed instances"),
    ("U", "presentation-dependent: right under some presentations only (R + D + U = 1)"),
    ("ι", "invariance R + D; strict ι counts an unparsed answer as a disagreement"),
    (
        "κₙ",
        "chance-corrected invariance (ι − ιₑ)/(1 − ιₑ), ιₑ = q² + (1 − q)², q the "
        "yes-rate; κ̄ averages the defined κₙ",
    ),
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
section.warnings{border-color:#d4a72c;background:#fff8c5}
.plots{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:12px 20px}
figure{margin:0}figcaption{font-weight:600;font-size:13px;margin:0 0 2px}
figcaption span{font-weight:400;color:#57606a}svg.chart{width:100%;height:auto}
svg text{font:11px system-ui,sans-serif;fill:#24292f}svg text.axis{font-size:12px}
svg text.rule,svg text.small{fill:#57606a;font-size:10px}svg text.note{fill:#57606a;font-size:13px}
svg text.onbar{fill:#fff;font-size:10px}.warn{background:#fff4d6;border-left:4px solid #e0a526;
padding:6px 10px;margin:6px 0}dl.legend{display:grid;grid-template-columns:max-content 1fr;
gap:2px 12px;margin:8px 0 0}dl.legend dt{font-weight:600}dl.legend dd{margin:0}
td.caught{background:#d1242f;color:#fff;font-weight:600}td.held{background:#dafbe1;color:#1a7f37}
td.broke{background:#fff4d6;color:#7a5300;font-weight:600}td.absent{color:#8c959f}
"""

#: The matrix's cells by verdict: caught (red), held (green), n/a or not run (grey); any other
#: pytest outcome (``ERROR``) amber.
MATRIX_CLASSES = {"FAIL": "caught", "pass": "held", "n/a": "absent", "—": "absent"}


def _comparisons(blocks: Sequence[Mapping[str, Any]]) -> str:
    if not blocks:
        return ""
    out = [
        "<section><h2>Model comparisons</h2><p class=muted>McNemar on all prompts (invalid "
        "counts wrong), Holm across models; Δ accuracy = model − reference with a paired "
        "bootstrap interval stratified by n. b: model right, reference wrong.</p>"
    ]
    head = ["model", "presentation", "n", "Δ accuracy [95% CI]", "b", "c", "test", "p", "p (Holm)"]
    for block in blocks:
        deltas = block.get("accuracy_delta") or {}
        rows: list[list[str]] = []
        per_level: list[list[str]] = []
        for row in block.get("mcnemar") or []:
            for t in row.get("tests") or []:
                delta = (deltas.get(t["model"]) or {}).get(row["presentation"])
                cells = [
                    f"<code>{esc(t['model'])}</code>",
                    esc(row["presentation"]),
                    esc(row["n"]),
                    interval(delta, signed=True) if row["n"] == "all" else "",
                    esc(t.get("b")),
                    esc(t.get("c")),
                    esc(t.get("method")),
                    p_value(t.get("p_value")),
                    p_value(t.get("p_holm")),
                ]
                (rows if row["n"] == "all" else per_level).append(cells)
        out.append(
            f"<h3><code>{esc(block['test'])}</code>: against "
            f"<code>{esc(block['reference'])}</code></h3>" + table(head, rows, left=2)
        )
        if per_level:
            out.append(
                "<details><summary>per level</summary>"
                + table(head, per_level, left=2)
                + "</details>"
            )
    return "".join(out) + "</section>"


def _matrix(document: Mapping[str, Any]) -> str:
    """Which suite catches which model, one table per family; n/a models named under it."""
    matrices = family_matrices(document)
    if not matrices:
        return ""
    out = [
        "<section id=matrix><h2>Which suite catches which model</h2><p class=muted>The "
        "condition and gates per test × model: FAIL means the suite caught the model; n/a "
        "means the model does not read the family's prompts (skipped, never caught).</p>"
    ]
    for m in matrices:
        classes = {c: MATRIX_CLASSES.get(c, "broke") for row in m.rows[1:] for c in row[1:]}
        out.append(f"<h3>{esc(m.family)}</h3>{html_table(m.rows, classes)}")
        if m.not_applicable:
            out.append(
                f"<p class=muted>n/a (they do not read {esc(m.family)} prompts): "
                + ", ".join(f"<code>{esc(name)}</code>" for name in m.not_applicable)
                + "</p>"
            )
    return "".join(out) + "</section>"


def _header(document: Mapping[str, Any]) -> str:
    """The title and the run's counts: the headline above the matrix."""
    results = document.get("results") or []
    caught = sum(verdict(r) == "FAIL (report only)" for r in results)
    skipped = len(document.get("not_applicable") or [])
    counts = {k: sum(r.get("outcome") == k for r in results) for k in ("passed", "failed")}
    models = ", ".join(f"<code>{esc(m)}</code>" for m in document.get("models") or []) or "—"
    return (
        f"<section><h1>pytest-competence report</h1><p class=muted>plugin version "
        f"{esc(document.get('plugin_version'))} · schema {esc(document.get('schema'))} · "
        f"models {models} · {len(results)} result{'' if len(results) == 1 else 's'}: "
        f"{counts['passed']} passed, "
        f"{counts['failed']} failed"
        f"{f' ({caught} fail the condition, reported only)' if caught else ''}"
        f"{f'; {skipped} test × model pairs n/a' if skipped else ''}</p></section>"
    )


def _index(document: Mapping[str, Any]) -> str:
    """One row per result, linking to its section, and the legend of the figures."""
    results = document.get("results") or []
    index = table(
        ["", "test × model", "κ̄", "all correct", "first failing level"],
        [
            [
                badge(r),
                f'<a href="#result-{i}"><code>{esc(r["nodeid"])}</code></a>',
                num(r["summary"].get("kappa_bar")),
                num(r["summary"].get("all_correct")),
                esc(_first_failing(r)),
            ]
            for i, r in enumerate(results)
        ],
        left=2,
    )
    legend = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in LEGEND)
    return f"<section id=results><h2>Results</h2>{index}<dl class=legend>{legend}</dl></section>"


def _first_failing(r: Mapping[str, Any]) -> str:
    """The failing case's level, named (``distractors = 0``); ``—`` when the condition holds."""
    level = (r.get("failing_case") or {}).get("level")
    return "—" if level is None else level_text(r, level)


def render_html(document: Mapping[str, Any]) -> str:
    """The whole report as one HTML page: the headline counts and, first below them, the
    matrix of which suite catches which model (its cells coloured by verdict); then the index
    of results with the legend, one section per result, comparisons. Every element id is
    unique on the page (a result's tables are prefixed with its ``result-N-``)."""
    results = document.get("results") or []
    body = "".join(result_section(i, r) for i, r in enumerate(results))
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>pytest-competence report</title><style>{CSS}</style></head><body>"
        f"{_header(document)}{warnings_html(document)}{_matrix(document)}{_index(document)}{body}"
        f"{_comparisons(document.get('comparisons') or [])}"
        "</body></html>\n"
    )
