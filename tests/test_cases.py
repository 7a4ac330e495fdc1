"""The ordering family's case space: design cases, choices, shrink targets, rendering."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from pytest_competence.models.reference import POLICIES
from pytest_competence.strategies import (
    CATALOG,
    PRESENTATIONS,
    InvalidArgument,
    Ordering,
)
from pytest_competence.strategies.ordering.policies import read_ordering

ALL = tuple(PRESENTATIONS)
IDEAL = POLICIES["ideal"]()


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"protocol": "L"},
        {"distractors": 0.5, "names": "random", "vocabulary": "older_younger"},
        {"names_line": "chain", "distance": 2, "vocabulary": "left_right"},
    ],
    ids=["P", "L", "distractors-random-names", "chain-interior"],
)
@pytest.mark.parametrize(
    "presentations",
    [("original", "equivalent"), ALL, ("original",)],
    ids=["pair", "all", "original-only"],
)
def test_design_instances_are_cases_with_the_same_prompts(options, presentations):
    family = Ordering(**options)
    space = family.strategies.case_space(max_n=1024, presentations=presentations, vocabularies=True)
    items = family.design(
        levels=[family.min_n, 8, 33, 1024], pairs=8, seed=3, presentations=presentations
    )
    for item in items:
        case = space.from_design(item.instance)
        assert case is not None
        assert space.prompts(case) == item.prompts, item.id
        assert space.from_choices(space.choices(case)) == case


def test_design_instances_outside_the_space_are_not_cases():
    family = Ordering()
    space = family.strategies.case_space(min_n=8, max_n=16)
    assert space.from_design(family.instance(4, 0)) is None
    assert space.from_design(family.instance(32, 0)) is None
    assert space.from_design(family.instance(8, 0, seed=2**32)) is None


SPACE = Ordering(distractors=0.5).strategies.case_space(
    max_n=40, presentations=ALL, vocabularies=True
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SPACE.strategy())
def test_every_case_round_trips_and_the_ideal_reader_answers_every_presentation(case):
    assert SPACE.from_choices(SPACE.choices(case)) == case
    prompts = case.prompts()
    assert [p.presentation for p in prompts] == list(ALL)
    assert len({p.instance_id for p in prompts}) == 1
    for p in prompts:
        assert IDEAL(p.text) == p.gold, (p.presentation, p.text)
    rewritten = read_ordering(prompts[ALL.index("rewrite")].text)
    assert rewritten is not None
    if rewritten.vocabulary == case.vocabulary:  # mirror vocabularies render identical texts
        assert rewritten.reworded == min(case.rewrites, case.n - 1)


def test_choices_that_do_not_fit_the_space_give_no_case():
    space = Ordering().strategies.case_space(max_n=16)
    good = space.choices(space.case(8))
    assert space.from_choices(good) is not None
    assert space.from_choices(good[:-1]) is None  # too short
    assert space.from_choices((*good, 0)) is None  # too long
    assert space.from_choices((17, *good[1:])) is None  # n beyond max_n
    assert space.from_choices((True, *good[1:])) is None  # a boolean where an integer goes
    assert space.from_choices(("8", *good[1:])) is None


def test_the_simplest_case_is_laid_out_in_chain_order_with_the_last_premise_rewritten():
    family = Ordering()
    space = family.strategies.case_space(max_n=16, vocabularies=True)
    simplest = find(space.strategy(), lambda c: True, settings=settings(database=None))
    assert simplest == space.case(space.min_n, vocabulary=CATALOG[0].name)
    case = space.case(5)
    original, equivalent = case.prompts()
    chain = space.instance(case).chain
    assert f"Their names are {list(chain)!r}" in original.text
    premises = [f"{a} is in front of {b}." for a, b in zip(chain, chain[1:])]
    assert " ".join(premises) in original.text
    assert " ".join(premises[:-1] + [f"{chain[-1]} is behind {chain[-2]}."]) in equivalent.text


def test_hypothesis_shrinks_a_case_to_its_simplest_values_in_few_choices():
    space = Ordering().strategies.case_space(max_n=1024, vocabularies=True)
    found = find(
        space.strategy(),
        lambda c: c.n >= 300 and min(c.rewrites, c.n - 1) >= 3,
        settings=settings(database=None, max_examples=500, phases=tuple(Phase)[1:]),
    )
    assert found == space.case(300, rewrites=3)


def test_earlier_vocabularies_come_in_catalog_order():
    space = Ordering(vocabulary=CATALOG[3].name).strategies.case_space(vocabularies=True)
    case = space.case(6, vocabulary=CATALOG[3].name)
    assert [c.vocabulary for c in space.earlier_vocabularies(case)] == [v.name for v in CATALOG[:3]]
    fixed = Ordering(vocabulary=CATALOG[3].name).strategies.case_space()
    assert fixed.earlier_vocabularies(fixed.case(6)) == []


def test_with_n_keeps_the_latent_seed_and_layouts_and_clamps_the_rewrite_count():
    space = Ordering().strategies.case_space(max_n=64)
    case = space.case(40, seed=7, index=2, rewrites=30, positions=5, original=(3, 4))
    small = space.with_n(case, 6)
    assert (small.seed, small.index, small.original, small.rewrites) == (7, 2, (3, 4), 30)
    assert space.describe(small)["rewritten"] == 5
    assert space.instance(small).n == 6


def test_describe_and_summary_name_theta_and_layout():
    space = Ordering(distractors=1.0).strategies.case_space(max_n=64, distractors=True)
    case = space.case(9, rewrites=2, distractors=False)
    d = space.describe(case)
    assert d["n"] == 9 and d["vocabulary"] == "front_behind" and d["rewritten"] == 2
    assert d["distractors"] == 0.0 and d["rewrite_positions"] == "last"
    text = space.summary(case)
    assert text.startswith("n=9, vocabulary=front_behind, cell=forward/yes, 2 of 8 premises")
    assert "no distractors" in text and "chain order" in text


def test_the_suites_space_keeps_its_distractors_and_vocabulary():
    """Without vocabularies= and distractors= every case is one the configuration's own design
    could draw (the suite's declared space, issue #24): distractors in every case, the
    configuration's vocabulary, and no case without them decodes."""
    family = Ordering(vocabulary="left_right", distractors=1.0)
    suite = family.strategies.case_space(max_n=16)
    wider = family.wider_case_space(max_n=16, presentations=("original", "equivalent"))
    simplest = wider.case(2, vocabulary=CATALOG[0].name, distractors=False)
    assert suite.from_choices(suite.choices(simplest)) != simplest  # outside the suite
    inside = suite.from_choices(suite.choices(simplest))
    assert inside.distractors and inside.vocabulary == "left_right"
    assert "distractors ρ=1" in suite.summary(inside)
    assert suite.signature() != wider.signature()  # saved under keys of their own
    assert Ordering(vocabulary="left_right").wider_case_space(max_n=8, presentations=["original"])


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"presentations": "original"}, "presentations"),
        ({"presentations": ["nope"]}, "Unknown presentation"),
        ({"min_n": 9, "max_n": 8}, "min_n <= max_n"),
        ({"max_n": 1}, "max_n >= 2"),
    ],
)
def test_bad_space_arguments_name_the_argument(bad, message):
    with pytest.raises(InvalidArgument, match=message):
        Ordering().strategies.case_space(**bad)


def test_a_case_by_hand_must_fit_the_space():
    space = Ordering().strategies.case_space(max_n=16)
    with pytest.raises(InvalidArgument, match="is not a case of"):
        space.case(17)


@given(st.data())
@settings(max_examples=20, deadline=None)
def test_drawn_cases_render_without_their_space_too(data):
    case = data.draw(Ordering().strategies.cases(max_n=12))
    assert case.prompts() == case.space.prompts(case)
