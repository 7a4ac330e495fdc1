"""The paired bootstrap and interval calibration against independent implementations.

CBE paper, arXiv:2610.22894, §3.3 and App. B.2: intervals resample matched instances (stratified or clustered); the
reference is ``scipy.stats.bootstrap`` on the same statistic, and calibration is checked by
simulation. Split from test_stats.py, which covers the other statistics.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from pytest_competence import stats
from pytest_competence.stats import bootstrap

counts = st.integers(min_value=0, max_value=400)
confidences = st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99])


def _estimate(figure: stats.AdditiveFigure) -> float:
    return float(figure.statistic(figure.columns.sum(axis=0)))


# --- bootstrap (CBE paper, arXiv:2610.22894, §3.3, App. B.2) ---------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2])
def test_bootstrap_agrees_with_scipy_on_accuracy_difference(seed):
    """Same statistic, B = 10,000, unstratified, percentile method.

    Tolerance: each endpoint is a 2.5% quantile of B = 10,000 draws, whose Monte Carlo SE is
    about sqrt(0.025·0.975/B)/φ(1.96) ≈ 0.027 bootstrap SDs; two independent runs differ by
    ≈ 0.038 SD in SE, so 0.15 SD is about 4 SE.
    """
    rng = np.random.default_rng(seed)
    a = rng.random(300) < 0.8
    b = a ^ (rng.random(300) < 0.25)
    ours = stats.paired_bootstrap(
        *stats.difference_figure(stats.accuracy_figure(a), stats.accuracy_figure(b)),
        B=10_000,
        seed=seed,
    )
    reference = scipy_stats.bootstrap(
        (a.astype(float), b.astype(float)),
        lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=10_000,
        random_state=seed,
    )
    tolerance = 0.15 * reference.standard_error
    assert ours.estimate == pytest.approx(a.mean() - b.mean())
    assert ours.low == pytest.approx(reference.confidence_interval.low, abs=tolerance)
    assert ours.high == pytest.approx(reference.confidence_interval.high, abs=tolerance)
    assert (ours.B, ours.method, ours.dropped) == (10_000, "percentile", 0)


def test_bootstrap_agrees_with_scipy_on_robust_correctness():
    """A ratio of sums (R on the jointly parsed support); tolerance as in the test above."""
    rng = np.random.default_rng(3)
    correct = rng.random((250, 2)) < 0.7
    valid = rng.random((250, 2)) < 0.9
    figure = stats.robust_correct_figure(correct, valid)
    ours = stats.paired_bootstrap(*figure, B=10_000, seed=5)
    robust, joint = figure.columns.T
    reference = scipy_stats.bootstrap(
        (robust, joint),
        lambda r, j, axis=-1: r.sum(axis=axis) / j.sum(axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=10_000,
        random_state=5,
    )
    tolerance = 0.15 * reference.standard_error
    assert ours.low == pytest.approx(reference.confidence_interval.low, abs=tolerance)
    assert ours.high == pytest.approx(reference.confidence_interval.high, abs=tolerance)


def test_bootstrap_agrees_with_scipy_with_distinct_rows_and_many_columns():
    """The index-draw sampler (continuous scores) and a 12-column statistic (κ̄ over 4 levels),
    each against scipy.stats.bootstrap on the same statistic; tolerance as above."""
    rng = np.random.default_rng(9)
    scores = rng.normal(0.3, 1.0, size=400)
    levels = np.repeat([4, 8, 16, 32], 100)
    said_yes = rng.random((400, 2)) < 0.6
    said_yes[:, 1] ^= rng.random(400) < np.repeat([0.1, 0.2, 0.3, 0.4], 100)
    cases = [
        (np.column_stack([scores, np.ones(400)]), lambda s: s[..., 0] / s[..., 1]),
        stats.kappa_bar_figure(said_yes, np.ones((400, 2), bool), levels),
    ]
    for columns, statistic in cases:
        ours = stats.paired_bootstrap(columns, statistic, B=10_000, seed=2)

        def of_samples(*samples: np.ndarray, axis: int = -1, of_sums=statistic) -> np.ndarray:
            return of_sums(np.stack([x.sum(axis=axis) for x in samples], axis=-1))

        reference = scipy_stats.bootstrap(
            tuple(columns.T),
            of_samples,
            paired=True,
            vectorized=True,
            method="percentile",
            n_resamples=10_000,
            random_state=2,
        )
        tolerance = 0.15 * reference.standard_error
        assert ours.low == pytest.approx(reference.confidence_interval.low, abs=tolerance)
        assert ours.high == pytest.approx(reference.confidence_interval.high, abs=tolerance)


def test_stratified_bootstrap_keeps_every_stratum_size():
    levels = np.repeat([4, 8, 16], [5, 7, 11])
    relations = np.tile(["front", "left"], 23)[:23]
    for strata in (levels, np.column_stack([levels, relations])):
        labels = np.unique(strata, axis=0, return_inverse=True)[1].reshape(-1)
        one_hot = labels[:, None] == np.arange(labels.max() + 1)[None, :]
        sums = stats.bootstrap_sums(one_hot, strata=strata, B=500, seed=4)
        assert np.array_equal(sums, np.broadcast_to(one_hot.sum(axis=0), sums.shape))


def test_stratified_bootstrap_draws_only_within_strata():
    levels = np.repeat([0, 1], 10)
    counts = stats.bootstrap_sums(np.eye(20), strata=levels, B=300, seed=1)  # W itself
    assert np.all(counts[:, :10].sum(axis=1) == 10) and np.all(counts[:, 10:].sum(axis=1) == 10)
    assert counts.min() >= 0 and counts.max() <= 10


def test_cluster_bootstrap_resamples_whole_clusters():
    clusters = np.repeat(np.arange(6), [1, 2, 3, 4, 2, 3])  # instances with 1–4 query cells
    levels = np.repeat([0, 1], [10, 5])
    for strata in (None, levels):
        counts = stats.bootstrap_sums(np.eye(15), clusters=clusters, strata=strata, B=400, seed=2)
        for c in range(6):
            cells = counts[:, clusters == c]
            assert np.all(cells == cells[:, :1])  # all cells of a cluster drawn together
        first_cell = np.array([np.flatnonzero(clusters == c)[0] for c in range(6)])
        assert np.all(counts[:, first_cell].sum(axis=1) == 6)  # six clusters per replicate
        if strata is not None:
            assert np.all(counts[:, first_cell[:4]].sum(axis=1) == 4)  # clusters 0–3: stratum 0
    with pytest.raises(ValueError, match="clusters must be nested in strata"):
        stats.bootstrap_sums(np.ones(15), clusters=clusters, strata=np.arange(15) % 2)


def test_bootstrap_is_seeded_and_prefix_stable():
    rng = np.random.default_rng(0)
    X = rng.random((40, 3))
    levels = np.repeat(np.arange(4), 10)
    first = stats.bootstrap_sums(X, strata=levels, B=2500, seed=11)
    assert np.array_equal(first, stats.bootstrap_sums(X, strata=levels, B=2500, seed=11))
    assert not np.array_equal(first, stats.bootstrap_sums(X, strata=levels, B=2500, seed=12))
    assert np.array_equal(first[:2000], stats.bootstrap_sums(X, strata=levels, B=2000, seed=11))
    assert stats.paired_bootstrap(
        X, lambda s: s[..., 0] / s[..., 1], seed=3
    ) == stats.paired_bootstrap(X, lambda s: s[..., 0] / s[..., 1], seed=3)


def test_bootstrap_sums_are_count_matrix_times_columns():
    """Non-integer columns take the float64 path; integer ones the exact float32 path."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 2))
    levels = np.repeat(np.arange(3), 10)
    counts = stats.bootstrap_sums(np.eye(30), strata=levels, B=1200, seed=9)
    assert np.allclose(
        stats.bootstrap_sums(X, strata=levels, B=1200, seed=9), counts @ X, rtol=1e-12
    )
    assert np.all(counts.sum(axis=1) == 30)


def test_both_samplers_resample_the_same_distribution():
    """Few distinct rows take the multinomial sampler; a column of distinct ids forces index draws.

    Per stratum, the sum of a 0/1 column with rate p over n rows is Binomial(n, p) under either
    sampler: mean n·p, variance n·p(1 − p). At B = 10,000 the Monte Carlo SE of the mean is
    ≤ 0.071 and of the variance about 1.4%; tolerances are 0.3 and 6%.
    """
    rng = np.random.default_rng(12)
    levels = np.repeat([0, 1], 200)
    rates = np.repeat([0.8, 0.3], 200)
    indicator = (rng.random(400) < rates).astype(float)
    few = np.column_stack([indicator * (levels == 0), indicator * (levels == 1), levels == 0])
    ids = np.column_stack([few, np.arange(400)])
    assert bootstrap._plan(few[levels == 0], np.float64).multiplicity is not None  # multinomial
    assert bootstrap._plan(ids[levels == 0], np.float64).multiplicity is None  # index draws
    for X in (few, ids):
        sums = stats.bootstrap_sums(X, strata=levels, B=10_000, seed=3)
        assert np.all(sums[:, 2] == 200)  # stratum sizes stay fixed
        for column in (0, 1):
            n = 200
            p = float(few[levels == column, column].mean())
            assert sums[:, column].mean() == pytest.approx(n * p, abs=0.3)
            assert sums[:, column].var() == pytest.approx(n * p * (1 - p), rel=0.06)
    first = stats.bootstrap_sums(few, strata=levels, B=2500, seed=8)
    assert np.array_equal(first, stats.bootstrap_sums(few, strata=levels, B=2500, seed=8))
    assert np.array_equal(first[:2000], stats.bootstrap_sums(few, strata=levels, B=2000, seed=8))


def test_cluster_bootstrap_with_few_distinct_clusters_draws_whole_clusters():
    """240 clusters of 1–3 cells, 3 distinct cluster totals per stratum: the multinomial sampler."""
    rng = np.random.default_rng(4)
    sizes = rng.integers(1, 4, size=240)
    clusters = np.repeat(np.arange(240), sizes)
    first_cell = np.zeros(clusters.size)
    first_cell[np.r_[0, np.cumsum(sizes)[:-1]]] = 1
    levels = np.repeat([0, 1], [120, 120])[clusters]
    X = np.column_stack([first_cell, np.ones(clusters.size), first_cell * (levels == 0)])
    per_cluster = np.column_stack([np.ones(120), sizes[:120], np.ones(120)])
    assert bootstrap._plan(per_cluster, np.float64).multiplicity is not None
    sums = stats.bootstrap_sums(X, clusters=clusters, strata=levels, B=2000, seed=5)
    assert np.all(sums[:, 0] == 240) and np.all(sums[:, 2] == 120)  # whole clusters per stratum
    assert sums[:, 1].min() >= 240 and sums[:, 1].max() <= 720 and sums[:, 1].std() > 0
    assert sums[:, 1].mean() == pytest.approx(sizes.sum(), rel=0.01)  # cells per replicate


def test_undefined_replicates_are_dropped_and_counted():
    correct = np.array([[True, True]] * 5)
    valid = np.array([[True, True]] + [[False, True]] * 4)  # one jointly parsed pair of five
    figure = stats.robust_correct_figure(correct, valid)
    result = stats.paired_bootstrap(*figure, B=3000, seed=1)
    sums = stats.bootstrap_sums(figure.columns, B=3000, seed=1)
    assert result.dropped == int((sums[:, 1] == 0).sum()) > 0
    assert (result.estimate, result.low, result.high) == (1.0, 1.0, 1.0)
    nothing = stats.paired_bootstrap(np.zeros((3, 2)), lambda s: s[..., 0] / s[..., 1], B=50)
    assert nothing.dropped == 50 and math.isnan(nothing.low) and math.isnan(nothing.estimate)


def test_bootstrap_on_a_single_pair():
    result = stats.paired_bootstrap(
        *stats.invariance_figure(np.array([[True, False]]), np.array([[True, True]])), B=100
    )
    assert (result.estimate, result.low, result.high, result.dropped) == (0.0, 0.0, 0.0, 0)


def test_kappa_bar_figure_matches_per_level_kappa():
    rng = np.random.default_rng(8)
    levels = np.repeat([4, 8, 16, 32], 60)
    said_yes = rng.random((240, 2)) < np.repeat([0.5, 0.7, 0.9, 1.0], 60)[:, None]
    valid = rng.random((240, 2)) < 0.95
    per_level = []
    for level in np.unique(levels):
        rows = (levels == level) & valid.all(axis=1)
        yes = said_yes[rows]
        per_level.append(stats.kappa(float((yes[:, 0] == yes[:, 1]).mean()), float(yes.mean())))
    assert per_level[-1] is None  # constant "yes" at n = 32: κ undefined, left out of κ̄
    figure = stats.kappa_bar_figure(said_yes, valid, levels)
    assert _estimate(figure) == pytest.approx(stats.kappa_bar(per_level))
    interval = stats.paired_bootstrap(*figure, strata=levels, B=2000, seed=1)
    assert interval.low <= interval.estimate <= interval.high and interval.dropped == 0
    with pytest.raises(ValueError, match=r"said_yes must have one column per presentation"):
        stats.kappa_bar_figure(np.ones((3, 3), bool), np.ones((3, 3), bool), np.zeros(3))


def test_bootstrap_argument_errors_name_the_argument():
    with pytest.raises(ValueError, match="B must be at least 1"):
        stats.bootstrap_sums(np.ones(3), B=0)
    with pytest.raises(ValueError, match=r"strata must hold one label per row of X"):
        stats.bootstrap_sums(np.ones(3), strata=[1, 2])
    with pytest.raises(ValueError, match="X must be a finite"):
        stats.bootstrap_sums(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="statistic must map sums"):
        stats.paired_bootstrap(np.ones((3, 2)), lambda s: s, B=10)
    with pytest.raises(ValueError, match="confidence"):
        stats.paired_bootstrap(np.ones((3, 2)), lambda s: s[..., 0], confidence=95)
    with pytest.raises(ValueError, match="same matched instances"):
        stats.difference_figure(
            stats.accuracy_figure(np.ones(3, bool)), stats.accuracy_figure(np.ones(4, bool))
        )


# --- calibration (CBE paper, arXiv:2610.22894, App. B.2: pointwise 95% Wilson and bootstrap intervals on R) ----------


def test_intervals_on_R_cover_the_truth_about_95_percent_of_runs():
    """A stochastic synthetic model with known per-pair masses (R_i, D_i, U_i) ~ Dirichlet.

    Each of 400 runs draws 200 fresh instance pairs from the population, the model's outcome per
    pair from its masses, and invalid answers independently (5% per presentation); R is
    estimated on the jointly parsed pairs, so its truth is E[R_i] = 6/10. With 400 runs the
    binomial SE of a 95% coverage is 1.1 points; the tolerance ±3.5 points is about 3.2 SE.
    (Seeded, so not flaky: 95.75% and 96.0% here. Under a second, so not marked slow.)
    """
    rng = np.random.default_rng(2024)
    concentration = np.array([6.0, 1.5, 2.5])  # R, D, U
    truth = concentration[0] / concentration.sum()
    runs, pairs = 400, 200
    wilson_hits = bootstrap_hits = 0
    for run in range(runs):
        masses = rng.dirichlet(concentration, size=pairs)
        outcome = (rng.random(pairs)[:, None] > masses.cumsum(axis=1)).sum(axis=1)  # 0 R, 1 D, 2 U
        first_right = rng.random(pairs) < 0.5  # which presentation the U pairs get right
        correct = np.column_stack(
            [
                (outcome == 0) | ((outcome == 2) & first_right),
                (outcome == 0) | ((outcome == 2) & ~first_right),
            ]
        )
        valid = rng.random((pairs, 2)) >= 0.05
        figure = stats.robust_correct_figure(correct, valid)
        robust, joint = (int(x) for x in figure.columns.sum(axis=0))
        low, high = stats.wilson_interval(robust, joint)
        wilson_hits += low <= truth <= high
        interval = stats.paired_bootstrap(*figure, B=2000, seed=run)
        bootstrap_hits += interval.low <= truth <= interval.high
    assert wilson_hits / runs == pytest.approx(0.95, abs=0.035)
    assert bootstrap_hits / runs == pytest.approx(0.95, abs=0.035)
