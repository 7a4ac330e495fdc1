"""``--competence-shard=K/N``: which items each shard runs (issue #50).

The assignment's properties (disjoint, complete, balanced by prompts, a function of the items
alone) are checked on :func:`~pytest_competence.engine.shard.assign` with Hypothesis; real sessions
check what pytest collects per shard: with ``-k``, with ``-n 2``, under another hash seed, and
where the tests that are not competence tests go. The merged archives are ``test_merge.py``'s.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import plugin_helpers  # noqa: F401  (the engine, imported before any in-process session)
from plugin_helpers import SHARD_MODELS as MODELS
from plugin_helpers import SHARD_SUITE as SUITE
from pytest_competence.engine.shard import Shard, assign, parse_shard

#: Prompts per item of SUITE (levels × pairs × 2 presentations), by test (test_pairs: by pairs).
PROMPTS = {"test_horn": 32, "test_ordering": 72, "-4]": 8, "-20]": 40}

weights = st.dictionaries(st.text(min_size=1, max_size=8), st.integers(1, 10_000), max_size=60)


@given(weights, st.integers(1, 7), st.randoms(use_true_random=False))
def test_assignment_is_a_balanced_partition_of_the_items_alone(weights, count, random):
    owner = assign(weights, count)
    assert set(owner) == set(weights)  # complete (and so, one shard each: disjoint)
    assert set(owner.values()) <= set(range(1, count + 1))
    loads = [sum(w for n, w in weights.items() if owner[n] == k) for k in range(1, count + 1)]
    # the longest-processing-time rule: any two shards differ by at most the heaviest item
    assert max(loads) - min(loads) <= max(weights.values(), default=0)
    shuffled = list(weights.items())
    random.shuffle(shuffled)
    assert assign(dict(shuffled), count) == owner  # the set decides, not the order given


def test_balanced_by_prompts_not_by_items():
    # one heavy item against nine light ones: by count it would be 5 and 5
    owner = assign({"heavy": 900, **{f"light{i}": 100 for i in range(9)}}, 2)
    assert [n for n, k in owner.items() if k == 1] == ["heavy"]


@pytest.mark.parametrize(
    ("text", "shard"), [("1/1", Shard(1, 1)), ("3/3", Shard(3, 3)), ("2/16", Shard(2, 16))]
)
def test_parse(text, shard):
    assert parse_shard(text) == shard
    assert str(shard) == text


def collected(pytester, *args: str, env: dict[str, str] | None = None) -> list[str]:
    """The node ids ``pytest --collect-only -q ARGS`` lists, run as its own process."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q"]
        + ["--competence-model", MODELS, *args],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode in (0, 5), done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if "::" in line]


def prompts_of(nodeid: str) -> int:
    return next(p for key, p in PROMPTS.items() if key in nodeid)


@pytest.mark.parametrize("count", [2, 3])
def test_shards_are_disjoint_and_complete(pytester, count):
    pytester.makepyfile(test_suite=SUITE)
    everything = collected(pytester)
    shards = [collected(pytester, f"--competence-shard={k}/{count}") for k in range(1, count + 1)]
    assert sorted(n for shard in shards for n in shard) == sorted(everything)  # each once
    assert "test_suite.py::test_plain" in shards[0]  # not a competence test: shard 1 only
    loads = [sum(prompts_of(n) for n in shard if "[" in n) for shard in shards]
    heaviest = max(prompts_of(n) for n in everything if "[" in n)
    assert max(loads) - min(loads) <= heaviest


def test_the_same_on_every_machine(pytester):
    """No hash randomisation: another PYTHONHASHSEED (another machine) selects the same."""
    pytester.makepyfile(test_suite=SUITE)
    runs = [
        collected(pytester, "--competence-shard=2/3", env={"PYTHONHASHSEED": seed})
        for seed in ("0", "12345")
    ]
    assert runs[0] == runs[1]
    assert runs[0]


def test_composes_with_k(pytester):
    """-k selects first; the shards divide what it kept."""
    pytester.makepyfile(test_suite=SUITE)
    chosen = collected(pytester, "-k", "test_horn or test_pairs")
    shards = [
        collected(pytester, "-k", "test_horn or test_pairs", f"--competence-shard={k}/2")
        for k in (1, 2)
    ]
    assert sorted(shards[0] + shards[1]) == sorted(chosen)
    assert not set(shards[0]) & set(shards[1])
    assert not any("test_ordering" in n for shard in shards for n in shard)
    # balanced over what -k kept: the shards divide the selection, not the whole suite
    loads = [sum(prompts_of(n) for n in shard) for shard in shards]
    assert max(loads) - min(loads) <= max(prompts_of(n) for n in chosen)


def test_workers_agree_under_xdist(pytester):
    """Each xdist worker selects on its own collection; they keep the same items, which the
    shard runs once each (xdist refuses workers that collected differently)."""
    pytester.makepyfile(test_suite=SUITE)
    alone = collected(pytester, "--competence-shard=1/2")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-n", "2", "-v", "--competence-model", MODELS,
        "--competence-shard=1/2",
    )  # fmt: skip
    ran = re.findall(r"\[gw\d\] \[ *\d+%\] [\w/]+ (test_suite\.py::\S+)", result.stdout.str())
    assert sorted(ran) == sorted(alone), result.stdout.str()


def test_header_names_the_shard(pytester):
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--competence-model", MODELS, "--competence-shard=2/3"
    )
    result.stdout.fnmatch_lines(
        ["competence shard 2/3: its part of the competence tests x models (other tests run in "
         "shard 1)", "*deselected*"]
    )  # fmt: skip
