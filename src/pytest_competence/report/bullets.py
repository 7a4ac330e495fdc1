"""The systematicity section of the reports: bullet charts, tables and the variance split.

Renders ``summary["systematicity"]`` (:func:`pytest_competence.systematicity.systematicity_summary`)
as seeds/002 Fig. 4 does: per isomorphism type and pooled, three nested bars — solve-any ≥
fraction solved ≥ solve-all — with the systematicity gap (any − all) bracketed; the same as a
table for the terminal and Markdown, and the within/between variance decomposition of App. A
when the run had N ≥ 2 attempts. A result without that key renders nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_competence.report.cells import aligned, html_table, markdown_table, number
from pytest_competence.report.svg import bullet_chart, esc, level_label

__all__ = ["systematicity_html", "systematicity_lines", "systematicity_markdown"]

PARTS = [("solve-any", "#bcd4ee"), ("fraction solved", "#5b8fc9"), ("solve-all", "#15365f")]
_HEAD = ["", "tasks", "K", "any", "fraction", "all", "gap"]
_VARIANCE_HEAD = ["", "tasks (defined)", "K", "N", "ρ_total", "ρ_within", "ρ_between"]


def _block(r: Mapping[str, Any]) -> Mapping[str, Any] | None:
    block = (r.get("summary") or {}).get("systematicity")
    return block if block and (block.get("types") or block.get("original")) else None


def _rows(block: Mapping[str, Any], *, ci: bool) -> list[list[str]]:
    """Header, the original task, each isomorphism type, pooled: any/fraction/all/gap."""
    def cell(m: Mapping[str, Any], key: str) -> str:
        text, interval = number(m.get(key)), (m.get("ci") or {}).get(key)
        return f"{text} [{interval[0]:.2f}, {interval[1]:.2f}]" if ci and interval else text

    rows = [list(_HEAD)]
    original = block.get("original")
    if original:
        solved = number(original["solved"])
        interval = original.get("ci")
        if ci and interval:
            solved += f" [{interval[0]:.2f}, {interval[1]:.2f}]"
        rows.append(["original", str(original["tasks"]), "1", solved, solved, solved, "—"])
    named = [*block.get("types", {}).items()]
    if "pooled" in block and len(named) > 1:
        named.append(("pooled", block["pooled"]))
    for name, m in named:
        rows.append([name, str(m["tasks"]), str(m["variations"]),
                     *(cell(m, k) for k in ("any", "fraction", "all", "gap"))])
    return rows


def _variance_rows(block: Mapping[str, Any]) -> list[list[str]]:
    rows = [list(_VARIANCE_HEAD)]
    for name, v in (block.get("variance") or {}).items():
        rows.append([name, f"{v['tasks']} ({v['tasks_defined']})", str(v["variations"]),
                     str(v["attempts"]), number(v.get("rho_total")), number(v.get("rho_within")),
                     number(v.get("rho_between"))])
    return rows if len(rows) > 1 else []


def systematicity_lines(r: Mapping[str, Any]) -> list[str]:
    """Terminal lines: any/fraction/all/gap per isomorphism type, then the variance split."""
    block = _block(r)
    if block is None:
        return []
    lines = [f"    systematicity (seeds/002 §3.5; majority over {block['attempts']} attempt(s)):"]
    lines += aligned(_rows(block, ci=False), "      ")
    variance = _variance_rows(block)
    if variance:
        lines.append("    variance decomposition (seeds/002 App. A; mean over tasks with "
                     "0 < p̂ < 1):")
        lines += aligned(variance, "      ")
    return lines


def systematicity_markdown(r: Mapping[str, Any]) -> list[str]:
    """Markdown lines: the any/fraction/all/gap table (95% intervals) and the variance split."""
    block = _block(r)
    if block is None:
        return []
    out = ["", f"Systematicity (seeds/002 §3.5), majority over {block['attempts']} "
               f"attempt(s); 95% task-bootstrap intervals (Wilson for the original):", ""]
    out += markdown_table(_rows(block, ci=True))
    variance = _variance_rows(block)
    if variance:
        out += ["", "Variance decomposition (seeds/002 App. A), mean over tasks with 0 < p̂ < 1:",
                ""] + markdown_table(variance)
    return out + [""]


def _chart(title: str, named: list[tuple[str, Mapping[str, Any]]]) -> str:
    rows = [(name, (m.get("any"), m.get("fraction"), m.get("all"))) for name, m in named]
    spans = [(m["all"], m["any"]) if m.get("gap") else None for _, m in named]
    return bullet_chart(title, rows, PARTS, spans=spans, span_label="gap any − all")


def _named(block: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    named: list[tuple[str, Mapping[str, Any]]] = []
    original = block.get("original")
    if original:  # one presentation: any = fraction = all
        s = original["solved"]
        named.append(("original", {"any": s, "fraction": s, "all": s, "gap": 0.0}))
    types = list((block.get("types") or {}).items())
    named += types
    if "pooled" in block and len(types) > 1:
        named.append(("pooled", block["pooled"]))
    return named


def systematicity_html(r: Mapping[str, Any]) -> str:
    """An HTML section: bullet charts (overall and per level), the table, the variance split."""
    block = _block(r)
    if block is None:
        return ""
    figures = [("Systematicity by isomorphism type", "any · fraction · all; bracket: gap",
                _chart("Systematicity by isomorphism type", _named(block)))]
    levels = block.get("by_level") or []
    if len(levels) > 1:
        per_level = [(f"n = {level_label(lv['n'])}", lv["pooled"]) for lv in levels
                     if "pooled" in lv]
        figures.append(("Systematicity per level", "all isomorphism types pooled",
                        _chart("Systematicity per level, types pooled", per_level)))
    plots = "".join(f"<figure><figcaption>{esc(t)} <span>{esc(c)}</span></figcaption>{svg}"
                    "</figure>" for t, c, svg in figures)
    html = (f'<h3 id="systematicity">Systematicity (seeds/002 §3.5)</h3><p class=muted>Per task, '
            f"K variations per isomorphism type: solve-any, fraction solved, solve-all, averaged "
            f"over tasks; gap = any − all. Each pass is the majority over {block['attempts']} "
            f"attempt(s). Intervals: 95%, task bootstrap (Wilson for the original).</p>"
            f'<div class="plots">{plots}</div>{html_table(_rows(block, ci=True))}')
    variance = _variance_rows(block)
    if variance:
        html += ("<h3>Variance decomposition (seeds/002 App. A)</h3><p class=muted>Normalised"
                 " by σ²_max = K/(K − 1)·p̂(1 − p̂); means over the tasks where 0 &lt; p̂ &lt; 1;"
                 " ρ_between clipped at zero per task.</p>" + html_table(variance))
    return html
