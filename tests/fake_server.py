"""A small OpenAI-compatible server for the tests and benchmarks, with faults on demand.

Run as a process (the tests and ``bench/bench_http.py`` do, through :class:`FakeServer`)::

    python tests/fake_server.py [--ports N] [--latency SECONDS]

It listens on 127.0.0.1 only, prints ``PORTS p1 p2 …`` and serves until its standard input
closes (so it never outlives the test session that started it). ``/v1/chat/completions`` and
``/v1/completions`` answer with the ideal reference policy applied to the prompt text — a
deterministic, correct answerer — and report logprobs on request. Control endpoints:

- ``POST /control`` ``{"latency": s, "faults": [{"kind": K, "share": f, "times": n, …}]}``:
  a request whose body hashes into a fault's share of ``[0, 1)`` gets that fault on its first
  ``times`` sends (identical bodies count together). Kinds: ``429`` (``retry_after``), ``408``,
  ``500``, ``503``, ``400`` (the body echoes the request headers, Authorization included; with
  ``pad``, a plain-text body of ``pad`` dots, the Authorization value, and 400 dots),
  ``timeout`` (answers only after ``sleep`` seconds), ``drop`` (closes the connection unanswered),
  ``malformed`` (a 200 with a truncated JSON body), ``notext`` (a 200 with a null message),
  ``nologprobs`` (the answer without the logprobs asked for, as ``transformers serve`` replies).
- ``POST /reset`` clears the request log and the per-body send counts.
- ``GET /log`` returns the request log: per request, time, port, path, body hash ``key``, the send
  number ``n`` of that body, what was done (``ok`` or the fault) and the SHA-256 of the
  ``Authorization`` header (never the header itself), the requests in flight on arrival
  (``inflight``), the client's port (one per connection), the body's ``seed`` and, once it was
  answered, when (``end``).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import math
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeServer", "answer_for", "logprob_of_answer"]


@functools.lru_cache(maxsize=4096)
def answer_for(text: str) -> str:
    """What the server answers to a prompt text: the ideal reference policy's answer.

    Remembered for the last 4,096 texts: reading a prompt costs the policy ~0.16 ms, and a
    benchmark sends the same prompts round after round — the server is the instrument there,
    and what it spends comes out of the clients' CPU on a small machine.
    """
    return _ideal()(text)


@functools.cache
def _ideal() -> Any:
    # Looking a policy up rebuilds the policy table from every family (~0.09 ms): do it once.
    from pytest_competence.models.reference import POLICIES

    return POLICIES["ideal"]()


def logprob_of_answer(text: str) -> float:
    """log p of the server's answer in its reported logprobs; the other answer gets log(1 − p)."""
    u = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64
    return math.log(0.6 + 0.39 * u)


class _State:
    def __init__(self, latency: float) -> None:
        self.lock = threading.Lock()
        self.config: dict[str, Any] = {"latency": latency, "faults": []}
        self.counts: dict[str, int] = {}
        self.log: list[dict[str, Any]] = []
        self.inflight = 0
        self.epoch = 0  # bumped by /reset: requests left over from before no longer count

    def fault(self, key: str, n: int) -> dict[str, Any] | None:
        u = int(key[:16], 16) / 16**16
        edge = 0.0
        for fault in self.config["faults"]:
            edge += float(fault.get("share", 1.0))
            if u < edge:
                return fault if n <= int(fault.get("times", 1)) else None
        return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Like any real server: without it, headers and body leave in two segments and Nagle's
    # algorithm waits for the client's delayed ACK (40 ms) before sending the body.
    disable_nagle_algorithm = True
    state: _State

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the log endpoint tells all
        pass

    def _settle(self) -> None:
        """This request is no longer in flight: called before its answer goes out (a client may
        send its next request the moment it has the answer)."""
        if getattr(self, "_counted", False):
            self._counted = False
            with self.state.lock:
                self._entry["end"] = time.time()
                if self._epoch == self.state.epoch:
                    self.state.inflight -= 1

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        self._settle()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(payload)
        except OSError:  # the client gave up (a timeout test): nothing to tell it
            self.close_connection = True

    def do_GET(self) -> None:
        if self.path == "/log":
            with self.state.lock:
                payload = json.dumps(self.state.log).encode()
            self._send(200, payload)
        else:
            self._send(404, b'{"error": "not found"}')

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/control":
            with self.state.lock:
                self.state.config.update(json.loads(raw))
            self._send(200, b"{}")
        elif self.path == "/reset":
            with self.state.lock:
                self.state.counts.clear()
                self.state.log.clear()
                self.state.inflight = 0
                self.state.epoch += 1
            self._send(200, b"{}")
        elif self.path.endswith(("/chat/completions", "/completions")):
            self._complete(json.loads(raw))
        else:
            self._send(404, b'{"error": "not found"}')

    def _complete(self, body: dict[str, Any]) -> None:
        key = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        auth = self.headers.get("Authorization")
        with self.state.lock:
            n = self.state.counts[key] = self.state.counts.get(key, 0) + 1
            fault = self.state.fault(key, n)
            latency = float(self.state.config.get("latency", 0.0))
            self.state.inflight += 1
            self._counted, self._epoch = True, self.state.epoch
            kind = str(fault["kind"]) if fault else "ok"
            self._entry = {
                "t": time.time(),
                "port": self.server.server_address[1],
                "path": self.path,
                "key": key,
                "n": n,
                "did": kind,
                "inflight": self.state.inflight,
                "client_port": self.client_address[1],
                "seed": body.get("seed"),
                "auth_sha256": hashlib.sha256(auth.encode()).hexdigest() if auth else None,
            }
            self.state.log.append(self._entry)
        try:
            self._reply(kind, fault, body, latency)
        finally:
            self._settle()

    def _reply(
        self, kind: str, fault: dict[str, Any] | None, body: dict[str, Any], latency: float
    ) -> None:
        if latency:
            time.sleep(latency)
        fault = fault or {}
        if kind in ("408", "429", "500", "503"):
            headers = {"Retry-After": str(fault["retry_after"])} if "retry_after" in fault else {}
            self._send(
                int(kind), json.dumps({"error": {"message": f"injected {kind}"}}).encode(), headers
            )
        elif kind == "400" and "pad" in fault:
            # The Authorization value at a chosen offset of a plain-text body (`pad` dots before).
            auth = self.headers.get("Authorization") or ""
            self._send(400, ("." * int(fault["pad"]) + auth + "." * 400).encode())
        elif kind == "400":
            echo = {"error": {"message": "bad request", "headers": dict(self.headers.items())}}
            self._send(400, json.dumps(echo).encode())
        elif kind == "drop":
            self.close_connection = True
            self._settle()
            self.connection.shutdown(socket.SHUT_RDWR)
        elif kind == "malformed":
            self._send(200, b'{"choices": [{"message": {"content": "ye')
        elif kind == "notext":
            message = {"role": "assistant", "content": None}
            self._send(
                200,
                json.dumps(
                    {"choices": [{"index": 0, "message": message, "finish_reason": "length"}]}
                ).encode(),
            )
        elif kind == "nologprobs":
            plain = {k: v for k, v in body.items() if k not in ("logprobs", "top_logprobs", "echo")}
            self._send(200, json.dumps(_response(self.path, plain)).encode())
        else:
            if kind == "timeout":
                time.sleep(float(fault.get("sleep", 5.0)))
            self._send(200, json.dumps(_response(self.path, body)).encode())


def _response(path: str, body: dict[str, Any]) -> dict[str, Any]:
    if path.endswith("/chat/completions"):
        text = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
        answer = answer_for(text)
        choice: dict[str, Any] = {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": answer},
        }
        if body.get("logprobs"):
            lp = logprob_of_answer(text)
            other = {"yes": "no", "no": "yes"}.get(answer, "maybe")
            tops = [
                {"token": answer, "logprob": lp},
                {"token": other.capitalize(), "logprob": math.log1p(-math.exp(lp))},
            ]
            first = {
                "token": answer,
                "logprob": lp,
                "top_logprobs": tops[: body.get("top_logprobs", 2)],
            }
            choice["logprobs"] = {"content": [first]}
        return {"object": "chat.completion", "model": body.get("model"), "choices": [choice]}
    prompt = body["prompt"]
    if not body.get("echo"):
        answer = answer_for(prompt)
        choice = {"index": 0, "text": answer, "finish_reason": "stop", "logprobs": None}
        return {"object": "text_completion", "model": body.get("model"), "choices": [choice]}
    # Echo: every whitespace-led word of the prompt is a token; the last one is the candidate.
    tokens = re.findall(r"\s*\S+", prompt)
    offsets = [m.start() for m in re.finditer(r"\s*\S+", prompt)]
    head = prompt[: offsets[-1]]
    lp = logprob_of_answer(head)
    last = lp if tokens[-1].strip() == answer_for(head) else math.log1p(-math.exp(lp))
    values = [None] + [-1.0] * (len(tokens) - 2) + [last]
    generated = "\n"
    logprobs = {
        "tokens": [*tokens, generated],
        "token_logprobs": [*values, -0.5],
        "text_offset": [*offsets, len(prompt)],
    }
    return {
        "object": "text_completion",
        "model": body.get("model"),
        "choices": [
            {
                "index": 0,
                "text": prompt + generated,
                "finish_reason": "length",
                "logprobs": logprobs,
            }
        ],
    }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # the default 5 turns a burst of 32 connects into SYN retries


class FakeServer:
    """The server as a child process, with helpers to steer it and read its log."""

    def __init__(self, ports: int = 1, latency: float = 0.0) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                os.path.abspath(__file__),
                "--ports",
                str(ports),
                "--latency",
                str(latency),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line.startswith("PORTS "):
            self.close()
            raise RuntimeError(f"the fake server did not start: {line!r}")
        self.ports = [int(p) for p in line.split()[1:]]
        self.url = f"http://127.0.0.1:{self.ports[0]}/v1"
        self.urls = [f"http://127.0.0.1:{p}/v1" for p in self.ports]

    def _post(self, path: str, payload: dict[str, Any]) -> None:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.ports[0]}{path}",
            data=json.dumps(payload).encode(),
            method="POST",
        )
        urllib.request.urlopen(request, timeout=10).read()

    def control(self, latency: float = 0.0, faults: list[dict[str, Any]] | None = None) -> None:
        """Set the latency and the faults (replacing the previous ones)."""
        self._post("/control", {"latency": latency, "faults": faults or []})

    def reset(self) -> None:
        """Forget the request log and the send counts."""
        self._post("/reset", {})

    def log(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ports[0]}/log", timeout=10) as r:
            return json.loads(r.read())

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


MAX_PORTS = 64  # replicas one fake server starts at most


def main() -> None:
    # No abbreviations: "--port 34051" must not pass for "--ports 34051" (34,051 replicas).
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    parser.add_argument(
        "--ports", type=int, default=1, help=f"Listening ports (replicas), 1 to {MAX_PORTS}"
    )
    parser.add_argument("--latency", type=float, default=0.0, help="Seconds before each answer")
    args = parser.parse_args()
    if not 1 <= args.ports <= MAX_PORTS:
        parser.error(
            f"--ports is how many replicas to start (each picks a free port itself), 1 to "
            f"{MAX_PORTS}, got {args.ports}"
        )
    state = _State(args.latency)
    handler = type("Handler", (_Handler,), {"state": state})
    servers = []
    for _ in range(args.ports):
        server = _Server(("127.0.0.1", 0), handler)
        servers.append(server)
        threading.Thread(target=server.serve_forever, daemon=True).start()
    print("PORTS " + " ".join(str(s.server_address[1]) for s in servers), flush=True)
    sys.stdin.read()  # until the parent closes our stdin, or dies
    os._exit(0)


if __name__ == "__main__":
    main()
