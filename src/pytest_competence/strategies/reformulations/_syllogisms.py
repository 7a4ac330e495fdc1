"""Base problems of the syllogistic and quantifier categories (CRTBench paper, Table 5), one per cell.

Each cell — 0 yes, 1 no, 2 cannot be determined — has three forms, drawn at random, so a
model cannot learn one surface cue per answer. Terms ``t0 … tn`` are predicate indices.

**Syllogistic** (level ``n`` = premises in a sorites chain, ``n >= 2``; ``n + 1`` categories):

=====  =====================================================  ===============================
cell   premises                                               question
=====  =====================================================  ===============================
yes    all t0→t1, …, all t(n-1)→tn                            all t0 are tn (Barbara)
yes    some t0 are t1, all t1→…→tn                            some t0 are tn (Darii)
yes    all t0→…→t(n-1), no t(n-1) are tn                      no t0 are tn (Celarent)
no     all t0→…→t(n-1), no t(n-1) are tn                      some t0 are tn
no     some t0 are t1, all t1→…→tn                            no t0 are tn
no     some t0 are not t1, all tn→…→t1                        all t0 are tn (Baroco)
cbd    all t0→…→tn                                            all tn are t0 (converse)
cbd    some t0 are t1, all t1→…→tn                            all t0 are tn
cbd    all t0→…→t(n-1), all tn→t(n-1)                         all t0 are tn (undistributed)
=====  =====================================================  ===============================

**Quantifier** (level ``n`` = universal premises, ``n >= 1``; ``n + 1`` categories, one named
person ``m``): universal instantiation and existential generalisation, the inferences whose
wrongful "Cannot be determined" CRTBench paper, §3 reports —

=====  =====================================================  ===============================
yes    all t0→…→tn, m is t0                                   is m tn?
yes    all t0→…→tn, m is t0                                   some tn are t0 / some t0 are tn
yes    all t0→…→t(n-1), no t(n-1) are tn, m is tn             some tn are not t0
no     all t0→…→tn, m is not tn                               is m t0? (modus tollens)
no     all t0→…→t(n-1), no t(n-1) are tn, m is t0             is m tn?
no     all t0→…→tn, m is t0                                   no t0 are tn
cbd    all t0→…→tn, m is tn                                   is m t0? (affirming the consequent)
cbd    all t0→…→tn, m is not t0                               is m tn? (denying the antecedent)
cbd    all t0→…→tn, m is t0                                   all tn are t0
=====  =====================================================  ===============================

Every form has the same label with and without existential import (checked where labels are
computed), and at least one plain universal premise, which the contrapositive and the quantifier
rewrite then change.
"""

from __future__ import annotations

import numpy as np

from ._quantifiers import Is, QProblem, Quantified, Statement, Term

__all__ = ["build_quantifier", "build_syllogistic"]


def _all(a: int, b: int) -> Quantified:
    return Quantified("all", Term(a), Term(b))


def _no(a: int, b: int) -> Quantified:
    return Quantified("all", Term(a), ~Term(b))


def _some(a: int, b: int, neg: bool = False) -> Quantified:
    return Quantified("some", Term(a), Term(b, neg))


def _chain(first: int, last: int) -> list[Statement]:
    """all t(first) are t(first+1), …, all t(last-1) are t(last); descending when last < first."""
    step = 1 if last >= first else -1
    return [_all(i, i + step) for i in range(first, last, step)]


def build_syllogistic(n: int, cell: int, rng: np.random.Generator) -> QProblem:
    """The base problem of the syllogistic category at level ``n`` in ``cell``."""
    form = int(rng.integers(0, 3))
    head = {  # the premises shared by several forms
        "chain": _chain(0, n),
        "darii": [_some(0, 1)] + _chain(1, n),
        "celarent": _chain(0, n - 1) + [_no(n - 1, n)],
    }
    premises, question = [
        [("chain", _all(0, n)), ("darii", _some(0, n)), ("celarent", _no(0, n))],
        [("celarent", _some(0, n)), ("darii", _no(0, n)), ("baroco", _all(0, n))],
        [("chain", _all(n, 0)), ("darii", _all(0, n)), ("middle", _all(0, n))],
    ][cell][form]
    body = {
        **head,
        "baroco": [_some(0, 1, neg=True)] + _chain(n, 1),
        "middle": _chain(0, n - 1) + [_all(n, n - 1)],
    }[premises]
    return QProblem(tuple(body), question, 0, n + 1, 0)


def build_quantifier(n: int, cell: int, rng: np.random.Generator) -> QProblem:
    """The base problem of the quantifier category at level ``n`` in ``cell``."""
    form = int(rng.integers(0, 3))
    chain, person = _chain(0, n), 0
    celarent = _chain(0, n - 1) + [_no(n - 1, n)]
    some_question = _some(n, 0) if rng.integers(0, 2) else _some(0, n)
    cases: list[list[tuple[list[Statement], Statement]]] = [
        [
            (chain + [Is(person, Term(0))], Is(person, Term(n))),
            (chain + [Is(person, Term(0))], some_question),
            (celarent + [Is(person, Term(n))], _some(n, 0, neg=True)),
        ],
        [
            (chain + [Is(person, ~Term(n))], Is(person, Term(0))),
            (celarent + [Is(person, Term(0))], Is(person, Term(n))),
            (chain + [Is(person, Term(0))], _no(0, n)),
        ],
        [
            (chain + [Is(person, Term(n))], Is(person, Term(0))),
            (chain + [Is(person, ~Term(0))], Is(person, Term(n))),
            (chain + [Is(person, Term(0))], _all(n, 0)),
        ],
    ]
    body, question = cases[cell][form]
    return QProblem(tuple(body), question, 0, n + 1, 1)
