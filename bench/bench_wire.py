"""Throughput and client CPU of the OpenAI-compatible HTTP backend, side by side with other clients.

The server (``tests/fake_server.py``, its own process on 127.0.0.1, so its CPU is not counted)
holds every request for ``--latency`` seconds and then answers; with C requests in flight the
ideal rate is C / latency (32 / 0.05 s = 640 requests/s). Each client runs in a worker process
of its own, and the same prompts go through every client in interleaved rounds (round 1: each
client at each concurrency, then round 2, …), so a machine shared with other work loads them
alike; the figures are medians over the rounds:

- ``competence``: this plugin's ``openai:`` model (``model.generate``);
- ``baseline``: the same, from the pytest-competence installed for ``--baseline-python`` (e.g.
  another commit checked out in its own worktree and virtual environment): old against new;
- ``httpx``: the leanest httpx client found — one ``AsyncClient`` per worker (httpcore's shared
  pool searches every connection for every waiting request), the body serialised in advance —
  i.e. httpx's own floor;
- ``lm-eval``: lm-eval's ``local-chat-completions`` client (aiohttp), in the Python named by
  ``COMPETENCE_BENCH_LMEVAL_PYTHON`` (or this one, if it has ``lm_eval``).

Client CPU per request = the worker process's CPU time over the run (all its threads) /
requests. Targets (issues 16 and 29): at C=32 and C=128 ≥ 0.9 × ideal, ≤ 0.3 ms of client CPU
per request. Prints figures, asserts nothing (every answer is checked against the server's):

    python bench/bench_wire.py [--latency 0.05] [--concurrency 32 128] [--requests 3200]
                               [--rounds 5] [--baseline-python PYTHON]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
TARGET_RATE, TARGET_CPU_MS = 0.9, 0.3
LMEVAL_ENV = "COMPETENCE_BENCH_LMEVAL_PYTHON"


def design(requests: int) -> list[Any]:
    """The prompts every client sends: the same seeded ordering design in every process."""
    from pytest_competence.strategies import Ordering

    pairs = -(-requests // 4) * 4
    items = Ordering(vocabulary="front_behind").design(
        levels=[4, 8], pairs=pairs, seed=1, presentations=["original", "equivalent"]
    )
    return [p for item in items for p in item.prompts][:requests]


# -- the clients, each run in a worker process ------------------------------------------------------

#: ``client(url, prompts)(concurrency)(count)``: the answers to the first ``count`` prompts.
Client = Callable[[str, list[Any]], Callable[[int], Callable[[int], list[Any]]]]


def competence_client(url: str, batch: list[Any]) -> Callable[[int], Callable[[int], list[Any]]]:
    from pytest_competence.models import resolve_model

    def at(concurrency: int) -> Callable[[int], list[Any]]:
        model = resolve_model(f"openai:bench@{url}?concurrency={concurrency}")
        return lambda count: model.generate(batch[:count])

    return at


def httpx_client(url: str, batch: list[Any]) -> Callable[[int], Callable[[int], list[Any]]]:
    """Answers through plain httpx, each worker with its own ``AsyncClient`` (kept alive)."""
    import httpx

    bodies = [
        json.dumps(
            {
                "model": "bench",
                "temperature": 0.0,
                "messages": [
                    {"role": "system", "content": p.system},
                    {"role": "user", "content": p.text},
                ],
            }
        ).encode()
        for p in batch
    ]
    endpoint = url + "/chat/completions"

    def at(concurrency: int) -> Callable[[int], list[Any]]:
        def run(count: int) -> list[Any]:
            answers: list[Any] = [None] * count
            todo = iter(range(count))

            async def worker() -> None:
                async with httpx.AsyncClient(timeout=60) as client:
                    for i in todo:
                        r = await client.post(
                            endpoint,
                            content=bodies[i],
                            headers={"Content-Type": "application/json"},
                        )
                        answers[i] = r.json()["choices"][0]["message"]["content"]

            async def main() -> None:
                await asyncio.gather(*(worker() for _ in range(concurrency)))

            asyncio.run(main())
            return answers

        return run

    return at


def lmeval_client(url: str, batch: list[Any]) -> Callable[[int], Callable[[int], list[Any]]]:
    """lm-eval's ``LocalChatCompletion.generate_until`` on the same chats."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.api_models import JsonChatStr
    from lm_eval.models.openai_completions import LocalChatCompletion

    chats = [
        json.dumps([{"role": "system", "content": p.system}, {"role": "user", "content": p.text}])
        for p in batch
    ]

    def at(concurrency: int) -> Callable[[int], list[Any]]:
        lm = LocalChatCompletion(
            model="bench",
            base_url=url + "/chat/completions",
            num_concurrent=concurrency,
            max_retries=3,
            tokenized_requests=False,
            max_gen_toks=16,
        )

        def run(count: int) -> list[Any]:
            requests = [
                Instance(
                    request_type="generate_until",
                    doc={},
                    idx=i,
                    arguments=(JsonChatStr(chat), {"until": ["\n\n"]}),
                )
                for i, chat in enumerate(chats[:count])
            ]
            return list(lm.generate_until(requests, disable_tqdm=True))

        return run

    return at


CLIENTS: dict[str, Client] = {
    "competence": competence_client,
    "baseline": competence_client,
    "httpx": httpx_client,
    "lm-eval": lmeval_client,
}


def worker(kind: str, url: str, requests: int) -> None:
    """A client process: for each concurrency read on stdin, one timed run, as a JSON line.

    The first run at a concurrency is preceded by an untimed warm-up (imports, connections)."""
    batch = design(requests)
    at = CLIENTS[kind](url, batch)
    runs: dict[int, Callable[[int], list[Any]]] = {}
    if kind in ("competence", "baseline"):
        import pytest_competence

        version = f"pytest-competence from {Path(pytest_competence.__file__).parents[1]}"
    else:
        version = kind
    print(json.dumps({"ready": version}), flush=True)
    for line in sys.stdin:
        concurrency = int(line)
        if concurrency not in runs:
            runs[concurrency] = at(concurrency)
            runs[concurrency](2 * concurrency)  # warm-up
        wall, used = time.perf_counter(), time.process_time()
        answers = runs[concurrency](len(batch))
        wall, used = time.perf_counter() - wall, time.process_time() - used
        print(json.dumps({"wall": wall, "cpu": used, "answers": answers}), flush=True)


class Worker:
    """The parent's handle on one client process."""

    def __init__(self, kind: str, python: str, url: str, requests: int) -> None:
        self.kind = kind
        self.proc = subprocess.Popen(
            [python, str(HERE), "--worker", kind, "--url", url, "--requests", str(requests)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.version = self._read()["ready"]

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"the {self.kind} client stopped (exit {self.proc.wait()})")
        return json.loads(line)

    def run(self, concurrency: int) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{concurrency}\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


# -- the bench ------------------------------------------------------------------------------------


class Tally:
    """Rates and CPU per request of one client at one concurrency, one entry per round."""

    def __init__(self) -> None:
        self.rates: list[float] = []
        self.cpu_ms: list[float] = []
        self.server_ms: list[float] = []

    def add(self, count: int, wall: float, cpu: float, server: float) -> None:
        self.rates.append(count / wall)
        self.cpu_ms.append(cpu / count * 1e3)
        self.server_ms.append(server / count * 1e3)

    def rate(self) -> float:
        return statistics.median(self.rates)

    def cpu(self) -> float:
        return statistics.median(self.cpu_ms)


def check(name: str, answers: list[Any], expected: list[str]) -> None:
    if list(answers) != expected:
        wrong = sum(a != e for a, e in zip(answers, expected))
        raise SystemExit(f"{name}: {wrong} of {len(expected)} answers differ from the server's")


def lmeval_python() -> str | None:
    """The interpreter that has lm-eval, or None."""
    named = os.environ.get(LMEVAL_ENV)
    if named:
        return named
    return sys.executable if importlib.util.find_spec("lm_eval") else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=0.05, help="Server latency, seconds")
    parser.add_argument(
        "--concurrency",
        type=int,
        nargs="+",
        default=[32, 128],
        help="Requests in flight (one or more)",
    )
    parser.add_argument("--requests", type=int, default=3200, help="Requests per run")
    parser.add_argument("--rounds", type=int, default=5, help="Interleaved timed rounds")
    parser.add_argument(
        "--baseline-python",
        help="A Python with another pytest-competence "
        "installed, measured in the same rounds as 'baseline'",
    )
    parser.add_argument(
        "--clients",
        nargs="+",
        default=["competence", "baseline", "httpx", "lm-eval"],
        help="Which clients to run (those without their Python are skipped)",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # a client process's role
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.url, args.requests)
        return

    sys.path[:0] = [str(HERE.parent), str(HERE.parents[1] / "tests")]
    import httpx
    from _machine import cpu_seconds, describe

    from fake_server import FakeServer, answer_for

    print(describe(f"httpx {httpx.__version__}"))
    pythons = {
        "competence": sys.executable,
        "baseline": args.baseline_python,
        "httpx": sys.executable,
        "lm-eval": lmeval_python(),
    }
    kinds = [k for k in args.clients if pythons.get(k)]
    expected = [answer_for(p.text) for p in design(args.requests)]
    server = FakeServer(latency=args.latency)
    workers: dict[str, Worker] = {}
    tallies = {(c, k): Tally() for c in args.concurrency for k in kinds}
    loads = [os.getloadavg()[0]]
    try:
        for kind in kinds:
            workers[kind] = Worker(kind, pythons[kind] or "", server.url, args.requests)
            print(f"{kind}: {workers[kind].version}")
        for _ in range(max(1, args.rounds)):
            for c in args.concurrency:
                for kind in kinds:
                    served = cpu_seconds(server.proc.pid)
                    got = workers[kind].run(c)
                    check(kind, got["answers"], expected)
                    tallies[c, kind].add(
                        len(expected),
                        got["wall"],
                        got["cpu"],
                        cpu_seconds(server.proc.pid) - served,
                    )
            loads.append(os.getloadavg()[0])
    finally:
        for w in workers.values():
            w.close()
        server.close()
    report(args, tallies, kinds, loads)


def report(
    args: argparse.Namespace,
    tallies: dict[tuple[int, str], Tally],
    kinds: list[str],
    loads: list[float],
) -> None:
    print(
        f"{args.requests} requests per run, latency {args.latency * 1e3:g} ms, medians of "
        f"{args.rounds} interleaved rounds after a warm-up; client CPU = the client process's "
        f"CPU / requests; load average (1 min) {min(loads):.1f}-{max(loads):.1f} on "
        f"{os.cpu_count()} CPUs over the run"
    )
    print(
        f"{'C':>4} {'client':12}{'req/s':>8}{'x ideal':>9}{'client ms/req':>15}"
        f"{'server ms/req':>15}   per round: x ideal | client ms/req"
    )
    for c in args.concurrency:
        ideal = c / args.latency
        for name in ("competence", "baseline", "httpx", "lm-eval"):
            if name not in kinds:
                why = (
                    "--baseline-python not given"
                    if name == "baseline"
                    else f"lm-eval not installed (set {LMEVAL_ENV} to a Python with lm-eval[api])"
                    if name == "lm-eval"
                    else "not in --clients"
                )
                print(f"{c:>4} {name:12}skipped: {why}")
                continue
            t = tallies[c, name]
            rounds = " ".join(f"{r / ideal:.2f}" for r in t.rates)
            cpus = " ".join(f"{m:.3f}" for m in t.cpu_ms)
            print(
                f"{c:>4} {name:12}{t.rate():8,.0f}{t.rate() / ideal:9.3f}{t.cpu():15.3f}"
                f"{statistics.median(t.server_ms):15.3f}   {rounds} | {cpus}"
            )
        if "competence" not in kinds:
            continue
        ours = tallies[c, "competence"]
        for other in ("baseline", "httpx", "lm-eval"):
            if other in kinds:
                them = tallies[c, other]
                print(
                    f"{c:>4} competence / {other}: {ours.rate() / them.rate():.2f}x the rate, "
                    f"{ours.cpu() / them.cpu():.2f}x the client CPU per request"
                )
    print(
        f"targets at C=32 and C=128: >= {TARGET_RATE:g} x ideal, <= {TARGET_CPU_MS:g} ms "
        f"client CPU per request"
    )


if __name__ == "__main__":
    main()
