"""The diagnosis section of the reports (``--competence-diagnose``): terminal, Markdown, HTML.

Renders ``result["diagnosis"]`` (:func:`pytest_competence.audit.diagnose`): the verdict,
the agreement of the model with each class of reference policies on the design (95% Wilson
intervals), the best-matching policies per level × presentation, where the closest candidates
differ, and the cells that would separate the ones the design cannot. A result without that key
renders nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from pytest_competence.drawing import number
from pytest_competence.report._cells import aligned, html_table, markdown_table
from pytest_competence.report._matrix import level_name

__all__ = ["diagnosis_html", "diagnosis_lines", "diagnosis_markdown"]


def _block(r: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return r.get("diagnosis") or None


def _ci(entry: Mapping[str, Any]) -> str:
    low, high = entry["ci"]
    return "—" if low is None else f"[{low:.3f}, {high:.3f}]"


def _rows(block: Mapping[str, Any]) -> list[list[str]]:
    """Header, then one row per class of policies on the design: agreement and interval."""
    rows = [["policies (one class each on this design)", "agreement", "95% CI", "answers"]]
    for c in block["closest"]:
        rows.append([" = ".join(c["policies"]), number(c["rate"]), _ci(c), str(c["total"])])
    return rows


def _level_rows(block: Mapping[str, Any], level: str = "n") -> list[list[str]]:
    rows = [[level, "presentation", "prompts", "best agreement", "answers like"]]
    for lv in block["by_level"]:
        top = lv["agreement"][lv["best"][0]]
        shown = lv["best"][:4] + ([f"+{len(lv['best']) - 4}"] if len(lv["best"]) > 4 else [])
        rows.append(
            [str(lv["n"]), lv["presentation"], str(lv["prompts"]), number(top), ", ".join(shown)]
        )
    return rows


def _detail(block: Mapping[str, Any]) -> list[str]:
    out = []
    for s in block["separations"]:
        (a, b), (ra, rb) = s["policies"], s["agreement"]
        if s["prompts"]:
            out.append(
                f"where {a} and {b} differ ({s['prompts']} prompts): like {a} "
                f"{number(ra['rate'])} {_ci(ra)}, like {b} {number(rb['rate'])} {_ci(rb)}"
            )
    for t in block["to_add"]:
        a, b = t["policies"]
        out.append(
            f"{a} vs {b}: "
            + (
                f"add {', '.join(t['needs'])}, e.g. the cell {t['witness']}"
                if t["witness"]
                else "no candidate cell separates them"
            )
        )
    return out


def diagnosis_lines(r: Mapping[str, Any]) -> list[str]:
    """Terminal lines: the verdict, the class table, per level, separations, cells to add."""
    block = _block(r)
    if block is None:
        return []
    return [
        f"    diagnosis: {block['verdict']}",
        *aligned(_rows(block), "      "),
        *aligned(_level_rows(block, level_name(r)), "      "),
        *(f"      {x}" for x in _detail(block)),
    ]


def diagnosis_markdown(r: Mapping[str, Any]) -> list[str]:
    """Markdown lines: the verdict, the class table and the separations."""
    block = _block(r)
    if block is None:
        return []
    return [
        "",
        f"Diagnosis: {block['verdict']}.",
        "",
        *markdown_table(_rows(block)),
        "",
        *markdown_table(_level_rows(block, level_name(r))),
        "",
        *(f"- {x}" for x in _detail(block)),
        "",
    ]


def diagnosis_html(r: Mapping[str, Any]) -> str:
    """An HTML section: the verdict, both tables and the separations."""
    block = _block(r)
    if block is None:
        return ""
    items = "".join(f"<li>{escape(x)}</li>" for x in _detail(block))
    return (
        f"<h3>Diagnosis: which reference policy it answers like</h3>"
        f"<p>{escape(block['verdict'])}</p>{html_table(_rows(block))}"
        f"{html_table(_level_rows(block, level_name(r)))}" + (f"<ul>{items}</ul>" if items else "")
    )
