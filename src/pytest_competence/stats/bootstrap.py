"""A fast paired bootstrap over matched instances, stratified by level or resampling clusters.

CBE paper, arXiv:2610.22894, §3.3: "Paired bootstrap intervals resample matched instances." App. B.2: "Bootstrap
intervals carry all presentations of a matched instance together; the reported catalog and GRPO
contrasts use 2,000 resamples stratified by relation."

Every figure the paper bootstraps — accuracy, R on the jointly parsed support, invariance, their
differences between arms, per-level κ and κ̄ — is a function of a few *sums over instances*. So a
replicate is a row of counts W (how often each instance was drawn), and all replicates' column
sums are one matrix product ``W @ X``. A figure is an :class:`AdditiveFigure`: per-instance
columns X and a vectorised statistic of their column sums; the builders below make the common ones.

Two exact samplers give the counts. In general each replicate draws its indices within each
stratum and counts them with one ``np.bincount``. But indicator columns repeat (a stratum often
has only a few distinct rows of X), and the sums then depend only on how often each distinct
row was drawn: exactly Multinomial(stratum size, row frequencies), one draw per replicate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from pytest_competence.stats.intervals import check_count, check_open_unit

__all__ = [
    "CHUNK",
    "ROWS_PER_DISTINCT_ROW",
    "AdditiveFigure",
    "BootstrapInterval",
    "Statistic",
    "accuracy_figure",
    "bootstrap_sums",
    "difference_figure",
    "invariance_figure",
    "kappa_bar_figure",
    "paired_bootstrap",
    "robust_correct_figure",
]

#: Replicates drawn per block: bounds memory (a few MB at N ≈ 1,800) whatever B is, and makes
#: the first k·CHUNK replicates identical whatever B is (a prefix-stable stream).
CHUNK = 1000

#: A stratum is resampled through its distinct rows when it has at least this many rows per
#: distinct row: per category, numpy's multinomial costs about what 30 index draws and their
#: counting cost (measured with numpy 2.4 on a 2-core x86 machine).
ROWS_PER_DISTINCT_ROW = 32

Statistic = Callable[[np.ndarray], np.ndarray]


class AdditiveFigure(NamedTuple):
    """A figure as per-instance ``columns`` (N × m) and a ``statistic`` of their column sums.

    ``statistic`` maps an array of sums of shape (..., m) to values of shape (...); it returns
    NaN where the figure is undefined (a zero denominator). Unpack it into
    :func:`paired_bootstrap`: ``paired_bootstrap(*figure, strata=levels)``.
    """

    columns: np.ndarray
    statistic: Statistic


@dataclass(frozen=True)
class BootstrapInterval:
    """A percentile interval and what it rests on (CBE paper, arXiv:2610.22894, §3.3, App. B.2).

    ``dropped`` counts replicates whose statistic was undefined (NaN or infinite); the
    percentiles are taken over the other ``B − dropped``. ``low``/``high`` are NaN if all dropped.
    """

    estimate: float
    low: float
    high: float
    B: int
    confidence: float
    dropped: int
    method: str = "percentile"


def bootstrap_sums(
    X: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    clusters: ArrayLike | None = None,
    B: int = 2000,
    seed: int = 0,
) -> np.ndarray:
    """Column sums of X in B bootstrap replicates, shape (B, m) (CBE paper, arXiv:2610.22894, App. B.2).

    Rows of X are resampled with replacement *within* each stratum, so every replicate keeps each
    stratum's size (``strata``: one label per row, or an (N, k) array whose rows combine several
    labels, e.g. level and relation). With ``clusters`` (one label per row), whole clusters are
    drawn instead — all rows of a cluster together — within strata; each cluster must then lie in
    one stratum. Seeded: equal arguments give equal arrays.
    """
    columns = _matrix(X)
    B = _positive(B, "B")
    seed = check_count(seed, "seed")
    stratum = _codes(strata, columns.shape[0], "strata")
    if clusters is not None:
        columns, stratum = _by_cluster(
            columns, stratum, _codes(clusters, columns.shape[0], "clusters")
        )
    rows, width = columns.shape
    # Integer columns give integer sums below 2**24 here, which float32 represents exactly; the
    # smaller product is then both faster and no less exact than float64.
    exact32 = bool(np.all(columns == np.round(columns))) and rows * np.abs(columns).max() < 2**24
    dtype = np.float32 if exact32 else np.float64
    order = np.argsort(stratum, kind="stable")
    bounds = np.cumsum(np.bincount(stratum))[:-1]
    plans = [_plan(rows_of_stratum, dtype) for rows_of_stratum in np.split(columns[order], bounds)]
    rng = np.random.default_rng(seed)
    sums = np.zeros((B, width))
    for first in range(0, B, CHUNK):
        block = min(CHUNK, B - first)
        for plan in plans:
            sums[first : first + block] += plan.counts(rng, block).astype(dtype) @ plan.rows
    return sums


def paired_bootstrap(
    X: ArrayLike,
    statistic: Statistic,
    *,
    strata: ArrayLike | None = None,
    clusters: ArrayLike | None = None,
    B: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapInterval:
    """Percentile interval of ``statistic(column sums of X)`` over matched instances.

    The estimate is the statistic of the full-sample sums; the interval is the (α/2, 1 − α/2)
    quantiles (linear interpolation, as ``scipy.stats.bootstrap``'s percentile method) of the
    statistic over the B replicates of :func:`bootstrap_sums`, undefined replicates dropped and
    counted. CBE paper, arXiv:2610.22894, App. B.2 uses B = 2,000.
    """
    confidence = check_open_unit(confidence, "confidence", "0.95")
    columns = _matrix(X)
    sums = bootstrap_sums(columns, strata=strata, clusters=clusters, B=B, seed=seed)
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = np.asarray(statistic(columns.sum(axis=0)), dtype=float)
        values = np.asarray(statistic(sums), dtype=float)
    if estimate.shape != () or values.shape != (B,):
        raise ValueError(
            f"statistic must map sums of shape (..., m) to shape (...): got {estimate.shape} for "
            f"one row of sums and {values.shape} for {B} rows; reduce over the last axis only"
        )
    defined = values[np.isfinite(values)]
    alpha = 1.0 - confidence
    low, high = np.quantile(defined, [alpha / 2, 1 - alpha / 2]) if defined.size else (np.nan,) * 2
    return BootstrapInterval(
        float(estimate), float(low), float(high), B, confidence, int(B - defined.size)
    )


def accuracy_figure(correct: ArrayLike) -> AdditiveFigure:
    """Mean accuracy over presentations, invalid answers counted wrong (CBE paper, arXiv:2610.22894, §3.3).

    ``correct`` is boolean (N,) or (N, P) for P presentations; the figure is Σ correct / (P·N),
    written with a count column so that cluster resampling with unequal clusters stays exact.
    """
    hits = _boolean(correct, "correct")
    counts = np.full(hits.shape[0], hits.shape[1], dtype=float)
    return AdditiveFigure(np.column_stack([hits.sum(axis=1), counts]), _ratio)


def robust_correct_figure(correct: ArrayLike, valid: ArrayLike) -> AdditiveFigure:
    """R: every presentation correct, on jointly parsed instances (CBE paper, arXiv:2610.22894, §3.2–3.3).

    ``correct`` and ``valid`` are boolean (N, K + 1); NaN when no instance is jointly parsed.
    """
    hits, parsed = _answers_and_validity(correct, valid, "correct")
    joint = parsed.all(axis=1)
    return AdditiveFigure(np.column_stack([joint & hits.all(axis=1), joint]).astype(float), _ratio)


def invariance_figure(correct: ArrayLike, valid: ArrayLike) -> AdditiveFigure:
    """ι = R + D: all presentations correct or all wrong, on jointly parsed instances (§3.2).

    With binary answers and a shared gold label this is answer agreement. Shapes as in
    :func:`robust_correct_figure`.
    """
    hits, parsed = _answers_and_validity(correct, valid, "correct")
    joint = parsed.all(axis=1)
    agree = joint & (hits.all(axis=1) | ~hits.any(axis=1))
    return AdditiveFigure(np.column_stack([agree, joint]).astype(float), _ratio)


def kappa_bar_figure(said_yes: ArrayLike, valid: ArrayLike, levels: ArrayLike) -> AdditiveFigure:
    """κ̄: the mean over levels of κ_n = (ι_n − ι_e)/(1 − ι_e) (CBE paper, arXiv:2610.22894, §3.2, App. A).

    ``said_yes`` and ``valid`` are boolean (N, 2) for two presentations, ``levels`` (N,). Per
    level, ι_n is the agreement and q the pooled yes-rate over both presentations, both on the
    jointly parsed pairs; ι_e = q² + (1 − q)². As :func:`~pytest_competence.stats.kappa_bar`,
    the mean skips levels where κ_n is undefined (q ∈ {0, 1} or no jointly parsed pair), in the
    estimate and in every replicate alike; a replicate with no defined level is dropped. For one
    level's κ_n, pass that level's rows only.
    """
    yes, parsed = _answers_and_validity(said_yes, valid, "said_yes")
    if yes.shape[1] != 2:
        raise ValueError(
            f"said_yes must have one column per presentation of a pair, shape (N, 2), got "
            f"{yes.shape}; select the two presentations to compare"
        )
    level_of = np.asarray(levels)
    if level_of.shape != (yes.shape[0],):
        raise ValueError(f"levels must have shape ({yes.shape[0]},), got {level_of.shape}")
    joint = parsed.all(axis=1)
    per_pair = np.column_stack([joint & (yes[:, 0] == yes[:, 1]), joint, joint * yes.sum(axis=1)])
    members = level_of[:, None] == np.unique(level_of)[None, :]  # (N, L)
    # Column blocks of L columns each: agreeing pairs, jointly parsed pairs, yes answers.
    columns = (per_pair[:, :, None] * members[:, None, :]).reshape(len(level_of), -1).astype(float)
    return AdditiveFigure(columns, _kappa_bar_of_sums)


def difference_figure(first: AdditiveFigure, second: AdditiveFigure) -> AdditiveFigure:
    """``first − second`` on the same matched instances, e.g. between presentations or arms."""
    if first.columns.shape[0] != second.columns.shape[0]:
        raise ValueError(
            f"first and second must cover the same matched instances, got "
            f"{first.columns.shape[0]} and {second.columns.shape[0]} rows"
        )
    split = first.columns.shape[1]

    def statistic(sums: np.ndarray) -> np.ndarray:
        return first.statistic(sums[..., :split]) - second.statistic(sums[..., split:])

    return AdditiveFigure(np.hstack([first.columns, second.columns]), statistic)


def _ratio(sums: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sums[..., 1] > 0, sums[..., 0] / sums[..., 1], np.nan)


def _kappa_bar_of_sums(sums: np.ndarray) -> np.ndarray:
    levels = sums.shape[-1] // 3
    agree, joint, yes = (sums[..., i * levels : (i + 1) * levels] for i in range(3))
    with np.errstate(divide="ignore", invalid="ignore"):
        iota = agree / joint
        q = yes / (2 * joint)
        # κ = 1 − (1 − ι)/(1 − ι_e) with 1 − ι_e = 2q(1 − q), as in stats.kappa
        kappa = np.where((q > 0) & (q < 1), 1 - (1 - iota) / (2 * q * (1 - q)), np.nan)
        defined = np.isfinite(kappa)
        total = np.where(defined, kappa, 0.0).sum(axis=-1)
        return np.where(defined.any(axis=-1), total / defined.sum(axis=-1), np.nan)


def _matrix(X: ArrayLike) -> np.ndarray:
    columns = np.asarray(X, dtype=float)
    if columns.ndim == 1:
        columns = columns[:, None]
    if columns.ndim != 2 or columns.shape[0] == 0 or not np.all(np.isfinite(columns)):
        raise ValueError(
            f"X must be a finite (N, m) array with N ≥ 1 instances, got shape {np.shape(X)}; "
            f"one row per matched instance, one column per additive quantity"
        )
    return columns


def _positive(value: object, name: str) -> int:
    count = check_count(value, name)
    if count == 0:
        raise ValueError(f"{name} must be at least 1, got {name}=0; e.g. {name}=2000")
    return count


def _codes(labels: ArrayLike | None, rows: int, name: str) -> np.ndarray:
    if labels is None:
        return np.zeros(rows, dtype=np.int64)
    array = np.asarray(labels)
    if array.shape[:1] != (rows,) or array.ndim not in (1, 2):
        raise ValueError(
            f"{name} must hold one label per row of X, shape ({rows},) or ({rows}, k), got "
            f"{array.shape}"
        )
    if array.ndim == 2:  # each row one combined label
        inverse = np.unique(array, axis=0, return_inverse=True)[1]
    else:  # no axis: np.unique takes object arrays (e.g. of str) only without one
        inverse = np.unique(array, return_inverse=True)[1]
    return np.asarray(inverse, dtype=np.int64).reshape(rows)


def _by_cluster(
    columns: np.ndarray, stratum: np.ndarray, cluster: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    count = int(cluster.max()) + 1
    summed = np.zeros((count, columns.shape[1]))
    np.add.at(summed, cluster, columns)
    home = np.zeros(count, dtype=np.int64)
    home[cluster] = stratum
    if np.any(home[cluster] != stratum):
        raise ValueError(
            "clusters must be nested in strata: a cluster's rows span several strata; give "
            "every row of a cluster the same stratum label, or drop strata"
        )
    return summed, home


class _Plan(NamedTuple):
    """How one stratum is resampled: ``counts(rng, block)`` gives each of ``rows`` a weight."""

    rows: np.ndarray  # the stratum's rows of X, or its distinct rows
    multiplicity: np.ndarray | None  # how often each distinct row occurs; None: rows as given

    def counts(self, rng: np.random.Generator, block: int) -> np.ndarray:
        if self.multiplicity is not None:
            size = int(self.multiplicity.sum())
            return rng.multinomial(size, self.multiplicity / size, size=block)
        size = self.rows.shape[0]
        # int16 draws are numpy's fastest unbiased bounded integers for the usual strata; one
        # bincount counts all replicates at once, replicate r's draws shifted to r·size onwards.
        dtype = np.int16 if size <= np.iinfo(np.int16).max else np.int64
        draws = rng.integers(0, size, size=(block, size), dtype=dtype)
        flat = np.add(draws, np.arange(0, block * size, size)[:, None]).ravel()
        return np.bincount(flat, minlength=block * size).reshape(block, size)


def _plan(rows: np.ndarray, dtype: type[np.floating]) -> _Plan:
    distinct, multiplicity = np.unique(rows, axis=0, return_counts=True)
    if len(distinct) * ROWS_PER_DISTINCT_ROW <= rows.shape[0]:
        # Most frequent first: numpy's multinomial chains binomials, cheapest in this order.
        order = np.argsort(-multiplicity, kind="stable")
        return _Plan(distinct[order].astype(dtype), multiplicity[order])
    return _Plan(rows.astype(dtype), None)


def _boolean(values: ArrayLike, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2 or array.dtype != np.bool_ or array.shape[0] == 0:
        raise ValueError(
            f"{name} must be a non-empty boolean array (N,) or (N, presentations), got "
            f"dtype={array.dtype}, shape={np.shape(values)}"
        )
    return array


def _answers_and_validity(
    answers: ArrayLike, valid: ArrayLike, name: str
) -> tuple[np.ndarray, np.ndarray]:
    first, parsed = _boolean(answers, name), _boolean(valid, "valid")
    if first.shape != parsed.shape:
        raise ValueError(
            f"{name} and valid must have the same shape (one entry per instance and "
            f"presentation), got {first.shape} and {parsed.shape}"
        )
    return first, parsed
