"""Minimum hitting sets, exact by branch and bound over bitsets, with a labelled greedy fallback.

A support identifies the estimand exactly when it contains, for every cross-estimand pair of
policies, at least one cell that distinguishes them: it *hits* every distinguishing set. The
cheapest identifying supports are the minimum hitting sets of those sets. The search works on *column classes*: cells that hit exactly the same sets are interchangeable,
and an optimum never holds two cells of one class nor a dearer cell where a cheaper one exists,
so every optimum over classes expands to all optima over cells. Sets containing another set are
dropped. The branch and bound branches on the uncovered set with the fewest candidate classes
(excluding earlier branches' classes, so each solution is generated once) and prunes by a
packing lower bound: pairwise disjoint uncovered sets each need a class of their own.

Past ``max_nodes`` nodes the optimum comes from an exact integer program (scipy's HiGHS MILP),
further optima by re-solving with each found set cut off, up to ``MILP_SOLUTIONS`` solves
(``count_complete`` says whether all were enumerated). Only if that does not prove optimality
within ``milp_seconds`` is the result a weighted greedy cover, labelled as an approximation:
within ``H(d) = 1 + 1/2 + … + 1/d ≤ 1 + ln d`` of the minimum (``d`` the most sets one cell
hits), with a proven lower bound beside it.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice, product

__all__ = ["MAX_NODES", "HittingSets", "minimum_hitting_sets"]

#: Branch-and-bound nodes the exact search may visit before it falls back to greedy.
MAX_NODES = 50_000
#: Optimal sets the integer program enumerates (one solve each) past the node budget.
MILP_SOLUTIONS = 10
_EPS = 1e-9


@dataclass(frozen=True)
class HittingSets:
    """The minimum hitting sets of a family of sets (see the module docstring).

    ``solutions`` lists up to ``max_solutions`` optimal sets, each sorted in the cells' order;
    ``count`` is how many optimal sets were found, all of them when ``count_complete``. With
    ``exact`` false, ``solutions`` holds one cover from the approximation, ``cost`` its cost,
    and ``lower_bound`` a proven lower bound on the minimum.
    """

    cost: float
    size: int
    solutions: tuple[tuple[Hashable, ...], ...]
    count: int
    exact: bool
    method: str
    lower_bound: float
    guarantee: str = ""
    nodes: int = 0
    classes: int = 0
    sets: int = 0
    uncoverable: tuple[int, ...] = field(default=())
    count_complete: bool = True

    @property
    def feasible(self) -> bool:
        """False when some set is empty: no support of these cells can hit it."""
        return not self.uncoverable

    def to_dict(self) -> dict[str, object]:
        return {
            "cost": self.cost,
            "size": self.size,
            "count": self.count,
            "exact": self.exact,
            "method": self.method,
            "lower_bound": self.lower_bound,
            "guarantee": self.guarantee,
            "nodes": self.nodes,
            "classes": self.classes,
            "sets": self.sets,
            "uncoverable": list(self.uncoverable),
            "count_complete": self.count_complete,
            "solutions": [[str(c) for c in s] for s in self.solutions],
        }


class _Budget(Exception):
    pass


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _harmonic(d: int) -> float:
    return sum(1 / k for k in range(1, d + 1))


def minimum_hitting_sets(
    sets: Sequence[Collection[Hashable]],
    *,
    order: Sequence[Hashable] | None = None,
    costs: Mapping[Hashable, float] | None = None,
    max_solutions: int = 100,
    max_nodes: int = MAX_NODES,
    milp_seconds: float = 60.0,
) -> HittingSets:
    """All minimum-cost hitting sets of ``sets`` (cost 1 per cell unless ``costs`` says).

    Args:
        sets: the sets to hit, e.g. the distinguishing sets of the cross-estimand pairs.
        order: every cell, in the order solutions list them (default: first appearance).
        costs: a positive cost per cell; cells not listed cost 1.
        max_solutions: how many optimal sets to list (``count`` still counts all of them).
        max_nodes: the branch and bound's budget; past it, the integer program.
        milp_seconds: the integer program's time limit; past it, the labelled approximation.
    """
    if isinstance(max_solutions, bool) or not isinstance(max_solutions, int) or max_solutions < 1:
        raise ValueError(
            f"Expected max_solutions to be a positive integer, but got "
            f"max_solutions={max_solutions!r}"
        )
    cells = list(dict.fromkeys(order if order is not None else (c for s in sets for c in s)))
    index = {c: k for k, c in enumerate(cells)}
    cost_of = _cost_of(cells, costs)
    rows = _rows(sets, index)
    if not rows:  # nothing to separate: the empty support already identifies
        return HittingSets(0.0, 0, ((),), 1, True, "exact (nothing to hit)", 0.0)
    uncoverable = tuple(k for k, r in enumerate(rows) if r == 0)
    if uncoverable:
        return HittingSets(
            float("inf"),
            0,
            (),
            0,
            True,
            "infeasible",
            float("inf"),
            sets=len(rows),
            uncoverable=uncoverable,
        )
    classes = _Classes.of(cells, rows, cost_of)
    search = _Search(classes.weight, max_nodes, classes.greedy_cost)
    complete = True
    method = "exact (branch and bound)"
    try:
        search.run(0, 0.0, classes.rows, (1 << len(classes.weight)) - 1)
        chosen_sets, best = search.solutions, search.best
    except _Budget:
        milp = _milp(classes.rows, classes.weight, min(max_solutions, MILP_SOLUTIONS), milp_seconds)
        if milp is None or not milp[3]:
            return _approximation(
                classes, milp, index, max_nodes, milp_seconds, search.nodes, len(rows)
            )
        chosen_sets, best, _, _, complete = milp
        method = f"exact (integer program, HiGHS, after {max_nodes} branch-and-bound nodes)"
    expanded, count = _expand(chosen_sets, classes.cheapest, index, max_solutions)
    size = len(expanded[0]) if expanded else 0
    return HittingSets(
        best,
        size,
        tuple(expanded),
        count,
        True,
        method,
        best,
        "",
        search.nodes,
        len(classes.weight),
        len(rows),
        count_complete=complete,
    )


def _cost_of(
    cells: Sequence[Hashable], costs: Mapping[Hashable, float] | None
) -> dict[Hashable, float]:
    """Each cell's cost: 1 unless ``costs`` gives a positive one (others there are ignored)."""
    cost_of = {c: 1.0 for c in cells}
    for c, value in (costs or {}).items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ValueError(
                f"Expected every cost to be a positive number, but got "
                f"costs[{c!r}]={value!r}; give a free cell a small cost such as 1e-6"
            )
        if c in cost_of:
            cost_of[c] = float(value)
    return cost_of


def _rows(sets: Sequence[Collection[Hashable]], index: Mapping[Hashable, int]) -> list[int]:
    """Each set as a bitmask over the cells' positions in ``index``."""
    rows: list[int] = []
    for s in sets:
        missing = [c for c in s if c not in index]
        if missing:
            raise ValueError(f"Cell {missing[0]!r} of a set is not in order=; list every cell")
        rows.append(sum(1 << index[c] for c in s))
    return rows


@dataclass(frozen=True)
class _Classes:
    """The column classes (cells hitting the same sets) and the sets over them, reduced.

    ``weight`` is each class's cheapest cost, ``cheapest`` its cells of that cost, ``rows`` the
    sets as bitmasks over classes with every set that contains another dropped; ``greedy`` and
    ``greedy_cost`` the weighted greedy cover, ``degree`` the most sets one class hits, and
    ``lower`` the packing lower bound.
    """

    weight: list[float]
    cheapest: list[list[Hashable]]
    rows: list[int]
    greedy: list[int]
    greedy_cost: float
    degree: int
    lower: float

    @classmethod
    def of(
        cls, cells: Sequence[Hashable], rows: Sequence[int], cost_of: Mapping[Hashable, float]
    ) -> _Classes:
        profile: dict[int, list[Hashable]] = {}
        for k, c in enumerate(cells):
            mask = sum(1 << r for r, row in enumerate(rows) if row >> k & 1)
            if mask:
                profile.setdefault(mask, []).append(c)
        classes = list(profile.values())
        weight = [min(cost_of[c] for c in members) for members in classes]
        cheapest = [[c for c in m if cost_of[c] <= w + _EPS] for m, w in zip(classes, weight)]
        masks = list(profile)
        class_rows = sorted(
            {sum(1 << j for j, m in enumerate(masks) if m >> r & 1) for r in range(len(rows))},
            key=lambda m: (m.bit_count(), m),
        )
        reduced: list[int] = []
        for r in class_rows:
            if not any(s & r == s for s in reduced):
                reduced.append(r)
        greedy, greedy_cost = _greedy(reduced, weight)
        degree = max(sum(1 for r in reduced if r >> j & 1) for j in range(len(classes)))
        lower = _packing_bound(reduced, (1 << len(classes)) - 1, weight)
        return cls(weight, cheapest, reduced, greedy, greedy_cost, degree, lower)


def _approximation(
    classes: _Classes,
    milp: tuple[list[int], float, float, bool, bool] | None,
    index: Mapping[Hashable, int],
    max_nodes: int,
    milp_seconds: float,
    nodes: int,
    n_sets: int,
) -> HittingSets:
    """The greedy cover, or the integer program's incumbent where cheaper, labelled with its
    guarantee and a proven lower bound."""
    cols, cost = classes.greedy, classes.greedy_cost
    if milp is not None and milp[0] and milp[1] < cost - _EPS:
        cols, cost = _bits(milp[0][0]), milp[1]
    bound = max(classes.lower, milp[2] if milp else 0.0)
    degree = classes.degree
    guarantee = (
        f"greedy cover within a factor H({degree}) = {_harmonic(degree):.3f} of "
        f"the minimum"
        + ("" if milp is None else f"; integer program stopped after {milp_seconds:g} s")
        + f"; the minimum is at least {bound:g}"
    )
    solution = tuple(sorted((classes.cheapest[j][0] for j in cols), key=index.__getitem__))
    return HittingSets(
        cost,
        len(solution),
        (solution,),
        1,
        False,
        f"approximation (branch and bound stopped after {max_nodes} nodes)",
        bound,
        guarantee,
        nodes,
        len(classes.weight),
        n_sets,
        count_complete=False,
    )


def _expand(
    chosen_sets: Sequence[int],
    cheapest: Sequence[Sequence[Hashable]],
    index: Mapping[Hashable, int],
    max_solutions: int,
) -> tuple[list[tuple[Hashable, ...]], int]:
    """Optimal class sets as cell sets: each class replaced by each of its cheapest cells.

    Returns up to ``max_solutions`` of them in the cells' order, and how many there are.
    """
    expanded: list[tuple[Hashable, ...]] = []
    count = 0
    for chosen in chosen_sets:
        options = [cheapest[j] for j in _bits(chosen)]
        n = 1
        for o in options:
            n *= len(o)
        count += n
        room = max_solutions - len(expanded)
        for combo in islice(product(*options), max(room, 0)):
            expanded.append(tuple(sorted(combo, key=index.__getitem__)))
    expanded.sort(key=lambda s: [index[c] for c in s])
    return expanded, count


def _milp(
    rows: list[int], weight: list[float], max_solutions: int, seconds: float
) -> tuple[list[int], float, float, bool, bool] | None:
    """Optimal class sets by integer programming: (sets, optimum, lower bound, proven, all found).

    Returns ``None`` when scipy's ``milp`` is unavailable. Each optimal set found is cut off
    (``sum of its classes ≤ size − 1``) and the program re-solved, until the optimum rises (every
    optimal set found) or ``max_solutions`` sets are in hand.
    """
    try:
        import numpy as np
        from scipy.optimize import Bounds, LinearConstraint, milp
    except ImportError:  # pragma: no cover - scipy is a dependency; keep the fallback honest
        return None
    k = len(weight)
    a = np.array([[r >> j & 1 for j in range(k)] for r in rows], dtype=float)
    constraints = [LinearConstraint(a, lb=1, ub=np.inf)]
    c = np.array(weight)
    found: list[int] = []
    best = lower = float("inf")
    while len(found) < max_solutions:
        res = milp(
            c,
            constraints=constraints,
            integrality=np.ones(k),
            bounds=Bounds(0, 1),
            options={"time_limit": seconds},
        )
        if res.status != 0 or res.x is None:
            if not found:
                bound = getattr(res, "mip_dual_bound", None)
                inc = [] if res.x is None else [sum(1 << j for j in range(k) if res.x[j] > 0.5)]
                fun = float("inf") if res.x is None else float(res.fun)
                return inc, fun, float(bound) if bound is not None else 0.0, False, False
            return found, best, best, True, False
        chosen = sum(1 << j for j in range(k) if res.x[j] > 0.5)
        value = sum(weight[j] for j in _bits(chosen))  # exact, unlike the solver's float
        if found and value > best + _EPS:
            return found, best, best, True, True
        found.append(chosen)
        best = min(best, value)
        lower = best
        row = np.array([chosen >> j & 1 for j in range(k)], dtype=float)
        constraints.append(LinearConstraint(row, lb=-np.inf, ub=row.sum() - 1))
    return found, best, lower, True, False


def _greedy(rows: list[int], weight: list[float]) -> tuple[list[int], float]:
    """Weighted greedy set cover: repeatedly the class with the least cost per newly hit set."""
    uncovered = list(rows)
    chosen: list[int] = []
    total = 0.0
    while uncovered:
        best_j, best_ratio = -1, float("inf")
        for j in range(len(weight)):
            hits = sum(1 for r in uncovered if r >> j & 1)
            if hits and weight[j] / hits < best_ratio - _EPS:
                best_j, best_ratio = j, weight[j] / hits
        chosen.append(best_j)
        total += weight[best_j]
        uncovered = [r for r in uncovered if not r >> best_j & 1]
    return chosen, total


def _packing_bound(rows: list[int], allowed: int, weight: list[float]) -> float:
    """Pairwise disjoint sets each need their own class: sum of their cheapest classes."""
    used, bound = 0, 0.0
    for r in sorted(rows, key=lambda m: (m & allowed).bit_count()):
        cand = r & allowed
        if cand and not cand & used:
            used |= cand
            bound += min(weight[j] for j in _bits(cand))
    return bound


class _Search:
    """Branch and bound collecting every optimal set of classes (as bitmasks)."""

    def __init__(self, weight: list[float], max_nodes: int, upper: float) -> None:
        self.weight = weight
        self.max_nodes = max_nodes
        self.best = upper
        self.solutions: list[int] = []
        self.nodes = 0

    def run(self, chosen: int, cost: float, uncovered: list[int], allowed: int) -> None:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise _Budget
        if not uncovered:
            if cost < self.best - _EPS:
                self.best, self.solutions = cost, [chosen]
            elif cost <= self.best + _EPS:
                self.solutions.append(chosen)
            return
        if cost + _packing_bound(uncovered, allowed, self.weight) > self.best + _EPS:
            return
        row = min(uncovered, key=lambda m: ((m & allowed).bit_count(), m))
        for j in sorted(_bits(row & allowed), key=lambda j: (self.weight[j], j)):
            self.run(
                chosen | 1 << j,
                cost + self.weight[j],
                [r for r in uncovered if not r >> j & 1],
                allowed,
            )
            allowed &= ~(1 << j)
