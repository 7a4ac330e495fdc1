"""The family-independent vocabulary of competence-based evaluation (seeds/000 §3.1).

A *family* draws latent instances ``z`` with an exact oracle ``y*(z)``; a *presentation* renders an
instance to a prompt and declares how it relates to the gold answer; a *parser* turns raw model text
into an answer or an explicit invalid outcome. Everything here is plain data: no pytest, no models.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from ._rng import stream_rng

__all__ = [
    "AnswerMap",
    "AuditComponent",
    "Family",
    "InvalidArgument",
    "Figure",
    "Item",
    "Parsed",
    "Prompt",
    "Table",
    "Transform",
    "check_presentations",
    "compose",
    "default_presentations",
    "design_chunks",
    "is_family",
    "parse_choice",
    "stream_rng",
]


class InvalidArgument(TypeError, ValueError):
    """A family, design or strategy was given an argument it cannot use.

    The message names the argument, the value received, what was expected and, where there is one,
    the fix. Subclassing both ``TypeError`` and ``ValueError`` lets callers catch it either way.
    """


@dataclass(frozen=True)
class AnswerMap:
    """How a presentation maps the gold answer: identity (answer-preserving) or a declared mapping.

    ``pairs`` lists ``(from, to)``; answers not listed map to themselves, so ``yes↔no`` leaves
    "Cannot be determined" unchanged. Maps compose left to right with :meth:`then`.
    """

    pairs: tuple[tuple[str, str], ...] = ()

    @classmethod
    def swap(cls, a: str, b: str) -> AnswerMap:
        """The map that exchanges ``a`` and ``b`` (e.g. a negation flip, yes↔no)."""
        return cls(((a, b), (b, a)))

    @property
    def preserving(self) -> bool:
        """True when every answer maps to itself."""
        return all(src == dst for src, dst in self.pairs)

    def __call__(self, answer: str) -> str:
        return dict(self.pairs).get(answer, answer)

    def then(self, other: AnswerMap) -> AnswerMap:
        """The map that applies ``self`` and then ``other``."""
        keys = dict.fromkeys([a for a, _ in self.pairs] + [a for a, _ in other.pairs])
        composed = tuple((a, other(self(a))) for a in keys)
        return AnswerMap(tuple(p for p in composed if p[0] != p[1]))

    def __repr__(self) -> str:
        if self.preserving:
            return "AnswerMap()"
        return "AnswerMap(" + ", ".join(f"{a}→{b}" for a, b in self.pairs) + ")"


IDENTITY = AnswerMap()


@dataclass(frozen=True)
class Transform:
    """One composable change of presentation; ``answer_map`` declares its effect on the gold.

    A family names its presentations as tuples of transforms applied to the original; the
    presentation's relation to the gold answer is :func:`compose` of theirs.
    """

    name: str
    answer_map: AnswerMap = IDENTITY


@lru_cache(maxsize=None)
def compose(transforms: tuple[Transform, ...]) -> AnswerMap:
    """The answer map of applying ``transforms`` in order (identity for none)."""
    out = IDENTITY
    for t in transforms:
        out = out.then(t.answer_map)
    return out


@dataclass(frozen=True)
class Prompt:
    """One rendered presentation of one latent instance, with the gold answer it implies.

    ``gold`` is already mapped through the presentation's :class:`AnswerMap`; ``answer_map`` records
    the declared relation so a report can say whether the presentation preserves the answer.
    """

    family: str
    instance_id: str
    presentation: str
    system: str
    text: str
    gold: str
    answer_space: tuple[str, ...]
    answer_map: AnswerMap = IDENTITY
    params: Mapping[str, Any] = field(default_factory=dict)
    attempt: int = 0  # which of N identical sends this is (sampled models answer each anew)
    # How the engine asks: "generate" (free text, parsed) or "score" (the candidate of the answer
    # space with the highest log-probability, for backends that can score).
    readout: str = "generate"


@dataclass(frozen=True)
class Item:
    """A latent instance together with its prompts, the original presentation first."""

    instance: Any
    prompts: tuple[Prompt, ...]

    @property
    def id(self) -> str:
        return self.prompts[0].instance_id

    @property
    def params(self) -> Mapping[str, Any]:
        return self.prompts[0].params


@dataclass(frozen=True)
class Parsed:
    """A parsed model answer. ``answer is None`` is the explicit *invalid* outcome, with a reason."""

    answer: str | None
    reason: str = ""

    @property
    def valid(self) -> bool:
        return self.answer is not None


@dataclass(frozen=True)
class AuditComponent:
    """A support an audit can add to a declared suite.

    ``kind`` says what it adds: ``"level"`` (``value`` an int level), ``"presentation"``
    (``value`` a presentation name) or ``"option"`` (``value`` a mapping of family options that
    replace the suite's, e.g. ``{"vocabulary": "left_right"}``). ``name`` is what reports show.
    """

    name: str
    kind: str
    value: Any


@dataclass(frozen=True)
class Table:
    """A family's report table as data: the terminal, Markdown and HTML reports draw it alike.

    ``rows`` hold plain values, one per column: text; a number (written with three decimals);
    ``(value, low, high)`` for a figure with its interval; ``None`` for a blank cell. ``note``
    is the line that introduces the table (a headline figure, what the figures mean); ``label``
    names it on the terminal (default ``title``).
    """

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    note: str = ""
    label: str = ""


@dataclass(frozen=True)
class Figure:
    """A family's figure for the HTML report: a title, a caption and the SVG that draws it."""

    title: str
    caption: str
    svg: str


#: A reference policy's factory: called with the spec's ``key=value`` parameters as strings, it
#: returns an answer function — the prompt's text to an answer, or the whole :class:`Prompt` when
#: marked with ``pytest_competence.models.reference.reads_prompt`` — or a model (an object with
#: ``generate``) for a policy that reads a whole batch.
PolicyFactory = Callable[..., Any]


@runtime_checkable
class Family(Protocol):
    """What a task family is: latent instances with an exact oracle, presented and parsed.

    **Required** (what the engine calls):

    - ``name`` — the registered name (``@pytest.mark.competence(family=NAME)``, ``ref:`` reads);
    - ``answer_space`` — the answers a prompt can have (``()`` for open answers);
    - ``design(levels=, pairs=, seed=, presentations=)`` — the seeded balanced design: per level
      ``pairs`` latent instances ``z`` with their prompts (:class:`Item`), each prompt's ``gold``
      the oracle's answer ``y*(z)`` mapped through its presentation's :class:`AnswerMap`
      (presentations are tuples of :class:`Transform`, composed with :func:`compose`);
    - ``parse(text)`` — the model's text to an answer or an explicit invalid :class:`Parsed`.

    **Optional** (a family that subclasses :class:`Family` inherits these defaults; the registry
    supplies them to one that does not):

    - ``default_presentations`` — what a declaration without ``presentations=`` asks;
    - ``check_design(levels=, pairs=, seed=, presentations=)`` — raise :class:`InvalidArgument`
      at collection, before any model runs;
    - ``strategies`` — Hypothesis strategies; ``strategies.case_space(max_n=, presentations=,
      vocabularies=)`` (e.g. a ``DesignSpace``) whose ``strategy()`` is ``cases()``: what
      minimisation shrinks a failing case in;
    - :meth:`audit_components` — the supports an audit may add to a suite;
    - :meth:`shortcut_policies`, :attr:`shortcuts`, :meth:`ideal_answer` — the known ways to fake
      competence on the family (``ref:NAME`` policies) and the competent reading;
      :meth:`audit_policies` — the policies an audit tells apart (default: the shortcuts);
    - :meth:`metrics`, :meth:`tables` and :meth:`figures` — summary entries of an evaluation,
      and the report tables and figures that show them (data the reports draw);
    - :meth:`generate_options`, :meth:`generate_designs`, :attr:`default_levels`,
      :meth:`record_meta` — ``competence generate``'s flags, designs, default grid and the
      per-record metadata with which an independent checker re-derives the gold answer (by
      default from the family folder's ``cli.py``: ``add_options``, ``designs``, ``meta``);
      :attr:`training_presentations`, :attr:`named_splits`, :attr:`training_split` — training
      rows (``--format hf``) and the family's named splits.
    """

    name: str
    answer_space: tuple[str, ...]

    def design(
        self, *, levels: Sequence[int], pairs: int, seed: int, presentations: Sequence[str]
    ) -> list[Item]: ...

    def parse(self, text: str) -> Parsed: ...

    # The optional members, with their defaults. They are kept out of the structural type (a
    # type checker sees the required members only), so that any object with those — an
    # archived family, a user's own — is a Family; a class that subclasses Family inherits them.
    if not TYPE_CHECKING:
        def audit_components(self, levels: Sequence[int],
                             presentations: Sequence[str]) -> list[AuditComponent]:
            """The supports an audit can add to a suite of this family over ``levels`` and
            ``presentations``."""
            return []

        #: ``ref:shortcuts`` runs these specs (e.g. ``"ref:horn-bounded?depth=4"``) on the family.
        shortcuts: ClassVar[tuple[str, ...]] = ()

        #: ``competence generate NAME`` writes these levels unless ``--levels`` names others.
        default_levels: ClassVar[tuple[int, ...]] = ()

        def check_design(self, *, levels: Sequence[int], pairs: int, seed: int,
                         presentations: Sequence[str]) -> None:
            """Raise :class:`InvalidArgument` when the design cannot be drawn (by default the
            design itself is the check: nothing is checked before it runs)."""

        @classmethod
        def audit_policies(cls, levels: Sequence[int]) -> tuple[str, ...]:
            """The reference specs beside ``ref:ideal`` that the audit and the diagnosis tell
            apart on a suite over ``levels``: by default the family's :attr:`shortcuts`."""
            return cls.shortcuts

        @classmethod
        def shortcut_policies(cls) -> Mapping[str, PolicyFactory]:
            """Reference policies by ``ref:`` name: the known ways to fake competence on this family.

            Each reads this family's prompts only (on other families' suites it is skipped as
            ``n/a``); a name two families declare with the same factory reads both. Imported when a
            ``ref:`` spec is resolved, never at start-up.
            """
            return {}

        @classmethod
        def ideal_answer(cls, prompt: Prompt) -> str | None:
            """The competent answer to one of this family's prompts, read from the prompt alone
            (``ref:ideal`` and the noisy policies built on it); ``None`` when it cannot be read."""
            return None

        @classmethod
        def metrics(cls, evaluation: Any, *, bootstrap: int = 0, seed: int = 0) -> dict[str, Any]:
            """Summary entries of one evaluation of this family (e.g. ``{"systematicity": {...}}``)
            beside the generic ones; ``bootstrap`` resamples and ``seed`` are the summary's."""
            return {}

        @classmethod
        def tables(cls, result: Mapping[str, Any]) -> list[Table]:
            """The report tables of one result (its ``summary`` holds what :meth:`metrics` added)."""
            return []

        @classmethod
        def figures(cls, result: Mapping[str, Any]) -> list[Figure]:
            """The HTML report's figures of one result, drawn above its tables."""
            return []

        #: ``competence generate NAME --format hf`` asks these unless ``--presentations`` names
        #: others (empty: the family's default presentations).
        training_presentations: ClassVar[tuple[str, ...]] = ()

        #: Named splits beside every family's ``train`` and ``eval`` (``pytest_competence.splits``):
        #: ``(name, training, options, description)``, ``options`` mapping an option to the values
        #: the split covers.
        named_splits: ClassVar[tuple[tuple[str, bool, Mapping[str, tuple[Any, ...]], str], ...]] = ()

        #: The split training rows come from unless ``--split`` names another.
        training_split: ClassVar[str] = "train"

        @classmethod
        def generate_options(cls, group: Any) -> None:
            """Add the family's own flags to ``competence generate`` (an argparse group); by
            default its folder's ``cli.add_options(group)``, if it has one."""
            add = _cli(cls, "add_options")
            if add is not None:
                add(group)

        @classmethod
        def generate_designs(cls, args: Any) -> Iterator[tuple[Any, dict[str, Any]]]:
            """``(family, design keywords)`` for each design ``competence generate`` writes from
            its parsed ``args``: its folder's ``cli.designs(args)``, else one design, the family
            built from ``--option`` values, at ``--levels`` (else :attr:`default_levels`),
            ``--per-level`` (else 200) and ``--presentations`` (else the family's default)."""
            from . import default_presentations, family

            designs = _cli(cls, "designs")
            if designs is not None:
                yield from designs(args)
                return
            made = family(cls.name, **dict(args.options))
            levels = args.levels or list(cls.default_levels)
            if not levels:
                raise InvalidArgument(f"competence generate {cls.name} needs --levels: the "
                                      f"family declares no default_levels")
            yield made, dict(levels=levels, pairs=args.pairs or 200,
                             presentations=args.presentations or default_presentations(made))

        @classmethod
        def record_meta(cls, item: Item) -> dict[str, Any]:
            """``meta`` of ``competence generate``'s records of ``item``: how a checker re-derives
            the gold answer from the prompt text alone (its folder's ``cli.meta(item)``)."""
            meta = _cli(cls, "meta")
            return {} if meta is None else dict(meta(item))


def _cli(cls: type, name: str) -> Any:
    """``name`` from the ``cli`` module of the package that defines ``cls`` (a family folder's
    ``cli.py``: its ``competence generate`` flags, designs and record metadata), else ``None``."""
    import importlib
    import importlib.util

    package = cls.__module__ if _is_package(cls.__module__) else cls.__module__.rpartition(".")[0]
    if not package or importlib.util.find_spec(f"{package}.cli") is None:
        return None
    return getattr(importlib.import_module(f"{package}.cli"), name, None)


def _is_package(module: str) -> bool:
    import sys

    return hasattr(sys.modules.get(module), "__path__")


#: What every family must have; the rest of :class:`Family` has defaults.
REQUIRED = ("name", "answer_space", "design", "parse")


def is_family(value: object) -> bool:
    """Whether ``value`` is a family object: it has every required member of :class:`Family`
    (``isinstance(value, Family)`` would ask for the optional ones too)."""
    return not isinstance(value, type) and all(hasattr(value, k) for k in REQUIRED)


#: Instances per chunk of :func:`design_chunks`: small enough that a chunk of the largest
#: levels (n = 1024, tens of kilobytes per prompt) stays a few megabytes.
CHUNK_INSTANCES = 64


def design_chunks(
    family: Any, *, levels: Sequence[int], pairs: int, seed: int, presentations: Sequence[str],
    size: int = CHUNK_INSTANCES,
) -> Iterator[list[Item]]:
    """``family``'s design, ``size`` instances at a time, in design order.

    Every built-in family draws instance ``i`` of level ``n`` from generators keyed by
    ``(seed, n, i, …)`` alone (:func:`stream_rng`), so the chunks concatenate to exactly
    ``family.design(...)`` (tests/test_generate_stream.py checks each family):
    a family with an ``item(n, index, seed, presentations)`` method is asked instance by
    instance; one without is asked a level at a time. The design is checked before the first
    chunk, as :meth:`Family.design` checks it.
    """
    check = getattr(family, "check_design", None)
    if check is not None:
        check(levels=levels, pairs=pairs, seed=seed, presentations=presentations)
    item = getattr(family, "item", None)
    for n in levels:
        if item is None:
            yield family.design(levels=[n], pairs=pairs, seed=seed, presentations=presentations)
            continue
        for start in range(0, pairs, size):
            yield [item(n, i, seed, presentations) for i in range(start, min(pairs, start + size))]


_WORD = re.compile(r"[a-z]+")
_ANSWER_LINE = re.compile(r"answer\s*[:：]\s*\**\s*([a-z]+)", re.IGNORECASE)


def parse_choice(text: object, choices: Iterable[str]) -> Parsed:
    """Parse a one-word answer from free text; ambiguity and silence are *invalid*, never guessed.

    Rules, in order (cf. seeds/004 App. B): the last explicit ``Answer: X`` line; else the first
    word; else the one choice that occurs as a whole word, if exactly one does. Anything else —
    both choices present, none present, not a string — is invalid with the reason recorded.
    """
    options = {c.lower(): c for c in choices}
    if not isinstance(text, str):
        return Parsed(None, f"model returned {type(text).__name__}, not text")
    explicit = [m.group(1).lower() for m in _ANSWER_LINE.finditer(text)]
    explicit = [w for w in explicit if w in options]
    if explicit:
        return Parsed(options[explicit[-1]])
    words = _WORD.findall(text.lower())
    if not words:
        return Parsed(None, "empty answer" if not text.strip() else "no word in answer")
    if words[0] in options:
        return Parsed(options[words[0]])
    found = sorted({w for w in words if w in options})
    if len(found) == 1:
        return Parsed(options[found[0]])
    if not found:
        return Parsed(None, f"none of {sorted(options.values())} in answer")
    return Parsed(None, f"ambiguous: answer contains {found}")


#: What a design presents when its declaration names nothing and the family has no default.
DEFAULT_PRESENTATIONS = ("original", "equivalent")


def default_presentations(family: object) -> tuple[str, ...]:
    """The presentations a design of ``family`` uses when none are named: the family's own
    ``default_presentations`` (every reformulation, variation type or intervention cell it has),
    else the original and its equivalent rewording."""
    return tuple(getattr(family, "default_presentations", DEFAULT_PRESENTATIONS))


def check_levels(levels: object, check_n: Any, expected: str) -> None:
    """Raise :class:`InvalidArgument` unless ``levels`` is a non-empty list of distinct entries
    that ``check_n(n, "levels[]")`` (the family's own size check) accepts; ``expected`` says
    what a level is, e.g. ``"a non-empty list of chain lengths, e.g. [4, 8, 16]"``."""
    if isinstance(levels, (str, bytes)) or not isinstance(levels, Sequence) or not levels:
        raise InvalidArgument(f"Expected levels to be {expected}, but got levels={levels!r}")
    for n in levels:
        check_n(n, "levels[]")
    repeated = sorted({n for n in levels if list(levels).count(n) > 1})
    if repeated:
        raise InvalidArgument(
            f"Expected levels to name each size once, but got levels={list(levels)!r} "
            f"({', '.join(map(str, repeated))} repeated); list each level once"
        )


def check_pairs(pairs: object, multiple: int, expected: str, suggestion: int) -> None:
    """Raise :class:`InvalidArgument` unless ``pairs`` is a positive multiple of ``multiple`` (the
    family's balanced cells); ``expected`` says so in the family's words, ``suggestion`` is a fix."""
    if isinstance(pairs, bool) or not isinstance(pairs, int) or pairs < multiple or (
        pairs % multiple
    ):
        raise InvalidArgument(
            f"Expected {expected}, but got pairs={pairs!r}; try pairs={suggestion}")


def check_seed(seed: object) -> None:
    """Raise :class:`InvalidArgument` unless ``seed`` is a non-negative integer."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidArgument(f"Expected a non-negative integer seed, but got seed={seed!r}")


def check_word(name: str, value: object) -> None:
    """Raise :class:`InvalidArgument` unless ``value`` is an integer in [0, 2**32) (a seed or
    index that goes into :func:`stream_rng` as one 32-bit word)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not (
        0 <= value < 2**32
    ):
        raise InvalidArgument(
            f"Expected {name} to be an integer in [0, 2**32), but got {name}={value!r}"
        )


def check_sequence(name: str, value: object, *, item_type: type, empty_ok: bool = False) -> tuple:
    """Return ``value`` as a tuple of ``item_type`` or raise :class:`InvalidArgument` naming it."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InvalidArgument(
            f"Expected a list of {item_type.__name__} for {name}, but got {name}={value!r} "
            f"(type={type(value).__name__})"
        )
    out = tuple(value)
    bad = [v for v in out if not isinstance(v, item_type) or isinstance(v, bool)]
    if bad:
        raise InvalidArgument(
            f"Expected every element of {name} to be {item_type.__name__}, but got {bad[0]!r} "
            f"(type={type(bad[0]).__name__})"
        )
    if not out and not empty_ok:
        raise InvalidArgument(f"{name} must not be empty")
    return out


def check_presentations(presentations: object, lookup: Any) -> None:
    """Raise :class:`InvalidArgument` unless ``presentations`` is a non-empty list of names that
    ``lookup`` (a family's name → transforms function, itself raising on unknown names) knows."""
    if isinstance(presentations, (str, bytes)) or not isinstance(presentations, Sequence) or (
        not presentations
    ):
        raise InvalidArgument(
            f"Expected presentations to be a non-empty list of names such as "
            f"['original', 'equivalent'], but got presentations={presentations!r}"
        )
    for name in presentations:
        lookup(name)
