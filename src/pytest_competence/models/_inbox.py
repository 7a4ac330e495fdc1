"""The bytes of one connection as asyncio delivers them, read against a deadline.

The I/O under :class:`~._wire.Connection`: an :class:`asyncio.Protocol` that queues what the
event loop receives (pausing the socket past a bound, so a fast server cannot fill memory ahead of
the parser), wakes one reader at a time before a deadline set once per phase rather than per
read, and marks the connection stale when bytes or a close arrive while no request is waiting;
and :class:`Kernel`, which asks the kernel whether bytes wait that the loop has not delivered yet.
Neither knows HTTP: httptools parses what :meth:`Inbox.read` returns.
"""

from __future__ import annotations

import asyncio
import select
import socket
import sys
from collections import deque
from collections.abc import Awaitable
from typing import TypeVar, cast

__all__ = ["Inbox", "Kernel", "within"]

T = TypeVar("T")

#: Bytes received but not yet parsed above which the socket stops being read (flow control).
_BUFFERED = 2**18


async def within(seconds: float, step: Awaitable[T]) -> T:
    """``await step``, cancelled after ``seconds`` with ``TimeoutError``."""
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(seconds):
            return await step
    return await asyncio.wait_for(step, seconds)  # pragma: no cover - Python 3.10


class Kernel:
    """Whether bytes (or a close) wait in the kernel for a socket that should be idle: the
    event loop has not delivered them yet, but the next answer must not be read after them."""

    def __init__(self, sock: socket.socket | None) -> None:
        self.fd = -1 if sock is None else sock.fileno()
        self.poll = None
        if self.fd >= 0 and hasattr(select, "poll"):  # select() fails past FD_SETSIZE
            self.poll = select.poll()
            self.poll.register(self.fd, select.POLLIN)

    def readable(self) -> bool:
        if self.fd < 0:
            return True
        if self.poll is not None:
            return bool(self.poll.poll(0))
        return bool(select.select([self.fd], [], [], 0)[0])  # pragma: no cover - Windows


class Inbox(asyncio.Protocol):
    """The bytes of one connection as the event loop delivers them, read with a deadline.

    Bytes or a close that arrive while no request is waiting mark the connection ``stale``: they
    answer nothing this client asked, and must never be read as the next answer.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.pieces: deque[bytes] = deque()
        self.buffered = 0
        self.paused = False
        self.closed = False
        self.error: BaseException | None = None
        self.waiter: asyncio.Future[bool] | None = None
        self.timer: asyncio.TimerHandle | None = None  # one per deadline, not one per read
        self.idle = False
        self.stale = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport, whichever loop made it: uvloop's implement asyncio.Transport's
        # methods without subclassing it, so no isinstance check here.
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.stale |= self.idle
        self.pieces.append(data)
        self.buffered += len(data)
        if self.buffered > _BUFFERED and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        self._wake(True)

    def eof_received(self) -> None:
        self.connection_lost(None)  # returning None: the transport closes itself

    def connection_lost(self, exc: BaseException | None) -> None:
        self.stale |= self.idle
        self.closed = True
        self.error = self.error or exc
        self._wake(True)

    def _wake(self, arrived: bool) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(arrived)

    async def read(self, until: float) -> bytes:
        """The next bytes received, ``b""`` once the connection is closed; ``TimeoutError`` if
        none arrive before the loop time ``until``."""
        if not self.pieces and not self.closed:
            if self.loop.time() >= until:
                raise TimeoutError
            if self.timer is None or self.timer.when() != until:
                self.disarm()
                self.timer = self.loop.call_at(until, self._wake, False)
            self.waiter = self.loop.create_future()
            try:
                arrived = await self.waiter
            finally:
                self.waiter = None
            if not arrived:
                raise TimeoutError
        if self.pieces:
            data = self.pieces.popleft()
            self.buffered -= len(data)
            if self.paused and self.buffered <= _BUFFERED // 2 and self.transport is not None:
                self.paused = False
                self.transport.resume_reading()
            return data
        if isinstance(self.error, OSError):
            raise self.error
        return b""

    def disarm(self) -> None:
        """No deadline any more: the exchange is over."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
