"""``--competence-shard=K/N``: this process runs the K-th of N disjoint parts of a suite.

The competence test × model items are assigned to shards by their designs' prompt counts
(:attr:`~pytest_competence.engine.spec.CompetenceSpec.prompt_count`), not by their number: heaviest
first, node id breaking ties, each to the lightest shard so far, the first on a tie (the
longest-processing-time rule). The assignment (:func:`assign`) is a pure function of the
selected items' node ids and sizes — no hash, no clock — so every shard, on every machine,
computes the same one and keeps its own part: the shards are disjoint, and together complete.

The selection runs last among the ``pytest_collection_modifyitems`` hooks, after ``-k``, ``-m``
and file selection, and sees what they kept: shards given different selections (another ``-k``,
other files, other models) compute different assignments, so every shard must be given the
same command but for K. Under ``-n`` each xdist worker collects and selects alike, so workers
and controller agree on the shard's items.

Tests that are not competence tests (no ``competence`` marker; also a plain test that takes
``competence_model``) run in shard 1 only: together the shards run every test once, and such
a test has no declared size to balance by. Each shard writes its own reports
(``--competence-json``); ``competence merge`` joins the archives into one
(:mod:`pytest_competence.report._merge`).
"""

from __future__ import annotations

import argparse
import heapq
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

__all__ = ["Shard", "add_option", "assign", "parse_shard", "prompt_weight"]


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (1 ≤ index ≤ count)."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """The ``K/N`` of ``--competence-shard``; ``argparse.ArgumentTypeError`` names the fix
    (pytest prefixes it with the option: a usage error, exit 4)."""
    k, slash, n = text.partition("/")
    try:
        index, count = int(k), int(n)
    except ValueError:
        slash = ""
    if not slash:
        raise argparse.ArgumentTypeError(
            f"expected K/N, shard K of N shards, e.g. --competence-shard=1/3; got {text!r}"
        )
    if count < 1:
        raise argparse.ArgumentTypeError(
            f"got {text!r}: N is the number of shards, at least 1, e.g. --competence-shard=1/3"
        )
    if not 1 <= index <= count:
        raise argparse.ArgumentTypeError(
            f"got {text!r}: K counts the shards from 1 to N={count}, e.g. "
            f"--competence-shard=1/{count} … {count}/{count} (in a Slurm array, "
            f"$((SLURM_ARRAY_TASK_ID+1))/$SLURM_ARRAY_TASK_COUNT)"
        )
    return Shard(index, count)


def add_option(group: Any) -> None:
    """``--competence-shard``, in the plugin's option group."""
    group.addoption(
        "--competence-shard",
        type=parse_shard,
        metavar="K/N",
        dest="competence_shard",
        help="Run shard K of N: a deterministic part of the competence test x model items, "
        "balanced by prompt count (other tests run in shard 1); give every shard the same "
        "selection, and join their --competence-json archives with 'competence merge'",
    )


def assign(weights: Mapping[str, int], count: int) -> dict[str, int]:
    """Each node id's shard, 1 to ``count``: the longest-processing-time rule over ``weights``
    (prompts per item), heaviest first and node id next, each to the lightest shard (the first
    on a tie). The loads of any two shards differ by at most the heaviest item."""
    loads = [(0, shard) for shard in range(1, count + 1)]  # already a heap
    owner = {}
    for nodeid in sorted(weights, key=lambda n: (-weights[n], n)):
        load, shard = heapq.heappop(loads)
        owner[nodeid] = shard
        heapq.heappush(loads, (load + weights[nodeid], shard))
    return owner


def prompt_weight(item: pytest.Item) -> int | None:
    """The prompts a competence test × model item asks (its declared design, parameters
    applied); ``None`` for any other test, 1 for a declaration its own setup will refuse."""
    marker = item.get_closest_marker("competence")
    params = getattr(getattr(item, "callspec", None), "params", {})
    if marker is None or "competence_model" not in params:
        return None
    from pytest_competence.engine.spec import overridable, spec_from_marker

    names = overridable(marker.args, marker.kwargs)
    try:
        spec = spec_from_marker(
            marker.args, marker.kwargs, {k: v for k, v in params.items() if k in names}
        )
    except Exception:  # the test's own setup reports it, with the test's name
        return 1
    return spec.prompt_count


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep this shard's items; the others are deselected (pytest counts them)."""
    shard: Shard | None = config.getoption("competence_shard", None)
    if shard is None:
        return
    weights: dict[str, int] = {}
    for item in items:
        weight = prompt_weight(item)
        if weight is not None:
            weights[item.nodeid] = weight
    owner = assign(weights, shard.count)
    kept: list[pytest.Item] = []
    deselected: list[pytest.Item] = []
    for item in items:
        (kept if owner.get(item.nodeid, 1) == shard.index else deselected).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


def pytest_report_header(config: pytest.Config) -> str | None:
    shard = config.getoption("competence_shard", None)
    if shard is None:
        return None
    return f"competence shard {shard}: its part of the competence tests x models" + (
        " and every other test" if shard.index == 1 else " (other tests run in shard 1)"
    )
