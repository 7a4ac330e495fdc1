"""``competence generate`` in chunks: the same bytes as the whole design, in constant memory."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from itertools import chain

import pytest

from pytest_competence.protocol import design_chunks
from pytest_competence.strategies import FAMILIES, default_presentations
from pytest_competence.strategies import family as make_family
from pytest_competence.training import grpo_order, row, write_rows
from pytest_competence.training.generate import SCHEMA, prompt_records

# One design per family, small but with more instances per level than a chunk holds, so that
# levels split into several chunks and the last chunk of a level is short.
DESIGNS = {
    "ordering": (
        {"vocabulary": "older_younger", "protocol": "L", "distractors": 0.5},
        [4, 9, 16],
        8,
    ),
    "horn": ({}, [4, 8, 16], 8),
    "reformulations": ({"category": "quantifier"}, [4, 6], 6),
    "intervention": ({}, [4, 8], 12),
    "programs": ({}, [1, 3], 5),
    "raven": ({}, [1, 2], 5),
    "concepts": ({}, [1, 2], 5),
    "grammar": ({}, [1, 2], 5),
}


def _lines(family: object, items: list) -> list[str]:
    """The JSON Lines ``competence generate`` writes for ``items`` of ``family``."""
    made = prompt_records(items, SCHEMA, FAMILIES.hooks(family.name).record_meta)
    return [json.dumps(record, ensure_ascii=False) for record in made]


@pytest.mark.parametrize("name", DESIGNS)
@pytest.mark.parametrize("seed", [1, 5])
def test_chunks_concatenate_to_the_whole_design(name, seed):
    options, levels, pairs = DESIGNS[name]
    fam = make_family(name, **options)
    design = dict(
        levels=levels, pairs=pairs, seed=seed, presentations=list(default_presentations(fam))
    )
    whole = fam.design(**design)
    chunks = list(design_chunks(fam, **design, size=3))
    assert [len(c) for c in chunks] == [
        len(c) for n in levels for c in [range(pairs)[i : i + 3] for i in range(0, pairs, 3)]
    ]
    streamed = list(chain.from_iterable(chunks))
    assert [item.prompts for item in streamed] == [item.prompts for item in whole]
    assert list(chain.from_iterable(_lines(fam, c) for c in chunks)) == _lines(fam, whole)


def test_a_family_without_item_streams_a_level_at_a_time():
    fam = make_family("horn")

    class LevelsOnly:  # a third-party family: design() and nothing else
        name = fam.name

        def design(self, **kwargs: object) -> list:
            return fam.design(**kwargs)

    design = dict(levels=[4, 8], pairs=4, seed=3, presentations=["original"])
    chunks = list(design_chunks(LevelsOnly(), **design, size=1))
    assert [len(c) for c in chunks] == [4, 4]
    assert list(chain.from_iterable(chunks)) == fam.design(**design)


def _ordered(designs: list[list]) -> str:
    return "".join(
        json.dumps(r, ensure_ascii=False) + "\n"
        for r in grpo_order(
            (row(p) for items in designs for item in items for p in item.prompts), seed=11
        )
    )


def test_streamed_training_rows_are_grpo_order_of_every_row():
    fam = make_family("ordering", vocabulary="front_behind")
    design = dict(levels=[4, 8, 16], pairs=8, seed=2, presentations=["original", "equivalent"])
    chunks = list(design_chunks(fam, **design, size=3))
    # The second design repeats the first's instance ids: grpo_order groups their rows together.
    for designs in (chunks, chunks + chunks[:2]):
        out = io.StringIO()
        assert write_rows(designs, out, seed=11) == sum(len(i.prompts) for c in designs for i in c)
        assert out.getvalue() == _ordered(designs)
    assert write_rows([], io.StringIO(), seed=11) == 0


def _peak_rss_mb(*args: str) -> float:
    """Peak resident memory of ``competence generate ARGS`` (its output discarded), in MB."""
    child = subprocess.Popen(
        [sys.executable, "-m", "pytest_competence.cli", "generate", *args],
        stdout=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    assert child.returncode == 0
    return usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "wait4"), reason="needs os.wait4 for a child's peak memory")
def test_generate_memory_does_not_grow_with_the_design():
    small = _peak_rss_mb("ordering", "--levels", "4,8", "--per-level", "2500")  # 10k prompts
    large = _peak_rss_mb("ordering", "--levels", "4,8", "--per-level", "25000")  # 100k
    # The whole design of 100k prompts alone takes ~100 MB more than 10k's; chunks take none.
    assert large < small * 1.25, (small, large)


def test_stream_rng_is_default_rng_of_its_key_bit_for_bit():
    import numpy as np

    from pytest_competence.strategies._rng import _BLOCK, stream_rng

    rng = np.random.default_rng(0)
    top = 2**32 - 1
    for seed, n, stream in [(0, 4, 0), (1, 1024, 8), (top, top, top), (7, 64, 3)]:
        starts = [0, _BLOCK - 2, top - _BLOCK - 3, int(rng.integers(0, top))]
        for index in sorted({i for s in starts for i in range(s, min(s + _BLOCK + 4, top + 1))}):
            got = stream_rng(seed, n, index, stream)
            want = np.random.default_rng([seed, n, index, stream])
            assert got.bit_generator.state == want.bit_generator.state, (seed, n, index, stream)
            assert got.integers(0, 2**62, 3).tolist() == want.integers(0, 2**62, 3).tolist()
    # Anything but a 32-bit word keeps numpy's own treatment of the list.
    assert stream_rng(1, 2**40, 3, 0).random() == np.random.default_rng([1, 2**40, 3, 0]).random()
