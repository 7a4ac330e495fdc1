"""Reference policies behave as declared, on every vocabulary and control (direct, no pytester)."""

from __future__ import annotations

import pytest

from pytest_competence.engine.evaluate import evaluate
from pytest_competence.engine.profile import profile
from pytest_competence.models import resolve_model
from pytest_competence.strategies import CATALOG, PRESENTATIONS, Ordering

ALL = list(PRESENTATIONS)


def _accuracy(spec, family, levels=(4, 9, 16), pairs=20, presentations=ALL):
    items = family.design(levels=list(levels), pairs=pairs, presentations=list(presentations))
    ev = evaluate(family, items, resolve_model(spec))
    assert all(o.valid for row in ev.observations for o in row)
    return profile(ev)


@pytest.mark.parametrize("vocabulary", [v.name for v in CATALOG])
def test_ideal_is_competent_in_every_vocabulary(vocabulary):
    for level in _accuracy("ref:ideal", Ordering(vocabulary=vocabulary)):
        assert level.all_correct == 1.0


@pytest.mark.parametrize(
    "options",
    [
        {"protocol": "L"},
        {"names": "random"},
        {"names_line": "chain"},
        {"distractors": 0.5},
        {"distance": 1},
        {"distance": 3, "vocabulary": "vorpward_morpward", "distractors": 1.0},
    ],
)
def test_ideal_is_competent_under_every_control(options):
    for level in _accuracy("ref:ideal", Ordering(**options), levels=(7, 12)):
        assert level.all_correct == 1.0


def test_endpoint_shortcut_answers_endpoints_but_not_interior_queries():
    for level in _accuracy("ref:endpoint", Ordering()):
        assert level.all_correct == 1.0
    interior = _accuracy("ref:endpoint", Ordering(distance=2), levels=(8, 32), pairs=200)
    for level in interior:
        assert level.accuracy == pytest.approx(0.5, abs=0.1)


def test_forward_reader_passes_original_and_fails_rewritten_presentations():
    levels = _accuracy(
        "ref:forward-reader",
        Ordering(),
        presentations=["original", "reshuffle", "rewrite", "equivalent"],
        pairs=40,
    )
    for level in levels:
        acc = level.accuracy_by_presentation
        assert acc["original"] == acc["reshuffle"] == 1.0
        assert acc["rewrite"] < 0.9 and acc["equivalent"] < 0.9


def test_names_order_reader_only_works_on_the_chain_ordered_artifact():
    for level in _accuracy("ref:names-order", Ordering(names_line="chain")):
        assert level.all_correct == 1.0
    for level in _accuracy("ref:names-order", Ordering(), levels=(16, 64), pairs=200):
        assert level.accuracy == pytest.approx(0.5, abs=0.1)


def test_threshold_policy_fails_exactly_beyond_its_size():
    levels = _accuracy("ref:threshold?n=9", Ordering(), levels=(4, 9, 10, 16))
    assert [lv.level for lv in levels if lv.all_correct < 1] == [10, 16]
    for lv in levels:
        assert lv.accuracy_by_presentation["original"] == 1.0


@pytest.mark.parametrize("spec, answer", [("ref:always-yes", "yes"), ("ref:always-no", "no")])
def test_constant_policies(spec, answer):
    for level in _accuracy(spec, Ordering(), presentations=["original", "equivalent"]):
        assert level.accuracy == 0.5 and level.invariance == 1.0
