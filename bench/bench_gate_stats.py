"""Time the release gate's statistics on a gate of 9 levels × 2 presentations.

For each size of level (pairs per level), one gate's worth of cells (18, with discordance
around 0.2) goes through ``stats.noninferiority_decision`` (a p-value and two bounds per cell:
exact up to ``stats.EXACT_UP_TO_PAIRS`` pairs, Tango's score test above) and
``stats.gate_power`` (the detectable drops), and a 10-checkpoint series on the same grid through
``stats.checkpoint_series``. Prints the median seconds over the repeats; asserts nothing about
timing. Run on demand, not under pytest:

    python bench/bench_gate_stats.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
import scipy
from _machine import describe

from pytest_competence import stats

LEVELS, PRESENTATIONS = 9, 2


def cells(pairs: int, rng: np.random.Generator) -> list[tuple[int, int, int]]:
    counts = rng.multinomial(pairs, [0.1, 0.1, 0.8], size=LEVELS * PRESENTATIONS)
    return [(int(b), int(c), pairs) for b, c, _ in counts]


def series(pairs: int, checkpoints: int, rng: np.random.Generator) -> list[stats.Checkpoint]:
    ids = [f"i{k}" for k in range(LEVELS * pairs)]
    level = np.repeat(np.arange(1, LEVELS + 1), pairs)
    truth = rng.random(level.size) < 0.8
    result = []
    for k in range(checkpoints):
        flip = rng.random((PRESENTATIONS, level.size)) < 0.1
        result.append(
            stats.Checkpoint(
                name=f"step-{k}",
                ids=ids,
                level=level,
                correct={f"p{j}": truth ^ flip[j] for j in range(PRESENTATIONS)},
            )
        )
    return result


def median_seconds(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(describe(f"scipy {scipy.__version__}"))
    rng = np.random.default_rng(0)
    print(f"{'pairs':>6} {'method':>6} {'decision s':>11} {'power s':>8} {'series(10) s':>13}")
    for pairs in (8, 50, 100, 200, 1000):
        gate = cells(pairs, rng)
        checkpoints = series(pairs, 10, rng)
        decision = median_seconds(
            lambda: stats.noninferiority_decision(gate, margin=0.05, alpha=0.05), args.repeat
        )
        power = median_seconds(lambda: stats.gate_power(gate, alpha=0.05, margin=0.05), args.repeat)
        trend = median_seconds(lambda: stats.checkpoint_series(checkpoints), args.repeat)
        method = "exact" if pairs <= stats.EXACT_UP_TO_PAIRS else "score"
        print(f"{pairs:>6} {method:>6} {decision:>11.3f} {power:>8.4f} {trend:>13.3f}")


if __name__ == "__main__":
    main()
