"""JSON POSTs to OpenAI-compatible servers: bounded concurrency, retries, several replicas.

:func:`post_all` sends one request per :class:`Call` through one pooled ``httpx.AsyncClient``
(connections are reused), at most ``concurrency`` at a time, on an event loop of its own thread,
and yields ``(index, result)`` as each request completes — so a caller can commit every answer
the moment it arrives. A result is what ``parse`` made of the response, or a
:class:`ModelCallError` saying why the request failed for good: requests are retried with
exponential backoff and jitter on 408, 429, 5xx, transport errors and unreadable bodies,
honouring ``Retry-After``, within a number of attempts and a time budget; other 4xx are final at
once. Nothing is dropped: every index comes back exactly once.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import queue
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import httpx

from pytest_competence.redaction import redact

from . import ModelCallError  # the transport's failures (re-exported)

__all__ = ["BadResponse", "Breaker", "Call", "FinalResponse", "ModelCallError", "RetryPolicy",
           "post_all"]


T = TypeVar("T")

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
        return all(first is not None and count >= self.least and now - first >= self.after
                   for first, count in zip(self.first, self.count))

    def reason(self) -> str:
        return (f"the server cannot be reached: every replica failed to connect {self.least}+ "
                f"times in a row over {self.after:g}+ s, so no request is retried any more "
                f"(last: {self.last}); start the server or fix the URL")


@dataclass
class _Job(Generic[T]):
    calls: Sequence[Call]
    parse: Callable[[Any], T]
    policy: RetryPolicy
    timeout: float
    secrets: Sequence[str]
    breaker: Breaker

    def redact(self, text: str) -> str:
        return redact(text, self.secrets)


async def _one(client: httpx.AsyncClient, replicas: _Replicas, job: _Job[T], call: Call,
               rng: random.Random) -> T | ModelCallError:
    start = time.monotonic()
    used: int | None = None
    last = "no attempt"
    for tried in range(1, job.policy.attempts + 1):
        used = replicas.pick(used)
        url = replicas.urls[used] + call.path
        left = job.policy.budget - (time.monotonic() - start)
        replicas.busy[used] += 1
        wait_for: float | None = None
        try:
            response = await client.post(url, json=call.body,
                                         timeout=min(job.timeout, max(0.001, left)))
        except (httpx.UnsupportedProtocol, httpx.LocalProtocolError) as exc:
            return ModelCallError(job.redact(f"cannot send to {url}: {type(exc).__name__}: {exc}"))
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
            return ModelCallError(job.redact(
                f"gave up after {tried} attempts in {spent:.1f} s: waiting {pause:.1f} s more "
                f"would pass the {job.policy.budget:g} s budget; last: {last}"
            ))
        await asyncio.sleep(pause)
    spent = time.monotonic() - start
    return ModelCallError(job.redact(f"gave up after {job.policy.attempts} attempts in "
                                     f"{spent:.1f} s; last: {last}"))


async def _all(job: _Job[T], urls: Sequence[str], headers: Mapping[str, str], concurrency: int,
               emit: Callable[[tuple[int, T | ModelCallError]], None], runner: _Runner) -> None:
    runner.loop, runner.task = asyncio.get_running_loop(), asyncio.current_task()
    replicas, rng = _Replicas(urls), random.Random()
    workers = max(1, min(concurrency, len(job.calls)))
    todo = iter(range(len(job.calls)))  # shared by the workers: one event loop, no lock needed
    # One small client per worker, each keeping one connection per replica alive: httpcore's
    # shared pool scans every connection for every waiting request, which at 32 in flight cost
    # more CPU than everything else together. One TLS context serves them all.
    tls = httpx.create_ssl_context() if any(u.startswith("https:") for u in urls) else False
    limits = httpx.Limits(max_connections=len(urls), max_keepalive_connections=len(urls))

    async def worker() -> None:
        async with httpx.AsyncClient(headers=dict(headers), limits=limits, verify=tls,
                                     timeout=httpx.Timeout(job.timeout)) as client:
            for i in todo:
                if runner.stopped.is_set():
                    return
                result: T | ModelCallError
                try:
                    result = await _one(client, replicas, job, job.calls[i], rng)
                except Exception as exc:  # a bug here must still answer for the item
                    reason = f"client error: {type(exc).__name__}: {exc}"
                    result = ModelCallError(job.redact(reason))
                emit((i, result))

    await asyncio.gather(*(worker() for _ in range(workers)))


class _Runner:
    """The event-loop thread behind one :func:`post_all`; stops it when the caller stops reading."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Any] | None = None
        self.stopped = threading.Event()

    def stop(self) -> None:
        self.stopped.set()
        loop, task = self.loop, self.task
        if loop is not None and task is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:  # the loop closed in between: nothing left to cancel
                pass


class _Crash:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def post_all(
    calls: Sequence[Call], parse: Callable[[Any], T], *, urls: Sequence[str],
    headers: Mapping[str, str], concurrency: int, timeout: float, policy: RetryPolicy,
    secrets: Sequence[str] = (), breaker: Breaker | None = None,
) -> Iterator[tuple[int, T | ModelCallError]]:
    """``(index, parse(body) or ModelCallError)`` for every call, in order of completion.

    ``secrets`` are removed from every error message (a server may echo request headers), and
    so are the values of the credential headers (``Authorization``, ``api-key``, ``x-api-key``).
    ``breaker`` (one per model, over ``urls`` in this order) ends the retries against a server
    that refuses every connection; a new one per call when not given.
    Closing the iterator early cancels the requests still in flight.
    """
    if not calls:
        return
    out: queue.SimpleQueue[tuple[int, T | ModelCallError] | _Crash] = queue.SimpleQueue()
    runner = _Runner()
    credentials = [v for k, v in headers.items() if k.lower() in _CREDENTIAL_HEADERS]
    job = _Job(calls, parse, policy, timeout, (*secrets, *credentials),
               breaker or Breaker(len(urls)))

    def run() -> None:
        try:
            asyncio.run(_all(job, urls, headers, concurrency, out.put, runner))
        except asyncio.CancelledError:
            pass
        except BaseException as exc:  # surfaced in the caller's thread, not lost in this one
            out.put(_Crash(exc))

    thread = threading.Thread(target=run, name="competence-http", daemon=True)
    thread.start()
    try:
        for _ in range(len(calls)):
            got = out.get()
            if isinstance(got, _Crash):
                raise RuntimeError(job.redact(f"the HTTP client stopped: {got.exc!r}")) from None
            yield got
    finally:
        runner.stop()
        thread.join()
