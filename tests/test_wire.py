"""The HTTP/1.1 connection under the ``openai:`` backend, against a server that answers byte by byte
what each test scripts: framings (length, chunked, until close), encodings, interim answers,
connections the server closes, and malformed answers. ``tests/test_http.py`` runs the whole
backend against the fake OpenAI server; this file checks the wire on its own."""

from __future__ import annotations

import asyncio
import gzip
import json
import shutil
import ssl
import subprocess
import zlib
from typing import Any

import httpx
import pytest

from pipe_helpers import ask
from pytest_competence.models._transport import Call, ModelCallError, RetryPolicy
from pytest_competence.models._wire import Connection, proxied
from scripted_server import reply as scripted_reply
from scripted_server import scripted  # noqa: F401

BODY = json.dumps({"choices": [{"message": {"content": "yes"}}]}).encode()


def reply(body: bytes = BODY, **kwargs: Any) -> bytes:
    return scripted_reply(body, **kwargs)


def post(
    url: str,
    count: int = 1,
    headers: dict[str, str] | None = None,
    tls: ssl.SSLContext | None = None,
) -> list[object]:
    """``count`` requests in a row on one :class:`Connection`."""

    async def go() -> list[object]:
        connection = Connection(url, headers or {}, tls)
        try:
            return [
                await connection.post("/chat/completions", b'{"n": %d}' % k, 5.0)
                for k in range(count)
            ]
        finally:
            connection.close()

    return asyncio.run(go())


def test_the_request_is_one_well_formed_post(scripted):
    server = scripted(lambda request: (reply(), False))
    [answer] = post(server.url, headers={"Authorization": "Bearer k"})
    assert answer.status_code == 200 and json.loads(answer.content) == json.loads(BODY)
    head, _, body = server.requests[0].partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /v1/chat/completions HTTP/1.1"
    fields = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    assert fields["host"] == f"127.0.0.1:{server.port}"
    assert fields["authorization"] == "Bearer k"
    assert fields["content-type"] == "application/json"
    assert int(fields["content-length"]) == len(body) and body == b'{"n": 0}'


def test_a_base_path_outside_ascii_is_percent_encoded(scripted):
    server = scripted(lambda request: (reply(), False))
    post(server.url.replace("/v1", "/mödel v1"))
    assert server.requests[0].startswith(b"POST /m%C3%B6del%20v1/chat/completions HTTP/1.1\r\n")


def test_keep_alive_reuses_the_connection(scripted):
    server = scripted(lambda request: (reply(), False))
    assert len(post(server.url, count=5)) == 5
    assert server.connections == 1


@pytest.mark.parametrize("close", ["Connection: close\r\n", None])
def test_a_closed_connection_is_opened_again_without_an_error(scripted, close):
    # Told (Connection: close) or not (the server just hangs up after answering, as an idle
    # keep-alive timeout does): either way the next request goes out on a fresh connection.
    server = scripted(lambda request: (reply(headers=close or ""), True))
    answers = post(server.url, count=3)
    assert [a.content for a in answers] == [BODY] * 3
    assert server.connections == 3


def test_chunked_bodies_with_extensions_and_trailers(scripted):
    chunks = [BODY[:7], BODY[7:20], BODY[20:]]
    framed = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(c), c) for c in chunks)
    answer = reply(
        framed + b"0\r\nX-Trailer: t\r\n\r\n",
        length=False,
        headers="Transfer-Encoding: chunked\r\n",
    )
    server = scripted(lambda request: (answer, False))
    answers = post(server.url, count=2)
    assert [a.content for a in answers] == [BODY, BODY] and server.connections == 1


def test_a_body_that_ends_with_the_connection(scripted):
    server = scripted(lambda request: (reply(length=False, headers="Connection: close\r\n"), True))
    assert [a.content for a in post(server.url, count=2)] == [BODY, BODY]


@pytest.mark.parametrize(
    ("name", "encode"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda data: zlib.compress(data)[2:-4]),  # raw deflate, as some servers send
    ],
)
def test_compressed_bodies_are_decoded(scripted, name, encode):
    server = scripted(
        lambda request: (reply(encode(BODY), headers=f"Content-Encoding: {name}\r\n"), False)
    )
    [answer] = post(server.url)
    assert answer.content == BODY


def test_100_continue_is_skipped(scripted):
    early = b"HTTP/1.1 100 Continue\r\n\r\n"
    server = scripted(
        lambda request: (
            early + reply(status="429 Too Many Requests", headers="Retry-After: 3\r\n"),
            False,
        )
    )
    answers = post(server.url, count=2)
    assert [a.status_code for a in answers] == [429, 429]
    assert answers[0].reason_phrase == "Too Many Requests"
    assert answers[0].headers["retry-after"] == "3" and server.connections == 1


@pytest.mark.parametrize(
    "interim",
    [
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n",
        b"HTTP/1.1 102 Processing\r\n\r\n",
        b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n",
    ],
)
def test_any_other_interim_answer_is_a_protocol_error(scripted, interim):
    # The 200 behind it must never become the next request's answer: the connection is closed.
    server = scripted(lambda request: (interim + reply(), False))
    status = interim.split()[1].decode()
    with pytest.raises(
        httpx.RemoteProtocolError,
        match=f"the server answered {status} .*an interim response this client never asks for",
    ):
        post(server.url)


async def _posts(url: str, count: int, pause: float, blocking: bool) -> list[bytes]:
    """``count`` posts on one connection with a pause between them: ``asyncio.sleep`` lets the
    event loop read what arrives meanwhile, ``time.sleep`` leaves it in the kernel."""
    import time

    connection = Connection(url, {}, None)
    try:
        answers = []
        for k in range(count):
            if k:
                time.sleep(pause) if blocking else await asyncio.sleep(pause)
            answers.append(
                (await connection.post("/chat/completions", b'{"n": %d}' % k, 5.0)).content
            )
        return answers
    finally:
        connection.close()


@pytest.mark.parametrize("blocking", [False, True], ids=["read-by-the-loop", "left-in-the-kernel"])
def test_a_connection_that_received_bytes_while_idle_is_not_reused(scripted, blocking):
    # The stray answer arrives after the client took its answer: it must not answer the next.
    def script(request: bytes):
        n = json.loads(request.partition(b"\r\n\r\n")[2])["n"]

        def pieces():
            yield reply(b'{"n": %d}' % n)
            import time

            time.sleep(0.05)
            yield reply(b'{"stray": %d}' % n)

        return pieces(), False

    server = scripted(script)
    answers = asyncio.run(_posts(server.url, 3, 0.3, blocking))
    assert answers == [b'{"n": 0}', b'{"n": 1}', b'{"n": 2}']
    assert server.connections == 3


def test_a_connection_closed_while_idle_is_opened_again(scripted):
    server = scripted(lambda request: (reply(), True))  # closes after each answer, unannounced
    assert asyncio.run(_posts(server.url, 3, 0.1, False)) == [BODY] * 3
    assert server.connections == 3


def test_two_responses_to_one_request_are_refused(scripted):
    server = scripted(lambda request: (reply() + reply(b'{"stray": 1}'), False))
    with pytest.raises(
        httpx.RemoteProtocolError,
        match=r"the server sent more after the complete response: two answers to one request",
    ):
        post(server.url)


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ("Transfer-Encoding: xchunked\r\n", "Only Transfer-Encoding: chunked is supported"),
        ("Transfer-Encoding: gzip, chunked\r\n", "Only Transfer-Encoding: chunked is supported"),
        (
            "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n",
            # llhttp's words, which differ between its versions; still refused
            "(Transfer-Encoding|Content-Length) can't be present with "
            "(Content-Length|Transfer-Encoding)",
        ),
        ("Content-Length: 3\r\nContent-Length: 4\r\n", "Duplicate Content-Length"),
        ("Content-Encoding: br\r\n", "unsupported content-encoding 'br'"),
    ],
)
def test_framing_a_strict_parser_refuses(scripted, headers, message):
    server = scripted(
        lambda request: (reply(b"2\r\nok\r\n0\r\n\r\n", headers=headers, length=False), False)
    )
    with pytest.raises(httpx.RemoteProtocolError, match=message):
        post(server.url)


@pytest.mark.parametrize(
    ("name", "damage", "message"),
    [
        ("gzip", lambda data: data[:-12], "ends before its compressed stream does"),
        ("gzip", lambda data: data + b"junk", "4 bytes follow the end of the gzip body"),
        ("gzip", lambda data: b"not gzip at all", "malformed response body: Error -3"),
    ],
)
def test_a_damaged_compressed_body_is_a_protocol_error(scripted, name, damage, message):
    server = scripted(
        lambda request: (
            reply(damage(gzip.compress(BODY * 50)), headers=f"Content-Encoding: {name}\r\n"),
            False,
        )
    )
    with pytest.raises(httpx.RemoteProtocolError, match=message):
        post(server.url)


@pytest.mark.parametrize(
    "garbage",
    [
        b"SMTP ready\r\n\r\n",
        b"HTTP/1.1 2x0 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
    ],
)
def test_a_malformed_answer_is_a_protocol_error_and_retried(scripted, garbage):
    sent = []

    def script(request: bytes) -> tuple[bytes, bool]:
        sent.append(request)
        broken = len(sent) <= 2  # the direct post below, then the pipe's first try
        return (garbage if broken else reply()), broken

    server = scripted(script)
    with pytest.raises(httpx.RemoteProtocolError):
        post(server.url)
    [(_, answer)] = ask(
        [Call("/chat/completions", {})], [server.url], policy=RetryPolicy(attempts=2, backoff=0.0)
    )
    assert answer == json.loads(BODY) and len(sent) == 3


def test_an_answer_cut_short_is_a_protocol_error(scripted):
    server = scripted(lambda request: (reply()[:-5], True))
    with pytest.raises(
        httpx.RemoteProtocolError,
        match=r"peer closed connection without sending "
        r"complete message body \(received 41 bytes, expected 46\)",
    ):
        post(server.url)


def test_a_header_http_cannot_carry_is_refused_without_showing_it(scripted):
    server = scripted(lambda request: (reply(), False))
    secret = "sk-secret\r\nX-Injected: 1"
    [(_, answer)] = ask(
        [Call("/chat/completions", {})],
        [server.url],
        headers={"Authorization": secret},
        policy=RetryPolicy(attempts=3),
    )
    assert isinstance(answer, ModelCallError)
    assert "Authorization header holds a character that HTTP cannot carry" in str(answer)
    assert "sk-secret" not in str(answer) and server.requests == []


@pytest.mark.parametrize("name", ["X Key", "X-Key:", "X-K\u00e9y", ""])
def test_a_header_name_that_is_not_a_token_is_refused(scripted, name):
    server = scripted(lambda request: (reply(), False))
    with pytest.raises(httpx.LocalProtocolError, match="is not an HTTP token"):
        post(server.url, headers={name: "v"})
    assert server.requests == []


@pytest.fixture
def uvloop_policy():
    """uvloop's event loop policy for the test, as ``uvloop.install()`` sets it for a process."""
    uvloop = pytest.importorskip("uvloop")
    before = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    try:
        yield uvloop
    finally:
        asyncio.set_event_loop_policy(before)


def test_the_wire_runs_on_the_event_loop_the_policy_gives(scripted, uvloop_policy):
    # A process that installed uvloop (common beside uvicorn) gives every asyncio.run a uvloop
    # loop, whose transports are not asyncio.Transport subclasses.
    server = scripted(lambda request: (reply(), False))
    loops = []

    async def probe() -> None:
        loops.append(type(asyncio.get_running_loop()).__module__)

    asyncio.run(probe())
    answers = ask(
        [Call("/chat/completions", {"n": k}) for k in range(8)], [server.url], concurrency=4
    )
    assert loops[0].startswith("uvloop")
    assert [answer for _, answer in sorted(answers)] == [json.loads(BODY)] * 8
    assert server.connections == 4


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1: (certificate file, key file)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("needs the openssl command to make a certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def test_https_checks_the_certificate(scripted, certificate):
    cert, key = certificate
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    server = scripted(lambda request: (reply(), False), tls)
    trusting = ssl.create_default_context(cafile=str(cert))
    assert [a.content for a in post(server.url, count=2, tls=trusting)] == [BODY, BODY]
    assert server.connections == 1
    # httpx's default trust (certifi's roots) does not know a self-signed certificate.
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        post(server.url, tls=httpx.create_ssl_context())


def test_proxies_are_taken_from_the_environment(monkeypatch):
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
    assert not proxied("http://gpu1:8000/v1")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    assert proxied("https://api.example.com/v1") and not proxied("http://gpu1:8000/v1")
    monkeypatch.setenv("NO_PROXY", "api.example.com")
    assert not proxied("https://api.example.com/v1")
