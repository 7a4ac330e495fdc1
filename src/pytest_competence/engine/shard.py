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

__all__ = ["Shard", "assign", "parse_shard"]


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
