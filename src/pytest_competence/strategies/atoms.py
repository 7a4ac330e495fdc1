"""What the Horn-style families share: pronounceable pseudoword atoms and forward chaining.

The Horn family (``strategies.horn``) and the intervention family (``strategies.intervention``,
whose signed literals are atoms too) draw their atoms with :func:`pseudowords` and compute their
oracles with :func:`derive`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable, Sequence
from typing import Protocol, TypeVar

import numpy as np

__all__ = ["Clause", "derive", "pseudowords"]

A = TypeVar("A", bound=Hashable)
A_co = TypeVar("A_co", bound=Hashable, covariant=True)


class Clause(Protocol[A_co]):
    """A rule ``head ← body[0] ∧ body[1] ∧ …`` over atoms of any hashable kind."""

    @property
    def head(self) -> A_co:
        """What the rule derives."""

    @property
    def body(self) -> tuple[A_co, ...]:
        """What it needs, every atom derived."""


_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
_SYLLABLES = tuple(c + v for c in _CONSONANTS for v in _VOWELS)


def pseudowords(rng: np.random.Generator, count: int, exclude: Iterable[str] = ()) -> list[str]:
    """``count`` distinct pronounceable pseudowords (three CV syllables, e.g. ``"bamoti"``).

    Every word is six letters of consonant–vowel syllables, so no atom is an English keyword the
    renderers use ("if", "then", "and", "holds", …); ``exclude`` keeps them disjoint from a set.
    """
    taken = set(exclude)
    out: list[str] = []
    while len(out) < count:
        for a, b, c in rng.integers(0, len(_SYLLABLES), size=(count - len(out) + 4, 3)).tolist():
            word = _SYLLABLES[a] + _SYLLABLES[b] + _SYLLABLES[c]
            if word not in taken:
                taken.add(word)
                out.append(word)
                if len(out) == count:
                    break
    return out


def derive(facts: Iterable[A], rules: Sequence[Clause[A]]) -> set[A]:
    """The least model: every atom derivable from ``facts`` by ``rules`` (linear-time chaining).

    Each rule keeps a count of body atoms not yet derived; an atom, once derived, decrements the
    rules that wait on it, and a rule whose count reaches zero derives its head.
    """
    waiting: dict[A, list[int]] = {}
    missing = []
    for r, rule in enumerate(rules):
        body = set(rule.body)
        missing.append(len(body))
        for atom in body:
            waiting.setdefault(atom, []).append(r)
    known = set(facts)
    todo = deque(known)
    for r, rule in enumerate(rules):
        if missing[r] == 0 and rule.head not in known:
            known.add(rule.head)
            todo.append(rule.head)
    while todo:
        for r in waiting.get(todo.popleft(), ()):
            missing[r] -= 1
            if missing[r] == 0 and rules[r].head not in known:
                known.add(rules[r].head)
                todo.append(rules[r].head)
    return known
