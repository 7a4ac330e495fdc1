"""The identifiability audit of a finite policy class: one call, one exact, JSON-able result.

``audit(observations, estimand, support=..., components=..., costs=...)`` answers:

* on the support: the equivalence classes, whether the estimand is point-identified, and each
  collision with a witness cell (from the whole universe of observed cells) that separates it;
* with named components: the lattice of component subsets and the leave-one-out table;
* over the universe: the minimum identifying supports — every minimum hitting set of the
  cross-estimand distinguishing sets, by cell count and, with costs, by total cost.

A stochastic mixture of policies is identified only up to its equivalence class: policies in one
class respond identically on the support, so no data on it can apportion weight among them. The
result says so (:attr:`AuditResult.mixture_note`) rather than reporting mixture weights.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_competence.audit._components import (
    LATTICE_LIMIT,
    Components,
    LatticeRow,
    LeaveOneOut,
    lattice,
    leave_one_out,
)
from pytest_competence.audit._core import Collision, Observations, check_support
from pytest_competence.audit._hitting import MAX_NODES, HittingSets, minimum_hitting_sets

__all__ = ["AuditResult", "audit"]


@dataclass(frozen=True)
class AuditResult:
    """Everything :func:`audit` found; ``to_dict`` gives the JSON form (cells as strings)."""

    policies: tuple[str, ...]
    estimand: Mapping[str, Hashable]
    support: tuple[Hashable, ...]
    classes: tuple[tuple[str, ...], ...]
    collisions: tuple[Collision, ...]
    lattice: tuple[LatticeRow, ...] | None
    lattice_note: str
    leave_one_out: tuple[LeaveOneOut, ...]
    minimum: HittingSets
    minimum_cost: HittingSets | None
    universe: int

    @property
    def identified(self) -> bool:
        """Point-identified on the support: no cross-estimand pair is equivalent there."""
        return not self.collisions

    @property
    def mixture_note(self) -> str:
        """What a stochastic mixture of these policies can be identified up to."""
        shared = [c for c in self.classes if len(c) > 1]
        if not shared:
            return (
                "every policy is its own class on this support, so a mixture's components "
                "are distinguishable; the audit still reports classes, not mixture weights"
            )
        listed = "; ".join("{" + ", ".join(c) + "}" for c in shared)
        return (
            "a stochastic mixture of these policies is identified only up to its "
            f"equivalence class on this support; weights within {listed} are not identified"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "policies": list(self.policies),
            "estimand": {p: self.estimand[p] for p in self.policies},
            "support": [str(c) for c in self.support],
            "universe": self.universe,
            "identified": self.identified,
            "classes": [list(c) for c in self.classes],
            "collisions": [c.to_dict() for c in self.collisions],
            "mixture_note": self.mixture_note,
            "lattice": None if self.lattice is None else [r.to_dict() for r in self.lattice],
            "lattice_note": self.lattice_note,
            "leave_one_out": [r.to_dict() for r in self.leave_one_out],
            "minimum_support": self.minimum.to_dict(),
            "minimum_cost_support": None
            if self.minimum_cost is None
            else self.minimum_cost.to_dict(),
        }


def audit(
    obs: Observations,
    estimand: Mapping[str, Hashable],
    *,
    support: Collection[Hashable] | None = None,
    components: Components | None = None,
    costs: Mapping[Hashable, float] | None = None,
    lattice_limit: int = LATTICE_LIMIT,
    max_solutions: int = 100,
    max_nodes: int = MAX_NODES,
) -> AuditResult:
    """Audit ``obs`` for ``estimand`` (policy → value) on a support of its cells.

    The support is ``support`` if given, else every component's cells together (with
    ``components``), else every observed cell. Minimum supports range over all observed cells.
    """
    if support is None and components is not None:
        support = [c for c in components.support(components.names) if c in obs.index]
    mask = check_support(obs, support)
    rows: tuple[LatticeRow, ...] | None = None
    note = ""
    loo: tuple[LeaveOneOut, ...] = ()
    if components is not None:
        loo = tuple(leave_one_out(obs, estimand, components))
        if len(components.names) <= lattice_limit:
            rows = tuple(lattice(obs, estimand, components, limit=lattice_limit))
        else:
            note = (
                f"lattice left out: {len(components.names)} components make "
                f"{2 ** len(components.names)} subsets (limit {lattice_limit}); the "
                f"leave-one-out table is complete"
            )
    pairs = obs.cross_pairs(estimand)
    sets = [obs.distinguishing(a, b) for a, b in pairs]
    minimum = minimum_hitting_sets(
        sets, order=obs.cells, max_solutions=max_solutions, max_nodes=max_nodes
    )
    by_cost = None
    if costs is not None:
        by_cost = minimum_hitting_sets(
            sets, order=obs.cells, costs=costs, max_solutions=max_solutions, max_nodes=max_nodes
        )
    return AuditResult(
        obs.policies,
        dict(estimand),
        obs.cells_of(mask),
        tuple(obs.classes(mask)),
        tuple(obs.collisions(estimand, mask)),
        rows,
        note,
        loo,
        minimum,
        by_cost,
        len(obs.cells),
    )
