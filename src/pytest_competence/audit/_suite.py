"""Audit one declared competence suite, of any family, against its family's policies.

The declared design is split into components and widened by the family's audit components
(:mod:`._universe`); the family's reference policies (:func:`~._universe.family_zoo`: the ideal
solver and its shortcuts) run over every cell, reading prompt text, so no model is called. Then:

* the *mutation score*: the shortcuts the declared cells catch (answering differently from
  ``ref:ideal`` somewhere), out of all; each survivor gets a witness cell from the candidate
  components that would catch it, with the components it needs; and per shortcut the share of
  declared instances it answers right throughout (what a floor on all-correct sees);
* a *path of supports*: classes and collisions as the declared, then the candidate components
  are added one at a time (one level and presentation factor of each kind first);
* the leave-one-out table over the declared components (which are essential), and the lattice
  of the declared suite plus every subset of the candidate components;
* the minimum identifying supports over all cells, by cells and by prompt characters.

Responses are taken on about ``pairs`` instances per level (default 8, the first of the declared
seed's design): the policies are deterministic, and the audit asks which *cells* separate them.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from pytest_competence.audit._api import audit
from pytest_competence.audit._components import LATTICE_LIMIT
from pytest_competence.audit._universe import Universe, audit_pairs, family_zoo, suite_universe

__all__ = ["AUDIT_PAIRS", "IDEAL", "audit_spec", "audit_suite", "summary_lines", "witness"]

AUDIT_PAIRS = 8
IDEAL = "ref:ideal"


def audit_spec(spec: Any, *, pairs: int = AUDIT_PAIRS) -> dict[str, Any]:
    """The audit of a :class:`~pytest_competence.engine.spec.CompetenceSpec`, as a JSON-able dict."""
    return audit_suite(
        spec.family,
        levels=list(spec.levels),
        presentations=list(spec.presentations),
        pairs=min(pairs, spec.pairs),
        most=spec.pairs,
        seed=spec.seed,
    )


def audit_suite(
    family: Any,
    *,
    levels: list[int],
    presentations: list[str],
    pairs: int = AUDIT_PAIRS,
    most: int | None = None,
    seed: int = 1,
    policies: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The audit of a declared suite of ``family`` (see the module docstring), as a dict.

    ``policies`` (name → model; it must hold ``ref:ideal``) defaults to the family's zoo.
    """
    models = policies if policies is not None else family_zoo(family.name, levels)
    pairs = audit_pairs(family, levels, presentations, seed, pairs, most or pairs)
    universe = suite_universe(
        family, models, levels=levels, presentations=presentations, pairs=pairs, seed=seed
    )
    obs, comps = universe.observations, universe.components
    estimand = {p: int(p == IDEAL) for p in obs.policies}
    declared = list(universe.declared)
    declared_cells = [c for c in comps.support(declared) if c in obs.index]
    result = audit(obs, estimand, support=declared_cells, costs=universe.costs)
    mask = obs.mask(declared_cells)
    shortcuts = [p for p in obs.policies if p != IDEAL]
    caught = [p for p in shortcuts if obs.differ(IDEAL, p) & mask]
    survivors = [
        {"policy": p, **witness(universe, IDEAL, p, declared)} for p in shortcuts if p not in caught
    ]
    doc = result.to_dict()
    return {
        "family": repr(family),
        "family_name": family.name,
        "auditable": True,
        "pairs": pairs,
        "prompts": universe.prompts,
        "components": list(comps.names),
        "declared_components": declared,
        "caught": caught,
        "survivors": survivors,
        "mutation_score": len(caught) / len(shortcuts) if shortcuts else 1.0,
        "solved": {p: universe.solved[p] for p in shortcuts if p in universe.solved},
        "identified": doc["identified"],
        "classes": doc["classes"],
        "collisions": doc["collisions"],
        "mixture_note": doc["mixture_note"],
        "path": _path(universe, estimand),
        "leave_one_out": _declared_leave_one_out(obs, estimand, comps, declared),
        "lattice": _lattice(universe, estimand),
        "lattice_note": ""
        if len(universe.candidates) <= LATTICE_LIMIT
        else (
            f"lattice left out: {len(universe.candidates)} candidate components make "
            f"{2 ** len(universe.candidates)} subsets (limit {LATTICE_LIMIT})"
        ),
        "minimum_support": doc["minimum_support"],
        "minimum_cost_support": doc["minimum_cost_support"],
    }


def _row(universe: Universe, estimand: dict[str, int], names: list[str]) -> dict[str, Any]:
    obs, comps = universe.observations, universe.components
    cells = [c for c in comps.support(names) if c in obs.index]
    sub = obs.mask(cells)
    return {
        "cells": len(cells),
        "classes": len(obs.classes(sub)),
        "collisions": [c.to_dict() for c in obs.collisions(estimand, sub)],
    }


def _lattice(universe: Universe, estimand: dict[str, int]) -> list[dict[str, Any]]:
    """The declared suite plus every subset of the candidates, smallest first."""
    found = list(universe.candidates)
    if len(found) > LATTICE_LIMIT:
        return []
    return [
        {"added": list(added), **_row(universe, estimand, [*universe.declared, *added])}
        for size in range(len(found) + 1)
        for added in combinations(found, size)
    ]


def _path(universe: Universe, estimand: dict[str, int]) -> list[dict[str, Any]]:
    """Classes and collisions as components are added one at a time: the first declared
    component of each kind (``n``, ``presentation`` or a family's factor such as ``world``),
    then the other declared ones, then the candidates."""
    firsts: dict[str, str] = {}
    for name in universe.declared:
        firsts.setdefault(name.partition("=")[0], name)
    order = [
        *firsts.values(),
        *(n for n in universe.declared if n not in firsts.values()),
        *universe.candidates,
    ]
    out = []
    obs, comps = universe.observations, universe.components
    for k, name in enumerate(order):
        row = _row(universe, estimand, order[: k + 1])
        mask = obs.mask(c for c in comps.support(order[: k + 1]) if c in obs.index)
        out.append(
            {
                "added": name,
                "declared": name in universe.declared,
                **row,
                "members": [list(c) for c in obs.classes(mask)],
            }
        )
    return out


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


def _declared_leave_one_out(
    obs: Any, estimand: dict[str, int], comps: Any, declared: list[str]
) -> list[dict[str, Any]]:
    def collisions(names: list[str]) -> set[tuple[str, str]]:
        mask = obs.mask(c for c in comps.support(names) if c in obs.index)
        return {(c.first, c.second) for c in obs.collisions(estimand, mask)}

    full = collisions(declared)
    out = []
    for name in declared:
        created = sorted(collisions([n for n in declared if n != name]) - full)
        out.append(
            {
                "component": name,
                "essential": bool(created),
                "created": [list(pair) for pair in created],
            }
        )
    return out


def summary_lines(test: str, doc: dict[str, Any]) -> list[str]:
    """Terminal lines for one audited test (see :func:`audit_spec`)."""
    if not doc.get("auditable"):
        return [f"{test}  {doc['family']}: not audited ({doc['note']})"]
    total = len(doc["caught"]) + len(doc["survivors"])
    lines = [
        f"{test}  {doc['family']}  mutation score {len(doc['caught'])}/{total} "
        f"({doc['pairs']} instances per level, {doc['prompts']} prompts per policy)"
    ]
    if doc["survivors"]:
        lines.append("  survive: " + ", ".join(s["policy"] for s in doc["survivors"]))
    for s in doc["survivors"]:
        if s["witness"] is None:
            lines.append(
                f"  WARNING {s['policy']} passes this suite and no candidate cell "
                f"separates it from ref:ideal"
            )
        else:
            lines.append(
                f"  WARNING {s['policy']} passes this suite while it claims competence; "
                f"a cell that catches it: {s['witness']} (add {', '.join(s['needs'])})"
            )
    close = [
        f"{p} {100 * share:.0f}%"
        for p, share in doc.get("solved", {}).items()
        if p in doc["caught"] and share > 0
    ]
    if close:
        lines.append("  caught, but instances it solves throughout: " + ", ".join(close))
    lines.extend(_path_lines(doc.get("path", [])))
    lines.append("  lattice (the declared suite + candidate components):")
    if not doc["lattice"]:
        lines.append(f"    {doc['lattice_note']}")
    width = max((len(", ".join(r["added"]) or "nothing") for r in doc["lattice"]), default=0)
    for r in doc["lattice"]:
        left = sorted({c["policies"][1] for c in r["collisions"]})
        lines.append(
            f"    + {', '.join(r['added']) or 'nothing':<{width}}  {r['cells']:>4} cells "
            f"{r['classes']:>3} classes  "
            + ("identified" if not left else "collide with ref:ideal: " + ", ".join(left))
        )
    essential = [r for r in doc["leave_one_out"] if r["essential"]]
    lines.append(
        f"  leave one out: {len(essential)} of {len(doc['leave_one_out'])} declared "
        f"components essential" + (":" if essential else "")
    )
    for r in essential:
        prevented = sorted({p for pair in r["created"] for p in pair if p != "ref:ideal"})
        lines.append(f"    {r['component']}: without it {', '.join(prevented)} pass(es)")
    m = doc["minimum_support"]
    if m["uncoverable"]:
        lines.append(
            f"  minimum identifying support: none ({len(m['uncoverable'])} pairs agree "
            f"on every candidate cell)"
        )
    else:
        kind = "exact" if m["exact"] else m["method"]
        lines.append(
            f"  minimum identifying support: {m['size']} cells ({kind}; {m['count']} "
            f"minimum sets), e.g."
        )
        lines.extend(f"    {cell}" for cell in m["solutions"][0])
        c = doc["minimum_cost_support"]
        if c is not None and c["solutions"]:
            lines.append(
                f"  cheapest identifying support: {c['size']} cells, "
                f"{c['cost']:,.0f} prompt characters ({c['count']} such sets), e.g."
            )
            lines.extend(f"    {cell}" for cell in c["solutions"][0])
    return lines


def _path_lines(path: list[dict[str, Any]]) -> list[str]:
    """The path of supports; a step that changes neither the classes nor the collisions joins
    the line of the step before it."""
    groups: list[list[dict[str, Any]]] = []
    for step in path:
        last = groups[-1][-1] if groups else None
        if last is not None and last["members"] == step["members"]:
            groups[-1].append(step)
        else:
            groups.append([step])
    lines = (
        ["  path of supports (cells, classes: those of several policies, ref:ideal's first):"]
        if path
        else []
    )
    for group in groups:
        names = [s["added"] if s["declared"] else f"[{s['added']}]" for s in group]
        shown = names if len(names) <= 3 else [names[0], "…", names[-1]]
        step = group[-1]
        shared = ["{" + ", ".join(c) + "}" for c in step["members"] if len(c) > 1]
        lines.append(
            f"    + {', '.join(shown)}: {step['cells']} cells, {step['classes']} "
            f"classes" + (": " + " ".join(shared) if shared else ", each policy its own")
        )
    return lines
