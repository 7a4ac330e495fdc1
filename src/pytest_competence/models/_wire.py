"""A lean HTTP/1.1 keep-alive connection for the JSON POSTs of :mod:`._transport`.

Why not ``httpx.AsyncClient``: against a local 50 ms server at 32 requests in flight, httpx, even
with one client per worker, spent 1.5 ms of client CPU per request (2.3 ms at 128): its
request/response models, header merging, cookie and auth hooks, httpcore's pool, h11's state
machine, the headers and body sent as two segments. Writing each request as one segment on a
kept-alive ``asyncio`` stream and reading the answer from it, the backend spends 0.16–0.23 ms
per request in the same run (``bench/bench_http.py``). A worker of the
transport owns one :class:`Connection` per replica and sends one request at a time on it, so
there is no pool to manage.

What it speaks: ``POST`` with ``Content-Length``, over ``http`` or ``https`` (TLS through
httpx's default context, so certificates are checked as httpx checks them); answers with
``Content-Length``, ``chunked`` or read-until-close bodies, ``gzip``/``deflate`` content
encoding, interim ``1xx`` answers skipped, keep-alive unless the server says ``close``.
Proxies are not spoken here: :func:`proxied` tells the transport when the environment names
one, and then httpx carries the requests. Failures are raised as the httpx exceptions of the
same meaning (``ConnectError``, ``ConnectTimeout``, ``ReadTimeout``, ``ReadError``,
``WriteError``, ``RemoteProtocolError``, ``LocalProtocolError``), so the retry rules see one
vocabulary whichever carried the request.
"""

from __future__ import annotations

import asyncio
import ssl
import sys
import urllib.request
import zlib
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import quote, urlsplit

import httpx

from pytest_competence._version import __version__

__all__ = ["Connection", "Reply", "proxied"]

T = TypeVar("T")

#: Longest status line plus headers accepted (httpx/h11 accept 64 KiB too).
_HEAD_LIMIT = 2**16


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


def _header_block(headers: Mapping[str, str]) -> bytes:
    """``Name: value\\r\\n`` lines; a value that cannot be sent is refused without showing it
    (it may be an API key)."""
    lines = []
    for name, value in headers.items():
        if any(c in value for c in "\r\n\0") or not value.isascii():
            raise httpx.LocalProtocolError(
                f"the {name} header holds a character that HTTP cannot carry (a line break or "
                f"non-ASCII text); check the value it was given"
            )
        lines.append(f"{name}: {value}\r\n")
    return "".join(lines).encode("ascii")


async def _within(seconds: float, step: Awaitable[T]) -> T:
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(seconds):
            return await step
    return await asyncio.wait_for(step, seconds)  # pragma: no cover - Python 3.10


class Connection:
    """One keep-alive connection to the origin of ``base_url``, opened at the first request and
    again after the server closes it; one request at a time."""

    def __init__(
        self, base_url: str, headers: Mapping[str, str], tls: ssl.SSLContext | None
    ) -> None:
        parts = urlsplit(base_url)
        self.host = parts.hostname or ""
        self.https = parts.scheme == "https"
        self.port = parts.port or (443 if self.https else 80)
        # Percent-encoded as httpx would: the request line is ASCII.
        self.prefix = quote(parts.path.rstrip("/"), safe="/%:@!$&'()*+,;=~")
        self.tls = tls if self.https else None
        self.headers = {
            "Host": parts.netloc,
            "User-Agent": f"pytest-competence/{__version__}",
            "Accept": "application/json",
            "Accept-Encoding": "gzip, deflate",
            "Content-Type": "application/json",
            **headers,
        }
        self.fixed: bytes | None = None  # the header lines, checked at the first request
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def post(self, path: str, body: bytes, timeout: float) -> Reply:
        """Send ``body`` to ``path`` (under the base URL's path) and read the whole answer,
        all within ``timeout`` seconds.

        A kept-alive connection that the server closed just before this request went out (it
        wrote nothing back) is opened again and the request sent once more, as urllib3 does:
        that is the connection going stale, not the server failing, and costs no attempt.
        """
        if self.fixed is None:
            self.fixed = _header_block(self.headers)  # refused per request, like any bad send
        request = (
            b"POST "
            + (self.prefix + path).encode()
            + b" HTTP/1.1\r\n"
            + self.fixed
            + b"Content-Length: "
            + str(len(body)).encode()
            + b"\r\n\r\n"
            + body
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        for again in (False, True):
            fresh = again or self.streams is None or self.streams[0].at_eof()
            if fresh:
                await self._open(max(0.001, deadline - loop.time()))
            try:
                return await _within(max(0.001, deadline - loop.time()), self._exchange(request))
            except _Unanswered as exc:
                self.close()
                if fresh:
                    raise httpx.RemoteProtocolError(str(exc)) from None
            except (asyncio.TimeoutError, TimeoutError):
                self.close()
                raise httpx.ReadTimeout(f"no complete answer within {timeout:g} s") from None
            except BaseException:
                self.close()  # whatever was left half-read must not meet the next request
                raise
        raise AssertionError("unreachable: the second pass is on a fresh connection")

    async def _open(self, timeout: float) -> None:
        self.close()
        try:
            self.streams = await _within(
                timeout,
                asyncio.open_connection(self.host, self.port, ssl=self.tls, limit=_HEAD_LIMIT),
            )
        except (asyncio.TimeoutError, TimeoutError):
            raise httpx.ConnectTimeout(f"no connection within {timeout:g} s") from None
        except OSError as exc:  # refused, unreachable, DNS, TLS (ssl.SSLError is an OSError)
            raise httpx.ConnectError(str(exc) or type(exc).__name__) from None

    async def _exchange(self, request: bytes) -> Reply:
        assert self.streams is not None
        reader, writer = self.streams
        try:
            writer.write(request)
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as exc:
            if exc.partial:
                raise httpx.RemoteProtocolError(
                    "the server closed the connection in the middle of the response headers"
                ) from None
            raise _Unanswered("Server disconnected without sending a response.") from None
        except (ConnectionResetError, BrokenPipeError) as exc:
            raise _Unanswered(f"the server closed the connection: {exc}") from None
        except asyncio.LimitOverrunError:
            raise httpx.RemoteProtocolError("the response headers are too long") from None
        except OSError as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__) from None
        try:
            reply, keep = await _read_reply(reader, head)
        except asyncio.IncompleteReadError:
            raise httpx.RemoteProtocolError(
                "Server disconnected without sending a complete response."
            ) from None
        except asyncio.LimitOverrunError:
            raise httpx.RemoteProtocolError("the response headers are too long") from None
        except (ValueError, zlib.error) as exc:
            raise httpx.RemoteProtocolError(f"malformed response: {exc}") from None
        except OSError as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__) from None
        if not keep:
            self.close()
        return reply

    def close(self) -> None:
        if self.streams is not None:
            self.streams[1].close()
            self.streams = None


class _Unanswered(httpx.RemoteProtocolError):
    """The connection ended before a single byte of the answer came back."""


async def _read_reply(reader: asyncio.StreamReader, head: bytes) -> tuple[Reply, bool]:
    """The response whose first header block is ``head``, and whether the connection may carry
    another."""
    while True:
        status_line, *lines = head[:-4].decode("latin-1").split("\r\n")
        version, _, rest = status_line.partition(" ")
        code, _, reason = rest.partition(" ")
        if not version.startswith("HTTP/1.") or len(code) != 3 or not code.isdigit():
            raise ValueError(f"not an HTTP/1.x status line: {status_line[:80]!r}")
        status = int(code)
        if status >= 200 or status == 101:
            break
        head = await reader.readuntil(b"\r\n\r\n")  # 100 Continue, 103 Early Hints: interim
    headers: dict[str, str] = {}
    for line in lines:
        name, colon, value = line.partition(":")
        if not colon:
            raise ValueError(f"malformed header line {line[:80]!r}")
        name = name.strip().lower()
        value = value.strip()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    keep = headers.get("connection", "").lower() != "close" and version != "HTTP/1.0"
    if status in (101, 204, 304):
        content = b""
    elif "chunked" in headers.get("transfer-encoding", "").lower():
        content = await _read_chunks(reader)
    elif "content-length" in headers:
        content = await reader.readexactly(int(headers["content-length"]))
    else:  # the body ends when the server closes the connection
        content, keep = await reader.read(), False
    encoding = headers.get("content-encoding", "identity").lower()
    if encoding in ("gzip", "x-gzip"):
        content = zlib.decompress(content, 16 + zlib.MAX_WBITS)
    elif encoding == "deflate":  # zlib-wrapped as the RFC says, or raw as some servers send
        content = zlib.decompress(
            content, zlib.MAX_WBITS if content[:1] == b"x" else -zlib.MAX_WBITS
        )
    elif encoding != "identity":
        raise ValueError(f"unsupported content-encoding {encoding!r}")
    return Reply(status, reason, headers, content), keep


async def _read_chunks(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        if await reader.readexactly(2) != b"\r\n":
            raise ValueError("a chunk does not end with CRLF")
