"""The gold probe's shuffled-label null: each shuffle is the whole procedure, permuted.

The folds are dealt for the labels, stratified by label and level. A null that dealt them once,
for the gold, and reused them for every shuffle scored each shuffle on folds not balanced for
its own labels; where the probe can read the level (cells that pool levels), a training fold
with fewer positives at a level than its held-out fold teaches the probe the opposite of what
it is tested on, so the shuffles' AUROCs sink below the gold's and the p-values fall below
their level. Here each shuffle's folds are dealt anew, as the gold's are, and the p-values are
checked for their size on simulated null data: features that read the level and nothing else,
pooled over levels, and a per-level cell.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from pytest_competence.probe import PromptRows, instance_folds, probe_cells
from pytest_competence.probe._layers import _shuffled_and_dealt
from pytest_competence.probe._linear import cross_validated_auroc

ALPHA = 0.05
PERMUTATIONS = 19  # p ≤ 0.05 exactly when the gold beats all 19 shuffles: a size of 1/20
DRAWS = 400
#: A procedure whose p-values hold their level rejects in [LOW, HIGH] of the draws except with
#: probability below 2·10⁻⁴, whatever the seeds: the binomial's 10⁻⁴ quantiles at size α.
LOW, HIGH = (binom.ppf(1e-4, DRAWS, ALPHA) / DRAWS, binom.isf(1e-4, DRAWS, ALPHA) / DRAWS)


def _null_draw(draw: int, levels: int, per_level: int) -> tuple[np.ndarray, PromptRows]:
    """States that read the level (one-hot) beside three noise features, and a gold drawn
    apart from them: the probe has nothing of the gold to find beyond chance."""
    rng = np.random.default_rng([49, draw])
    level = np.repeat(np.arange(levels), per_level)
    gold = rng.random(len(level)) < 0.5
    states = np.concatenate([np.eye(levels)[level], rng.normal(size=(len(level), 3))], axis=1)
    rows = PromptRows(
        ("yes", "no"),
        (~gold).astype(np.int64),  # gold index 0: "yes"
        level,
        np.full(len(level), "original", dtype=object),
        np.arange(len(level)).astype(str).astype(object),
    )
    return states[:, None, :], rows


def _gold_folds_reused(states: np.ndarray, rows: PromptRows, strata: np.ndarray | None, seed):
    """The p-value of the null as it was: the same shuffled labels, every one scored on the
    folds dealt for the gold."""
    gold = rows.gold == 0
    labels, _ = _shuffled_and_dealt(gold, rows.instance, strata, 5, PERMUTATIONS, seed)
    fold = instance_folds(rows.instance, gold, folds=5, strata=strata, seed=seed)
    areas = cross_validated_auroc(states[:, 0], labels, np.broadcast_to(fold, labels.shape), 5, 1.0)
    return (1 + (areas[1:] >= areas[0]).sum()) / (1 + PERMUTATIONS)


def _rejections(levels: int, per_level: int) -> tuple[float, float]:
    """The share of null draws with p ≤ α: the probe's own, and the gold's folds reused."""
    pooled = levels > 1
    new, old = [], []
    for draw in range(DRAWS):
        states, rows = _null_draw(draw, levels, per_level)
        (cell,) = probe_cells(
            states, rows, per_level=not pooled, pooled=pooled, permutations=PERMUTATIONS, seed=draw
        )
        assert cell.level == (None if pooled else 0) and cell.curve.reason is None
        new.append(cell.curve.p_value[0])
        old.append(_gold_folds_reused(states, rows, rows.level if pooled else None, draw))
    return float(np.mean(np.array(new) <= ALPHA)), float(np.mean(np.array(old) <= ALPHA))


@pytest.mark.slow
def test_the_null_holds_its_level_where_the_probe_reads_the_level():
    """Levels pooled: 8 levels of 10 instances. Reusing the gold's folds rejects in about half
    of the null draws; dealing them anew for each shuffle holds α."""
    new, old = _rejections(levels=8, per_level=10)
    assert LOW <= new <= HIGH, f"size {new:.3f} outside [{LOW:.3f}, {HIGH:.3f}] at α = {ALPHA}"
    assert old > HIGH, f"the gold's folds reused: size {old:.3f}, expected above {HIGH:.3f}"


@pytest.mark.slow
def test_the_null_holds_its_level_in_a_per_level_cell():
    """One level of 40 instances: nothing level-like to read, and both dealings hold α."""
    new, old = _rejections(levels=1, per_level=40)
    assert LOW <= new <= HIGH, f"size {new:.3f} outside [{LOW:.3f}, {HIGH:.3f}] at α = {ALPHA}"
    assert old <= HIGH


def test_every_shuffle_is_scored_on_folds_dealt_for_its_own_labels():
    """Each shuffle's folds are balanced for its labels at each level, as the gold's are, keep
    an instance's rows together, and come from a stream of their own: the gold's folds are
    :func:`instance_folds`', and the same seed deals the same folds."""
    rng = np.random.default_rng(12)
    instances = np.repeat(np.arange(90), 2)  # two rows (presentations) per instance
    gold = np.repeat(rng.random(90) < 0.4, 2)
    level = np.repeat(rng.choice([3, 4, 8], 90), 2)
    labels, fold = _shuffled_and_dealt(gold, instances, level, 5, 30, 7)
    assert labels.shape == fold.shape == (31, 180)
    assert np.array_equal(labels[0], gold)
    assert np.array_equal(fold[0], instance_folds(instances, gold, folds=5, strata=level, seed=7))
    assert np.array_equal(fold[:, ::2], fold[:, 1::2]) and np.array_equal(
        labels[:, ::2], labels[:, 1::2]
    )
    for row in range(31):
        for lv in (3, 4, 8):
            mine = level[::2] == lv
            assert labels[row, ::2][mine].sum() == gold[::2][mine].sum()  # shuffled within level
            for answer in (True, False):
                group = mine & (labels[row, ::2] == answer)
                counts = np.bincount(fold[row, ::2][group], minlength=5)
                assert counts.max() - counts.min() <= 1, (row, lv, answer, counts)
    assert len({fold[row].tobytes() for row in range(31)}) == 31  # dealt anew for each
    again = _shuffled_and_dealt(gold, instances, level, 5, 30, 7)
    assert np.array_equal(again[0], labels) and np.array_equal(again[1], fold)
