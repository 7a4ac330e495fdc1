"""The release gate's statistics against independent implementations and simulations.

Power and detectable drops against statsmodels' ``NormalIndPower`` (one sample: ``ratio=0``);
Clopper–Pearson against ``scipy.stats.binomtest``; Wilson against statsmodels'
``proportion_confint``; Tango's restricted MLE against a numerical maximisation of the
likelihood; the exact non-inferiority test against a brute-force enumeration written here with
``scipy.stats.multinomial``; Holm against statsmodels' ``multipletests``. Monte Carlo tolerances
are stated where they are used; every simulation is seeded.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from scipy.optimize import minimize_scalar
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_confint

from pytest_competence import stats
from pytest_competence.stats import noninferiority


@st.composite
def tables(draw: st.DrawFn, max_pairs: int = 200) -> tuple[int, int, int]:
    n = draw(st.integers(1, max_pairs))
    b = draw(st.integers(0, n))
    c = draw(st.integers(0, n - b))
    return b, c, n


def restricted_mle(b: int, c: int, n: int, d0: float) -> float:
    """π₂₁ maximising the multinomial likelihood under π₁₂ − π₂₁ = d0, numerically."""
    rest = n - b - c

    def minus_log_likelihood(q: float) -> float:
        return -float(scipy_stats.multinomial.logpmf([b, c, rest], n, [q + d0, q, 1 - 2 * q - d0]))

    low, high = max(0.0, -d0), (1.0 - d0) / 2.0
    eps = 1e-13
    return float(
        minimize_scalar(
            minus_log_likelihood,
            bounds=(low + eps, high - eps),
            method="bounded",
            options={"xatol": 1e-12},
        ).x
    )


# --- Tango's score statistic ----------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(tables(), st.floats(-0.9, 0.9).filter(lambda d: abs(d) > 1e-3))
def test_tango_is_the_score_statistic_at_the_numerical_restricted_mle(table, d0):
    """T² = (b − c − nΔ₀)² / (n(ψ̃ − Δ₀²)), the score statistic of a linear constraint on a
    multinomial, with ψ̃ = π̃₁₂ + π̃₂₁ found here by maximising the likelihood numerically."""
    b, c, n = table
    q = restricted_mle(b, c, n, d0)
    variance = n * ((2 * q + d0) - d0 * d0)
    expected = (b - c - n * d0) / math.sqrt(variance)
    assert stats.tango_statistic(b, c, n, d0) == pytest.approx(expected, rel=1e-5, abs=1e-6)


@given(tables())
def test_tango_at_zero_is_mcnemars_uncorrected_statistic(table):
    b, c, n = table
    t = stats.tango_statistic(b, c, n, 0.0)
    if b + c == 0:
        assert t == 0.0
        return
    chi2 = sm_mcnemar([[0, b], [c, 0]], exact=False, correction=False).statistic
    assert t * t == pytest.approx(chi2, rel=1e-12)
    assert math.copysign(1.0, t) == math.copysign(1.0, b - c) or b == c


@given(tables())
def test_tango_decreases_in_delta0(table):
    b, c, n = table
    values = [stats.tango_statistic(b, c, n, d) for d in np.linspace(-0.99, 0.99, 67)]
    assert all(later <= earlier + 1e-9 for earlier, later in zip(values, values[1:]))


def test_tango_orders_tables_convexly_up_to_100_pairs():
    """T(·; Δ₀) grows with b and falls with c at every table (Barnard convexity), which makes
    the exact test's rejection probability largest on the boundary of H0 (the docstring's
    claim, for every design the exact method is used on)."""
    for n in (3, 8, 21, 55, stats.EXACT_UP_TO_PAIRS):
        b, c = np.indices((n + 1, n + 1)).reshape(2, -1)
        keep = b + c <= n
        b, c = b[keep], c[keep]
        for d0 in np.linspace(-0.95, 0.95, 39):
            grid = np.full((n + 2, n + 2), np.nan)
            grid[b, c] = noninferiority._tango(b, c, n, d0)
            more_b = grid[1:, :-1] - grid[:-1, :-1]
            more_c = grid[:-1, 1:] - grid[:-1, :-1]
            assert np.nanmin(more_b) >= -1e-12 and np.nanmax(more_c) <= 1e-12, (n, d0)


# --- the exact non-inferiority test ---------------------------------------------------------------


def brute_force_exact_p(b: int, c: int, n: int, margin: float, grid: int = 4001) -> float:
    """sup over a fine nuisance grid of P(T ≥ T_obs) at Δ = −margin, by loops over tables."""
    t_obs = stats.tango_statistic(b, c, n, -margin)
    region = [
        (i, j)
        for i in range(n + 1)
        for j in range(n + 1 - i)
        if stats.tango_statistic(i, j, n, -margin) >= t_obs - 1e-9 * max(1, abs(t_obs))
    ]
    best = 0.0
    for theta in np.linspace(margin, (1 + margin) / 2, grid):
        probabilities = [max(theta - margin, 0.0), theta, max(1 - 2 * theta + margin, 0.0)]
        total = sum(probabilities)
        probabilities = [p / total for p in probabilities]
        tail = sum(
            scipy_stats.multinomial.pmf([i, j, n - i - j], n, probabilities) for i, j in region
        )
        best = max(best, tail)
    return best


@pytest.mark.parametrize(
    "b, c, n, margin",
    [
        (0, 0, 8, 0.2),
        (3, 1, 8, 0.1),
        (2, 4, 10, 0.3),
        (5, 5, 12, 0.05),
        (1, 0, 6, 0.0),
    ],
)
def test_exact_p_value_matches_a_brute_force_enumeration(b, c, n, margin):
    expected = brute_force_exact_p(b, c, n, margin, grid=801)
    got = stats.noninferiority_p_value(b, c, n, margin=margin, method="exact")
    # the brute force searches a grid of 801 values only: it can fall short of the supremum
    assert expected - 1e-9 <= got <= expected + 2e-4


def exact_size(n: int, margin: float, alpha: float, method: str) -> float:
    """The largest rejection probability over the boundary Δ = −margin, by enumeration."""
    cells = [(i, j) for i in range(n + 1) for j in range(n + 1 - i)]
    rejected = [
        (i, j)
        for i, j in cells
        if stats.noninferiority_p_value(i, j, n, margin=margin, method=method) < alpha
    ]
    counts = np.array([[i, j, n - i - j] for i, j in rejected])
    worst = 0.0
    for theta in np.linspace(margin, (1 + margin) / 2, 301):
        probabilities = np.clip([theta - margin, theta, 1 - 2 * theta + margin], 0, 1)
        pmf = scipy_stats.multinomial.pmf(counts, n, probabilities / probabilities.sum())
        worst = max(worst, float(np.sum(pmf)))
    return worst


def test_exact_test_keeps_its_size_where_the_score_test_does_not():
    """At 20 pairs and a margin of 0.2 the asymptotic test rejects a true drop of exactly the
    margin up to 6.9% of the time at a nominal 5%; the exact test never above 5%."""
    assert exact_size(20, 0.2, 0.05, "score") > 0.06
    assert exact_size(20, 0.2, 0.05, "exact") <= 0.05


@settings(max_examples=40, deadline=None)
@given(
    tables(max_pairs=40),
    st.sampled_from([0.0, 0.05, 0.1, 0.2]),
    st.sampled_from([0.9, 0.95, 0.99]),
    st.sampled_from(["exact", "score"]),
)
def test_the_bound_clears_minus_margin_exactly_when_the_test_rejects(
    table, margin, confidence, method
):
    b, c, n = table
    bound = stats.paired_lower_bound(b, c, n, confidence=confidence, margin=margin, method=method)
    p = stats.noninferiority_p_value(b, c, n, margin=margin, method=method)
    assert -1.0 <= bound <= (b - c) / n + 1e-9
    if abs(p - (1 - confidence)) > 1e-6 and abs(bound + margin) > 1e-6:
        assert (bound > -margin) == (p < 1 - confidence)


@settings(max_examples=40, deadline=None)
@given(tables(max_pairs=300))
def test_two_sided_interval_is_both_one_sided_score_bounds(table):
    b, c, n = table
    low, high = stats.paired_difference_interval(b, c, n, confidence=0.9)
    assert low == stats.paired_lower_bound(b, c, n, confidence=0.95, method="score")
    assert high == -stats.paired_lower_bound(c, b, n, confidence=0.95, method="score")
    assert low <= (b - c) / n <= high
    if 0 < b + c:  # the score test at each end sits on z
        z = scipy_stats.norm.ppf(0.95)
        if low > -1:
            assert stats.tango_statistic(b, c, n, low) == pytest.approx(z, abs=1e-6)


def test_score_interval_covers_the_true_difference_about_95_percent_of_runs():
    """4,000 seeded runs of 60 pairs at π₁₂ = 0.1, π₂₁ = 0.2 (Δ = −0.1): the binomial SE of a
    95% coverage is 0.34 points; the tolerance ±1.2 points is about 3.5 SE."""
    rng = np.random.default_rng(11)
    counts = rng.multinomial(60, [0.1, 0.2, 0.7], size=4000)
    hits = 0
    cache: dict[tuple[int, int], tuple[float, float]] = {}
    for b, c, _ in counts:
        key = (int(b), int(c))
        if key not in cache:
            cache[key] = stats.paired_difference_interval(*key, 60)
        low, high = cache[key]
        hits += low <= -0.1 <= high
    assert hits / 4000 == pytest.approx(0.95, abs=0.012)


# --- the non-inferiority decision, with Holm ------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(st.lists(tables(max_pairs=120), min_size=1, max_size=4), st.sampled_from([0.02, 0.05, 0.1]))
def test_decision_is_holm_over_one_sided_p_values(cells, margin):
    decision = stats.noninferiority_decision(cells, margin=margin, alpha=0.05)
    p_values = [cell.p_value for cell in decision.cells]
    reject, adjusted, *_ = multipletests(p_values, alpha=0.05, method="holm")
    assert [cell.p_holm for cell in decision.cells] == pytest.approx(list(adjusted))
    assert [cell.noninferior for cell in decision.cells] == [p < 0.05 for p in adjusted]
    assert decision.passed == all(cell.noninferior for cell in decision.cells)
    # passing is every cell's bound, at the level Holm tests it at, above −margin
    clear = [cell.lower_holm > -margin for cell in decision.cells]
    if all(abs(cell.lower_holm + margin) > 1e-6 for cell in decision.cells):
        assert decision.passed == all(clear)
    for cell, (b, c, n) in zip(decision.cells, cells):
        assert (cell.b, cell.c, cell.pairs, cell.delta) == (b, c, n, (b - c) / n)
        assert cell.method == ("exact" if n <= stats.EXACT_UP_TO_PAIRS else "score")


def simulate_passes(
    pairs: int, drop: float, discordance: float, margin: float, runs: int, seed: int
) -> float:
    """Share of seeded runs the single-cell decision passes, the truth Δ = −drop."""
    rng = np.random.default_rng(seed)
    b_share, c_share = (discordance - drop) / 2, (discordance + drop) / 2
    counts = rng.multinomial(pairs, [b_share, c_share, 1 - discordance], size=runs)
    cache: dict[tuple[int, int], bool] = {}
    passes = 0
    for b, c, _ in counts:
        key = (int(b), int(c))
        if key not in cache:  # one cell passes when its p-value is below α (Holm over one)
            cache[key] = stats.noninferiority_p_value(*key, pairs, margin=margin) < 0.05
        passes += cache[key]
    return passes / runs


@pytest.mark.parametrize("pairs", [40, 300])  # the exact test, and the score test
def test_a_drop_of_exactly_the_margin_passes_at_most_alpha_of_the_time(pairs):
    """4,000 runs at a true drop of 0.1 = the margin, ψ = 0.3: the pass rate must not exceed
    α = 0.05 by more than 3 SE (SE = 0.34 points)."""
    rate = simulate_passes(pairs, drop=0.1, discordance=0.3, margin=0.1, runs=4000, seed=pairs)
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 4000)


def test_an_equally_good_candidate_passes_at_the_planners_power():
    """At the pairs the planner's formula needs for 80% power (margin 0.1, ψ = 0.3: 186), 4,000
    runs of an equally good candidate pass within 3 SE (about 1.9 points) of that power."""
    pairs = stats.pairs_needed(45, 45, 300, margin=0.1, alpha=0.05, test="non-inferiority")
    power = stats.noninferiority_power(pairs, margin=0.1, discordance=0.3, alpha=0.05)
    assert (
        power
        >= 0.8
        > stats.noninferiority_power(pairs - 1, margin=0.1, discordance=0.3, alpha=0.05)
    )
    rate = simulate_passes(pairs, drop=0.0, discordance=0.3, margin=0.1, runs=4000, seed=3)
    assert rate == pytest.approx(power, abs=3 * math.sqrt(power * (1 - power) / 4000))


def test_decision_validation():
    with pytest.raises(ValueError, match="at least one"):
        stats.noninferiority_decision([], margin=0.05)
    with pytest.raises(ValueError, match="margin must be an accuracy difference"):
        stats.noninferiority_decision([(1, 1, 10)], margin=1.0)
    with pytest.raises(TypeError, match="margin must be a float"):
        stats.noninferiority_p_value(1, 1, 10, margin="0.05")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"b \+ c must not exceed pairs"):
        stats.paired_lower_bound(6, 5, 10)
    with pytest.raises(ValueError, match="pairs must be at least 1"):
        stats.tango_statistic(0, 0, 0, 0.0)
    with pytest.raises(ValueError, match="method must be"):
        stats.noninferiority_p_value(1, 1, 10, margin=0.1, method="wald")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="delta0 must lie strictly between"):
        stats.tango_statistic(1, 1, 10, 1.0)
    assert stats.paired_lower_bound(0, 10, 10) == -1.0


# --- detectable drops -----------------------------------------------------------------------------


@given(
    tables(max_pairs=2000), st.sampled_from([0.05, 0.01, 0.05 / 18]), st.sampled_from([0.8, 0.9])
)
def test_detectable_drop_matches_statsmodels_one_sample_normal_power(table, alpha, power):
    """The planner's condition δ = (z_{1−α/2} + z_β)·sqrt((ψ − δ²)/n) is a one-sample normal
    test of effect size δ/sqrt(ψ − δ²): statsmodels' NormalIndPower(ratio=0), one-sided at α/2
    (the planner leaves out the far tail), gives exactly the power asked at the drop."""
    b, c, n = table
    psi = (b + c) / n
    drop = stats.detectable_drop(b, c, n, alpha=alpha, power=power)
    k = scipy_stats.norm.ppf(1 - alpha / 2) + scipy_stats.norm.ppf(power)
    used = max(psi, k * k / (n + k * k))  # the zero-discordance floor
    assert drop <= used + 1e-12  # never a drop larger than the discordance it assumes
    effect = drop / math.sqrt(used - drop * drop)
    assert NormalIndPower().power(
        effect, nobs1=n, alpha=alpha / 2, ratio=0, alternative="larger"
    ) == pytest.approx(power, abs=1e-9)
    # non-inferiority: one-sided α, and the variance at the alternative Δ = 0 is ψ
    margin = stats.detectable_drop(b, c, n, alpha=alpha, power=power, test="non-inferiority")
    k1 = scipy_stats.norm.ppf(1 - alpha) + scipy_stats.norm.ppf(power)
    used = max(psi, k1 * k1 / n)
    if margin < 1.0:
        assert NormalIndPower().power(
            margin / math.sqrt(used), nobs1=n, alpha=alpha, ratio=0, alternative="larger"
        ) == pytest.approx(power, abs=1e-9)
    else:  # capped: even a margin of 1 is short of the power asked
        assert k1 * math.sqrt(used / n) >= 1.0


def test_detectable_drop_is_the_planners_above_the_floor():
    assert stats.detectable_drop(300, 276, 1800, alpha=0.05) == pytest.approx(
        stats.minimum_detectable_difference(1800, discordance=0.32), rel=1e-12
    )


@pytest.mark.parametrize("pairs", [8, 50, 800])
def test_zero_discordance_uses_the_drop_that_makes_every_discordant_pair_go_one_way(pairs):
    """With b = c = 0 the drop δ is detected at 80% power when a share δ is discordant: the
    planner's power at (δ, ψ = δ) is 0.80, and the floor joins the formula continuously."""
    drop = stats.detectable_drop(0, 0, pairs, alpha=0.05)
    assert stats.regression_power(drop, pairs, discordance=drop, alpha=0.05) == pytest.approx(0.8)
    k = scipy_stats.norm.ppf(0.975) + scipy_stats.norm.ppf(0.8)
    assert drop == pytest.approx(k * k / (pairs + k * k))
    above = math.ceil(drop * pairs) + 1  # discordant pairs above the floor: the formula rules
    assert stats.detectable_drop(above, 0, pairs, alpha=0.05) == pytest.approx(
        stats.minimum_detectable_difference(pairs, discordance=above / pairs)
    )


@settings(deadline=None)
@given(
    tables(max_pairs=500),
    st.sampled_from([0.01, 0.02, 0.05, 0.1]),
    st.sampled_from(["regression", "non-inferiority"]),
)
def test_pairs_needed_is_the_fewest_that_reach_the_margin(table, margin, test):
    b, c, n = table
    psi = (b + c) / n
    needed = stats.pairs_needed(b, c, n, margin=margin, alpha=0.01, test=test)
    assert needed is not None

    def drop_at(size: int) -> float:  # the same discordance share at another size
        if test == "regression":
            k = scipy_stats.norm.ppf(1 - 0.01 / 2) + scipy_stats.norm.ppf(0.8)
            return k * math.sqrt(max(psi, k * k / (size + k * k)) / (size + k * k))
        k1 = scipy_stats.norm.ppf(1 - 0.01) + scipy_stats.norm.ppf(0.8)
        return min(1.0, k1 * math.sqrt(max(psi, k1 * k1 / size) / size))

    assert drop_at(n) == pytest.approx(stats.detectable_drop(b, c, n, alpha=0.01, test=test))
    assert drop_at(needed) <= margin
    assert needed == 1 or drop_at(needed - 1) > margin
    assert stats.pairs_needed(b, c, n, margin=0.0, alpha=0.01, test=test) is None


def test_mcnemar_reaches_the_planners_power_less_its_continuity_correction():
    """The gate's McNemar test is continuity-corrected, which the planner's formula leaves out:
    at 400 pairs, ψ = 0.3 and α = 0.05, 4,000 runs at the detectable drop reject 76.5% of the
    time (SE 0.7 points), not 80%. Recorded so that a change to either shows."""
    pairs, alpha = 400, 0.05
    drop = stats.detectable_drop(60, 60, pairs, alpha=alpha)
    counts = np.random.default_rng(7).multinomial(
        pairs, [(0.3 - drop) / 2, (0.3 + drop) / 2, 0.7], size=4000
    )
    rate = np.mean([stats.mcnemar(int(b), int(c)).p_value < alpha for b, c, _ in counts])
    assert 0.80 - 0.06 < rate < 0.80


def test_an_8_pair_gate_is_underpowered_and_says_by_how_much():
    """The issue's example: 9 levels × 2 presentations of 8 pairs. Holm leaves α/18 to a lone
    regression, and McNemar's smallest p at 8 pairs (0.0078) is above it: nothing is
    detectable, and the pairs that would reach a 5-point margin are given."""
    cells = [(1, 1, 8), (0, 2, 8), (0, 0, 8)] * 6
    power = stats.gate_power(cells, alpha=0.05, margin=0.05)
    assert power.alpha_per_cell == pytest.approx(0.05 / 18)
    assert power.underpowered
    assert power.detectable_drop == max(cell.detectable_drop for cell in power.cells)
    assert power.cells[power.worst].detectable_drop == power.detectable_drop
    assert all(cell.smallest_p == pytest.approx(2 * 0.5**8) for cell in power.cells)
    assert all(cell.smallest_p > cell.alpha for cell in power.cells)
    assert power.pairs_needed == max(cell.pairs_needed for cell in power.cells)
    for cell in power.cells:
        assert cell.pairs_needed == stats.pairs_needed(
            cell.b, cell.c, 8, margin=0.05, alpha=0.05 / 18
        )
    ni = stats.gate_power(cells, alpha=0.05, margin=0.05, test="non-inferiority")
    assert ni.underpowered and ni.cells[0].smallest_p > ni.alpha_per_cell


def test_power_validation():
    with pytest.raises(ValueError, match="at least one"):
        stats.gate_power([], alpha=0.05, margin=0.05)
    with pytest.raises(ValueError, match="test must be"):
        stats.detectable_drop(1, 1, 10, alpha=0.05, test="superiority")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="alpha must be a float strictly between"):
        stats.detectable_drop(1, 1, 10, alpha=0.0)
    with pytest.raises(ValueError, match="drop must not exceed discordance"):
        stats.regression_power(0.3, 100, discordance=0.2, alpha=0.05)


# --- the bound behind a pass ----------------------------------------------------------------------


@given(
    st.integers(1, 3000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
def test_failure_rate_bound_is_scipys_exact_interval(counts, confidence):
    failures, instances = counts
    expected = (
        scipy_stats.binomtest(failures, instances)
        .proportion_ci(confidence_level=2 * confidence - 1, method="exact")
        .high
    )
    got = stats.failure_rate_upper_bound(failures, instances, confidence=confidence)
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-15)


def test_a_strict_pass_on_800_instances_bounds_failures_at_037_percent():
    bound = stats.failure_rate_upper_bound(0, 800)
    assert f"{100 * bound:.2f}%" == "0.37%"
    # one-sided: the rate at the bound gives no failure in 800 with probability exactly 5%
    assert scipy_stats.binom.pmf(0, 800, bound) == pytest.approx(0.05)


@pytest.mark.parametrize("rate, instances", [(0.001, 800), (0.02, 120), (0.3, 25)])
def test_failure_rate_bound_covers_the_rate_at_least_95_percent(rate, instances):
    """Exact coverage, summed over every outcome: P(bound ≥ rate) ≥ 0.95."""
    coverage = sum(
        scipy_stats.binom.pmf(k, instances, rate)
        for k in range(instances + 1)
        if stats.failure_rate_upper_bound(k, instances) >= rate
    )
    assert coverage >= 0.95


@given(
    st.integers(1, 2000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
def test_wilson_lower_bound_matches_statsmodels(counts, confidence):
    successes, total = counts
    expected = proportion_confint(successes, total, alpha=2 * (1 - confidence), method="wilson")[0]
    got = stats.wilson_lower_bound(successes, total, confidence=confidence)
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_bounds_validation():
    with pytest.raises(ValueError, match="instances must be at least 1"):
        stats.failure_rate_upper_bound(0, 0)
    with pytest.raises(ValueError, match="failures must not exceed instances"):
        stats.failure_rate_upper_bound(5, 4)
    with pytest.raises(TypeError, match="failures must be a non-negative int"):
        stats.failure_rate_upper_bound(0.0, 4)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="above 0.5"):
        stats.wilson_lower_bound(3, 4, confidence=0.5)
    assert stats.failure_rate_upper_bound(4, 4) == 1.0
    assert math.isnan(stats.wilson_lower_bound(0, 0))
