"""Cases of the families whose design draws instance ``index`` of level ``n`` from a seed.

For Horn, reformulations, intervention worlds and every rule-induction family, an instance is
fixed by its design coordinates — the level ``n``, the instance index and the seed — and its
prompts by the declared presentations. A :class:`DesignCase` is those three choices, so a
failing case shrinks ``n`` toward the family's smallest level, the index toward 0 (which also
moves the cell: Horn's positive programs, the reformulations' "yes", the first transition) and
the seed toward 0. Its prompts are the family's own :meth:`item` — the very prompts its design
asks for that instance — so a failing design instance is a case as it stands
(:meth:`DesignSpace.from_item`) and the model has already answered it.

The ordering family has a richer space (:mod:`.ordering._cases`): there each presentation's
layout is a choice too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from hypothesis import strategies as st

from pytest_competence.protocol import InvalidArgument, Item, Parsed, Prompt

from ._bound import ordered_range

__all__ = ["DesignCase", "DesignSpace"]

INDEX_MAX = 2**16 - 1  # the index strategies of these families draw from the same range
SEED_MAX = 2**32 - 1
_COORDINATES = ("n", "index", "seed")
# Prompt parameters that repeat the case (or the family's configuration) rather than describe it.
_NOT_FACTS = frozenset({"n", "index", "seed", "options", "cluster"})


@dataclass(frozen=True)
class DesignCase:
    """One point of a :class:`DesignSpace`: the design coordinates of one instance."""

    n: int
    index: int
    seed: int
    space: DesignSpace | None = field(default=None, compare=False, repr=False)

    def prompts(self) -> tuple[Prompt, ...]:
        """Every declared presentation's prompt (see :meth:`DesignSpace.prompts`)."""
        if self.space is None:
            raise InvalidArgument("This case has no space; draw it from a DesignSpace strategy")
        return self.space.prompts(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))  # the space is context, not data

    @property
    def fields(self) -> dict[str, Any]:
        """The case as plain data (JSON-able), without its space."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "space"}


class DesignSpace:
    """The instances of one family configuration and its presentations, as a Hypothesis strategy.

    Args:
        family: a configured family with ``item(n, index, seed, presentations)`` (what its
            ``design`` asks per instance), ``check_design`` and ``parse``.
        presentations: the declared presentation names, as the design takes them.
        min_n, max_n: the range of ``n``, already checked by the family.
        pairs: the smallest ``pairs`` the family's design accepts, so that ``check_design``
            can name a bad presentation exactly as a declaration would.
    """

    def __init__(
        self, family: Any, *, presentations: Sequence[str], min_n: int, max_n: int, pairs: int = 1
    ) -> None:
        ordered_range(min_n, max_n)
        if isinstance(presentations, str):
            presentations = (presentations,)
        family.check_design(
            levels=list(dict.fromkeys([min_n, max_n])),
            pairs=pairs,
            seed=0,
            presentations=presentations,
        )
        self.family = family
        self.presentations = tuple(presentations)
        self.min_n, self.max_n = int(min_n), int(max_n)

    def __repr__(self) -> str:
        return (
            f"DesignSpace({self.family!r}, presentations={list(self.presentations)!r}, "
            f"min_n={self.min_n}, max_n={self.max_n})"
        )

    def signature(self) -> str:
        """Everything that gives a stored choice sequence its meaning (for database keys)."""
        return f"design-case/1 {self.family.name} {self!r}"

    # -- choices -------------------------------------------------------------------------------

    def strategy(self) -> st.SearchStrategy[DesignCase]:
        """Cases drawn as three choices — ``n``, index, seed — in the order of :meth:`choices`."""

        @st.composite
        def cases(draw: st.DrawFn) -> DesignCase:
            n = draw(st.integers(self.min_n, self.max_n), label="n")
            index = draw(st.integers(0, INDEX_MAX), label="index")
            seed = draw(st.integers(0, SEED_MAX), label="seed")
            return DesignCase(n, index, seed, self)

        return cases()

    def choices(self, case: DesignCase) -> tuple[int, ...]:
        """The choice sequence that makes :meth:`strategy` draw ``case``."""
        return (case.n, case.index, case.seed)

    def from_choices(self, choices: Sequence[object]) -> DesignCase | None:
        """The case a choice sequence stands for, or ``None`` if it does not fit this space."""
        values = list(choices)
        bounds = ((self.min_n, self.max_n), (0, INDEX_MAX), (0, SEED_MAX))
        if len(values) != len(bounds) or not all(
            isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi
            for v, (lo, hi) in zip(values, bounds)
        ):
            return None
        n, index, seed = values
        assert isinstance(n, int) and isinstance(index, int) and isinstance(seed, int)
        return DesignCase(n, index, seed, self)

    def sort_key(self, case: DesignCase) -> tuple[int, ...]:
        """Hypothesis's order on cases of this space: smaller is simpler."""
        return self.choices(case)

    def case(self, n: int, index: int = 0, seed: int = 0) -> DesignCase:
        """A case by hand (e.g. for ``@example``)."""
        found = self.from_choices((n, index, seed))
        if found is None:
            raise InvalidArgument(
                f"Expected {self.min_n} <= n <= {self.max_n}, 0 <= index <= {INDEX_MAX} and "
                f"0 <= seed <= {SEED_MAX} for {self!r}, but got n={n!r}, index={index!r}, "
                f"seed={seed!r}"
            )
        return found

    def from_design(self, z: Any) -> DesignCase | None:
        """The case of a design's latent instance ``z`` (one with ``n``, ``index`` and ``seed``);
        ``None`` when it has no coordinates or lies outside this space."""
        coordinates = [getattr(z, k, None) for k in _COORDINATES]
        return self.from_choices(coordinates)

    def from_item(self, item: Item) -> DesignCase | None:
        """The case of a design item: from its latent instance, else from its prompts'
        parameters (a rule-induction task does not carry its coordinates; its prompts do)."""
        found = self.from_design(item.instance)
        if found is None and all(k in item.params for k in _COORDINATES):
            found = self.from_choices([item.params[k] for k in _COORDINATES])
        return found

    def with_n(self, case: DesignCase, n: int) -> DesignCase:
        """The same index and seed at level ``n``."""
        return replace(case, n=n)

    def earlier_vocabularies(self, case: DesignCase) -> list[DesignCase]:
        """None: these families have no catalog of vocabularies to scan."""
        return []

    # -- rendering -----------------------------------------------------------------------------

    def family_of(self, case: DesignCase) -> Any:
        """The family that renders and parses ``case``: this space's, for every case."""
        return self.family

    def item(self, case: DesignCase) -> Item:
        """The design's item at ``case``'s coordinates."""
        return self.family.item(case.n, case.index, case.seed, self.presentations)

    def prompts(self, case: DesignCase) -> tuple[Prompt, ...]:
        """Every declared presentation of ``case``, exactly as the family's design renders it."""
        return self.item(case).prompts

    def parse(self, text: object) -> Parsed:
        """The family's reading of one answer."""
        return self.family.parse(text)

    def describe(self, case: DesignCase) -> dict[str, Any]:
        """The case's coordinates, θ (the parameters its prompts share) and gold answers."""
        prompts = self.prompts(case)
        facts = {
            k: v
            for k, v in prompts[0].params.items()
            if k not in _NOT_FACTS
            and v is not None
            and all(p.params.get(k) == v for p in prompts[1:])
        }
        return {
            "family": self.family.name,
            "n": case.n,
            **facts,
            "gold": {p.presentation: p.gold for p in prompts},
            "latent_index": case.index,
            "latent_seed": case.seed,
        }

    def summary(self, case: DesignCase) -> str:
        """``describe`` in one line of words."""
        d = self.describe(case)
        golds = d["gold"]
        facts = [
            f"{k}={v}"
            for k, v in d.items()
            if k not in ("family", "n", "gold", "latent_index", "latent_seed")
        ]
        first = next(iter(golds))
        others = {p: g for p, g in golds.items() if g != golds[first]}
        if not others or len(others) <= 3 and self.family.answer_space:
            exceptions = ", ".join(f"{g} for {p}" for p, g in others.items())
            answer = f"gold {golds[first]}" + (f" ({exceptions})" if exceptions else "")
        else:  # open answers (rule induction: each variation its own list), or many exceptions
            answer = f"gold {golds[first]} ({first}) and {len(golds) - 1} more prompts"
        return ", ".join(
            [
                f"{d['family']} n={case.n}",
                *facts,
                answer,
                f"latent index={case.index} seed={case.seed}",
            ]
        )
