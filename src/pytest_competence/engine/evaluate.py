"""Design → prompts → one batched model call per chunk → parsed observations → compact arrays.

Every prompt of a design (or of one chunk of it) goes to the model in a single call; every answer
comes back as an :class:`Observation` with one of three outcomes, kept apart:

- *parsed*: the model's text, read by the family's parser;
- *invalid*: the model answered, but with nothing the parser can read (or a
  :class:`~pytest_competence.models.NoAnswer`): counted wrong, as the papers count it;
- *infrastructure error*: the server or the model object failed (a transport error after its
  retries, an exception, a non-text answer). Not an answer at all: a test whose evaluation holds
  such errors is an error, never a failure, and is never minimised.

Nothing is dropped.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace

from pytest_competence.engine._reduced import design_rows
from pytest_competence.engine.evaluation import Evaluation, InfrastructureError, Reduction
from pytest_competence.models import (
    Model,
    ModelCallError,
    ModelProtocolError,
    ModelRaised,
    NoAnswer,
)
from pytest_competence.protocol import FamilyLike, Item, Observation, Parsed, Prompt

__all__ = ["CannotScore", "ask_model", "evaluate", "evaluate_chunks", "majority", "sent_prompts"]


class CannotScore(NoAnswer):
    """A "score" prompt sent to a model without ``score()``: an invalid cell, never dropped."""


def _scores(prompt: Prompt, answer: object) -> tuple[float, ...] | None:
    """The candidate scores an answer carries (:class:`~.models.readout.Scored`, a tie's
    :class:`~.models.readout.ReadoutError`), in the prompt's answer-space order."""
    scores = getattr(answer, "scores", None)
    if not isinstance(scores, Mapping):
        return None
    return tuple(float(scores.get(a, -math.inf)) for a in prompt.answer_space)


def _observe(family: FamilyLike, prompt: Prompt, answer: object) -> Observation:
    if isinstance(answer, NoAnswer):
        return Observation(prompt, None, Parsed(None, str(answer)), scores=_scores(prompt, answer))
    if isinstance(answer, str):
        scores = _scores(prompt, answer)
        raw = str(answer)  # the text alone (a plain str); the scores go on the observation
        return Observation(prompt, raw, family.parse(raw), scores=scores)
    if isinstance(answer, ModelCallError):  # the message says it all
        reason = str(answer)
    elif isinstance(answer, BaseException):
        reason = f"{type(answer).__name__}: {answer}" if str(answer) else type(answer).__name__
    else:
        reason = (
            f"the model returned a {type(answer).__name__}, not text; generate() must "
            f"return one str (or exception) per prompt"
        )
    return Observation(prompt, None, Parsed(None, reason), error=reason)


#: Errors that already say which model failed and how: passed on as they are.
_NAMED = (ModelProtocolError, ModelCallError, ModelRaised, InfrastructureError)


def ask_model(model: Model, prompts: Sequence[Prompt]) -> list[object]:
    """One answer per prompt, in order: one batched call per readout. A model that raises
    instead of answering is a :class:`~pytest_competence.models.ModelRaised`.

    ``generate`` prompts go to ``model.generate``; ``score`` prompts to the candidate-scoring
    readout (:func:`~pytest_competence.models.readout.scored_stream`: the answer-space candidate
    with the highest log-probability) when the model has a callable ``score`` — through the
    response cache's ``scored`` where there is one — and are :class:`CannotScore` otherwise.
    """
    answers: list[object] = [None] * len(prompts)
    generated = [i for i, p in enumerate(prompts) if p.readout != "score"]
    scored = [i for i, p in enumerate(prompts) if p.readout == "score"]
    if generated:
        sent = [prompts[i] for i in generated]
        try:
            batch = model.generate(sent)
        except _NAMED:
            raise
        except Exception as exc:  # the model object failed: named with where and on what
            raise ModelRaised(model.name, exc, sent) from exc
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
        sent = [prompts[i] for i in scored]
        try:
            scores = _score(model, sent)
        except _NAMED:
            raise
        except Exception as exc:
            raise ModelRaised(model.name, exc, sent) from exc
        for i, score_answer in zip(scored, scores):
            answers[i] = score_answer
    return answers


def _score(model: Model, prompts: Sequence[Prompt]) -> list[object]:
    if not callable(getattr(model, "score", None)):
        reason = CannotScore(
            f"backend cannot score: model {model.name!r} has no score() method, "
            f"so the 'score' readout has no answer"
        )
        return [reason] * len(prompts)
    via_cache = getattr(model, "scored", None)
    if callable(via_cache):
        return list(via_cache(prompts))
    from pytest_competence.models.readout import in_order, scored_stream

    stream = scored_stream(model, prompts)  # type: ignore[arg-type]
    return list(in_order(stream, len(prompts), model.name))


def majority(prompt: Prompt, tries: Sequence[Observation]) -> Observation:
    """One observation from N attempts: the strict-majority answer (systematicity paper, arXiv:2609.13948, §3.6), else invalid.

    Every attempt is kept on the observation; ``raw`` (and ``scores``) are the first attempt's
    that gave the winning answer (or the first attempt's, when none won).
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
        return Observation(prompt, tries[0].raw, parsed, attempts, scores=tries[0].scores)
    first = next(o for o in tries if o.parsed.answer == winner)
    return Observation(prompt, first.raw, Parsed(winner), attempts, scores=first.scores)


def sent_prompts(items: Sequence[Item], attempts: int = 1) -> list[Prompt]:
    """Every prompt the model is sent for ``items``: each presentation ``attempts`` times."""
    return [
        replace(p, attempt=k) if k else p
        for item in items
        for p in item.prompts
        for k in range(attempts)
    ]


def _observe_chunk(
    family: FamilyLike,
    items: Sequence[Item],
    model: Model,
    attempts: int,
    answers: Sequence[object] | None = None,
) -> list[tuple[Observation, ...]]:
    """Ask every prompt of ``items`` in one batch (unless its ``answers`` came already); one
    row of observations per item."""
    if answers is None:
        answers = ask_model(model, sent_prompts(items, attempts))
    observations = []
    it = iter(answers)
    for item in items:
        row = []
        for p in item.prompts:
            tries = [_observe(family, p, next(it)) for _ in range(attempts)]
            row.append(tries[0] if attempts == 1 else majority(p, tries))
        observations.append(tuple(row))
    return observations


def evaluate(
    family: FamilyLike, items: Sequence[Item], model: Model, attempts: int = 1
) -> Evaluation:
    """Send every prompt of ``items`` to ``model`` in one batch and parse every answer.

    With ``attempts = N > 1`` each prompt is sent N times in the same batch (``Prompt.attempt``
    tells them apart) and the observation is the majority over the N parsed answers.
    """
    items = list(items)
    return evaluate_chunks(family, lambda: [items], model, attempts)


def _ahead(chunks: Iterable[Sequence[Item]]) -> Iterator[Sequence[Item]]:
    """``chunks``, the next one generated in a thread while the caller asks this one: a model
    behind a network (which waits without holding the GIL) overlaps with the generation."""
    from concurrent.futures import ThreadPoolExecutor

    it = iter(chunks)
    with ThreadPoolExecutor(1, thread_name_prefix="competence-design") as pool:
        pending = pool.submit(next, it, None)
        while True:
            chunk = pending.result()
            if chunk is None:
                return
            pending = pool.submit(next, it, None)
            yield chunk


def _after(chunks: Iterable[Sequence[Item]], skipped: int) -> Iterator[Sequence[Item]]:
    """``chunks`` without their first ``skipped`` instances (a chunk may be cut)."""
    for items in chunks:
        if skipped >= len(items):
            skipped -= len(items)
            continue
        yield items[skipped:]
        skipped = 0


def evaluate_chunks(
    family: FamilyLike,
    chunks: Callable[[], Iterable[Sequence[Item]]],
    model: Model,
    attempts: int = 1,
    *,
    each: Callable[[Sequence[Item], list[tuple[Observation, ...]]], None] | None = None,
    bounded: bool = False,
    asked: Iterable[tuple[Sequence[Item], Sequence[object]]] | None = None,
    record_broken: bool = False,
) -> Evaluation:
    """:func:`evaluate` over a design that comes in chunks: one batch per chunk (the next chunk
    generated meanwhile, in a thread, for a model that waits outside Python:
    :func:`~pytest_competence.models.overlaps_generation`), each chunk's observations reduced
    into the evaluation's arrays at once, then handed to ``each`` (e.g. to append their records)
    and dropped. ``chunks()`` must give the same chunks every time it is called: the evaluation
    regenerates its rows from it (:meth:`Evaluation.rows`).
    ``bounded``: keep only a bounded table of raw answers (:class:`~.evaluation.Reduction`).
    ``asked``: the chunks with their answers (every prompt of :func:`sent_prompts`, in order),
    asked elsewhere (:class:`~pytest_competence.engine.lookahead.Pipeline`), instead of asking here.

    A model that raises instead of answering (:class:`~.models.ModelRaised`), breaks the batch
    contract (:class:`~.models.ModelProtocolError`) or cannot be called at all (raises
    :class:`~.models.ModelCallError`) is not asked again. Without
    ``record_broken`` that error is raised; with it, every prompt from that chunk on is an
    infrastructure error with its message, so the evaluation is whole — every instance of the
    design, every record — and ends in :meth:`~.evaluation.Evaluation.infrastructure_error`,
    as an outage does.
    """
    reduction = Reduction(model.name, family, (), attempts, bounded=bounded)
    seconds = 0.0
    calls = 0
    if asked is not None:
        given: Iterable[tuple[Sequence[Item], Sequence[object] | None]] = asked
    else:
        from pytest_competence.models import overlaps_generation

        design = _ahead(chunks()) if overlaps_generation(model) else chunks()
        given = ((items, None) for items in design)
    reduced = 0  # instances reduced, in design order
    try:
        for items, answers in given:
            start = time.perf_counter()
            rows = _observe_chunk(family, items, model, attempts, answers)
            seconds += time.perf_counter() - start
            calls += 1
            reduction.add(items, rows)
            if each is not None:
                each(items, rows)
            reduced += len(items)
    except (ModelRaised, ModelProtocolError, ModelCallError) as exc:
        if not record_broken:
            raise
        broken = ModelCallError(str(exc))
        for items in _after(chunks(), reduced):
            answers = [broken] * (sum(len(item.prompts) for item in items) * attempts)
            rows = _observe_chunk(family, items, model, attempts, answers)
            reduction.add(items, rows)
            if each is not None:
                each(items, rows)
    return reduction.finish(
        design_rows(chunks), calls=max(calls, 1), seconds=seconds, meta={"attempts": attempts}
    )
