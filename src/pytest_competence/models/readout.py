"""Readouts shared by the backends: answers from candidate scores, margins, streams in order.

The *candidate scoring* readout asks a model for the log-probability of each answer in the
prompt's answer space (``yes``/``no``, ``A``/``B``/``C``) and answers with the most likely one —
no sampling, no parsing of free text. The yes/no *margin* is ``log p(yes) − log p(no)``; for
single-token candidates that is exactly the difference of their logits.

The answer keeps every candidate's score: :func:`best_candidate` returns a :class:`Scored`
text (a ``str``, so it travels wherever an answer does) or a :class:`ReadoutError` carrying
them, and the evaluation keeps them as a compact array (the output decomposition of
:mod:`pytest_competence.probe` reads it: CBE paper, arXiv:2610.22894, App. E.3).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ._base import ModelProtocolError, NoAnswer

if TYPE_CHECKING:
    from pytest_competence.protocol import Prompt

    from ._base import ScoringModel

__all__ = [
    "Answer",
    "ReadoutError",
    "Scored",
    "Scores",
    "best_candidate",
    "group_by_space",
    "in_order",
    "logsumexp",
    "margins",
    "scored_answers",
    "scored_stream",
]


#: One entry of a model's batch: the answer text, or why there is none.
Answer = str | BaseException
#: Candidate → log-probability as the answer, for one prompt.
Scores = dict[str, float]
T = TypeVar("T")


class ReadoutError(NoAnswer):
    """Scores that name no single best candidate (all unknown, or a tie): an invalid answer.

    ``scores`` are the candidates' scores that tied (``None`` when there were none)."""

    def __init__(self, message: str, scores: Mapping[str, float] | None = None) -> None:
        super().__init__(message)
        self.scores = None if scores is None else dict(scores)


class Scored(str):
    """The candidate-scoring readout's answer: the best candidate's text, with ``scores``, every
    candidate's log-probability (candidate → score) that chose it."""

    scores: dict[str, float]

    def __new__(cls, text: str, scores: Mapping[str, float]) -> Scored:
        self = super().__new__(cls, text)
        self.scores = dict(scores)
        return self


def logsumexp(values: Iterable[float]) -> float:
    """``log Σ exp(v)``, stable; ``-inf`` for no values."""
    values = list(values)
    top = max(values, default=-math.inf)
    if top == -math.inf:
        return -math.inf
    return top + math.log(sum(math.exp(v - top) for v in values))


def best_candidate(scores: Mapping[str, float]) -> Scored | ReadoutError:
    """The candidate with the highest score (with every score), or an error saying why there
    is none."""
    finite = {c: s for c, s in scores.items() if s > -math.inf}
    if not finite:
        return ReadoutError(f"no candidate has a score ({', '.join(scores)} all unseen)", scores)
    top = max(finite.values())
    best = [c for c, s in finite.items() if s == top]
    if len(best) > 1:
        return ReadoutError(
            f"candidates {', '.join(best)} tie at log-probability {top:.4f}", scores
        )
    return Scored(best[0], scores)


def in_order(pairs: Iterable[tuple[int, T]], count: int, name: str) -> list[T]:
    """The answers of a stream of ``(index, answer)`` pairs, as a list in prompt order.

    Raises :class:`ModelProtocolError` when an index is missing, repeated or out of range: a
    backend bug must not pass for an answer.
    """
    slots: list[Any] = [_MISSING] * count
    for i, answer in pairs:
        if not 0 <= i < count or slots[i] is not _MISSING:
            raise ModelProtocolError(
                f"model {name!r} answered prompt {i} of {count} twice or out of range; a "
                f"stream() must yield each prompt's index exactly once"
            )
        slots[i] = answer
    missing = [i for i, a in enumerate(slots) if a is _MISSING]
    if missing:
        raise ModelProtocolError(
            f"model {name!r} never answered {len(missing)} of {count} prompts (first: {missing[0]})"
        )
    return slots


_MISSING = object()


def scored_answers(
    scores: Iterable[tuple[int, Mapping[str, float] | BaseException]],
) -> Iterator[tuple[int, Answer]]:
    """``(index, best candidate)`` for a stream of ``(index, scores)``; errors pass through."""
    for i, got in scores:
        yield i, got if isinstance(got, BaseException) else best_candidate(got)


def scored_stream(model: ScoringModel, prompts: Sequence[Prompt]) -> Iterator[tuple[int, Answer]]:
    """``(index, best candidate)`` for every prompt: one ``score`` call per answer space."""
    for space, indices in group_by_space(prompts).items():
        scores = model.score([prompts[i] for i in indices], space)
        yield from scored_answers(zip(indices, scores))


def group_by_space(prompts: Sequence[Prompt]) -> dict[tuple[str, ...], list[int]]:
    """Prompt indices grouped by answer space, in first-seen order (one score call per group)."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, p in enumerate(prompts):
        groups.setdefault(tuple(p.answer_space), []).append(i)
    return groups


def margins(
    model: ScoringModel, prompts: Sequence[Prompt], positive: str = "yes", negative: str = "no"
) -> list[float | BaseException]:
    """Per prompt, ``log p(positive) − log p(negative)`` (the yes/no logit margin)."""
    out: list[float | BaseException] = []
    for got in model.score(prompts, (positive, negative)):
        if isinstance(got, BaseException):
            out.append(got)
        else:
            out.append(got[positive] - got[negative])
    return out
