"""Requests through the ``openai:`` backend's request stream (:class:`~pytest_competence.models._pipe.Pipe`),
without a model around it: what the wire and redaction tests send."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_competence.models._limits import DEFAULT_MAX_RESPONSE_MIB, MIB
from pytest_competence.models._pipe import Pipe
from pytest_competence.models._transport import Breaker, Call, Connect, RetryPolicy

__all__ = ["ask"]


def ask(
    calls: Sequence[Call],
    urls: Sequence[str],
    *,
    headers: Mapping[str, str] | None = None,
    parse: Callable[[Any], Any] = lambda data: data,
    concurrency: int = 1,
    policy: RetryPolicy | None = None,
    secrets: Sequence[str] = (),
    connect: Connect | None = None,
) -> list[tuple[int, Any]]:
    """``(index, parse(body) or ModelCallError)`` for every call, in order of completion, from a
    pipe opened for them and closed after (one try a request unless ``policy`` says more)."""
    pipe = Pipe(
        urls,
        headers or {},
        concurrency=concurrency,
        timeout=5.0,
        policy=policy or RetryPolicy(attempts=1),
        breaker=Breaker(len(urls)),
        max_body=DEFAULT_MAX_RESPONSE_MIB * MIB,
        connect=connect,
    )
    try:
        return list(pipe.stream(calls, parse, secrets))
    finally:
        pipe.close()
