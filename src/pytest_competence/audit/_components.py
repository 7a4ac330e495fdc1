"""Supports built from named components: the lattice of component subsets and leave-one-out.

Two ways of naming what a component adds, both exact:

* :meth:`Components.union` — each component is a set of cells; a subset of components observes
  the union of their cells (plus the always-observed ``base``).
* :meth:`Components.factorial` — each cell *requires* a set of components (a cell of the
  converse rewording at n = 64 requires both "rewording" and "n=64"); a subset observes every
  cell whose requirements it holds. This is how a design's factors combine.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from pytest_competence.audit._core import Collision, Observations

__all__ = ["LATTICE_LIMIT", "Components", "LatticeRow", "LeaveOneOut", "lattice", "leave_one_out"]

#: The lattice enumerates 2^k subsets; past this many components it is left out (and said so).
LATTICE_LIMIT = 12


@dataclass(frozen=True)
class Components:
    """Named components of a support; see the module docstring for the two semantics."""

    names: tuple[str, ...]
    requires: Mapping[Hashable, frozenset[str]] = field(default_factory=dict)
    provides: Mapping[str, frozenset[Hashable]] = field(default_factory=dict)
    base: frozenset[Hashable] = frozenset()
    mode: str = "union"

    @classmethod
    def union(
        cls, components: Mapping[str, Collection[Hashable]], base: Collection[Hashable] = ()
    ) -> Components:
        """Component name → its cells; a subset observes ``base`` and the union of its cells."""
        if not components:
            raise ValueError("Expected at least one component in components=, but got none")
        return cls(
            tuple(components),
            provides={k: frozenset(v) for k, v in components.items()},
            base=frozenset(base),
            mode="union",
        )

    @classmethod
    def factorial(
        cls, requires: Mapping[Hashable, Collection[str]], names: Sequence[str] | None = None
    ) -> Components:
        """Cell → the components it needs; a subset observes the cells whose needs it holds."""
        found = list(dict.fromkeys(n for need in requires.values() for n in need))
        order = tuple(names) if names is not None else tuple(found)
        unknown = [n for n in found if n not in order]
        if unknown:
            raise ValueError(f"Cells require component {unknown[0]!r}, which names= lacks")
        return cls(order, requires={c: frozenset(v) for c, v in requires.items()}, mode="factorial")

    def support(self, subset: Collection[str]) -> frozenset[Hashable]:
        """The cells observed with exactly the components in ``subset``."""
        chosen = frozenset(subset)
        unknown = chosen - set(self.names)
        if unknown:
            raise ValueError(
                f"Unknown component {min(unknown)!r}; expected one of {', '.join(self.names)}"
            )
        if self.mode == "union":
            out = set(self.base)
            for name in chosen:
                out |= self.provides[name]
            return frozenset(out)
        return frozenset(c for c, need in self.requires.items() if need <= chosen)


@dataclass(frozen=True)
class LatticeRow:
    """One subset of components: its cells, classes and collisions (each with a witness)."""

    components: tuple[str, ...]
    cells: int
    classes: tuple[tuple[str, ...], ...]
    collisions: tuple[Collision, ...]

    @property
    def identified(self) -> bool:
        return not self.collisions

    def to_dict(self) -> dict[str, Any]:
        return {
            "components": list(self.components),
            "cells": self.cells,
            "classes": [list(c) for c in self.classes],
            "identified": self.identified,
            "collisions": [c.to_dict() for c in self.collisions],
        }


@dataclass(frozen=True)
class LeaveOneOut:
    """The full support without one component: the collisions that re-appear."""

    component: str
    collisions: tuple[Collision, ...]
    created: tuple[Collision, ...]  # collisions the full support does not have

    @property
    def essential(self) -> bool:
        return bool(self.created)

    def to_dict(self) -> dict[str, Any]:
        return {
            "component": self.component,
            "essential": self.essential,
            "collisions": [c.to_dict() for c in self.collisions],
            "created": [c.to_dict() for c in self.created],
        }


def _row(
    obs: Observations, estimand: Mapping[str, Hashable], comps: Components, subset: Sequence[str]
) -> LatticeRow:
    cells = [c for c in comps.support(subset) if c in obs.index]
    mask = obs.mask(cells)
    return LatticeRow(
        tuple(subset), len(cells), tuple(obs.classes(mask)), tuple(obs.collisions(estimand, mask))
    )


def lattice(
    obs: Observations,
    estimand: Mapping[str, Hashable],
    comps: Components,
    *,
    limit: int = LATTICE_LIMIT,
) -> list[LatticeRow]:
    """Every subset of components, smallest first (components in their declared order).

    Raises ``ValueError`` past ``limit`` components: 2^k subsets; raise ``limit`` knowingly.
    """
    k = len(comps.names)
    if k > limit:
        raise ValueError(
            f"{k} components make {2**k} subsets, more than limit={limit} allows; "
            f"pass limit={k} to enumerate them anyway"
        )
    return [
        _row(obs, estimand, comps, subset)
        for size in range(k + 1)
        for subset in combinations(comps.names, size)
    ]


def minimal_identifying(rows: Sequence[LatticeRow]) -> list[tuple[str, ...]]:
    """The identifying subsets none of whose proper subsets identifies (from a full lattice)."""
    good = [frozenset(r.components) for r in rows if r.identified]
    return [
        r.components
        for r in rows
        if r.identified and not any(g < frozenset(r.components) for g in good)
    ]


def leave_one_out(
    obs: Observations, estimand: Mapping[str, Hashable], comps: Components
) -> list[LeaveOneOut]:
    """For each component, the collisions of the full support without it.

    A component is *essential* when removing it creates a collision the full support lacks.
    """
    full = _row(obs, estimand, comps, comps.names)
    have = {(c.first, c.second) for c in full.collisions}
    out = []
    for name in comps.names:
        row = _row(obs, estimand, comps, [n for n in comps.names if n != name])
        created = tuple(c for c in row.collisions if (c.first, c.second) not in have)
        out.append(LeaveOneOut(name, row.collisions, created))
    return out
