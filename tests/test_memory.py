"""Memory does not grow with the prompt count: a run streams its design (bench/bench_memory.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from bench_memory import measure, pairs_for  # noqa: E402

from server_fixtures import fake_server_process, server  # noqa: E402, F401

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


@pytest.mark.slow
def test_the_request_stream_holds_no_more_at_100k_prompts(tmp_path: Path, server) -> None:
    """The same bound on the path that asks ahead (an ``openai:`` model on the fake server, two
    tests, the second's design asked while the first is reduced): a token that kept every
    chunk's requests until its test ended once made 100k prompts peak at 2.5× the 10k figure."""
    peaks = {}
    for size in (10_000, 100_000):
        folder = tmp_path / str(size)
        folder.mkdir()
        pairs = pairs_for(size, 2 * len(LEVELS))
        peaks[size], _ = measure(folder, LEVELS, pairs, server=server.url)
    assert peaks[100_000] <= 1.5 * peaks[10_000] + 10, peaks
