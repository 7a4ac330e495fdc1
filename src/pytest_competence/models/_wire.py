"""One HTTP/1.1 keep-alive connection for the JSON POSTs of :mod:`._transport`.

Not ``httpx.AsyncClient``, whose models, hooks and pool cost several times the client CPU a
request (``bench/README.md``): a worker owns one :class:`Connection` per replica and sends one
request at a time on it, each as one segment, and :class:`~._response.Response` (httptools)
reads the answer. The rules that keep every answer with the request that produced it:

- a connection is reused only when nothing is left of the previous answer: no byte after the
  complete response, no byte or close while idle (httpcore's ``has_expired``), not
  ``Connection: close``; any protocol error closes it;
- every answer is bounded (:mod:`._limits`), and the whole try — connect, send, headers, body —
  has one deadline, which a server dripping a byte at a time cannot stretch.

TLS uses httpx's default context; proxies are left to httpx (:func:`proxied`). Failures are the
httpx exceptions of the same meaning, so the retry rules see one vocabulary whichever carried
the request; a limit passed is :class:`~._limits.LimitExceeded`.
"""

from __future__ import annotations

import asyncio
import re
import ssl
import urllib.request
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

import httpx

from pytest_competence._version import __version__

from ._inbox import Inbox, Kernel, within
from ._limits import DEFAULT_MAX_RESPONSE_MIB, HEADER_SECONDS, MIB
from ._response import Response, stray

__all__ = ["Connection", "Reply", "proxied", "within"]

#: What a request target may hold (RFC 9112 section 3.2: no space, no control character).
_TARGET = re.compile(r"[!-~]+")
#: A header name (RFC 9110 section 5.1: a token).
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


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
    """The headers as bytes, checked: a name must be an HTTP token, and a value that cannot be
    sent is refused without showing it (it may be an API key)."""
    fields = []
    for name, value in headers.items():
        if not _TOKEN.fullmatch(name):
            raise httpx.LocalProtocolError(
                f"the header name {name[:80]!r} is not an HTTP token (letters, digits and "
                f"!#$%&'*+-.^_`|~ only); check the headers given"
            )
        if any(c in value for c in "\r\n\0") or not value.isascii():
            raise httpx.LocalProtocolError(
                f"the {name} header holds a character that HTTP cannot carry (a line break or "
                f"non-ASCII text); check the value it was given"
            )
        fields.append((name.encode("ascii"), value.encode("ascii")))
    return fields


class _Link:
    """An open connection: its transport and what it received."""

    def __init__(self, transport: asyncio.Transport, inbox: Inbox) -> None:
        self.transport, self.inbox = transport, inbox
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
        self.head: bytes | None = None  # the header lines, checked at the first request
        self.link: _Link | None = None

    async def post(self, path: str, body: bytes, timeout: float) -> Reply:
        """Send ``body`` to ``path`` (under the base URL's path) and read the whole answer,
        all within ``timeout`` seconds.

        A kept-alive connection that the server closed just before this request went out (it
        wrote nothing back) is opened again and the request sent once more, as urllib3 does:
        that is the connection going stale, not the server failing, and costs no attempt.
        """
        request = self.request_head(path, len(body))
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

    def request_head(self, path: str, length: int) -> bytes:
        """The request line and headers of a POST of ``length`` bytes to ``path``; a header or
        target that HTTP cannot carry is refused (each time: like any bad send)."""
        if self.head is None:
            self.head = b"".join(b"%s: %s\r\n" % field for field in _header_fields(self.headers))
        target = self.prefix + path
        if not _TARGET.fullmatch(target):
            raise httpx.LocalProtocolError(
                f"the request target {target[:200]!r} holds a character a request line cannot "
                f"carry; check the base URL"
            )
        return b"POST %s HTTP/1.1\r\n%sContent-Length: %d\r\n\r\n" % (
            target.encode("ascii"),
            self.head,
            length,
        )

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
        # No isinstance(transport, asyncio.Transport) check: uvloop's are not subclasses of it.
        self.link = _Link(transport, inbox)

    async def _exchange(
        self, request: bytes, body: bytes, deadline: float, timeout: float
    ) -> Reply:
        assert self.link is not None
        link, loop = self.link, asyncio.get_running_loop()
        link.inbox.idle = False
        link.transport.write(request + body)
        answer = Response(self.max_body)
        received, until = 0, deadline
        in_head = False  # between the first byte of a header block and its end
        while not answer.complete:
            try:
                data = await link.inbox.read(until)
            except TimeoutError:
                raise _late(
                    received, answer.status is not None, in_head and until < deadline, timeout
                ) from None
            except OSError as exc:
                if received:
                    raise httpx.ReadError(str(exc) or type(exc).__name__) from None
                raise _Unanswered(f"the server closed the connection: {exc}") from None
            if not data:
                if not received:
                    raise _Unanswered("Server disconnected without sending a response.")
                answer.end()
                break
            if answer.status is None and not in_head:
                in_head, until = True, min(deadline, loop.time() + HEADER_SECONDS)
            received += len(data)
            heads = answer.heads
            answer.feed(data)
            if answer.heads != heads:  # the answer's head, or a 100 Continue's: what follows
                in_head, until = False, deadline  # may take the model's time
        link.inbox.disarm()
        assert answer.status is not None and answer.body is not None
        try:
            decoded = answer.body.finish()
        except (ValueError, zlib.error) as exc:
            raise httpx.RemoteProtocolError(f"malformed response body: {exc}") from None
        if link.inbox.pieces:
            raise stray(link.inbox.pieces[0])
        if answer.keep_alive:
            link.inbox.idle = True
        else:  # Connection: close, HTTP/1.0, or a body that ended with the connection
            self.close()
        return Reply(answer.status, answer.reason.decode("latin-1"), answer.headers, decoded)

    def close(self) -> None:
        if self.link is not None:
            self.link.inbox.disarm()
            self.link.transport.close()
            self.link = None


class _Unanswered(httpx.RemoteProtocolError):
    """The connection ended before a single byte of the answer came back."""


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
