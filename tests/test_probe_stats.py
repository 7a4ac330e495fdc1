"""The probes' statistics against independent implementations (no model: numpy arrays only).

CBE paper, arXiv:2610.22894, App. E.3 (Table 11) and App. I (Figure 5). The ridge logistic
estimator is checked against scikit-learn's ``LogisticRegression`` on the same standardised
features (and against its own optimality condition where scikit-learn is missing), the AUROC
against scipy's Mann–Whitney U, the cross-validated curve against a scikit-learn pipeline on
the same folds, and δ and s against statsmodels' OLS of the margin on an effect-coded gold
(intercept = the mean of the two gold-cell means, slope = half their difference, exactly, for
any cell sizes) on synthetic logits with a known default and signal.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import mannwhitneyu

from pytest_competence.probe import (
    PromptRows,
    auroc,
    decompose,
    instance_folds,
    lens_decomposition,
    probe_cells,
    probe_layers,
    ridge_logistic,
    score_matrix,
)
from pytest_competence.probe._linear import standardise


def _synthetic(rng, n, d, signal=1.0):
    X = rng.normal(size=(n, d))
    y = (signal * X[:, 0] + rng.normal(size=n)) > 0
    return X, y


# -- the estimator --------------------------------------------------------------------------------


@pytest.mark.parametrize("n,d,l2", [(60, 5, 1.0), (40, 300, 1.0), (200, 64, 0.1), (30, 30, 10.0)])
def test_ridge_logistic_equals_scikit_learn(n, d, l2):
    sklearn = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(n + d)
    X, y = _synthetic(rng, n, d)
    Xs, _ = standardise(X, X)
    w, b = ridge_logistic(Xs, y, l2=l2)
    ref = sklearn.LogisticRegression(C=1 / l2, tol=1e-12, max_iter=100_000).fit(Xs, y)
    scale = np.abs(ref.coef_).max()
    assert np.abs(w - ref.coef_[0]).max() < 1e-5 * max(1.0, scale)
    assert abs(b - ref.intercept_[0]) < 1e-5 * max(1.0, abs(ref.intercept_[0]))


@pytest.mark.parametrize("n,d", [(50, 8), (25, 200)])
def test_ridge_logistic_satisfies_its_optimality_condition(n, d):
    """Independent of any library: the gradient of the objective vanishes at the returned
    (w, b), including d > n (where the fit runs in the row space)."""
    rng = np.random.default_rng(d)
    X, y = _synthetic(rng, n, d)
    w, b = ridge_logistic(X, y, l2=0.5)
    residual = expit(X @ w + b) - y
    assert abs(residual.sum()) < 1e-8
    assert np.abs(X.T @ residual + 0.5 * w).max() < 1e-8


def test_ridge_logistic_refuses_one_class():
    with pytest.raises(ValueError, match="both classes"):
        ridge_logistic(np.ones((4, 2)), np.array([True] * 4))


def test_auroc_equals_mann_whitney_with_ties():
    rng = np.random.default_rng(3)
    for _ in range(20):
        scores = rng.integers(0, 6, size=40).astype(float)  # many ties
        labels = rng.random(40) < 0.4
        u = mannwhitneyu(scores[labels], scores[~labels]).statistic
        assert auroc(scores, labels) == pytest.approx(u / (labels.sum() * (~labels).sum()))


def test_auroc_is_vectorised_and_undefined_without_both_classes():
    rng = np.random.default_rng(4)
    scores, labels = rng.normal(size=(3, 30)), rng.random((3, 30)) < 0.5
    rows = auroc(scores, labels)
    assert rows == pytest.approx([float(auroc(s, l)) for s, l in zip(scores, labels)])
    assert np.isnan(auroc(np.arange(5.0), np.ones(5, bool)))
    assert np.isnan(auroc(np.array([0.0, np.nan, 1.0]), np.array([True, False, False])))
    assert auroc(np.zeros(6), np.array([1, 0, 1, 0, 1, 0], bool)) == 0.5


def test_folds_keep_an_instance_together_and_balance_each_answer_and_level():
    rng = np.random.default_rng(5)
    instances = np.repeat([f"i{k}" for k in range(60)], 2)  # two presentations each
    gold = np.repeat(rng.random(60) < 0.5, 2)
    level = np.repeat(rng.choice([4, 8, 16], 60), 2)
    fold = instance_folds(instances, gold, folds=5, strata=level, seed=1)
    for name in np.unique(instances):
        assert len(set(fold[instances == name])) == 1
    for g in (True, False):
        for lv in (4, 8, 16):
            counts = np.bincount(fold[::2][(gold[::2] == g) & (level[::2] == lv)], minlength=5)
            assert counts.max() - counts.min() <= 1
    assert np.array_equal(fold, instance_folds(instances, gold, folds=5, strata=level, seed=1))
    with pytest.raises(ValueError, match="disagree on the gold"):
        instance_folds(["a", "a"], [True, False], folds=2)


# -- the curve ------------------------------------------------------------------------------------


def _planted_states(rng, instances=120, layers=5, d=24, from_layer=2, strength=4.0):
    gold = rng.random(instances) < 0.5
    X = rng.normal(size=(instances, layers, d)).astype(np.float32)
    X[:, from_layer:, 3] += strength * (2 * gold[:, None] - 1)
    X[:, 0, :] = 1.5  # one layer that carries nothing at all: every prompt alike
    return X, gold


def test_probe_finds_the_layer_a_signal_starts_and_the_null_sits_at_chance():
    rng = np.random.default_rng(6)
    X, gold = _planted_states(rng)
    curve = probe_layers(X, gold, np.arange(len(gold)), permutations=200, seed=2)
    assert curve.first_layer == 2
    assert curve.auroc[0] == 0.5  # constant features: every held-out score ties
    assert curve.auroc[1] < 0.7
    assert np.all(curve.auroc[2:] > 0.97)
    assert np.all(np.abs(curve.null_mean - 0.5) < 0.03)
    assert curve.null_low[0] == curve.null_high[0] == 0.5
    assert np.all(curve.null_low[1:] < 0.5) and np.all(curve.null_high[1:] > 0.5)
    assert np.all(curve.null_high[1:] < 0.75)
    assert curve.null_low[1] <= curve.auroc[1] <= curve.null_high[1]
    assert np.all(curve.p_value[2:] == 1 / 201)
    assert curve.p_value[1] > 0.05
    again = probe_layers(X, gold, np.arange(len(gold)), permutations=200, seed=2)
    assert np.array_equal(curve.auroc, again.auroc) and np.array_equal(
        curve.null_low, again.null_low
    )


def test_probe_curve_equals_a_scikit_learn_pipeline_on_the_same_folds():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(7)
    X, gold = _planted_states(rng, instances=80, layers=3, d=40, strength=0.8)
    instances = np.array([f"z{k}" for k in range(80)])
    curve = probe_layers(X, gold, instances, permutations=0, l2=2.0, folds=4, seed=3)
    fold = instance_folds(instances, gold, folds=4, seed=3)
    for layer in range(1, 3):
        areas = []
        for f in range(4):
            train, test = fold != f, fold == f
            scaler = StandardScaler().fit(X[train, layer])
            fit = LogisticRegression(C=0.5, tol=1e-12, max_iter=100_000).fit(
                scaler.transform(X[train, layer]), gold[train]
            )
            areas.append(
                roc_auc_score(gold[test], fit.decision_function(scaler.transform(X[test, layer])))
            )
        assert curve.auroc[layer] == pytest.approx(np.mean(areas), abs=1e-9)
    assert sklearn  # the pipeline above is scikit-learn's


def test_probe_says_why_it_cannot_fit_few_instances():
    X = np.random.default_rng(8).normal(size=(12, 2, 4))
    gold = np.array([True] * 3 + [False] * 9)
    curve = probe_layers(X, gold, np.arange(12))
    assert curve.reason == (
        "needs at least 5 instances of each gold answer (one per fold), has 3 and 9"
    )
    assert np.all(np.isnan(curve.auroc)) and curve.first_layer is None


def test_probe_cells_group_by_presentation_and_level_and_pool_with_levels_as_strata():
    rng = np.random.default_rng(9)
    n = 80
    X, gold = _planted_states(rng, instances=n, layers=3, d=10)
    states = np.concatenate([X, X[:, ::-1]])  # equivalent: the signal in layer 0 only
    rows = PromptRows(
        ("yes", "no"),
        np.concatenate([~gold, ~gold]).astype(np.int64),
        np.tile(np.repeat([4, 8], n // 2), 2),
        np.array(["original"] * n + ["equivalent"] * n, dtype=object),
        np.tile(np.array([f"i{k}" for k in range(n)], dtype=object), 2),
    )
    cells = probe_cells(states, rows, permutations=20)
    assert [(c.presentation, c.level) for c in cells] == [
        ("original", 4),
        ("original", 8),
        ("original", None),
        ("equivalent", 4),
        ("equivalent", 8),
        ("equivalent", None),
    ]
    by = {(c.presentation, c.level): c.curve for c in cells}
    assert by["original", None].first_layer == 2 and by["equivalent", None].first_layer == 0
    assert by["original", 4].instances == n // 2 and by["original", None].instances == n
    ok = np.ones(2 * n, bool)
    ok[: n // 2] = False  # the original's level-4 rows could not be read
    dropped = {
        (c.presentation, c.level): c.curve for c in probe_cells(states, rows, ok=ok, permutations=0)
    }
    assert dropped["original", 4].reason == "no prompt of this cell could be read"
    assert dropped["original", None].instances == n // 2


# -- the decomposition ----------------------------------------------------------------------------


def _scored_design(rng, pairs=300, default=1.4, signal=0.6, noise=1.0, levels=(4, 8)):
    """Two presentations per instance; m = δ + s·(±1 for gold yes/no) + noise; unbalanced
    gold cells (60% yes), so the balanced-cell means differ from plain means."""
    gold = (rng.random(pairs) < 0.4).astype(np.int64)  # 0: "yes"
    level = rng.choice(levels, pairs)
    rows = PromptRows(
        ("yes", "no"),
        np.repeat(gold, 2),
        np.repeat(level, 2),
        np.tile(np.array(["original", "equivalent"], dtype=object), pairs),
        np.repeat(np.array([f"z{k}" for k in range(pairs)], dtype=object), 2),
    )
    sign = np.where(rows.gold == 0, 1.0, -1.0)
    m = default + signal * sign + noise * rng.normal(size=2 * pairs)
    offset = rng.normal(size=2 * pairs)  # only differences of scores matter
    return rows, np.column_stack([offset + m, offset]), m, sign


def test_default_and_signal_equal_an_effect_coded_regression():
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(10)
    rows, scores, m, sign = _scored_design(rng)
    cells = decompose(scores, rows, B=500)
    assert len(cells) == 6
    for cell in cells:
        mine = rows.presentation == cell.presentation
        if cell.level is not None:
            mine &= rows.level == cell.level
        fit = sm.OLS(m[mine], sm.add_constant(sign[mine])).fit()
        assert cell.default.estimate == pytest.approx(fit.params[0], abs=1e-10)
        assert cell.signal.estimate == pytest.approx(fit.params[1], abs=1e-10)
        robust = fit.get_robustcov_results("HC1").bse
        for figure, se in ((cell.default, robust[0]), (cell.signal, robust[1])):
            assert 0.75 < (figure.high - figure.low) / (2 * 1.96 * se) < 1.3
        said_yes = m[mine] > 0
        assert cell.yes_rate.estimate == pytest.approx(said_yes.mean())
        assert cell.accuracy.estimate == pytest.approx((said_yes == (sign[mine] > 0)).mean())
        assert cell.gold_counts == {
            "yes": int((sign[mine] > 0).sum()),
            "no": int((sign[mine] < 0).sum()),
        }


def test_known_default_and_signal_fall_inside_their_intervals():
    rng = np.random.default_rng(11)
    rows, scores, _, _ = _scored_design(rng, pairs=2000, default=-0.8, signal=2.5)
    pooled = [c for c in decompose(scores, rows, B=1000) if c.level is None]
    for cell in pooled:
        assert cell.default.low < -0.8 < cell.default.high
        assert cell.signal.low < 2.5 < cell.signal.high
        assert cell.default.high - cell.default.low < 0.15


def test_decomposition_without_scores_and_with_ties():
    rows = PromptRows(
        ("yes", "no"),
        np.array([0, 1, 0, 1]),
        np.full(4, 4),
        np.array(["original"] * 4, dtype=object),
        np.array(["a", "b", "c", "d"], dtype=object),
    )
    scores = np.array([[1.0, 0.0], [0.0, 2.0], [np.nan, np.nan], [3.0, 3.0]])
    cell = decompose(scores, rows, B=0)[0]
    assert (cell.prompts, cell.scored) == (4, 3)
    assert cell.accuracy.estimate == 0.5  # no score and a tie count wrong
    assert cell.yes_rate.estimate == 0.5  # of the two prompts with an answer
    # gold yes: m = 1 (one scored row); gold no: m = −2 and 0 → μ_no = −1
    assert cell.default.estimate == pytest.approx(0.0)
    assert cell.signal.estimate == pytest.approx(1.0)
    one_gold = decompose(scores[:1], rows.take([0]), B=0)[0]
    assert np.isnan(one_gold.default.estimate) and np.isnan(one_gold.signal.estimate)


def test_more_than_two_answers_follow_their_definition():
    rng = np.random.default_rng(12)
    n, answers = 240, ("A", "B", "C")
    gold = rng.integers(0, 3, n)
    scores = rng.normal(size=(n, 3)) + np.eye(3)[gold] * 1.2 + np.array([0.5, 0.0, -0.3])
    rows = PromptRows(
        answers,
        gold,
        np.full(n, 2),
        np.array(["original"] * n, dtype=object),
        np.array([f"q{k}" for k in range(n)], dtype=object),
    )
    cell = decompose(scores, rows, B=200)[0]
    # by hand: per gold class, mean of (gold − best other) and of (a − mean of the others)
    signal, defaults = [], {a: [] for a in answers}
    for g in range(3):
        mine = scores[gold == g]
        others = np.delete(mine, g, axis=1)
        signal.append(np.mean(mine[:, g] - others.max(axis=1)))
        for k, a in enumerate(answers):
            defaults[a].append(np.mean(mine[:, k] - np.delete(mine, k, axis=1).mean(axis=1)))
    assert cell.signal.estimate == pytest.approx(np.mean(signal))
    for a in answers:
        assert cell.defaults[a].estimate == pytest.approx(np.mean(defaults[a]))
    assert cell.default.estimate == cell.defaults["A"].estimate
    binary = decompose(
        scores[:, :2],
        PromptRows(("A", "B"), np.minimum(gold, 1), rows.level, rows.presentation, rows.instance),
        B=0,
    )[0]
    assert binary.defaults == {}


def test_lens_decomposition_is_the_decomposition_layer_by_layer():
    rng = np.random.default_rng(13)
    rows, scores, _, _ = _scored_design(rng, pairs=80)
    lens = np.stack([scores * 0.1, scores, scores * 3.0], axis=1)
    by_layer = lens_decomposition(lens, rows)
    cells = [decompose(lens[:, k], rows, B=0) for k in range(3)]
    for j, part in enumerate(by_layer):
        for k in range(3):
            assert part["default"][k] == pytest.approx(cells[k][j].default.estimate)
            assert part["signal"][k] == pytest.approx(cells[k][j].signal.estimate)
            assert part["accuracy"][k] == pytest.approx(cells[k][j].accuracy.estimate)


def test_score_matrix_reads_backend_scores_and_keeps_errors_as_nan():
    got = score_matrix([{"yes": -0.1, "no": -2.0}, RuntimeError("boom")], ("yes", "no"))
    assert got[0].tolist() == [-0.1, -2.0] and np.isnan(got[1]).all()


# -- bad arguments --------------------------------------------------------------------------------

_X = np.zeros((20, 2, 3))
_GOLD = np.arange(20) % 2 == 0
BAD = [
    ("folds", dict(folds=1), "folds must be an integer ≥ 2, got folds=1; e.g. folds=5"),
    ("folds-float", dict(folds=5.0), "folds must be an integer ≥ 2"),
    ("l2", dict(l2=0), "l2 must be a positive number (the ridge penalty λ"),
    ("permutations", dict(permutations=-1), "permutations must be an integer ≥ 0"),
    ("threshold", dict(threshold=0.3), "threshold must be an AUROC in [0.5, 1]"),
    ("confidence", dict(confidence=1.0), "confidence must be in (0, 1)"),
    ("seed", dict(seed=-2), "seed must be an integer ≥ 0"),
    ("layers", dict(layers=[0, 1, 2]), "layers names 3 layers but states has 2"),
]


@pytest.mark.parametrize("name,kwargs,message", BAD, ids=[b[0] for b in BAD])
def test_bad_probe_settings_name_the_argument(name, kwargs, message):
    with pytest.raises(ValueError) as info:
        probe_layers(_X, _GOLD, np.arange(20), **kwargs)
    assert message in str(info.value)


def test_bad_probe_inputs_name_the_argument():
    with pytest.raises(ValueError, match="gold a boolean"):
        probe_layers(_X, _GOLD.astype(int), np.arange(20))
    with pytest.raises(ValueError, match="states must be finite"):
        probe_layers(np.full((20, 2, 3), np.nan), _GOLD, np.arange(20))
    rows = PromptRows(
        ("yes", "no"),
        np.zeros(20, np.int64),
        np.zeros(20, np.int64),
        np.array(["o"] * 20, dtype=object),
        np.arange(20).astype(str).astype(object),
    )
    with pytest.raises(TypeError, match="unknown settings \\['fold'\\]"):
        probe_cells(_X, rows, fold=3)
    with pytest.raises(ValueError, match="scores must be \\(N, K\\) = \\(20, 2\\)"):
        decompose(np.zeros((20, 3)), rows)
    with pytest.raises(ValueError, match="gold must index answers"):
        PromptRows(
            ("yes", "no"),
            np.array([2]),
            np.array([4]),
            np.array(["o"], dtype=object),
            np.array(["a"], dtype=object),
        )
    with pytest.raises(ValueError, match="PromptRows.level must have shape \\(1,\\)"):
        PromptRows(
            ("yes", "no"),
            np.array([0]),
            np.array([4, 4]),
            np.array(["o"], dtype=object),
            np.array(["a"], dtype=object),
        )


def test_a_layer_reaching_the_threshold_inside_the_null_band_is_not_above_the_null():
    """The paper's first layer looks at the threshold alone; ``first_above_null`` also asks
    the AUROC to clear the shuffled-label band. At threshold 0.5 the constant layer 0 reaches
    it (every held-out score ties: AUROC 0.5), but so does every shuffle there."""
    rng = np.random.default_rng(6)
    X, gold = _planted_states(rng)
    curve = probe_layers(X, gold, np.arange(len(gold)), permutations=50, threshold=0.5, seed=2)
    assert curve.first_layer == 0 and curve.auroc[0] == curve.null_high[0] == 0.5
    assert curve.first_above_null == 2
    assert curve.to_dict()["first_above_null"] == 2
    strict = probe_layers(X, gold, np.arange(len(gold)), permutations=50, seed=2)
    assert strict.first_layer == strict.first_above_null == 2
    assert probe_layers(X, gold, np.arange(len(gold)), permutations=0).first_above_null is None


def test_the_reports_say_where_the_first_layer_is_not_above_the_null():
    from pytest_competence.report._probes import _first_layer

    assert _first_layer({"first_layer": 3, "first_above_null": 3}) == "3"
    assert _first_layer({"first_layer": 3}) == "3"  # a document from before the field
    assert _first_layer({"first_layer": 3, "first_above_null": 5}) == (
        "3 (above the null band from 5)"
    )
    assert _first_layer({"first_layer": 3, "first_above_null": None}) == (
        "3 (never above the null band)"
    )
    assert _first_layer({"first_layer": None, "first_above_null": None}) == "never"


def test_the_decomposition_imports_no_probe_statistics():
    """A scored run reads the output decomposition only: importing it (and the package's face)
    loads neither the probes' modules nor scipy's stats — they once cost every scored run 46 MB
    and about a second of CPU."""
    import subprocess
    import sys

    code = (
        "import sys, pytest_competence.probe as p; from pytest_competence.probe import "
        "decompose_evaluation; print(sorted(m for m in ('scipy.stats', 'scipy.optimize', "
        "'pytest_competence.probe._linear', 'pytest_competence.probe._layers', 'torch') "
        "if m in sys.modules)); p.probe_layers"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
