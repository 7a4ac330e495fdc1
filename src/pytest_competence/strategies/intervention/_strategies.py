"""Hypothesis strategies for the intervention-worlds family, built to shrink well.

A draw is three choices — level, index, seed — so a failing cluster shrinks toward the smallest
theory, the first transition (TRUE → FALSE) and seed 0, and a cell toward ``"base/TFU/generate"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hypothesis import strategies as st

from pytest_competence.protocol import InvalidArgument

from .._bound import SEEDS, BoundStrategies, ordered_range
from .._design_cases import DesignSpace
from ._cells import IW_PRESENTATIONS, MIN_N, IWInstance

if TYPE_CHECKING:
    from . import Intervention  # noqa: F401 (the generic base names it)

__all__ = ["InterventionStrategies"]


class InterventionStrategies(BoundStrategies["Intervention"]):
    """Strategies bound to one :class:`~.intervention.Intervention` configuration."""

    def instances(
        self, *, min_n: int = MIN_N, max_n: int = 32, transition: int | None = None
    ) -> st.SearchStrategy[IWInstance]:
        """Clusters with ``min_n <= n <= max_n``; ``transition`` (0–5) fixes the transition."""
        lo = self.family.check_n(min_n, "min_n")
        hi = self.family.check_n(max_n, "max_n")
        ordered_range(lo, hi)
        if transition is not None and (isinstance(transition, bool) or transition not in range(6)):
            raise InvalidArgument(
                f"Expected transition to be None or an index 0-5 into TRANSITIONS, but got "
                f"transition={transition!r}"
            )
        index = (
            st.integers(0, 2**16)
            if transition is None
            else st.integers(0, 2**12).map(lambda k: 6 * k + transition)
        )
        return st.builds(self.family.instance, n=st.integers(lo, hi), index=index, seed=SEEDS)

    def presentations(self) -> st.SearchStrategy[str]:
        """Cell names, shrinking toward ``"base/TFU/generate"``."""
        return st.sampled_from(IW_PRESENTATIONS)

    def case_space(
        self,
        *,
        min_n: int = MIN_N,
        max_n: int = 32,
        presentations: Sequence[str] = IW_PRESENTATIONS,
        vocabularies: object = None,
    ) -> DesignSpace:
        """Whole clusters — level, index (its transition is ``index % 6``), seed — with the
        prompts of the selected cells, as the design asks them.

        ``vocabularies`` is the ordering family's (a catalog to scan); it is accepted, so every
        family's space is made the same way, and ignored. See :class:`~._design_cases.DesignSpace`.
        """
        lo = self.family.check_n(min_n, "min_n")
        hi = self.family.check_n(max_n, "max_n")
        return DesignSpace(self.family, presentations=presentations, min_n=lo, max_n=hi, pairs=6)
