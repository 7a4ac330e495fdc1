"""Throughput of the OpenAI-compatible HTTP backend against a local server with fixed latency.

The server (``tests/fake_server.py``, its own process on 127.0.0.1) holds every request for
``--latency`` seconds and then answers; with ``--concurrency`` requests in flight the ideal rate is
concurrency / latency (32 / 0.05 s = 640 requests/s). The figure is the measured rate as a share of
that ideal (target ≥ 0.85): what the client loses to its own overhead. Prints figures, asserts
nothing:

    python bench/bench_http.py [--latency 0.05] [--concurrency 32] [--requests 3200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from _machine import describe

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fake_server import FakeServer, answer_for  # noqa: E402

from pytest_competence.models import resolve_model  # noqa: E402
from pytest_competence.strategies import Ordering  # noqa: E402

TARGET = 0.85


def prompts(count: int) -> list:
    """``count`` distinct small ordering prompts (n = 4 and 8), as a suite would send them."""
    family = Ordering(vocabulary="front_behind")
    pairs = -(-count // 4) * 4  # whole cells of four; two presentations per instance
    items = family.design(levels=[4, 8], pairs=pairs // 4 * 4, seed=1,
                          presentations=["original", "equivalent"])
    return [p for item in items for p in item.prompts][:count]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux ``/proc``; 0 elsewhere)."""
    import os

    stat = Path(f"/proc/{pid}/stat")
    if not stat.exists():
        return 0.0
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=0.05, help="Server latency, seconds")
    parser.add_argument("--concurrency", type=int, default=32, help="Requests in flight")
    parser.add_argument("--requests", type=int, default=3200, help="Requests per run")
    parser.add_argument("--repeat", type=int, default=3, help="Timed runs after a warm-up")
    args = parser.parse_args()

    import httpx

    print(describe(f"httpx {httpx.__version__}"))
    batch = prompts(args.requests)
    expected = [answer_for(p.text) for p in batch]
    ideal = args.concurrency / args.latency
    server = FakeServer(latency=args.latency)
    try:
        spec = f"openai:bench@{server.url}?concurrency={args.concurrency}"
        model = resolve_model(spec)
        model.generate(batch[: args.concurrency * 2])  # warm-up: imports, first connections
        rates, cpu, server_cpu = [], [], []
        for _ in range(max(1, args.repeat)):
            wall, used = time.perf_counter(), time.process_time()
            served = cpu_seconds(server.proc.pid)
            answers = model.generate(batch)
            wall, used = time.perf_counter() - wall, time.process_time() - used
            server_cpu.append((cpu_seconds(server.proc.pid) - served) / len(batch) * 1e3)
            if answers != expected:
                wrong = sum(a != e for a, e in zip(answers, expected))
                raise SystemExit(f"{wrong} of {len(batch)} answers differ from the server's")
            rates.append(len(batch) / wall)
            cpu.append(used / len(batch) * 1e3)
    finally:
        server.close()
    print(f"{len(batch)} requests per run, latency {args.latency * 1e3:g} ms, concurrency "
          f"{args.concurrency}: ideal {ideal:,.0f} requests/s")
    print(f"{'':8}{'req/s':>9}{'x ideal':>9}")
    for label, pick in (("best", max), ("median", statistics.median)):
        rate = pick(rates)
        print(f"{label:8}{rate:9,.0f}{rate / ideal:9.3f}")
    print(f"cpu per request (median): client {statistics.median(cpu):.3f} ms, server "
          f"{statistics.median(server_cpu):.3f} ms")
    print(f"({len(rates)} runs; target {TARGET:g} x ideal)")


if __name__ == "__main__":
    main()
