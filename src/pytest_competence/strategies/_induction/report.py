"""The systematicity section of the reports, as data: bullet charts, tables, the variance split.

Renders ``summary["systematicity"]`` (:func:`pytest_competence.strategies._induction.metrics.systematicity_summary`)
as the systematicity paper, arXiv:2609.13948, Fig. 4 does: per isomorphism type and pooled, three nested bars — solve-any ≥
fraction solved ≥ solve-all — with the systematicity gap (any − all) bracketed; the same as a
table for the terminal and Markdown, and the within/between variance decomposition of App. A
when the run had N ≥ 2 attempts. A result without that key renders nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_competence.drawing import bullet_chart, level_label, number
from pytest_competence.protocol import Figure, Table

__all__ = ["systematicity_figures", "systematicity_tables"]

PARTS = [("solve-any", "#bcd4ee"), ("fraction solved", "#5b8fc9"), ("solve-all", "#15365f")]
_HEAD = ["", "tasks", "K", "any", "fraction", "all", "gap"]
_VARIANCE_HEAD = ["", "tasks (defined)", "K", "N", "ρ_total", "ρ_within", "ρ_between"]


def _block(r: Mapping[str, Any]) -> Mapping[str, Any] | None:
    block = (r.get("summary") or {}).get("systematicity")
    return block if block and (block.get("types") or block.get("original")) else None


def _rows(block: Mapping[str, Any]) -> list[list[Any]]:
    """Header, the original task, each isomorphism type, pooled: any/fraction/all/gap, each
    figure with its 95% interval where there is one (a ``(value, low, high)`` cell)."""

    def cell(m: Mapping[str, Any], key: str) -> Any:
        value, interval = m.get(key), (m.get("ci") or {}).get(key)
        return (value, *interval) if interval else value

    rows: list[list[Any]] = [list(_HEAD)]
    original = block.get("original")
    if original:
        interval = original.get("ci")
        solved = (original["solved"], *interval) if interval else original["solved"]
        rows.append(["original", str(original["tasks"]), "1", solved, solved, solved, "—"])
    named = [*block.get("types", {}).items()]
    if "pooled" in block and len(named) > 1:
        named.append(("pooled", block["pooled"]))
    for name, m in named:
        rows.append(
            [
                name,
                str(m["tasks"]),
                str(m["variations"]),
                *(cell(m, k) for k in ("any", "fraction", "all", "gap")),
            ]
        )
    return rows


def _variance_rows(block: Mapping[str, Any]) -> list[list[str]]:
    rows = [list(_VARIANCE_HEAD)]
    for name, v in (block.get("variance") or {}).items():
        rows.append(
            [
                name,
                f"{v['tasks']} ({v['tasks_defined']})",
                str(v["variations"]),
                str(v["attempts"]),
                number(v.get("rho_total")),
                number(v.get("rho_within")),
                number(v.get("rho_between")),
            ]
        )
    return rows if len(rows) > 1 else []


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


def systematicity_tables(r: Mapping[str, Any]) -> list[Table]:
    """The systematicity table (with 95% intervals) and the variance split, as data."""
    block = _block(r)
    if block is None:
        return []
    rows = _rows(block)
    out = [
        Table(
            "Systematicity (systematicity paper, arXiv:2609.13948, §3.5)",
            tuple(rows[0]),
            tuple(map(tuple, rows[1:])),
            note=f"majority over {block['attempts']} attempt(s); per task, K variations per "
            f"isomorphism type: solve-any, fraction solved, solve-all, averaged over "
            f"tasks, gap = any − all; 95% task-bootstrap intervals (Wilson for the "
            f"original)",
            label=f"systematicity (systematicity paper, arXiv:2609.13948, §3.5; majority over {block['attempts']} attempt(s))",
        )
    ]
    variance = _variance_rows(block)
    if variance:
        out.append(
            Table(
                "Variance decomposition (systematicity paper, arXiv:2609.13948, App. A)",
                tuple(variance[0]),
                tuple(map(tuple, variance[1:])),
                note="mean over tasks with 0 < p̂ < 1, normalised by σ²_max = "
                "K/(K − 1)·p̂(1 − p̂); ρ_between clipped at zero per task",
                label="variance decomposition (systematicity paper, arXiv:2609.13948, App. A)",
            )
        )
    return out


def systematicity_figures(r: Mapping[str, Any]) -> list[Figure]:
    """Bullet charts: by isomorphism type, and per level with the types pooled."""
    block = _block(r)
    if block is None:
        return []
    out = [
        Figure(
            "Systematicity by isomorphism type",
            "any · fraction · all; bracket: gap",
            _chart("Systematicity by isomorphism type", _named(block)),
        )
    ]
    levels, name = block.get("by_level") or [], r.get("level_name") or "n"
    if len(levels) > 1:
        per_level = [
            (f"{name} = {level_label(lv['n'])}", lv["pooled"]) for lv in levels if "pooled" in lv
        ]
        out.append(
            Figure(
                "Systematicity per level",
                "all isomorphism types pooled",
                _chart("Systematicity per level, types pooled", per_level),
            )
        )
    return out
