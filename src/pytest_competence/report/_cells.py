"""Plain-text tables shared by the families' report sections: one row list, three renderings.

A table is a list of rows of strings, the header first; :func:`aligned` writes it for the
terminal, :func:`markdown_table` for the Markdown summary and :func:`html_table` (escaping
every cell) for the HTML page. :func:`number` writes a figure the way every report does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from pytest_competence.drawing import number
from pytest_competence.protocol import Table

__all__ = [
    "aligned",
    "family_html",
    "family_tables",
    "figures_html",
    "html_table",
    "markdown_table",
    "p_text",
    "tables_html",
    "tables_lines",
    "tables_markdown",
]

Rows = Sequence[Sequence[str]]


def aligned(rows: Rows, indent: str) -> list[str]:
    """Terminal lines: the first column left-aligned, the others right-aligned."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        indent
        + "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))
        )
        for row in rows
    ]


def p_text(value: float) -> str:
    """A p-value as the tables show it: two significant digits, scientific below 0.001."""
    return f"{value:.2g}" if value >= 1e-3 else f"{value:.1e}"


def markdown_table(rows: Rows) -> list[str]:
    """Markdown lines: the header, its rule, a line per row."""
    return ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])] + [
        "| " + " | ".join(row) + " |" for row in rows[1:]
    ]


def html_table(rows: Rows, classes: Mapping[str, str] | None = None) -> str:
    """An HTML table in a horizontally scrolling block; the first column is a label (aligned
    left by the table's class ``l1``, as :func:`~._html_result.table` does). Cells and rows
    leave out their optional end tags, as :func:`~._html_result.table` says.
    ``classes`` gives a cell whose whole text is a key that class (a matrix's ``FAIL``)."""
    classes = classes or {}

    def cell(c: str) -> str:
        name = classes.get(c)
        return (f'<td class="{name}">' if name else "<td>") + escape(c)

    head = "".join(f"<th>{escape(c)}" for c in rows[0])
    body = "".join("<tr>" + "".join(cell(c) for c in row) for row in rows[1:])
    return f'<div class="wide"><table class=l1><tr>{head}{body}</table></div>'


def family_tables(r: Mapping[str, Any]) -> list[Table]:
    """The report tables the result's family draws from its summary (``Family.tables``)."""
    from pytest_competence.registry import FAMILIES

    return list(FAMILIES.hooks(r.get("family_name") or "").tables(r))


def _cell(value: Any, intervals: bool) -> str:
    """A table cell as text: a figure with three decimals, ``(value, low, high)`` with its
    interval (on the terminal, which has no room for it, the value alone), ``None`` blank."""
    if value is None:
        return ""
    if isinstance(value, tuple):
        text = number(value[0])
        return f"{text} [{value[1]:.2f}, {value[2]:.2f}]" if intervals else text
    if isinstance(value, float):
        return number(value)
    return str(value)


def _rows(table: Table, intervals: bool = True) -> list[list[str]]:
    return [list(table.columns), *([_cell(v, intervals) for v in row] for row in table.rows)]


def tables_lines(r: Mapping[str, Any]) -> list[str]:
    """Terminal lines of the family's tables: ``label: note``, then the aligned table."""
    out: list[str] = []
    for table in family_tables(r):
        out.append(f"    {table.label or table.title}: {table.note}".rstrip(": "))
        out.extend(aligned(_rows(table, intervals=False), "      "))
    return out


def tables_markdown(r: Mapping[str, Any]) -> list[str]:
    """Markdown lines of the family's tables: ``title: note.``, then the table."""
    out: list[str] = []
    for table in family_tables(r):
        out += [
            "",
            f"{table.title}: {table.note}." if table.note else f"{table.title}:",
            "",
            *markdown_table(_rows(table)),
            "",
        ]
    return out


def tables_html(r: Mapping[str, Any], prefix: str = "") -> str:
    """HTML sections of the family's tables: a heading, the note, the table. A heading's id is
    ``prefix`` and its title (``result-3-systematicity``): unique on a page of many results."""
    return "".join(
        f'<h3 id="{prefix}{_anchor(t)}">{escape(t.title)}</h3>'
        + (f"<p class=muted>{escape(t.note)}</p>" if t.note else "")
        + html_table(_rows(t))
        for t in family_tables(r)
    )


def _anchor(table: Table) -> str:
    """The heading's id: the title up to its reference, e.g. ``systematicity``."""
    return re.sub(r"\W+", "-", table.title.split(" (")[0].lower()).strip("-")


def figures_html(r: Mapping[str, Any]) -> str:
    """The family's figures (``Family.figures``) side by side, each with its caption."""
    from pytest_competence.registry import FAMILIES

    figures = FAMILIES.hooks(r.get("family_name") or "").figures(r)
    if not figures:
        return ""
    return (
        '<div class="plots">'
        + "".join(
            f"<figure><figcaption>{escape(f.title)} <span>{escape(f.caption)}</span></figcaption>"
            f"{f.svg}</figure>"
            for f in figures
        )
        + "</div>"
    )


def family_html(r: Mapping[str, Any], prefix: str = "") -> str:
    """The family's own section of the HTML page: its figures, then its tables (their ids
    start with ``prefix``)."""
    return figures_html(r) + tables_html(r, prefix)
