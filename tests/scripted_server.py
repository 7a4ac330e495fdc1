"""A loopback TCP server that answers each HTTP request with exactly the bytes a test scripts.

``tests/fake_server.py`` speaks HTTP through ``http.server`` and cannot misbehave below it; this
one writes whatever the script returns — two responses to one request, a ``101``, bad framing, a
gzip bomb, headers one byte at a time — so the client's parser and its connection rules can be
checked against it. A script gets the request's bytes and returns ``(answer, close)``: the
answer as bytes or as an iterable of byte pieces (sent one by one, so a generator can pause
between them), and whether to close the connection after it.

:func:`tag` is what a well-behaved answer says: a hash of the prompt it answers, so a test can
check that every record holds its own prompt's answer and no other.
"""

from __future__ import annotations

import hashlib
import json
import socket
import ssl
import threading
from collections.abc import Callable, Iterable, Iterator

import pytest

__all__ = ["Script", "ScriptedServer", "answer_body", "reply", "scripted", "tag", "prompt_of"]

Answer = bytes | Iterable[bytes]
#: What the server does with a request: the bytes to send back, and whether to close after them.
Script = Callable[[bytes], tuple[Answer, bool]]


def tag(text: str) -> str:
    """The answer the server gives to a prompt: a hash of the prompt's text."""
    return "tag-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def prompt_of(request: bytes) -> str:
    """The user text of a chat request (the prompt text of a completions request)."""
    body = json.loads(request.partition(b"\r\n\r\n")[2])
    if "messages" in body:
        return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    return str(body.get("prompt", ""))


def answer_body(request: bytes, pad: int = 0) -> bytes:
    """A chat completion whose answer is the tag of the request's prompt (``pad`` bytes more)."""
    answer = {
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": tag(prompt_of(request))}}
        ]
    }
    if pad:
        answer["pad"] = "." * pad
    return json.dumps(answer).encode()


def reply(body: bytes, *, status: str = "200 OK", headers: str = "", length: bool = True) -> bytes:
    """A response with ``Content-Length`` framing (or none, with ``length=False``)."""
    framing = f"Content-Length: {len(body)}\r\n" if length else ""
    return f"HTTP/1.1 {status}\r\n{framing}{headers}\r\n".encode() + body


class ScriptedServer:
    """A one-thread-per-connection TCP server that records the requests it reads."""

    def __init__(self, script: Script, tls: ssl.SSLContext | None = None) -> None:
        self.script, self.tls = script, tls
        self.requests: list[bytes] = []
        self.connections = 0
        self.lock = threading.Lock()
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=128)
        self.port = self.sock.getsockname()[1]
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}/v1"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
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
            try:
                self._converse(conn)
            except OSError:  # the client closed first (e.g. it stopped reading a huge body)
                pass

    def _converse(self, conn: socket.socket) -> None:
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
            with self.lock:
                self.requests.append(request)
            answer, close = self.script(request)
            for piece in [answer] if isinstance(answer, bytes) else answer:
                conn.sendall(piece)
            if close:
                return

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def scripted() -> Iterator[Callable[..., ScriptedServer]]:
    """``scripted(script, tls=None)``: a started :class:`ScriptedServer`, closed after the test."""
    servers: list[ScriptedServer] = []

    def start(script: Script, tls: ssl.SSLContext | None = None) -> ScriptedServer:
        servers.append(ScriptedServer(script, tls))
        return servers[-1]

    yield start
    for server in servers:
        server.close()
