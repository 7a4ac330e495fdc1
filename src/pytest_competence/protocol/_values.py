"""The values of competence-based evaluation (CBE paper, arXiv:2610.22894, §3.1): prompts, answers and report data.

A *presentation* renders a latent instance to a :class:`Prompt` and declares, as an
:class:`AnswerMap`, how it relates to the gold answer; a *parser* turns raw model text into a
:class:`Parsed` answer or an explicit invalid outcome; an :class:`Observation` is one prompt with
the model's answer. :class:`Table` and :class:`Figure` are a family's report sections as data.
Everything here is plain data: no pytest, no numpy, no models, no family.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

__all__ = [
    "IDENTITY",
    "AnswerMap",
    "AuditComponent",
    "Figure",
    "InvalidArgument",
    "Item",
    "Observation",
    "Parsed",
    "Prompt",
    "Table",
    "Transform",
    "compose",
    "parse_choice",
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
        """The answer ``answer`` maps to."""
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


#: The answer map of an answer-preserving presentation.
IDENTITY = AnswerMap()


@dataclass(frozen=True)
class Transform:
    """One composable change of presentation; ``answer_map`` declares its effect on the gold.

    A family names its presentations as tuples of transforms applied to the original; the
    presentation's relation to the gold answer is :func:`compose` of theirs.
    """

    name: str
    answer_map: AnswerMap = IDENTITY


@cache
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
        """The instance's id, shared by its prompts."""
        return self.prompts[0].instance_id

    @property
    def params(self) -> Mapping[str, Any]:
        """The instance's parameters θ (``n`` and the family's own), shared by its prompts."""
        return self.prompts[0].params


@dataclass(frozen=True)
class Parsed:
    """A parsed model answer. ``answer is None`` is the explicit *invalid* outcome, with a reason."""

    answer: str | None
    reason: str = ""

    @property
    def valid(self) -> bool:
        """Whether the parser read an answer (``False``: the invalid outcome)."""
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


@dataclass(frozen=True)
class Observation:
    """One prompt, the model's raw answer (``None`` when the call for it failed), and its parse.

    ``error`` is the reason of an infrastructure error (see :mod:`pytest_competence.engine.evaluate`), ``None`` for an
    answer; an errored observation is also invalid, with the same reason. ``scores`` are the
    candidate-scoring readout's log-probabilities, one per answer of ``prompt.answer_space`` in
    its order (``-inf`` for a candidate the model gave none), when the answer came from scoring;
    ``None`` for a generated answer.
    """

    prompt: Prompt
    raw: str | None
    parsed: Parsed
    attempts: tuple[tuple[str | None, Parsed], ...] = ()  # every attempt, when N > 1
    error: str | None = None
    scores: tuple[float, ...] | None = None

    @property
    def valid(self) -> bool:
        """Whether the answer parsed (an infrastructure error never does)."""
        return self.parsed.valid

    @property
    def correct(self) -> bool:
        """Correct against the presentation's (mapped) gold; invalid answers are never correct."""
        return self.parsed.answer == self.prompt.gold


_WORD = re.compile(r"[a-z]+")
_ANSWER_LINE = re.compile(r"answer\s*[:：]\s*\**\s*([a-z]+)", re.IGNORECASE)


def parse_choice(text: object, choices: Iterable[str]) -> Parsed:
    """Parse a one-word answer from free text; ambiguity and silence are *invalid*, never guessed.

    Rules, in order (cf. CRTBench paper, App. B): the last explicit ``Answer: X`` line; else the first
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
