"""Confidence bounds on a paired accuracy difference, and the non-inferiority decision.

Two arms answer the same ``pairs`` instances. ``b`` counts instances the candidate got right and
the baseline wrong, ``c`` the reverse (the counts of :func:`~pytest_competence.stats.mcnemar`
with the candidate as the first arm), so the accuracy difference, candidate − baseline, is
Δ̂ = (b − c)/n. The paired difference cancels the instances' shared difficulty, as Miller,
"Adding Error Bars to Evals" (arXiv:2411.00640, its section on paired differences), recommends.

The interval is Tango's score interval for a difference of paired proportions (Tango, "Equivalence
test and confidence interval for the difference in proportions for the paired-sample design",
Statistics in Medicine 17:891–908, 1998), among those Fagerland, Lydersen and Laake
("Recommended tests and confidence intervals for paired binomial proportions", Statistics in
Medicine 33:2850–2875, 2014) recommend. It inverts a score test, so its bound and the
non-inferiority p-value always agree: the bound lies above −margin exactly when the one-sided
p-value of H0: Δ ≤ −margin is below 1 − confidence. Up to :data:`EXACT_UP_TO_PAIRS` pairs the
test is exact (unconditional), so its size never exceeds α, which the asymptotic test's does at
small n. statsmodels has no interval or non-inferiority test for a paired difference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import gammaln, ndtr, ndtri

from pytest_competence.stats.intervals import check_count, check_open_unit
from pytest_competence.stats.paired import holm

__all__ = [
    "EXACT_UP_TO_PAIRS",
    "NUISANCE_GRID",
    "NonInferiority",
    "NonInferiorityCell",
    "NonInferiorityMethod",
    "check_margin",
    "check_table",
    "noninferiority_decision",
    "noninferiority_p_value",
    "paired_difference_interval",
    "paired_lower_bound",
    "tango_statistic",
]

#: At most this many pairs, ``method="auto"`` uses the exact unconditional test. Its cost grows
#: with the n²/2 possible tables: about 10 ms a p-value and 0.2 s a bound at 100 pairs.
EXACT_UP_TO_PAIRS = 100

#: Nuisance values searched on a grid before the best one is refined (see ``_ExactTail``).
NUISANCE_GRID = 200

NonInferiorityMethod = Literal["auto", "exact", "score"]


def tango_statistic(b: int, c: int, pairs: int, delta0: float) -> float:
    """Tango's score statistic for H0: Δ = ``delta0`` (Tango 1998).

    With n = ``pairs``, π₁₂ and π₂₁ the probabilities of the ``b`` and ``c`` cells and
    Δ = π₁₂ − π₂₁::

        T(Δ₀) = (b − c − nΔ₀) / sqrt(n · (2π̃₂₁ + Δ₀(1 − Δ₀)))

    where π̃₂₁ is the maximum-likelihood estimate of π₂₁ under Δ = Δ₀, the positive root of
    ``2n·π² + (−b − c + (2n − b + c)Δ₀)·π − cΔ₀(1 − Δ₀) = 0``. The denominator is the variance of
    b − c under the restricted fit, n(ψ̃ − Δ₀²) with ψ̃ = π̃₁₂ + π̃₂₁. T decreases in Δ₀; at Δ₀ = 0
    it is McNemar's uncorrected statistic (b − c)/sqrt(b + c). With no discordant pair at
    Δ₀ = 0 (0/0) it is 0: nothing speaks either way.

    Raises:
        TypeError, ValueError: a count is not a non-negative int, ``b + c > pairs``, or
            ``delta0`` is outside (−1, 1).
    """
    b, c, n = check_table(b, c, pairs)
    return float(_tango(np.array([b]), np.array([c]), n, _check_delta(delta0, "delta0"))[0])


def noninferiority_p_value(
    b: int, c: int, pairs: int, *, margin: float, method: NonInferiorityMethod = "auto"
) -> float:
    """One-sided p-value of H0: Δ ≤ −``margin`` against H1: Δ > −``margin`` (Δ = candidate −
    baseline accuracy).

    ``method="score"``: ``1 − Φ(T(−margin))``, T the statistic of :func:`tango_statistic`.
    ``method="exact"``: the exact unconditional p-value ordered by T at −margin,
    ``sup_θ P_θ(T(B, C; −margin) ≥ T(b, c; −margin))`` over the tables (B, C) of ``pairs``
    instances, at the boundary Δ = −margin with the nuisance θ = π₂₁ ∈ [margin, (1 + margin)/2]
    (Chan, Tang, Tang and Chan, "Exact unconditional tests for equivalence or noninferiority for
    paired binary endpoints", Biometrics 59:1170–1177, 2003; ties count as at least as extreme).
    T grows with B and falls with C (tested up to 100 pairs), so the region is Barnard-convex and
    the test has size at most α over all of H0. The supremum is searched on
    :data:`NUISANCE_GRID` values and refined around the best. ``"auto"``: exact up to
    :data:`EXACT_UP_TO_PAIRS` pairs. ``margin = 0`` is a one-sided McNemar test.

    Raises:
        TypeError, ValueError: bad counts, ``margin`` outside [0, 1), or an unknown ``method``.
    """
    b, c, n = check_table(b, c, pairs)
    margin = check_margin(margin)
    if _is_exact(method, n):
        return _ExactTail(b, c, n, order_at=-margin).p_value(-margin)
    return float(ndtr(-_tango(np.array([b]), np.array([c]), n, -margin)[0]))


def paired_lower_bound(
    b: int,
    c: int,
    pairs: int,
    *,
    confidence: float = 0.95,
    margin: float = 0.0,
    method: NonInferiorityMethod = "auto",
) -> float:
    """One-sided lower confidence bound on Δ = (candidate − baseline) accuracy, in [−1, 1].

    The boundary between the Δ₀ whose H0: Δ ≤ Δ₀ the one-sided test rejects at level
    α = 1 − ``confidence`` and those it does not. ``"score"``: the root of ``T(Δ₀) = z_{1−α}``
    (Tango's interval; T decreases in Δ₀; Brent's method). ``"exact"``: the exact
    unconditional test of :func:`noninferiority_p_value` with its tables ordered by T at
    −``margin`` for every Δ₀, whose p-value then rises with Δ₀ (a fixed Barnard-convex
    ordering), found by bisection to 1e-7. (Ordering by T at each Δ₀ instead makes the exact
    p-value saw-toothed in Δ₀, and the bound could then disagree with the test at the margin.)
    Either way ``bound > −margin`` exactly when ``noninferiority_p_value(..., margin=margin)
    < α``; the score bound does not depend on ``margin``, the exact one only through the
    ordering. ``confidence`` is one-sided: 0.95 gives the lower end of a two-sided 90%
    interval. When every pair is discordant against the candidate (``c = pairs``) it is −1.

    Raises:
        TypeError, ValueError: bad counts, ``confidence`` outside (0, 1), ``margin`` outside
            [0, 1), or an unknown ``method``.
    """
    b, c, n = check_table(b, c, pairs)
    alpha = 1.0 - check_open_unit(confidence, "confidence", "0.95")
    margin = check_margin(margin)
    estimate = (b - c) / n
    if c == n:
        return -1.0
    if _is_exact(method, n):
        tail = _ExactTail(b, c, n, order_at=-margin)
        return _bisect(lambda d0: tail.p_value(d0, at_least=alpha) < alpha, estimate)
    z = float(ndtri(1.0 - alpha))
    high = min(estimate, 1.0 - 1e-12)
    if _tango(np.array([b]), np.array([c]), n, high)[0] >= z:  # only when estimate = 1
        return high
    return float(
        brentq(
            lambda d0: _tango(np.array([b]), np.array([c]), n, d0)[0] - z,
            -1.0 + 1e-12,
            high,
            xtol=1e-12,
        )
    )


def paired_difference_interval(
    b: int, c: int, pairs: int, *, confidence: float = 0.95
) -> tuple[float, float]:
    """Tango's two-sided score interval on Δ = (candidate − baseline) accuracy.

    Each end is a one-sided score bound at ``(1 + confidence)/2`` (:func:`paired_lower_bound`
    with ``method="score"``); the upper end is minus the lower bound with the arms swapped
    (``b`` and ``c`` exchanged). It contains Δ̂ = (b − c)/n. Always the score interval, which
    Fagerland, Lydersen and Laake (2014, §8) recommend at every sample size: an exact interval
    needs an ordering of the tables fixed in advance, which only a margin provides
    (:func:`paired_lower_bound`).
    """
    one_sided = (1.0 + check_open_unit(confidence, "confidence", "0.95")) / 2.0
    low = paired_lower_bound(b, c, pairs, confidence=one_sided, method="score")
    high = -paired_lower_bound(c, b, pairs, confidence=one_sided, method="score")
    return (low, high)


@dataclass(frozen=True)
class NonInferiorityCell:
    """One comparison (a level × presentation) of the non-inferiority decision.

    ``delta`` is Δ̂ = (b − c)/pairs; ``lower`` the one-sided bound at 1 − α; ``p_value`` the
    one-sided p of H0: Δ ≤ −margin and ``p_holm`` its Holm-adjusted value across the cells;
    ``alpha_holm`` the level Holm tests this cell at, α/(m − r + 1) for the cell of rank r
    (ascending p) among m, and ``lower_holm`` the bound at 1 − ``alpha_holm``.
    ``noninferior`` is ``p_holm < α``. Holm stops at its first non-rejection, so a cell ranked
    after a failing one may show ``lower_holm > −margin`` and still not be declared.
    """

    b: int
    c: int
    pairs: int
    delta: float
    lower: float
    p_value: float
    p_holm: float
    alpha_holm: float
    lower_holm: float
    noninferior: bool
    method: Literal["exact", "score"]


@dataclass(frozen=True)
class NonInferiority:
    """The non-inferiority decision over a family of cells: ``passed`` when every cell is
    non-inferior after Holm, which is when every ``lower_holm`` lies above −``margin``."""

    margin: float
    alpha: float
    cells: tuple[NonInferiorityCell, ...]
    passed: bool


def noninferiority_decision(
    cells: Sequence[tuple[int, int, int]],
    *,
    margin: float,
    alpha: float = 0.05,
    method: NonInferiorityMethod = "auto",
) -> NonInferiority:
    """Non-inferiority at every cell: one-sided tests of H0: Δ ≤ −margin, Holm across cells.

    ``cells`` holds one ``(b, c, pairs)`` per level × presentation (counts as in
    :func:`~pytest_competence.stats.mcnemar_paired` with the candidate first); the result keeps
    their order. ``alpha`` is one-sided. The checkpoint passes when Holm rejects every H0, i.e.
    when each cell's bound at the level Holm tests it at lies above −margin: evidence that
    no cell lost more than the margin, with family-wise error α over the per-cell claims.
    (The pass/fail verdict alone is an intersection–union test, whose error is at most α with
    no correction at all: Berger, "Multiparameter hypothesis testing and acceptance sampling",
    Technometrics 24:295–300, 1982. Holm is stricter; it is what makes each cell's
    "non-inferior" a claim of its own.)

    Raises:
        ValueError: no cells (a gate that compared nothing has not passed), a bad count,
            ``margin`` outside [0, 1) or ``alpha`` outside (0, 1).
    """
    margin = check_margin(margin)
    alpha = check_open_unit(alpha, "alpha", "0.05")
    tables = [check_table(*cell) for cell in cells]
    if not tables:
        raise ValueError(
            "cells must hold at least one (b, c, pairs) comparison, got none; a "
            "non-inferiority gate that compared nothing has not passed"
        )
    p_values = [noninferiority_p_value(b, c, n, margin=margin, method=method) for b, c, n in tables]
    adjusted = holm(p_values)
    order = np.argsort(p_values, kind="stable")
    rank = np.empty(len(tables), dtype=int)
    rank[order] = np.arange(len(tables))
    results = []
    for (b, c, n), p, p_adj, r in zip(tables, p_values, adjusted, rank.tolist(), strict=True):
        alpha_holm = alpha / (len(tables) - r)
        results.append(
            NonInferiorityCell(
                b=b,
                c=c,
                pairs=n,
                delta=(b - c) / n,
                lower=paired_lower_bound(
                    b, c, n, confidence=1.0 - alpha, margin=margin, method=method
                ),
                p_value=p,
                p_holm=p_adj,
                alpha_holm=alpha_holm,
                lower_holm=paired_lower_bound(
                    b, c, n, confidence=1.0 - alpha_holm, margin=margin, method=method
                ),
                noninferior=p_adj < alpha,
                method="exact" if _is_exact(method, n) else "score",
            )
        )
    return NonInferiority(
        margin=margin,
        alpha=alpha,
        cells=tuple(results),
        passed=all(cell.noninferior for cell in results),
    )


# --- the computation -----------------------------------------------------------------------------


def _tango(b: np.ndarray, c: np.ndarray, n: int, d0: float) -> np.ndarray:
    """Tango's T for arrays of tables (b, c) of n pairs at Δ₀ = d0 (see :func:`tango_statistic`)."""
    b = b.astype(float)
    c = c.astype(float)
    quad_b = -b - c + (2.0 * n - b + c) * d0
    quad_c = -c * d0 * (1.0 - d0)
    root = (-quad_b + np.sqrt(np.maximum(quad_b * quad_b - 8.0 * n * quad_c, 0.0))) / (4.0 * n)
    variance = n * (2.0 * root + d0 * (1.0 - d0))
    numerator = b - c - n * d0
    with np.errstate(divide="ignore", invalid="ignore"):
        t = numerator / np.sqrt(np.maximum(variance, 0.0))
    return np.where(numerator == 0.0, 0.0, t)


@lru_cache(maxsize=8)
def _tables(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every table of n pairs as (b, c, log multinomial coefficient), b + c ≤ n."""
    b, c = np.indices((n + 1, n + 1)).reshape(2, -1)
    keep = b + c <= n
    b, c = b[keep], c[keep]
    log_coefficient = gammaln(n + 1) - gammaln(b + 1) - gammaln(c + 1) - gammaln(n - b - c + 1)
    return b, c, log_coefficient


class _ExactTail:
    """The exact unconditional p-value of one table, its region ordered by T at ``order_at``.

    ``p_value(d0)`` is ``sup_θ P(T(B, C; order_at) ≥ T(b, c; order_at))`` at Δ = d0 over the
    nuisance θ = π₂₁ ∈ [max(0, −d0), (1 − d0)/2], with π₁₂ = θ + d0 and the rest 1 − 2θ − d0.
    """

    def __init__(self, b: int, c: int, n: int, *, order_at: float) -> None:
        all_b, all_c, log_coefficient = _tables(n)
        t_all = _tango(all_b, all_c, n, order_at)
        t_obs = _tango(np.array([b]), np.array([c]), n, order_at)[0]
        extreme = t_all >= t_obs - 1e-9 * max(1.0, abs(t_obs))
        # the region's counts as rows (b, c, rest): a table's log-probability is one dot product
        self._counts = np.column_stack(
            [all_b[extreme], all_c[extreme], n - all_b[extreme] - all_c[extreme]]
        ).astype(float)
        self._log_coefficient = log_coefficient[extreme]

    def _tail(self, theta: np.ndarray, d0: float) -> np.ndarray:
        # A cell of probability 0 gets log 1e-300: a count of 0 then adds 0 (0·log 0 = 0) and
        # a positive count makes the table's probability underflow to 0, both as exactly.
        cells = np.stack([theta + d0, theta, 1.0 - 2.0 * theta - d0])
        log_cells = np.log(np.maximum(cells, 1e-300))
        log_p = self._counts @ log_cells + self._log_coefficient[:, None]
        return np.exp(log_p).sum(axis=0)

    def p_value(self, d0: float, *, at_least: float = 1.0) -> float:
        """The p-value at Δ = d0; once the grid's best reaches ``at_least``, that value (the
        refinement can only raise it, and a bisection asking "below α?" needs no more)."""
        grid = np.linspace(max(0.0, -d0), (1.0 - d0) / 2.0, NUISANCE_GRID)
        values = self._tail(grid, d0)
        best = int(np.argmax(values))
        if values[best] >= at_least:
            return float(min(1.0, values[best]))
        left, right = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
        refined = minimize_scalar(
            lambda th: -self._tail(np.array([th]), d0)[0],
            bounds=(left, right),
            method="bounded",
            options={"xatol": 1e-10},
        )
        return float(min(1.0, max(values[best], -refined.fun)))


def _bisect(rejects: Callable[[float], bool], high: float) -> float:
    """The boundary, to 1e-7, between the Δ₀ whose H0: Δ ≤ Δ₀ is rejected (below it) and
    those not rejected (above it, up to ``high`` = Δ̂); −1 when none is rejected."""
    low = -1.0 + 1e-12
    if not rejects(low):
        return -1.0
    while high - low > 1e-7:
        middle = (low + high) / 2.0
        if rejects(middle):
            low = middle
        else:
            high = middle
    return low


def _is_exact(method: str, n: int) -> bool:
    if method == "exact":
        return True
    if method == "score":
        return False
    if method == "auto":
        return n <= EXACT_UP_TO_PAIRS
    raise ValueError(f"method must be 'auto', 'exact' or 'score', got method={method!r}")


def check_table(b: object, c: object, pairs: object) -> tuple[int, int, int]:
    """``(b, c, pairs)`` as ints with ``pairs`` ≥ 1 and ``b + c`` ≤ ``pairs``."""
    b, c, n = check_count(b, "b"), check_count(c, "c"), check_count(pairs, "pairs")
    if n == 0:
        raise ValueError(
            "pairs must be at least 1, got pairs=0; pass the matched instances of the comparison"
        )
    if b + c > n:
        raise ValueError(
            f"b + c must not exceed pairs (discordant pairs are among the pairs), "
            f"got b={b}, c={c}, pairs={n}"
        )
    return b, c, n


def check_margin(margin: object) -> float:
    """``margin`` as a float in [0, 1): an accuracy difference."""
    if isinstance(margin, bool) or not isinstance(margin, (int, float)):
        raise TypeError(
            f"margin must be a float in [0, 1), got margin={margin!r} "
            f"(type={type(margin).__name__})"
        )
    value = float(margin)
    if not 0.0 <= value < 1.0:
        raise ValueError(
            f"margin must be an accuracy difference in [0, 1), got margin={margin!r}; "
            f"for example margin=0.02"
        )
    return value


def _check_delta(delta: object, name: str) -> float:
    if isinstance(delta, bool) or not isinstance(delta, (int, float)):
        raise TypeError(f"{name} must be a float in (-1, 1), got {name}={delta!r}")
    value = float(delta)
    if not -1.0 < value < 1.0:
        raise ValueError(f"{name} must lie strictly between -1 and 1, got {name}={delta!r}")
    return value
