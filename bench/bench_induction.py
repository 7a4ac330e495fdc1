"""Generation speed of the rule-induction families (systematicity paper, arXiv:2609.13948, §4) at their largest level.

Tasks per second for every rule-induction family registered in ``FAMILIES``, at the largest
level of its range, each task with every presentation a suite sends: the original and ``K``
variations of every isomorphism type (``--variations``, default 5, as the systematicity paper, arXiv:2609.13948, §5). Each case
runs in a fresh process after a warm-up. Run on demand, not under pytest; it prints figures and
asserts nothing about timing:

    python bench/bench_induction.py [--repeat 5] [--tasks 200] [--variations 5]
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

from _machine import describe

from pytest_competence.strategies._induction import induction_families


def run_once(name: str, tasks: int, variations: int) -> tuple[float, int]:
    """Wall seconds to design ``tasks`` tasks of ``name`` at its largest level; prompts made."""
    family = induction_families()[name](variations=variations)
    level = family.levels[1]
    family.design(levels=[level], pairs=5, seed=0)
    gc.collect()
    wall = time.perf_counter()
    items = family.design(levels=[level], pairs=tasks, seed=1)
    return time.perf_counter() - wall, sum(len(i.prompts) for i in items)


def in_fresh_process(name: str, tasks: int, variations: int) -> tuple[float, int]:
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
        return pool.submit(run_once, name, tasks, variations).result()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="Timed runs per family (default 5)")
    parser.add_argument("--tasks", type=int, default=200, help="Tasks per run (default 200)")
    parser.add_argument(
        "--variations",
        type=int,
        default=5,
        help="Isomorphic variations per type and task (default 5)",
    )
    args = parser.parse_args()
    print(describe())
    print(
        f"{'family':12}{'n':>4}{'types':>7}{'tasks/s':>10}{'prompts/s':>12}  "
        f"(K = {args.variations}, median of {args.repeat})"
    )
    for name, cls in induction_families().items():
        level = cls().levels[1]
        types = len(cls().isomorphisms)
        runs = [
            in_fresh_process(name, args.tasks, args.variations) for _ in range(max(1, args.repeat))
        ]
        wall = statistics.median(r[0] for r in runs)
        print(f"{name:12}{level:4}{types:7}{args.tasks / wall:10,.0f}{runs[0][1] / wall:12,.0f}")


if __name__ == "__main__":
    main()
