"""Observational equivalence, collisions and witnesses of a finite policy class on a support.

A *policy* is a deterministic behaviour; its *response* in a *cell* is whatever the suite
observes there (an answer, or the tuple of answers on the cell's instances). Two policies are
*equivalent* on a support when their responses agree in every cell of it. The *estimand* (e.g.
1 for "competent", 0 for a shortcut) is point-identified on a support exactly when no two
policies with different estimand values are equivalent there; each such pair is a *collision*,
and a cell where the two differ is a *witness* that would separate them.

Everything is exact and deterministic: cells keep the order they were given in, policies the
order of the mapping, and equality is on the responses themselves (no hashing of floats).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Collision", "Observations", "observe", "observe_models"]


@dataclass(frozen=True)
class Collision:
    """Two policies with different estimand values that a support cannot tell apart.

    ``witness`` is the first cell (in the observations' order) where they differ, or ``None``
    when they agree on every observed cell: then no suite built from these cells separates them.
    """

    first: str
    second: str
    values: tuple[Hashable, Hashable]
    witness: Hashable | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "policies": [self.first, self.second],
            "estimand": list(self.values),
            "witness": None if self.witness is None else str(self.witness),
        }


class Observations:
    """Each policy's response in each cell of a universe of cells.

    Build it with :func:`observe` (policies as functions of a cell) or :func:`observe_models`
    (models run over a design). Supports are any subsets of :attr:`cells`; internally a support is
    a bitmask over the cells, and each policy pair carries the mask of cells where they differ.
    """

    def __init__(self, cells: Sequence[Hashable], responses: Mapping[str, Sequence[Hashable]]):
        self.cells = tuple(cells)
        if len(set(self.cells)) != len(self.cells):
            raise ValueError("Expected distinct cells, but cells= repeats one; give each once")
        if not responses:
            raise ValueError("Expected at least one policy in responses=, but got none")
        self.policies = tuple(responses)
        self.responses = {p: tuple(r) for p, r in responses.items()}
        for p, r in self.responses.items():
            if len(r) != len(self.cells):
                raise ValueError(
                    f"Policy {p!r} has {len(r)} responses for {len(self.cells)} "
                    f"cells; give one response per cell"
                )
        self.index = {c: k for k, c in enumerate(self.cells)}
        self._diff: dict[tuple[str, str], int] = {}

    def __repr__(self) -> str:
        return f"Observations({len(self.policies)} policies × {len(self.cells)} cells)"

    def mask(self, support: Iterable[Hashable]) -> int:
        """The bitmask of a support; unknown cells are an error naming the cell."""
        out = 0
        for c in support:
            try:
                out |= 1 << self.index[c]
            except KeyError:
                raise ValueError(f"Cell {c!r} of the support is not an observed cell") from None
        return out

    def cells_of(self, mask: int) -> tuple[Hashable, ...]:
        return tuple(c for k, c in enumerate(self.cells) if mask >> k & 1)

    def differ(self, a: str, b: str) -> int:
        """The mask of cells where policies ``a`` and ``b`` respond differently."""
        key = (a, b) if a <= b else (b, a)
        if key not in self._diff:
            ra, rb = self.responses[a], self.responses[b]
            self._diff[key] = sum(1 << k for k in range(len(ra)) if ra[k] != rb[k])
        return self._diff[key]

    def classes(self, support: int) -> list[tuple[str, ...]]:
        """Equivalence classes of the policies on the support, in policy order."""
        out: list[list[str]] = []
        for p in self.policies:
            for cls in out:
                if not self.differ(cls[0], p) & support:
                    cls.append(p)
                    break
            else:
                out.append([p])
        return [tuple(c) for c in out]

    def cross_pairs(self, estimand: Mapping[str, Hashable]) -> list[tuple[str, str]]:
        """Every pair of policies with different estimand values, in policy order."""
        missing = [p for p in self.policies if p not in estimand]
        if missing:
            raise ValueError(
                f"estimand= has no value for policy {missing[0]!r}; give every "
                f"policy one, e.g. 1 for competent and 0 for a shortcut"
            )
        ps = self.policies
        return [(a, b) for i, a in enumerate(ps) for b in ps[i + 1 :] if estimand[a] != estimand[b]]

    def collisions(self, estimand: Mapping[str, Hashable], support: int) -> list[Collision]:
        """The cross-estimand pairs equivalent on the support, each with a witness if any."""
        out = []
        for a, b in self.cross_pairs(estimand):
            d = self.differ(a, b)
            if not d & support:
                witness = self.cells[(d & -d).bit_length() - 1] if d else None
                out.append(Collision(a, b, (estimand[a], estimand[b]), witness))
        return out

    def distinguishing(self, a: str, b: str) -> tuple[Hashable, ...]:
        """Every cell where ``a`` and ``b`` differ."""
        return self.cells_of(self.differ(a, b))


def observe(
    policies: Mapping[str, Callable[[Any], Hashable]], cells: Sequence[Hashable]
) -> Observations:
    """Observations of policies given as plain functions from a cell to a response."""
    return Observations(cells, {name: [f(c) for c in cells] for name, f in policies.items()})


def observe_models(
    models: Mapping[str, Any], prompts: Sequence[Any], cell_of: Callable[[Any], Hashable]
) -> Observations:
    """Observations of models run over a design: one batched ``generate`` call per model.

    A policy's response in a cell is the tuple of its raw answers on that cell's prompts, in the
    design's order; ``cell_of(prompt)`` names the cell of each prompt.
    """
    groups: dict[Hashable, list[int]] = {}
    for k, p in enumerate(prompts):
        groups.setdefault(cell_of(p), []).append(k)
    cells = list(groups)
    responses = {}
    for name, model in models.items():
        answers = list(model.generate(list(prompts)))
        if len(answers) != len(prompts):
            raise ValueError(
                f"Model {name!r} returned {len(answers)} answers for "
                f"{len(prompts)} prompts; a model answers every prompt"
            )
        responses[name] = [tuple(answers[k] for k in groups[c]) for c in cells]
    return Observations(cells, responses)


def check_support(obs: Observations, support: Collection[Hashable] | None) -> int:
    """The mask of ``support`` (default: every observed cell)."""
    return (1 << len(obs.cells)) - 1 if support is None else obs.mask(support)
