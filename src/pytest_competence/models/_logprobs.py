"""Candidate scores from an OpenAI-compatible response's logprobs, as ``readout=score`` reads them.

Chat mode: the first answer token's ``top_logprobs``, each candidate's score the log-sum-exp of
the alternatives that spell it (case and surrounding space ignored). Completions mode: the
prompt and candidate echoed with their tokens' logprobs, a candidate's score the sum over the
tokens overlapping its characters. A response without logprobs is a final error, not retried.
Shared by the ``openai:`` model (:mod:`.http`) and ``competence batch import``
(:func:`read_scores`), so a batch round trip reads the margins a direct run reads.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .readout import Scores, logsumexp

__all__ = ["echoed_tokens", "first_token_logprobs", "read_scores", "span_logprob", "top_scores"]


def read_scores(how: Mapping[str, Any], data: Any) -> Scores | float:
    """What one scoring response says (``how`` from :meth:`OpenAIModel.batch_lines`): every
    candidate's score (chat mode), or the one candidate's summed logprob (completions mode).
    Raises ``ValueError`` saying why the response cannot be read as scores."""
    try:
        if "span" not in how:
            return top_scores(first_token_logprobs(data), how["candidates"])
        start, end = how["span"]
        value = span_logprob(echoed_tokens(data), (int(start), int(end)))
    except (KeyError, IndexError, TypeError) as exc:
        raise ValueError(
            f"a scoring response whose logprobs cannot be read ({type(exc).__name__}: {exc})"
        ) from None
    except ValueError as exc:  # no logprobs at all (the server cannot score), or a bad shape
        raise ValueError(str(exc)) from None
    if isinstance(value, BaseException):
        raise ValueError(str(value))
    return value


def top_scores(tops: Sequence[tuple[str, float]], candidates: Sequence[str]) -> Scores:
    """Each candidate's score from the first answer token's alternatives."""
    return {c: logsumexp(lp for tok, lp in tops if _same(tok, c)) for c in candidates}


def _same(token: str, candidate: str) -> bool:
    return token.strip().lower() == candidate.strip().lower()


def no_logprobs(how: str) -> Exception:
    """Final, not retried: a server that answers without logprobs does so every time."""
    from ._transport import FinalResponse

    return FinalResponse(
        f"the server returned no logprobs, so readout=score cannot rank the answer space; "
        f"serve the model from a server that returns them ({how}), or use readout=generate"
    )


def first_token_logprobs(data: Any) -> list[tuple[str, float]]:
    lp = data["choices"][0].get("logprobs")
    content = lp.get("content") if isinstance(lp, dict) else None
    tops = content[0].get("top_logprobs") if content else None
    if not tops:
        raise no_logprobs(
            "chat mode needs 'logprobs' with 'top_logprobs'; vLLM returns up to "
            "--max-logprobs alternatives, default 20"
        )
    return [(t["token"], float(t["logprob"])) for t in tops]


def echoed_tokens(data: Any) -> list[tuple[int, str, float | None]]:
    """``(offset, token, logprob)`` of an echoed completion; a missing field is a bad response."""
    lp = data["choices"][0].get("logprobs")
    if not lp:
        raise no_logprobs("completions mode needs 'echo' with 'logprobs', as vLLM serves them")
    return list(zip(lp["text_offset"], lp["tokens"], lp["token_logprobs"], strict=True))


def span_logprob(
    tokens: Sequence[tuple[int, str, float | None]], span: tuple[int, int]
) -> float | BaseException:
    """The summed logprob of the tokens overlapping the candidate's characters."""
    start, end = span
    covering = [
        value for offset, token, value in tokens if offset < end and offset + len(token) > start
    ]
    if not covering or any(value is None for value in covering):
        return RuntimeError(
            "the server's echoed logprobs do not cover the candidate; it may not "
            "support candidate scoring in completions mode (echo + logprobs)"
        )
    total = sum(float(v) for v in covering if v is not None)
    return total if math.isfinite(total) else -math.inf
