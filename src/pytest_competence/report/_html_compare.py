"""The HTML report's model comparisons: per test, each model against the reference.

One table per test of the McNemar tests on all prompts with the bootstrap interval on the
accuracy difference, then, folded, the same tests level by level as one compact grid: a row per
model × presentation, a column per level, each cell ``b:c`` and the Holm-adjusted p.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_competence.drawing import esc
from pytest_competence.report._html_parts import interval, p_value, table

__all__ = ["comparisons_html"]


def comparisons_html(blocks: Sequence[Mapping[str, Any]], levels: Mapping[str, str]) -> str:
    """The comparisons section; ``levels`` names each test's levels (``n``, ``depth``, …)."""
    if not blocks:
        return ""
    out = [
        "<section id=comparisons><h2>Model comparisons</h2><p class=muted>McNemar on all "
        "prompts (invalid counts wrong), Holm across models; Δ accuracy = model − reference "
        "with a paired bootstrap interval stratified by level. b: model right, reference "
        "wrong; c: the reverse.</p>"
    ]
    head = ["model", "presentation", "Δ accuracy [95% CI]", "b", "c", "test", "p", "p (Holm)"]
    for block in blocks:
        deltas = block.get("accuracy_delta") or {}
        rows: list[list[str]] = []
        grid: dict[tuple[str, str], dict[Any, str]] = {}  # (model, presentation) → level → cell
        for row in block.get("mcnemar") or []:
            for t in row.get("tests") or []:
                if row["n"] != "all":
                    grid.setdefault((t["model"], row["presentation"]), {})[row["n"]] = (
                        f"{esc(t.get('b'))}:{esc(t.get('c'))} {p_value(t.get('p_holm'))}"
                    )
                    continue
                delta = (deltas.get(t["model"]) or {}).get(row["presentation"])
                rows.append(
                    [
                        f"<code>{esc(t['model'])}</code>",
                        esc(row["presentation"]),
                        interval(delta, signed=True),
                        esc(t.get("b")),
                        esc(t.get("c")),
                        esc(t.get("method")),
                        p_value(t.get("p_value")),
                        p_value(t.get("p_holm")),
                    ]
                )
        out.append(
            f"<h3><code>{esc(block['test'])}</code>: against "
            f"<code>{esc(block['reference'])}</code></h3>" + table(head, rows, left=2)
        )
        if grid:
            name = esc(levels.get(block["test"], "n"))
            ns = list(dict.fromkeys(n for cells in grid.values() for n in cells))
            out.append(
                "<details><summary>per level: b:c and p (Holm)</summary>"
                + table(
                    ["model", "presentation", *(f"{name} = {esc(n)}" for n in ns)],
                    [
                        [f"<code>{esc(model)}</code>", esc(presentation)]
                        + [cells.get(n, "—") for n in ns]
                        for (model, presentation), cells in grid.items()
                    ],
                    left=2,
                )
                + "</details>"
            )
    return "".join(out) + "</section>"
