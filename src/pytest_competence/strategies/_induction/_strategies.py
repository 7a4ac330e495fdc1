"""Hypothesis strategies for the rule-induction families (systematicity paper, arXiv:2609.13948), built to shrink well.

A task is three choices — level, index, seed — so a failing task shrinks toward the smallest
level, index 0 and seed 0; a presentation shrinks toward ``"original"``, then toward the first
isomorphism type and its first variation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hypothesis import strategies as st

from .._bound import SEEDS, BoundStrategies, ordered_range
from .._design_cases import DesignSpace

if TYPE_CHECKING:
    from . import RuleInduction, Task  # noqa: F401 (the generic base names it)

__all__ = ["InductionStrategies"]

_INDICES = st.integers(0, 2**16 - 1)


class InductionStrategies(BoundStrategies["RuleInduction"]):
    """Strategies bound to one rule-induction family configuration."""

    def _range(self, min_n: int | None, max_n: int | None) -> tuple[int, int]:
        lo, hi = self.family.levels
        lo = lo if min_n is None else min_n
        hi = hi if max_n is None else max_n
        self.family.check_level(lo, "min_n")
        self.family.check_level(hi, "max_n")
        return ordered_range(lo, hi)

    def _levels(self, min_n: int | None, max_n: int | None) -> st.SearchStrategy[int]:
        return st.integers(*self._range(min_n, max_n))

    def presentations(self) -> st.SearchStrategy[str]:
        """``"original"`` or ``"TYPE:k"``, shrinking toward the original task."""
        names = [name for name, _, _ in self.family.expand(self.family.presentations)]
        return st.sampled_from(names)

    def tasks(
        self,
        *,
        min_n: int | None = None,
        max_n: int | None = None,
        presentation: st.SearchStrategy[str] | None = None,
    ) -> st.SearchStrategy[Task]:
        """Latent tasks with ``min_n <= n <= max_n`` (default: the family's whole range) as one
        presentation shows them (default: the original task), answers from the interpreter."""
        shown = st.just("original") if presentation is None else presentation
        return st.builds(
            lambda n, index, seed, name: self.family.shown(
                n=n, index=index, seed=seed, presentation=name
            ),
            self._levels(min_n, max_n),
            _INDICES,
            SEEDS,
            shown,
        )

    def case_space(
        self,
        *,
        min_n: int | None = None,
        max_n: int | None = None,
        presentations: Sequence[str] | None = None,
        vocabularies: object = None,
    ) -> DesignSpace:
        """Whole tasks — level, index, seed — with the prompts the design asks for them (every
        declared isomorphism type expanded to its variations; default: all presentations).

        ``vocabularies`` is the ordering family's (a catalog to scan); it is accepted, so every
        family's space is made the same way, and ignored. See :class:`~._design_cases.DesignSpace`.
        """
        lo, hi = self._range(min_n, max_n)
        shown = self.family.presentations if presentations is None else presentations
        return DesignSpace(self.family, presentations=shown, min_n=lo, max_n=hi)
