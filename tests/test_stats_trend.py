"""The checkpoint series behind ``competence trend`` (:mod:`pytest_competence.stats.trend`):
matching by instance id, McNemar against scipy's binomial test and statsmodels, Holm against
statsmodels' ``multipletests``, and the non-inferiority series against the gate's own decision.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from pytest_competence import stats


def make_checkpoints(seed: int = 5) -> list[stats.Checkpoint]:
    rng = np.random.default_rng(seed)
    ids = [f"i{k}" for k in range(90)]
    level = np.repeat([4, 8, 12], 30)
    checkpoints = []
    for name, skill in [("step-100", 0.8), ("step-200", 0.75), ("step-300", 0.6)]:
        order = rng.permutation(90)  # archives need not list instances in the same order
        correct = {p: rng.random(90) < skill for p in ("original", "converse")}
        checkpoints.append(
            stats.Checkpoint(
                name=name,
                ids=[ids[k] for k in order],
                level=level[order],
                correct={p: v[order] for p, v in correct.items()},
            )
        )
    return checkpoints


def test_series_compares_with_the_previous_and_the_first_matched_by_id():
    checkpoints = make_checkpoints()
    rows = stats.checkpoint_series(checkpoints, alpha=0.05, margin=0.05)
    pairs = sorted({(r.checkpoint, r.reference, r.against) for r in rows})
    assert pairs == [
        ("step-200", "step-100", "previous"),
        ("step-300", "step-100", "first"),
        ("step-300", "step-200", "previous"),
    ]
    assert len(rows) == 3 * 3 * 2
    by_id = [
        {
            i: (lv, {p: v[k] for p, v in cp.correct.items()})
            for k, (i, lv) in enumerate(zip(cp.ids, cp.level))
        }
        for cp in checkpoints
    ]
    names = [cp.name for cp in checkpoints]
    for against in ("previous", "first"):
        for later in (1, 2):
            chosen = [r for r in rows if r.checkpoint == names[later] and r.against == against]
            if not chosen:
                continue
            earlier = names.index(chosen[0].reference)
            p_values = []
            for row in chosen:
                ids = sorted(i for i, (lv, _) in by_id[0].items() if lv == row.n)
                x = np.array([by_id[later][i][1][row.presentation] for i in ids])
                y = np.array([by_id[earlier][i][1][row.presentation] for i in ids])
                b, c = int(np.sum(x & ~y)), int(np.sum(~x & y))
                assert (row.b, row.c, row.pairs) == (b, c, len(ids))
                assert row.delta == pytest.approx(x.mean() - y.mean())
                assert (row.candidate, row.baseline) == pytest.approx((x.mean(), y.mean()))
                assert row.p_value == pytest.approx(
                    scipy_stats.binomtest(min(b, c), b + c).pvalue
                    if b + c <= 25
                    else sm_mcnemar([[0, b], [c, 0]], exact=False).pvalue
                )
                assert (row.low, row.high) == stats.paired_difference_interval(b, c, len(ids))
                assert row.detectable_drop == stats.detectable_drop(
                    b, c, len(ids), alpha=0.05 / len(chosen)
                )
                p_values.append(row.p_value)
            adjusted = multipletests(p_values, method="holm")[1]
            assert [r.p_holm for r in chosen] == pytest.approx(list(adjusted))
            assert [r.regression for r in chosen] == [
                r.delta < -0.05 and r.p_holm < 0.05 for r in chosen
            ]


def test_a_non_inferiority_series_applies_the_gates_decision_to_each_comparison():
    """Each comparison's cells, counted here from the bits, decided by the non-inferiority gate's
    own test (one-sided, Holm across the comparison's cells); the McNemar figures unchanged."""
    checkpoints = make_checkpoints()
    # Independent bits on 30 pairs a cell disagree often: only a wide margin is ever shown.
    plain = stats.checkpoint_series(checkpoints, alpha=0.05, margin=0.4)
    rows = stats.checkpoint_series(checkpoints, alpha=0.05, margin=0.4, test="non-inferiority")
    keep = ("b", "c", "pairs", "p_value", "p_holm", "regression", "low", "high")
    assert [[getattr(r, k) for k in keep] for r in rows] == [
        [getattr(r, k) for k in keep] for r in plain
    ]
    assert all(r.test == "regression" and r.noninferior is None for r in plain)
    comparisons: dict[tuple[str, str], list[stats.TrendRow]] = {}
    for row in rows:
        comparisons.setdefault((row.checkpoint, row.reference), []).append(row)
    verdicts = []
    for chosen in comparisons.values():
        decision = stats.noninferiority_decision(
            [(r.b, r.c, r.pairs) for r in chosen], margin=0.4, alpha=0.05
        )
        for row, cell in zip(chosen, decision.cells, strict=True):
            assert row.test == "non-inferiority"
            assert row.lower_holm == pytest.approx(cell.lower_holm, rel=1e-12)
            assert row.noninferior is cell.noninferior
        power = stats.gate_power(
            [(r.b, r.c, r.pairs) for r in chosen], alpha=0.05, margin=0.4, test="non-inferiority"
        )
        assert [r.detectable_drop for r in chosen] == pytest.approx(
            [cell.detectable_drop for cell in power.cells], rel=1e-12
        )
        verdicts.append(decision.passed)
    # The series holds both outcomes: a comparison shown non-inferior and one that is not.
    assert sorted(verdicts) == [False, False, True], verdicts


def test_series_refuses_checkpoints_that_do_not_match():
    first, second, _ = make_checkpoints()
    with pytest.raises(ValueError, match="at least two"):
        stats.checkpoint_series([first])
    fewer = stats.Checkpoint(
        "short",
        list(second.ids)[1:],
        np.asarray(second.level)[1:],
        {p: np.asarray(v)[1:] for p, v in second.correct.items()},
    )
    with pytest.raises(
        ValueError, match="'short' holds other instances than 'step-100': 1 missing"
    ):
        stats.checkpoint_series([first, fewer])
    moved = stats.Checkpoint("moved", second.ids, np.asarray(second.level) + 1, second.correct)
    with pytest.raises(ValueError, match="'moved' puts instance"):
        stats.checkpoint_series([first, moved])
    other = stats.Checkpoint("other", second.ids, second.level, {"shuffled": np.ones(90, bool)})
    with pytest.raises(ValueError, match="share no presentation"):
        stats.checkpoint_series([first, other])
    floats = stats.Checkpoint("floats", second.ids, second.level, {"original": np.ones(90)})
    with pytest.raises(ValueError, match=r"correct\['original'\] must be a boolean array"):
        stats.checkpoint_series([first, floats])
    twice = stats.Checkpoint("twice", ["a", "a"], np.array([4, 4]), {"original": np.ones(2, bool)})
    with pytest.raises(ValueError, match="must be unique"):
        stats.checkpoint_series([twice, twice])
    with pytest.raises(ValueError, match="test must be 'regression' or 'non-inferiority'"):
        stats.checkpoint_series([first, second], test="equivalence")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs a margin above 0"):
        stats.checkpoint_series([first, second], test="non-inferiority")
