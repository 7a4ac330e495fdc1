"""The formal layer of controlled reformulations (CRTBench paper, §2): formulas, transforms, a solver.

A problem is a tuple of premises and a question about one atom under ``k`` stacked negations.
Premises come from a small grammar over literals: a fact, a conditional (a conjunction of literals
implies a literal, or a literal implies a negated conjunction), a negated conjunction, and a
disjunction. Every label is computed by a truth table over the atoms (numpy, one boolean column
per atom), so a reformulation's label is *proved* from its own formulas, never copied from the
base question's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from typing import Union

import numpy as np

__all__ = [
    "ANSWERS",
    "AnyOf",
    "Fact",
    "If",
    "Lit",
    "NotAll",
    "Problem",
    "contrapositive",
    "de_morgan",
    "solve",
]

YES, NO, CBD = "yes", "no", "cannot be determined"
ANSWERS = (YES, NO, CBD)


@dataclass(frozen=True)
class Lit:
    """Atom ``atom`` (an index into the instance's lexicon entries), negated when ``neg``."""

    atom: int
    neg: bool = False

    def __invert__(self) -> Lit:
        return Lit(self.atom, not self.neg)


@dataclass(frozen=True)
class NotAll:
    """¬(l₁ ∧ … ∧ lₖ): not all of the literals hold."""

    lits: tuple[Lit, ...]


@dataclass(frozen=True)
class AnyOf:
    """l₁ ∨ … ∨ lₖ: at least one of the literals holds."""

    lits: tuple[Lit, ...]


@dataclass(frozen=True)
class Fact:
    lit: Lit


@dataclass(frozen=True)
class If:
    """(a₁ ∧ … ∧ aₖ) → consequent, the consequent a literal or a negated conjunction."""

    antecedent: tuple[Lit, ...]
    consequent: Lit | NotAll


Premise = Union[Fact, If, NotAll, AnyOf]  # noqa: UP007 - a runtime alias, kept 3.10-safe


@dataclass(frozen=True)
class Problem:
    """Premises and the question "is ``¬^negations atom``?"; ``atoms`` counts the atoms used."""

    premises: tuple[Premise, ...]
    atom: int
    negations: int
    atoms: int


def contrapositive(p: Problem) -> Problem:
    """Every conditional ``A → c`` becomes ``¬c → ¬A`` (CRTBench paper, §2: P→Q ⇔ ¬Q→¬P)."""
    out: list[Premise] = []
    for premise in p.premises:
        if isinstance(premise, If) and isinstance(premise.consequent, Lit):
            ante = premise.antecedent
            consequent = ~ante[0] if len(ante) == 1 else NotAll(ante)
            out.append(If((~premise.consequent,), consequent))
        else:
            out.append(premise)
    return replace(p, premises=tuple(out))


def de_morgan(p: Problem) -> Problem:
    """Every ``¬(a ∧ b ∧ …)`` becomes ``¬a ∨ ¬b ∨ …`` (De Morgan's law)."""
    return replace(
        p,
        premises=tuple(
            AnyOf(tuple(~lit for lit in q.lits)) if isinstance(q, NotAll) else q for q in p.premises
        ),
    )


@cache
def _table(atoms: int) -> np.ndarray:
    """All 2^atoms assignments, one column per atom: column i is bit i of the row number.

    Columns are contiguous (Fortran order), so each premise reads whole columns; cached and
    read-only, as every problem with this many atoms shares it.
    """
    rows = np.arange(2**atoms, dtype=np.uint32)[:, None]
    table = np.asfortranarray(((rows >> np.arange(atoms, dtype=np.uint32)) & 1).astype(bool))
    table.flags.writeable = False
    return table


def _lit(t: np.ndarray, lit: Lit) -> np.ndarray:
    return ~t[:, lit.atom] if lit.neg else t[:, lit.atom]


def _all(t: np.ndarray, lits: tuple[Lit, ...]) -> np.ndarray:
    out = np.ones(len(t), dtype=bool)
    for lit in lits:
        out &= _lit(t, lit)
    return out


def _holds(t: np.ndarray, premise: Premise) -> np.ndarray:
    if isinstance(premise, Fact):
        return _lit(t, premise.lit)
    if isinstance(premise, NotAll):
        return ~_all(t, premise.lits)
    if isinstance(premise, AnyOf):
        return ~_all(t, tuple(~lit for lit in premise.lits))
    c = premise.consequent
    then = _lit(t, c) if isinstance(c, Lit) else ~_all(t, c.lits)
    return ~_all(t, premise.antecedent) | then


def solve(p: Problem) -> str:
    """ "yes" if the premises entail the question, "no" if they entail its negation, else
    "cannot be determined". Inconsistent premises are a generator bug and raise."""
    t = _table(p.atoms)
    models = np.ones(len(t), dtype=bool)
    for premise in p.premises:
        models &= _holds(t, premise)
    if not models.any():
        raise ValueError("inconsistent premises")
    value = t[models, p.atom] ^ bool(p.negations % 2)
    return YES if value.all() else NO if not value.any() else CBD
