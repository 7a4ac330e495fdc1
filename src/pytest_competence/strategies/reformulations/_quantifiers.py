"""Monadic quantified statements for reformulations (CRTBench paper, §2): formulas, transforms, a checker.

The syllogistic and quantifier categories of the CRTBench paper, Table 5 need what truth tables cannot give:
statements over *categories* ("All cyclists are painters", "Some poets are not runners") and
facts about named people ("Maya is a cyclist"). A statement is ``all``/``some`` over a subject
term and a predicate term, each a unary predicate possibly negated, the whole possibly negated::

    Quantified("all", A, B)          ∀x (A x → B x)       "All As are Bs."
    Quantified("all", A, ~B)         ∀x (A x → ¬B x)      "No As are Bs."
    Quantified("some", A, ~B)        ∃x (A x ∧ ¬B x)      "Some As are not Bs."
    Quantified("some", A, ~B, True)  ¬∃x (A x ∧ ¬B x)     "There is no A who is not a B."
    Is(0, A)                          A m                  "Maya is an A."

**The model checker is exact.** Without equality or relations, a model of ``k`` predicates is
fixed by which of the 2^k Venn cells are inhabited and where each named person is; every
constraint says a region is empty, inhabited, or holds a person, so the largest candidate (every
cell no emptiness constraint forbids) decides satisfiability in one pass over bit sets
(:func:`_columns`). Entailment is three-valued: "yes" if premises plus the question's negation
have no model, "no" if premises plus the question have none, else "cannot be determined".

**Existential import.** The everyday reading of "All cyclists are painters" presupposes there
are cyclists; the modern one does not. :func:`solve_quantified` takes ``existential_import``
(every category the problem names is inhabited), and the family's generator asks only for
problems whose label is the *same under both readings*, and checks it (``Reformulations.prompts``
raises otherwise): no gold answer hinges on the presupposition, so neither reading is penalised.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from typing import Union

from ._logic import ANSWERS

__all__ = [
    "Is",
    "QProblem",
    "Quantified",
    "Term",
    "q_contrapositive",
    "quantifier_rewrite",
    "solve_quantified",
]

YES, NO, CBD = ANSWERS


@dataclass(frozen=True)
class Term:
    """Predicate ``pred`` (an index into the instance's nouns), negated when ``neg``."""

    pred: int
    neg: bool = False

    def __invert__(self) -> Term:
        return Term(self.pred, not self.neg)


@dataclass(frozen=True)
class Quantified:
    """``all``: ∀x (subject → predicate); ``some``: ∃x (subject ∧ predicate); negated if ``neg``."""

    quant: str
    subject: Term
    predicate: Term
    neg: bool = False

    def __invert__(self) -> Quantified:
        return replace(self, neg=not self.neg)


@dataclass(frozen=True)
class Is:
    """Named person ``name`` (an index into the instance's names) falls under ``term``."""

    name: int
    term: Term

    def __invert__(self) -> Is:
        return Is(self.name, ~self.term)


Statement = Union[Quantified, Is]  # noqa: UP007 - a runtime alias, kept 3.10-safe


@dataclass(frozen=True)
class QProblem:
    """Premises and the question "is ``¬^negations question``?" over ``preds`` predicates."""

    premises: tuple[Statement, ...]
    question: Statement
    negations: int
    preds: int
    names: int


def q_contrapositive(p: QProblem) -> QProblem:
    """Every plain universal ``all S are T`` becomes ``all ¬T are ¬S`` (CRTBench paper, §2: P→Q ⇔ ¬Q→¬P).

    "All As are Bs" becomes "Everyone who is not a B is not an A"; "No As are Bs" (∀ A → ¬B)
    becomes "No Bs are As" (∀ B → ¬A). Existentials and facts have no contrapositive.
    """
    return replace(
        p,
        premises=tuple(
            Quantified("all", ~s.predicate, ~s.subject)
            if isinstance(s, Quantified) and s.quant == "all" and not s.neg
            else s
            for s in p.premises
        ),
    )


def quantifier_rewrite(p: QProblem) -> QProblem:
    """Every quantified premise becomes its dual: ∀x φ ⇔ ¬∃x ¬φ and ∃x φ ⇔ ¬∀x ¬φ (CRTBench paper, §2).

    "All As are Bs" ⇔ "There is no A who is not a B"; "No As are Bs" ⇔ "There is no A who is a
    B"; "Some As are not Bs" ⇔ "Not all As are Bs"; "Some As are Bs" ⇔ "It is not the case that
    no As are Bs". The rewrite is an involution; facts about people stay as they are.
    """
    dual = {"all": "some", "some": "all"}
    return replace(
        p,
        premises=tuple(
            Quantified(dual[s.quant], s.subject, ~s.predicate, not s.neg)
            if isinstance(s, Quantified)
            else s
            for s in p.premises
        ),
    )


@cache
def _columns(preds: int) -> tuple[tuple[int, ...], int]:
    """Each predicate's Venn cells as a bit set over the 2^preds cells (cell c has predicate i
    iff bit i of c is set), and the set of all cells. Python ints: a 128-cell diagram is two
    machine words, far cheaper to intersect than an array."""
    cells = range(2**preds)
    columns = tuple(sum(1 << c for c in cells if c >> i & 1) for i in range(preds))
    return columns, (1 << len(cells)) - 1


def _constraints(preds: int, statements: list[Statement]) -> list[tuple]:
    """Each statement as ("empty" | "inhabited", region) or ("in", name, region)."""
    columns, every = _columns(preds)

    def region(term: Term) -> int:
        return every & ~columns[term.pred] if term.neg else columns[term.pred]

    out: list[tuple] = []
    for s in statements:
        if isinstance(s, Is):
            out.append(("in", s.name, region(s.term)))
        elif s.quant == "all":  # ∀ S → T: no S-and-not-T; negated: some S-and-not-T
            out.append(
                ("inhabited" if s.neg else "empty", region(s.subject) & ~region(s.predicate))
            )
        else:  # ∃ S ∧ T; negated: no S-and-T
            out.append(("empty" if s.neg else "inhabited", region(s.subject) & region(s.predicate)))
    return out


def _satisfiable(constraints: list[tuple], preds: int, names: int) -> bool:
    """Whether some model meets every constraint: the largest candidate decides (see above)."""
    allowed = _columns(preds)[1]
    for c in constraints:
        if c[0] == "empty":
            allowed &= ~c[1]
    if not allowed:  # a first-order domain is never empty
        return False
    where = [allowed] * names
    for c in constraints:
        if c[0] == "inhabited" and not allowed & c[1]:
            return False
        if c[0] == "in":
            where[c[1]] &= c[2]
    return all(where)


def _mentioned(p: QProblem) -> set[int]:
    preds: set[int] = set()
    for s in p.premises + (p.question,):
        terms = (s.term,) if isinstance(s, Is) else (s.subject, s.predicate)
        preds.update(t.pred for t in terms)
    return preds


def solve_quantified(p: QProblem, *, existential_import: bool = True) -> str:
    """ "yes" / "no" / "cannot be determined": whether the premises entail the question.

    With ``existential_import`` every category the problem names is inhabited (the everyday
    presupposition); inconsistent premises are a generator bug and raise ``ValueError``.
    """
    premises = list(p.premises)
    if existential_import:
        premises += [Quantified("some", Term(i), Term(i)) for i in sorted(_mentioned(p))]
    given, k = _constraints(p.preds, premises), p.preds
    if not _satisfiable(given, k, p.names):
        raise ValueError("inconsistent premises")
    question = p.question if p.negations % 2 == 0 else ~p.question
    if not _satisfiable(given + _constraints(k, [~question]), k, p.names):
        return YES
    if not _satisfiable(given + _constraints(k, [question]), k, p.names):
        return NO
    return CBD
