"""The bounds on what an ``openai:`` server may send: body size, inflated size, header block.

A server, or anything between it and the client, can answer with a body of any size, or a small
gzip body that inflates to gigabytes; on loopback either arrives faster than any timeout. So
every answer is read through a :class:`Body`, which counts the bytes on the wire and inflates
``gzip``/``deflate`` incrementally with ``zlib.decompressobj().decompress(data, max_length)``:
neither the wire body nor the decoded one can pass ``max_body`` bytes. The header
block is bounded by :data:`HEADER_LIMIT` (the wire counts its bytes before the parser joins
them), and must arrive within :data:`HEADER_SECONDS` of its first byte.

Going past a limit raises :class:`LimitExceeded`: an infrastructure error that the transport
does not retry (the same request gets the same answer) and whose message says how to raise it.
"""

from __future__ import annotations

import zlib

__all__ = [
    "DEFAULT_MAX_RESPONSE_MIB",
    "HEADER_LIMIT",
    "HEADER_SECONDS",
    "MIB",
    "Body",
    "LimitExceeded",
    "header_limit_exceeded",
]

MIB = 2**20
#: The largest response body accepted by default, on the wire and after decompression: an
#: OpenAI-compatible answer of 16 MiB is already ~4 million tokens of text.
DEFAULT_MAX_RESPONSE_MIB = 16
#: The longest status line plus headers read; after them, the chunk-size lines and trailers
#: may take as much again beyond 32 bytes a chunk (httpx, h11 and most servers accept 64 KiB of
#: headers or less; an API answer sends well under 2 KiB).
HEADER_LIMIT = 2**16
#: Seconds the header block may take after its first byte. Servers write their headers in one
#: go; a block still dripping in after this is a server or proxy stalling, not a slow model.
HEADER_SECONDS = 10.0
#: The most a compressed body is inflated in one step while it is counted.
_STEP = 2**20

_RAISE_IT = (
    "raise it with max_response_mib=N in the openai: spec (e.g. ?max_response_mib=64) "
    "or the competence_max_response_mib ini option"
)


class LimitExceeded(Exception):
    """The server sent more than a limit allows; not retried, since it would send it again."""


def _too_large(what: str, limit: int) -> LimitExceeded:
    return LimitExceeded(
        f"{what} passes the limit of {limit / MIB:g} MiB (max_response_mib); {_RAISE_IT}"
    )


def header_limit_exceeded(where: str) -> LimitExceeded:
    """The header block (or a chunk-size line, or the trailers) passed :data:`HEADER_LIMIT`."""
    return LimitExceeded(
        f"{where} pass {HEADER_LIMIT // 1024} KiB, the most this client reads; the limit is "
        f"fixed because no OpenAI-compatible server needs more: check what sits between the "
        f"client and the server"
    )


class Body:
    """One response body, fed as it arrives and bounded on the wire and after decoding.

    ``encoding`` is the ``Content-Encoding`` value (``gzip``, ``x-gzip``, ``deflate``, or
    ``identity``/empty); ``declared`` the ``Content-Length``, checked before a byte is read.
    Deflate is taken zlib-wrapped as RFC 9110 says, or raw as some servers send it.

    A compressed body is kept compressed while it arrives and inflated as it comes only to count
    what it inflates to, :data:`_STEP` at a time, the output dropped; it is inflated for good
    once complete and known to fit. So the bodies in flight hold their wire bytes, not up to
    ``limit`` each: 32 gzip bombs arriving at once hold 32 MiB, not 32 times 16 MiB.
    """

    def __init__(self, encoding: str, declared: int | None, limit: int) -> None:
        self.limit = limit
        self.wire = 0
        self.parts: list[bytes] = []  # as they came off the wire
        self.inflated = 0  # what a compressed body inflates to, so far
        encoding = encoding.strip().lower()
        if encoding not in ("", "identity", "gzip", "x-gzip", "deflate"):
            raise ValueError(
                f"unsupported content-encoding {encoding!r} (this client asks for gzip or deflate)"
            )
        self.encoding = "" if encoding == "identity" else encoding
        self.wbits = 0  # zlib's for the encoding, chosen at the first byte (deflate: which kind)
        self.counter: zlib._Decompress | None = None
        if declared is not None and declared > limit:
            raise _too_large(f"the response body (Content-Length: {declared:,})", limit)

    def feed(self, data: bytes) -> None:
        """Take the next bytes of the body as they came off the wire."""
        self.wire += len(data)
        if self.wire > self.limit:
            raise _too_large(f"the response body ({self.wire:,} bytes so far)", self.limit)
        if data:
            self.parts.append(data)
        if self.encoding and data:
            self._count(data)

    def _count(self, data: bytes) -> None:
        if self.counter is None:
            raw = self.encoding == "deflate" and data[:1] != b"x"
            self.wbits = (
                -zlib.MAX_WBITS
                if raw
                else (zlib.MAX_WBITS | 16 if "gzip" in self.encoding else zlib.MAX_WBITS)
            )
            self.counter = zlib.decompressobj(self.wbits)
        while data:
            if self.counter.eof:
                raise ValueError(f"{len(data)} bytes follow the end of the {self.encoding} body")
            self._counted(len(self.counter.decompress(data, _STEP)))
            data = self.counter.unconsumed_tail or self.counter.unused_data

    def _counted(self, more: int) -> None:
        self.inflated += more
        if self.inflated > self.limit:
            raise _too_large(
                f"the decompressed response body ({self.inflated:,} bytes so far)", self.limit
            )

    def finish(self) -> bytes:
        """The whole decoded body; a compressed body that stops short is an error."""
        wire = b"".join(self.parts)
        if not self.encoding or not wire:
            return wire
        assert self.counter is not None
        # All input is consumed, so what zlib still holds is the end of one match: bytes.
        self._counted(len(self.counter.flush()))
        if not self.counter.eof:
            raise ValueError(f"the {self.encoding} body ends before its compressed stream does")
        return zlib.decompressobj(self.wbits).decompress(wire, self.limit + 1)
