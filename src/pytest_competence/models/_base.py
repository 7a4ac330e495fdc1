"""The Model protocol and what every backend shares: the answers' outcomes and the wrappers.

A model answers a batch of prompts in one call: an entry per prompt, in order, the raw text or an
exception. :class:`NoAnswer` is an explicit invalid answer; any other exception, and
:class:`ModelCallError`, an infrastructure error; :class:`ModelProtocolError` a broken batch
contract. The backends (:mod:`.http`, :mod:`.hf`, :mod:`.vllm`, :mod:`.python`, the reference
policies) import these from here; :mod:`pytest_competence.models` re-exports them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pytest_competence.protocol import Prompt

__all__ = [
    "Model",
    "ModelCallError",
    "ModelProtocolError",
    "ModelRaised",
    "ModelWrapper",
    "NoAnswer",
    "ScoringModel",
    "Unloadable",
    "as_they_come",
    "groups_as_they_come",
    "overlaps_generation",
    "reads_family",
    "reads_prompts",
    "where_raised",
]


@runtime_checkable
class Model(Protocol):
    """Anything that answers prompts: batch in, batch out, one entry per prompt, in order.

    An entry is the raw answer text, or an :class:`Exception` for a prompt that could not be
    answered — recorded as an invalid observation with its reason, never dropped.

    A model may also have a ``families`` attribute: the names of the families whose prompts it
    reads (a family's shortcut policy reads that family's only). Without one, or with ``None``,
    it reads every family's; see :func:`reads_family`. A ``reads(prompt)`` method says whether
    it reads one prompt of those families (a reference policy parses prompts, and a family's
    configuration — a vocabulary of one's own — may write some it cannot parse); see
    :func:`reads_prompts`. And ``releases_gil = True`` says that
    ``generate`` mostly waits outside Python (a server, a GPU, torch's kernels): the plugin then
    generates the design's next chunk in a thread meanwhile (:func:`overlaps_generation`).
    Without it the chunks are generated in turn: two threads running Python at once only
    contend for the interpreter (a quarter more CPU on 36,000 prompts of an instant model).
    """

    name: str

    def generate(self, prompts: Sequence[Prompt]) -> Sequence[str | BaseException]: ...


@runtime_checkable
class ScoringModel(Model, Protocol):
    """A model that can also score fixed candidate answers (the "candidate scoring" readout).

    ``score`` returns, per prompt, each candidate's log-probability as the answer to that prompt
    (the sum of its tokens' conditional log-probabilities), or an exception for a prompt that
    could not be scored.
    """

    def score(
        self, prompts: Sequence[Prompt], candidates: Sequence[str]
    ) -> Sequence[Mapping[str, float] | BaseException]: ...


class NoAnswer(Exception):
    """The model was reached and answered, but with nothing to read: an explicit *invalid*
    observation with this reason, like unparseable text (e.g. a reasoning model that spent every
    token before the answer, or scores that tie). Any other exception in a model's batch is an
    *infrastructure error*: a server or model that failed, never a wrong answer."""


class ModelCallError(RuntimeError):
    """A request or call that failed for good (after its retries): an infrastructure error whose
    message says what the server or the network did."""


class ModelProtocolError(RuntimeError):
    """The model broke the batch contract: not one answer per prompt, in order, as text."""


class ModelRaised(RuntimeError):
    """The model object raised instead of answering a batch: an infrastructure error, never a
    wrong answer. Its message — the same in the main evaluation, in minimisation and in a
    Hypothesis test — names the model, the exception, where it was raised (``file:line``) and
    the batch's first prompt; ``exception`` is the model's own (also the ``__cause__``)."""

    def __init__(self, model: str, exception: Exception, prompts: Sequence[Prompt]) -> None:
        self.model, self.exception, self.prompts = model, exception, len(prompts)
        first = prompts[0] if prompts else None
        shown = ""
        if first is not None:
            text = first.text if len(first.text) <= 80 else first.text[:79] + "…"
            batch = "1 prompt" if len(prompts) == 1 else f"a batch of {len(prompts)} prompts"
            shown = f" {batch} (the first: {first.instance_id} [{first.presentation}] {text!r})"
        detail = f": {exception}" if str(exception) else ""
        super().__init__(
            f"model {model!r} raised {type(exception).__name__}{detail} (at "
            f"{where_raised(exception)}) instead of answering{shown}"
        )


def where_raised(exc: BaseException) -> str:
    """``file:line`` of the innermost frame of ``exc``'s traceback: where a model failed."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return "an unknown place" if tb is None else f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"


class ModelWrapper:
    """Base of models that wrap another (a cache, a progress line): the name and every
    attribute the wrapper lacks — ``score()``, a backend's settings — are the wrapped model's."""

    def __init__(self, model: Model) -> None:
        self.model = model

    @property
    def name(self) -> str:
        """The wrapped model's name."""
        return self.model.name

    @name.setter
    def name(self, value: str) -> None:
        self.model.name = value

    def __getattr__(self, attr: str) -> Any:
        # Only reached for attributes this wrapper lacks.
        model = self.__dict__.get("model")
        if model is None:
            raise AttributeError(attr)
        return getattr(model, attr)


def as_they_come(
    model: Model, prompts: Sequence[Prompt]
) -> Iterator[tuple[int, str | BaseException]]:
    """``(index, answer)`` pairs as the model produces them.

    A model with a ``stream(prompts)`` method yields them one by one (in any order), which lets a
    cache commit answers as they arrive and a progress line move; any other model answers the
    whole batch first. Checking that every index comes exactly once is the caller's job.
    """
    stream = getattr(model, "stream", None)
    if callable(stream):
        yield from stream(prompts)
    else:
        yield from enumerate(model.generate(prompts))


def groups_as_they_come(
    model: Model, prompts: Sequence[Prompt]
) -> Iterator[list[tuple[int, str | BaseException]]]:
    """:func:`as_they_come`'s pairs in lists: those the model produced together.

    A model whose class defines ``stream_groups(prompts)`` beside its ``stream`` (the HTTP
    backend: the answers its request stream hands over at once) gives its lists, which lets a
    cache commit each list in one transaction; any other model gives one pair per list. Only
    the class that defines ``stream`` is trusted with its groups: a wrapper forwards every
    attribute it lacks to the model it wraps, and a subclass may answer differently from its
    base, so neither may have its own ``stream`` bypassed.
    """
    cls = type(model)
    grouped = _defined_by(cls, "stream_groups")
    if grouped is not None and grouped is _defined_by(cls, "stream"):
        yield from model.stream_groups(prompts)  # type: ignore[attr-defined]
    else:
        for pair in as_they_come(model, prompts):
            yield [pair]


def _defined_by(cls: type, attr: str) -> type | None:
    return next((k for k in cls.__mro__ if attr in vars(k)), None)


def reads_family(model: Model, family: str) -> bool:
    """Whether ``model`` reads prompts of the family called ``family``.

    A test × model pair where it does not is *not applicable*: the plugin skips it, and the
    reports show it as ``n/a`` — never as a model the suite caught.
    """
    families = getattr(model, "families", None)
    return families is None or family in families


def reads_prompts(model: Model, prompts: Iterable[Prompt]) -> bool:
    """Whether ``model`` reads every one of ``prompts`` (of a family it reads).

    A model with a ``reads(prompt)`` method says so (the reference policies: whether they can
    parse the prompt); any other model reads every prompt, and ``prompts`` is never iterated.
    The plugin asks it of a design's first instance: where the answer is no, the test × model
    pair is *not applicable*, as for another family's prompts — never a model the suite caught.
    """
    reads = getattr(model, "reads", None)
    return reads is None or all(reads(prompt) for prompt in prompts)


def overlaps_generation(model: object) -> bool:
    """Whether the design's next chunk is generated while ``model`` answers this one: only for
    a model that declares ``releases_gil`` (see :class:`Model`)."""
    return bool(getattr(model, "releases_gil", False))


class Unloadable:
    """The model of a spec whose module or backend could not be loaded when a test first needed
    it: every call fails with why (a :class:`ModelCallError`), so each of its tests is an
    infrastructure error with a result in every report, never a test that vanishes."""

    def __init__(self, name: str, reason: str) -> None:
        self.name, self.reason = name, reason

    def generate(self, prompts: Sequence[Prompt]) -> list[str | BaseException]:
        """Fail: the model could not be loaded."""
        raise ModelCallError(self.reason)
