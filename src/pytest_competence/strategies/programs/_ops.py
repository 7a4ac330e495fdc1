"""The operations of integer-list programs, their interpreter and the grammar that draws them.

Seeds/002 §4.3 (after Rule et al., 2024): a hidden rule is a composition of ``insert``,
``remove``, ``repeat``, ``shift``, ``swap`` and ``tail`` with integer arguments, sampled from a
small probabilistic grammar. A program is plain data: a tuple of steps ``(name, *args)`` applied
left to right, e.g. ``(("swap",), ("remove", 0))`` — the paper's sample episode, which maps
``[7, 3, 1, 5, 2]`` to ``[5, 2, 7, 3]``. Positions are 0-based.

Every operation is *structural* except for ``insert``'s value: no operation looks at the values
of the elements or does arithmetic on them. That is what makes the digit substitution of
systematicity paper, arXiv:2609.13948, §4.3 an exact isomorphism inside the grammar: for a bijection ``ψ`` of the digits,
``ψ ∘ f ∘ ψ⁻¹`` is the program ``f`` with each inserted value ``v`` replaced by ``ψ(v)``
(:func:`substitute`). In particular ``shift`` rotates *positions* (App. C Fig. 13: "shift all
elements by a given offset, wrapping around"); a value shift ``x ↦ (x + k) mod 10`` would not
commute with an arbitrary ``ψ``, so the substituted task would leave the grammar.

Whether a step is defined depends only on the length of the list it meets, so the grammar
tracks the interval of lengths reachable from the task's input lengths and draws only
arguments defined on all of them (:func:`draw_program`): a drawn program is total on every
list of its task.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["OPERATIONS", "Program", "draw_program", "lengths", "run", "substitute"]

Step = tuple  # ("name", *int args)
Program = tuple[Step, ...]

OPERATIONS: tuple[str, ...] = ("insert", "remove", "repeat", "shift", "swap", "tail")
_WEIGHTS = {"insert": 1.0, "remove": 1.0, "repeat": 0.6, "shift": 1.0, "swap": 1.0, "tail": 0.8}
MAX_LENGTH = 14  # the longest list ``repeat`` may build: prompts stay short
DIGITS = 10  # list elements and inserted values are 0..9


def insert(xs: list[int], position: int, value: int) -> list[int]:
    """``insert(i, v)``: ``xs[:i] + [v] + xs[i:]``; defined when ``0 <= i <= len(xs)``."""
    return xs[:position] + [value] + xs[position:]


def remove(xs: list[int], position: int) -> list[int]:
    """``remove(i)``: ``xs`` without its element at ``i``; defined when ``0 <= i < len(xs)``."""
    return xs[:position] + xs[position + 1 :]


def repeat(xs: list[int], length: int) -> list[int]:
    """``repeat(m)``: ``xs`` repeated until it has ``m`` elements, ``[xs[j % len(xs)] for j <
    m]``; defined when ``1 <= len(xs) <= m`` (it only ever lengthens)."""
    return [xs[j % len(xs)] for j in range(length)]


def shift(xs: list[int], offset: int) -> list[int]:
    """``shift(k)``: every element moves ``k`` places right, wrapping around, ``out[j] =
    xs[(j - k) mod len(xs)]``; total (the empty list stays empty)."""
    if not xs:
        return []
    k = offset % len(xs)
    return xs[len(xs) - k :] + xs[: len(xs) - k]


def swap(xs: list[int]) -> list[int]:
    """``swap``: the halves exchanged, ``xs[h:] + xs[:h]`` with ``h = len(xs) // 2`` (the middle
    element of an odd list belongs to the second half, as in the systematicity paper, arXiv:2609.13948, §4.3's episode); total."""
    h = len(xs) // 2
    return xs[h:] + xs[:h]


def tail(xs: list[int], count: int) -> list[int]:
    """``tail(m)``: the last ``m`` elements, ``xs[max(0, len(xs) - m):]`` (all of a shorter
    list); total for ``m >= 1``."""
    return xs[max(0, len(xs) - count) :]


_APPLY: dict[str, Callable[..., list[int]]] = {
    "insert": insert,
    "remove": remove,
    "repeat": repeat,
    "shift": shift,
    "swap": swap,
    "tail": tail,
}


def run(program: Program, xs: Sequence[int]) -> list[int]:
    """The program's output on ``xs``: its steps applied left to right (the oracle)."""
    out = list(xs)
    for name, *args in program:
        out = _APPLY[name](out, *args)
    return out


def lengths(step: Step, lo: int, hi: int) -> tuple[int, int]:
    """The interval of output lengths of ``step`` on lists of lengths ``lo..hi``."""
    name = step[0]
    if name == "insert":
        return lo + 1, hi + 1
    if name == "remove":
        return lo - 1, hi - 1
    if name == "repeat":
        return step[1], step[1]
    if name == "tail":
        return min(lo, step[1]), min(hi, step[1])
    return lo, hi


def _choices(lo: int, hi: int) -> list[str]:
    """The operations the grammar may draw on lists of lengths ``lo..hi`` (never emptying one)."""
    names = ["insert", "shift", "swap"] if hi < MAX_LENGTH else ["shift", "swap"]
    if lo >= 2:
        names.append("remove")
    if hi + 1 <= MAX_LENGTH:
        names.append("repeat")
    if hi >= 2:
        names.append("tail")
    return names


def _step(name: str, lo: int, hi: int, rng: np.random.Generator) -> Step:
    """One step of operation ``name`` with arguments defined on every length ``lo..hi``."""
    if name == "insert":
        return ("insert", int(rng.integers(0, lo + 1)), int(rng.integers(0, DIGITS)))
    if name == "remove":
        return ("remove", int(rng.integers(0, lo)))
    if name == "repeat":  # strictly longer than every list it meets, so it always acts
        return ("repeat", int(rng.integers(hi + 1, min(hi + 4, MAX_LENGTH) + 1)))
    if name == "shift":  # 1..3 places: a shift by 0 would be a no-op step
        return ("shift", int(rng.integers(1, 4)))
    if name == "tail":  # shorter than the longest list, so it cuts at least that one
        return ("tail", int(rng.integers(1, hi)))
    return ("swap",)


def draw_program(n: int, lo: int, hi: int, rng: np.random.Generator) -> Program:
    """``n`` steps from the grammar ``P → S | S ; P`` over inputs of lengths ``lo..hi``.

    Each step's operation is drawn with fixed weights among those defined on every length the
    previous steps can produce, then its arguments uniformly from their defined ranges
    (systematicity paper, arXiv:2609.13948, §4.3: "parameters … sampled uniformly from predefined ranges").
    """
    steps: list[Step] = []
    for _ in range(n):
        names = _choices(lo, hi)
        # One uniform against cumulative weights: rng.choice(p=...) costs ten times as much.
        mass = rng.random() * sum(_WEIGHTS[x] for x in names)
        for name in names:
            mass -= _WEIGHTS[name]
            if mass < 0:
                break
        step = _step(name, lo, hi, rng)
        steps.append(step)
        lo, hi = lengths(step, lo, hi)
    return tuple(steps)


def substitute(program: Program, mapping: Sequence[int]) -> Program:
    """The program ``ψ ∘ f ∘ ψ⁻¹`` for the digit bijection ``mapping`` (``ψ(d) = mapping[d]``):
    only ``insert``'s value is a digit; positions, lengths and offsets are not."""
    return tuple(("insert", s[1], int(mapping[s[2]])) if s[0] == "insert" else s for s in program)
