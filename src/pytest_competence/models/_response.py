"""One HTTP/1.1 response read by httptools (the binding of llhttp, Node.js's parser in C), with
the checks llhttp leaves to its caller: framing, interim answers, a second response behind the
first, and the bounds of :mod:`._limits` on the header block, chunk-size lines and trailers.
:class:`~._wire.Connection` feeds it what the server sent."""

from __future__ import annotations

import zlib

import httptools
import httpx

from ._limits import HEADER_LIMIT, Body, LimitExceeded, header_limit_exceeded

__all__ = ["Response", "stray"]


class _Stray(Exception):
    """A second response began behind the complete one."""


class Response:
    """One response read by httptools: its callbacks collect the status, reason, headers and
    body; the checks llhttp leaves to us are here.

    llhttp bounds nothing that it hands over in pieces, and httptools joins a header's pieces
    before calling :meth:`on_header`, so :meth:`feed` counts the bytes of the header block, and
    then of the chunk-size lines and trailers, as they are handed over: each at most
    :data:`HEADER_LIMIT` (the latter beyond 32 bytes a chunk) and one read.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parser = httptools.HttpResponseParser(self)
        self.status: int | None = None  # the final answer's, once its head is complete
        self.reason = b""
        self.fields: list[tuple[bytes, bytes]] = []
        self.headers: dict[str, str] = {}
        self.body: Body | None = None
        self.framing = ""  # "length", "chunked" or "close", once the head is complete
        self.complete = False
        self.keep_alive = False
        self.heads = 0  # header blocks complete: a 100 Continue's, then the answer's
        self.head_bytes = 0  # read while the head was incomplete, the body's left out
        self.after_head = 0  # chunk-size lines and trailers read since
        self.chunks = 0

    def feed(self, data: bytes) -> None:
        body_before = self.body.wire if self.body is not None else 0
        in_head = self.status is None
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserCallbackError as exc:
            cause = exc.__context__
            if isinstance(cause, _Stray):
                raise stray(b"") from None
            if isinstance(cause, (httpx.HTTPError, LimitExceeded)):
                raise cause from None
            if isinstance(cause, (ValueError, zlib.error)):
                raise httpx.RemoteProtocolError(f"malformed response body: {cause}") from None
            raise
        except httptools.HttpParserUpgrade:
            raise _interim(101, self.reason) from None
        except httptools.HttpParserError as exc:
            raise httpx.RemoteProtocolError(f"malformed response: {exc} (llhttp)") from None
        if self.complete:
            return
        framing = len(data) - ((self.body.wire if self.body else 0) - body_before)
        if in_head:  # the read that ends the head counts as the head's
            self.head_bytes += framing
            if self.status is None and self.head_bytes > HEADER_LIMIT:
                raise header_limit_exceeded("the response headers")
            return
        # After the head: the size lines, up to 32 bytes a chunk, and the trailers.
        self.after_head += framing
        if self.after_head > HEADER_LIMIT + 32 * self.chunks:
            raise header_limit_exceeded("the chunk-size lines or the trailers")

    def end(self) -> None:
        """The connection ended: the answer is complete only if it was framed by its end."""
        if self.status is not None and self.framing == "close":
            self.complete = True
            return
        if self.status is None:
            raise httpx.RemoteProtocolError(
                "peer closed connection without sending a complete response head"
            )
        assert self.body is not None
        expected = self.headers.get("content-length")
        raise httpx.RemoteProtocolError(
            f"peer closed connection without sending complete message body (received "
            f"{self.body.wire} bytes, expected {expected})"
            if self.framing == "length"
            else "peer closed connection without sending complete message body: incomplete "
            "chunked read"
        )

    # -- httptools' callbacks --------------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self.complete:
            raise _Stray

    def on_status(self, reason: bytes) -> None:
        self.reason += reason

    def on_header(self, name: bytes, value: bytes) -> None:
        self.fields.append((name, value))

    def on_headers_complete(self) -> None:
        self.heads += 1
        status = self.parser.get_status_code()
        if 100 <= status < 200:
            if status != 100:
                raise _interim(status, self.reason)
            self.reason, self.fields = b"", []  # 100 Continue: the answer comes behind it
            return
        headers: dict[str, str] = {}
        for raw_name, raw_value in self.fields:
            name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        declared = headers.get("content-length")
        coding = headers.get("transfer-encoding")
        if declared is not None and coding is not None:
            raise httpx.RemoteProtocolError(
                "malformed response: both Content-Length and Transfer-Encoding, a sign of "
                "response smuggling (RFC 9112 section 6.3)"
            )
        if coding is not None and coding.strip().lower() != "chunked":
            raise httpx.RemoteProtocolError(
                f"malformed response: Only Transfer-Encoding: chunked is supported, not "
                f"{coding[:40]!r}"
            )
        try:
            self.body = Body(
                headers.get("content-encoding", ""),
                None if declared is None else int(declared),
                self.limit,
            )
        except ValueError as exc:
            raise httpx.RemoteProtocolError(f"malformed response: {exc}") from None
        self.framing = "chunked" if coding else "length" if declared is not None else "close"
        if status in (204, 304):
            self.framing = "length"
        self.headers, self.status = headers, status

    def on_body(self, data: bytes) -> None:
        assert self.body is not None
        self.body.feed(data)

    def on_chunk_header(self) -> None:
        self.chunks += 1

    def on_message_complete(self) -> None:
        if self.status is None:  # the end of a 100 Continue
            return
        self.keep_alive = self.parser.should_keep_alive() and self.framing != "close"
        self.complete = True


def stray(extra: bytes) -> httpx.RemoteProtocolError:
    """The error for a second response behind the complete one (``extra``: its first bytes)."""
    shown = f" ({extra[:40]!r}…)" if extra else ""
    return httpx.RemoteProtocolError(
        f"the server sent more after the complete response{shown}: two answers to one "
        f"request, so neither is taken"
    )


def _interim(status: int, reason: bytes) -> httpx.RemoteProtocolError:
    return httpx.RemoteProtocolError(
        f"the server answered {status} {reason.decode('latin-1')[:40]}, an interim response "
        f"this client never asks for; only 100 Continue may come before the answer, so the "
        f"connection is closed"
    )
