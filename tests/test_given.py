"""Plain Hypothesis tests of a model: ``assert_competent`` and the plugin's defaults for them."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, settings

# Imported before any in-process session (pytester restores sys.modules after each one).
import pytest_competence.given  # noqa: F401
from pytest_competence.engine.conditions import CompetenceFailure
from pytest_competence.given import assert_competent, model_backed_settings
from pytest_competence.models import resolve_model
from pytest_competence.strategies import InvalidArgument, Ordering

CASES = """
    from hypothesis import given, target
    from pytest_competence.given import assert_competent
    from pytest_competence.strategies import Ordering

    family = Ordering()

    @given(case=family.strategies.cases(max_n=32))
    def test_cases(competence_model, case):
        assert_competent(competence_model, case)
        target(case.n)
"""


def test_a_given_test_runs_once_per_model_and_reports_the_minimal_case(pytester: pytest.Pytester):
    pytester.makepyfile(test_x=CASES)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--competence-model", "ref:ideal,ref:threshold?n=9"
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*CompetenceFailure: Competence condition failed for model 'ref:threshold?n=9' on "
            "Ordering(vocabulary='front_behind'): n=10, vocabulary=front_behind, cell=forward/yes, "
            "1 of 9 premises rewritten (the last in chain order), every names line and premise "
            "order in chain order, latent index=0 seed=0",
            "E         [[]original[]] gold=yes parsed=yes raw='yes' → correct",
            "E         [[]equivalent[]] gold=yes parsed=no raw='no' → WRONG",
            "E       Asked again (afresh), it fails the same way.",
            "E       F* test_cases(",  # "Falsifying example:" or, newer, "Failing test case:"
            "E           case=OrderingCase(n=10, vocabulary='front_behind', *),",
        ]
    )
    result.stdout.no_fnmatch_line("*space=CaseSpace*")
    result.stdout.no_fnmatch_line("*Explanation:*")  # no explain phase: no extra model calls


def test_settings_example_and_target_work_and_explicit_settings_are_kept(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_x="""
        from hypothesis import HealthCheck, Phase, example, given, settings, target
        from pytest_competence.given import assert_competent
        from pytest_competence.strategies import Ordering

        family = Ordering()
        SPACE = family.strategies.case_space(max_n=8)

        @given(case=SPACE.strategy())
        def test_defaults(competence_model, case):
            s = test_defaults._hypothesis_internal_use_settings
            assert s.deadline is None
            assert Phase.explain not in s.phases
            assert {HealthCheck.too_slow, HealthCheck.function_scoped_fixture} <= set(
                s.suppress_health_check)
            observations = assert_competent(competence_model, case)
            target(float(sum(o.correct for o in observations)))

        @settings(deadline=1234, max_examples=7, phases=[Phase.explicit, Phase.generate,
                                                          Phase.shrink, Phase.explain])
        @example(z=family.instance(9, 2))
        @given(z=family.strategies.instances(max_n=8))
        def test_explicit(competence_model, z):
            s = test_explicit._hypothesis_internal_use_settings
            assert s.deadline.total_seconds() == 1.234 and s.max_examples == 7
            assert Phase.explain in s.phases
            assert_competent(competence_model, z, family=family)
    """
    )
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--competence-model",
        "ref:ideal,ref:threshold?n=8",
        "-o",
        "competence_database=none",
    )
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_explicit*ref:threshold?n=8*",
            "*Competence condition failed for model 'ref:threshold?n=8' *: instance "
            "ordering/seed=1/n=9/2",
            "*F* explicit example: test_explicit(*",  # "Falsifying" or, newer, "Failing"
        ]
    )


def test_the_health_check_still_guards_the_users_own_function_scoped_fixtures(
    pytester: pytest.Pytester,
):
    pytester.makepyfile(
        test_x="""
        from hypothesis import given
        from pytest_competence.given import assert_competent
        from pytest_competence.strategies import Ordering

        @given(case=Ordering().strategies.cases(max_n=8))
        def test_with_tmp_path(competence_model, tmp_path, case):
            assert_competent(competence_model, case)
    """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--competence-model", "ref:ideal")
    result.assert_outcomes(failed=1)
    # tmp_path is not reset between examples: the check is left on, so Hypothesis fails the test
    # (naming the first function-scoped fixture it finds).
    result.stdout.fnmatch_lines(["*FailedHealthCheck*unction-scoped fixture*"])


def test_each_example_is_one_batched_call_and_no_prompt_is_sent_twice(pytester: pytest.Pytester):
    pytester.makepyfile(
        recorder="""
        from pytest_competence.models.reference import POLICIES

        _threshold = POLICIES["threshold"](n="6")
        BATCHES = []

        class Recorder:
            name = "recorder"

            def generate(self, prompts):
                BATCHES.append([(p.text, p.attempt, p.presentation) for p in prompts])
                return [_threshold(p.text) for p in prompts]
    """,
        test_x="""
        from hypothesis import given, settings
        from pytest_competence.given import assert_competent
        from pytest_competence.strategies import Ordering
        import recorder

        @settings(database=None)
        @given(case=Ordering().strategies.cases(max_n=24,
               presentations=["original", "equivalent", "negated"]))
        def test_cases(competence_model, case):
            assert_competent(competence_model, case)

        def test_count():
            sent = [p for batch in recorder.BATCHES for p in batch]
            assert sent and len(sent) == len(set(sent))
            # every batch holds one case's presentations (those not already answered)
            assert all(len(batch) <= 3 for batch in recorder.BATCHES)
            assert sum(len(batch) == 3 for batch in recorder.BATCHES) >= len(recorder.BATCHES) // 2
    """,
    )
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "-p", "no:randomly", "--competence-model", "py:recorder:Recorder"
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*Asked again (afresh), it fails the same way.*"])


def test_a_sampled_model_is_never_reported_as_flaky(pytester: pytest.Pytester):
    pytester.makepyfile(test_x=CASES)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--competence-model", "ref:sampled?p=0.5&seed=4"
    )
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "Flaky" not in text and "Unreliable" not in text
    assert (
        "The failure did not reproduce: asked again (afresh) the model answered differently" in text
    ) or "Asked again (afresh), it fails the same way." in text


# -- without pytest -------------------------------------------------------------------------------


def test_assert_competent_returns_the_observations_or_raises_with_the_case():
    family = Ordering()
    case = family.strategies.case_space(max_n=16).case(10)
    observations = assert_competent(resolve_model("ref:ideal"), case)
    assert [o.correct for o in observations] == [True, True]
    with pytest.raises(CompetenceFailure, match=r"n=10, vocabulary=front_behind") as info:
        assert_competent(resolve_model("ref:threshold?n=9"), case)
    assert "[equivalent] gold=yes parsed=no raw='no' → WRONG" in str(info.value)
    z = family.instance(12, 0)  # gold "yes"
    with pytest.raises(CompetenceFailure, match="instance ordering/seed=1/n=12/0"):
        assert_competent(
            resolve_model("always-no".join(["ref:", ""])),
            z,
            family=family,
            presentations=["original", "negated"],
            attempts=3,
        )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"case": object()}, "Expected a case drawn from family.strategies.cases()"),
        ({"case": "CASE", "family": Ordering()}, "carries its family and presentations"),
        ({"case": "CASE", "attempts": 0}, "Expected attempts to be a positive integer"),
    ],
)
def test_assert_competent_names_a_bad_argument(kwargs, message):
    case = Ordering().strategies.case_space(max_n=8).case(4)
    kwargs = {k: case if v == "CASE" else v for k, v in kwargs.items()}
    with pytest.raises(InvalidArgument, match=message):
        assert_competent(resolve_model("ref:ideal"), **kwargs)


def test_model_backed_settings_change_only_hypothesis_defaults():
    default = settings.get_profile("default")
    changed = model_backed_settings(settings(default), model_fixture_only=True)
    assert changed.deadline is None and Phase.explain not in changed.phases
    assert {HealthCheck.too_slow, HealthCheck.function_scoped_fixture} <= set(
        changed.suppress_health_check
    )
    explicit = settings(
        deadline=50,
        phases=[Phase.generate, Phase.shrink, Phase.explain],
        suppress_health_check=[HealthCheck.filter_too_much],
    )
    kept = model_backed_settings(explicit, model_fixture_only=False)
    assert kept.deadline == explicit.deadline and Phase.explain in kept.phases
    assert set(kept.suppress_health_check) == {HealthCheck.filter_too_much, HealthCheck.too_slow}
    assert model_backed_settings(changed, model_fixture_only=True) is changed


def test_the_helper_frames_stay_out_of_the_traceback(pytester: pytest.Pytester):
    pytester.makepyfile(test_x=CASES)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--tb=long", "--competence-model", "ref:always-yes"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*Competence condition failed for model 'ref:always-yes'*"])
    assert "pytest_competence/given.py" not in result.stdout.str()
    assert "pytest_competence/asking.py" not in result.stdout.str()
