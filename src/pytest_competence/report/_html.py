"""The HTML report: one self-contained page rendered from a results document.

The page needs nothing beyond itself — no script, no network, no external CSS or fonts — so it
opens from disk, from a CI artifact or from an archive years later. Plots are inline SVG drawn
by :mod:`pytest_competence.report._svg`. Every string that came from a model or a user (prompts,
answers, model names, node ids, the family's repr) is escaped, and a Content-Security-Policy
forbids script outright as a second line of defence. The output depends only on the document:
no timestamps, no randomness, so serial and ``-n auto`` runs give byte-identical pages.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any
from urllib.parse import quote

from pytest_competence.drawing import Defs, esc
from pytest_competence.report._html_compare import comparisons_html
from pytest_competence.report._html_nav import (
    MATRIX_CLASSES,
    Links,
    gate_html,
    gated,
    index_html,
    matrix_html,
    toc_html,
)
from pytest_competence.report._html_parts import LEFT_COLUMNS
from pytest_competence.report._html_result import result_section
from pytest_competence.report._matrix import (
    Counts,
    back_anchors,
    family_counts,
    family_groups,
    family_matrices,
    family_of,
    family_slugs,
    level_name,
)
from pytest_competence.report._warnings import warnings_html

__all__ = ["MATRIX_CLASSES", "SPLIT_BYTES", "pages_folder", "render_html", "render_pages"]

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
details.result[open]>summary{margin-bottom:10px}nav.up{padding:8px 20px}
"""


#: Past this many bytes (UTF-8), one page is split into a main page and a page per family:
#: the README's first command (255 results) makes one page of about 1.8 MB.
SPLIT_BYTES = 2_000_000

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
    defs = Defs()
    return _main(document, _sections(document, defs), defs)


def pages_folder(name: str) -> str:
    """The folder of a split report's family pages, beside its main page ``name``:
    ``competence-report.html`` → ``competence-report-pages``."""
    return f"{name.rsplit('.', 1)[0] if '.' in name[1:] else name}-pages"


def render_pages(
    document: Mapping[str, Any], *, name: str = "report.html", max_bytes: int = SPLIT_BYTES
) -> dict[str, str]:
    """The report as pages, by their paths relative to the main page's folder: the main page
    (``name``) alone while it stays within ``max_bytes`` (0: whatever its size).

    Past that, the main page keeps its contents, matrices, gate and index, which lead to the
    rest, in :func:`pages_folder`: each family's results on ``FAMILY.html``, then
    ``FAMILY-2.html``, … (errors and failures first), each page within ``max_bytes`` unless one
    result alone is larger, each result linking back to its row on the main page; and each
    family's model comparisons on ``FAMILY-comparisons.html``. Each result is rendered once,
    whether the report is one page or many.
    """
    defs = Defs()
    sections = _sections(document, defs)
    single = _main(document, sections, defs)
    if not max_bytes or len(single.encode("utf-8")) <= max_bytes:
        return {name: single}
    folder = pages_folder(name)
    counts = family_counts(document)
    slugs = family_slugs(list(counts))
    room = max_bytes - len(_page("", Defs(), "<nav class=up></nav>" * 2).encode("utf-8")) - 2000
    home = f"../{esc(quote(name))}"
    # Each section's back link gains the main page's address on a family page.
    extra = len(home.encode("utf-8"))
    parts = {family: _chunks(defs, runs, room, extra) for family, runs in sections.items()}
    files = {
        family: [
            f"{folder}/{slugs[family]}{'' if k == 0 else f'-{k + 1}'}.html"
            for k in range(len(chunks))
        ]
        for family, chunks in parts.items()
    }
    where = {
        i: files[f][k] for f, chunks in parts.items() for k, c in enumerate(chunks) for i, _ in c
    }
    compared = {
        family: f"{folder}/{slugs[family]}-comparisons.html"
        for family in parts
        if _comparisons(document, family)
    }
    main = _main(document, {}, Defs(), {f: fs[0] for f, fs in files.items()}, where, compared)
    pages = {name: main}
    up = f'<a href="{home}#toc">↑ the report: contents, matrices, gate, index</a>'
    for family, chunks in parts.items():
        for k, (chunk, file) in enumerate(zip(chunks, files[family])):
            others = " ".join(
                f'<a href="{esc(quote(other.rsplit("/", 1)[1]))}">{n + 1}</a>'
                if n != k
                else f"<b>{n + 1}</b>"
                for n, other in enumerate(files[family])
            )
            more = f" · {esc(family)}, page {others}" if len(chunks) > 1 else ""
            # A back link leads to the main page's row: only the report writes '<a class=back'.
            body = "".join(html for _, html in chunk).replace(
                '<a class=back href="#', f'<a class=back href="{home}#'
            )
            group = _heading(family, slugs[family], counts[family]) + body + "</div>"
            pages[file] = _page(
                family, defs, f"<nav class=up>{up}{more}</nav>{group}", defs.drawn(body)
            )
        if family in compared:
            body = f"<nav class=up>{up}</nav>{_comparisons(document, family)}"
            pages[compared[family]] = _page(f"{family}: model comparisons", Defs(), body)
    return pages


def _sections(document: Mapping[str, Any], defs: Defs) -> dict[str, list[tuple[int, str]]]:
    """Each family's result sections, errors and failures first, as the main page shows them
    (their back links lead to ``#m-…`` rows on the same page), their charts filed in
    ``defs``."""
    results = document.get("results") or []
    counts = family_counts(document)
    back = back_anchors(document, family_matrices(document), family_slugs(list(counts)))
    return {
        family: [(i, result_section(i, results[i], f"#{back[i]}", defs)) for i in indexes]
        for family, indexes in family_groups(document).items()
    }


def _heading(family: str, slug: str, counts: Counts) -> str:
    """A family's results open under this heading (``#family-SLUG``); ``</div>`` closes them."""
    return (
        f'<div id="family-{slug}" class=family><h2 class=family>{esc(family)}: '
        f"{esc(counts.text())}</h2>"
    )


def _chunks(
    defs: Defs, sections: list[tuple[int, str]], room: int, extra: int
) -> list[list[tuple[int, str]]]:
    """A family's sections in runs that fit ``room`` bytes with the chart definitions they
    draw, each section ``extra`` bytes longer than now (a run of one section may not fit)."""
    out: list[list[tuple[int, str]]] = [[]]
    used, drawn = 0, set[str]()
    for index, html in sections:
        new = defs.drawn(html) - drawn
        size = len(html.encode("utf-8")) + extra + defs.size(new)
        if out[-1] and used + size > room:
            out.append([])
            used, drawn = 0, set()
            new = defs.drawn(html)
            size = len(html.encode("utf-8")) + extra + defs.size(new)
        out[-1].append((index, html))
        used += size
        drawn |= new
    return out


def _comparisons(
    document: Mapping[str, Any], family: str | None = None, exclude: Collection[str] = ()
) -> str:
    """The comparisons section: every test's, ``family``'s alone, or all but those of the
    families in ``exclude`` (which are on their family's page)."""
    results = document.get("results") or []
    families = {r["test"]: family_of(r) for r in results}
    return comparisons_html(
        [
            b
            for b in document.get("comparisons") or []
            if (family is None or families.get(b["test"]) == family)
            and families.get(b["test"]) not in exclude
        ],
        {r["test"]: level_name(r) for r in results},
    )


def _main(
    document: Mapping[str, Any],
    sections: Mapping[str, list[tuple[int, str]]],
    defs: Defs,
    files: Mapping[str, str] | None = None,
    where: Mapping[int, str] | None = None,
    compared: Mapping[str, str] | None = None,
) -> str:
    """The main page, with the result ``sections`` (their charts in ``defs``); with ``files``
    (each family's first page), ``where`` (each result's page) and ``compared`` (each family's
    comparisons page), the results and comparisons are on those pages instead."""
    files, where, compared = files or {}, where or {}, compared or {}
    matrices = family_matrices(document)
    counts = family_counts(document)
    slugs = family_slugs(list(counts))
    links = Links(
        {i: quote(file) for i, file in where.items()},
        {f: quote(file) for f, file in files.items()},
        comparisons={f: quote(file) for f, file in compared.items()},
    )
    legend = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in LEGEND)
    body = (
        _header(document, sum(counts.values(), Counts()))
        + toc_html(document, counts, slugs, links, matrices=bool(matrices), gated=gated(document))
        + warnings_html(document)
        + matrix_html(matrices, slugs, links)
        + gate_html(document, links)
        + index_html(document, links, f"<dl class=legend id=legend>{legend}</dl>")
        + "".join(
            _heading(family, slugs[family], counts[family])
            + "".join(html for _, html in runs)
            + "</div>"
            for family, runs in sections.items()
            if family not in files
        )
        + _comparisons(document, exclude=set(compared))
    )
    return _page("pytest-competence report", defs, body)


def _page(title: str, defs: Defs, body: str, drawn: set[str] | None = None) -> str:
    """A whole page: the CSP that forbids script and every load, the style, the charts'
    shared definitions (those ``drawn``, or all), ``body``."""
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f"{defs.html(drawn)}{body}</body></html>\n"
    )
