"""The reference policies' reader for quantified reformulation prompts (CRTBench paper, Table 5).

The syllogistic and quantifier categories render monadic statements about club members
(:mod:`pytest_competence.strategies.reformulations._qrender`). This reader inverts that renderer sentence by
sentence: it finds the sentence's categories (known nouns) and people (known first names), renders
every statement over them in both voices and keeps the one whose wording is the sentence. So it
reads exactly the grammar the family writes, and nothing else (``None``).

:func:`strip_negation` is what ``crt-ignore-negation`` sees: every "not", "NOT" and "no" dropped —
"No poets are runners" read as "All poets are runners", the question asked without negations.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import replace
from functools import lru_cache

from ..names import first_names
from ._lexicon import NOUNS
from ._qrender import SCENE, _sentence, _Words
from ._quantifiers import Is, QProblem, Quantified, Statement, Term

__all__ = ["PREFIX", "read_quantified", "strip_negation"]

PREFIX = f"Premises: {SCENE} "


@lru_cache(maxsize=1)
def _nouns() -> dict[str, int]:
    """Every singular and plural noun → its index in NOUNS."""
    return {w: i for i, n in enumerate(NOUNS) for w in (n.singular, n.plural)}


@lru_cache(maxsize=1)
def _people() -> frozenset[str]:
    return frozenset(first_names())


def _candidates(preds: list[int], people: list[int]) -> list[Statement]:
    """Every statement over the given local predicate and person indices."""
    terms = [Term(p, neg) for p in preds for neg in (False, True)]
    out: list[Statement] = [Is(m, t) for m in people for t in terms]
    for quant, neg in itertools.product(("all", "some"), (False, True)):
        out += [Quantified(quant, s, t, neg) for s in terms for t in terms if s.pred != t.pred]
    return out


class _Reader:
    """Local indices for the nouns and people of one prompt, in first-mention order."""

    def __init__(self) -> None:
        self.preds: dict[int, int] = {}
        self.people: dict[str, int] = {}

    def _mentions(self, sentence: str) -> tuple[list[int], list[int]]:
        words = re.findall(r"[A-Za-z]+", sentence)
        preds = [
            self.preds.setdefault(_nouns()[w], len(self.preds)) for w in words if w in _nouns()
        ]
        people = [self.people.setdefault(w, len(self.people)) for w in words if w in _people()]
        return sorted(set(preds)), sorted(set(people))

    def words(self, passive: bool) -> _Words:
        nouns = [NOUNS[0]] * len(self.preds)
        for entry, local in self.preds.items():
            nouns[local] = NOUNS[entry]
        return _Words(nouns, list(self.people), passive)

    def premise(self, sentence: str) -> Statement:
        candidates = _candidates(*self._mentions(sentence))
        for passive in (False, True):
            words = self.words(passive)
            for s in candidates:
                if _sentence(words.statement(s)) == sentence:
                    return s
        raise ValueError(sentence)

    def question(self, text: str) -> tuple[Statement, int]:
        candidates = _candidates(*self._mentions(text))
        for passive, negations in itertools.product((False, True), range(4)):
            words = self.words(passive)
            for s in candidates:
                probe = QProblem((), s, negations, len(self.preds), len(self.people))
                if words.question(probe) == text:
                    return s, negations
        raise ValueError(text)


def read_quantified(text: str) -> tuple[QProblem, int] | None:
    """(the problem, the question's negation count), or ``None`` when ``text`` is not one."""
    if not text.startswith(PREFIX) or " Question: " not in text:
        return None
    body, question = text[len(PREFIX) :].split(" Question: ", 1)
    reader = _Reader()
    try:
        premises = tuple(
            reader.premise(s if s.endswith(".") else s + ".") for s in body.split(". ")
        )
        asked, negations = reader.question(question)
    except ValueError:
        return None
    stacked = negations + (isinstance(asked, Is) and asked.term.neg)
    return QProblem(premises, asked, negations, len(reader.preds), len(reader.people)), stacked


def strip_negation(p: QProblem) -> QProblem:
    """The problem with every negation word read as absent."""

    def plain(s: Statement) -> Statement:
        if isinstance(s, Is):
            return Is(s.name, Term(s.term.pred))
        return Quantified(s.quant, Term(s.subject.pred), Term(s.predicate.pred))

    return replace(
        p, premises=tuple(map(plain, p.premises)), question=plain(p.question), negations=0
    )
