"""Hypothesis strategies for the intervention-worlds family, built to shrink well.

A draw is three choices — level, index, seed — so a failing cluster shrinks toward the smallest
theory, the first transition (TRUE → FALSE) and seed 0, and a cell toward ``"base/TFU/generate"``.
"""

from __future__ import annotations

from hypothesis import strategies as st

from ._bound import SEEDS, BoundStrategies, ordered_range
from ._core import InvalidArgument
from .intervention import IW_PRESENTATIONS, MIN_N, Intervention, IWInstance

__all__ = ["InterventionStrategies"]

class InterventionStrategies(BoundStrategies[Intervention]):
    """Strategies bound to one :class:`~.intervention.Intervention` configuration."""

    def instances(self, *, min_n: int = MIN_N, max_n: int = 32,
                  transition: int | None = None) -> st.SearchStrategy[IWInstance]:
        """Clusters with ``min_n <= n <= max_n``; ``transition`` (0–5) fixes the transition."""
        lo = self.family.check_n(min_n, "min_n")
        hi = self.family.check_n(max_n, "max_n")
        ordered_range(lo, hi)
        if transition is not None and (isinstance(transition, bool)
                                       or transition not in range(6)):
            raise InvalidArgument(
                f"Expected transition to be None or an index 0-5 into TRANSITIONS, but got "
                f"transition={transition!r}")
        index = st.integers(0, 2**16) if transition is None else st.integers(0, 2**12).map(
            lambda k: 6 * k + transition)
        return st.builds(self.family.instance, n=st.integers(lo, hi), index=index, seed=SEEDS)

    def presentations(self) -> st.SearchStrategy[str]:
        """Cell names, shrinking toward ``"base/TFU/generate"``."""
        return st.sampled_from(IW_PRESENTATIONS)
