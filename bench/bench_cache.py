"""The response cache's cost per answer: one transaction per answer against one per hand-over.

Two measurements, printed, nothing asserted:

- *Commits*: ``ResponseCache.put_many`` in lists of 1 (a transaction per answer, as the cache
  committed before), 4, 8, 12 and 32 answers, into a fresh SQLite file in a temporary folder (WAL,
  ``synchronous = NORMAL``, as the cache runs): CPU and wall time per answer, median of
  ``--rounds`` rounds of ``--answers`` answers each.
- *Hand-overs*: the lists the HTTP backend's request stream hands over
  (``OpenAIModel.stream_groups``, answers that arrived within ``models._pipe.HAND_OVER`` of each
  other) for the 2,400 prompts of ``examples/test_ordering_left_right.py`` against the local fake
  server holding each request 50 ms, at each ``--concurrency``: how many answers a list holds,
  i.e. which row of the first table a run pays.

    python bench/bench_cache.py [--answers 2600] [--rounds 5] [--concurrency 32 128]

The temporary folder is on the disk ``tempfile`` picks (``TMPDIR``): the cache's own disk may
commit faster or slower.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]
SIZES = (1, 4, 8, 12, 32)


def commits(answers: int, rounds: int) -> dict[int, tuple[float, float]]:
    """Group size → (CPU µs, wall µs) per answer, medians over the rounds."""
    from pytest_competence.engine.cache import ResponseCache

    cpu: dict[int, list[float]] = {size: [] for size in SIZES}
    wall: dict[int, list[float]] = {size: [] for size in SIZES}
    with tempfile.TemporaryDirectory() as folder:
        for r in range(rounds):
            for size in SIZES:  # interleaved: each round measures every size once
                cache = ResponseCache(Path(folder) / f"{r}-{size}.sqlite")
                cache.put_many([("warm", "up", None)], "m")  # opens the file: not measured
                rows = [(f"{r}-{size}-{i:058d}", "yes", None) for i in range(answers)]
                start_cpu, start = time.process_time(), time.perf_counter()
                for at in range(0, answers, size):
                    cache.put_many(rows[at : at + size], "m")
                cpu[size].append((time.process_time() - start_cpu) / answers * 1e6)
                wall[size].append((time.perf_counter() - start) / answers * 1e6)
                cache.close()
    return {s: (statistics.median(cpu[s]), statistics.median(wall[s])) for s in SIZES}


def hand_overs(concurrency: list[int]) -> dict[int, list[int]]:
    """Concurrency → the sizes of the lists the request stream handed over."""
    sys.path[:0] = [str(HERE.parent), str(ROOT / "tests")]
    from bench_http import example_specs

    from fake_server import FakeServer
    from pytest_competence.models import resolve_model

    prompts = [p for spec in example_specs() for item in spec.design() for p in item.prompts]
    server = FakeServer(latency=0.05)
    sizes: dict[int, list[int]] = {}
    try:
        for c in concurrency:
            model = resolve_model(f"openai:m@{server.url}?concurrency={c}")
            try:
                sizes[c] = [len(group) for group in model.stream_groups(prompts)]
            finally:
                model.close()
            if sum(sizes[c]) != len(prompts):
                raise SystemExit(f"C = {c}: {sum(sizes[c])} answers for {len(prompts)} prompts")
    finally:
        server.close()
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--answers", type=int, default=2600, help="Answers per round and size")
    parser.add_argument("--rounds", type=int, default=5, help="Interleaved rounds")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[32, 128])
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent))
    from _machine import describe

    print(describe())
    print(f"put_many, {args.answers:,} answers per round and size, medians of {args.rounds}:")
    got = commits(args.answers, args.rounds)
    one = got[1][0]
    for size, (cpu, wall) in got.items():
        than = f"  (1/{one / cpu:.1f} of one per answer)" if size > 1 else ""
        print(
            f"  {size:3} per transaction: {cpu:6.1f} µs CPU, {wall:6.1f} µs wall per answer{than}"
        )
    print("answers per hand-over, 2,400 prompts against the fake server at 50 ms:")
    for c, sizes in hand_overs(args.concurrency).items():
        print(
            f"  C = {c:3}: {len(sizes)} hand-overs, mean {statistics.mean(sizes):.1f}, median "
            f"{statistics.median(sizes):g}, max {max(sizes)} answers"
        )


if __name__ == "__main__":
    main()
