"""Checks a family runs on its arguments: each raises :class:`InvalidArgument` naming the argument,
the value received, what was expected and, where there is one, the fix (Hypothesis's
``InvalidArgument`` habit). Helpers for family authors; the built-in families use them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pytest_competence.protocol import InvalidArgument

__all__ = [
    "check_levels",
    "check_pairs",
    "check_presentations",
    "check_seed",
    "check_sequence",
    "check_word",
]


def check_levels(levels: object, check_n: Any, expected: str) -> None:
    """Raise :class:`InvalidArgument` unless ``levels`` is a non-empty list of distinct entries
    that ``check_n(n, "levels[]")`` (the family's own size check) accepts; ``expected`` says
    what a level is, e.g. ``"a non-empty list of chain lengths, e.g. [4, 8, 16]"``."""
    if isinstance(levels, (str, bytes)) or not isinstance(levels, Sequence) or not levels:
        raise InvalidArgument(f"Expected levels to be {expected}, but got levels={levels!r}")
    for n in levels:
        check_n(n, "levels[]")
    repeated = sorted({n for n in levels if list(levels).count(n) > 1})
    if repeated:
        raise InvalidArgument(
            f"Expected levels to name each size once, but got levels={list(levels)!r} "
            f"({', '.join(map(str, repeated))} repeated); list each level once"
        )


def check_pairs(pairs: object, multiple: int, expected: str, suggestion: int) -> None:
    """Raise :class:`InvalidArgument` unless ``pairs`` is a positive multiple of ``multiple`` (the
    family's balanced cells); ``expected`` says so in the family's words. The fix offered is
    the nearest valid numbers for a whole number (``pairs=30``: 28 or 32), else
    ``suggestion``."""
    if (
        isinstance(pairs, bool)
        or not isinstance(pairs, int)
        or pairs < multiple
        or (pairs % multiple)
    ):
        if isinstance(pairs, int) and not isinstance(pairs, bool) and pairs > 0:
            below = pairs // multiple * multiple
            nearest = [n for n in (below, below + multiple) if n >= multiple]
            fix = " or ".join(f"pairs={n}" for n in nearest)
        else:
            fix = f"pairs={suggestion}"
        raise InvalidArgument(f"Expected {expected}, but got pairs={pairs!r}; try {fix}")


def check_seed(seed: object) -> None:
    """Raise :class:`InvalidArgument` unless ``seed`` is a non-negative integer."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidArgument(f"Expected a non-negative integer seed, but got seed={seed!r}")


def check_word(name: str, value: object) -> None:
    """Raise :class:`InvalidArgument` unless ``value`` is an integer in [0, 2**32) (a seed or
    index that goes into :func:`~._rng.stream_rng` as one 32-bit word)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or not (0 <= value < 2**32)
    ):
        raise InvalidArgument(
            f"Expected {name} to be an integer in [0, 2**32), but got {name}={value!r}"
        )


def check_sequence(name: str, value: object, *, item_type: type, empty_ok: bool = False) -> tuple:
    """Return ``value`` as a tuple of ``item_type`` or raise :class:`InvalidArgument` naming it."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InvalidArgument(
            f"Expected a list of {item_type.__name__} for {name}, but got {name}={value!r} "
            f"(type={type(value).__name__})"
        )
    out = tuple(value)
    bad = [v for v in out if not isinstance(v, item_type) or isinstance(v, bool)]
    if bad:
        raise InvalidArgument(
            f"Expected every element of {name} to be {item_type.__name__}, but got {bad[0]!r} "
            f"(type={type(bad[0]).__name__})"
        )
    if not out and not empty_ok:
        raise InvalidArgument(f"{name} must not be empty")
    return out


def check_presentations(presentations: object, lookup: Any) -> None:
    """Raise :class:`InvalidArgument` unless ``presentations`` is a non-empty list of names that
    ``lookup`` (a family's name → transforms function, itself raising on unknown names) knows."""
    if (
        isinstance(presentations, (str, bytes))
        or not isinstance(presentations, Sequence)
        or (not presentations)
    ):
        raise InvalidArgument(
            f"Expected presentations to be a non-empty list of names such as "
            f"['original', 'equivalent'], but got presentations={presentations!r}"
        )
    for name in presentations:
        lookup(name)
