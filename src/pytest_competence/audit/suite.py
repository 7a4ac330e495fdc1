"""Audit one declared competence suite against the reference-policy zoo: mutation testing.

The declared design (levels, presentations, family options, seed) is split into components —
one per level and one per presentation — and widened by candidate components the suite does not
declare: converse rewording (if absent), interior queries (or endpoint queries), a second
vocabulary, a shuffled names line (if the suite uses the chain-ordered one) and a larger n. The
zoo runs over every cell (reference policies read prompt text: no model is called). Then:

* the *mutation score*: the non-competent policies the declared cells catch (that respond
  differently from the ideal solver somewhere), out of all of them; the survivors each get a
  witness cell, from the candidate components, that would catch them;
* the leave-one-out table over the declared components (which are essential);
* the minimum identifying supports over declared and candidate cells.

Responses are taken on ``pairs`` instances per level (default 8, the first instances of the
declared seed's design): the policies are deterministic, and what the audit asks is which
*cells* separate them, not how many instances.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from .api import audit
from .ordering import ordering_universe, reference_zoo

__all__ = ["AUDIT_PAIRS", "audit_spec", "candidate_universe", "summary_lines",
           "witness"]

AUDIT_PAIRS = 8
_POOL = 2500


def _second_vocabulary(name: str) -> str:
    return "left_right" if name != "left_right" else "front_behind"


def candidate_universe(family: Any, policies: Any, *, levels: Any, presentations: Any,
                       pairs: int, seed: int) -> Any:
    """``policies`` over a declared ordering design widened by the candidate components.

    Declared levels and presentations are the components ``n=…`` and ``presentation=…``; the
    candidates are those of the module docstring. Returns an
    :class:`~.ordering.OrderingUniverse`.
    """
    levels_: dict[int, str | None] = {n: f"n={n}" for n in levels}
    larger = 2 * max(levels)
    if larger + family._n_distractors(larger) <= _POOL or family.names == "random":
        levels_[larger] = f"larger n (n={larger})"
    presentations_: dict[str, str | None] = {p: f"presentation={p}" for p in presentations}
    if "equivalent" not in presentations_:
        presentations_["equivalent"] = "converse rewording"
    queries: dict[int | None, str | None] = {family.distance: None}
    if family.distance is None:
        queries[2] = "interior queries (distance=2)"
    else:
        queries[None] = "endpoint queries"
    second = _second_vocabulary(family.vocabulary.name)
    vocabularies = {family.vocabulary.name: None, second: f"second vocabulary ({second})"}
    names_lines: dict[str, str | None] = {family.names_line: None}
    if family.names_line == "chain":
        names_lines["shuffled"] = "shuffled names line"
    return ordering_universe(
        family, policies, levels=levels_, presentations=presentations_, queries=queries,
        vocabularies=vocabularies, names_lines=names_lines, pairs=pairs, seed=seed,
    )


def audit_spec(spec: Any, *, pairs: int = AUDIT_PAIRS) -> dict[str, Any]:
    """The audit of a :class:`~pytest_competence.spec.CompetenceSpec`, as a JSON-able dict."""
    from pytest_competence.strategies import Ordering

    family = spec.family
    if not isinstance(family, Ordering):
        return {"family": repr(family), "auditable": False,
                "note": "only the ordering family has an audit universe so far"}
    models, estimand = reference_zoo(spec.levels)
    universe = candidate_universe(family, models, levels=spec.levels,
                                  presentations=spec.presentations,
                                  pairs=min(pairs, spec.pairs), seed=spec.seed)
    obs, comps = universe.observations, universe.components
    declared = [c for c in comps.names if c.startswith(("n=", "presentation="))]
    declared_cells = [c for c in comps.support(declared) if c in obs.index]
    result = audit(obs, estimand, support=declared_cells, costs=universe.costs)
    loo = _declared_leave_one_out(obs, estimand, comps, declared)
    ideal = "ref:ideal"
    shortcuts = [p for p in obs.policies if p != ideal]
    mask = obs.mask(declared_cells)
    survivors = []
    for p in shortcuts:
        if not obs.differ(ideal, p) & mask:
            survivors.append({"policy": p, **witness(universe, ideal, p, declared)})
    caught = [p for p in shortcuts if obs.differ(ideal, p) & mask]
    candidates = [c for c in comps.names if c not in declared]
    lattice_rows = []
    for size in range(len(candidates) + 1):
        for added in combinations(candidates, size):
            cells = [c for c in comps.support([*declared, *added]) if c in obs.index]
            sub = obs.mask(cells)
            lattice_rows.append({
                "added": list(added), "cells": len(cells), "classes": len(obs.classes(sub)),
                "collisions": [c.to_dict() for c in obs.collisions(estimand, sub)],
            })
    doc = result.to_dict()
    return {
        "family": repr(family),
        "auditable": True,
        "pairs": min(pairs, spec.pairs),
        "prompts": universe.prompts,
        "components": list(comps.names),
        "declared_components": declared,
        "caught": caught,
        "survivors": survivors,
        "mutation_score": len(caught) / len(shortcuts),
        "identified": doc["identified"],
        "classes": doc["classes"],
        "collisions": doc["collisions"],
        "mixture_note": doc["mixture_note"],
        "leave_one_out": loo,
        "lattice": lattice_rows,
        "minimum_support": doc["minimum_support"],
        "minimum_cost_support": doc["minimum_cost_support"],
    }


def witness(universe: Any, first: str, second: str, declared: list[str]) -> dict[str, Any]:
    """The cell of ``universe`` that separates two policies with the fewest components added to
    ``declared`` (then the fewest prompt characters): ``{"witness": cell, "needs": [...]}``,
    ``{"witness": None, "needs": []}`` when they agree on every cell."""
    obs, comps = universe.observations, universe.components
    cells = obs.cells_of(obs.differ(first, second))
    if not cells:
        return {"witness": None, "needs": []}
    best = min(cells, key=lambda c: (len(comps.requires[c] - set(declared)), universe.costs[c]))
    return {"witness": str(best), "needs": sorted(comps.requires[best] - set(declared))}


def _declared_leave_one_out(obs: Any, estimand: dict[str, int], comps: Any,
                            declared: list[str]) -> list[dict[str, Any]]:
    def collisions(names: list[str]) -> set[tuple[str, str]]:
        mask = obs.mask(c for c in comps.support(names) if c in obs.index)
        return {(c.first, c.second) for c in obs.collisions(estimand, mask)}

    full = collisions(declared)
    out = []
    for name in declared:
        created = sorted(collisions([n for n in declared if n != name]) - full)
        out.append({"component": name, "essential": bool(created),
                    "created": [list(pair) for pair in created]})
    return out


def summary_lines(test: str, doc: dict[str, Any]) -> list[str]:
    """Terminal lines for one audited test (see :func:`audit_spec`)."""
    if not doc.get("auditable"):
        return [f"{test}  {doc['family']}: not audited ({doc['note']})"]
    total = len(doc["caught"]) + len(doc["survivors"])
    lines = [f"{test}  {doc['family']}  mutation score {len(doc['caught'])}/{total} "
             f"({doc['pairs']} instances per level, {doc['prompts']} prompts per policy)"]
    if doc["survivors"]:
        lines.append("  survive: " + ", ".join(s["policy"] for s in doc["survivors"]))
    for s in doc["survivors"]:
        if s["witness"] is None:
            lines.append(f"  WARNING {s['policy']} passes this suite and no candidate cell "
                         f"separates it from ref:ideal")
        else:
            lines.append(f"  WARNING {s['policy']} passes this suite while it claims competence; "
                         f"a cell that catches it: {s['witness']} (add {', '.join(s['needs'])})")
    lines.append("  lattice (the declared suite + candidate components):")
    width = max(len(", ".join(r["added"]) or "nothing") for r in doc["lattice"])
    for r in doc["lattice"]:
        left = sorted({c["policies"][1] for c in r["collisions"]})
        lines.append(f"    + {', '.join(r['added']) or 'nothing':<{width}}  {r['cells']:>4} cells "
                     f"{r['classes']:>3} classes  "
                     + ("identified" if not left else "collide with ref:ideal: " + ", ".join(left)))
    essential = [r for r in doc["leave_one_out"] if r["essential"]]
    lines.append(f"  leave one out: {len(essential)} of {len(doc['leave_one_out'])} declared "
                 f"components essential" + (":" if essential else ""))
    for r in essential:
        prevented = sorted({p for pair in r["created"] for p in pair if p != "ref:ideal"})
        lines.append(f"    {r['component']}: without it {', '.join(prevented)} pass(es)")
    m = doc["minimum_support"]
    if m["uncoverable"]:
        lines.append(f"  minimum identifying support: none ({len(m['uncoverable'])} pairs agree "
                     f"on every candidate cell)")
    else:
        kind = "exact" if m["exact"] else m["method"]
        lines.append(f"  minimum identifying support: {m['size']} cells ({kind}; {m['count']} "
                     f"minimum sets), e.g.")
        lines.extend(f"    {cell}" for cell in m["solutions"][0])
        c = doc["minimum_cost_support"]
        if c is not None and c["solutions"]:
            lines.append(f"  cheapest identifying support: {c['size']} cells, "
                         f"{c['cost']:,.0f} prompt characters ({c['count']} such sets), e.g.")
            lines.extend(f"    {cell}" for cell in c["solutions"][0])
    return lines
