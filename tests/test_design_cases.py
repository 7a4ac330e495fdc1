"""The design-coordinate case space of Horn, reformulations, intervention and rule induction.

Unit tests check each family's space (choices, prompts, shrink targets); pytester runs check that
a failing competence test of each family reports its minimal failing case.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from tests.test_shrink_plugin import minimal_section

# Imported before any in-process session (pytester restores sys.modules after each one).
import pytest_competence.minimise._asking  # noqa: F401
import pytest_competence.minimise._casedb  # noqa: F401
import pytest_competence.minimise._shrink  # noqa: F401
import pytest_competence.plugin._falsify  # noqa: F401
from pytest_competence.strategies import (
    FAMILIES,
    Horn,
    Intervention,
    InvalidArgument,
    Reformulations,
)
from pytest_competence.strategies import family as build_family
from pytest_competence.strategies._design_cases import INDEX_MAX, SEED_MAX, DesignCase
from pytest_competence.strategies.programs import Programs
from pytest_competence.strategies.raven import Raven

# (family, smallest level, design levels, pairs, presentations or None for the default)
CASES = [
    pytest.param(
        Horn(vary="depth"), 1, [1, 3], 2, ("original", "reshuffle", "negated_query"), id="horn"
    ),
    pytest.param(Horn(), 1, [2, 4], 2, ("original", "equivalent"), id="horn-rules"),
    pytest.param(
        Reformulations(category="de_morgan"),
        2,
        [2, 3],
        3,
        ("original", "negation_flip"),
        id="reformulations",
    ),
    pytest.param(Intervention(), 4, [4, 5], 6, ("*/TFU/*",), id="intervention"),
    pytest.param(Programs(variations=2), 1, [1, 2], 2, None, id="programs"),
    pytest.param(Raven(variations=1), 1, [1, 2], 2, None, id="raven"),
]


def _space(family, levels, presentations):  # noqa: ANN001, ANN202
    kw = {} if presentations is None else {"presentations": presentations}
    return family.strategies.case_space(max_n=max(levels), **kw)


@pytest.mark.parametrize(("family", "lo", "levels", "pairs", "presentations"), CASES)
def test_design_items_are_cases_with_the_same_prompts(family, lo, levels, pairs, presentations):
    space = _space(family, levels, presentations)
    kw = {} if presentations is None else {"presentations": presentations}
    items = family.design(levels=levels, pairs=pairs, seed=7, **kw)
    for item in items:
        case = space.from_item(item)
        assert case is not None
        assert (case.n, case.index, case.seed) == (item.params["n"], items.index(item) % pairs, 7)
        assert space.prompts(case) == item.prompts
        assert case.prompts() == item.prompts
        assert space.from_choices(space.choices(case)) == case
    assert space.min_n == lo


@pytest.mark.parametrize(("family", "lo", "levels", "pairs", "presentations"), CASES)
def test_choices_round_trip_and_shrink_toward_level_index_and_seed_zero(
    family,
    lo,
    levels,
    pairs,
    presentations,
):
    space = _space(family, levels, presentations)

    @settings(max_examples=30, database=None)
    @given(space.strategy())
    def round_trip(case: DesignCase) -> None:
        assert space.from_choices(space.choices(case)) == case
        assert space.sort_key(case) == (case.n, case.index, case.seed)
        assert space.with_n(case, lo).fields == {"n": lo, "index": case.index, "seed": case.seed}

    round_trip()
    simplest = space.from_choices([lo, 0, 0])
    assert simplest == space.case(lo) and simplest.fields == {"n": lo, "index": 0, "seed": 0}
    assert space.earlier_vocabularies(simplest) == []
    assert space.family_of(simplest) is family
    for bad in (
        [lo - 1, 0, 0],
        [max(levels) + 1, 0, 0],
        [lo, -1, 0],
        [lo, INDEX_MAX + 1, 0],
        [lo, 0, SEED_MAX + 1],
        [lo, 0],
        [lo, True, 0],
        [lo, 0, 0, 0],
    ):
        assert space.from_choices(bad) is None, bad


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_family_has_a_case_space(name):
    space = build_family(name).strategies.case_space(max_n=4)
    assert space.prompts(space.case(space.min_n))  # the plugin minimises every family's failures


def test_instances_outside_the_space_have_no_case():
    family = Horn(vary="depth")
    space = family.strategies.case_space(min_n=2, max_n=4)
    assert space.from_design(family.instance(1, 0)) is None
    assert space.from_design(family.instance(5, 0)) is None
    assert space.from_design(family.instance(3, 2**16, seed=1)) is None
    assert space.from_design(object()) is None
    assert space.from_design(family.instance(3, 1, seed=9)) == space.case(3, 1, 9)


def test_summary_and_describe_name_the_case_and_its_gold_answers():
    family = Horn(vary="depth")
    space = family.strategies.case_space(max_n=8, presentations=("original", "negated_query"))
    case = space.case(5)
    assert space.describe(case) == {
        "family": "horn",
        "n": 5,
        "vary": "depth",
        "rules": 13,
        "depth": 5,
        "distractors": 8,
        "cell": "positive",
        "gold": {"original": "yes", "negated_query": "no"},
        "latent_index": 0,
        "latent_seed": 0,
    }
    assert space.summary(case) == (
        "horn n=5, vary=depth, rules=13, depth=5, distractors=8, cell=positive, "
        "gold yes (no for negated_query), latent index=0 seed=0"
    )
    programs = Programs(variations=2).strategies.case_space(max_n=3)
    summary = programs.summary(programs.case(1))
    assert summary.startswith("programs n=1, queries=")
    assert summary.endswith("(original) and 4 more prompts, latent index=0 seed=0")


def test_signature_tells_configurations_and_presentations_apart():
    a = Horn(vary="depth").strategies.case_space(max_n=8)
    assert a.signature() == Horn(vary="depth").strategies.case_space(max_n=8).signature()
    others = [
        Horn().strategies.case_space(max_n=8),
        Horn(vary="depth").strategies.case_space(max_n=9),
        Horn(vary="depth").strategies.case_space(max_n=8, presentations=["original"]),
    ]
    assert len({a.signature(), *(o.signature() for o in others)}) == 4


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Horn(vary="depth").strategies.case_space(max_n=0), "max_n=0"),
        (lambda: Horn(depth=3).strategies.case_space(min_n=2), "min_n=2"),
        (lambda: Horn().strategies.case_space(min_n=8, max_n=4), "min_n <= max_n"),
        (lambda: Horn().strategies.case_space(presentations=["sideways"]), "sideways"),
        (lambda: Reformulations().strategies.case_space(max_n=7), "max_n=7"),
        (lambda: Reformulations().strategies.case_space(presentations=["de_morgan"]), "de_morgan"),
        (lambda: Intervention().strategies.case_space(min_n=3), "min_n=3"),
        (lambda: Intervention().strategies.case_space(presentations=["base/XYZ/*"]), "base/XYZ"),
        (lambda: Programs().strategies.case_space(max_n=6), "max_n"),
        (lambda: Programs().strategies.case_space(presentations=["twist"]), "twist"),
        (lambda: Horn().strategies.case_space().case(0), "n=0"),
    ],
)
def test_bad_arguments_are_named(make, match):
    with pytest.raises(InvalidArgument, match=match):
        make()


def test_vocabularies_belong_to_ordering_and_are_ignored_elsewhere():
    plain = Horn().strategies.case_space(max_n=8)
    assert Horn().strategies.case_space(max_n=8, vocabularies=True).signature() == plain.signature()


def test_a_case_without_a_space_says_where_to_draw_it():
    with pytest.raises(InvalidArgument, match="DesignSpace"):
        DesignCase(1, 0, 0).prompts()


# -- through the plugin ----------------------------------------------------------------------

# Ideal on every prompt of level n <= LIMIT, unreadable beyond: the smallest failing case is
# LIMIT + 1, index 0, seed 0.
UPTO = """
    from pytest_competence.models.reference import ideal_answer


    def _upto(limit):
        class Upto:
            name = f"upto{limit}"

            def generate(self, prompts):
                return [ideal_answer(p) if p.params["n"] <= limit else "I cannot tell."
                        for p in prompts]

        return Upto


    Upto2 = _upto(2)
    Upto6 = _upto(6)
"""


def _run(pytester: pytest.Pytester, marker: str, model: str) -> list[str]:
    pytester.makepyfile(upto=UPTO)
    pytester.makepyfile(
        test_x=f"""
        import pytest

        @pytest.mark.competence({marker})
        def test_x(competence):
            pass
    """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--competence-model", model)
    result.assert_outcomes(failed=1)
    assert "has no case space" not in result.stdout.str()
    return minimal_section(result.stdout.str())


def test_horn_failure_is_minimised_to_the_first_depth_past_the_bound(pytester: pytest.Pytester):
    section = _run(
        pytester, 'family="horn", vary="depth", levels=[2, 8], pairs=4', "ref:horn-bounded?depth=4"
    )
    assert section[0] == (
        "  minimal failing case: horn n=5, vary=depth, rules=13, depth=5, "
        "distractors=8, cell=positive, gold yes, latent index=0 seed=0"
    )
    assert any("n=5 fails, n=4 passes" in line for line in section)
    assert any("Saved to the example database" in line for line in section)
    # The next run replays the saved case first and checks only its boundary, n = 4.
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--competence-model", "ref:horn-bounded?depth=4"
    )
    result.stdout.fnmatch_lines(
        [
            "  minimal failing case: horn n=5, *latent index=0 seed=0",
            "    3 model calls (database replay 1, minimality check 1, asking again 1); *",
            "    Regression replayed from the example database (saved as minimal on * for this exact "
            "model) and checked minimal for the model just asked: n=4 passes (1 call)*",
        ]
    )


def test_rule_induction_failure_is_minimised_to_the_smallest_failing_level(
    pytester: pytest.Pytester,
):
    section = _run(
        pytester, 'family="programs", variations=1, levels=[1, 5], pairs=2', "py:upto:Upto2"
    )
    assert section[0].startswith("  minimal failing case: programs n=3, ")
    assert section[0].endswith(" latent index=0 seed=0")
    assert any("n=3 fails, n=2 passes" in line for line in section)


def test_reformulations_failure_is_minimised(pytester: pytest.Pytester):
    section = _run(pytester, 'family="reformulations", levels=[1, 6], pairs=3', "py:upto:Upto2")
    assert section[0] == (
        "  minimal failing case: reformulations n=3, category=propositional_logic, cell=yes, "
        "prompt=zero_shot, gold yes (no for negation_flip), latent index=0 seed=0"
    )


def test_intervention_failure_is_minimised(pytester: pytest.Pytester):
    section = _run(
        pytester,
        'family="intervention", levels=[4, 10], pairs=6, presentations=["*/TFU/generate"]',
        "py:upto:Upto6",
    )
    assert section[0].startswith("  minimal failing case: intervention n=7, ")
    assert section[0].endswith(", latent index=0 seed=0")
    assert any("[base/TFU/generate]" in line for line in section)
