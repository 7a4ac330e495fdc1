"""The ordering family's latent instances and how they are drawn, their views (the design's and a
case's seeded ones), the presentations, the prompts and their words."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_competence.protocol import (
    IDENTITY,
    AnswerMap,
    InvalidArgument,
    Prompt,
    Transform,
    compose,
)

from .._rng import stream_rng
from ..names import first_names, random_names, untaken
from .vocabularies import CATALOG, Vocabulary, _between, vocabulary

if TYPE_CHECKING:
    from . import Ordering

__all__ = [
    "CELLS",
    "FLIP_QUERY",
    "INSTRUCTION",
    "NEGATE",
    "PAPER_HELD_IN",
    "PAPER_HELD_OUT",
    "PAPER_SPLITS",
    "PRESENTATIONS",
    "RESHUFFLE",
    "REWRITE",
    "SYSTEM_PROMPT",
    "OrderingInstance",
    "OrderingView",
    "distractor_count",
    "draw_instance",
    "prompts",
    "render",
    "rewrite_count",
    "rewrite_positions",
    "seeded_layout",
    "seeded_rewrites",
    "view_answer_map",
    "view_of",
    "views",
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
_NAMES, _QUERY, _ORIGINAL, _SHUFFLED, _COUNT, _POSITIONS, _COINS, _RANDOM_NAMES, _DISTRACT = range(
    9
)


@dataclass(frozen=True)
class OrderingInstance:
    """A latent instance ``z``: the chain, optional distractor chain and the query (CBE paper, arXiv:2610.22894, §4.1).

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
        """The instance id: seed, level and index."""
        return f"ordering/seed={self.seed}/n={self.n}/{self.index}"

    @property
    def entities(self) -> tuple[str, ...]:
        """Every named entity: the chain, then the distractors."""
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
#: The vocabularies of the CBE paper's (arXiv:2610.22894) GRPO training (App. B.3) and of its clean held-out
#: evaluation (App. G): the spatial-line and nonce groups are held out.
_SPATIAL_OR_NONCE = ("spatial line", "nonce")
PAPER_HELD_IN = tuple(v.name for v in CATALOG if v.group not in _SPATIAL_OR_NONCE)
PAPER_HELD_OUT = tuple(v.name for v in CATALOG if v.group in _SPATIAL_OR_NONCE)

#: The two splits of the paper's vocabularies (``Family.named_splits``).
PAPER_SPLITS: tuple[tuple[str, bool, Mapping[str, tuple[Any, ...]], str], ...] = (
    (
        "paper-heldin",
        True,
        {"vocabulary": PAPER_HELD_IN},
        "the 19 GRPO training relations of the CBE paper, arXiv:2610.22894, App. B.3 (no spatial line, no nonce)",
    ),
    (
        "paper-heldout",
        False,
        {"vocabulary": PAPER_HELD_OUT},
        "the 12 clean held-out relations of the CBE paper, arXiv:2610.22894, App. G (spatial line and nonce)",
    ),
)

PRESENTATIONS: dict[str, tuple[Transform, ...]] = {
    "original": (),
    "equivalent": (RESHUFFLE, REWRITE),
    "reshuffle": (RESHUFFLE,),
    "rewrite": (REWRITE,),
    "negated": (RESHUFFLE, REWRITE, NEGATE),
    "repeat": (),  # the original prompt sent again: the repeat-agreement control (App. H)
    "flipped_query": (FLIP_QUERY,),
}


def _vocabulary(value: str | Vocabulary) -> Vocabulary:
    return value if isinstance(value, Vocabulary) else vocabulary(value)


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise InvalidArgument(
            f"Expected {name} to be one of {', '.join(map(repr, allowed))}, but got {name}={value!r}"
        )
    return value


def _distractors(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 <= value <= 4):
        raise InvalidArgument(
            f"Expected distractors to be a ratio between 0 and 4, but got distractors={value!r}"
        )
    return float(value)


def _distance(value: object) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise InvalidArgument(
            f"Expected distance=None (endpoint queries) or an integer >= 1, but got "
            f"distance={value!r}"
        )
    return value


def _presentation(name: object) -> tuple[Transform, ...]:
    try:
        return PRESENTATIONS[name]  # type: ignore[index]
    except (KeyError, TypeError):
        raise InvalidArgument(
            f"Unknown presentation {name!r}. Expected one of: {', '.join(PRESENTATIONS)}"
        ) from None


def distractor_count(ratio: float, n: int) -> int:
    """Distractor entities beside a chain of ``n``: ``round(ratio · (n − 1))`` links over them."""
    links = math.floor(ratio * (n - 1) + 0.5)
    return links + 1 if links else 0


def draw_instance(
    n: int, index: int, seed: int, *, names: str, distractors: float, distance: int | None
) -> OrderingInstance:
    """The latent instance ``index`` of level ``n`` for ``seed`` (arguments already checked):
    names from the pool (or random, ``names="random"``), distractors at ratio ``distractors``,
    the query between the endpoints or, with ``distance``, two interior entities."""
    k = distractor_count(distractors, n)
    # Distractor entities come from their own stream, so adding them leaves the chain, its
    # names and every other draw exactly as they are without distractors.
    if names == "pool":
        pool = first_names()
        drawn = stream_rng(seed, n, index, _NAMES).choice(len(pool), size=n, replace=False).tolist()
        chain = [pool[i] for i in drawn]
        extra: list[str] = []
        if k:
            picks = stream_rng(seed, n, index, _DISTRACT).choice(
                len(pool) - n, size=k, replace=False
            )
            extra = [pool[i] for i in untaken(picks, drawn).tolist()]
    else:
        chain = random_names(stream_rng(seed, n, index, _RANDOM_NAMES), n)
        extra = random_names(stream_rng(seed, n, index, _DISTRACT), k, exclude=set(chain))
    direction, gold = CELLS[index % 4]
    if distance is None:
        lo, hi = 0, n - 1
    else:
        lo = int(stream_rng(seed, n, index, _QUERY).integers(1, n - 1 - distance))
        hi = lo + distance
    query = (lo, hi) if (gold == "yes") == (direction == "forward") else (hi, lo)
    return OrderingInstance(n, index, seed, tuple(chain), query, direction, tuple(extra))


def render(
    vocabulary: Vocabulary, instruction: str, z: OrderingInstance, view: OrderingView
) -> str:
    """The user prompt for ``z`` laid out by ``view``, in the App. B.1 format: the context and
    names line, the premises in ``vocabulary``'s phrases, the question and ``instruction``."""
    voc = vocabulary
    entities = z.entities
    names_line = str([entities[k] for k in view.names_order])
    fwd, conv = voc.forward, voc.converse
    # Every premise phrase reads "{a} MIDDLE {b}" (Phrase checks it): concatenating the middle
    # is several times faster than str.format per premise on 1,024-entity chains.
    f_mid = _between(fwd.statement)
    r_mid = _between(fwd.negation if view.negated else conv.statement)
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
        f"{voc.context(len(entities), names_line)} {' '.join(sentences)} {question} {instruction}"
    )


def rewrite_count(z: OrderingInstance) -> int:
    """``m``, uniform on ``{max(1, ⌊0.2(n−1)⌋), …, n−1}`` (CBE paper, arXiv:2610.22894, App. B.1), shared by P and L."""
    links = z.n - 1
    if z.n > 1024:
        return len(_coin_positions(z))
    return int(stream_rng(z.seed, z.n, z.index, _COUNT).integers(max(1, links // 5), links + 1))


def _coin_positions(z: OrderingInstance) -> frozenset[int]:
    # Beyond the base grid (the paper's n = 2048 block) each premise is rewritten
    # independently with probability 1/2.
    coins = stream_rng(z.seed, z.n, z.index, _COINS).random(z.n - 1) < 0.5
    return frozenset(np.flatnonzero(coins).tolist())


def rewrite_positions(z: OrderingInstance, protocol: str) -> frozenset[int]:
    """Chain-premise indices rewritten in the equivalent presentation, by ``protocol``."""
    if protocol == "L" and z.n > 1024:
        return _coin_positions(z)
    m = rewrite_count(z)
    if protocol == "L":
        return frozenset(range(z.n - 1 - m, z.n - 1))
    picks = stream_rng(z.seed, z.n, z.index, _POSITIONS).choice(z.n - 1, size=m, replace=False)
    return frozenset(picks.tolist())


def _shuffled(z: OrderingInstance, stream: int, names_line: str) -> OrderingView:
    rng = stream_rng(z.seed, z.n, z.index, stream)
    names = rng.permutation(len(z.entities))
    premises = rng.permutation(_premise_count(z))
    if names_line == "chain":
        names = np.arange(len(z.entities))
    return OrderingView(tuple(names.tolist()), tuple(premises.tolist()))


def seeded_layout(
    z: OrderingInstance, seeds: tuple[int, int], stream: int, shuffle_names: bool
) -> OrderingView:
    """A case's layout of ``z`` from its ``(names line, premise order)`` seeds: 0 keeps chain
    order, ``s + 1`` draws what :func:`views` draws from ``stream`` for seed ``s``."""
    entities, premises = len(z.entities), _premise_count(z)
    names_seed, premises_seed = seeds
    names = tuple(range(entities))
    if names_seed and shuffle_names:
        names = tuple(
            stream_rng(names_seed - 1, z.n, z.index, stream).permutation(entities).tolist()
        )
    order = tuple(range(premises))
    if premises_seed:
        rng = stream_rng(premises_seed - 1, z.n, z.index, stream)
        rng.permutation(entities)  # the family draws the names line first from the same stream
        order = tuple(rng.permutation(premises).tolist())
    return OrderingView(names, order)


def seeded_rewrites(z: OrderingInstance, count: int, seed: int) -> frozenset[int]:
    """A case's rewritten chain premises: the last ``count`` in chain order when ``seed`` is 0,
    else ``count`` positions drawn as :func:`rewrite_positions` draws them for seed ``seed − 1``."""
    links = z.n - 1
    m = min(count, links)
    if seed == 0:
        return frozenset(range(links - m, links))
    rng = stream_rng(seed - 1, z.n, z.index, _POSITIONS)
    return frozenset(rng.choice(links, size=m, replace=False).tolist())


def views(
    z: OrderingInstance, presentations: Sequence[str], protocol: str, names_line: str
) -> list[OrderingView]:
    """The views of several presentations of ``z``, drawing each random stream at most once.

    The transforms commute — a reshuffle replaces the layout and keeps the flags set so far —
    so a view is the original or the reshuffled layout plus the flags of its transforms.
    """
    layouts: dict[int, OrderingView] = {}
    positions: frozenset[int] | None = None
    out = []
    for presentation in presentations:
        transforms = _presentation(presentation)
        stream = _SHUFFLED if RESHUFFLE in transforms else _ORIGINAL
        if stream not in layouts:
            layouts[stream] = _shuffled(z, stream, names_line)
        rewritten: frozenset[int] = frozenset()
        if REWRITE in transforms:
            if positions is None:
                positions = rewrite_positions(z, protocol)
            rewritten = positions
        out.append(view_of(layouts[stream], rewritten, transforms))
    return out


def view_of(
    layout: OrderingView, rewritten: frozenset[int], transforms: tuple[Transform, ...]
) -> OrderingView:
    """``layout``'s names line and premise order, with ``rewritten`` premises and the flags of
    ``transforms``."""
    return OrderingView(
        layout.names_order,
        layout.premise_order,
        rewritten,
        negated=NEGATE in transforms,
        flip_query=FLIP_QUERY in transforms,
    )


def view_answer_map(view: OrderingView) -> AnswerMap:
    """How ``view`` maps the oracle's answer: as the flipped query's transform says."""
    return FLIP_QUERY.answer_map if view.flip_query else IDENTITY


def prompts(
    family: Ordering,
    z: OrderingInstance,
    presentations: Sequence[str],
    shown: Sequence[OrderingView],
) -> tuple[Prompt, ...]:
    """``z`` under each named presentation, laid out by its view in ``shown``: the family's
    rendering, the gold answer its view asks, the presentation's answer map and θ."""
    return tuple(
        Prompt(
            family=family.name,
            instance_id=z.id,
            presentation=presentation,
            system=family.system_prompt,
            text=family.render(z, view),
            gold=family.gold(z, view),
            answer_space=family.answer_space,
            answer_map=compose(PRESENTATIONS[presentation]),
            params=family.params(z),
        )
        for presentation, view in zip(presentations, shown)
    )
