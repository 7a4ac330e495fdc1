"""Throughput and client CPU of the OpenAI-compatible HTTP backend, side by side with other clients.

The server (``tests/fake_server.py``, its own process on 127.0.0.1, so its CPU is not counted)
holds every request for ``--latency`` seconds and then answers; with C requests in flight the
ideal rate is C / latency (32 / 0.05 s = 640 requests/s). At each concurrency the same prompts go,
in the same run, through:

- ``competence``: this plugin's ``openai:`` model (``model.generate``);
- ``httpx``: the leanest httpx client found — one ``AsyncClient`` per worker (httpcore's shared
  pool searches every connection for every waiting request), the body serialised in advance —
  i.e. httpx's own floor;
- ``lm-eval``: lm-eval's ``local-chat-completions`` client (aiohttp), in a subprocess of the
  Python named by ``COMPETENCE_BENCH_LMEVAL_PYTHON`` (or this one, if it has ``lm_eval``).

Client CPU per request = the client process's CPU time over the run / requests. Targets (issue
16): at C=32 ≥ 0.9 × ideal, ≥ lm-eval's rate, ≤ 0.5 ms of client CPU per request. Prints figures,
asserts nothing:

    python bench/bench_http.py [--latency 0.05] [--concurrency 32 128] [--requests 3200] [--repeat 3]
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
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
TARGET_RATE, TARGET_CPU_MS = 0.9, 0.5
LMEVAL_ENV = "COMPETENCE_BENCH_LMEVAL_PYTHON"


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux ``/proc``; 0 elsewhere)."""
    stat = Path(f"/proc/{pid}/stat")
    if not stat.exists():
        return 0.0
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(run: Any) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of this process, result) of ``run()``."""
    wall, used = time.perf_counter(), time.process_time()
    got = run()
    return time.perf_counter() - wall, time.process_time() - used, got


# -- the clients --------------------------------------------------------------------------------


def httpx_floor(url: str, bodies: list[bytes], concurrency: int) -> list[str]:
    """Answers through plain httpx, each worker with its own ``AsyncClient`` (kept alive)."""
    import httpx

    answers: list[str] = [""] * len(bodies)
    todo = iter(range(len(bodies)))

    async def worker() -> None:
        async with httpx.AsyncClient(timeout=60) as client:
            for i in todo:
                r = await client.post(
                    url, content=bodies[i], headers={"Content-Type": "application/json"}
                )
                answers[i] = r.json()["choices"][0]["message"]["content"]

    async def main() -> None:
        await asyncio.gather(*(worker() for _ in range(concurrency)))

    asyncio.run(main())
    return answers


def lmeval_client(args: argparse.Namespace) -> None:
    """Run in lm-eval's Python: time ``LocalChatCompletion.generate_until`` and print JSON lines."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.api_models import JsonChatStr
    from lm_eval.models.openai_completions import LocalChatCompletion

    chats = json.loads(Path(args.lmeval_client).read_text())
    lm = LocalChatCompletion(
        model="bench",
        base_url=args.url,
        num_concurrent=args.concurrency[0],
        max_retries=3,
        tokenized_requests=False,
        max_gen_toks=16,
    )

    def requests(count: int) -> list[Any]:
        return [
            Instance(
                request_type="generate_until",
                doc={},
                idx=i,
                arguments=(JsonChatStr(json.dumps(chat)), {"until": ["\n\n"]}),
            )
            for i, chat in enumerate(chats[:count])
        ]

    lm.generate_until(requests(args.concurrency[0] * 2), disable_tqdm=True)  # warm-up
    for _ in range(args.repeat):
        batch = requests(len(chats))
        wall, used, answers = timed(lambda: lm.generate_until(batch, disable_tqdm=True))
        print(json.dumps({"wall": wall, "cpu": used, "answers": answers}), flush=True)


def lmeval_python() -> str | None:
    """The interpreter that has lm-eval, or None."""
    named = os.environ.get(LMEVAL_ENV)
    if named:
        return named
    return sys.executable if importlib.util.find_spec("lm_eval") else None


# -- the bench ----------------------------------------------------------------------------------


class Tally:
    """Rates and CPU per request of one client at one concurrency."""

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
    parser.add_argument("--repeat", type=int, default=3, help="Timed runs after a warm-up")
    parser.add_argument("--lmeval-client", help=argparse.SUPPRESS)  # the subprocess's role
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.lmeval_client:
        lmeval_client(args)
        return

    sys.path[:0] = [str(HERE.parent), str(HERE.parents[1] / "tests")]
    import httpx
    from _machine import describe

    from fake_server import FakeServer, answer_for
    from pytest_competence.models import resolve_model
    from pytest_competence.strategies import Ordering

    print(describe(f"httpx {httpx.__version__}"))
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    family = Ordering(vocabulary="front_behind")
    pairs = -(-args.requests // 4) * 4
    items = family.design(
        levels=[4, 8], pairs=pairs, seed=1, presentations=["original", "equivalent"]
    )
    batch = [p for item in items for p in item.prompts][: args.requests]
    expected = [answer_for(p.text) for p in batch]
    chats = [
        [{"role": "system", "content": p.system}, {"role": "user", "content": p.text}]
        for p in batch
    ]
    bodies = [
        json.dumps({"model": "bench", "temperature": 0.0, "messages": c}).encode() for c in chats
    ]
    lm_python = lmeval_python()
    server = FakeServer(latency=args.latency)
    pid = server.proc.pid
    url = server.url + "/chat/completions"
    tallies: dict[tuple[int, str], Tally] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            chat_file = Path(tmp) / "chats.json"
            chat_file.write_text(json.dumps(chats))
            for c in args.concurrency:
                model = resolve_model(f"openai:bench@{server.url}?concurrency={c}")
                model.generate(batch[: c * 2])  # warm-up: imports, first connections
                httpx_floor(url, bodies[: c * 2], c)
                for name in ("competence", "httpx"):
                    tallies[c, name] = Tally()
                for _ in range(max(1, args.repeat)):
                    for name, run in (
                        ("competence", lambda: model.generate(batch)),
                        ("httpx", lambda: httpx_floor(url, bodies, c)),
                    ):
                        served = cpu_seconds(pid)
                        wall, used, answers = timed(run)
                        check(name, answers, expected)
                        tallies[c, name].add(len(batch), wall, used, cpu_seconds(pid) - served)
                if lm_python:
                    tallies[c, "lm-eval"] = run_lmeval(
                        lm_python, chat_file, server.url, c, args.repeat, expected, pid
                    )
    finally:
        server.close()
    report(args, tallies, lm_python)


def run_lmeval(
    python: str,
    chat_file: Path,
    base_url: str,
    concurrency: int,
    repeat: int,
    expected: list[str],
    pid: int,
) -> Tally:
    tally = Tally()
    proc = subprocess.Popen(
        [
            python,
            str(HERE),
            "--lmeval-client",
            str(chat_file),
            "--url",
            f"{base_url}/chat/completions",
            "--concurrency",
            str(concurrency),
            "--repeat",
            str(max(1, repeat)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    served = cpu_seconds(pid)
    for line in proc.stdout:
        run = json.loads(line)
        check("lm-eval", run["answers"], expected)
        tally.add(len(expected), run["wall"], run["cpu"], cpu_seconds(pid) - served)
        served = cpu_seconds(pid)
    if proc.wait() != 0:
        raise SystemExit(f"the lm-eval client failed:\n{proc.stderr.read() if proc.stderr else ''}")
    return tally


def report(
    args: argparse.Namespace, tallies: dict[tuple[int, str], Tally], lm_python: str | None
) -> None:
    print(
        f"{args.requests} requests per run, latency {args.latency * 1e3:g} ms, medians of "
        f"{args.repeat} runs after a warm-up; client CPU = the client process's CPU / requests"
    )
    print(
        f"{'C':>4} {'client':12}{'req/s':>8}{'x ideal':>9}{'client ms/req':>15}"
        f"{'server ms/req':>15}"
    )
    for c in args.concurrency:
        ideal = c / args.latency
        for name in ("competence", "httpx", "lm-eval"):
            tally = tallies.get((c, name))
            if tally is None:
                print(
                    f"{c:>4} {name:12}skipped: lm-eval not installed (set {LMEVAL_ENV} to a "
                    f"Python with lm-eval[api])"
                )
                continue
            print(
                f"{c:>4} {name:12}{tally.rate():8,.0f}{tally.rate() / ideal:9.3f}"
                f"{tally.cpu():15.3f}{statistics.median(tally.server_ms):15.3f}"
            )
        ours = tallies[c, "competence"]
        for other in ("httpx", "lm-eval"):
            if (c, other) in tallies:
                them = tallies[c, other]
                print(
                    f"{c:>4} competence / {other}: {ours.rate() / them.rate():.2f}x the rate, "
                    f"{ours.cpu() / them.cpu():.2f}x the client CPU per request"
                )
    print(
        f"targets at C=32: >= {TARGET_RATE:g} x ideal, >= lm-eval's rate, <= "
        f"{TARGET_CPU_MS:g} ms client CPU per request"
    )


if __name__ == "__main__":
    main()
