"""Time the paired bootstrap against scipy.stats.bootstrap on the paper's base grid.

The grid is the CBE paper's (arXiv:2610.22894) base design: 9 levels × 200 matched pairs, 1,800 pairs in all. The
figure is the difference in accuracy between the two presentations (invalid answers counted
wrong), B = 10,000 percentile resamples. Ours resamples within levels (stratified, App. B.2) and,
for a like-for-like row, without strata; scipy.stats.bootstrap gets the same two arrays with
``paired=True, vectorized=True, method="percentile"`` (it has no strata). Targets: ours at least
10× faster than scipy's and well under a second. The three take turns (one run each per round)
and a speed-up is the median of the per-round ratios, so that a shared machine's load falls on
both sides alike. Run on demand, not under pytest; it prints
figures and asserts nothing about timing:

    python bench/bench_bootstrap.py [--B 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import tracemalloc
from collections.abc import Callable

import numpy as np
import scipy
from _machine import describe
from scipy import stats as scipy_stats

from pytest_competence import stats

LEVELS = [4, 8, 16, 32, 64, 128, 256, 512, 1024]
PAIRS = 200
TARGET_RATIO = 10.0
TARGET_S = 1.0


def grid(seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-pair correctness of two presentations and the level of each pair."""
    rng = np.random.default_rng(seed)
    level = np.repeat(LEVELS, PAIRS)
    skill = np.repeat(np.linspace(0.97, 0.6, len(LEVELS)), PAIRS)  # accuracy falls with n
    original = rng.random(level.size) < skill
    flips = rng.random(level.size) < 1.2 * (1 - skill)  # presentation-dependent pairs
    return original, original ^ flips, level


def timed(run: Callable[[], object]) -> tuple[float, object]:
    """Wall seconds of one run, and its result."""
    gc.collect()
    start = time.perf_counter()
    result = run()
    return time.perf_counter() - start, result


def peak_megabytes(run: Callable[[], object]) -> float:
    """Peak traced allocation of one run (numpy reports its buffers to tracemalloc)."""
    tracemalloc.start()
    run()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--B", type=int, default=10_000, help="Resamples (default 10000)")
    parser.add_argument(
        "--repeat", type=int, default=5, help="Timed runs after a warm-up (default 5)"
    )
    args = parser.parse_args()

    original, equivalent, level = grid()
    figure = stats.difference_figure(
        stats.accuracy_figure(original), stats.accuracy_figure(equivalent)
    )

    def ours_stratified() -> stats.BootstrapInterval:
        return stats.paired_bootstrap(*figure, strata=level, B=args.B, seed=0)

    def ours_plain() -> stats.BootstrapInterval:
        return stats.paired_bootstrap(*figure, B=args.B, seed=0)

    def difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(x.mean(axis=axis) - y.mean(axis=axis))

    def theirs() -> object:
        return scipy_stats.bootstrap(
            (original.astype(float), equivalent.astype(float)),
            difference,
            paired=True,
            vectorized=True,
            method="percentile",
            n_resamples=args.B,
            random_state=0,
        )

    print(describe(f"scipy {scipy.__version__}"))
    print(
        f"grid: {len(LEVELS)} levels x {PAIRS} pairs = {level.size} matched pairs; statistic: "
        f"accuracy(original) - accuracy(equivalent) = {original.mean() - equivalent.mean():+.4f}; "
        f"B = {args.B:,}; {args.repeat} timed runs after a warm-up"
    )
    rows = [
        ("ours, stratified by n", ours_stratified),
        ("ours, unstratified", ours_plain),
        ("scipy.stats.bootstrap", theirs),
    ]
    # The rows take turns, one run each per round, so that load on a shared machine falls on
    # all of them alike; each ratio is the median of the per-round ratios.
    results = {label: run() for label, run in rows}  # warm-up
    times: dict[str, list[float]] = {label: [] for label, _ in rows}
    for _ in range(max(1, args.repeat)):
        for label, run in rows:
            took, results[label] = timed(run)
            times[label].append(took)
    medians = {}
    print(f"{'':24}{'best s':>9}{'median s':>10}{'interval':>22}")
    for label, _ in rows:
        result = results[label]
        medians[label] = statistics.median(times[label])
        if isinstance(result, stats.BootstrapInterval):
            low, high = result.low, result.high
        else:
            low, high = result.confidence_interval  # type: ignore[attr-defined]
        print(
            f"{label:24}{min(times[label]):9.4f}{medians[label]:10.4f}   [{low:+.4f}, {high:+.4f}]"
        )
    theirs_times = times["scipy.stats.bootstrap"]
    for label in ("ours, stratified by n", "ours, unstratified"):
        ratio = statistics.median(t / o for t, o in zip(theirs_times, times[label]))
        print(
            f"speed-up of {label}: {ratio:.1f}x, median of {len(theirs_times)} rounds; "
            f"{min(theirs_times) / min(times[label]):.1f}x best against best "
            f"(target >= {TARGET_RATIO:g}x; ours {medians[label]:.3f} s, target < {TARGET_S:g} s)"
        )
    print(
        f"peak traced memory: ours {peak_megabytes(ours_stratified):.0f} MB, "
        f"scipy {peak_megabytes(theirs):.0f} MB"
    )


if __name__ == "__main__":
    main()
