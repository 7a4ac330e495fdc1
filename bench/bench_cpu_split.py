"""Where the client's CPU goes: the pytest path and the Python API, split by thread.

The same 2,400 prompts as ``bench/bench_http.py`` (the two tests of
``examples/test_ordering_left_right.py``) go to the local fake server (its own process, holding
each request ``--latency`` seconds) from fresh processes in interleaved rounds: ``pytest`` as users
run it (``--competence-model='openai:m@URL?concurrency=C' --competence-report-only``, a fresh
response cache) and the Python API (``bench_http.py``'s ``api`` client). Each process records,
with ``time.thread_time``, the CPU of every thread it ran, by the thread's name — the main thread
(start-up, reduction, verdicts), ``competence-pipe`` (the request stream's event loop: HTTP),
``competence-ahead`` (the lookahead's design generation), ``competence-ask`` (the threads that
wait on the stream: the response cache, parsing) — the main thread's CPU until the first test's
setup (pytest: start-up and collection; the API: its imports, until its first design), and the
process's CPU from then to the last test's end (``tests``: reports and shutdown left out).
Printed: per client, the medians over the rounds, in ms per request, and the per-round ratios
pytest / API of the whole process and of ``tests``; asserts nothing:

    python bench/bench_cpu_split.py [--latency 0.05] [-C 128] [--rounds 3]

The machine's load moves every figure: compare the rows of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]

# A module both clients import first (pytest: ``-p``; the API: before running its client): it
# wraps ``Thread.run`` to add up each thread's CPU and writes the totals at exit.
ACCOUNTING = """
import atexit, collections, json, os, threading, time

_totals = collections.Counter()
_marks = {}
_run = threading.Thread.run


def _name(thread):
    return thread.name.split("_")[0] if thread.name.startswith("competence-") else "other"


def _counted(self):
    try:
        _run(self)
    finally:
        _totals[_name(self)] += time.thread_time()


threading.Thread.run = _counted


def mark_start():  # the first test's (design's) start: the main thread's CPU, the process's
    _marks.setdefault("start-up", time.thread_time())
    _marks.setdefault("process at start", time.process_time())


def mark_end():  # the last test's (design's) end: before reports and shutdown
    _marks["process at end"] = time.process_time()


def pytest_runtest_setup(item):
    mark_start()


def pytest_runtest_teardown(item, nextitem):
    mark_end()


@atexit.register
def _write():
    totals = {"main": time.thread_time(), **_totals, **_marks, "process": time.process_time()}
    with open(os.environ["CPU_SPLIT_OUT"], "w") as out:
        json.dump(totals, out)
"""


def run_once(kind: str, url: str, c: int, tmp: Path) -> dict[str, float]:
    """One fresh client process; its CPU seconds by thread."""
    out = tmp / "split.json"
    out.unlink(missing_ok=True)
    if kind == "pytest":
        cache = tmp / f"cache-{time.monotonic_ns()}.sqlite"
        command = [sys.executable, "-m", "pytest", "-p", "competence_cpu_split"]
        command += ["examples/test_ordering_left_right.py", "--competence-report-only", "-q"]
        command += [f"--competence-model=openai:m@{url}?concurrency={c}", "-p", "no:cacheprovider"]
        command += ["-o", f"competence_cache_path={cache}"]
    else:
        client = [str(HERE.parent / "bench_http.py"), "--client", "api", "--url", url]
        client += ["-C", str(c), "--prompts", str(tmp / "unused")]
        command = [
            sys.executable,
            "-c",
            f"import runpy, sys, competence_cpu_split; sys.argv = {client!r}; "
            f"runpy.run_path(sys.argv[0], run_name='__main__')",
        ]
    # Bytecode caching on, as on a user's machine (see bench_http.py).
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    path = os.pathsep.join(p for p in (str(tmp), environ.get("PYTHONPATH", "")) if p)
    env = {**environ, "PYTHONPATH": path, "CPU_SPLIT_OUT": str(out)}
    env["BENCH_OUT"] = str(tmp / "answers.json")
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    if done.returncode != 0 or (kind == "pytest" and "2 passed" not in done.stdout):
        raise SystemExit(
            f"{kind} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr}"
        )
    split: dict[str, float] = json.loads(out.read_text())
    split["tests"] = split["process at end"] - split["process at start"]
    return split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=0.05, help="Server latency, seconds")
    parser.add_argument("-C", type=int, default=128, help="Requests in flight (default 128)")
    parser.add_argument("--rounds", type=int, default=3, help="Interleaved rounds")
    args = parser.parse_args()
    sys.path[:0] = [str(HERE.parent), str(ROOT / "tests")]
    from _machine import describe
    from bench_http import example_specs

    from fake_server import FakeServer

    print(describe())
    n = sum(len(item.prompts) for spec in example_specs() for item in spec.design())
    runs: dict[str, list[dict[str, float]]] = defaultdict(list)
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        (tmp / "competence_cpu_split.py").write_text(ACCOUNTING)
        server = FakeServer(latency=args.latency)
        try:
            run_once("api", server.url, args.C, tmp)  # uncounted: the server learns the answers
            for _ in range(max(1, args.rounds)):
                for kind in ("pytest", "api"):
                    server.reset()
                    runs[kind].append(run_once(kind, server.url, args.C, tmp))
                loads.append(os.getloadavg()[0])
        finally:
            server.close()
    print(
        f"{n:,} prompts per run, C = {args.C}, latency {args.latency * 1e3:g} ms, {args.rounds} "
        f"interleaved rounds; load average (1 min) {min(loads):.1f}-{max(loads):.1f}"
    )
    print("CPU ms per request, medians over the rounds (start-up: pytest's main thread until")
    print("the first test's setup; main: the whole main thread, start-up included; tests: all")
    print("threads from the first test's start to the last test's end, start-up, reports and")
    print("shutdown left out)")
    names = ["start-up", "main", "competence-pipe", "competence-ahead", "competence-ask"]
    names += ["competence-design", "other", "tests", "process"]
    print(f"{'':18}" + "".join(f"{k.removeprefix('competence-'):>10}" for k in names))
    for kind, rows in runs.items():
        cells = [statistics.median(r.get(k, 0.0) for r in rows) / n * 1e3 for k in names]
        print(f"{kind:18}" + "".join(f"{v:10.3f}" for v in cells))
    for label, key in (("process CPU", "process"), ("CPU during the tests", "tests")):
        ratios = sorted(a[key] / b[key] for a, b in zip(runs["pytest"], runs["api"]))
        print(
            f"{label}, pytest / api per round: {ratios[0]:.2f} / {statistics.median(ratios):.2f}"
            f" / {ratios[-1]:.2f} (min / median / max)"
        )


if __name__ == "__main__":
    main()
