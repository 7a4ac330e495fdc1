"""The HTML report's ways in: the table of contents, the matrices whose cells lead to their
results, the gate's summary and the index of results.

Navigation is links and CSS ``:target`` only (the page runs no script). A result is
``#result-N`` (``N`` its place in the document's ``results``), on the main page or on a page of
its family's (:class:`Links`); a matrix row is ``#m-FAMILY-K``, an index row ``#i-N``, and each
result section links back to the row that leads to it (:func:`back_anchors`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_competence.drawing import esc
from pytest_competence.report._gate import gate_verdict
from pytest_competence.report._html_parts import badge, num, table
from pytest_competence.report._matrix import Counts, FamilyMatrix, cell, level_text

__all__ = [
    "MATRIX_CLASSES",
    "Links",
    "gate_html",
    "gated",
    "index_html",
    "matrix_html",
    "toc_html",
]

#: The matrix's cells by verdict: caught (red), held (green), n/a or not run (grey); any other
#: pytest outcome (``ERROR``) amber.
MATRIX_CLASSES = {"FAIL": "caught", "pass": "held", "n/a": "absent", "—": "absent"}


@dataclass(frozen=True)
class Links:
    """Where each result's section is: ``pages`` maps a result's index, and ``families`` a
    family's name, to its page relative to the main page (absent: on the main page);
    ``comparisons`` maps a family to the page of its model comparisons, if they have one."""

    pages: Mapping[int, str] = field(default_factory=dict)
    families: Mapping[str, str] = field(default_factory=dict)
    comparisons: Mapping[str, str] = field(default_factory=dict)

    def result(self, index: int) -> str:
        """The href of result ``index``'s section, from the main page."""
        return f"{self.pages.get(index, '')}#result-{index}"

    def family(self, family: str, slug: str) -> str:
        """The href of a family's results, from the main page."""
        return f"{self.families.get(family, '')}#family-{slug}"


def _failing(document: Mapping[str, Any]) -> list[tuple[int, Mapping[str, Any]]]:
    """The results that did not pass, errors first, then the caught ones; node-id order."""
    results = document.get("results") or []
    shown = [(i, r) for i, r in enumerate(results) if cell(r) != "pass"]
    return sorted(shown, key=lambda pair: cell(pair[1]) == "FAIL")


def toc_html(
    document: Mapping[str, Any],
    counts: Mapping[str, Counts],
    slugs: Mapping[str, str],
    links: Links,
    *,
    matrices: bool,
    gated: int,
) -> str:
    """The table of contents: per family its counts, its matrix and its results; the failing
    results and errors, linked one by one; then the other sections."""
    rows = []
    for family, c in counts.items():
        slug = slugs[family]
        name = f'<a href="#matrix-{slug}">{esc(family)}</a>' if matrices else esc(family)
        group = links.family(family, slug)  # its errors and failures first
        rows.append(
            [
                name,
                *(f'<a href="{group}">{v}</a>' if v else "0" for v in (c.caught, c.passed)),
                f'<a href="{group}">{c.errors}</a>' if c.errors else "0",
                str(c.not_applicable),
            ]
        )
    total = sum(counts.values(), Counts())
    rows.append(
        [
            "<b>all</b>",
            *(
                f"<b>{v}</b>"
                for v in (total.caught, total.passed, total.errors, total.not_applicable)
            ),
        ]
    )
    families = table(["family", "caught", "passed", "errors", "n/a"], rows, left=1)
    failing = _failing(document)
    listed = "".join(
        f'<li>{badge(r)}<a href="{links.result(i)}"><code>{esc(r["nodeid"])}</code></a></li>'
        for i, r in failing
    )
    first = (
        f"<details{' open' if len(failing) <= 12 else ''}><summary><b>Failures and errors "
        f"first</b>: {total.caught} caught, {total.errors} error"
        f"{'' if total.errors == 1 else 's'}</summary><ul class=fails>{listed}</ul></details>"
        if failing
        else "<p class=muted>No failures, no errors.</p>"
    )
    others = [
        ('<a href="#warnings">Warnings</a>', bool(document.get("warnings"))),
        ('<a href="#matrix">Which suite catches which model</a>', matrices),
        (f'<a href="#gate">Gate</a> ({gated} gated)', gated > 0),
        ('<a href="#results">Results</a> (index and legend)', True),
        (_comparisons(document, links), bool(document.get("comparisons"))),
    ]
    sections = " · ".join(text for text, shown in others if shown)
    return (
        f"<nav id=toc><h2>Contents</h2><p>{sections}</p>{families}{first}</nav>"
        if document.get("results") or document.get("not_applicable")
        else ""
    )


def _comparisons(document: Mapping[str, Any], links: Links) -> str:
    """The link to the comparisons: one, or one per family when they are on its own page."""
    blocks = document.get("comparisons") or []
    if not links.comparisons:
        return f'<a href="#comparisons">Model comparisons</a> ({len(blocks)})'
    return "Model comparisons: " + ", ".join(
        f'<a href="{file}#comparisons">{esc(f)}</a>' for f, file in links.comparisons.items()
    )


def matrix_html(matrices: Sequence[FamilyMatrix], slugs: Mapping[str, str], links: Links) -> str:
    """Which suite catches which model, one table per family; every verdict links to its
    result, every row is an anchor its results link back to."""
    if not matrices:
        return ""
    out = [
        "<section id=matrix><h2>Which suite catches which model</h2><p class=muted>The "
        "condition and gates per test × model: FAIL means the suite caught the model; n/a "
        "means the model does not read the family's prompts (skipped, never caught). Each "
        "verdict leads to its result.</p>"
    ]
    for m in matrices:
        slug = slugs[m.family]
        head = "".join(f"<th>{esc(c)}" for c in m.rows[0])
        body = []
        for k, (row, indexes) in enumerate(zip(m.rows[1:], m.results)):
            cells = "".join(
                f'<td class="{MATRIX_CLASSES.get(verdict, "broke")}">'
                + (
                    esc(verdict)
                    if index is None
                    else f'<a href="{links.result(index)}">{esc(verdict)}</a>'
                )
                for verdict, index in zip(row[1:], indexes)
            )
            body.append(f'<tr id="m-{slug}-{k}"><td>{esc(row[0])}{cells}')
        out.append(
            f'<h3 id="matrix-{slug}">{esc(m.family)}</h3><div class="wide"><table '
            f'class="matrix l1"><tr>{head}{"".join(body)}</table></div>'
        )
        if m.not_applicable:
            out.append(
                f"<p class=muted>n/a (they do not read {esc(m.family)} prompts): "
                + ", ".join(f"<code>{esc(name)}</code>" for name in m.not_applicable)
                + "</p>"
            )
    return "".join(out) + "</section>"


def gate_html(document: Mapping[str, Any], links: Links) -> str:
    """The gate's verdicts, one row per gated test × model, each leading to its result."""
    rows = []
    for i, r in enumerate(document.get("results") or []):
        gate = r.get("gate")
        passed, verdict = gate_verdict(gate) if gate else (None, "")
        if passed is None:
            continue
        rows.append(
            [
                "pass" if passed else "<b>FAIL</b>",
                f'<a href="{links.result(i)}"><code>{esc(r["nodeid"])}</code></a>',
                f"<code>{esc(gate['baseline'])}</code>",
                esc(verdict),
            ]
        )
    if not rows:
        return ""
    return (
        "<section id=gate><h2>Gate</h2>"
        + table(["gate", "test × model", "baseline", "verdict"], rows, left=4)
        + "</section>"
    )


def gated(document: Mapping[str, Any]) -> int:
    """How many results were gated against a baseline."""
    return sum(
        gate_verdict(r["gate"])[0] is not None
        for r in document.get("results") or []
        if r.get("gate")
    )


def _first_failing(r: Mapping[str, Any]) -> str:
    """The failing case's level, named (``distractors = 0``); ``—`` when the condition holds."""
    level = (r.get("failing_case") or {}).get("level")
    return "—" if level is None else level_text(r, level)


def index_html(document: Mapping[str, Any], links: Links, legend: str) -> str:
    """One row per result (``#i-N``), leading to its section, then the legend of the figures."""
    rows = [
        f'<tr id="i-{i}"><td>{badge(r)}<td><a href="{links.result(i)}">'
        f"<code>{esc(r['nodeid'])}</code></a><td>{num(r['summary'].get('kappa_bar'))}"
        f"<td>{num(r['summary'].get('all_correct'))}<td>{esc(_first_failing(r))}"
        for i, r in enumerate(document.get("results") or [])
    ]
    head = "".join(
        f"<th>{h}" for h in ["", "test × model", "κ̄", "all correct", "first failing level"]
    )
    return (
        f'<section id=results><h2>Results</h2><div class="wide"><table class=l2><tr>{head}'
        f"{''.join(rows)}</table></div>{legend}</section>"
    )
