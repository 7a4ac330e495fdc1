"""The HTML report: one self-contained page rendered from a results document.

The page needs nothing beyond itself — no script, no network, no external CSS or fonts — so it
opens from disk, from a CI artifact or from an archive years later. Plots are inline SVG drawn
by :mod:`pytest_competence.report._svg`. Every string that came from a model or a user (prompts,
answers, model names, node ids, the family's repr) is escaped, and a Content-Security-Policy
forbids script outright as a second line of defence. The output depends only on the document:
no timestamps, no randomness, so serial and ``-n auto`` runs give byte-identical pages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_competence.drawing import Defs, esc
from pytest_competence.report._html_compare import comparisons_html
from pytest_competence.report._html_nav import (
    MATRIX_CLASSES,
    Links,
    back_anchors,
    family_groups,
    family_slugs,
    gate_html,
    gated,
    index_html,
    matrix_html,
    toc_html,
)
from pytest_competence.report._html_parts import LEFT_COLUMNS
from pytest_competence.report._html_result import result_section
from pytest_competence.report._matrix import Counts, family_counts, family_matrices, level_name
from pytest_competence.report._warnings import warnings_html

__all__ = ["MATRIX_CLASSES", "render_html"]

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
th{background:#f3f4f6;white-space:normal}.wide{overflow-x:auto}table.kv td{text-align:left}
table.kv td:first-child{color:#57606a}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;color:#fff;font-size:12px;font-weight:600;margin-right:6px}.passed{background:#2c7a4b}
.failed{background:#c0392b}.other{background:#6a737d}.muted{color:#57606a}
section.warnings{border-color:#d4a72c;background:#fff8c5}
.plots{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:12px 20px}
figure{margin:0}figcaption{font-weight:600;font-size:13px;margin:0 0 2px}
figcaption span{font-weight:400;color:#57606a}svg.chart{width:100%;height:auto}
text{font:11px system-ui,sans-serif;fill:#24292f}text.axis{font-size:12px}
text.rule,text.small{fill:#57606a;font-size:10px}text.note{fill:#57606a;font-size:13px}
g.series{fill:none}path.dots{stroke-width:6px;stroke-linecap:round}.warn{background:#fff4d6;border-left:4px solid #e0a526;
padding:6px 10px;margin:6px 0}dl.legend{display:grid;grid-template-columns:max-content 1fr;
gap:2px 12px;margin:8px 0 0}dl.legend dt{font-weight:600}dl.legend dd{margin:0}
td.caught{background:#d1242f;color:#fff;font-weight:600}td.held{background:#dafbe1;color:#1a7f37}
td.broke{background:#fff4d6;color:#7a5300;font-weight:600}td.absent{color:#8c959f}
a{color:#0b57a3}td.caught a{color:#fff}td.held a{color:#1a7f37}td.broke a{color:#7a5300}
table.matrix td a{display:block;text-decoration:none}nav{background:#fff;border:1px solid #d8dde3;
border-radius:8px;padding:16px 20px;margin:0 0 20px}ul.fails{columns:2 32em;margin:6px 0;
padding-left:18px}ul.fails li{break-inside:avoid}h2.family{font-size:18px;margin:28px 0 10px}
a.back{font-size:12px;font-weight:400;margin-left:10px;white-space:nowrap}
tr:target{outline:3px solid #e0a526;outline-offset:-1px}tr:target td:first-child{background:#fff8c5}
section:target,details:target{outline:3px solid #e0a526}svg.defs{position:absolute;width:0;
height:0;overflow:hidden}details.result{background:#fff;border:1px solid #d8dde3;border-radius:8px;
padding:8px 20px;margin:0 0 8px}details.result>summary{cursor:pointer;font-size:14px}
details.result[open]>summary{margin-bottom:10px}
"""


#: A table's first ``N`` columns, aligned left and wrapped by its class ``lN``.
CSS += (
    ",".join(f"table.l{n} :is(td,th):nth-child(-n+{n})" for n in range(1, LEFT_COLUMNS + 1))
    + "{text-align:left;white-space:normal}\n"
)


def _header(document: Mapping[str, Any], total: Counts) -> str:
    """The title and the run's counts in competence terms: the headline above the contents."""
    results = document.get("results") or []
    models = ", ".join(f"<code>{esc(m)}</code>" for m in document.get("models") or []) or "—"
    only = any(r.get("report_only") for r in results)
    return (
        f"<section><h1>pytest-competence report</h1><p class=muted>plugin version "
        f"{esc(document.get('plugin_version'))} · schema {esc(document.get('schema'))} · "
        f"models {models}</p><p><b>{len(results)} result{'' if len(results) == 1 else 's'}: "
        f"{esc(total.text())}</b> (test × model pairs)"
        f"{'; report only: a caught pair passes in pytest' if only and total.caught else ''}"
        f"</p></section>"
    )


def render_html(document: Mapping[str, Any]) -> str:
    """The whole report as one HTML page: the headline counts and the table of contents; the
    warnings; the matrix of which suite catches which model, whose cells lead to their
    results; the gate's verdicts; the index of results with the legend; the results, family by
    family (errors and failures first), each linking back to its row; the comparisons. Every
    element id is unique on the page (a result's tables are prefixed with its ``result-N-``)."""
    results = document.get("results") or []
    matrices = family_matrices(document)
    counts = family_counts(document)
    slugs = family_slugs(list(counts))
    links, defs = Links(), Defs()
    back = back_anchors(document, matrices, slugs)
    legend = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in LEGEND)
    groups = "".join(
        f'<div id="family-{slugs[family]}" class=family><h2 class=family>{esc(family)}: '
        f"{esc(counts[family].text())}</h2>"
        + "".join(result_section(i, results[i], links.back(back[i]), defs) for i in indexes)
        + "</div>"
        for family, indexes in family_groups(document).items()
    )
    body = (
        _header(document, sum(counts.values(), Counts()))
        + toc_html(document, counts, slugs, links, matrices=bool(matrices), gated=gated(document))
        + warnings_html(document)
        + matrix_html(matrices, slugs, links)
        + gate_html(document, links)
        + index_html(document, links, f"<dl class=legend id=legend>{legend}</dl>")
        + groups
        + comparisons_html(
            document.get("comparisons") or [], {r["test"]: level_name(r) for r in results}
        )
    )
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>pytest-competence report</title><style>{CSS}</style></head><body>"
        f"{defs.html()}{body}</body></html>\n"
    )
