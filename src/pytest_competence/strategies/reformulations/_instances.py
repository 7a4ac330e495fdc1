"""The CRTBench paper reformulations: system prompts, transformations, categories, latent instances."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from pytest_competence.protocol import (
    IDENTITY,
    AnswerMap,
)

from ._logic import (
    Fact,
    If,
    Lit,
    NotAll,
    Premise,
    Problem,
    contrapositive,
    de_morgan,
    solve,
)
from ._quantifiers import QProblem, q_contrapositive, quantifier_rewrite, solve_quantified
from ._syllogisms import build_quantifier, build_syllogistic

__all__ = ["PROMPTS", "TRANSFORMATIONS", "CATEGORIES", "MAX_N", "ReformulationInstance"]


PROMPTS = {
    "zero_shot": "You are a logical reasoning assistant. Answer the question with exactly one of: "
    '"Yes", "No", or "Cannot be determined". Give your final answer on a new line '
    'starting with "Answer: ".',
    "cot": "You are a logical reasoning assistant. Think step by step about the logical structure "
    'of the problem. Then give your final answer on a new line starting with "Answer: " '
    'followed by exactly one of: "Yes", "No", or "Cannot be determined".',
}

_FLIP = AnswerMap.swap("yes", "no")


def _contrapositive(p: Problem | QProblem) -> Problem | QProblem:
    return q_contrapositive(p) if isinstance(p, QProblem) else contrapositive(p)


def _solve(p: Problem | QProblem) -> str:
    """The label by truth table or model checker; a quantified label must not hinge on
    existential import (:mod:`._crt_quantifiers`), so both readings are computed."""
    if not isinstance(p, QProblem):
        return solve(p)
    label = solve_quantified(p)
    if solve_quantified(p, existential_import=False) != label:
        raise AssertionError(f"label {label!r} of {p} depends on existential import")
    return label


#: Transformation → (declared answer map, what it does to the formal problem, passive voice).
TRANSFORMATIONS = {
    "original": (IDENTITY, lambda p: p, False),
    "contrapositive": (IDENTITY, _contrapositive, False),
    "double_negation": (IDENTITY, lambda p: replace(p, negations=p.negations + 2), False),
    "negation_flip": (_FLIP, lambda p: replace(p, negations=p.negations + 1), False),
    "passive": (IDENTITY, lambda p: p, True),
    "de_morgan": (IDENTITY, de_morgan, False),
    "triple_negation": (_FLIP, lambda p: replace(p, negations=p.negations + 3), False),
    "quantifier_rewrite": (IDENTITY, quantifier_rewrite, False),
}

_BASIC = ("original", "contrapositive", "double_negation", "negation_flip", "passive")
#: Category → (smallest level, applicable presentations) — CRTBench paper, Table 7, plus the deeper
#: nesting (triple negation) the nested-negation category is about.
CATEGORIES: dict[str, tuple[int, tuple[str, ...]]] = {
    "propositional_logic": (1, _BASIC),
    "multi_hop": (1, _BASIC),
    "conditional_fallacies": (1, _BASIC),
    "nested_negation": (1, _BASIC + ("triple_negation",)),
    "de_morgan": (2, ("original", "double_negation", "negation_flip", "passive", "de_morgan")),
    "syllogistic": (2, _BASIC),
    "quantifier": (
        1,
        ("original", "contrapositive", "double_negation", "negation_flip", "quantifier_rewrite"),
    ),
}
MAX_N = 6  # truth tables over at most 2n + 3 = 15 atoms; Venn diagrams of at most 2^7 cells


@dataclass(frozen=True)
class ReformulationInstance:
    """A latent base problem, the lexicon entries naming its atoms (or categories), its premise
    order and, for quantified problems, its people (indices into :func:`.names.first_names`)."""

    problem: Problem | QProblem
    entries: tuple[int, ...]
    order: tuple[int, ...]
    cell: int
    n: int
    index: int
    seed: int
    names: tuple[int, ...] = ()

    @property
    def gold(self) -> str:
        """The exact oracle answer of the problem."""
        return _solve(self.problem)


def _build(category: str, n: int, cell: int, rng: np.random.Generator) -> Problem | QProblem:
    """The base problem of ``category`` at level ``n`` in cell 0 (yes), 1 (no) or 2 (undetermined)."""
    if category in ("syllogistic", "quantifier"):
        return (build_syllogistic if category == "syllogistic" else build_quantifier)(n, cell, rng)
    x = [Lit(i) for i in range(n + 3)]
    if category in ("propositional_logic", "conditional_fallacies"):
        chain: tuple[Premise, ...] = tuple(If((x[i - 1],), x[i]) for i in range(1, n + 1))
        if category == "conditional_fallacies":
            fact, ask = [
                (Fact(x[0]), x[n]),  # modus ponens
                (Fact(~x[n]), x[0]),  # modus tollens
                (Fact(x[n]), x[0]) if rng.integers(0, 2) else (Fact(~x[0]), x[n]),  # AC / DA
            ][cell]
            return Problem(chain + (fact,), ask.atom, int(ask.neg), n + 1)
        y = x[n + 1]
        extra, ask = [(If((x[n],), y), y), (If((x[n],), ~y), y), (If((y,), x[n]), y)][cell]
        return Problem(chain + (extra, Fact(x[0])), ask.atom, 0, n + 2)
    if category == "multi_hop":
        side = [Lit(n + 2 + i) for i in range(n + 1)]
        steps: list[Premise] = [If((x[i - 1], side[i - 1]), x[i]) for i in range(1, n + 2)]
        sides: list[Premise] = [Fact(s) for s in side]
        if cell == 2:
            del sides[int(rng.integers(0, n + 1))]  # one side condition missing: a near miss
        start, ask = (Fact(~x[n + 1]), x[0]) if cell == 1 else (Fact(x[0]), x[n + 1])
        return Problem(tuple(steps + sides) + (start,), ask.atom, 0, 2 * n + 3)
    if category == "nested_negation":
        lits = [Lit(i, neg=i % 2 == 1) for i in range(n + 1)]
        negated = tuple(If((lits[i - 1],), lits[i]) for i in range(1, n + 1))
        given, ask = [(lits[0], lits[n]), (lits[0], ~lits[n]), (~lits[0], lits[n])][cell]
        return Problem(negated + (Fact(given),), ask.atom, int(ask.neg), n + 1)
    atoms = [Lit(i) for i in range(n)]  # de_morgan
    if cell == 0:
        return Problem(
            (NotAll(tuple(~a for a in atoms)),) + tuple(Fact(~a) for a in atoms[:-1]), n - 1, 0, n
        )
    known = atoms[:-1] if cell == 1 else atoms[:-2]
    return Problem((NotAll(tuple(atoms)),) + tuple(Fact(a) for a in known), n - 1, 0, n)
