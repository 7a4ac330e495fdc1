"""Hypothesis strategies for the Horn-clause family (seeds/000 App. C), built to shrink well.

A draw is three choices — level, index, seed — so a failing program shrinks toward the smallest
level, a positive program (index 0) and seed 0, and a presentation toward ``"original"``.
"""

from __future__ import annotations

from hypothesis import strategies as st

from ._core import InvalidArgument
from .horn import HORN_PRESENTATIONS, Horn, HornInstance

__all__ = ["HornStrategies"]

_SEEDS = st.integers(0, 2**32 - 1)


class HornStrategies:
    """Strategies bound to one :class:`~.horn.Horn` configuration."""

    def __init__(self, family: Horn) -> None:
        self.family = family

    def __repr__(self) -> str:
        return f"{self.family!r}.strategies"

    def instances(self, *, min_n: int | None = None, max_n: int = 32,
                  positive: bool | None = None) -> st.SearchStrategy[HornInstance]:
        """Programs with ``min_n <= n <= max_n``; ``positive`` fixes the gold answer if given."""
        lo = self.family.min_n if min_n is None else self.family.check_n(min_n, "min_n")
        hi = self.family.check_n(max_n, "max_n")
        if lo > hi:
            raise InvalidArgument(f"Expected min_n <= max_n, but got min_n={lo}, max_n={hi}")
        if positive is None:
            index = st.integers(0, 1)
        else:
            index = st.just(0 if positive else 1)
        return st.builds(self.family.instance, n=st.integers(lo, hi), index=index, seed=_SEEDS)

    def presentations(self) -> st.SearchStrategy[str]:
        """Presentation names, shrinking toward ``"original"``."""
        return st.sampled_from(tuple(HORN_PRESENTATIONS))
