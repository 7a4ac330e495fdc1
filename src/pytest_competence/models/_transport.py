"""JSON POSTs to OpenAI-compatible servers: one request's tries, the replicas, the breaker.

:func:`_one` sends one :class:`Call` until it has an answer or a final error: retried with
exponential backoff and jitter on 408, 429, 5xx, transport errors and unreadable bodies,
honouring ``Retry-After``, within a number of attempts and a time budget; other 4xx, and an
answer past a limit of :mod:`._limits`, are final at once. :func:`connector` opens each worker's
connections (:mod:`._wire`; httpx when the environment names a proxy). :mod:`._pipe` runs them.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import random
import ssl
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import httpx

from pytest_competence.engine.redaction import redact

from ._base import ModelCallError  # the transport's failures (re-exported)
from ._limits import Body, LimitExceeded
from ._wire import Connection, Reply, proxied, within

__all__ = [
    "BadResponse",
    "Breaker",
    "Call",
    "Connect",
    "FinalResponse",
    "ModelCallError",
    "RetryPolicy",
    "connector",
]


T = TypeVar("T")
#: How a worker sends: ``(replica, path, JSON body, timeout) -> the answer``.
Send = Callable[[int, str, bytes, float], Awaitable[Reply]]
#: How a worker opens its connections: entered once per worker, it gives the worker's :data:`Send`.
Connect = Callable[[], AbstractAsyncContextManager[Send]]

_CREDENTIAL_HEADERS = frozenset({"authorization", "api-key", "x-api-key"})


class BadResponse(ValueError):
    """A response body that is not what the API promises (raised by ``parse``; retried)."""


class FinalResponse(BadResponse):
    """A well-formed body that cannot serve the request however often it is sent (not retried).

    Raised by ``parse``, e.g. when a server that returns no logprobs is asked to score.
    """


@dataclass(frozen=True)
class Call:
    """One request: the path under the base URL (``/chat/completions``) and its JSON body."""

    path: str
    body: Mapping[str, Any]


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try: ``attempts`` tries per request within ``budget`` seconds in all.

    The wait before try ``k + 1`` is drawn from ``[d/2, d]`` with ``d = min(cap, backoff·2^k)``
    ("equal jitter": replicas hit at once do not come back at once), and is at least what the
    server asked for in ``Retry-After``.
    """

    attempts: int = 6
    budget: float = 600.0
    backoff: float = 0.5
    cap: float = 30.0

    def wait(self, tried: int, retry_after: float | None, rng: random.Random) -> float:
        d = min(self.cap, self.backoff * 2 ** (tried - 1))
        return max(d / 2 + rng.uniform(0, d / 2), retry_after or 0.0)


def retry_after(value: str | None) -> float | None:
    """Seconds asked for by a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class _Replicas:
    """Client-side balancing: each request goes to the replica with the fewest in flight."""

    def __init__(self, urls: Sequence[str]) -> None:
        self.urls = list(urls)
        self.busy = [0] * len(urls)
        self.turn = 0

    def pick(self, avoid: int | None) -> int:
        n = len(self.urls)
        if n == 1:
            return 0
        order = [(self.turn + k) % n for k in range(n)]
        if avoid is not None and n > 1:
            order.remove(avoid)  # a retry goes elsewhere: that replica may be the trouble
        best = min(order, key=lambda i: self.busy[i])
        self.turn = (best + 1) % n
        return best


class Breaker:
    """Stops sending to a server that is not there: fail fast instead of retrying for minutes.

    A replica is *down* after ``least`` connection failures in a row (refused, DNS, TLS, connect
    timeout) spanning at least ``after`` seconds, with no response in between. While every
    replica is down the breaker is *open*: each request gets one try and no retries, so a
    suite against a port with nothing listening ends within seconds; any response closes it
    again. Kept by the model across its batches, so the next test does not wait again.
    """

    def __init__(self, replicas: int, *, after: float = 5.0, least: int = 3) -> None:
        self.after, self.least = after, least
        self.first: list[float | None] = [None] * replicas
        self.count = [0] * replicas
        self.last = ""

    def failed(self, replica: int, reason: str) -> None:
        if self.first[replica] is None:
            self.first[replica] = time.monotonic()
        self.count[replica] += 1
        self.last = reason

    def reached(self, replica: int) -> None:
        self.first[replica], self.count[replica] = None, 0

    @property
    def open(self) -> bool:
        now = time.monotonic()
        return all(
            first is not None and count >= self.least and now - first >= self.after
            for first, count in zip(self.first, self.count)
        )

    def reason(self) -> str:
        return (
            f"the server cannot be reached: every replica failed to connect {self.least}+ "
            f"times in a row over {self.after:g}+ s, so no request is retried any more "
            f"(last: {self.last}); start the server or fix the URL"
        )


@dataclass
class _Job(Generic[T]):
    calls: Sequence[Call]
    parse: Callable[[Any], T]
    policy: RetryPolicy
    timeout: float
    secrets: Sequence[str]
    breaker: Breaker
    max_body: int  # bytes of a response body, on the wire and decoded

    def redact(self, text: str) -> str:
        return redact(text, self.secrets)


async def _one(
    send: Send, replicas: _Replicas, job: _Job[T], call: Call, rng: random.Random
) -> T | ModelCallError:
    start = time.monotonic()
    body = json.dumps(call.body).encode()  # once for all tries
    used: int | None = None
    last = "no attempt"
    for tried in range(1, job.policy.attempts + 1):
        used = replicas.pick(used)
        url = replicas.urls[used] + call.path
        left = job.policy.budget - (time.monotonic() - start)
        replicas.busy[used] += 1
        wait_for: float | None = None
        try:
            response = await send(used, call.path, body, min(job.timeout, max(0.001, left)))
        except (httpx.UnsupportedProtocol, httpx.LocalProtocolError) as exc:
            return ModelCallError(job.redact(f"cannot send to {url}: {type(exc).__name__}: {exc}"))
        except LimitExceeded as exc:  # the same request would get the same answer
            job.breaker.reached(used)
            return ModelCallError(job.redact(f"{exc} (from {url}; not retried)"))
        except httpx.RequestError as exc:  # network, timeouts, a body that cannot be decoded
            last = f"{type(exc).__name__}" + (f": {exc}" if str(exc) else "") + f" from {url}"
            if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
                job.breaker.failed(used, last)
                if job.breaker.open:
                    return ModelCallError(job.redact(job.breaker.reason()))
        else:
            job.breaker.reached(used)
            status = response.status_code
            if status == 200:
                try:
                    return job.parse(json.loads(response.content))
                except FinalResponse as exc:
                    return ModelCallError(job.redact(f"{exc} (from {url}; not retried)"))
                except (ValueError, KeyError, IndexError, TypeError) as exc:
                    last = f"unreadable response from {url}: {exc}"
            else:
                # Redact before the cut: a cut through an echoed key would hide it from redact().
                detail = job.redact(response.text)[:300].strip()
                last = f"HTTP {status} {response.reason_phrase} from {url}: {detail}"
                if not (status in (408, 429) or status >= 500):
                    return ModelCallError(job.redact(f"{last} (not retried)"))
                wait_for = retry_after(response.headers.get("retry-after"))
        finally:
            replicas.busy[used] -= 1
        if tried == job.policy.attempts:
            break
        pause = job.policy.wait(tried, wait_for, rng)
        await asyncio.sleep(0)  # let the other requests report what they found
        if job.breaker.open:
            return ModelCallError(job.redact(job.breaker.reason()))
        spent = time.monotonic() - start
        if spent + pause >= job.policy.budget:
            return ModelCallError(
                job.redact(
                    f"gave up after {tried} attempts in {spent:.1f} s: waiting {pause:.1f} s more "
                    f"would pass the {job.policy.budget:g} s budget; last: {last}"
                )
            )
        await asyncio.sleep(pause)
    spent = time.monotonic() - start
    return ModelCallError(
        job.redact(f"gave up after {job.policy.attempts} attempts in {spent:.1f} s; last: {last}")
    )


@contextlib.asynccontextmanager
async def _sender(
    urls: Sequence[str],
    headers: Mapping[str, str],
    tls: ssl.SSLContext | None,
    via_proxy: bool,
    max_body: int,
) -> AsyncIterator[Send]:
    """One worker's way to send: a connection of its own per replica, one request at a time on
    each (no pool to search, no lock). httpx's shared pool scans every connection for every
    waiting request, and even one httpx client per worker costs 6–15x the CPU per request of
    :mod:`._wire`; httpx carries the requests only when the environment names a proxy, which it
    speaks."""
    if not via_proxy:
        connections = [Connection(url, headers, tls, max_body) for url in urls]
        try:
            yield lambda i, path, body, left: connections[i].post(path, body, left)
        finally:
            for connection in connections:
                connection.close()
        return
    limits = httpx.Limits(max_connections=len(urls), max_keepalive_connections=len(urls))
    async with httpx.AsyncClient(
        headers={**headers, "Content-Type": "application/json"}, limits=limits, verify=tls or False
    ) as client:

        async def send(i: int, path: str, body: bytes, left: float) -> Reply:
            async def exchange() -> Reply:
                async with client.stream(
                    "POST", urls[i] + path, content=body, timeout=left
                ) as response:
                    declared = response.headers.get("content-length")
                    try:
                        content = Body(
                            response.headers.get("content-encoding", ""),
                            int(declared) if declared else None,
                            max_body,
                        )
                        async for data in response.aiter_raw():
                            content.feed(data)
                        decoded = content.finish()
                    except (ValueError, zlib.error) as exc:
                        raise httpx.RemoteProtocolError(f"malformed response: {exc}") from None
                    return Reply(
                        response.status_code, response.reason_phrase, response.headers, decoded
                    )

            # httpx's timeouts are per read: one deadline for the whole try, as on the wire.
            try:
                return await within(left, exchange())
            except (asyncio.TimeoutError, TimeoutError):
                raise httpx.ReadTimeout(f"no complete answer within {left:g} s") from None

        yield send


def connector(urls: Sequence[str], headers: Mapping[str, str], max_body: int) -> Connect:
    """How each worker of a stream to ``urls`` opens its connections (:func:`_sender`), with
    ``headers`` on every request and bodies of at most ``max_body`` bytes. One TLS context
    serves every worker (httpx's defaults: certifi's roots, hostname checks), made only when a
    URL is ``https`` or a proxy carries the requests."""
    via_proxy = any(proxied(u) for u in urls)
    tls = (
        httpx.create_ssl_context()
        if via_proxy or any(u.startswith("https:") for u in urls)
        else None
    )
    return lambda: _sender(urls, headers, tls, via_proxy, max_body)
