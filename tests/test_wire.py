"""The HTTP/1.1 connection under the ``openai:`` backend, against a server that answers byte by byte
what each test scripts: framings (length, chunked, until close), encodings, interim answers,
connections the server closes, and malformed answers. ``tests/test_http.py`` runs the whole
backend against the fake OpenAI server; this file checks the wire on its own."""

from __future__ import annotations

import asyncio
import gzip
import json
import shutil
import socket
import ssl
import subprocess
import threading
import zlib
from collections.abc import Callable, Iterator

import httpx
import pytest

from pytest_competence.models._transport import Call, ModelCallError, RetryPolicy, post_all
from pytest_competence.models._wire import Connection, proxied

BODY = json.dumps({"choices": [{"message": {"content": "yes"}}]}).encode()

#: What the server does with a request: the bytes to send back, and whether to close after them.
Script = Callable[[bytes], tuple[bytes, bool]]


class ScriptedServer:
    """A one-thread-per-connection TCP server that records the requests it reads."""

    def __init__(self, script: Script, tls: ssl.SSLContext | None = None) -> None:
        self.script, self.tls = script, tls
        self.requests: list[bytes] = []
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}/v1"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        if self.tls:
            try:
                conn = self.tls.wrap_socket(conn, server_side=True)
            except (ssl.SSLError, OSError):  # a client that does not trust the certificate
                conn.close()
                return
        with conn:
            buffer = b""
            while True:
                while b"\r\n\r\n" not in buffer:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buffer += data
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                while len(buffer) < length:
                    buffer += conn.recv(65536)
                request, buffer = head + b"\r\n\r\n" + buffer[:length], buffer[length:]
                self.requests.append(request)
                answer, close = self.script(request)
                conn.sendall(answer)
                if close:
                    return

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def scripted() -> Iterator[Callable[..., ScriptedServer]]:
    servers: list[ScriptedServer] = []

    def start(script: Script, tls: ssl.SSLContext | None = None) -> ScriptedServer:
        servers.append(ScriptedServer(script, tls))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def reply(
    body: bytes = BODY, *, status: str = "200 OK", headers: str = "", length: bool = True
) -> bytes:
    framing = f"Content-Length: {len(body)}\r\n" if length else ""
    return f"HTTP/1.1 {status}\r\n{framing}{headers}\r\n".encode() + body


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


def test_interim_answers_are_skipped(scripted):
    early = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"
    server = scripted(
        lambda request: (
            early + reply(status="429 Too Many Requests", headers="Retry-After: 3\r\n"),
            False,
        )
    )
    [answer] = post(server.url)
    assert answer.status_code == 429 and answer.reason_phrase == "Too Many Requests"
    assert answer.headers["retry-after"] == "3"


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
        broken = len(sent) <= 2  # the direct post below, then the first try of post_all
        return (garbage if broken else reply()), broken

    server = scripted(script)
    with pytest.raises(httpx.RemoteProtocolError):
        post(server.url)
    [(_, answer)] = post_all(
        [Call("/chat/completions", {})],
        lambda data: data,
        urls=[server.url],
        headers={},
        concurrency=1,
        timeout=5.0,
        policy=RetryPolicy(attempts=2, backoff=0.0),
    )
    assert answer == json.loads(BODY) and len(sent) == 3


def test_an_answer_cut_short_is_a_protocol_error(scripted):
    server = scripted(lambda request: (reply()[:-5], True))
    with pytest.raises(httpx.RemoteProtocolError, match="Server disconnected"):
        post(server.url)


def test_a_header_http_cannot_carry_is_refused_without_showing_it(scripted):
    server = scripted(lambda request: (reply(), False))
    secret = "sk-secret\r\nX-Injected: 1"
    [(_, answer)] = post_all(
        [Call("/chat/completions", {})],
        lambda data: data,
        urls=[server.url],
        headers={"Authorization": secret},
        concurrency=1,
        timeout=5.0,
        policy=RetryPolicy(attempts=3),
    )
    assert isinstance(answer, ModelCallError)
    assert "Authorization header holds a character that HTTP cannot carry" in str(answer)
    assert "sk-secret" not in str(answer) and server.requests == []


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
