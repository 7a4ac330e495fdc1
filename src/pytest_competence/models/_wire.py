"""One HTTP/1.1 keep-alive connection for the JSON POSTs of :mod:`._transport`, framed by h11.

Why not ``httpx.AsyncClient``: against a local 50 ms server at 32 requests in flight, httpx, even
with one client per worker, spent 1.5 ms of client CPU per request (2.3 ms at 128): its
request/response models, header merging, cookie and auth hooks, httpcore's pool. A worker of the
transport owns one :class:`Connection` per replica and sends one request at a time on it, so
there is no pool to manage; each request leaves as one segment, and the answer is parsed by h11,
the strict sans-I/O HTTP/1.1 parser under httpcore. That costs 1.6–2x the client CPU per request
of the hand-written reader it replaced, at most a quarter of httpx's (``bench/bench_http.py``).

What this module adds to h11 is the I/O loop and the rules that keep every answer with the
request that produced it:

- a connection is reused only when nothing is left of the previous answer: no byte after the
  complete response (two responses to one request is a protocol error), no byte or close while
  idle (httpcore's ``has_expired``), not ``Connection: close``; anything else opens a new one;
- any protocol error closes the connection, and a ``1xx`` other than ``100 Continue`` is one
  (this client never asks to switch protocols, so a ``101`` is never the answer);
- every answer is bounded (:mod:`._limits`): the body on the wire and after inflating, the header
  block in size and in time after its first byte; ``Content-Length`` with ``Transfer-Encoding``
  is refused as RFC 9112 §6.3 advises;
- the whole try — connect, send, headers and body — has one deadline: a server dripping a byte
  at a time cannot stretch it, as it can a timeout per read.

It speaks ``POST`` over ``http`` or ``https`` (TLS through httpx's default context, so
certificates are checked as httpx checks them). Proxies are not spoken here: :func:`proxied`
tells the transport when the environment names one, and then httpx carries the requests.
Failures are raised as the httpx exceptions of the same meaning (``ConnectError``,
``ConnectTimeout``, ``ReadTimeout``, ``ReadError``, ``RemoteProtocolError``,
``LocalProtocolError``), so the retry rules see one vocabulary whichever carried the request;
a limit passed is :class:`~._limits.LimitExceeded`.
"""

from __future__ import annotations

import asyncio
import ssl
import urllib.request
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

import h11
import httpx

from pytest_competence._version import __version__

from ._inbox import Inbox, Kernel, within
from ._limits import (
    DEFAULT_MAX_RESPONSE_MIB,
    HEADER_LIMIT,
    HEADER_SECONDS,
    MIB,
    Body,
    header_limit_exceeded,
)

__all__ = ["Connection", "Reply", "proxied", "within"]


@dataclass(frozen=True)
class Reply:
    """An answer: status, reason, headers (names in lower case) and the decoded body."""

    status_code: int
    reason_phrase: str
    headers: Mapping[str, str]
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


def proxied(url: str) -> bool:
    """Whether the environment (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``)
    sends requests to ``url`` through a proxy, as httpx's ``trust_env`` would."""
    proxies = urllib.request.getproxies_environment()
    parts = urlsplit(url)
    if not (proxies.get(parts.scheme) or proxies.get("all")):
        return False
    # With proxies in the environment, proxy_bypass reads NO_PROXY (and nothing else).
    return not urllib.request.proxy_bypass(parts.netloc)


def _header_fields(headers: Mapping[str, str]) -> list[tuple[bytes, bytes]]:
    """The headers as h11 takes them; a value that cannot be sent is refused without showing
    it (it may be an API key; h11's own message would quote it)."""
    fields = []
    for name, value in headers.items():
        if any(c in value for c in "\r\n\0") or not value.isascii():
            raise httpx.LocalProtocolError(
                f"the {name} header holds a character that HTTP cannot carry (a line break or "
                f"non-ASCII text); check the value it was given"
            )
        fields.append((name.encode("ascii"), value.encode("ascii")))
    return fields


class _Link:
    """An open connection: its transport, what it received, and h11's view of it."""

    def __init__(self, transport: asyncio.Transport, inbox: Inbox) -> None:
        self.transport, self.inbox = transport, inbox
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=HEADER_LIMIT)
        self.kernel = Kernel(transport.get_extra_info("socket"))

    def reusable(self) -> bool:
        return not (
            self.inbox.stale
            or self.inbox.closed
            or self.inbox.pieces
            or self.transport.is_closing()
            or self.kernel.readable()
        )


class Connection:
    """One keep-alive connection to the origin of ``base_url``, opened at the first request and
    again whenever the last one cannot be trusted with another; one request at a time.

    ``max_body``: the most bytes of a response body accepted, on the wire and decoded.
    """

    def __init__(
        self,
        base_url: str,
        headers: Mapping[str, str],
        tls: ssl.SSLContext | None,
        max_body: int = DEFAULT_MAX_RESPONSE_MIB * MIB,
    ) -> None:
        parts = urlsplit(base_url)
        self.host = parts.hostname or ""
        self.https = parts.scheme == "https"
        self.port = parts.port or (443 if self.https else 80)
        # Percent-encoded as httpx would: the request line is ASCII.
        self.prefix = quote(parts.path.rstrip("/"), safe="/%:@!$&'()*+,;=~")
        self.tls = tls if self.https else None
        self.max_body = max_body
        self.headers = {
            "Host": parts.netloc,
            "User-Agent": f"pytest-competence/{__version__}",
            "Accept": "application/json",
            "Accept-Encoding": "gzip, deflate",
            "Content-Type": "application/json",
            **headers,
        }
        self.fields: list[tuple[bytes, bytes]] | None = None  # checked at the first request
        self.link: _Link | None = None

    async def post(self, path: str, body: bytes, timeout: float) -> Reply:
        """Send ``body`` to ``path`` (under the base URL's path) and read the whole answer,
        all within ``timeout`` seconds.

        A kept-alive connection that the server closed just before this request went out (it
        wrote nothing back) is opened again and the request sent once more, as urllib3 does:
        that is the connection going stale, not the server failing, and costs no attempt.
        """
        if self.fields is None:
            self.fields = _header_fields(self.headers)  # refused per request, like any bad send
        try:
            request = h11.Request(
                method=b"POST",
                target=(self.prefix + path).encode(),
                headers=[*self.fields, (b"Content-Length", b"%d" % len(body))],
            )
        except h11.LocalProtocolError as exc:  # header values were checked above: the path
            raise httpx.LocalProtocolError(str(exc)[:200]) from None
        deadline = asyncio.get_running_loop().time() + timeout
        for again in (False, True):
            fresh = again or self.link is None or not self.link.reusable()
            if fresh:
                await self._open(deadline)
            try:
                return await self._exchange(request, body, deadline, timeout)
            except _Unanswered as exc:
                self.close()
                if fresh:
                    raise httpx.RemoteProtocolError(str(exc)) from None
            except BaseException:
                self.close()  # whatever was left half-read must not meet the next request
                raise
        raise AssertionError("unreachable: the second pass is on a fresh connection")

    async def _open(self, deadline: float) -> None:
        self.close()
        loop = asyncio.get_running_loop()
        timeout = max(0.001, deadline - loop.time())
        try:
            transport, inbox = await within(
                timeout,
                loop.create_connection(lambda: Inbox(loop), self.host, self.port, ssl=self.tls),
            )
        except (asyncio.TimeoutError, TimeoutError):
            raise httpx.ConnectTimeout(f"no connection within {timeout:g} s") from None
        except OSError as exc:  # refused, unreachable, DNS, TLS (ssl.SSLError is an OSError)
            raise httpx.ConnectError(str(exc) or type(exc).__name__) from None
        assert isinstance(transport, asyncio.Transport)
        self.link = _Link(transport, inbox)

    async def _exchange(
        self, request: h11.Request, body: bytes, deadline: float, timeout: float
    ) -> Reply:
        assert self.link is not None
        link, loop = self.link, asyncio.get_running_loop()
        link.inbox.idle = False
        conn = link.h11
        link.transport.write(
            conn.send(request) + conn.send(h11.Data(data=body)) + conn.send(h11.EndOfMessage())
        )
        received, until = 0, deadline
        in_head = False  # between the first byte of a header block and its end
        answer: h11.Response | None = None
        headers: dict[str, str] = {}
        content: Body | None = None
        event: object = h11.NEED_DATA  # nothing can be parsed before the first read
        while True:
            if event is h11.NEED_DATA:
                try:
                    data = await link.inbox.read(until)
                except TimeoutError:
                    raise _late(
                        received, answer is not None, in_head and until < deadline, timeout
                    ) from None
                except OSError as exc:
                    if received:
                        raise httpx.ReadError(str(exc) or type(exc).__name__) from None
                    raise _Unanswered(f"the server closed the connection: {exc}") from None
                if not data and not received:
                    raise _Unanswered("Server disconnected without sending a response.")
                if answer is None and not in_head:
                    in_head, until = True, min(deadline, loop.time() + HEADER_SECONDS)
                received += len(data)
                conn.receive_data(data)
            elif type(event) is h11.Data:
                assert content is not None
                try:
                    content.feed(event.data)
                except (ValueError, zlib.error) as exc:
                    raise httpx.RemoteProtocolError(f"malformed response body: {exc}") from None
            elif type(event) is h11.Response:
                answer, in_head, until = event, False, deadline
                headers, content = _read_head(event, self.max_body)
            elif type(event) is h11.EndOfMessage:
                break
            elif type(event) is h11.InformationalResponse:
                if event.status_code != 100:
                    raise _interim(event.status_code, event.reason)
                in_head, until = False, deadline  # the answer itself may take the model's time
            else:  # ConnectionClosed before the end: h11 raises first, but never read on
                raise httpx.RemoteProtocolError(f"unexpected {type(event).__name__} from h11")
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError as exc:
                raise _protocol_error(exc, answer is not None) from None
        link.inbox.disarm()
        assert answer is not None and content is not None
        try:
            decoded = content.finish()
        except (ValueError, zlib.error) as exc:
            raise httpx.RemoteProtocolError(f"malformed response body: {exc}") from None
        stray, closed = conn.trailing_data
        if stray or link.inbox.pieces:
            extra = stray or link.inbox.pieces[0]
            raise httpx.RemoteProtocolError(
                f"the server sent more after the complete response ({extra[:40]!r}…): two "
                f"answers to one request, so neither is taken"
            )
        if conn.our_state is h11.DONE and conn.their_state is h11.DONE and not closed:
            conn.start_next_cycle()
            link.inbox.idle = True
        else:  # Connection: close, HTTP/1.0, or a body that ended with the connection
            self.close()
        return Reply(answer.status_code, answer.reason.decode("latin-1"), headers, decoded)

    def close(self) -> None:
        if self.link is not None:
            self.link.inbox.disarm()
            self.link.transport.close()
            self.link = None


class _Unanswered(httpx.RemoteProtocolError):
    """The connection ended before a single byte of the answer came back."""


def _read_head(response: h11.Response, limit: int) -> tuple[dict[str, str], Body]:
    """``response``'s headers (lower-case names, repeats joined) and the reader of its body,
    once the headers pass the checks h11 leaves to us."""
    headers: dict[str, str] = {}
    size = len(response.reason) + 15
    for raw_name, raw_value in response.headers:
        size += len(raw_name) + len(raw_value) + 4
        name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    if size > HEADER_LIMIT:  # h11 bounds only the events it has not parsed yet
        raise header_limit_exceeded("the response headers")
    # h11 checked these: Content-Length digits and one value, Transfer-Encoding exactly chunked.
    declared = headers.get("content-length")
    if declared is not None and "transfer-encoding" in headers:
        raise httpx.RemoteProtocolError(
            "malformed response: both Content-Length and Transfer-Encoding, a sign of response "
            "smuggling (RFC 9112 section 6.3)"
        )
    try:
        body = Body(
            headers.get("content-encoding", ""), None if declared is None else int(declared), limit
        )
    except ValueError as exc:
        raise httpx.RemoteProtocolError(f"malformed response: {exc}") from None
    return headers, body


def _protocol_error(exc: h11.RemoteProtocolError, answered: bool) -> Exception:
    """h11's complaint in the transport's words."""
    if exc.error_status_hint == 431:  # h11: "Receive buffer too long"
        return header_limit_exceeded(
            "a chunk-size line or the trailers" if answered else "the response headers"
        )
    message = str(exc)
    if "_SWITCH_UPGRADE" in message:  # h11 refuses a 101 nobody asked for, in its own terms
        return _interim(101, b"Switching Protocols")
    return httpx.RemoteProtocolError(f"malformed response: {message[:200]} (h11)")


def _interim(status: int, reason: bytes) -> httpx.RemoteProtocolError:
    return httpx.RemoteProtocolError(
        f"the server answered {status} {reason.decode('latin-1')[:40]}, an interim response "
        f"this client never asks for; only 100 Continue may come before the answer, so the "
        f"connection is closed"
    )


def _late(received: int, answered: bool, headers_bound: bool, timeout: float) -> Exception:
    if headers_bound:
        return httpx.ReadTimeout(
            f"the response headers were still arriving {HEADER_SECONDS:g} s after their first "
            f"byte ({received} bytes so far): a server writes them at once, so something is "
            f"stalling"
        )
    if received:
        where = "its headers complete" if answered else "in its headers"
        return httpx.ReadTimeout(
            f"no complete answer within {timeout:g} s ({received} bytes of "
            f"the response so far, {where})"
        )
    return httpx.ReadTimeout(f"no complete answer within {timeout:g} s")
