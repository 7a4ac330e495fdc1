"""The ordering family: a total order over ``n`` named entities (seeds/000 §4.1 and App. B.1).

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

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_competence.protocol import (
    AnswerMap,
    AuditComponent,
    Family,
    InvalidArgument,
    Item,
    Parsed,
    Prompt,
    Transform,
    compose,
    parse_choice,
)
from .._checks import (
    check_levels,
    check_pairs,
    check_presentations,
    check_seed,
)
from .._rng import stream_rng
from ..names import first_names, random_names
from .vocabularies import CATALOG, Vocabulary, vocabulary

if TYPE_CHECKING:
    from ._strategies import OrderingStrategies

__all__ = [
    "CELLS",
    "INSTRUCTION",
    "PRESENTATIONS",
    "SYSTEM_PROMPT",
    "Ordering",
    "OrderingInstance",
    "OrderingView",
]

SYSTEM_PROMPT = "You are a helpful assistant. Answer logical reasoning questions concisely."
INSTRUCTION = "Provide your answer only as yes or no. Answer:"

#: The four balanced query cells: (phrase used in the question, gold answer). Instance ``i`` of a
#: level falls in cell ``i % 4``, so a multiple of four instances per level balances them exactly.
CELLS: tuple[tuple[str, str], ...] = (
    ("forward", "yes"),
    ("forward", "no"),
    ("converse", "yes"),
    ("converse", "no"),
)

# One independent random stream per kind of choice (see the module docstring).
_NAMES, _QUERY, _ORIGINAL, _SHUFFLED, _COUNT, _POSITIONS, _COINS, _RANDOM_NAMES, _DISTRACT = range(9)


@dataclass(frozen=True)
class OrderingInstance:
    """A latent instance ``z``: the chain, optional distractor chain and the query (seeds/000 §4.1).

    ``query`` holds chain positions ``(i, j)``; the question asks whether ``a_i`` stands in the
    ``direction`` phrase's relation to ``a_j``. The oracle: forward ``a_i ≺ a_j`` iff ``i < j``.
    """

    n: int
    index: int
    seed: int
    chain: tuple[str, ...]
    query: tuple[int, int]
    direction: str
    distractors: tuple[str, ...] = ()

    @property
    def gold(self) -> str:
        """The exact oracle answer ``y*(z)``."""
        i, j = self.query
        return "yes" if (i < j) == (self.direction == "forward") else "no"

    @property
    def distance(self) -> int:
        """Chain distance between the two queried entities."""
        return abs(self.query[0] - self.query[1])

    @property
    def id(self) -> str:
        return f"ordering/seed={self.seed}/n={self.n}/{self.index}"

    @property
    def entities(self) -> tuple[str, ...]:
        return self.chain + self.distractors

    @property
    def premises(self) -> tuple[tuple[str, str], ...]:
        """Adjacent comparisons ``(a_i, a_{i+1})``: the chain's ``n − 1``, then the distractors'."""
        return tuple(zip(*_link_ends(self)))


def _link_ends(z: OrderingInstance) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The first and the second arguments of :attr:`OrderingInstance.premises`, as two tuples.

    Two slices are much cheaper than ``n`` pairs, which matters when rendering 1,024-entity chains.
    """
    chain, distractors = z.chain, z.distractors
    return chain[:-1] + distractors[:-1], chain[1:] + distractors[1:]


def _premise_count(z: OrderingInstance) -> int:
    """``len(z.premises)``, without building the pairs."""
    return len(z.chain) - 1 + max(len(z.distractors) - 1, 0)


@dataclass(frozen=True)
class OrderingView:
    """How one presentation lays out an instance: names line, premise order, rewritten premises.

    ``names_order`` permutes :attr:`OrderingInstance.entities`; ``premise_order`` permutes
    :attr:`OrderingInstance.premises`; ``rewritten`` holds chain-premise indices worded with the
    converse phrase and swapped arguments — or, when ``negated``, as the negation of that converse
    phrase with the same arguments ("Bob is not in front of Amy"), true under a strict total order.
    ``flip_query`` asks the query with the other phrase, which maps the gold answer yes↔no.
    """

    names_order: tuple[int, ...]
    premise_order: tuple[int, ...]
    rewritten: frozenset[int] = frozenset()
    negated: bool = False
    flip_query: bool = False


RESHUFFLE = Transform("reshuffle")
REWRITE = Transform("rewrite")
NEGATE = Transform("negate")
FLIP_QUERY = Transform("flip_query", AnswerMap.swap("yes", "no"))

#: Named presentations, each a composition of transforms applied to the original view.
#: The vocabularies of seeds/000's GRPO training (App. B.3) and of its clean held-out
#: evaluation (App. G): the spatial-line and nonce groups are held out.
_SPATIAL_OR_NONCE = ("spatial line", "nonce")
PAPER_HELD_IN = tuple(v.name for v in CATALOG if v.group not in _SPATIAL_OR_NONCE)
PAPER_HELD_OUT = tuple(v.name for v in CATALOG if v.group in _SPATIAL_OR_NONCE)

PRESENTATIONS: dict[str, tuple[Transform, ...]] = {
    "original": (),
    "equivalent": (RESHUFFLE, REWRITE),
    "reshuffle": (RESHUFFLE,),
    "rewrite": (REWRITE,),
    "negated": (RESHUFFLE, REWRITE, NEGATE),
    "repeat": (),  # the original prompt sent again: the repeat-agreement control (App. H)
    "flipped_query": (FLIP_QUERY,),
}


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
    answer_space = ("yes", "no")
    shortcuts = ("ref:endpoint", "ref:forward-reader", "ref:names-order", "ref:threshold?n=64")

    @classmethod
    def shortcut_policies(cls) -> Mapping[str, Any]:
        """The known ways to fake competence on this family (``ref:`` policies)."""
        from .policies import ORDERING_POLICIES

        return ORDERING_POLICIES

    @classmethod
    def ideal_answer(cls, prompt: Prompt) -> str | None:
        """The competent answer, read from the prompt alone (``ref:ideal``)."""
        from .policies import ordering_ideal

        return ordering_ideal(prompt.text)

    @classmethod
    def generate_options(cls, parser: Any) -> None:
        """``competence generate ordering``'s own flags."""
        from ._generate import add_options

        add_options(parser)

    @classmethod
    def generate_designs(cls, args: Any) -> Iterator[tuple[Any, dict[str, Any]]]:
        """The designs ``competence generate ordering`` writes."""
        from ._generate import designs

        return designs(cls, args)

    @classmethod
    def record_meta(cls, item: Item) -> dict[str, Any]:
        """What a checker needs beside the prompt text to re-derive the gold answer."""
        from ._generate import meta

        return meta(item)

    @classmethod
    def audit_policies(cls, levels: Sequence[int]) -> tuple[str, ...]:
        """The constant, coin and noisy policies, the endpoint shortcut, the forward reader, the
        names-order reader, and one threshold policy per declared level (ideal up to that size,
        wrong on reworded prompts beyond it)."""
        return ("ref:always-yes", "ref:always-no", "ref:coin", "ref:noisy?p=0.1", "ref:endpoint",
                "ref:forward-reader", "ref:names-order",
                *(f"ref:threshold?n={n}" for n in sorted(set(levels))))

    default_levels = (4, 8, 16, 32, 64, 128, 256, 512, 1024)  # seeds/000 §4.1
    training_presentations = ("original", "rewrite", "reshuffle", "equivalent")  # App. B.3
    named_splits = (
        ("paper-heldin", True, {"vocabulary": PAPER_HELD_IN},
         "the 19 GRPO training relations of seeds/000 App. B.3 (no spatial line, no nonce)"),
        ("paper-heldout", False, {"vocabulary": PAPER_HELD_OUT},
         "the 12 clean held-out relations of seeds/000 App. G (spatial line and nonce)"),
    )
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
        self.protocol = _choice("protocol", protocol, ("P", "L"))
        self.names = _choice("names", names, ("pool", "random"))
        self.names_line = _choice("names_line", names_line, ("shuffled", "chain"))
        if isinstance(distractors, bool) or not isinstance(distractors, (int, float)) or not (
            0 <= distractors <= 4
        ):
            raise InvalidArgument(
                f"Expected distractors to be a ratio between 0 and 4, but got "
                f"distractors={distractors!r}"
            )
        self.distractors = float(distractors)
        if distance is not None and (
            isinstance(distance, bool) or not isinstance(distance, int) or distance < 1
        ):
            raise InvalidArgument(
                f"Expected distance=None (endpoint queries) or an integer >= 1, but got "
                f"distance={distance!r}"
            )
        self.distance = distance
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
            vocabulary=self.vocabulary, protocol=self.protocol, names=self.names,
            names_line=self.names_line, distractors=self.distractors, distance=self.distance,
            system_prompt=self.system_prompt, instruction=self.instruction,
        )
        opts.update(changes)
        return Ordering(**opts)  # type: ignore[arg-type]

    @property
    def min_n(self) -> int:
        """Smallest chain length this configuration can query."""
        return 2 if self.distance is None else self.distance + 3

    # -- latent instances ------------------------------------------------------------------------

    def check_n(self, n: object, name: str = "n") -> int:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise InvalidArgument(f"Expected an integer for {name}, but got {name}={n!r}")
        if n < self.min_n:
            why = (
                "a chain needs at least two entities" if self.distance is None
                else f"interior queries at distance={self.distance} need n >= distance + 3"
            )
            raise InvalidArgument(f"Expected {name} >= {self.min_n}, but got {name}={n}: {why}")
        pool = len(first_names())
        if self.names == "pool" and n + self._n_distractors(int(n)) > pool:
            raise InvalidArgument(
                f"{name}={n} needs more entities than the {pool}-name pool holds; "
                f"use names='random' for chains this long"
            )
        return int(n)

    def _n_distractors(self, n: int) -> int:
        links = math.floor(self.distractors * (n - 1) + 0.5)
        return links + 1 if links else 0

    def instance(self, n: int, index: int, seed: int = 1) -> OrderingInstance:
        """The latent instance ``index`` of level ``n`` for ``seed``; its cell is ``index % 4``."""
        n = self.check_n(n)
        k = self._n_distractors(n)
        check_seed(seed)
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or index < 0:
            raise InvalidArgument(f"Expected a non-negative integer index, but got index={index!r}")
        # Distractor entities come from their own stream, so adding them leaves the chain, its
        # names and every other draw exactly as they are without distractors.
        if self.names == "pool":
            pool = first_names()
            drawn = stream_rng(seed, n, index, _NAMES).choice(len(pool), size=n, replace=False).tolist()
            chain = [pool[i] for i in drawn]
            distractors: list[str] = []
            if k:
                taken = set(drawn)
                rest = [i for i in range(len(pool)) if i not in taken]
                extra = stream_rng(seed, n, index, _DISTRACT).choice(len(rest), size=k, replace=False)
                distractors = [pool[rest[i]] for i in extra.tolist()]
        else:
            chain = random_names(stream_rng(seed, n, index, _RANDOM_NAMES), n)
            distractors = random_names(stream_rng(seed, n, index, _DISTRACT), k, exclude=set(chain))
        direction, gold = CELLS[index % 4]
        if self.distance is None:
            lo, hi = 0, n - 1
        else:
            lo = int(stream_rng(seed, n, index, _QUERY).integers(1, n - 1 - self.distance))
            hi = lo + self.distance
        query = (lo, hi) if (gold == "yes") == (direction == "forward") else (hi, lo)
        return OrderingInstance(
            n=n, index=index, seed=seed, chain=tuple(chain), query=query,
            direction=direction, distractors=tuple(distractors),
        )

    # -- presentations ---------------------------------------------------------------------------

    def rewrite_count(self, z: OrderingInstance) -> int:
        """``m``, uniform on ``{max(1, ⌊0.2(n−1)⌋), …, n−1}`` (seeds/000 App. B.1), shared by P and L."""
        links = z.n - 1
        if z.n > 1024:
            return len(self._coin_positions(z))
        return int(stream_rng(z.seed, z.n, z.index, _COUNT).integers(max(1, links // 5), links + 1))

    def _coin_positions(self, z: OrderingInstance) -> frozenset[int]:
        # Beyond the base grid (the paper's n = 2048 block) each premise is rewritten
        # independently with probability 1/2.
        coins = stream_rng(z.seed, z.n, z.index, _COINS).random(z.n - 1) < 0.5
        return frozenset(np.flatnonzero(coins).tolist())

    def rewrite_positions(self, z: OrderingInstance) -> frozenset[int]:
        """Chain-premise indices rewritten in the equivalent presentation, by protocol."""
        if self.protocol == "L" and z.n > 1024:
            return self._coin_positions(z)
        m = self.rewrite_count(z)
        if self.protocol == "L":
            return frozenset(range(z.n - 1 - m, z.n - 1))
        picks = stream_rng(z.seed, z.n, z.index, _POSITIONS).choice(z.n - 1, size=m, replace=False)
        return frozenset(picks.tolist())

    def _shuffled(self, z: OrderingInstance, stream: int) -> OrderingView:
        rng = stream_rng(z.seed, z.n, z.index, stream)
        names = rng.permutation(len(z.entities))
        premises = rng.permutation(_premise_count(z))
        if self.names_line == "chain":
            names = np.arange(len(z.entities))
        return OrderingView(tuple(names.tolist()), tuple(premises.tolist()))

    def view(self, z: OrderingInstance, presentation: str) -> OrderingView:
        """The view a named presentation gives ``z`` (see :data:`PRESENTATIONS`)."""
        return self._views(z, (presentation,))[0]

    def _views(self, z: OrderingInstance, presentations: Sequence[str]) -> list[OrderingView]:
        """The views of several presentations of ``z``, drawing each random stream at most once.

        The transforms commute — a reshuffle replaces the layout and keeps the flags set so far —
        so a view is the original or the reshuffled layout plus the flags of its transforms.
        """
        layouts: dict[int, OrderingView] = {}
        positions: frozenset[int] | None = None
        views = []
        for presentation in presentations:
            transforms = _presentation(presentation)
            stream = _SHUFFLED if RESHUFFLE in transforms else _ORIGINAL
            if stream not in layouts:
                layouts[stream] = self._shuffled(z, stream)
            rewritten: frozenset[int] = frozenset()
            if REWRITE in transforms:
                if positions is None:
                    positions = self.rewrite_positions(z)
                rewritten = positions
            layout = layouts[stream]
            views.append(OrderingView(
                layout.names_order, layout.premise_order, rewritten,
                negated=NEGATE in transforms, flip_query=FLIP_QUERY in transforms,
            ))
        return views

    def gold(self, z: OrderingInstance, view: OrderingView) -> str:
        """The gold answer of ``z`` under ``view``: the oracle, flipped when the query is."""
        return ("no" if z.gold == "yes" else "yes") if view.flip_query else z.gold

    def render(self, z: OrderingInstance, view: OrderingView) -> str:
        """The user prompt for ``z`` laid out by ``view``, in the App. B.1 format."""
        voc = self.vocabulary
        entities = z.entities
        names_line = str([entities[k] for k in view.names_order])
        fwd, conv = voc.forward, voc.converse
        # Every premise phrase reads "{a} MIDDLE {b}": split it once and concatenate, which is
        # several times faster than str.format per premise on 1,024-entity chains.
        f_mid = _middle(fwd.statement)
        r_mid = _middle(fwd.negation if view.negated else conv.statement)
        rewritten = view.rewritten
        heads, tails = _link_ends(z)
        sentences = [
            f"{tails[p]}{r_mid}{heads[p]}." if p in rewritten else f"{heads[p]}{f_mid}{tails[p]}."
            for p in view.premise_order
        ]
        i, j = z.query
        forward = (z.direction == "forward") != view.flip_query
        question = (fwd if forward else conv).ask(z.chain[i], z.chain[j])
        return (
            f"{voc.context(len(entities), names_line)} {' '.join(sentences)} "
            f"{question} {self.instruction}"
        )

    def prompt(self, z: OrderingInstance, presentation: str) -> Prompt:
        """``z`` rendered by one named presentation, with its gold answer and parameters."""
        return self._prompts(z, (presentation,))[0]

    def _prompts(self, z: OrderingInstance, presentations: Sequence[str]) -> tuple[Prompt, ...]:
        return tuple(
            Prompt(
                family=self.name,
                instance_id=z.id,
                presentation=presentation,
                system=self.system_prompt,
                text=self.render(z, view),
                gold=self.gold(z, view),
                answer_space=self.answer_space,
                answer_map=compose(PRESENTATIONS[presentation]),
                params=self.params(z),
            )
            for presentation, view in zip(presentations, self._views(z, presentations))
        )

    def params(self, z: OrderingInstance) -> dict[str, object]:
        """θ of ``z``: the level and the configuration that rendered it."""
        return {
            "n": z.n,
            "vocabulary": self.vocabulary.name,
            "protocol": self.protocol,
            "query": "endpoints" if self.distance is None else f"distance={self.distance}",
            "distractors": self.distractors,
            "names": self.names,
            "names_line": self.names_line,
            "cell": "/".join(CELLS[z.index % 4]),
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
        return Item(z, self._prompts(z, presentations))

    def check_design(
        self, *, levels: object, pairs: object, seed: object, presentations: object
    ) -> None:
        """Raise :class:`InvalidArgument` naming the first argument :meth:`design` cannot use."""
        check_levels(levels, self.check_n,
                     "a non-empty list of chain lengths, e.g. [4, 8, 16]")
        check_pairs(pairs, 4, "pairs per level to be a positive multiple of 4 (the four "
                    "balanced query cells)", 200)
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

    def audit_components(self, levels: Sequence[int],
                         presentations: Sequence[str]) -> list[AuditComponent]:
        """The supports an audit can add to a suite of this family over ``levels`` and
        ``presentations``: a larger n (if the name pool holds it), the converse rewording (if
        absent), interior queries (or endpoint queries), a second vocabulary and, with the
        chain-ordered names line, the shuffled one — each catches a known shortcut."""
        out = []
        larger = 2 * max(levels)
        try:
            self.check_n(larger)
            out.append(AuditComponent(f"larger n (n={larger})", "level", larger))
        except InvalidArgument:
            pass
        if "equivalent" not in presentations:
            out.append(AuditComponent("converse rewording", "presentation", "equivalent"))
        if self.distance is None:
            out.append(AuditComponent("interior queries (distance=2)", "option", {"distance": 2}))
        else:
            out.append(AuditComponent("endpoint queries", "option", {"distance": None}))
        second = "left_right" if self.vocabulary.name != "left_right" else "front_behind"
        out.append(AuditComponent(f"second vocabulary ({second})", "option",
                                  {"vocabulary": second}))
        if self.names_line == "chain":
            out.append(AuditComponent("shuffled names line", "option", {"names_line": "shuffled"}))
        return out


def _middle(template: str) -> str:
    head, sep, rest = template.partition("{a}")
    mid, sep2, tail = rest.partition("{b}")
    if head or tail or not sep or not sep2:
        raise InvalidArgument(f"Phrase template {template!r} must read '{{a}} ... {{b}}'")
    return mid


def _vocabulary(value: str | Vocabulary) -> Vocabulary:
    return value if isinstance(value, Vocabulary) else vocabulary(value)


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise InvalidArgument(
            f"Expected {name} to be one of {', '.join(map(repr, allowed))}, but got {name}={value!r}"
        )
    return value


def _presentation(name: object) -> tuple[Transform, ...]:
    try:
        return PRESENTATIONS[name]  # type: ignore[index]
    except (KeyError, TypeError):
        raise InvalidArgument(
            f"Unknown presentation {name!r}. Expected one of: {', '.join(PRESENTATIONS)}"
        ) from None


def catalog_families(**options: object) -> list[Ordering]:
    """One :class:`Ordering` per catalog vocabulary, all other options shared."""
    return [Ordering(vocabulary=v, **options) for v in CATALOG]  # type: ignore[arg-type]
