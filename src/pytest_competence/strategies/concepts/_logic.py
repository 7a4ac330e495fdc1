"""Boolean concepts: objects, the and/or rule grammar and the ideal observer (systematicity paper, arXiv:2609.13948, §4.4).

A task's objects have three features, each with three values, so the object space is the 27
points of ``{0, 1, 2}³``; an object is the tuple of its value indices, one per *slot*, and a task's
context says which physical feature (shape, color, …) each slot is shown as. A rule is a tree of
the grammar of App. C Fig. 14 without ``not``: ``("is", slot, value)``, ``("and", a, b)`` or
``("or", a, b)``. Its *length* is its number of feature tests; ``true``/``false`` have length 0.

Every rule denotes a Boolean function on the 27 objects, stored as a 27-bit mask (bit ``o`` is
the label of object ``o``). :func:`min_lengths` enumerates the grammar by length once, keeping the
shortest length of every function it reaches; the ideal observer (:func:`ideal_observer`) is
then a filter of those masks by the support labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Literal

import numpy as np

__all__ = [
    "EDGES",
    "FEATURES",
    "OBJECTS",
    "Obj",
    "Rule",
    "build_support",
    "draw_rule",
    "evaluate",
    "ideal_observer",
    "index",
    "labels",
    "length",
    "min_lengths",
    "rule_mask",
]

#: The five physical features of the systematicity paper, arXiv:2609.13948, §4.4 and their three values each (App. C Fig. 14 gives
#: shape, color and size; material and numerosity complete the paper's list).
FEATURES: dict[str, tuple[str, str, str]] = {
    "shape": ("circle", "triangle", "square"),
    "color": ("blue", "yellow", "green"),
    "size": ("tiny", "small", "large"),
    "material": ("wood", "metal", "glass"),
    "numerosity": ("one", "two", "three"),
}

Obj = tuple[int, int, int]
Rule = tuple[Literal["is"], int, int] | tuple[Literal["and", "or"], "Rule", "Rule"]

OBJECTS: tuple[Obj, ...] = tuple((o // 9, o // 3 % 3, o % 3) for o in range(27))
FULL = (1 << 27) - 1

#: The Hamming graph on the object space: pairs of objects that differ in exactly one feature.
EDGES: tuple[tuple[int, int], ...] = tuple(
    (a, b)
    for a in range(27)
    for b in range(a + 1, 27)
    if sum(x != y for x, y in zip(OBJECTS[a], OBJECTS[b])) == 1
)

_TESTS = {
    (s, v): sum(1 << o for o, x in enumerate(OBJECTS) if x[s] == v)
    for s in range(3)
    for v in range(3)
}


def index(obj: Obj) -> int:
    """The bit of ``obj`` in a rule mask."""
    return obj[0] * 9 + obj[1] * 3 + obj[2]


def labels(rule: Rule, objects: Sequence[Obj]) -> tuple[bool, ...]:
    """The interpreter on many objects at once: one mask, then a bit per object."""
    mask = rule_mask(rule)
    return tuple(bool(mask >> index(x) & 1) for x in objects)


def evaluate(rule: Rule, obj: Obj) -> bool:
    """The interpreter: whether ``obj`` is wudsy under ``rule``."""
    if rule[0] == "is":
        return obj[rule[1]] == rule[2]
    if rule[0] == "and":
        return evaluate(rule[1], obj) and evaluate(rule[2], obj)
    return evaluate(rule[1], obj) or evaluate(rule[2], obj)


def rule_mask(rule: Rule) -> int:
    """The Boolean function ``rule`` denotes, as a 27-bit mask."""
    if rule[0] == "is":
        return _TESTS[rule[1], rule[2]]
    a, b = rule_mask(rule[1]), rule_mask(rule[2])
    return a & b if rule[0] == "and" else a | b


def length(rule: Rule) -> int:
    """The number of feature tests in ``rule``."""
    return 1 if rule[0] == "is" else length(rule[1]) + length(rule[2])


@cache
def min_lengths(longest: int) -> dict[int, int]:
    """The shortest rule length of every function some rule of length ≤ ``longest`` denotes.

    A function of shortest length ``k`` is ``a ∧ b`` or ``a ∨ b`` with shortest lengths ``i``
    and ``k - i``, so level ``k`` combines the exact levels below it; ``true``/``false`` are
    level 0.
    """
    levels: list[set[int]] = [{0, FULL}, set(_TESTS.values())]
    seen = levels[0] | levels[1]
    for k in range(2, longest + 1):
        new = set()
        for i in range(1, k // 2 + 1):
            for a in levels[i]:
                for b in levels[k - i]:
                    new.add(a & b)
                    new.add(a | b)
        levels.append(new - seen)
        seen |= levels[k]
    return {mask: k for k, masks in enumerate(levels[: longest + 1]) for mask in masks}


@cache
def _masks(longest: int) -> np.ndarray:
    """Every function of shortest length ≤ ``longest``, as an array the observer filters."""
    return np.array(sorted(min_lengths(longest)), dtype=np.uint32)


def _keep(masks: np.ndarray, obj: int, label: bool) -> np.ndarray:
    return masks[((masks >> obj) & 1) == int(label)]


def ideal_observer(
    support: Sequence[tuple[Obj, bool]], longest: int
) -> tuple[int, tuple[int, ...]]:
    """The shortest length of a rule consistent with ``support`` and every function of that length.

    Searches rules of length ≤ ``longest``; returns ``(longest + 1, ())`` when none is consistent.
    The support determines the concept exactly when one function is returned.
    """
    masks = _masks(longest)
    for obj, label in support:
        masks = _keep(masks, index(obj), label)
    table = min_lengths(longest)
    best = min((table[int(m)] for m in masks), default=longest + 1)
    return best, tuple(sorted(int(m) for m in masks if table[int(m)] == best))


def draw_rule(rng: np.random.Generator, n: int) -> Rule:
    """A random rule of length ``n``: a random binary tree, random operators, random tests."""
    draws = iter(rng.random(2 * n).tolist())  # one call to the generator per rule, not per node

    def grow(n: int) -> Rule:
        if n == 1:
            test = int(next(draws) * 9)
            return ("is", test // 3, test % 3)
        u = next(draws)
        left = 1 + int(u * (n - 1))
        # The fractional part: a fresh fair coin.
        op: Literal["and", "or"] = "and" if u * (n - 1) % 1 < 0.5 else "or"
        return (op, grow(left), grow(n - left))

    return grow(n)


def build_support(rule: Rule, rng: np.random.Generator) -> tuple[tuple[Obj, bool], ...] | None:
    """Boundary pairs that leave ``rule`` the unique shortest consistent rule, or ``None``.

    systematicity paper, arXiv:2609.13948, §4.4: the candidates are the edges of the Hamming graph whose ends the rule labels
    differently. They are visited in random order and an edge is kept when it rules out some rule
    still in play, until only ``rule``'s function is left among rules no longer than it. ``None``
    when ``rule`` has a shorter equivalent or the boundary cannot single it out.
    """
    target, n = rule_mask(rule), length(rule)
    if min_lengths(n).get(target) != n:
        return None
    boundary = [e for e in EDGES if (target >> e[0] & 1) != (target >> e[1] & 1)]
    masks = _masks(n)
    support: dict[int, bool] = {}  # object -> label, in the order shown
    for k in rng.permutation(len(boundary)):
        kept = masks
        for o in boundary[k]:
            kept = _keep(kept, o, bool(target >> o & 1))
        if len(kept) < len(masks):  # an edge that rules nothing out only lengthens the prompt
            masks = kept
            support.update((o, bool(target >> o & 1)) for o in boundary[k])
            if len(masks) == 1:
                return tuple((OBJECTS[o], label) for o, label in support.items())
    return None
