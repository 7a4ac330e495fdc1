"""Systematicity of rule-induction evaluations: any / fraction / all per isomorphism type.

systematicity paper, arXiv:2609.13948, §3.5: for each task ``T`` and ``K`` sampled isomorphic variations ``τ_k(T)``, a learner
solves-any (max_k pass), a fraction (mean_k pass) and solves-all (min_k pass); the three are
averaged over tasks and ``gap = any − all`` is the share of tasks solved in some variations but
not all. Under stochastic decoding each pass is the strict majority over ``N`` attempts (§3.6),
which :func:`pytest_competence.engine.evaluate.majority` already made the observation's answer; with
``N ≥ 2`` and ``K ≥ 2`` the within/between-variation variance decomposition of App. A is
reported on the per-attempt correctness as well.

Everything here reads only what a prompt record keeps — ``params["isomorphism"]``,
``params["variation"]``, ``params["n"]``, the gold answer and the parsed answers — so a live
evaluation and one rebuilt from an archive (``competence report RESULTS.json``) give the same
summary. The original task is reported on its own: it is not one of the ``K`` sampled
variations. "Pooled" stacks every isomorphism type's variations of a task into one row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pytest_competence import stats
from pytest_competence.protocol import Evaluated, Observation

__all__ = ["systematicity_summary"]

_METRICS = ("any", "fraction", "all", "gap")


def _float(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def _intervals(solved: np.ndarray, B: int, seed: int) -> dict[str, list[float]]:
    """95% percentile intervals of the four metrics from ``B`` resamples of whole tasks (rows)."""
    per_task = {
        "any": solved.any(axis=1),
        "fraction": solved.mean(axis=1),
        "all": solved.all(axis=1),
    }
    per_task["gap"] = per_task["any"].astype(float) - per_task["all"]
    rows = np.random.default_rng([seed, 2]).integers(0, len(solved), (B, len(solved)))
    out = {}
    for name in _METRICS:
        means = np.asarray(per_task[name], dtype=float)[rows].mean(axis=1)
        low, high = np.quantile(means, [0.025, 0.975])
        out[name] = [float(low), float(high)]
    return out


def _metrics(solved: np.ndarray, boot: tuple[int, int] | None) -> dict[str, Any]:
    """stats.systematicity of a (tasks × variations) matrix; intervals if ``boot = (B, seed)``."""
    out: dict[str, Any] = {
        "tasks": int(solved.shape[0]),
        "variations": int(solved.shape[1]),
        **stats.systematicity(solved),
    }
    if boot is not None and boot[0] > 0:
        out["ci"] = _intervals(solved, *boot)
    return out


def _original(solved: np.ndarray, *, ci: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"tasks": len(solved), "solved": float(solved.mean())}
    if ci:
        out["ci"] = list(stats.wilson_interval(int(solved.sum()), len(solved)))
    return out


@dataclass(frozen=True)
class _Cell:
    """What the figures read of one observation: its type and variation, whether it is
    correct, and whether each attempt was (a task's rows hold these, not the prompts)."""

    kind: str | None
    variation: int
    correct: bool
    passes: tuple[bool, ...]


def _cells(row: Sequence[Observation]) -> list[_Cell]:
    return [
        _Cell(
            o.prompt.params.get("isomorphism"),
            o.prompt.params.get("variation", 0),
            o.correct,
            tuple(parsed.answer == o.prompt.gold for _, parsed in o.attempts),
        )
        for o in row
    ]


def _grid(rows: Sequence[Sequence[_Cell]], kind: str | None) -> list[list[_Cell]]:
    """Per task, the cells of type ``kind`` in variation order."""
    return [sorted((c for c in row if c.kind == kind), key=lambda c: c.variation) for row in rows]


def _solved(grid: list[list[_Cell]]) -> np.ndarray:
    return np.array([[c.correct for c in row] for row in grid], dtype=bool).reshape(len(grid), -1)


def _attempts(grid: list[list[_Cell]]) -> np.ndarray | None:
    """(tasks, K, N) per-attempt correctness, or ``None`` when N or K is below 2 or ragged."""
    counts = {len(c.passes) for row in grid for c in row}
    if len(counts) != 1 or min(counts) < 2 or min(len(row) for row in grid) < 2:
        return None
    return np.array([[c.passes for c in row] for row in grid], dtype=bool)


def _variance(passed: np.ndarray) -> dict[str, Any]:
    """App. A's normalised components, averaged over the tasks where p̂ ∉ {0, 1}."""
    decomposition = stats.variance_decomposition(passed)
    defined = int((~np.isnan(decomposition.rho_total)).sum())
    return {
        "tasks": int(passed.shape[0]),
        "variations": int(passed.shape[1]),
        "attempts": int(passed.shape[2]),
        "tasks_defined": defined,
        **{k: _float(v) for k, v in decomposition.mean().items()},
    }


def _block(
    rows: Sequence[Sequence[_Cell]], kinds: Sequence[str | None], boot: tuple[int, int] | None
) -> dict[str, Any]:
    """Original, per type and pooled figures of one set of tasks (all, or one level's)."""
    out: dict[str, Any] = {}
    if "original" in kinds:
        out["original"] = _original(_solved(_grid(rows, "original"))[:, 0], ci=boot is not None)
    types = [k for k in kinds if k != "original"]
    grids = {kind: _grid(rows, kind) for kind in types}
    usable = {kind: g for kind, g in grids.items() if all(len(r) == len(g[0]) > 0 for r in g)}
    out["types"] = {kind: _metrics(_solved(g), boot) for kind, g in usable.items()}
    if usable:
        pooled = np.hstack([_solved(g) for g in usable.values()])
        out["pooled"] = _metrics(pooled, boot)
    return out


def systematicity_summary(
    evaluation: Evaluated, *, bootstrap: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """``summary["systematicity"]`` of a rule-induction evaluation, or ``{}`` for any other.

    Keys: ``original`` (solved share of the unvaried tasks, Wilson interval), ``types`` (per
    isomorphism type: tasks, variations K, any, fraction, all, gap and, with ``bootstrap`` > 0,
    95% percentile intervals ``ci`` from that many resamples of whole tasks), ``pooled`` (every
    type's variations of a task in one row), ``by_level`` (the same per level n, without
    intervals), ``attempts`` N, ``bootstrap`` and, with N ≥ 2 and K ≥ 2, ``variance`` (per type
    and pooled: mean ρ_total, ρ_within, ρ_between over the tasks where they are defined).
    """
    rows: list[list[_Cell]] = []
    for _, _, row in evaluation.rows():  # regenerated chunk by chunk, kept as cells
        if not all("isomorphism" in o.prompt.params for o in row):
            return {}
        rows.append(_cells(row))
    if not rows:
        return {}
    kinds = list(dict.fromkeys(c.kind for c in rows[0]))
    attempts = max((len(c.passes) for row in rows for c in row), default=0) or 1
    out: dict[str, Any] = {"attempts": attempts, **_block(rows, kinds, (bootstrap, seed))}
    if bootstrap:
        out["bootstrap"] = {"B": bootstrap, "seed": seed, "resampled": "tasks"}
    levels = evaluation.level.tolist()
    out["by_level"] = [
        {"n": n, **_block([r for r, m in zip(rows, levels) if m == n], kinds, None)}
        for n in dict.fromkeys(levels)
    ]
    variance = {}
    stacked: list[np.ndarray] = []
    for kind in out["types"]:
        passed = _attempts(_grid(rows, kind))
        if passed is not None:
            variance[kind] = _variance(passed)
            stacked.append(passed)
    if variance:
        variance["pooled"] = _variance(np.concatenate(stacked, axis=1))
        out["variance"] = variance
    return {"systematicity": out}
