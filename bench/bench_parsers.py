"""CPU per exchange of the HTTP/1.1 framing under the ``openai:`` model: the wire's (httptools) beside
h11's, which it replaced, and aiohttp's C parser.

The wire (``models/_wire.py``) writes each request's head itself and parses each answer with
httptools (llhttp, in C); until 2026-12-04 it framed both with h11, a pure-Python parser. This
measures the framing alone, in one process, with no socket: per exchange, the request head as
``Connection.request_head`` builds it and the answer parsed to its end by ``_response.Response``
(every check the wire makes included), for a typical chat-completion answer sent with
``Content-Length`` and with ``Transfer-Encoding: chunked``; beside it, the same exchange through
h11 (``h11.Request`` with the same headers, the body, the end of message, then the parse), and
the parse alone by aiohttp's ``HttpResponseParser`` (its C extension, when aiohttp is installed;
aiohttp is not a dependency of this project).

Prints microseconds per exchange (best of ``--repeat`` runs of ``--number`` exchanges) and the
ratios; asserts nothing but that every parser read the whole body:

    python bench/bench_parsers.py [--number 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import timeit
from collections.abc import Callable

import h11
import httptools

from pytest_competence.models._limits import DEFAULT_MAX_RESPONSE_MIB, MIB
from pytest_competence.models._response import Response
from pytest_competence.models._wire import Connection, _header_fields

# The wire, and the header fields it sends.
WIRE = Connection("http://127.0.0.1:8000/v1", {"Authorization": "Bearer sk-0000"}, None)
FIELDS = _header_fields(WIRE.headers)
REQUEST = json.dumps(
    {
        "model": "m",
        "messages": [{"role": "user", "content": "Which comes first, x or y? " * 12}],
        "max_tokens": 16,
        "temperature": 0,
    }
).encode()
ANSWER = json.dumps(
    {
        "id": "chatcmpl-0",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "x"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 80, "completion_tokens": 1, "total_tokens": 81},
    }
).encode()
HEAD = b"HTTP/1.1 200 OK\r\ndate: Wed, 02 Dec 2026 00:00:00 GMT\r\nserver: uvicorn\r\ncontent-type: application/json\r\n"
RESPONSES = {
    "content-length": HEAD + b"content-length: %d\r\n\r\n" % len(ANSWER) + ANSWER,
    "chunked": HEAD
    + b"transfer-encoding: chunked\r\n\r\n"
    + b"%x\r\n" % len(ANSWER)
    + ANSWER
    + b"\r\n0\r\n\r\n",
}


def h11_send() -> h11.Connection:
    conn = h11.Connection(h11.CLIENT)
    request = h11.Request(
        method=b"POST",
        target=b"/v1/chat/completions",
        headers=[*FIELDS, (b"Content-Length", b"%d" % len(REQUEST))],
    )
    conn.send(request) + conn.send(h11.Data(data=REQUEST)) + conn.send(h11.EndOfMessage())
    return conn


def h11_parse(conn: h11.Connection, wire: bytes) -> bytes:
    conn.receive_data(wire)
    body = []
    while True:
        event = conn.next_event()
        if type(event) is h11.Data:
            body.append(event.data)
        elif type(event) is h11.EndOfMessage:
            return b"".join(body)


def wire_exchange(wire: bytes) -> bytes:
    """The request head as the wire writes it, and the answer parsed as the wire parses it."""
    WIRE.request_head("/chat/completions", len(REQUEST)) + REQUEST
    answer = Response(DEFAULT_MAX_RESPONSE_MIB * MIB)
    answer.feed(wire)
    assert answer.complete and answer.body is not None
    return answer.body.finish()


def aiohttp_parser() -> Callable[[bytes], bytes] | None:
    try:
        from aiohttp.http_parser import HttpResponseParser
    except ImportError:
        return None
    loop = asyncio.new_event_loop()

    class Protocol:  # what the parser's payload streams call back on
        _reading_paused = False

        def pause_reading(self, *args: object, **kwargs: object) -> None: ...

        def resume_reading(self, *args: object, **kwargs: object) -> None: ...

    protocol = Protocol()

    def parse(wire: bytes) -> bytes:
        parser = HttpResponseParser(protocol, loop, 2**16)
        messages, _, _ = parser.feed_data(wire)
        return messages[0][1].read_nowait()

    return parse


def best(fn: Callable[[], object], number: int, repeat: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    aio = aiohttp_parser()
    send = best(h11_send, args.number, args.repeat)
    print(
        f"httptools {httptools.__version__}, h11 {h11.__version__}; request body "
        f"{len(REQUEST)} B, answer body {len(ANSWER)} B"
    )
    print(f"  h11 request, sent (as the wire built it before): {send:6.1f} µs")
    for shape, wire in RESPONSES.items():
        assert h11_parse(h11_send(), wire) == ANSWER and wire_exchange(wire) == ANSWER
        old = best(lambda: h11_parse(h11_send(), wire), args.number, args.repeat)
        ours = best(lambda: wire_exchange(wire), args.number, args.repeat)
        line = (
            f"  {shape:>14}: wire exchange {ours:5.1f} µs; h11 exchange {old:5.1f} µs "
            f"(parse ~{old - send:4.1f}): {old / ours:.1f}x"
        )
        if aio is not None:
            assert aio(wire) == ANSWER
            theirs = best(lambda: aio(wire), args.number, args.repeat)
            line += f"; aiohttp C parse alone {theirs:4.1f} µs"
        print(line)
    if aio is None:
        print("  (aiohttp is not installed: its parser is not measured)")


if __name__ == "__main__":
    main()
