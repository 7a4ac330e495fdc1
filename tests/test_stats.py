"""Every statistic in pytest_competence.stats against an independent implementation.

References: statsmodels (McNemar, Holm, Wilson, Fleiss' κ), scipy (binomial test, bootstrap),
and direct loops written from the formulas of the CBE paper, arXiv:2610.22894, §3.2–3.3, App. A, B.2, H; systematicity paper (arXiv:2609.13948)
§3.5–3.6, App. A; CRTBench paper, §2. Random tables come from Hypothesis; Monte Carlo tolerances are
stated where they are used.
"""

from __future__ import annotations

import math
import statistics
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.inter_rater import fleiss_kappa
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from pytest_competence import stats
from pytest_competence.stats import (
    agreement,
    bootstrap,
    boundary,
    bounds,
    detectable,
    intervals,
    noninferiority,
    paired,
    planner,
    trend,
)

counts = st.integers(min_value=0, max_value=400)
confidences = st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99])


# --- the public surface -------------------------------------------------------------------------


def test_all_matches_the_submodules():
    modules = [
        agreement,
        bootstrap,
        boundary,
        bounds,
        detectable,
        intervals,
        noninferiority,
        paired,
        planner,
        trend,
    ]
    exported = {name for module in modules for name in module.__all__}
    assert exported == set(stats.__all__)
    for name in stats.__all__:
        assert getattr(stats, name) is not None, name


# --- Wilson (CBE paper, arXiv:2610.22894, App. B.2) ------------------------------------------------------------------


@given(total=st.integers(min_value=1, max_value=2000), data=st.data(), confidence=confidences)
def test_wilson_matches_statsmodels(total, data, confidence):
    successes = data.draw(st.integers(min_value=0, max_value=total))
    low, high = stats.wilson_interval(successes, total, confidence)
    ref_low, ref_high = proportion_confint(successes, total, alpha=1 - confidence, method="wilson")
    assert low == pytest.approx(ref_low, abs=1e-12)
    assert high == pytest.approx(ref_high, abs=1e-12)
    assert 0.0 <= low <= successes / total <= high <= 1.0


def test_two_sided_z_table_is_ndtri_to_the_bit():
    from scipy.special import ndtri

    from pytest_competence.stats.intervals import _Z

    for confidence, z in _Z.items():
        assert z == float(ndtri(0.5 + confidence / 2.0)), confidence
    for confidence in (2 * 0.95 - 1, 0.8, 0.999):  # not in the table: computed
        assert stats.two_sided_z(confidence) == float(ndtri(0.5 + confidence / 2.0))


def test_wilson_edge_cases():
    assert all(math.isnan(x) for x in stats.wilson_interval(0, 0))
    low, high = stats.wilson_interval(1, 1)  # a single pair
    assert high == 1.0 and 0.0 < low < 1.0
    assert stats.wilson_interval(0, 5)[0] == 0.0


@pytest.mark.parametrize(
    "args, error, match",
    [
        ((3, 2), ValueError, "successes must not exceed total"),
        ((-1, 2), ValueError, "successes"),
        ((1, -2), ValueError, "total"),
        ((1.0, 2), TypeError, "successes must be a non-negative int"),
        ((True, 2), TypeError, "successes"),
        ((1, 2, 1.0), ValueError, "confidence"),
        ((1, 2, 0.0), ValueError, "confidence"),
    ],
)
def test_wilson_names_the_bad_argument(args, error, match):
    with pytest.raises(error, match=match):
        stats.wilson_interval(*args)


# --- McNemar and Holm (CBE paper, arXiv:2610.22894, §3.3, App. B.2) --------------------------------------------------


def _check_mcnemar(b: int, c: int) -> None:
    result = stats.mcnemar(b, c)
    exact = b + c <= 25
    reference = sm_mcnemar([[7, b], [c, 3]], exact=exact, correction=True)
    assert result.method == ("exact" if exact else "chi2-cc")
    assert result.p_value == pytest.approx(reference.pvalue, rel=1e-9, abs=1e-15)
    assert result.statistic == pytest.approx(reference.statistic, rel=1e-12)
    if exact and b + c:
        assert result.p_value == pytest.approx(scipy_stats.binomtest(b, b + c).pvalue, rel=1e-9)
    if not exact:
        assert result.statistic == pytest.approx((abs(b - c) - 1) ** 2 / (b + c))
    assert 0.0 <= result.p_value <= 1.0 and result.discordant == b + c


@given(b=counts, c=counts)
def test_mcnemar_matches_statsmodels_and_binomtest(b, c):
    _check_mcnemar(b, c)


@pytest.mark.parametrize("b, c", [(0, 0), (25, 0), (13, 12), (0, 25), (26, 0), (13, 13), (20, 6)])
def test_mcnemar_switches_method_after_25_discordant(b, c):
    _check_mcnemar(b, c)
    assert stats.mcnemar(b, c).method == ("exact" if b + c <= 25 else "chi2-cc")


def test_mcnemar_without_discordant_pairs_keeps_the_null():
    assert stats.mcnemar(0, 0) == stats.McNemar(0, 0, 0.0, "exact", 1.0)


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=300))
def test_mcnemar_paired_counts_discordant_pairs(pairs):
    x = np.array([p[0] for p in pairs])
    y = np.array([p[1] for p in pairs])
    table = [[int((x & y).sum()), int((x & ~y).sum())], [int((~x & y).sum()), int((~x & ~y).sum())]]
    result = stats.mcnemar_paired(x, y)
    assert (result.b, result.c) == (table[0][1], table[1][0])
    reference = sm_mcnemar(table, exact=result.b + result.c <= 25, correction=True)
    assert result.p_value == pytest.approx(reference.pvalue, rel=1e-9, abs=1e-15)


def test_mcnemar_rejects_bad_input():
    with pytest.raises(TypeError, match="b must be a non-negative int"):
        stats.mcnemar(1.5, 2)
    with pytest.raises(ValueError, match="c must be a non-negative int"):
        stats.mcnemar(1, -2)
    with pytest.raises(ValueError, match="x_correct must be a one-dimensional boolean"):
        stats.mcnemar_paired([1, 0], np.array([True, False]))
    with pytest.raises(ValueError, match="same instances"):
        stats.mcnemar_paired(np.array([True]), np.array([True, False]))


probabilities = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@given(st.lists(st.one_of(probabilities, st.sampled_from([0.0, 0.01, 0.5, 1.0])), max_size=30))
def test_holm_matches_statsmodels(p_values):
    adjusted = stats.holm(p_values)
    assert len(adjusted) == len(p_values)
    if not p_values:
        return
    reference = multipletests(p_values, method="holm")[1]
    assert adjusted == pytest.approx(list(reference), abs=1e-12)
    order = np.argsort(p_values, kind="stable")
    in_order = np.asarray(adjusted)[order]
    assert np.all(np.diff(in_order) >= 0)  # monotone in the raw p-values
    assert all(raw <= adj <= 1.0 for raw, adj in zip(p_values, adjusted, strict=True))


def test_holm_rejects_values_outside_unit_interval():
    with pytest.raises(ValueError, match=r"p_values\[1\]"):
        stats.holm([0.1, 1.5])


# --- κ, agreement, majority (CBE paper, arXiv:2610.22894, §3.2, App. A, App. H; systematicity paper, arXiv:2609.13948, §3.5–3.6) -----------------


@given(q=st.one_of(st.sampled_from([0.0, 1.0]), st.floats(1e-12, 1 - 1e-12)), iota=probabilities)
def test_kappa_is_the_papers_formula(q, iota):
    result = stats.kappa(iota, q)
    if q in (0.0, 1.0):
        assert result is None
        return
    exact_q, exact_iota = Fraction(q), Fraction(iota)  # exact rational arithmetic
    expected = exact_q**2 + (1 - exact_q) ** 2
    assert stats.chance_agreement(q) == pytest.approx(float(expected))
    assert result == pytest.approx(float((exact_iota - expected) / (1 - expected)), rel=1e-9)


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=200))
def test_kappa_is_fleiss_kappa_for_two_presentations(pairs):
    """With pooled q, κ_n is Fleiss' κ for two raters (Scott's π); constant outputs: undefined."""
    yes = np.array(pairs)
    invariance = float((yes[:, 0] == yes[:, 1]).mean())
    q = float(yes.mean())
    result = stats.kappa(invariance, q)
    if q in (0.0, 1.0):
        assert result is None
        return
    table = np.column_stack([yes.sum(axis=1), 2 - yes.sum(axis=1)])
    assert result == pytest.approx(fleiss_kappa(table), abs=1e-12)


@given(q0=probabilities, q1=probabilities)
def test_pooled_and_separate_chance_references_differ_by_half_squared_gap(q0, q1):
    """CBE paper, arXiv:2610.22894, App. A: pooled − separate reference = (q0 − q1)²/2."""
    separate = q0 * q1 + (1 - q0) * (1 - q1)
    pooled = stats.chance_agreement((q0 + q1) / 2)
    assert pooled - separate == pytest.approx((q0 - q1) ** 2 / 2, abs=1e-12)


def test_kappa_bar_skips_undefined_levels():
    assert stats.kappa_bar([0.2, None, 0.4, float("nan")]) == pytest.approx(0.3)
    assert stats.kappa_bar([None, None]) is None
    assert stats.kappa_bar([]) is None


def test_kappa_single_pair_and_validation():
    assert stats.kappa(0.0, 0.5) == -1.0  # one disagreeing yes/no pair
    assert stats.kappa(1.0, 0.5) == 1.0
    with pytest.raises(ValueError, match="yes_rate"):
        stats.kappa(0.5, 1.2)
    with pytest.raises(ValueError, match="invariance"):
        stats.kappa(float("nan"), 0.5)


answers = st.one_of(st.none(), st.sampled_from(["yes", "no", "maybe"]))


@given(st.lists(st.tuples(answers, answers), max_size=50))
def test_repeat_agreement_conditions_on_jointly_parsed_pairs(pairs):
    first = [a for a, _ in pairs]
    again = [b for _, b in pairs]
    parsed = [(a, b) for a, b in pairs if a is not None and b is not None]
    result = stats.repeat_agreement(first, again)
    if not parsed:
        assert result is None
    else:
        assert result == pytest.approx(sum(a == b for a, b in parsed) / len(parsed))


def test_repeat_agreement_edge_cases():
    assert stats.repeat_agreement([None, None], [None, "yes"]) is None  # all invalid
    assert stats.repeat_agreement(["yes"], ["yes"]) == 1.0  # a single pair
    assert stats.repeat_agreement([], []) is None
    with pytest.raises(ValueError, match="matched prompt by prompt"):
        stats.repeat_agreement(["yes"], [])


@given(st.lists(answers, max_size=9), st.sampled_from(["yes", "no", "maybe"]))
def test_majority_vote_passes_exactly_when_most_attempts_are_correct(attempts, gold):
    """systematicity paper, arXiv:2609.13948, §3.6: a variation passes if solved in the majority of the attempts."""
    correct = sum(a == gold for a in attempts)
    assert (stats.majority_vote(attempts) == gold) == (2 * correct > len(attempts))


def test_majority_vote_ties_and_invalid_answers():
    assert stats.majority_vote([None, None, None]) is None
    assert stats.majority_vote([]) is None
    assert stats.majority_vote(["yes", "no"]) is None  # tie
    assert stats.majority_vote(["yes", "yes", "no", "no"]) is None  # 2 of 4 is no majority
    assert stats.majority_vote(["yes", "yes", None, None]) is None  # invalid attempts count
    assert stats.majority_vote(["yes", "yes", "yes", "no", None]) == "yes"
    assert stats.majority_vote(["no"]) == "no"


@given(st.integers(1, 12), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_systematicity_matches_per_task_loops(tasks, variations, seed):
    solved = np.random.default_rng(seed).random((tasks, variations)) < 0.6
    result = stats.systematicity(solved)
    rows = [list(map(bool, row)) for row in solved]
    assert result["any"] == pytest.approx(statistics.mean(max(r) for r in rows))
    assert result["fraction"] == pytest.approx(statistics.mean(sum(r) / len(r) for r in rows))
    assert result["all"] == pytest.approx(statistics.mean(min(r) for r in rows))
    assert result["gap"] == pytest.approx(result["any"] - result["all"])
    assert result["any"] >= result["fraction"] >= result["all"]


def test_systematicity_rejects_non_boolean_grids():
    with pytest.raises(ValueError, match=r"solved must be a non-empty boolean array"):
        stats.systematicity(np.ones((2, 3)))


# --- variance decomposition (systematicity paper, arXiv:2609.13948, App. A) ----------------------------------------------------


def _decompose_by_hand(passed: np.ndarray) -> tuple[float, float, float, float]:
    """systematicity paper, arXiv:2609.13948, App. A.2, one task, written with plain Python."""
    K, N = passed.shape
    rates = [float(sum(row)) / N for row in passed]
    overall = float(passed.sum()) / (K * N)
    total = statistics.variance(rates)  # (K − 1) denominator around the mean of the rates = p̂
    within = sum(p * (1 - p) / (N - 1) for p in rates) / K
    max_variance = K / (K - 1) * overall * (1 - overall)
    return total, within, total - within, max_variance


@given(st.integers(2, 8), st.integers(2, 8), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_variance_decomposition_matches_the_appendix(variations, attempts, tasks, seed):
    rng = np.random.default_rng(seed)
    rates = rng.random((tasks, variations, 1))
    passed = rng.random((tasks, variations, attempts)) < rates
    result = stats.variance_decomposition(passed)
    for t in range(tasks):
        total, within, between, max_variance = _decompose_by_hand(passed[t])
        assert result.total[t] == pytest.approx(total, abs=1e-12)
        assert result.within[t] == pytest.approx(within, abs=1e-12)
        assert result.between[t] == pytest.approx(between, abs=1e-12)
        assert result.max_variance[t] == pytest.approx(max_variance, abs=1e-12)
        if max_variance == 0:
            assert np.isnan(result.rho_total[t]) and np.isnan(result.rho_between[t])
            continue
        assert result.rho_total[t] == pytest.approx(total / max_variance)
        assert result.rho_within[t] == pytest.approx(within / max_variance)
        # the clipping rule (systematicity paper, arXiv:2609.13948, Table 1): ρ_between is clipped to zero, nothing else is
        assert result.rho_between[t] == pytest.approx(max(0.0, (total - within) / max_variance))
        assert result.rho_total[t] <= 1.0 + 1e-12  # σ²_max bounds the total sample variance


def test_variance_decomposition_clips_only_between():
    # Every variation at 2 of 4: no between-variation spread, all within noise.
    passed = np.array([[True, True, False, False]] * 3)
    result = stats.variance_decomposition(passed)
    assert result.total[0] == 0.0 and result.within[0] > 0.0 and result.between[0] < 0.0
    assert result.rho_between[0] == 0.0 and result.rho_within[0] > result.rho_total[0]
    averaged = stats.variance_decomposition(np.stack([passed, np.ones((3, 4), bool)])).mean()
    assert averaged["rho_between"] == 0.0  # the constant task has no variance and is left out
    assert averaged["rho_within"] == pytest.approx(result.rho_within[0])


def test_variance_decomposition_estimators_are_unbiased():
    """E[σ̂²_within] = E_τ[p(1 − p)/N] and E[σ̂²_between] = Var_τ(p) (sample variance, K − 1).

    20,000 simulated tasks: the Monte Carlo SE of each mean is below 3e-4; tolerance 1.5e-3.
    """
    rng = np.random.default_rng(7)
    true_rates = np.array([0.2, 0.5, 0.6, 0.9])
    passed = rng.random((20_000, 4, 5)) < true_rates[None, :, None]
    result = stats.variance_decomposition(passed)
    assert result.within.mean() == pytest.approx(
        (true_rates * (1 - true_rates) / 5).mean(), abs=1.5e-3
    )
    assert result.between.mean() == pytest.approx(true_rates.var(ddof=1), abs=1.5e-3)


def test_variance_decomposition_needs_two_variations_and_attempts():
    with pytest.raises(ValueError, match="at least 2 variations and 2 attempts"):
        stats.variance_decomposition(np.ones((1, 5), bool))
    with pytest.raises(ValueError, match="passed must be a boolean array"):
        stats.variance_decomposition(np.ones((2, 2, 2, 2), bool))


# --- family and per-transformation consistency (CRTBench paper, §2) -------------------------------------


@given(st.integers(1, 40), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_family_consistency_matches_loops(units, transformations, seed):
    rng = np.random.default_rng(seed)
    base = rng.random(units) < 0.9
    reform = rng.random((units, transformations)) < 0.8
    applies = rng.random((units, transformations)) < 0.7
    consistent = [
        base[u] and all(reform[u, k] for k in range(transformations) if applies[u, k])
        for u in range(units)
    ]
    got = stats.family_consistency(base, reform, applicable=applies)
    assert got == pytest.approx(sum(consistent) / units)
    assert stats.family_consistency(base, reform) == pytest.approx(
        float(np.mean([base[u] and reform[u].all() for u in range(units)]))
    )
    per = stats.per_transformation_consistency(base, reform, applicable=applies)
    for k in range(transformations):
        members = [u for u in range(units) if applies[u, k]]
        if not members:
            assert np.isnan(per[k])
        else:
            assert per[k] == pytest.approx(
                sum(base[u] and reform[u, k] for u in members) / len(members)
            )
    assert got <= float(base.mean())  # one wrong version makes the family inconsistent


def test_family_consistency_rejects_mismatched_shapes():
    with pytest.raises(
        ValueError, match=r"reformulation_correct must be boolean of shape \(units=2"
    ):
        stats.family_consistency(np.array([True, False]), np.ones((3, 4), bool))
    with pytest.raises(ValueError, match="applicable must be boolean"):
        stats.family_consistency(
            np.array([True]), np.ones((1, 4), bool), applicable=np.ones((1, 3))
        )


# --- the identities of the CBE paper, arXiv:2610.22894, App. A -----------------------------------------------------------


tables = st.tuples(*[st.integers(0, 60)] * 4).filter(lambda t: sum(t) > 0)


def _pairs_from_table(table: tuple[int, int, int, int]) -> np.ndarray:
    """(C0, C1) per pair from counts of (both right, only 0 right, only 1 right, both wrong)."""
    cells = [(True, True), (True, False), (False, True), (False, False)]
    return np.array(
        [cell for cell, n in zip(cells, table, strict=True) for _ in range(n)], dtype=bool
    )


def _estimate(figure: stats.AdditiveFigure) -> float:
    return float(figure.statistic(figure.columns.sum(axis=0)))


@given(tables)
def test_result_1_decomposition_and_triangle(table):
    """Ā = R + U/2 = 1/2 + (R − D)/2 and |Ā − 1/2| ≤ ι/2 (CBE paper, arXiv:2610.22894, App. A, Result 1)."""
    correct = _pairs_from_table(table)
    valid = np.ones_like(correct)
    R = _estimate(stats.robust_correct_figure(correct, valid))
    iota = _estimate(stats.invariance_figure(correct, valid))
    mean_accuracy = _estimate(stats.accuracy_figure(correct))
    D, U = iota - R, 1 - iota
    assert mean_accuracy == pytest.approx(R + U / 2)
    assert mean_accuracy == pytest.approx(0.5 + (R - D) / 2)
    assert abs(mean_accuracy - 0.5) <= iota / 2 + 1e-12
    A0, A1 = correct.mean(axis=0)
    e_c = A0 * A1 + (1 - A0) * (1 - A1)
    assert iota - e_c == pytest.approx(2 * (R - A0 * A1))  # "Two different chance references"


@given(tables)
def test_result_2_marginals_bound_but_do_not_identify_R(table):
    """R ∈ [max(0, A0 + A1 − 1), min(A0, A1)] and each value is attained (App. A, Result 2)."""
    correct = _pairs_from_table(table)
    total = len(correct)
    right0, right1 = (int(x) for x in correct.sum(axis=0))
    R = _estimate(stats.robust_correct_figure(correct, np.ones_like(correct)))
    low, high = max(0, right0 + right1 - total), min(right0, right1)
    assert low / total - 1e-12 <= R <= high / total + 1e-12
    for both in range(low, high + 1):  # vary the (1, 1) cell, adjust the other three
        other = (both, right0 - both, right1 - both, total - right0 - right1 + both)
        assert min(other) >= 0
        attained = _pairs_from_table(other)
        assert tuple(attained.sum(axis=0)) == (right0, right1)
        assert _estimate(
            stats.robust_correct_figure(attained, np.ones_like(attained))
        ) == pytest.approx(both / total)


# --- the crossing boundary (CBE paper, arXiv:2610.22894, App. A) -----------------------------------------------------


def _first_crossing_probabilities(rates, pairs, tau):
    """Exact P(n̂* = level) under independent binomial resampling, and P(no crossing)."""
    below = [
        scipy_stats.binom.cdf(math.ceil(tau * m) - 1, m, p)
        for p, m in zip(rates, pairs, strict=True)
    ]
    probabilities, above_so_far = [], 1.0
    for p_below in below:
        probabilities.append(above_so_far * p_below)
        above_so_far *= 1 - p_below
    return probabilities, above_so_far


@pytest.mark.parametrize(
    "rates, coin_flip",
    [
        ([0.97, 0.95, 0.93, 0.60, 0.55], False),  # a steep crossing
        ([0.97, 0.93, 0.86, 0.845, 0.84], True),  # a curve that sits on τ
        ([0.97, 0.95, 0.94, 0.93, 0.92], False),  # no crossing at all
    ],
)
def test_boundary_reproducibility_matches_exact_probabilities(rates, coin_flip):
    """Monte Carlo SE at B = 4,000 is at most 0.008; tolerance 0.03."""
    levels, pairs = [4, 8, 16, 32, 64], [200] * 5
    result = stats.boundary_reproducibility(levels, rates, pairs, tau=0.85, seed=3)
    observed = stats.crossing_level(levels, rates, 0.85)
    assert result.observed_level == observed
    per_level, none = _first_crossing_probabilities(rates, pairs, 0.85)
    exact = none if observed is None else per_level[levels.index(observed)]
    assert result.reproduction_probability == pytest.approx(exact, abs=0.03)
    assert sum(result.crossing_distribution.values()) == pytest.approx(1.0)
    assert result.coin_flip is coin_flip
    assert ("coin flip" in result.summary) is coin_flip
    assert result.as_dict()["observed_level"] == observed


def test_boundary_reproducibility_options_and_validation():
    levels, rates = [4, 8, 16], [0.95, None, 0.80]
    result = stats.boundary_reproducibility(levels, rates, [200, 0, 200], fresh_pairs=3200, seed=1)
    assert result.pairs == (3200, 3200) and result.observed_level == 16
    assert result == stats.boundary_reproducibility(
        levels, rates, [200, 0, 200], fresh_pairs=3200, seed=1
    )
    assert stats.crossing_level([4, 8], [0.9, 0.84], 0.85) == 8
    assert stats.crossing_level([4, 8], [0.9, None], 0.85) is None
    empty = stats.boundary_reproducibility([4, 8], [None, None], [0, 0])
    assert math.isnan(empty.reproduction_probability) and not empty.coin_flip
    assert "no invariance curve" in empty.summary
    with pytest.raises(ValueError, match="strictly increasing"):
        stats.boundary_reproducibility([8, 4], [0.9, 0.8], [10, 10])
    with pytest.raises(ValueError, match=r"invariance\[1\] is None"):
        stats.boundary_reproducibility([4, 8], [0.9, None], [10, 10])
    with pytest.raises(ValueError, match="one entry per level"):
        stats.boundary_reproducibility([4, 8], [0.9], [10, 10])


# --- sample sizes (CBE paper, arXiv:2610.22894, App. A "Sample sizes") -----------------------------------------------


def test_planner_reproduces_the_reference_half_widths():
    assert round(100 * stats.half_width(0.5, 200), 1) == 6.9
    assert round(100 * stats.half_width(0.85, 200), 1) == 4.9
    assert round(100 * stats.half_width(0.5, 1800), 1) == 2.3
    assert round(100 * stats.half_width(0.5, 50)) == 14
    assert round(100 * stats.half_width(0.5, 50, method="wilson")) == 13  # why Wald is the default
    assert max(stats.half_width(p, 50) for p in np.linspace(0, 1, 101)) == stats.half_width(0.5, 50)


def test_planner_reproduces_the_detectable_difference():
    """About 3.7 points at 80% power over 1,800 pairs needs discordance ψ ≈ 0.32."""
    assert round(100 * stats.minimum_detectable_difference(1800, discordance=0.32), 1) == 3.7
    assert (
        round(100 * stats.minimum_detectable_difference(1800, discordance=2 * 0.8 * 0.2), 1) == 3.7
    )
    assert round(100 * stats.minimum_detectable_difference(1800, discordance=0.5), 1) == 4.7
    # δ solves the power equation with the variance under the alternative, ψ − δ²
    delta = stats.minimum_detectable_difference(1800, discordance=0.32)
    z = scipy_stats.norm.ppf(0.975)
    power = scipy_stats.norm.cdf(delta * math.sqrt(1800) / math.sqrt(0.32 - delta**2) - z)
    assert power == pytest.approx(0.80, abs=1e-9)


def test_planner_validation():
    with pytest.raises(ValueError, match="pairs must be at least 1"):
        stats.half_width(0.5, 0)
    with pytest.raises(ValueError, match="method must be 'wald' or 'wilson'"):
        stats.half_width(0.5, 10, method="exact")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="discordance must be above 0"):
        stats.minimum_detectable_difference(100, discordance=0.0)
    with pytest.raises(ValueError, match="power"):
        stats.minimum_detectable_difference(100, discordance=0.3, power=1.0)
