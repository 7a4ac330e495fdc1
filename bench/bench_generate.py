"""Time generating and rendering the paper's base grid with the ordering family.

The target is the whole grid — 9 levels × 200 instances × 2 presentations, 3,600 prompts — in
well under one second of one core. Each run happens in a fresh process, so nothing memoised by
an earlier run can flatter a later one. Run on demand, not under pytest; it prints figures and
asserts nothing about timing:

    python bench/bench_generate.py [--vocabulary NAME] [--protocol P|L] [--repeat 5] [--million]

It then runs ``competence generate ordering`` (levels 4–64, original + equivalent, output
discarded) at 10k and 100k prompts — and 1M with ``--million`` — and prints each process's peak
resident memory and CPU, with their ratios to the 10k run: the command streams its design in
chunks, so the peak should not grow with the number of prompts.
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from _machine import describe

from pytest_competence.strategies import CATALOG, Ordering

LEVELS = [4, 8, 16, 32, 64, 128, 256, 512, 1024]
PAIRS = 200
PRESENTATIONS = ["original", "equivalent"]
TARGET_S = 1.0
STREAM_LEVELS = "4,8,16,32,64"


def run_once(vocabulary: str, protocol: str) -> tuple[float, float, int, int]:
    """Time the grid in this process: wall seconds, CPU seconds, prompts, bytes of prompt text."""
    family = Ordering(vocabulary=vocabulary, protocol=protocol)
    # Load the name pool and numpy's lazy modules first: they are start-up, not generation.
    family.design(levels=[4], pairs=4, seed=0, presentations=PRESENTATIONS)
    gc.collect()
    wall, cpu = time.perf_counter(), time.thread_time()
    items = family.design(levels=LEVELS, pairs=PAIRS, seed=1, presentations=PRESENTATIONS)
    wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
    texts = [p.text for item in items for p in item.prompts]
    return wall, cpu, len(texts), sum(len(t.encode("utf-8")) for t in texts)


def in_fresh_process(vocabulary: str, protocol: str) -> tuple[float, float, int, int]:
    """:func:`run_once` in a new interpreter, so nothing from an earlier run is reused."""
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
        return pool.submit(run_once, vocabulary, protocol).result()


def generate_peak(prompts: int) -> tuple[float, float]:
    """Peak RSS (MB) and CPU seconds of ``competence generate`` writing ``prompts`` prompts."""
    pairs = prompts // (len(STREAM_LEVELS.split(",")) * len(PRESENTATIONS))
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest_competence.cli",
            "generate",
            "ordering",
            "--levels",
            STREAM_LEVELS,
            "--per-level",
            str(pairs),
            "--max-prompts",
            str(prompts),
        ],
        stdout=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"competence generate failed at {prompts:,} prompts")
    kilobytes = usage.ru_maxrss / (1024 if sys.platform == "darwin" else 1)
    return kilobytes / 1024, usage.ru_utime + usage.ru_stime


def memory_rows(sizes: list[int]) -> None:
    """Print peak RSS and CPU of ``competence generate`` at each size, and ratios to the first."""
    print(
        f"competence generate ordering --levels {STREAM_LEVELS} (original + equivalent), "
        f"output discarded"
    )
    print(f"{'prompts':>10}{'peak MB':>9}{'cpu s':>8}{'x peak':>8}{'x cpu':>7}")
    first: tuple[float, float] | None = None
    for size in sizes:
        peak, cpu = generate_peak(size)
        first = first or (peak, cpu)
        print(f"{size:>10,}{peak:9.0f}{cpu:8.1f}{peak / first[0]:8.2f}{cpu / first[1]:7.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--vocabulary",
        default="front_behind",
        choices=[v.name for v in CATALOG],
        metavar="NAME",
        help="Catalog vocabulary (default front_behind)",
    )
    parser.add_argument(
        "--protocol", choices=["P", "L"], default="P", help="Rewrite protocol (default P)"
    )
    parser.add_argument(
        "--repeat", type=int, default=5, help="Timed runs after the warm-up run (default 5)"
    )
    parser.add_argument(
        "--million",
        action="store_true",
        help="Also measure competence generate at 1M prompts (about a minute)",
    )
    args = parser.parse_args()

    print(describe())
    warm_up = in_fresh_process(args.vocabulary, args.protocol)
    runs = [in_fresh_process(args.vocabulary, args.protocol) for _ in range(max(1, args.repeat))]
    prompts, megabytes = warm_up[2], warm_up[3] / 1e6
    print(
        f"grid: {len(LEVELS)} levels x {PAIRS} instances, {prompts} prompts, "
        f"{megabytes:.1f} MB of prompt text (vocabulary={args.vocabulary}, "
        f"protocol={args.protocol}); warm-up run {warm_up[0]:.3f} s, not counted"
    )
    print(f"{'':8}{'wall s':>8}{'cpu s':>8}{'prompts/s':>11}{'MB/s':>7}{'x target':>10}")
    walls, cpus = [run[0] for run in runs], [run[1] for run in runs]
    for label, pick in (("best", min), ("median", statistics.median)):
        wall, cpu = pick(walls), pick(cpus)
        print(
            f"{label:8}{wall:8.3f}{cpu:8.3f}{prompts / wall:11,.0f}{megabytes / wall:7.1f}"
            f"{wall / TARGET_S:10.2f}"
        )
    print(f"({len(runs)} runs, each in a fresh process; target {TARGET_S:g} s for the whole grid)")
    memory_rows([10_000, 100_000] + ([1_000_000] if args.million else []))


if __name__ == "__main__":
    main()
