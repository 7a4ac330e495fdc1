"""Reading an ordering prompt's latent structure back from its text, for the generator tests.

Shared by test_ordering_text.py and test_ordering_design.py: the controls, cached families, and
``read`` (names line, premise order, rewritten premises and the query recovered from the text
with the independent solver in ``solver.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import numpy as np

from pytest_competence.strategies import (
    PRESENTATIONS,
    Ordering,
    OrderingInstance,
)
from solver import RELATIONS, chains, parse, solve

ALL_PRESENTATIONS = tuple(PRESENTATIONS)
#: Presentations that keep the gold answer; ``flipped_query`` maps yes↔no (App. B.1, §4.1).
PRESERVING = ("original", "equivalent", "reshuffle", "rewrite", "negated", "repeat")
FLIPPING = ("flipped_query",)
FLIP = {"yes": "no", "no": "yes"}

#: The controls of the brief, each a set of Ordering options on top of the defaults.
CONTROLS: dict[str, dict[str, object]] = {
    "P": {"protocol": "P"},
    "L": {"protocol": "L"},
    "random-names": {"names": "random"},
    "chain-names-line": {"names_line": "chain"},
    "distractors": {"distractors": 0.5},
    "interior-d2": {"distance": 2},
}


@cache
def family(vocabulary: str = "front_behind", **options: object) -> Ordering:
    return Ordering(vocabulary=vocabulary, **options)


def fam(vocabulary: str = "front_behind", **options: object) -> Ordering:
    return family(vocabulary, **dict(sorted(options.items())))


# --------------------------------------------------------------------------------------------
# Reading the latent structure back from the text alone
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Latent:
    """What a prompt's text says about its instance, in the generator's chain order ``a_0 … a_{n-1}``.

    ``forward`` is the vocabulary's forward phrase (the one every original premise uses); the latent
    chain is the premise chain read so that each forward premise ``a_i <forward> a_{i+1}`` goes from
    ``a_i`` to ``a_{i+1}``.
    """

    chain: tuple[str, ...]  # the queried chain, a_0 first
    distractors: tuple[str, ...]  # the other chain (empty without distractors), same orientation
    names: tuple[str, ...]  # the names line as written
    links: tuple[
        object, ...
    ]  # premise order: link index i for (a_i, a_{i+1}), ("d", k) for distractors
    rewritten: frozenset[int]  # chain links worded with the converse phrase or negated
    negated: bool  # whether the rewritten links are negations of the forward phrase
    query: tuple[int, int]  # chain positions of the question's subject and object
    asks_forward: bool  # whether the question uses the forward phrase
    answer: str  # the solver's answer
    sentences: tuple[str, ...]


def forward_phrase(original_text: str) -> str:
    """The forward phrase: in an original presentation every premise uses it, affirmatively."""
    premises = parse(original_text).premises
    phrases = {(p.phrase, p.negated) for p in premises}
    assert len(phrases) == 1, f"original presentation mixes phrases: {phrases}"
    ((phrase, negated),) = phrases
    assert not negated
    return phrase


def latent(text: str, forward: str) -> Latent:
    parsed = parse(text)
    answer = solve(text)
    sign = _sign_of(forward)
    found = [c if sign == 1 else c[::-1] for c in chains(parsed)]
    q = parsed.question
    main = [c for c in found if q.subject in c]
    assert len(main) == 1 and q.object in main[0], "question entities are not on one chain"
    chain = main[0]
    others = [c for c in found if c is not chain]
    assert len(others) <= 1, f"expected at most one distractor chain, found {len(others)}"
    distractors = others[0] if others else ()
    pos = {name: i for i, name in enumerate(chain)}
    dpos = {name: i for i, name in enumerate(distractors)}
    links: list[object] = []
    rewritten = set()
    negations = set()
    for p in parsed.premises:
        e = p.edge
        before, after = (e.before, e.after) if sign == 1 else (e.after, e.before)
        if before in pos:
            assert pos[after] == pos[before] + 1
            links.append(pos[before])
            if p.phrase != forward or p.negated:
                rewritten.add(pos[before])
                negations.add(p.negated)
        else:
            assert dpos[after] == dpos[before] + 1
            assert p.phrase == forward and not p.negated, "a distractor premise was rewritten"
            links.append(("d", dpos[before]))
    assert len(negations) <= 1, "rewritten premises mix converse and negated wording"
    return Latent(
        chain=chain,
        distractors=distractors,
        names=parsed.names,
        links=tuple(links),
        rewritten=frozenset(rewritten),
        negated=negations == {True},
        query=(pos[q.subject], pos[q.object]),
        asks_forward=q.phrase == forward,
        answer=answer,
        sentences=tuple(p.text for p in parsed.premises),
    )


def _sign_of(phrase: str) -> int:
    for r in RELATIONS:
        if phrase == r.first:
            return r.sign
        if phrase == r.second:
            return -r.sign
    raise KeyError(phrase)


def read(family_: Ordering, z: OrderingInstance, presentation: str) -> Latent:
    forward = forward_phrase(family_.prompt(z, "original").text)
    return latent(family_.prompt(z, presentation).text, forward)


def spearman(x: list[int], y: list[int]) -> float:
    rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    return float(np.corrcoef(rx, ry)[0, 1])


def expected_distractor_links(rho: float, n: int) -> int:
    """``round(ρ(n − 1))``, ties upward (the generator's convention); exact for dyadic ρ."""
    return math.floor(Fraction(rho) * (n - 1) + Fraction(1, 2))


def m_range(n: int) -> range:
    """App. B.1: m uniform on {max(1, ⌊0.2(n−1)⌋), …, n−1}."""
    return range(max(1, math.floor(Fraction(n - 1) / 5)), n)
