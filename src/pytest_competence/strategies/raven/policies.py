"""Reference policies for the symbolic Raven matrices (systematicity paper, arXiv:2609.13948, §4.2).

==================  ===================================================================
``raven-aligned``   reads the grid assuming every column lists the features in the same
                    order, and per feature slot completes the query row by the first rule
                    (in the family's rule order) that rows 1–2 and the query's two panels
                    follow; a slot no rule explains gets column 2's value. It solves every
                    original and ``reorder`` prompt; on ``permute`` prompts it is right only
                    where the columns' orders happen to agree enough — the failure to find
                    correspondences the feature rebinding probes (Carpenter et al., 1990),
                    so it shows the systematicity gap on that type alone.
==================  ===================================================================

The policy reads the prompt text alone (its first line, the grid).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from pytest_competence.policy import UNREADABLE

from ._rules import RULES, complete, fits

__all__ = ["RAVEN_POLICIES", "Grid", "read_raven"]


Grid = tuple[tuple[tuple[int, ...], ...], ...]


def read_raven(text: str) -> Grid | None:
    """The panels of a Raven prompt's grid (row 3 without its masked panel), else ``None``."""
    rows = text.split("\n", 1)[0].split(" || ")
    if len(rows) != 3:
        return None
    last = rows[2].split(" | ")
    try:
        cells = [
            [tuple(int(v) for v in cell.split()) for cell in row.split(" | ")] for row in rows[:2]
        ]
        cells.append([tuple(int(v) for v in cell.split()) for cell in last[:2]])
    except ValueError:
        return None
    masked = last[-1].split()
    if len(last) != 3 or not _shaped(cells) or masked != ["?"] * len(cells[0][0]):
        return None
    return tuple(tuple(row) for row in cells)


def _shaped(cells: list[list[tuple[int, ...]]]) -> bool:
    sizes = {len(panel) for row in cells for panel in row}
    return [len(r) for r in cells] == [3, 3, 2] and len(sizes) == 1 and 0 not in sizes


def _aligned(text: str) -> str:
    grid = read_raven(text)
    if grid is None:
        return UNREADABLE
    panel = []
    for i in range(len(grid[0][0])):
        row1, row2 = ((grid[r][0][i], grid[r][1][i], grid[r][2][i]) for r in (0, 1))
        a, b = grid[2][0][i], grid[2][1][i]
        found = (complete(rule, row1, row2, a, b) for rule in RULES if fits(rule, row1, row2))
        panel.append(next((v for v in found if v is not None), b))
    return "Answer: " + json.dumps(panel, separators=(",", ":"))


#: Policy name → factory; merged into ``reference.POLICIES``.
RAVEN_POLICIES: dict[str, Callable[..., Callable[[str], str]]] = {
    "raven-aligned": lambda: _aligned,
}
