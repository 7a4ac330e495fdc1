"""Design → prompts → one batched model call → parsed observations.

Every prompt of a design goes to the model in a single call; every answer comes back as an
:class:`Observation` — parsed, or explicitly invalid with its reason. Nothing is dropped.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from pytest_competence.models import Model
from pytest_competence.strategies import Family, Item, Parsed, Prompt

__all__ = [
    "CannotScore", "Evaluation", "ModelProtocolError", "Observation", "ask_model", "evaluate",
    "majority",
]


class ModelProtocolError(RuntimeError):
    """The model broke the batch contract (e.g. returned the wrong number of answers)."""


@dataclass(frozen=True)
class Observation:
    """One prompt, the model's raw answer (``None`` when the call for it failed), and its parse."""

    prompt: Prompt
    raw: str | None
    parsed: Parsed
    attempts: tuple[tuple[str | None, Parsed], ...] = ()  # every attempt, when N > 1

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


class CannotScore(RuntimeError):
    """A "score" prompt sent to a model without ``score()``: an invalid cell, never dropped."""


def _observe(family: Family, prompt: Prompt, answer: object) -> Observation:
    if isinstance(answer, CannotScore):
        return Observation(prompt, None, Parsed(None, str(answer)))
    if isinstance(answer, BaseException):
        return Observation(prompt, None, Parsed(None, f"model error: {type(answer).__name__}: {answer}"))
    if not isinstance(answer, str):
        return Observation(prompt, None, Parsed(None, f"model returned {type(answer).__name__}, not text"))
    return Observation(prompt, answer, family.parse(answer))


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
        got = list(model.generate([prompts[i] for i in generated]))
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
    winner = majority_vote(answers)
    attempts = tuple((o.raw, o.parsed) for o in tries)
    if winner is None:
        shown = ", ".join("invalid" if a is None else a for a in answers)
        parsed = Parsed(None, f"no majority over {len(tries)} attempts ({shown})")
        return Observation(prompt, tries[0].raw, parsed, attempts)
    raw = next(o.raw for o in tries if o.parsed.answer == winner)
    return Observation(prompt, raw, Parsed(winner), attempts)


def evaluate(family: Family, items: Sequence[Item], model: Model, attempts: int = 1) -> Evaluation:
    """Send every prompt of ``items`` to ``model`` in one batch and parse every answer.

    With ``attempts = N > 1`` each prompt is sent N times in the same batch (``Prompt.attempt``
    tells them apart) and the observation is the majority over the N parsed answers.
    """
    prompts = [
        replace(p, attempt=k) if k else p
        for item in items for p in item.prompts for k in range(attempts)
    ]
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
