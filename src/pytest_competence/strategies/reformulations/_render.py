"""English for the reformulation family's formal problems (CRTBench paper, App. A examples).

Premises are sentences from a fixed grammar over clauses (:mod:`._crt_lexicon`); the question
asks about one atom under stacked negations in the paper's wording: "Does the storm flood the
road?", "Does the storm not flood the road?", "Is it NOT the case that the storm does NOT flood
the road?", "Is it NOT the case that it is NOT true that the storm does NOT flood the road?".
"""

from __future__ import annotations

from collections.abc import Sequence

from ._lexicon import Clause
from ._logic import AnyOf, Fact, Lit, NotAll, Premise, Problem

__all__ = ["render"]


def _lit(lit: Lit, words: Sequence[Clause], passive: bool, loud: bool = False) -> str:
    clause = words[lit.atom]
    return clause.passive(lit.neg, loud) if passive else clause.active(lit.neg, loud)


def _join(parts: Sequence[str], word: str) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} {word} {parts[-1]}"


def _not_all(lits: Sequence[Lit], words: Sequence[Clause], passive: bool) -> str:
    return "it is not the case that all of the following hold: " + _join(
        [_lit(x, words, passive) for x in lits], "and"
    )


def _sentence(premise: Premise, words: Sequence[Clause], passive: bool) -> str:
    if isinstance(premise, Fact):
        text = _lit(premise.lit, words, passive)
    elif isinstance(premise, NotAll):
        text = _not_all(premise.lits, words, passive)
    elif isinstance(premise, AnyOf):
        text = "at least one of the following holds: " + _join(
            [_lit(x, words, passive) for x in premise.lits], "or"
        )
    else:
        c = premise.consequent
        then = _lit(c, words, passive) if isinstance(c, Lit) else _not_all(c.lits, words, passive)
        text = (
            f"if {_join([_lit(x, words, passive) for x in premise.antecedent], 'and')}, then {then}"
        )
    return text[0].upper() + text[1:] + "."


def _question(p: Problem, words: Sequence[Clause], passive: bool) -> str:
    clause = words[p.atom]
    if p.negations < 2:
        return clause.ask(passive, p.negations == 1)
    inner = _lit(Lit(p.atom, True), words, passive, loud=True)
    for _ in range(p.negations - 2):
        inner = f"it is NOT true that {inner}"
    return f"Is it NOT the case that {inner}?"


def render(p: Problem, words: Sequence[Clause], order: Sequence[int], passive: bool) -> str:
    """The user prompt: premises in ``order``, then the question."""
    premises = " ".join(_sentence(p.premises[i], words, passive) for i in order)
    return f"Premises: {premises} Question: {_question(p, words, passive)}"
