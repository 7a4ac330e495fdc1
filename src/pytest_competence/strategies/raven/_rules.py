"""The rules of the symbolic Raven matrices and their interpreter (systematicity paper, arXiv:2609.13948, §4.2).

A matrix is a 3×3 grid of panels; each panel holds ``F`` integer features in ``0..9``. Every
feature follows one hidden rule along each row, the same rule in all three rows, with modulo-10
arithmetic. A feature's values in one row are ``(a, b, c)``: ``c`` is what the rule makes of
``a`` and ``b`` — and for the row-structure rules (constant, progression, distribute-three) the
rule constrains ``a`` and ``b`` as well.

- ``constant``: ``a = b = c``;
- ``progression±1``, ``progression±2``: ``b = a + d``, ``c = b + d``;
- ``addition``, ``subtraction``: ``c = a + b``, ``c = a − b``;
- ``minimum``, ``maximum``: ``c = min(a, b)``, ``c = max(a, b)``;
- ``distribute-three``: three distinct values; each row is a different cyclic rotation of them,
  so every value occurs once per row and once per column (a Latin square). Which rotation row 2
  is of row 1 is part of the draw; the missing value is the one absent from row 3 (and
  column 3). This is the only rule that relates rows, and it is symmetric in rows 1 and 2.

Everything here works on one feature's values (``row1``, ``row2`` full triples; the query row's
``a``, ``b``) and is plain Python on ints: it runs thousands of times per generated task.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import permutations

import numpy as np

__all__ = [
    "MODULUS",
    "RULES",
    "answers_over_alignments",
    "complete",
    "consistent_rules",
    "draw_rows",
    "fits",
    "identifiable",
    "solve",
]

MODULUS = 10
RULES: tuple[str, ...] = (
    "constant",
    "progression+1",
    "progression+2",
    "progression-1",
    "progression-2",
    "addition",
    "subtraction",
    "minimum",
    "maximum",
    "distribute-three",
)
_STEP = {
    "constant": 0,
    "progression+1": 1,
    "progression+2": 2,
    "progression-1": -1,
    "progression-2": -2,
}
_BINARY: dict[str, Callable[[int, int], int]] = {
    "addition": lambda a, b: (a + b) % MODULUS,
    "subtraction": lambda a, b: (a - b) % MODULUS,
    "minimum": min,
    "maximum": max,
}

Row = tuple[int, int, int]


def _rotation(row1: Sequence[int], row2: Sequence[int]) -> int:
    """``s`` in {1, 2} when ``row2`` is ``row1`` rotated left by ``s`` (distinct values), else 0."""
    if row1[0] == row1[1] or row1[1] == row1[2] or row1[0] == row1[2]:
        return 0
    for s in (1, 2):
        if row2[0] == row1[s] and row2[1] == row1[(s + 1) % 3] and row2[2] == row1[(s + 2) % 3]:
            return s
    return 0


@lru_cache(maxsize=MODULUS**3)
def _row_rules(row: Row) -> frozenset[str]:
    """The row-wise rules (all but distribute-three) one full row ``(a, b, c)`` follows."""
    a, b, c = row
    found = {
        name
        for name, d in _STEP.items()
        if (b - a) % MODULUS == d % MODULUS and (c - b) % MODULUS == d % MODULUS
    }
    found.update(name for name, op in _BINARY.items() if op(a, b) == c)
    return frozenset(found)


def fits(rule: str, row1: Row, row2: Row) -> bool:
    """Whether one feature's first two rows follow ``rule``."""
    if rule == "distribute-three":
        return _rotation(row1, row2) != 0
    return rule in _row_rules(row1) and rule in _row_rules(row2)


def complete(rule: str, row1: Sequence[int], row2: Sequence[int], a: int, b: int) -> int | None:
    """The third value of the query row ``(a, b, ?)`` under ``rule`` given rows 1–2 (which must
    fit it), or ``None`` when ``a``, ``b`` themselves break the rule."""
    if rule in _STEP:
        d = _STEP[rule]
        return (b + d) % MODULUS if (b - a) % MODULUS == d % MODULUS else None
    if rule in _BINARY:
        return _BINARY[rule](a, b)
    s = _rotation(row1, row2)  # row 3 is the rotation rows 1 and 2 left out: by 3 - s
    t = 3 - s
    if s and a == row1[t] and b == row1[(t + 1) % 3]:
        return row1[(t + 2) % 3]
    return None


def consistent_rules(row1: Row, row2: Row) -> tuple[str, ...]:
    """Every rule of :data:`RULES` that one feature's first two rows follow, in that order."""
    both = _row_rules(row1) & _row_rules(row2)
    return tuple(
        rule
        for rule in RULES
        if rule in both or (rule == "distribute-three" and _rotation(row1, row2))
    )


def identifiable(rule: str, row1: Row, row2: Row) -> bool:
    """Whether rows 1–2 single out ``rule`` among :data:`RULES`.

    The one exception is forced: constant rows ``(x, x, x)`` are also minimum and maximum rows
    (``min(x, x) = x``), on every row including the query's, so a constant feature is
    identifiable when nothing *but* those three fits. A minimum or maximum feature, by contrast,
    must show ``a ≠ b`` somewhere, or it would pass for a constant.
    """
    found = consistent_rules(row1, row2)
    if rule == "constant":
        return set(found) <= {"constant", "minimum", "maximum"}
    return found == (rule,)


def draw_rows(rule: str, rng: np.random.Generator) -> tuple[Row, Row, Row]:
    """One feature's three rows under ``rule``, redrawn until rows 1–2 identify it."""
    rows: list[Row]
    while True:
        if rule == "distribute-three":
            values = [int(v) for v in rng.choice(MODULUS, size=3, replace=False)]
            s = int(rng.integers(1, 3))
            rows = [
                (values[r * s % 3], values[(1 + r * s) % 3], values[(2 + r * s) % 3])
                for r in range(3)
            ]
        else:
            x = rng.integers(0, MODULUS, size=6).tolist()
            if rule in _STEP:
                d = _STEP[rule]
                rows = [(v, (v + d) % MODULUS, (v + 2 * d) % MODULUS) for v in x[:3]]
            else:
                op = _BINARY[rule]
                rows = [(a, b, op(a, b)) for a, b in zip(x[0::2], x[1::2])]
        if identifiable(rule, rows[0], rows[1]):
            return rows[0], rows[1], rows[2]


def _predictions(row1: Row, row2: Row, a: int, b: int) -> set[int]:
    out = set()
    rules = _row_rules(row1) & _row_rules(row2)  # usually empty: most rows follow no rule
    for rule in rules:
        value = complete(rule, row1, row2, a, b)
        if value is not None:
            out.add(value)
    if _rotation(row1, row2):
        value = complete("distribute-three", row1, row2, a, b)
        if value is not None:
            out.add(value)
    return out


def answers_over_alignments(columns: Sequence[Sequence[Sequence[int]]]) -> set[tuple[int, ...]]:
    """Every missing panel (in column 3's order) that some feature correspondence explains.

    ``columns[c][r]`` is the panel of row ``r`` in column ``c`` (row 3 of column 3 unused). A
    correspondence fixes column 1's order (relabelling features is free) and pairs each of its
    features with one of column 2's and one of column 3's; it explains the grid when every paired
    feature fits some rule on rows 1–2 and on the query row. The task's answer is well-defined
    under any column-specific feature permutation exactly when this set has one element — a
    property of the unpermuted task, since permuting columns only relabels correspondences.
    """
    f = len(columns[0][0])
    first, second, third = (
        [tuple(panel[i] for panel in column) for i in range(f)] for column in columns
    )  # feature i's values down one column
    table = [
        [
            [_predictions((a[0], b[0], c[0]), (a[1], b[1], c[1]), a[2], b[2]) for c in third]
            for b in second
        ]
        for a in first
    ]
    pairable = [[any(cell) for cell in row] for row in table]
    found: set[tuple[int, ...]] = set()
    for p2 in permutations(range(f)):
        if not all(pairable[i][p2[i]] for i in range(f)):
            continue  # no pairing with column 3 rescues this pairing with column 2
        for p3 in permutations(range(f)):
            options = [table[i][p2[i]][p3[i]] for i in range(f)]
            if not all(options):
                continue
            partial: list[tuple[int, ...]] = [()]
            for values in options:  # every combination, in column 1's order
                partial = [p + (v,) for p in partial for v in sorted(values)]
            for combo in partial:
                panel = [0] * f
                for i in range(f):
                    panel[p3[i]] = combo[i]
                found.add(tuple(panel))
    return found


def solve(
    rule: Sequence[str], binding: Sequence[Sequence[int]], rows: Sequence[Sequence[Sequence[int]]]
) -> tuple[int, ...]:
    """The interpreter: the missing panel, in column 3's shown order.

    ``rows[r][c]`` is the shown panel of row ``r``, column ``c`` (``rows[2]`` has two panels) and
    ``binding[c][s]`` the latent feature shown in slot ``s`` of column ``c``.
    """
    f = len(rule)
    latent = [[[0] * f for _ in panels] for panels in rows]
    for r, panels in enumerate(rows):
        for c, panel in enumerate(panels):
            for s, value in enumerate(panel):
                latent[r][c][binding[c][s]] = value
    missing = []
    for i, name in enumerate(rule):
        row1 = (latent[0][0][i], latent[0][1][i], latent[0][2][i])
        row2 = (latent[1][0][i], latent[1][1][i], latent[1][2][i])
        third = complete(name, row1, row2, latent[2][0][i], latent[2][1][i])
        if third is None or not fits(name, row1, row2):
            raise ValueError(f"feature {i} does not follow its rule {name!r}")
        missing.append(third)
    return tuple(missing[binding[2][s]] for s in range(f))
