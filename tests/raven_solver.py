"""An independent reader and solver of rendered symbolic Raven prompts (systematicity paper, arXiv:2609.13948, §4.2).

It reads only the prompt text — ``a b | c d | e f || … || g h | i j | ? ?`` — and shares no code
with :mod:`pytest_competence.strategies.raven._rules`: the rules are written here again, as
row functions, and distribute-three as a Latin square of cyclic rotations. Column-specific
feature permutations are *not* read from the latent task: the solver tries every correspondence
between the columns' features and returns every missing panel that one of them explains.
"""

from __future__ import annotations

from itertools import permutations, product

Grid = list[list[list[int]]]  # grid[row][column] = panel; the masked panel is absent


def read_grid(text: str) -> Grid:
    """The panels of the first line of a prompt; raises ``ValueError`` on anything else."""
    rows = [row.split("|") for row in text.splitlines()[0].split("||")]
    if [len(r) for r in rows] != [3, 3, 3]:
        raise ValueError(f"not a 3×3 grid: {text.splitlines()[0]!r}")
    grid = [[[int(v) for v in cell.split()] for cell in row] for row in rows[:2]]
    grid.append([[int(v) for v in cell.split()] for cell in rows[2][:2]])
    masked = rows[2][2].split()
    if set(masked) != {"?"} or len(masked) != len(grid[0][0]):
        raise ValueError(f"the last panel is not {len(grid[0][0])} question marks: {masked}")
    return grid


def _row_rules() -> dict[str, tuple]:
    """name → (does a full row (a, b, c) follow it, the c it gives a partial row (a, b) or None)."""
    out: dict[str, tuple] = {}
    for name, step in [
        ("constant", 0),
        ("progression+1", 1),
        ("progression+2", 2),
        ("progression-1", 9),
        ("progression-2", 8),
    ]:
        out[name] = (
            lambda r, s=step: r[1] == (r[0] + s) % 10 and r[2] == (r[1] + s) % 10,
            lambda a, b, s=step: (b + s) % 10 if b == (a + s) % 10 else None,
        )
    for name, op in [
        ("addition", lambda a, b: (a + b) % 10),
        ("subtraction", lambda a, b: (a - b + 10) % 10),
        ("minimum", lambda a, b: a if a < b else b),
        ("maximum", lambda a, b: a if a > b else b),
    ]:
        out[name] = (lambda r, op=op: r[2] == op(r[0], r[1]), lambda a, b, op=op: op(a, b))
    return out


ROW_RULES = _row_rules()


def _rotations(row: tuple[int, ...]) -> set[tuple[int, ...]]:
    return {row[k:] + row[:k] for k in range(3)}


def rules_of_rows(row1: tuple[int, ...], row2: tuple[int, ...]) -> set[str]:
    """Every rule the two complete rows of one feature follow."""
    found = {name for name, (ok, _) in ROW_RULES.items() if ok(row1) and ok(row2)}
    if len(set(row1)) == 3 and row1 != row2 and row2 in _rotations(row1):
        found.add("distribute-three")
    return found


def predictions(row1: tuple[int, ...], row2: tuple[int, ...], a: int, b: int) -> set[int]:
    """Every value ``?`` of the row ``(a, b, ?)`` that some rule fitting rows 1–2 gives."""
    out = set()
    for name in rules_of_rows(row1, row2):
        if name == "distribute-three":
            for v in range(10):  # the square must be the three rotations, each once
                if {row1, row2, (a, b, v)} == _rotations(row1):
                    out.add(v)
        else:
            value = ROW_RULES[name][1](a, b)
            if value is not None:
                out.add(value)
    return out


def solve(grid: Grid) -> set[tuple[int, ...]]:
    """Every missing panel (in the masked panel's order) some feature correspondence explains.

    A correspondence takes the features of column 1 in order and pairs feature ``i`` with
    feature ``p2[i]`` of column 2 and ``p3[i]`` of column 3; the answer's slot ``p3[i]`` is
    what feature ``i``'s rule gives.
    """
    f = len(grid[0][0])
    found = set()
    for p2, p3 in product(permutations(range(f)), repeat=2):
        options = []
        for i in range(f):
            row1 = (grid[0][0][i], grid[0][1][p2[i]], grid[0][2][p3[i]])
            row2 = (grid[1][0][i], grid[1][1][p2[i]], grid[1][2][p3[i]])
            options.append(predictions(row1, row2, grid[2][0][i], grid[2][1][p2[i]]))
        for values in product(*options):
            panel = [0] * f
            for i, v in enumerate(values):
                panel[p3[i]] = v
            found.add(tuple(panel))
    return found


def aligned_rules(grid: Grid) -> list[set[str]]:
    """Per feature slot, the rules rows 1–2 follow when the columns' features are aligned."""
    f = len(grid[0][0])
    return [
        rules_of_rows(tuple(p[i] for p in grid[0]), tuple(p[i] for p in grid[1])) for i in range(f)
    ]
