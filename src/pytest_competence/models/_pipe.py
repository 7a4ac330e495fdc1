"""One model's requests, from any number of batches, on one event loop: a stream that never drains.

A :class:`Pipe` is kept by its model for as long as the model lives: ``concurrency`` workers,
each with its own keep-alive connection per replica, take the requests of every batch in turn
from one queue, so a batch given while another is still being answered starts the moment a
worker is free and the server never idles between batches. At most ``concurrency`` requests are
in flight in all. A batch asked *ahead* (:func:`asking_ahead`) waits behind every batch asked
now, so work done ahead never delays work that is needed now.

Every request goes through :func:`~._transport._one` (retries, breaker, limits, redaction); each
batch's ``(index, result)`` pairs come back to its caller's thread, every index exactly once.
Closing a batch's iterator early drops its queued requests and cancels those in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import random
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar

from ._base import ModelCallError
from ._transport import (
    _CREDENTIAL_HEADERS,
    Breaker,
    Call,
    Connect,
    RetryPolicy,
    _Job,
    _one,
    _Replicas,
    connector,
)

__all__ = ["Ahead", "Pipe", "asking_ahead"]

T = TypeVar("T")

#: Seconds answers wait, at most, to go to their caller's thread together.
HAND_OVER = 0.01


class Ahead:
    """Batches asked ahead by one caller, which it may drop at once (:meth:`cancel`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # The batches being read: each leaves when its reader is done with it, so a token
        # that lives as long as a design holds a chunk's requests, never the design's.
        self._asked: dict[_Batch[Any], Pipe] = {}
        self.cancelled = False

    def _add(self, pipe: Pipe, batch: _Batch[Any]) -> bool:
        with self._lock:
            if not self.cancelled:
                self._asked[batch] = pipe
            return not self.cancelled

    def _finished(self, batch: _Batch[Any]) -> None:
        with self._lock:
            self._asked.pop(batch, None)

    def __len__(self) -> int:
        """Batches asked under this token and still being read."""
        return len(self._asked)

    def cancel(self) -> None:
        """Drop every batch asked under this token: queued requests are not sent, those in
        flight are cancelled, and their readers get an error instead of waiting."""
        with self._lock:
            self.cancelled, asked, self._asked = True, self._asked, {}
        for batch, pipe in asked.items():
            with contextlib.suppress(RuntimeError):  # a pipe closed meanwhile told them already
                pipe._call(pipe._abort, batch)


_AHEAD: contextvars.ContextVar[Ahead | None] = contextvars.ContextVar(
    "competence_ahead", default=None
)


@contextlib.contextmanager
def asking_ahead(token: Ahead) -> Iterator[None]:
    """Inside (in this thread), batches are asked *ahead*, behind every batch asked now, and
    ``token`` can drop them."""
    reset = _AHEAD.set(token)
    try:
        yield
    finally:
        _AHEAD.reset(reset)


class _Closed:
    """Put on a batch's queue when the pipe closes under it."""


class _Batch(Generic[T]):
    """One caller's requests: its job, and the pairs handed back to its thread."""

    def __init__(self, job: _Job[T]) -> None:
        self.job = job
        self.out: queue.SimpleQueue[list[tuple[int, T | ModelCallError]] | _Closed] = (
            queue.SimpleQueue()
        )
        self.arrived: list[tuple[int, T | ModelCallError]] = []
        self.inflight: set[asyncio.Task[Any]] = set()
        self.left = len(job.calls)  # not yet answered
        self.cancelled = False


class Pipe:
    """The event-loop thread and workers of one model (see the module docstring).

    ``headers`` go with every request (an API key among them is redacted from every error);
    ``breaker`` is the model's, shared by every batch. ``connect`` opens each worker's
    connections: :func:`~._transport.connector`'s by default, a stand-in in tests.
    """

    def __init__(
        self,
        urls: Sequence[str],
        headers: Mapping[str, str],
        *,
        concurrency: int,
        timeout: float,
        policy: RetryPolicy,
        breaker: Breaker,
        max_body: int,
        connect: Connect | None = None,
    ) -> None:
        self.urls, self.headers = list(urls), dict(headers)
        self.concurrency, self.timeout, self.policy = concurrency, timeout, policy
        self.breaker, self.max_body = breaker, max_body
        self._connect = connect
        self.credentials = [v for k, v in headers.items() if k.lower() in _CREDENTIAL_HEADERS]
        self._now: deque[tuple[_Batch[Any], int]] = deque()
        self._ahead: deque[tuple[_Batch[Any], int]] = deque()
        self._batches: set[_Batch[Any]] = set()
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="competence-pipe", daemon=True)
        self._thread.start()
        self._ready.wait()

    # -- the caller's side -----------------------------------------------------------------------

    def stream(
        self, calls: Sequence[Call], parse: Callable[[Any], T], secrets: Sequence[str] = ()
    ) -> Iterator[tuple[int, T | ModelCallError]]:
        """``(index, parse(body) or ModelCallError)`` for every call, in order of completion."""
        with contextlib.closing(self.groups(calls, parse, secrets)) as groups:
            for group in groups:
                yield from group

    def groups(
        self, calls: Sequence[Call], parse: Callable[[Any], T], secrets: Sequence[str] = ()
    ) -> Generator[list[tuple[int, T | ModelCallError]], None, None]:
        """:meth:`stream`'s pairs in the lists they are handed over in: those that arrived
        within :data:`HAND_OVER` seconds of each other (a cache commits a list at once)."""
        if not calls:
            return
        job = _Job(
            calls,
            parse,
            self.policy,
            self.timeout,
            (*secrets, *self.credentials),
            self.breaker,
            self.max_body,
        )
        batch: _Batch[T] = _Batch(job)
        ahead = _AHEAD.get()
        if ahead is not None and not ahead._add(self, batch):
            raise RuntimeError("asking ahead was cancelled")
        self._call(self._enqueue, batch, ahead is not None)
        try:
            left = len(calls)
            while left:
                got = batch.out.get()
                if isinstance(got, _Closed):
                    raise RuntimeError(
                        "the requests were dropped, or the model's HTTP client closed"
                    )
                left -= len(got)
                yield got
        finally:
            if ahead is not None:
                ahead._finished(batch)
            if left:
                self._call(self._cancel, batch)

    def close(self) -> None:
        """Stop the workers, close every connection; batches still waiting get an error."""
        if self._closed:
            return
        self._closed = True
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop ended in between
                loop.call_soon_threadsafe(self._shutdown)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=10)

    def _call(self, fn: Callable[..., None], *args: Any) -> None:
        loop = self._loop
        if self._closed or loop is None:
            raise RuntimeError("the model's HTTP client is closed")
        loop.call_soon_threadsafe(fn, *args)

    # -- the loop's side -------------------------------------------------------------------------

    def _enqueue(self, batch: _Batch[Any], ahead: bool) -> None:
        self._batches.add(batch)
        (self._ahead if ahead else self._now).extend(
            (batch, i) for i in range(len(batch.job.calls))
        )
        assert self._wake is not None
        self._wake.set()

    def _cancel(self, batch: _Batch[Any]) -> None:
        batch.cancelled = True
        self._batches.discard(batch)
        for task in list(batch.inflight):
            task.cancel()

    def _abort(self, batch: _Batch[Any]) -> None:
        if batch in self._batches:
            self._cancel(batch)
            batch.out.put(_Closed())

    def _shutdown(self) -> None:
        for batch in list(self._batches):
            batch.cancelled = True
            batch.out.put(_Closed())
            for task in list(batch.inflight):
                task.cancel()
        self._batches.clear()
        self._now.clear()
        self._ahead.clear()
        assert self._wake is not None
        self._wake.set()

    def _next(self) -> tuple[_Batch[Any], int] | None:
        for waiting in (self._now, self._ahead):
            while waiting:
                batch, i = waiting.popleft()
                if not batch.cancelled:
                    return batch, i
        return None

    def _done(self, batch: _Batch[Any], item: tuple[int, Any]) -> None:
        # Answers go to the caller's thread together, every HAND_OVER seconds and when the
        # batch is complete: each hand-over wakes that thread, which then takes the GIL from
        # this loop, and a wake-up per answer cost more than parsing the answer.
        batch.arrived.append(item)
        batch.left -= 1
        if not batch.left:
            self._batches.discard(batch)
            self._hand_over(batch)
        elif len(batch.arrived) == 1:
            assert self._loop is not None
            self._loop.call_later(HAND_OVER, self._hand_over, batch)

    @staticmethod
    def _hand_over(batch: _Batch[Any]) -> None:
        if batch.arrived:
            batch.out.put(batch.arrived.copy())
            batch.arrived.clear()

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._ready.set()
        replicas, rng = _Replicas(self.urls), random.Random()
        connect = self._connect or connector(self.urls, self.headers, self.max_body)

        async def worker() -> None:
            async with connect() as send:
                while not self._closed:
                    taken = self._next()
                    if taken is None:
                        assert self._wake is not None
                        self._wake.clear()
                        await self._wake.wait()
                        continue
                    batch, i = taken
                    job = batch.job
                    task = asyncio.ensure_future(_one(send, replicas, job, job.calls[i], rng))
                    batch.inflight.add(task)
                    try:
                        # Shielded: cancelling the worker (the loop ending) is told apart from
                        # cancelling this request (its reader stopped: nobody waits for it).
                        result = await asyncio.shield(task)
                    except asyncio.CancelledError:
                        if not task.cancelled():
                            raise
                        continue
                    except Exception as exc:  # a bug here must still answer for the item
                        reason = f"client error: {type(exc).__name__}: {exc}"
                        result = ModelCallError(job.redact(reason))
                    finally:
                        batch.inflight.discard(task)
                    if not batch.cancelled:
                        self._done(batch, (i, result))

        await asyncio.gather(*(worker() for _ in range(self.concurrency)))
