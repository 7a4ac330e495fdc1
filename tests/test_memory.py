"""Memory does not grow with the prompt count: a run streams its design (bench/bench_memory.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from bench_memory import measure, pairs_for  # noqa: E402

LEVELS = (4, 8, 16)  # short prompts keep the run near a minute; the bound is about growth


@pytest.mark.slow
def test_peak_memory_at_100k_prompts_stays_near_that_of_10k(tmp_path: Path) -> None:
    peaks = {}
    for size in (10_000, 100_000):
        folder = tmp_path / str(size)
        folder.mkdir()
        peaks[size], _ = measure(folder, LEVELS, pairs_for(size, len(LEVELS)))
    # Ten times the prompts: the compact arrays grow (a few bytes per prompt), nothing else.
    assert peaks[100_000] <= 1.5 * peaks[10_000] + 10, peaks
