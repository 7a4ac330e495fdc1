"""What the release gate costs a pytest run: the same suite ungated, regression-gated and
non-inferiority-gated, in interleaved rounds.

The suite is one ordering test (levels 4–64, original + equivalent: 10 cells) at each size of
level, candidate ``ref:noisy?p=0.05&seed=2`` against the baseline ``ref:noisy?p=0.05&seed=1``
(both instant, so the gate's own cost is what differs). Each round runs every variant once, in
turn, each in a fresh ``python -m pytest`` process; the script prints the median wall seconds
per variant and the gates' extra seconds over the ungated run. Non-inferiority is exact up to
``stats.EXACT_UP_TO_PAIRS`` pairs per level and Tango's score test above. Asserts nothing.

    python bench/bench_gate_suite.py [--rounds 3] [--pairs 40,100,200]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _machine import describe

SUITE = """
import pytest

@pytest.mark.competence(levels=[4, 8, 16, 32, 64], pairs={pairs}, require="coverage >= 0.99",
                        regression_margin=0.1{gate})
def test_gate(competence):
    pass
"""
CANDIDATE, BASELINE = "ref:noisy?p=0.05&seed=2", "ref:noisy?p=0.05&seed=1"
VARIANTS = {"ungated": None, "regression": "", "non-inferiority": ", gate='non-inferiority'"}


def run(folder: Path, pairs: int, gate: str | None) -> float:
    (folder / "test_bench.py").write_text(SUITE.format(pairs=pairs, gate=gate or ""))
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_bench.py"]
    args += ["--competence-model", CANDIDATE, "-o", "competence_bootstrap=0"]
    if gate is not None:
        args += ["--competence-baseline", BASELINE]
    started = time.perf_counter()
    done = subprocess.run(args, cwd=folder, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(done.stdout + done.stderr)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pairs", default="40,100,200")
    args = parser.parse_args()
    print(describe())
    sizes = [int(p) for p in args.pairs.split(",")]
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "pytest.ini").write_text("[pytest]\n")
        times: dict[tuple[int, str], list[float]] = {}
        for _ in range(args.rounds):
            for pairs in sizes:
                for name, gate in VARIANTS.items():
                    times.setdefault((pairs, name), []).append(run(folder, pairs, gate))
    print(f"{'pairs':>6} {'variant':>16} {'median s':>9} {'over ungated s':>15}")
    for pairs in sizes:
        base = statistics.median(times[(pairs, "ungated")])
        for name in VARIANTS:
            median = statistics.median(times[(pairs, name)])
            print(f"{pairs:>6} {name:>16} {median:>9.2f} {median - base:>15.2f}")


if __name__ == "__main__":
    main()
