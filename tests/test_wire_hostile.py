"""The ``openai:`` backend against servers that misbehave below HTTP: every answer stays with its
own prompt, and every misbehaviour is an infrastructure error that names it (issue #29).

The server (``tests/scripted_server.py``) answers each prompt with a hash of that prompt's text
(:func:`tag`), so a record that holds any other prompt's answer is caught. Each test runs a batch
of prompts through the model as a suite would and checks, per record, that it is either its own
prompt's tag or a ``ModelCallError`` naming the problem — never another prompt's answer, never a
wait for the timeout. Against the hand-written reader that h11 replaced (itself since replaced by
httptools), these tests fail: a response written behind a complete one, or a 101 before the 200,
put the previous prompt's answer in the records (issue #29 counted 24 and 14 of 32).
"""

from __future__ import annotations

import itertools
import time
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import pytest

from plugin_helpers import read_archive
from pytest_competence.models import ModelCallError, resolve_model
from pytest_competence.strategies import Ordering
from scripted_server import ScriptedServer, answer_body, reply, scripted, tag  # noqa: F401

MIB = 2**20


@pytest.fixture(scope="module")
def prompts():
    items = Ordering(vocabulary="front_behind").design(
        levels=[4], pairs=4, seed=3, presentations=["original", "equivalent"]
    )
    return [p for item in items for p in item.prompts]


def ask(url: str, prompts: Sequence[object], query: str = "") -> list[object]:
    """The prompts through ``openai:`` at ``url``: 2 tries, no wait between them."""
    params = {
        "backoff": "0",
        "attempts": "2",
        "timeout": "10",
        "concurrency": "2",
        **dict(parse_qsl(query)),
    }
    return resolve_model(f"openai:m@{url}?{urlencode(params)}").generate(prompts)


def own_answers_or(
    answers: Sequence[object], prompts: Sequence[object], problem: str | None
) -> list[ModelCallError]:
    """Each answer is its own prompt's tag or an infrastructure error saying ``problem``; the
    errors."""
    errors = []
    for answer, prompt in zip(answers, prompts, strict=True):
        if isinstance(answer, BaseException):
            assert isinstance(answer, ModelCallError), repr(answer)
            assert problem is not None and problem in str(answer), str(answer)
            errors.append(answer)
        else:
            assert answer == tag(prompt.text), "a record holds another prompt's answer"
    return errors


# -- a second answer, where only one was asked for ------------------------------------------------


def test_a_response_written_behind_a_complete_one_is_never_the_next_answer(scripted, prompts):
    server = scripted(
        lambda request: (reply(answer_body(request)) + reply(answer_body(request)), False)
    )
    errors = own_answers_or(
        ask(server.url, prompts),
        prompts,
        "the server sent more after the complete response",
    )
    assert len(errors) == len(prompts)  # two answers to one request: neither is taken
    assert "two answers to one request" in str(errors[0])
    assert "gave up after 2 attempts" in str(errors[0])


def test_a_stray_response_now_and_then_costs_a_retry_not_a_wrong_answer(scripted, prompts):
    sent = []

    def script(request: bytes):
        sent.append(request)
        stray = reply(answer_body(request)) if len(sent) % 2 else b""
        return reply(answer_body(request)) + stray, False

    server = scripted(script)
    answers = ask(server.url, prompts, "concurrency=1&attempts=3")
    assert own_answers_or(answers, prompts, None) == []
    assert len(sent) > len(prompts) and server.connections > 1


def test_101_then_200_is_a_protocol_error_not_the_next_answer(scripted, prompts):
    upgrade = (
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
    )
    server = scripted(lambda request: (upgrade + reply(answer_body(request)), False))
    errors = own_answers_or(
        ask(server.url, prompts), prompts, "the server answered 101 Switching Protocols"
    )
    assert len(errors) == len(prompts)
    assert "only 100 Continue may come before the answer" in str(errors[0])


# -- limits --------------------------------------------------------------------------------------


#: Content-Encoding → zlib's wbits for it (deflate: zlib-wrapped as the RFC says, or raw).
WBITS = {"gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS, "raw-deflate": -zlib.MAX_WBITS}


def bomb(inflated: int, encoding: str = "gzip") -> bytes:
    """A compressed body of zeros that inflates to ``inflated`` bytes, made without them."""
    pack = zlib.compressobj(9, zlib.DEFLATED, WBITS[encoding])
    block = bytes(MIB)
    return b"".join([*(pack.compress(block) for _ in range(inflated // MIB)), pack.flush()])


@pytest.mark.parametrize("encoding", list(WBITS))
def test_a_compression_bomb_is_cut_at_the_limit_while_inflating(scripted, prompts, encoding):
    body = bomb(64 * MIB, encoding)
    assert len(body) < MIB // 8
    name = encoding.removeprefix("raw-")
    server = scripted(lambda request: (reply(body, headers=f"Content-Encoding: {name}\r\n"), False))
    errors = own_answers_or(ask(server.url, prompts), prompts, "the decompressed response body (")
    assert len(errors) == len(prompts)
    assert (
        "bytes so far) passes the limit of 16 MiB (max_response_mib); raise it with "
        "max_response_mib=N in the openai: spec" in str(errors[0])
    )
    assert "not retried" in str(errors[0]) and len(server.requests) == len(prompts)


def framed(body: bytes, framing: str) -> tuple[bytes, bool]:
    """``body`` as a response framed by ``framing``; whether the server closes after it."""
    if framing == "content-length":
        return reply(body), False
    if framing == "chunked":
        chunks = b"".join(
            b"%x\r\n%s\r\n" % (len(body[i : i + 65536]), body[i : i + 65536])
            for i in range(0, len(body), 65536)
        )
        return reply(
            chunks + b"0\r\n\r\n", headers="Transfer-Encoding: chunked\r\n", length=False
        ), False
    return reply(body, headers="Connection: close\r\n", length=False), True  # until close


FRAMINGS = ["content-length", "chunked", "until-close"]


@pytest.mark.parametrize("framing", FRAMINGS)
def test_a_body_over_the_limit_is_an_error_in_every_framing(scripted, prompts, framing):
    # 2 MiB of padding against max_response_mib=1; raised to 3, the same answers are taken.
    server = scripted(lambda request: framed(answer_body(request, pad=2 * MIB), framing))
    errors = own_answers_or(
        ask(server.url, prompts, "max_response_mib=1"),
        prompts,
        "passes the limit of 1 MiB (max_response_mib); raise it with",
    )
    assert len(errors) == len(prompts) and "not retried" in str(errors[0])
    assert ("Content-Length: 2,097," if framing == "content-length" else "bytes so far") in str(
        errors[0]
    )
    assert len(server.requests) == len(prompts)  # not retried: the answer would be the same
    assert own_answers_or(ask(server.url, prompts, "max_response_mib=3"), prompts, None) == []


def test_the_ini_option_raises_the_limit(pytester, scripted):
    server = scripted(lambda request: framed(answer_body(request, pad=17 * MIB), "chunked"))
    pytester.makepyfile(
        test_suite="""
        import pytest

        @pytest.mark.competence(levels=[4], pairs=4, presentations=["original"])
        def test_ordering(competence):
            pass
    """
    )
    spec = f"--competence-model=openai:m@{server.url}?backoff=0&attempts=1&concurrency=2"
    result = pytester.runpytest("-p", "no:cacheprovider", spec, "--competence-cache=off")
    result.stdout.fnmatch_lines(["*passes the limit of 16 MiB (max_response_mib)*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # an ERROR: infrastructure
    result.assert_outcomes(errors=1)
    pytester.makeini("[pytest]\ncompetence_max_response_mib = 18\n")
    result = pytester.runpytest(
        "-p", "no:cacheprovider", spec, "--competence-cache=off", "--competence-json=out.json"
    )
    # Tags are not yes/no: every answer is invalid, so the model fails; but nothing errored.
    result.assert_outcomes(failed=1)
    _, by_result = read_archive(pytester.path / "out.json")
    (records,) = by_result.values()
    assert len(records) == 4
    assert all(r["raw"] == tag(r["prompt"]) for r in records), records[0]


# -- framing a strict parser refuses -------------------------------------------------------------

MALFORMED = {
    "xchunked": (
        "Transfer-Encoding: xchunked\r\n",
        "chunked",
        "Only Transfer-Encoding: chunked is supported",
    ),
    "gzip-chunked": (
        "Transfer-Encoding: gzip, chunked\r\n",
        "chunked",
        "Only Transfer-Encoding: chunked is supported",
    ),
    "length-plus": ("Content-Length: +{n}\r\n", "plain", "Invalid character in Content-Length"),
    "length-underscore": (
        "Content-Length: {u}\r\n",
        "plain",
        "Invalid character in Content-Length",
    ),
    "length-space-colon": ("Content-Length : {n}\r\n", "plain", "Invalid header field char"),
    "chunk-size-0x": ("Transfer-Encoding: chunked\r\n", "0x", "Invalid character in chunk size"),
}


@pytest.mark.parametrize("case", MALFORMED, ids=list(MALFORMED))
def test_malformed_framing_is_a_protocol_error(scripted, prompts, case):
    header, body_kind, message = MALFORMED[case]

    def script(request: bytes):
        body = answer_body(request)
        n = len(body)
        u = f"{str(n)[:1]}_{str(n)[1:]}"  # 1_0 style: int() would read it, HTTP does not
        if body_kind == "plain":
            payload = body
        else:
            size = f"0x{n:x}" if body_kind == "0x" else f"{n:x}"
            payload = f"{size}\r\n".encode() + body + b"\r\n0\r\n\r\n"
        return reply(payload, headers=header.format(n=n, u=u), length=False), False

    server = scripted(script)
    errors = own_answers_or(ask(server.url, prompts), prompts, f"malformed response: {message}")
    assert len(errors) == len(prompts) and "gave up after 2 attempts" in str(errors[0])


# -- slow drips and floods -----------------------------------------------------------------------


def drip(data: bytes, pause: float, head: bytes = b"") -> Iterator[bytes]:
    """``head`` at once, then ``data`` a byte at a time, ``pause`` seconds apart."""
    if head:
        yield head
    for k in range(len(data)):
        time.sleep(pause)
        yield data[k : k + 1]


def test_headers_dripping_in_are_cut_at_the_header_bound_not_the_timeout(
    scripted, prompts, monkeypatch
):
    # A header block that takes 20 s at a byte per 0.1 s; the try's timeout is 60 s. The bound
    # is HEADER_SECONDS after the first byte (10 s; 0.5 s here), per try.
    monkeypatch.setattr("pytest_competence.models._wire.HEADER_SECONDS", 0.5)
    server = scripted(lambda request: (drip(reply(answer_body(request)), 0.1), False))
    start = time.monotonic()
    answers = ask(server.url, prompts[:2], "timeout=60")
    assert time.monotonic() - start < 6.0  # two tries of ~0.6 s each, on two workers
    errors = own_answers_or(
        answers,
        prompts[:2],
        "ReadTimeout: the response headers were still arriving 0.5 s after their first byte",
    )
    assert len(errors) == 2


def test_a_slow_model_is_not_cut_by_the_header_bound(scripted, prompts, monkeypatch):
    monkeypatch.setattr("pytest_competence.models._wire.HEADER_SECONDS", 0.2)

    def script(request: bytes):
        time.sleep(0.6)  # generating: nothing is sent yet
        return reply(answer_body(request)), False

    server = scripted(script)
    assert own_answers_or(ask(server.url, prompts[:4]), prompts[:4], None) == []


def test_a_body_dripping_in_is_cut_at_the_timeout(scripted, prompts):
    def script(request: bytes):
        body = answer_body(request)
        head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        return drip(body, 0.1, head), False

    server = scripted(script)
    start = time.monotonic()
    answers = ask(server.url, prompts[:2], "timeout=1")
    assert time.monotonic() - start < 5.0
    errors = own_answers_or(answers, prompts[:2], "ReadTimeout: no complete answer within 1 s (")
    assert len(errors) == 2 and "bytes of the response so far, its headers complete)" in str(
        errors[0]
    )


@pytest.mark.parametrize(
    ("before", "where"),
    [
        (b"HTTP/1.1 200 OK\r\n", "the response headers"),
        # httptools joins a header's pieces in Python before handing it over: trailers are
        # bounded by counting their bytes as they go to the parser.
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n", "the trailers"),
    ],
    ids=["headers", "trailers"],
)
def test_a_flood_of_header_lines_is_cut_at_the_limit(scripted, prompts, before, where):
    def script(request: bytes):
        lines = (b"X-Filler-%d: %s\r\n" % (k, b"x" * 200) for k in range(10**6))
        return itertools.chain([before], lines), False

    server = scripted(script)
    start = time.monotonic()
    errors = own_answers_or(
        ask(server.url, prompts[:2]),
        prompts[:2],
        f"{where} pass 64 KiB, the most this client reads",
    )
    assert time.monotonic() - start < 5.0 and len(errors) == 2
    assert "not retried" in str(errors[0]) and len(server.requests) == 2


def test_a_body_in_one_byte_chunks_is_read_whole(scripted, prompts):
    # The bound on what is not body grows with the chunks: small chunks are framing, not a flood.
    def script(request: bytes):
        body = answer_body(request) + b" " * 70_000  # JSON allows the trailing blanks
        framed = b"".join(b"1\r\n%s\r\n" % body[k : k + 1] for k in range(len(body)))
        head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        return head + framed + b"0\r\n\r\n", False

    server = scripted(script)
    assert own_answers_or(ask(server.url, prompts[:2]), prompts[:2], None) == []


def test_a_slow_model_behind_100_continue_is_not_cut_by_the_header_bound(
    scripted, prompts, monkeypatch
):
    # The bound runs from the first byte of each header block: a 100 Continue's ends it.
    monkeypatch.setattr("pytest_competence.models._wire.HEADER_SECONDS", 0.2)

    def script(request: bytes):
        def pieces():
            yield b"HTTP/1.1 100 Continue\r\n\r\n"
            time.sleep(0.6)  # generating
            yield reply(answer_body(request))

        return pieces(), False

    server = scripted(script)
    assert own_answers_or(ask(server.url, prompts[:2]), prompts[:2], None) == []


# -- through a proxy, where httpx carries the requests ----------------------------------------------


@pytest.fixture
def via_proxy(monkeypatch):
    """Point ``HTTP_PROXY`` at a scripted server: it then receives every request."""
    for name in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
    ):
        monkeypatch.delenv(name, raising=False)

    def use(server: ScriptedServer) -> str:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{server.port}")
        return "http://model.invalid:8000/v1"  # never resolved: the proxy is asked

    return use


def test_the_limits_hold_through_a_proxy(scripted, prompts, via_proxy):
    server = scripted(lambda request: framed(answer_body(request, pad=2 * MIB), "chunked"))
    url = via_proxy(server)
    errors = own_answers_or(
        ask(url, prompts, "max_response_mib=1"),
        prompts,
        "passes the limit of 1 MiB (max_response_mib)",
    )
    assert len(errors) == len(prompts) and len(server.requests) == len(prompts)
    assert server.requests[0].startswith(b"POST http://model.invalid:8000/v1/chat/completions ")
    assert own_answers_or(ask(url, prompts, "max_response_mib=3"), prompts, None) == []


def test_a_gzip_bomb_is_cut_through_a_proxy(scripted, prompts, via_proxy):
    body = bomb(64 * MIB)
    server = scripted(lambda request: (reply(body, headers="Content-Encoding: gzip\r\n"), False))
    url = via_proxy(server)
    errors = own_answers_or(ask(url, prompts[:2]), prompts[:2], "the decompressed response body (")
    assert len(errors) == 2


def test_a_drip_through_a_proxy_is_cut_at_the_timeout(scripted, prompts, via_proxy):
    # httpx's timeouts are per read, which a byte every 0.1 s never trips: the try has one
    # deadline all the same.
    server = scripted(lambda request: (drip(reply(answer_body(request)), 0.1), False))
    url = via_proxy(server)
    start = time.monotonic()
    errors = own_answers_or(
        ask(url, prompts[:2], "timeout=1"),
        prompts[:2],
        "ReadTimeout: no complete answer within 1 s",
    )
    assert len(errors) == 2 and time.monotonic() - start < 5.0


# -- the memory a gzip bomb costs ----------------------------------------------------------------

#: The run's own peak RSS: VmHWM, which starts afresh at exec. (getrusage's ru_maxrss would
#: count the parent's size at fork: an xdist worker that loaded torch makes it a gigabyte.)
PEAK = """
    import pathlib

    def pytest_unconfigure(config):
        status = pathlib.Path("/proc/self/status").read_text()
        peak = next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))
        pathlib.Path("peak_rss_kib").write_text(peak)
"""


def pieces(data: bytes, size: int) -> Iterator[bytes]:
    """``data`` in writes of ``size`` bytes, a moment apart, as a loaded machine delivers it."""
    for start in range(0, len(data), size):
        yield data[start : start + size]
        time.sleep(0.0005)


@pytest.mark.slow
@pytest.mark.parametrize("size", [4096, 2**30], ids=["4KiB-writes", "one-write"])
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_a_run_that_receives_gzip_bombs_stays_small(pytester, scripted, size):
    """32 requests in flight, each answered by 1 MiB of gzip that inflates to 1 GiB: before the
    limits a run like this peaked at 2.1 GB (issue #29). Sent a few KiB at a time, every bomb
    in flight inflates a little at each write, and none may hold up to the limit of 16 MiB: only
    its compressed bytes are kept while it arrives."""
    answer = reply(bomb(1024 * MIB), headers="Content-Encoding: gzip\r\n")
    assert len(answer) < 1.1 * MIB
    server = scripted(lambda request: (pieces(answer, size), False))
    pytester.makeconftest(PEAK)
    pytester.makepyfile(
        test_suite="""
        import pytest

        @pytest.mark.competence(levels=[4, 8], pairs=16)
        def test_ordering(competence):
            pass
    """
    )
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--competence-cache=off",
        f"--competence-model=openai:m@{server.url}?backoff=0&attempts=1&concurrency=32",
        timeout=300,
    )
    output = result.stdout.str()
    assert "the decompressed response body (" in output and "passes the limit of 16 MiB" in output
    result.assert_outcomes(errors=1)
    assert len(server.requests) == 64
    peak = int((pytester.path / "peak_rss_kib").read_text()) / 1024
    print(f"peak RSS {peak:.0f} MiB")
    assert peak < 300, f"peak RSS {peak:.0f} MiB"
