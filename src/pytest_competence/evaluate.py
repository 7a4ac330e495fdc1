"""Design → prompts → one batched model call → parsed observations.

Every prompt of a design goes to the model in a single call; every answer comes back as an
:class:`Observation` with one of three outcomes, kept apart:

- *parsed*: the model's text, read by the family's parser;
- *invalid*: the model answered, but with nothing the parser can read (or a
  :class:`~pytest_competence.models.NoAnswer`): counted wrong, as the papers count it;
- *infrastructure error*: the server or the model object failed (a transport error after its
  retries, an exception, a non-text answer). Not an answer at all: a test whose evaluation holds
  such errors is an error, never a failure, and is never minimised.

Nothing is dropped.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from pytest_competence.models import Model, ModelCallError, ModelProtocolError, NoAnswer
from pytest_competence.strategies import Family, Item, Parsed, Prompt

__all__ = [
    "CannotScore", "Evaluation", "InfrastructureError", "ModelProtocolError", "Observation", "ask_model", "evaluate",
    "majority", "sent_prompts",
]


@dataclass(frozen=True)
class Observation:
    """One prompt, the model's raw answer (``None`` when the call for it failed), and its parse.

    ``error`` is the reason of an infrastructure error (see the module docstring), ``None`` for an
    answer; an errored observation is also invalid, with the same reason.
    """

    prompt: Prompt
    raw: str | None
    parsed: Parsed
    attempts: tuple[tuple[str | None, Parsed], ...] = ()  # every attempt, when N > 1
    error: str | None = None

    @property
    def valid(self) -> bool:
        return self.parsed.valid

    @property
    def correct(self) -> bool:
        """Correct against the presentation's (mapped) gold; invalid answers are never correct."""
        return self.parsed.answer == self.prompt.gold


@dataclass(frozen=True)
class Evaluation:
    """All observations of one design under one model: ``observations[i]`` belongs to ``items[i]``."""

    model: str
    family: Family
    items: tuple[Item, ...]
    observations: tuple[tuple[Observation, ...], ...]
    calls: int = 1
    seconds: float = 0.0
    meta: dict[str, object] = field(default_factory=dict)

    @property
    def presentations(self) -> tuple[str, ...]:
        return tuple(p.presentation for p in self.items[0].prompts) if self.items else ()

    def errors(self) -> list[Observation]:
        """The observations that are infrastructure errors, in design order."""
        return [o for row in self.observations for o in row if o.error is not None]

    def infrastructure_error(self) -> InfrastructureError | None:
        """The infrastructure errors of this evaluation as one exception; ``None`` without any."""
        errors = self.errors()
        if not errors:
            return None
        return InfrastructureError(self.model, errors, sum(len(row) for row in self.observations))


class InfrastructureError(RuntimeError):
    """Prompts that ended in infrastructure errors where an answer was needed (see above)."""

    def __init__(self, model: str, errors: Sequence[Observation], total: int) -> None:
        self.model, self.count, self.total = model, len(errors), total
        self.reasons = Counter(o.error for o in errors)
        first = errors[0].error if errors else "none"
        super().__init__(f"infrastructure errors from model {model!r}: {self.count} of {total} "
                         f"prompts got no answer (first: {first})")


class CannotScore(NoAnswer):
    """A "score" prompt sent to a model without ``score()``: an invalid cell, never dropped."""


def _observe(family: Family, prompt: Prompt, answer: object) -> Observation:
    if isinstance(answer, NoAnswer):
        return Observation(prompt, None, Parsed(None, str(answer)))
    if isinstance(answer, str):
        return Observation(prompt, answer, family.parse(answer))
    if isinstance(answer, ModelCallError):  # the message says it all
        reason = str(answer)
    elif isinstance(answer, BaseException):
        reason = f"{type(answer).__name__}: {answer}" if str(answer) else type(answer).__name__
    else:
        reason = (f"the model returned a {type(answer).__name__}, not text; generate() must "
                  f"return one str (or exception) per prompt")
    return Observation(prompt, None, Parsed(None, reason), error=reason)


def ask_model(model: Model, prompts: Sequence[Prompt]) -> list[object]:
    """One answer per prompt, in order: one batched call per readout.

    ``generate`` prompts go to ``model.generate``; ``score`` prompts to the candidate-scoring
    readout (:func:`~pytest_competence.models.readout.scored_stream`: the answer-space candidate
    with the highest log-probability) when the model has a callable ``score`` — through the
    response cache's ``scored`` where there is one — and are :class:`CannotScore` otherwise.
    """
    answers: list[object] = [None] * len(prompts)
    generated = [i for i, p in enumerate(prompts) if p.readout != "score"]
    scored = [i for i, p in enumerate(prompts) if p.readout == "score"]
    if generated:
        batch = model.generate([prompts[i] for i in generated])
        if isinstance(batch, (str, bytes, Mapping)) or not isinstance(batch, Iterable):
            raise ModelProtocolError(
                f"model {model.name!r}: generate() returned a {type(batch).__name__}; it must "
                f"return a list with one answer (str or exception) per prompt, in order"
            )
        got = list(batch)
        if len(got) != len(generated):
            raise ModelProtocolError(
                f"model {model.name!r} returned {len(got)} answers for {len(generated)} prompts; "
                f"generate() must return exactly one answer (or exception) per prompt, in order"
            )
        for i, answer in zip(generated, got):
            answers[i] = answer
    if scored:
        for i, score_answer in zip(scored, _score(model, [prompts[i] for i in scored])):
            answers[i] = score_answer
    return answers


def _score(model: Model, prompts: Sequence[Prompt]) -> list[object]:
    if not callable(getattr(model, "score", None)):
        reason = CannotScore(f"backend cannot score: model {model.name!r} has no score() method, "
                             f"so the 'score' readout has no answer")
        return [reason] * len(prompts)
    via_cache = getattr(model, "scored", None)
    if callable(via_cache):
        return list(via_cache(prompts))
    from pytest_competence.models.readout import in_order, scored_stream

    stream = scored_stream(model, prompts)  # type: ignore[arg-type]
    return list(in_order(stream, len(prompts), model.name))


def majority(prompt: Prompt, tries: Sequence[Observation]) -> Observation:
    """One observation from N attempts: the strict-majority answer (seeds/002 §3.6), else invalid.

    Every attempt is kept on the observation; ``raw`` is the first attempt that gave the
    winning answer (or the first attempt, when none won).
    """
    from pytest_competence.stats import majority_vote

    answers = [o.parsed.answer for o in tries]
    attempts = tuple((o.raw, o.parsed) for o in tries)
    failed = next((o.error for o in tries if o.error is not None), None)
    if failed is not None:  # one attempt lost to an outage: the vote is not the model's
        return Observation(prompt, tries[0].raw, Parsed(None, failed), attempts, failed)
    winner = majority_vote(answers)
    if winner is None:
        shown = ", ".join("invalid" if a is None else a for a in answers)
        parsed = Parsed(None, f"no majority over {len(tries)} attempts ({shown})")
        return Observation(prompt, tries[0].raw, parsed, attempts)
    raw = next(o.raw for o in tries if o.parsed.answer == winner)
    return Observation(prompt, raw, Parsed(winner), attempts)


def sent_prompts(items: Sequence[Item], attempts: int = 1) -> list[Prompt]:
    """Every prompt the model is sent for ``items``: each presentation ``attempts`` times."""
    return [replace(p, attempt=k) if k else p
            for item in items for p in item.prompts for k in range(attempts)]


def evaluate(family: Family, items: Sequence[Item], model: Model, attempts: int = 1) -> Evaluation:
    """Send every prompt of ``items`` to ``model`` in one batch and parse every answer.

    With ``attempts = N > 1`` each prompt is sent N times in the same batch (``Prompt.attempt``
    tells them apart) and the observation is the majority over the N parsed answers.
    """
    prompts = sent_prompts(items, attempts)
    start = time.perf_counter()
    answers = ask_model(model, prompts)
    seconds = time.perf_counter() - start
    observations = []
    it = iter(answers)
    for item in items:
        row = []
        for p in item.prompts:
            tries = [_observe(family, p, next(it)) for _ in range(attempts)]
            row.append(tries[0] if attempts == 1 else majority(p, tries))
        observations.append(tuple(row))
    return Evaluation(model.name, family, tuple(items), tuple(observations), 1, seconds,
                      {"attempts": attempts})
