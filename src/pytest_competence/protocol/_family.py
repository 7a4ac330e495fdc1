"""What a task family is: the :class:`Family` base class, its optional hooks, and the structural
type :class:`FamilyLike` the engine asks of any family object.

A family draws latent instances ``z`` with an exact oracle ``y*(z)`` (CBE paper, arXiv:2610.22894, §3.1), renders
them as prompts and parses the answers. The engine calls the four required members of
:class:`FamilyLike`; every other member of :class:`Family` is an optional hook with a default,
which a family overrides as a method or class attribute of its own. Nothing is found by a
file's name: a registered family subclasses :class:`Family`, and what it does not override is
the default written here.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from ._values import (
    AuditComponent,
    Figure,
    InvalidArgument,
    Item,
    Observation,
    Parsed,
    Prompt,
    Table,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "CHUNK_INSTANCES",
    "DEFAULT_PRESENTATIONS",
    "DELEGATED",
    "Evaluated",
    "Family",
    "FamilyLike",
    "PolicyFactory",
    "REQUIRED",
    "case_spaces",
    "construct",
    "default_presentations",
    "design_chunks",
]

#: A reference policy's factory: called with the spec's ``key=value`` parameters as strings, it
#: returns an answer function — the prompt's text to an answer, or the whole :class:`Prompt` when
#: marked with :func:`pytest_competence.policy.reads_prompt` — or a model (an object with
#: ``generate``) for a policy that reads a whole batch.
PolicyFactory = Callable[..., Any]

#: What every family must have; the rest of :class:`Family` has defaults.
REQUIRED = ("name", "answer_space", "design", "parse")

#: What a design presents when its declaration names nothing and the family has no default.
DEFAULT_PRESENTATIONS = ("original", "equivalent")

#: Instances per chunk of :func:`design_chunks`: small enough that a chunk of the largest
#: levels (n = 1024, tens of kilobytes per prompt) stays a few megabytes.
CHUNK_INSTANCES = 64


@runtime_checkable
class FamilyLike(Protocol):
    """The members the engine calls on a family object: any object with these is one (a
    :class:`Family`, a family rebuilt from an archive, a test's own)."""

    @property
    def name(self) -> str:
        """The registered name (``@pytest.mark.competence(family=NAME)``, ``ref:`` reads)."""

    @property
    def answer_space(self) -> tuple[str, ...]:
        """The answers a prompt can have (``()`` for open answers)."""

    def design(
        self, *, levels: Sequence[int], pairs: int, seed: int, presentations: Sequence[str]
    ) -> list[Item]:
        """The seeded balanced design (see :meth:`Family.design`)."""

    def parse(self, text: str) -> Parsed:
        """The model's text to an answer or an explicit invalid :class:`Parsed`."""


class Evaluated(Protocol):
    """What a family's :meth:`Family.metrics` reads of an evaluation
    (:class:`pytest_competence.engine.evaluation.Evaluation`, live or rebuilt from an archive)."""

    def __len__(self) -> int:
        """Instances of the design."""

    @property
    def level(self) -> np.ndarray:
        """Per instance, its level θ (the ``n`` parameter)."""

    def rows(self, indices: Any = None) -> Iterator[tuple[int, Item, tuple[Observation, ...]]]:
        """``(index, item, observations)`` of every instance, in design order."""


class Family(ABC):
    """A task family: latent instances with an exact oracle, presented and parsed.

    The engine calls the required members (:data:`REQUIRED`: ``name``, ``answer_space``,
    :meth:`design`, :meth:`parse`); every other member is an optional hook whose default is
    written here, overridden by a method or class attribute of the family's own, or named in
    :attr:`hooks` and imported from the family's module on its first call. A family that can
    draw one instance alone has an ``item(n, index, seed, presentations)`` method, with which
    :func:`design_chunks` streams its design.
    """

    name: str
    answer_space: tuple[str, ...]

    #: What the level ``n`` counts, as the reports name it (table headings, plot axes, "first
    #: failing n"): ``"n"`` unless the family says, e.g. ``"depth"`` or ``"steps"``. An instance
    #: whose options decide what the level counts sets its own in ``__init__``.
    level_name: str = "n"

    #: Hooks implemented in a module of the family's own, imported on the hook's first call (so
    #: that loading a family never loads its policies, metrics or generator): hook name →
    #: ``".module:name"``, relative to the package of the class that declares the table, e.g.
    #: ``{"record_meta": "._generate:meta"}``. Subclasses inherit the hooks so made. Each
    #: hook's own docstring says how it calls what is named (see :data:`DELEGATED`).
    hooks: ClassVar[Mapping[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = cls.__dict__.get("hooks") or {}
        package = getattr(sys.modules.get(cls.__module__), "__package__", None)
        for hook, target in declared.items():
            setattr(cls, hook, _delegate(cls, hook, target, package))

    def __repr__(self) -> str:
        """``ClassName(option=value, …)``, as reports, messages and the design's fingerprint
        name the family: the constructor's options that differ from their defaults, read from
        the attributes of the same names (an option kept under another name is not shown;
        override this to show it)."""
        cls = type(self)
        try:
            parameters = list(inspect.signature(cls).parameters.values())
        except (TypeError, ValueError):  # no signature to read
            parameters = []
        shown = []
        for p in parameters:
            if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) or p.name not in vars(self):
                continue
            value = vars(self)[p.name]
            try:
                default = p.default is not p.empty and bool(value == p.default)
            except Exception:  # a value whose == is not a truth value (an array)
                default = False
            if not default:
                shown.append(f"{p.name}={value!r}")
        return f"{cls.__name__}({', '.join(shown)})"

    @abstractmethod
    def design(
        self, *, levels: Sequence[int], pairs: int, seed: int, presentations: Sequence[str]
    ) -> list[Item]:
        """Per level ``pairs`` latent instances ``z`` with their prompts, each prompt's ``gold``
        the oracle's answer ``y*(z)`` mapped through its presentation's
        :class:`~pytest_competence.protocol.AnswerMap` (presentations are tuples of
        :class:`~pytest_competence.protocol.Transform`, composed with
        :func:`~pytest_competence.protocol.compose`)."""

    @abstractmethod
    def parse(self, text: str) -> Parsed:
        """The model's text to an answer, or an explicit invalid :class:`Parsed`."""

    @property
    def default_presentations(self) -> tuple[str, ...]:
        """What a declaration without ``presentations=`` asks."""
        return DEFAULT_PRESENTATIONS

    #: Sends per prompt when a declaration names no ``attempts=`` (systematicity paper, arXiv:2609.13948, §3.6 gives each
    #: rule-induction variation five).
    default_attempts: ClassVar[int] = 1

    @property
    def strategies(self) -> Any:
        """The family's Hypothesis strategies (``None``: minimisation only replays and confirms
        a failing case, it cannot shrink one)."""
        return None

    def case_space(self, *, max_n: int, presentations: Sequence[str]) -> Any:
        """The suite's declared design space, where minimisation shrinks a failing case: the
        cases this configuration's own design could draw (its vocabulary, its options), with
        these presentations, up to size ``max_n``. By default ``strategies.case_space(max_n=,
        presentations=)``; ``None`` without strategies."""
        return _strategies_space(self, max_n=max_n, presentations=presentations)

    def wider_case_space(self, *, max_n: int, presentations: Sequence[str]) -> Any:
        """A space holding :meth:`case_space` and cases beyond the suite's declaration that
        the family can draw (the ordering family: every catalog vocabulary, with and without
        its distractors): after the suite's minimal case is found, minimisation goes on in it,
        and a case it finds outside the suite is a finding of its own ("also fails outside
        this suite"), never the test's minimal case. ``None`` (the default): the family has
        nothing beyond the suite's space."""
        return None

    def check_design(
        self, *, levels: Sequence[int], pairs: int, seed: int, presentations: Sequence[str]
    ) -> None:
        """Raise :class:`InvalidArgument` when the design cannot be drawn (by default the
        design itself is the check: nothing is checked before it runs)."""

    def audit_components(
        self, levels: Sequence[int], presentations: Sequence[str]
    ) -> list[AuditComponent]:
        """The supports an audit can add to a suite of this family over ``levels`` and
        ``presentations``."""
        return []

    #: ``ref:shortcuts`` runs these specs (e.g. ``"ref:horn-bounded?depth=4"``) on the family.
    shortcuts: ClassVar[tuple[str, ...]] = ()

    #: ``competence generate NAME`` writes these levels unless ``--levels`` names others.
    default_levels: ClassVar[tuple[int, ...]] = ()

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
        (``ref:ideal`` and the noisy policies built on it); ``None`` when it cannot be read, as
        for another family's prompt, which ``ref:ideal`` may offer every family. Raising
        instead is an error that names this method."""
        return None

    @classmethod
    def metrics(cls, evaluation: Evaluated, *, bootstrap: int = 0, seed: int = 0) -> dict[str, Any]:
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

    #: Named splits beside every family's ``train`` and ``eval`` (``pytest_competence.training.splits``):
    #: ``(name, training, options, description)``, ``options`` mapping an option to the values
    #: the split covers.
    named_splits: ClassVar[tuple[tuple[str, bool, Mapping[str, tuple[Any, ...]], str], ...]] = ()

    #: The split training rows come from unless ``--split`` names another.
    training_split: ClassVar[str] = "train"

    @classmethod
    def generate_options(cls, parser: Any) -> None:
        """Add the family's own flags to ``competence generate NAME`` (its argparse parser,
        which holds the family's flags alone); none by default."""

    @classmethod
    def generate_designs(cls, args: Any) -> Iterator[tuple[FamilyLike, dict[str, Any]]]:
        """``(family, design keywords)`` for each design ``competence generate NAME`` writes
        from its parsed ``args``: by default one design, the family built from ``--option``
        values, at ``--levels`` (else :attr:`default_levels`), ``--per-level`` (else 200) and
        ``--presentations`` (else the family's default)."""
        made = construct(cls, dict(args.options))
        levels = args.levels or list(cls.default_levels)
        if not levels:
            raise InvalidArgument(
                f"competence generate {cls.name} needs --levels: the "
                f"family declares no default_levels"
            )
        yield (
            made,
            dict(
                levels=levels,
                pairs=args.pairs or 200,
                presentations=args.presentations or default_presentations(made),
            ),
        )

    @classmethod
    def record_meta(cls, item: Item) -> dict[str, Any]:
        """``meta`` of ``competence generate``'s records of ``item``: how a checker re-derives
        the gold answer from the prompt text alone (none by default)."""
        return {}


#: The hooks :attr:`Family.hooks` may name, and how each calls what it names: ``"value"`` returns
#: it as it is (a mapping), ``"call"`` calls it with the hook's arguments, ``"family"`` with the
#: family class (or, for a method of the object, the family object) first.
DELEGATED: Mapping[str, str] = {
    "shortcut_policies": "value",
    "ideal_answer": "call",
    "metrics": "call",
    "tables": "call",
    "figures": "call",
    "generate_options": "call",
    "record_meta": "call",
    "generate_designs": "family",
    "audit_components": "family",
}


def _delegate(cls: type[Family], hook: str, target: str, package: str | None) -> Any:
    """The hook ``hook`` of ``cls`` made from ``target`` (``".module:name"``), as
    :data:`DELEGATED` says, with the base hook's name and docstring."""
    where = f"{cls.__qualname__}.hooks[{hook!r}]"
    if hook not in DELEGATED:
        raise TypeError(f"{where}: not a hook a module can implement; those are {list(DELEGATED)}")
    if hook in vars(cls):
        raise TypeError(f"{where}: {cls.__qualname__} defines {hook} itself; name it once")
    module, _, name = target.partition(":")
    if not module or not name:
        raise TypeError(f"{where}: expected '.module:name', but got {target!r}")
    module = importlib.util.resolve_name(module, package)
    kind = DELEGATED[hook]

    def made(owner: Any, /, *args: Any, **kwargs: Any) -> Any:
        found = getattr(importlib.import_module(module), name)
        if kind == "value":
            return found
        return found(owner, *args, **kwargs) if kind == "family" else found(*args, **kwargs)

    base = getattr(Family, hook)
    functools.update_wrapper(made, getattr(base, "__func__", base))
    made.__module__, made.__qualname__ = cls.__module__, f"{cls.__qualname__}.{hook}"
    made.__doc__ = f"{inspect.cleandoc(made.__doc__ or '')}\n\nImplemented by ``{module}:{name}``."
    return made if hook == "audit_components" else classmethod(made)


def construct(
    cls: type[Family], options: Mapping[str, object], *, also: Sequence[str] = ()
) -> Family:
    """``cls(**options)``. An option the family does not take is an :class:`InvalidArgument`
    that names it, suggests the nearest name and lists the family's options; ``also`` are the
    other keywords valid where the options were written (a marker's ``levels``, ``pairs``…),
    suggested and listed too."""
    import difflib

    try:
        parameters = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):  # no signature to read: the constructor decides
        parameters = []
    if parameters and not any(p.kind is p.VAR_KEYWORD for p in parameters):
        valid = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        unknown = [k for k in options if k not in valid]
        if unknown:
            near = difflib.get_close_matches(unknown[0], [*valid, *also], n=1)
            raise InvalidArgument(
                f"family={cls.name!r} has no option {unknown[0]!r}"
                + (f" (did you mean {near[0]}=?)" if near else "")
                + f"; its options are {', '.join(valid) or 'none'}"
                + (f" (and {', '.join(also)})" if also else "")
            )
    try:
        return cls(**options)
    except TypeError as exc:
        if isinstance(exc, InvalidArgument):
            raise
        raise InvalidArgument(
            f"family={cls.name!r} does not take these options: {exc} "
            f"(given: {', '.join(map(repr, sorted(options)))})"
        ) from None


def _strategies_space(family: object, *, max_n: int, presentations: Sequence[str]) -> Any:
    make = getattr(getattr(family, "strategies", None), "case_space", None)
    return None if make is None else make(max_n=max_n, presentations=presentations)


def case_spaces(family: object, *, max_n: int, presentations: Sequence[str]) -> tuple[Any, Any]:
    """The suite's case space of ``family`` and the wider one (:meth:`Family.case_space`,
    :meth:`Family.wider_case_space`), either ``None``. Looked up by name, as the protocol's
    other parts are: a family object that does not subclass :class:`Family` gets the
    defaults (its strategies' space, nothing wider)."""
    suite = getattr(family, "case_space", None)
    wider = getattr(family, "wider_case_space", None)
    return (
        suite(max_n=max_n, presentations=presentations)
        if callable(suite)
        else _strategies_space(family, max_n=max_n, presentations=presentations),
        wider(max_n=max_n, presentations=presentations) if callable(wider) else None,
    )


def default_presentations(family: object) -> tuple[str, ...]:
    """The presentations a design of ``family`` uses when none are named: the family's own
    ``default_presentations`` (every reformulation, variation type or intervention cell it has),
    else the original and its equivalent rewording."""
    return tuple(getattr(family, "default_presentations", DEFAULT_PRESENTATIONS))


def design_chunks(
    family: FamilyLike,
    *,
    levels: Sequence[int],
    pairs: int,
    seed: int,
    presentations: Sequence[str],
    size: int = CHUNK_INSTANCES,
) -> Iterator[list[Item]]:
    """``family``'s design, ``size`` instances at a time, in design order.

    Every built-in family draws instance ``i`` of level ``n`` from generators keyed by
    ``(seed, n, i, …)`` alone (``pytest_competence.strategies.stream_rng``), so the chunks
    concatenate to exactly ``family.design(...)`` (tests/test_generate_stream.py checks each
    family): a family with an ``item(n, index, seed, presentations)`` method is asked instance
    by instance; one without is asked a level at a time. The design is checked before the first
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
