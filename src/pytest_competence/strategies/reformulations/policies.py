"""Reference policies for the reformulation family (CRTBench paper): they read the prompt text.

=========================  ==============================================================
``ideal``                  (shared) reads every premise and the question and answers by
                           truth table (by the model checker for the syllogistic and
                           quantifier categories): competent on every reformulation.
``crt-ignore-negation``    reads every "not"/"NOT" (and a quantified "no") as absent —
                           premises and question — and answers by the same solver: caught by
                           negation flips, contrapositives and negated premises (CRTBench paper, §4
                           "Why negation is hard").
``crt-hedge``              ideal, but answers "Cannot be determined" whenever the question
                           stacks two or more negations: the over-cautious abstention of
                           CRTBench paper, §3.3, caught by double and triple negation only.
=========================  ==============================================================
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache

from pytest_competence.policy import UNREADABLE
from pytest_competence.protocol import Prompt

from ._lexicon import LEXICON
from ._logic import (
    AnyOf,
    Fact,
    If,
    Lit,
    NotAll,
    Premise,
    Problem,
    solve,
)
from ._quantifiers import QProblem, solve_quantified
from .policies_quantified import PREFIX, read_quantified, strip_negation

__all__ = ["CRT_POLICIES", "crt_ideal", "read_crt"]

_NOT_ALL = "it is not the case that all of the following hold: "
_ANY = "at least one of the following holds: "


@dataclass(frozen=True)
class _Reading:
    problem: Problem | QProblem
    stacked: int  # negations in the question


@lru_cache(maxsize=1)
def _clauses() -> dict[str, tuple[int, bool]]:
    """Every clause wording (both voices, both signs, quiet and loud NOT) → (entry, negated)."""
    table = {}
    for i, c in enumerate(LEXICON):
        for neg in (False, True):
            for loud in (False, True):
                table[c.active(neg, loud)] = (i, neg)
                table[c.passive(neg, loud)] = (i, neg)
    return table


def _lits(text: str, word: str, atoms: dict[int, int]) -> tuple[Lit, ...]:
    parts = re.split(rf", | {word} ", text)
    out = []
    for part in parts:
        entry, neg = _clauses()[part]
        out.append(Lit(atoms.setdefault(entry, len(atoms)), neg))
    return tuple(out)


def read_crt(text: str) -> _Reading | None:
    """Parse a reformulation prompt into a formal problem; ``None`` when it is not one."""
    if text.startswith(PREFIX):  # the syllogistic and quantifier categories
        quantified = read_quantified(text)
        return None if quantified is None else _Reading(*quantified)
    if not text.startswith("Premises: ") or " Question: " not in text:
        return None
    body, question = text[len("Premises: ") :].split(" Question: ", 1)
    atoms: dict[int, int] = {}
    premises: list[Premise] = []
    try:
        for sentence in body.rstrip(".").split(". "):
            s = sentence[0].lower() + sentence[1:]
            if s.startswith("if "):
                ante, then = s[3:].split(", then ", 1)
                cons = (
                    NotAll(_lits(then[len(_NOT_ALL) :], "and", atoms))
                    if then.startswith(_NOT_ALL)
                    else _lits(then, "and", atoms)[0]
                )
                premises.append(If(_lits(ante, "and", atoms), cons))
            elif s.startswith(_NOT_ALL):
                premises.append(NotAll(_lits(s[len(_NOT_ALL) :], "and", atoms)))
            elif s.startswith(_ANY):
                premises.append(AnyOf(_lits(s[len(_ANY) :], "or", atoms)))
            else:
                premises.append(Fact(_lits(s, "and", atoms)[0]))
        stacked, q = _question(question)
        entry, neg = _clauses()[q]
    except (KeyError, ValueError, IndexError):
        return None
    atom = atoms.setdefault(entry, len(atoms))
    return _Reading(Problem(tuple(premises), atom, stacked + neg, len(atoms)), stacked + neg)


def _question(q: str) -> tuple[int, str]:
    """(negations outside the clause, the clause as a statement)."""
    loud = 0
    if q.startswith("Is it NOT the case that "):
        q, loud = q[len("Is it NOT the case that ") :], 1
        while q.startswith("it is NOT true that "):
            q, loud = q[len("it is NOT true that ") :], loud + 1
        return loud, q.rstrip("?")
    for c in LEXICON:
        for neg in (False, True):
            if q in (c.ask(False, neg), c.ask(True, neg)):
                return 0, c.active(neg)
    raise ValueError(q)


def _solve(p: Problem | QProblem) -> str:
    return solve_quantified(p) if isinstance(p, QProblem) else solve(p)


def _strip(p: Problem | QProblem) -> Problem | QProblem:
    if isinstance(p, QProblem):
        return strip_negation(p)

    def lit(x: Lit) -> Lit:
        return Lit(x.atom)

    def premise(q: Premise) -> list[Premise]:
        if isinstance(q, Fact):
            return [Fact(lit(q.lit))]
        if isinstance(q, AnyOf):
            return [AnyOf(tuple(map(lit, q.lits)))]
        if isinstance(q, NotAll):
            return [Fact(lit(x)) for x in q.lits]
        c, ante = q.consequent, tuple(map(lit, q.antecedent))
        return [If(ante, lit(x)) for x in ((c,) if isinstance(c, Lit) else c.lits)]

    return replace(p, premises=tuple(x for q in p.premises for x in premise(q)), negations=0)


def _answer(text: str, rule: Callable[[_Reading], str]) -> str:
    reading = read_crt(text)
    return UNREADABLE if reading is None else f"Answer: {rule(reading).capitalize()}"


def crt_ideal(prompt: Prompt | str) -> str | None:
    """The ideal answer to a reformulation prompt (or its text), or ``None`` when it is not one."""
    text = prompt if isinstance(prompt, str) else prompt.text
    reading = read_crt(text)
    return None if reading is None else f"Answer: {_solve(reading.problem).capitalize()}"


def _ignore_negation(r: _Reading) -> str:
    try:
        return _solve(_strip(r.problem))
    except ValueError:  # the negation-blind reading is inconsistent: it hedges
        return "cannot be determined"


def _hedge(r: _Reading) -> str:
    return "cannot be determined" if r.stacked >= 2 else _solve(r.problem)


#: Policy name → factory, merged into :data:`pytest_competence.models.reference.POLICIES`.
CRT_POLICIES: dict[str, Callable[..., Callable[[str], str]]] = {
    "crt-ignore-negation": lambda: lambda text: _answer(text, _ignore_negation),
    "crt-hedge": lambda: lambda text: _answer(text, _hedge),
}
