"""Generation speed of the families beyond ordering, at the largest size of their default grid.

Instances per second (each with the presentations a suite would send) for the Horn-clause
family at n = 128 rules (CBE paper, arXiv:2610.22894, App. C.1) and for each reformulation category at n = 6
(CRTBench paper; its largest level), and intervention-world clusters at n = 32 rules (all 36 cells
each), in a fresh process after a warm-up. Run on demand,
not under pytest; it prints figures and asserts nothing about timing:

    python bench/bench_families.py [--repeat 5] [--instances 402]
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

from _machine import describe

from pytest_competence.strategies import (
    CATEGORIES,
    IW_PRESENTATIONS,
    Horn,
    Intervention,
    Reformulations,
)

#: family label → (constructor, largest default level, presentations a suite sends)
CASES = {
    "horn": (Horn, 128, ["original", "equivalent"]),
    "horn/all-presentations": (
        Horn,
        128,
        ["original", "equivalent", "reshuffle", "rename", "shuffled_renamed", "negated_query"],
    ),
    **{  # every reformulation of the CRTBench paper, Table 7 that applies, each label proved by its solver
        f"reformulations/{c}": (
            lambda c=c: Reformulations(category=c),
            6,
            list(Reformulations(category=c).presentations),
        )
        for c in CATEGORIES
    },
    # a cluster: base, target and sham theories, each label proved by forward chaining; 36 cells
    "intervention": (Intervention, 32, list(IW_PRESENTATIONS)),
}


def run_once(case: str, instances: int) -> tuple[float, int]:
    """Wall seconds to design ``instances`` instances of ``case`` at its largest level; prompts."""
    make, level, presentations = CASES[case]
    family = make()
    family.design(levels=[level], pairs=6, seed=0, presentations=presentations)
    gc.collect()
    wall = time.perf_counter()
    items = family.design(levels=[level], pairs=instances, seed=1, presentations=presentations)
    return time.perf_counter() - wall, sum(len(i.prompts) for i in items)


def in_fresh_process(case: str, instances: int) -> tuple[float, int]:
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
        return pool.submit(run_once, case, instances).result()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="Timed runs per case (default 5)")
    parser.add_argument(
        "--instances",
        type=int,
        default=402,
        help="Instances per run, a multiple of 6 (default 402)",
    )
    args = parser.parse_args()
    print(describe())
    print(f"{'case':36}{'n':>6}{'instances/s':>14}{'prompts/s':>12}  (median of {args.repeat})")
    for case, (_, level, _) in CASES.items():
        runs = [in_fresh_process(case, args.instances) for _ in range(max(1, args.repeat))]
        wall = statistics.median(r[0] for r in runs)
        print(f"{case:36}{level:6}{args.instances / wall:14,.0f}{runs[0][1] / wall:12,.0f}")


if __name__ == "__main__":
    main()
