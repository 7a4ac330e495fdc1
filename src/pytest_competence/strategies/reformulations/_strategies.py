"""Hypothesis strategies for the reformulation family (CRTBench paper), built to shrink well.

A draw is four choices — category, level, index, seed — shrinking toward the first category,
its smallest level, the "yes" cell (index 0) and seed 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hypothesis import strategies as st

from .._design_cases import DesignSpace
from ._instances import CATEGORIES, MAX_N, ReformulationInstance

if TYPE_CHECKING:
    from . import Reformulations

__all__ = ["ReformulationStrategies"]


class ReformulationStrategies:
    """Strategies bound to one :class:`~.reformulations.Reformulations` configuration."""

    def __init__(self, family: Reformulations) -> None:
        self.family = family

    def __repr__(self) -> str:
        return f"{self.family!r}.strategies"

    def instances(self, *, max_n: int = MAX_N) -> st.SearchStrategy[ReformulationInstance]:
        """Base problems of this family's category with ``n <= max_n``, every cell reachable."""
        lo = CATEGORIES[self.family.category][0]
        self.family._check_n(max_n, "max_n")
        return st.builds(
            self.family.instance,
            n=st.integers(lo, max_n),
            index=st.integers(0, 2),
            seed=st.integers(0, 2**32 - 1),
        )

    def presentations(self) -> st.SearchStrategy[str]:
        """Presentations that apply to the category, shrinking toward ``"original"``."""
        return st.sampled_from(self.family.presentations)

    def case_space(
        self,
        *,
        min_n: int | None = None,
        max_n: int = MAX_N,
        presentations: Sequence[str] = ("original", "double_negation"),
        vocabularies: object = None,
    ) -> DesignSpace:
        """Whole cases — level, index (its cell is ``index % 3``), seed — with the prompts the
        design asks for them.

        ``vocabularies`` is the ordering family's (a catalog to scan); it is accepted, so every
        family's space is made the same way, and ignored. See :class:`~._design_cases.DesignSpace`.
        """
        lo = CATEGORIES[self.family.category][0] if min_n is None else min_n
        self.family._check_n(lo, "min_n")
        self.family._check_n(max_n, "max_n")
        return DesignSpace(self.family, presentations=presentations, min_n=lo, max_n=max_n, pairs=3)
