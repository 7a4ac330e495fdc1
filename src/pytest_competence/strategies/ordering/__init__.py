"""The ordering family: a total order over ``n`` named entities (CBE paper, arXiv:2610.22894, §4.1 and App. B.1).

A latent instance is a chain ``a_0 ≺ a_1 ≺ … ≺ a_{n-1}`` described by its ``n − 1`` adjacent
comparisons, and a yes/no query whose direction and gold answer are balanced over four cells.
Presentations render the same instance with a shuffled names line and premise order; the
*equivalent* presentation rewrites ``m`` premises with the converse phrase and swapped arguments
and reshuffles both, under Protocol L (the last ``m`` premises in chain order) or Protocol P (the
same ``m``, positions redrawn uniformly).

Every random choice is drawn from its own stream, keyed by ``(seed, n, index, stream)``, so the
same latent instances, names lines, premise orders and rewrite counts appear across vocabularies,
protocols, controls, processes and xdist workers (App. B.1 "Catalog").
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from pytest_competence.protocol import (
    Family,
    InvalidArgument,
    Item,
    Parsed,
    Prompt,
    parse_choice,
)

from .._checks import (
    check_levels,
    check_pairs,
    check_presentations,
    check_seed,
)
from ..names import first_names
from ._instances import (
    CELLS,
    FLIP_QUERY,
    INSTRUCTION,
    NEGATE,
    PAPER_HELD_IN,
    PAPER_HELD_OUT,
    PAPER_SPLITS,
    PRESENTATIONS,
    RESHUFFLE,
    REWRITE,
    SYSTEM_PROMPT,
    OrderingInstance,
    OrderingView,
    _choice,
    _distance,
    _distractors,
    _presentation,
    _vocabulary,
    distractor_count,
    draw_instance,
    prompts,
    render,
    rewrite_count,
    rewrite_positions,
    view_answer_map,
    views,
)
from .vocabularies import CATALOG, Vocabulary

if TYPE_CHECKING:
    from ._cases import CaseSpace
    from ._strategies import OrderingStrategies

__all__ = [
    "CELLS",
    "FLIP_QUERY",
    "INSTRUCTION",
    "NEGATE",
    "PAPER_HELD_IN",
    "PAPER_HELD_OUT",
    "PRESENTATIONS",
    "RESHUFFLE",
    "REWRITE",
    "SYSTEM_PROMPT",
    "Ordering",
    "OrderingInstance",
    "OrderingView",
    "catalog_families",
]


class Ordering(Family):
    """The ordering family, configured once and sampled by seed.

    Args:
        vocabulary: a catalog name (see :data:`~.vocabularies.CATALOG`) or a :class:`Vocabulary`.
        protocol: ``"P"`` (rewrite positions uniform over the chain) or ``"L"`` (the last ``m``).
        names: ``"pool"`` (2,500 first names) or ``"random"`` (five-letter strings, the control).
        names_line: ``"shuffled"``, or ``"chain"`` for the App. F.3 artifact (diagnostic only).
        distractors: ratio ρ ≥ 0; ``round(ρ(n − 1))`` premises over disjoint entities are added to
            every presentation.
        distance: ``None`` for the paper's endpoint query; an integer ``d ≥ 1`` asks about two
            interior entities ``d`` links apart, so the source/sink shortcut cannot answer.
        system_prompt, instruction: override the App. B.1 wording.
    """

    name = "ordering"
    level_name = "n"
    answer_space = ("yes", "no")
    shortcuts = ("ref:endpoint", "ref:forward-reader", "ref:names-order", "ref:threshold?n=64")

    hooks = {
        "shortcut_policies": ".policies:ORDERING_POLICIES",
        "ideal_answer": ".policies:ordering_ideal",
        "generate_options": "._generate:add_options",
        "generate_designs": "._generate:designs",
        "record_meta": "._generate:meta",
        "audit_components": "._audit:audit_components",
    }

    @classmethod
    def audit_policies(cls, levels: Sequence[int]) -> tuple[str, ...]:
        """The constant, coin and noisy policies, the endpoint shortcut, the forward reader, the
        names-order reader, and one threshold policy per declared level (ideal up to that size,
        wrong on reworded prompts beyond it)."""
        return (
            "ref:always-yes",
            "ref:always-no",
            "ref:coin",
            "ref:noisy?p=0.1",
            "ref:endpoint",
            "ref:forward-reader",
            "ref:names-order",
            *(f"ref:threshold?n={n}" for n in sorted(set(levels))),
        )

    default_levels = (4, 8, 16, 32, 64, 128, 256, 512, 1024)  # CBE paper, arXiv:2610.22894, §4.1
    training_presentations = ("original", "rewrite", "reshuffle", "equivalent")  # App. B.3
    named_splits = PAPER_SPLITS
    training_split = "paper-heldin"

    def __init__(
        self,
        *,
        vocabulary: str | Vocabulary = "front_behind",
        protocol: str = "P",
        names: str = "pool",
        names_line: str = "shuffled",
        distractors: float = 0.0,
        distance: int | None = None,
        system_prompt: str = SYSTEM_PROMPT,
        instruction: str = INSTRUCTION,
    ) -> None:
        self.vocabulary = _vocabulary(vocabulary)
        self._in_catalog = self.vocabulary.in_catalog
        self.protocol = _choice("protocol", protocol, ("P", "L"))
        self.names = _choice("names", names, ("pool", "random"))
        self.names_line = _choice("names_line", names_line, ("shuffled", "chain"))
        self.distractors = _distractors(distractors)
        self.distance = _distance(distance)
        self.system_prompt = system_prompt
        self.instruction = instruction

    def __repr__(self) -> str:
        defaults = Ordering()
        fields = [
            f"{k}={getattr(self, k)!r}"
            for k in ("protocol", "names", "names_line", "distractors", "distance")
            if getattr(self, k) != getattr(defaults, k)
        ]
        return f"Ordering(vocabulary={self.vocabulary.name!r}{''.join(', ' + f for f in fields)})"

    def with_options(self, **changes: object) -> Ordering:
        """A copy with some options changed (e.g. another vocabulary, same everything else)."""
        opts = dict(
            vocabulary=self.vocabulary,
            protocol=self.protocol,
            names=self.names,
            names_line=self.names_line,
            distractors=self.distractors,
            distance=self.distance,
            system_prompt=self.system_prompt,
            instruction=self.instruction,
        )
        opts.update(changes)
        return Ordering(**opts)  # type: ignore[arg-type]

    @property
    def min_n(self) -> int:
        """Smallest chain length this configuration can query."""
        return 2 if self.distance is None else self.distance + 3

    # -- latent instances ------------------------------------------------------------------------

    def check_n(self, n: object, name: str = "n") -> int:
        """``n`` if it is a chain length this configuration can draw, else :class:`InvalidArgument`
        naming ``name``."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise InvalidArgument(f"Expected an integer for {name}, but got {name}={n!r}")
        if n < self.min_n:
            why = (
                "a chain needs at least two entities"
                if self.distance is None
                else f"interior queries at distance={self.distance} need n >= distance + 3"
            )
            raise InvalidArgument(f"Expected {name} >= {self.min_n}, but got {name}={n}: {why}")
        pool = len(first_names())
        if self.names == "pool" and n + distractor_count(self.distractors, int(n)) > pool:
            raise InvalidArgument(
                f"{name}={n} needs more entities than the {pool}-name pool holds; "
                f"use names='random' for chains this long"
            )
        return int(n)

    def instance(self, n: int, index: int, seed: int = 1) -> OrderingInstance:
        """The latent instance ``index`` of level ``n`` for ``seed``; its cell is ``index % 4``."""
        n = self.check_n(n)
        check_seed(seed)
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or index < 0:
            raise InvalidArgument(f"Expected a non-negative integer index, but got index={index!r}")
        return draw_instance(
            n, index, seed, names=self.names, distractors=self.distractors, distance=self.distance
        )

    # -- presentations ---------------------------------------------------------------------------

    def rewrite_count(self, z: OrderingInstance) -> int:
        """``m``, uniform on ``{max(1, ⌊0.2(n−1)⌋), …, n−1}`` (CBE paper, arXiv:2610.22894, App. B.1), shared by P and L."""
        return rewrite_count(z)

    def rewrite_positions(self, z: OrderingInstance) -> frozenset[int]:
        """Chain-premise indices rewritten in the equivalent presentation, by protocol."""
        return rewrite_positions(z, self.protocol)

    def view(self, z: OrderingInstance, presentation: str) -> OrderingView:
        """The view a named presentation gives ``z`` (see :data:`PRESENTATIONS`)."""
        return views(z, (presentation,), self.protocol, self.names_line)[0]

    def gold(self, z: OrderingInstance, view: OrderingView) -> str:
        """The gold answer of ``z`` under ``view``: the oracle, mapped as the query is asked."""
        return view_answer_map(view)(z.gold)

    def render(self, z: OrderingInstance, view: OrderingView) -> str:
        """The user prompt for ``z`` laid out by ``view``, in the App. B.1 format."""
        return render(self.vocabulary, self.instruction, z, view)

    def prompt(self, z: OrderingInstance, presentation: str) -> Prompt:
        """``z`` rendered by one named presentation, with its gold answer and parameters."""
        return self.prompts(z, (presentation,))[0]

    def prompts(
        self,
        z: OrderingInstance,
        presentations: Sequence[str],
        shown: Sequence[OrderingView] | None = None,
    ) -> tuple[Prompt, ...]:
        """``z`` under each named presentation, laid out as the design lays it out (or by
        ``shown``, one view per presentation), with its gold answer and parameters."""
        if shown is None:
            shown = views(z, presentations, self.protocol, self.names_line)
        return prompts(self, z, presentations, shown)

    def params(self, z: OrderingInstance) -> dict[str, object]:
        """θ of ``z``: the level and the configuration that rendered it; a vocabulary outside
        the catalog adds its ``phrases``, with which the reference policies read the prompt."""
        return {
            "n": z.n,
            "vocabulary": self.vocabulary.name,
            "protocol": self.protocol,
            "query": "endpoints" if self.distance is None else f"distance={self.distance}",
            "distractors": self.distractors,
            "names": self.names,
            "names_line": self.names_line,
            "cell": "/".join(CELLS[z.index % 4]),
            **({} if self._in_catalog else {"phrases": self.vocabulary.phrases}),
        }

    # -- the engine's interface ------------------------------------------------------------------

    def design(
        self,
        *,
        levels: Sequence[int],
        pairs: int,
        seed: int = 1,
        presentations: Sequence[str] = ("original", "equivalent"),
    ) -> list[Item]:
        """The balanced, seeded design: ``pairs`` instances per level, each with every presentation."""
        self.check_design(levels=levels, pairs=pairs, seed=seed, presentations=presentations)
        return [self.item(n, i, seed, presentations) for n in levels for i in range(pairs)]

    def item(self, n: int, index: int, seed: int, presentations: Sequence[str]) -> Item:
        """Instance ``index`` of level ``n`` with its prompts, as :meth:`design` asks it."""
        z = self.instance(n, index, seed)
        return Item(z, self.prompts(z, presentations))

    def check_design(
        self, *, levels: object, pairs: object, seed: object, presentations: object
    ) -> None:
        """Raise :class:`InvalidArgument` naming the first argument :meth:`design` cannot use."""
        check_levels(levels, self.check_n, "a non-empty list of chain lengths, e.g. [4, 8, 16]")
        check_pairs(
            pairs,
            4,
            "pairs per level to be a positive multiple of 4 (the four balanced query cells)",
            200,
        )
        check_seed(seed)
        check_presentations(presentations, _presentation)

    def parse(self, text: object) -> Parsed:
        """yes/no from free text; anything ambiguous or unparseable is invalid (see ``parse_choice``)."""
        return parse_choice(text, self.answer_space)

    # -- Hypothesis -----------------------------------------------------------------------------

    @cached_property
    def strategies(self) -> OrderingStrategies:  # imported lazily: only it needs Hypothesis
        from ._strategies import OrderingStrategies

        return OrderingStrategies(self)

    def wider_case_space(self, *, max_n: int, presentations: Sequence[str]) -> CaseSpace | None:
        """Beyond the suite: every catalog vocabulary and, with distractors, cases without
        them; ``None`` for a vocabulary outside the catalog (no order to shrink in) without
        distractors."""
        space = self.strategies.case_space(
            max_n=max_n, presentations=presentations, vocabularies=True, distractors=True
        )
        return space if space.vary_vocabulary or space.vary_distractors else None


def catalog_families(**options: object) -> list[Ordering]:
    """One :class:`Ordering` per catalog vocabulary, all other options shared."""
    return [Ordering(vocabulary=v, **options) for v in CATALOG]  # type: ignore[arg-type]
