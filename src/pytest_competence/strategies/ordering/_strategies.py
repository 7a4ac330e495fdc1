"""Hypothesis strategies for the ordering family, built so that shrinking means something.

Each draw touches few choices: the chain length shrinks toward the smallest ``n``, the seed toward
0, the vocabulary (when drawn) toward the first in catalog order, the rewrite count toward one, and
every permutation toward the identity (one flag, then one seed — never 1,024 separate swaps).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from hypothesis import strategies as st

from .._bound import SEEDS, BoundStrategies, ordered_range
from ._cases import CaseSpace, OrderingCase
from ._instances import OrderingInstance, OrderingView

if TYPE_CHECKING:
    from . import Ordering  # noqa: F401 (the generic base names it)
from .vocabularies import CATALOG, Vocabulary

__all__ = ["CaseSpace", "OrderingCase", "OrderingStrategies"]


def _permutation(size: int) -> st.SearchStrategy[tuple[int, ...]]:
    """Identity at seed 0 (where shrinking lands), else a seeded uniform permutation."""
    return SEEDS.map(
        lambda s: (
            tuple(range(size))
            if s == 0
            else tuple(np.random.default_rng(s).permutation(size).tolist())
        )
    )


class OrderingStrategies(BoundStrategies["Ordering"]):
    """Strategies bound to one :class:`~.ordering.Ordering` configuration."""

    def instances(
        self, *, min_n: int | None = None, max_n: int = 64
    ) -> st.SearchStrategy[OrderingInstance]:
        """Latent instances with ``min_n <= n <= max_n``; all four query cells are reachable."""
        lo = self.family.min_n if min_n is None else self.family.check_n(min_n, "min_n")
        hi = self.family.check_n(max_n, "max_n")
        ordered_range(lo, hi)
        return st.builds(
            self.family.instance, n=st.integers(lo, hi), index=st.integers(0, 3), seed=SEEDS
        )

    def views(
        self,
        z: OrderingInstance,
        *,
        rewrite: bool = True,
        reshuffle: bool = True,
        negated: bool = False,
    ) -> st.SearchStrategy[OrderingView]:
        """Views of ``z`` an equivalent presentation may take: any permutations, any rewrite set.

        The rewrite count shrinks toward one and positions toward the last ``m`` links in chain
        order (Protocol L's choice); seed 0 of a permutation is the identity.
        """
        links = z.n - 1
        fixed = self.family.view(z, "original")

        @st.composite
        def draw(data: st.DrawFn) -> OrderingView:
            names, premises = fixed.names_order, fixed.premise_order
            if reshuffle:
                names = data(_permutation(len(z.entities)), label="names_order")
                premises = data(_permutation(len(z.premises)), label="premise_order")
            rewritten: frozenset[int] = frozenset()
            if rewrite:
                m = data(st.integers(1, links), label="rewrite_count")
                seed = data(SEEDS, label="rewrite_positions")
                if seed == 0:
                    rewritten = frozenset(range(links - m, links))
                else:
                    picks = np.random.default_rng(seed).choice(links, size=m, replace=False)
                    rewritten = frozenset(picks.tolist())
            return OrderingView(names, premises, rewritten, negated=negated and rewrite)

        return draw()

    def case_space(
        self,
        *,
        min_n: int | None = None,
        max_n: int = 64,
        presentations: Sequence[str] = ("original", "equivalent"),
        vocabularies: bool = False,
        distractors: bool = False,
    ) -> CaseSpace:
        """The space of whole cases — θ, latent instance, every presentation's layout — of
        this configuration; ``vocabularies`` and ``distractors`` widen it beyond (every catalog
        vocabulary; cases without the configuration's distractors).

        See :class:`~._cases.CaseSpace`; :meth:`cases` draws from it.
        """
        return CaseSpace(
            self.family,
            presentations=presentations,
            min_n=min_n,
            max_n=max_n,
            vocabularies=vocabularies,
            distractors=distractors,
        )

    def cases(
        self,
        *,
        min_n: int | None = None,
        max_n: int = 64,
        presentations: Sequence[str] = ("original", "equivalent"),
        vocabularies: bool = False,
        distractors: bool = False,
    ) -> st.SearchStrategy[OrderingCase]:
        """Whole cases: ``n``, the latent instance and each presentation's names line, premise
        order and rewritten premises, each drawn as one choice; ``vocabularies=True`` also draws
        the vocabulary from the catalog, ``distractors=True`` whether a configuration with
        distractors shows them. ``case.prompts()`` renders every presentation.
        """
        return self.case_space(
            min_n=min_n,
            max_n=max_n,
            presentations=presentations,
            vocabularies=vocabularies,
            distractors=distractors,
        ).strategy()

    def vocabularies(self) -> st.SearchStrategy[Vocabulary]:
        """Catalog vocabularies, shrinking toward the first (``front_behind``)."""
        return st.sampled_from(CATALOG)
