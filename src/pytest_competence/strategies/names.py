"""Entity names: a pool of 2,500 first names and the random five-letter control (CBE paper, arXiv:2610.22894, App. B.1).

The pool is the 2,500 most frequent first names of the 1990 US Census name files (female and male
lists merged, by frequency; a US Government work in the public domain), title-cased and sorted.
"""

from __future__ import annotations

import string
from collections.abc import Sequence, Set
from functools import lru_cache
from importlib import resources

import numpy as np

__all__ = ["first_names", "random_names", "untaken"]

_LOWER = np.array(list(string.ascii_lowercase))


@lru_cache(maxsize=1)
def first_names() -> tuple[str, ...]:
    """The 2,500-name pool, in a fixed (alphabetical) order."""
    text = resources.files(__package__).joinpath("data/first_names.txt").read_text("utf-8")
    return tuple(text.split())


def untaken(positions: np.ndarray, taken: Sequence[int]) -> np.ndarray:
    """The indices at ``positions`` of the pool with the distinct indices ``taken`` left out:
    ``[i for i in range(len(pool)) if i not in taken][p]`` for each ``p``, without building the
    pool-long list. The ``j``-th index not taken is ``j`` plus the number of sorted taken
    indices ``t_m`` with ``t_m − m ≤ j``."""
    shifted = np.sort(np.asarray(taken, dtype=np.int64)) - np.arange(len(taken))
    return np.asarray(positions) + np.searchsorted(shifted, positions, side="right")


def random_names(rng: np.random.Generator, k: int, exclude: Set[str] = frozenset()) -> list[str]:
    """``k`` distinct capitalised five-letter strings, neither pool names nor in ``exclude``."""
    taken = set(first_names()) | set(exclude)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < k:
        for letters in rng.choice(_LOWER, size=(k - len(out), 5)):
            name = "".join(letters).capitalize()
            if name not in taken and name not in seen:
                seen.add(name)
                out.append(name)
    return out
