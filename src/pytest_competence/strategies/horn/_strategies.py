"""Hypothesis strategies for the Horn-clause family (CBE paper, arXiv:2610.22894, App. C), built to shrink well.

A draw is three choices — level, index, seed — so a failing program shrinks toward the smallest
level, a positive program (index 0) and seed 0, and a presentation toward ``"original"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hypothesis import strategies as st

from .._bound import SEEDS, BoundStrategies, ordered_range
from .._design_cases import DesignSpace
from ._presentations import HORN_PRESENTATIONS
from ._programs import HornInstance

if TYPE_CHECKING:
    from . import Horn  # noqa: F401 (the generic base names it)

__all__ = ["HornStrategies"]


class HornStrategies(BoundStrategies["Horn"]):
    """Strategies bound to one :class:`~.horn.Horn` configuration."""

    def instances(
        self, *, min_n: int | None = None, max_n: int = 32, positive: bool | None = None
    ) -> st.SearchStrategy[HornInstance]:
        """Programs with ``min_n <= n <= max_n``; ``positive`` fixes the gold answer if given."""
        lo = self.family.min_n if min_n is None else self.family.check_n(min_n, "min_n")
        hi = self.family.check_n(max_n, "max_n")
        ordered_range(lo, hi)
        if positive is None:
            index = st.integers(0, 1)
        else:
            index = st.just(0 if positive else 1)
        return st.builds(self.family.instance, n=st.integers(lo, hi), index=index, seed=SEEDS)

    def presentations(self) -> st.SearchStrategy[str]:
        """Presentation names, shrinking toward ``"original"``."""
        return st.sampled_from(tuple(HORN_PRESENTATIONS))

    def case_space(
        self,
        *,
        min_n: int | None = None,
        max_n: int = 32,
        presentations: Sequence[str] = ("original", "equivalent"),
        vocabularies: object = None,
    ) -> DesignSpace:
        """Whole cases — level, index, seed — with the prompts the design asks for them.

        ``vocabularies`` is the ordering family's (a catalog to scan); it is accepted, so every
        family's space is made the same way, and ignored. See :class:`~._design_cases.DesignSpace`.
        """
        lo = self.family.min_n if min_n is None else self.family.check_n(min_n, "min_n")
        hi = self.family.check_n(max_n, "max_n")
        return DesignSpace(self.family, presentations=presentations, min_n=lo, max_n=hi, pairs=2)
