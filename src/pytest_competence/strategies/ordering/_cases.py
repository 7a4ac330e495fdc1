"""Cases of the ordering family: θ, a latent instance and every presentation's layout.

A *case* is what a minimal failing example shows: the size ``n``, the vocabulary, whether the
distractors are there, the latent instance (index and seed), and how the presentations lay it
out — names line, premise order, which premises are rewritten. Each is one Hypothesis choice, so
shrinking touches few of them: ``n`` toward the smallest, the vocabulary toward the first in catalog
order, distractors toward none, the rewrite count toward one, every permutation toward the identity
(its seed toward 0) — never a thousand swaps.

Layout seeds reuse the family's own random streams: seed ``s + 1`` gives the layout the family's
design gives instance ``(n, index, s)``, so a failing design instance is a case as it stands
(:meth:`CaseSpace.from_design`) and its prompts are exactly those the model already answered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from pytest_competence.protocol import InvalidArgument, Item, Parsed, Prompt

from ._case_words import describe, summary
from ._instances import (
    _ORIGINAL,
    _SHUFFLED,
    PRESENTATIONS,
    RESHUFFLE,
    REWRITE,
    OrderingInstance,
    OrderingView,
    _presentation,
    seeded_layout,
    seeded_rewrites,
    view_of,
)

if TYPE_CHECKING:
    from . import Ordering
from .vocabularies import CATALOG

__all__ = ["CaseSpace", "OrderingCase"]

_INDEX_MAX = 2**31 - 1  # latent index; its cell is index % 4
_SEED_MAX = 2**32 - 1  # latent seed (the family's streams take 32-bit words)
_LAYOUT_MAX = _SEED_MAX + 1  # 0 is the identity, s + 1 the family's stream for seed s


@dataclass(frozen=True)
class OrderingCase:
    """One point of a :class:`CaseSpace`: θ, the latent instance and the presentations' layouts.

    ``original`` and ``shuffled`` are ``(names line, premise order)`` seeds of the two layouts the
    presentations use (reshuffling presentations share the second); 0 is the identity, chain
    order. ``rewrites`` premises (at most ``n − 1``) are rewritten: the last ones in chain order
    when ``positions`` is 0, else positions drawn from that seed.
    """

    n: int
    vocabulary: str
    distractors: bool
    index: int
    seed: int
    original: tuple[int, int] = (0, 0)
    shuffled: tuple[int, int] = (0, 0)
    rewrites: int = 1
    positions: int = 0
    space: CaseSpace | None = field(default=None, compare=False, repr=False)

    def prompts(self) -> tuple[Prompt, ...]:
        """Every presentation's prompt, the original first (see :meth:`CaseSpace.prompts`)."""
        if self.space is None:
            raise InvalidArgument("This case has no space; draw it from a CaseSpace strategy")
        return self.space.prompts(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        # Hypothesis's pretty-printer lists every dataclass field; the space is context, not data.
        printer.text(repr(self))

    @property
    def fields(self) -> dict[str, Any]:
        """The case as plain data (JSON-able), without its space."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "space"}


class CaseSpace:
    """The cases of one ordering configuration and its presentations, as a Hypothesis strategy.

    Args:
        family: the :class:`~.ordering.Ordering` configuration (names, protocol, distance, …).
        presentations: names, the original first; they decide which layouts a case draws.
        min_n, max_n: the range of ``n`` (``min_n`` defaults to the smallest the family queries).
        vocabularies: draw the vocabulary from the catalog (shrinking toward the first) instead of
            keeping the family's.
        distractors: in a configuration with distractors, draw cases without them too
            (shrinking toward none) instead of keeping them in every case.

    Without ``vocabularies`` and ``distractors`` every case is one the configuration's own
    design could draw: the suite's declared space, where minimisation looks first.
    """

    def __init__(
        self,
        family: Ordering,
        *,
        presentations: Sequence[str] = ("original", "equivalent"),
        min_n: int | None = None,
        max_n: int = 64,
        vocabularies: bool = False,
        distractors: bool = False,
    ) -> None:
        if isinstance(presentations, str) or not presentations:
            raise InvalidArgument(
                f"Expected a non-empty list of presentation names, but got "
                f"presentations={presentations!r}"
            )
        self.family = family
        self.presentations = tuple(presentations)
        transforms = [_presentation(p) for p in self.presentations]
        self.min_n = family.min_n if min_n is None else family.check_n(min_n, "min_n")
        self.max_n = family.check_n(max_n, "max_n")
        if self.min_n > self.max_n:
            raise InvalidArgument(
                f"Expected min_n <= max_n, but got min_n={self.min_n}, max_n={self.max_n}"
            )
        self.vary_vocabulary = bool(vocabularies) and family.vocabulary in CATALOG
        self.has_distractors = family.distractors > 0
        self.vary_distractors = bool(distractors) and self.has_distractors
        self.shuffles_names = family.names_line == "shuffled"
        self.reshuffles = any(RESHUFFLE in t for t in transforms)
        self.rewrites = any(REWRITE in t for t in transforms)
        self._families: dict[tuple[str, bool], Ordering] = {}

    def __repr__(self) -> str:
        varied = f", distractors={self.vary_distractors}" if self.has_distractors else ""
        return (
            f"CaseSpace({self.family!r}, presentations={list(self.presentations)!r}, "
            f"min_n={self.min_n}, max_n={self.max_n}, vocabularies={self.vary_vocabulary}"
            f"{varied})"
        )

    def signature(self) -> str:
        """Everything that gives a stored choice sequence its meaning (for database keys)."""
        return f"ordering-case/1 {self!r} names={self.family.names} distance={self.family.distance}"

    # -- choices -------------------------------------------------------------------------------

    def strategy(self) -> st.SearchStrategy[OrderingCase]:
        """Cases drawn one choice per field, in the order :meth:`choices` lists them."""
        links = max(1, self.max_n - 1)

        @st.composite
        def cases(draw: st.DrawFn) -> OrderingCase:
            values: list[Any] = [draw(st.integers(self.min_n, self.max_n), label="n")]
            if self.vary_vocabulary:
                values.append(draw(st.integers(0, len(CATALOG) - 1), label="vocabulary"))
            if self.vary_distractors:
                values.append(draw(st.booleans(), label="distractors"))
            values.append(draw(st.integers(0, _INDEX_MAX), label="index"))
            values.append(draw(st.integers(0, _SEED_MAX), label="seed"))
            for _ in range(self._layout_choices()):
                values.append(draw(st.integers(0, _LAYOUT_MAX), label="layout"))
            if self.rewrites:
                values.append(draw(st.integers(1, links), label="rewrites"))
                values.append(draw(st.integers(0, _LAYOUT_MAX), label="positions"))
            case = self.from_choices(values)
            assert case is not None
            return case

        return cases()

    def _layout_choices(self) -> int:
        return (1 + self.shuffles_names) * (1 + self.reshuffles)

    def choices(self, case: OrderingCase) -> tuple[int | bool, ...]:
        """The choice sequence that makes :meth:`strategy` draw ``case``."""
        out: list[int | bool] = [case.n]
        if self.vary_vocabulary:
            out.append(next(i for i, v in enumerate(CATALOG) if v.name == case.vocabulary))
        if self.vary_distractors:
            out.append(case.distractors)
        out += [case.index, case.seed]
        for layout in (case.original, case.shuffled)[: 1 + self.reshuffles]:
            out += layout if self.shuffles_names else layout[1:]
        if self.rewrites:
            out += [case.rewrites, case.positions]
        return tuple(out)

    def from_choices(self, choices: Sequence[object]) -> OrderingCase | None:
        """The case a choice sequence stands for, or ``None`` if it does not fit this space."""
        values: list[Any] = list(choices)
        bounds: list[tuple[int, int]] = [(self.min_n, self.max_n)]
        if self.vary_vocabulary:
            bounds.append((0, len(CATALOG) - 1))
        if self.vary_distractors:
            bounds.append((False, True))
        bounds += [(0, _INDEX_MAX), (0, _SEED_MAX)] + [(0, _LAYOUT_MAX)] * self._layout_choices()
        if self.rewrites:
            bounds += [(1, max(1, self.max_n - 1)), (0, _LAYOUT_MAX)]
        if len(values) != len(bounds) or not all(
            isinstance(v, int) and isinstance(v, bool) == isinstance(lo, bool) and lo <= v <= hi
            for v, (lo, hi) in zip(values, bounds)
        ):
            return None
        it = iter(values)
        n = next(it)
        voc = CATALOG[next(it)].name if self.vary_vocabulary else self.family.vocabulary.name
        keep = bool(next(it)) if self.vary_distractors else self.has_distractors
        index, seed = next(it), next(it)
        layouts = []
        for _ in range(1 + self.reshuffles):
            names = next(it) if self.shuffles_names else 0
            layouts.append((names, next(it)))
        original = layouts[0]
        shuffled = layouts[1] if self.reshuffles else (0, 0)
        rewrites, positions = (next(it), next(it)) if self.rewrites else (1, 0)
        return OrderingCase(
            n, voc, keep, index, seed, original, shuffled, rewrites, positions, self
        )

    def sort_key(self, case: OrderingCase) -> tuple[int, ...]:
        """Hypothesis's order on cases of this space: smaller is simpler."""
        return tuple(int(c) for c in self.choices(case))

    def case(self, n: int, **values: Any) -> OrderingCase:
        """A case by hand (e.g. for ``@example``); unspecified fields take their simplest value."""
        base = OrderingCase(n, self.family.vocabulary.name, self.has_distractors, 0, 0, space=self)
        case = replace(base, **values)
        if self.from_choices(self.choices(case)) != case:
            raise InvalidArgument(f"{case!r} is not a case of {self!r}")
        return case

    def from_design(self, z: OrderingInstance) -> OrderingCase | None:
        """The case of design instance ``z``: the same prompts when ``n <= 1024``.

        ``None`` when ``z`` lies outside this space. Beyond 1,024 people the design rewrites each
        premise with probability 1/2; the case keeps the count and seeds the positions.
        """
        if not self.min_n <= z.n <= self.max_n or z.seed > _SEED_MAX or z.index > _INDEX_MAX:
            return None
        s = z.seed + 1
        layout = (s if self.shuffles_names else 0, s)
        case = OrderingCase(
            z.n,
            self.family.vocabulary.name,
            self.has_distractors,
            z.index,
            z.seed,
            original=layout,
            shuffled=layout if self.reshuffles else (0, 0),
            space=self,
        )
        if self.rewrites:
            last = self.family.protocol == "L" and z.n <= 1024
            case = replace(
                case, rewrites=max(1, self.family.rewrite_count(z)), positions=0 if last else s
            )
        return case if self.from_choices(self.choices(case)) == case else None

    def from_item(self, item: Item) -> OrderingCase | None:
        """The case of a design item (see :meth:`from_design`)."""
        return self.from_design(item.instance)

    def with_n(self, case: OrderingCase, n: int) -> OrderingCase:
        """The same latent seed, layout seeds and rewrite count at size ``n``."""
        return replace(case, n=n)

    def earlier_vocabularies(self, case: OrderingCase) -> list[OrderingCase]:
        """``case`` in every catalog vocabulary before its own, in catalog order."""
        if not self.vary_vocabulary:
            return []
        names = [v.name for v in CATALOG]
        return [replace(case, vocabulary=v) for v in names[: names.index(case.vocabulary)]]

    # -- rendering -----------------------------------------------------------------------------

    def family_of(self, case: OrderingCase) -> Ordering:
        """The family configuration that renders ``case`` (its vocabulary, its distractors)."""
        key = (case.vocabulary, case.distractors)
        if key not in self._families:
            options: dict[str, object] = {"distractors": self.family.distractors * case.distractors}
            if case.vocabulary != self.family.vocabulary.name:
                options["vocabulary"] = case.vocabulary
            self._families[key] = self.family.with_options(**options)
        return self._families[key]

    def instance(self, case: OrderingCase) -> OrderingInstance:
        return self.family_of(case).instance(case.n, case.index, case.seed)

    def rewritten(self, case: OrderingCase, z: OrderingInstance) -> frozenset[int]:
        """Chain-premise indices the rewriting presentations word with the converse phrase."""
        return seeded_rewrites(z, case.rewrites, case.positions)

    def views(
        self, case: OrderingCase, z: OrderingInstance | None = None
    ) -> tuple[OrderingView, ...]:
        """One view per presentation, laid out as ``case`` says."""
        z = self.instance(case) if z is None else z
        names = self.shuffles_names
        layouts = {_ORIGINAL: seeded_layout(z, case.original, _ORIGINAL, names)}
        if self.reshuffles:
            layouts[_SHUFFLED] = seeded_layout(z, case.shuffled, _SHUFFLED, names)
        positions = self.rewritten(case, z) if self.rewrites else frozenset()
        return tuple(
            view_of(
                layouts[_SHUFFLED if RESHUFFLE in transforms else _ORIGINAL],
                positions if REWRITE in transforms else frozenset(),
                transforms,
            )
            for transforms in map(PRESENTATIONS.__getitem__, self.presentations)
        )

    def prompts(self, case: OrderingCase) -> tuple[Prompt, ...]:
        """Every presentation of ``case`` rendered, with its gold answer and θ."""
        family = self.family_of(case)
        z = family.instance(case.n, case.index, case.seed)
        return family.prompts(z, self.presentations, self.views(case, z))

    def parse(self, text: object) -> Parsed:
        return self.family.parse(text)

    def describe(self, case: OrderingCase) -> dict[str, Any]:
        """θ of ``case`` and how it is laid out, as plain data for reports."""
        return describe(self, case)

    def summary(self, case: OrderingCase) -> str:
        """``describe`` in one line of words."""
        return summary(self, case)
