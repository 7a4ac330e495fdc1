"""The ordering family as an audit universe: cells, components and the reference-policy zoo.

A cell is level × presentation × query cell (direction/gold) × vocabulary × query kind
(endpoints, or interior at distance d) × names line. A policy's response in a cell is the tuple
of its answers on that cell's instances of a small seeded design. Each value of each dimension
is either always observed or brought in by a named *component* ("converse rewording", "interior
queries", "second vocabulary", "shuffled names line", "larger n"); a cell needs the components
of all its values (:meth:`Components.factorial`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, NamedTuple

from .components import Components
from .core import Observations, observe_models

__all__ = ["OrderingCell", "OrderingUniverse", "ordering_universe", "reference_zoo"]


class OrderingCell(NamedTuple):
    """One cell of the ordering universe (sorts and prints stably)."""

    n: int
    presentation: str
    query_cell: str  # "forward/yes", …: the phrase asked and the gold answer
    vocabulary: str
    query: str  # "endpoints" or "distance=d"
    names_line: str

    def __str__(self) -> str:
        return (f"n={self.n} {self.presentation} {self.query_cell} {self.vocabulary} "
                f"{self.query} names_line={self.names_line}")


class OrderingUniverse(NamedTuple):
    """Observations of a policy zoo over an ordering universe, and how components build it."""

    observations: Observations
    components: Components
    costs: dict[Hashable, float]  # characters of prompt text in the cell (≈ 4 per token)
    prompts: int


Choice = Mapping[Any, "str | None"]  # a dimension's value → the component bringing it (None: base)


def _cell(prompt: Any) -> OrderingCell:
    p = prompt.params
    return OrderingCell(p["n"], prompt.presentation, p["cell"], p["vocabulary"], p["query"],
                        p["names_line"])


def ordering_universe(
    family: Any,
    policies: Mapping[str, Any],
    *,
    levels: Choice,
    presentations: Choice,
    queries: Choice | None = None,
    vocabularies: Choice | None = None,
    names_lines: Choice | None = None,
    pairs: int = 8,
    seed: int = 1,
) -> OrderingUniverse:
    """Run ``policies`` (name → model) over every configuration of the dimensions.

    Each dimension maps its values to the component that brings them (``None``: observed in every
    support). ``queries`` keys are distances (``None``: endpoint queries); the defaults keep the
    family's own query kind, vocabulary and names line. Levels an interior distance cannot query
    (n < d + 3) are skipped for that configuration. One batched call per policy.
    """
    queries = queries if queries is not None else {family.distance: None}
    vocabularies = vocabularies if vocabularies is not None else {family.vocabulary.name: None}
    names_lines = names_lines if names_lines is not None else {family.names_line: None}
    if not levels or not presentations:
        raise ValueError("Expected at least one level in levels= and one presentation in "
                         "presentations=, e.g. levels={8: None}, presentations={'original': None}")
    prompts = []
    requires: dict[Hashable, frozenset[str]] = {}
    for distance, q_comp in queries.items():
        for voc, v_comp in vocabularies.items():
            for line, l_comp in names_lines.items():
                fam = family.with_options(distance=distance, vocabulary=voc, names_line=line)
                ok = [n for n in levels if n >= fam.min_n]
                if not ok:
                    continue
                items = fam.design(levels=ok, pairs=pairs, seed=seed,
                                   presentations=list(presentations))
                for item in items:
                    for prompt in item.prompts:
                        cell = _cell(prompt)
                        if cell not in requires:
                            need = (levels[cell.n], presentations[prompt.presentation], q_comp,
                                    v_comp, l_comp)
                            requires[cell] = frozenset(c for c in need if c is not None)
                        prompts.append(prompt)
    obs = observe_models(policies, prompts, _cell)
    names = [c for d in (levels, presentations, queries, vocabularies, names_lines)
             for c in d.values() if c is not None]
    costs: dict[Hashable, float] = {}
    for prompt in prompts:
        cell = _cell(prompt)
        costs[cell] = costs.get(cell, 0.0) + len(prompt.text)
    comps = Components.factorial({c: requires[c] for c in obs.cells},
                                 names=list(dict.fromkeys(names)))
    return OrderingUniverse(obs, comps, costs, len(prompts))


def reference_zoo(levels: Sequence[int]) -> tuple[dict[str, Any], dict[str, int]]:
    """The reference policies as models, and their estimand (1 competent, 0 not).

    The zoo: the ideal solver; the constant, coin and noisy policies; the endpoint shortcut, the
    forward reader, the names-order reader; and one threshold policy per declared level (ideal
    up to that size, wrong on reworded prompts beyond it).
    """
    from pytest_competence.models.reference import reference_policy

    names = ["ideal", "always-yes", "always-no", "coin", "noisy?p=0.1", "endpoint",
             "forward-reader", "names-order", *(f"threshold?n={n}" for n in sorted(set(levels)))]
    models = {f"ref:{n}": reference_policy(n, f"ref:{n}") for n in names}
    return models, {name: int(name == "ref:ideal") for name in models}
