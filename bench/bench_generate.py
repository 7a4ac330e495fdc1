"""Time generating and rendering the paper's base grid with the ordering family.

The target is the whole grid — 9 levels × 200 instances × 2 presentations, 3,600 prompts — in
well under one second of one core. Each run happens in a fresh process, so nothing memoised by
an earlier run can flatter a later one. Run on demand, not under pytest; it prints figures and
asserts nothing about timing:

    python bench/bench_generate.py [--vocabulary NAME] [--protocol P|L] [--repeat 5]
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from _machine import describe

from pytest_competence.strategies import CATALOG, Ordering

LEVELS = [4, 8, 16, 32, 64, 128, 256, 512, 1024]
PAIRS = 200
PRESENTATIONS = ["original", "equivalent"]
TARGET_S = 1.0


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vocabulary", default="front_behind", choices=[v.name for v in CATALOG],
                        metavar="NAME", help="Catalog vocabulary (default front_behind)")
    parser.add_argument("--protocol", choices=["P", "L"], default="P",
                        help="Rewrite protocol (default P)")
    parser.add_argument("--repeat", type=int, default=5,
                        help="Timed runs after the warm-up run (default 5)")
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


if __name__ == "__main__":
    main()
