"""Pytester tests of verdicts: reference policies, failure messages and threshold requirements."""

from __future__ import annotations

import pytest

from plugin_helpers import SIMPLE, assert_no_internals, esc

# -- reference policies behave as declared --------------------------------------------------------

POLICY_SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4, 8], pairs=16)
    def test_endpoint_front_behind(competence):
        pass

    @pytest.mark.competence(levels=[4, 8], pairs=16, vocabulary="older_younger", protocol="L",
                            names="random", distractors=0.5,
                            presentations=["original", "equivalent", "negated", "reshuffle",
                                           "rewrite", "flipped_query"])
    def test_endpoint_controls(competence):
        pass

    @pytest.mark.competence(levels=[5, 8], pairs=16, distance=2)
    def test_interior_front_behind(competence):
        pass

    @pytest.mark.competence(levels=[5, 8], pairs=16, distance=2, vocabulary="more_less_zorbic",
                            presentations=["original", "negated", "flipped_query"])
    def test_interior_zorbic(competence):
        pass

    @pytest.mark.competence(levels=[5, 9], pairs=16, distance=2, vocabulary="arrived_earlier_later",
                            protocol="L", names="random", distractors=0.5)
    def test_interior_controls(competence):
        pass

    @pytest.mark.competence(levels=[4, 8], pairs=16, vocabulary="left_right",
                            presentations=["original"])
    def test_original_only(competence):
        pass

    @pytest.mark.competence(levels=[4, 8], pairs=16, names_line="chain")
    def test_names_line_chain(competence):
        pass
"""

ALL_TESTS = (
    "test_endpoint_front_behind",
    "test_endpoint_controls",
    "test_interior_front_behind",
    "test_interior_zorbic",
    "test_interior_controls",
    "test_original_only",
    "test_names_line_chain",
)


@pytest.mark.parametrize(
    ("model", "passing"),
    [
        ("ref:ideal", ALL_TESTS),
        (
            "ref:endpoint",
            (
                "test_endpoint_front_behind",
                "test_endpoint_controls",
                "test_original_only",
                "test_names_line_chain",
            ),
        ),
        ("ref:forward-reader", ("test_original_only",)),
        ("ref:names-order", ("test_names_line_chain",)),
        ("ref:always-yes", ()),
        ("ref:always-no", ()),
        ("ref:coin", ()),
        ("ref:coin?seed=7&p=0.8", ()),
    ],
)
def test_reference_policies_behave_as_declared(pytester: pytest.Pytester, model, passing):
    pytester.makepyfile(test_policies=POLICY_SUITE)
    result = pytester.runpytest("-v", "--competence-model", model)
    result.assert_outcomes(passed=len(passing), failed=len(ALL_TESTS) - len(passing))
    result.stdout.fnmatch_lines(
        [
            esc(f"test_policies.py::{t}[{model}] {'PASSED' if t in passing else 'FAILED'}") + "*"
            for t in ALL_TESTS
        ]
    )


def test_endpoint_shortcut_fails_interior_queries_with_a_wrong_case(pytester: pytest.Pytester):
    pytester.makepyfile(test_policies=POLICY_SUITE)
    result = pytester.runpytest("--competence-model", "ref:endpoint", "-k", "interior_front")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "Competence condition failed for model 'ref:endpoint' on "
            "Ordering(vocabulary='front_behind', distance=2)",
            "  first failing level: n=5: * of 16 instances fail*",
            "*→ WRONG",
        ]
    )


THRESHOLD_SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4, 8], pairs=16)
    def test_small(competence):
        pass

    @pytest.mark.competence(levels=[4, 8, 16], pairs=16)
    def test_grid(competence):
        pass
"""


def test_threshold_policy_is_competent_up_to_its_size(pytester: pytest.Pytester):
    pytester.makepyfile(test_threshold=THRESHOLD_SUITE)
    result = pytester.runpytest("-v", "--competence-model", "ref:threshold?n=8")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            esc("test_threshold.py::test_small[ref:threshold?n=8] PASSED*"),
            esc("test_threshold.py::test_grid[ref:threshold?n=8] FAILED*"),
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "Competence condition failed for model 'ref:threshold?n=8' on "
            "Ordering(vocabulary='front_behind')",
            "  first failing level: n=16: * of 16 instances fail*",
            "  failing instance ordering/seed=1/n=16/*:",
            esc("    [original] gold=* → correct"),
            "      prompt: There are 16 people *",
            esc("    [equivalent] gold=* → WRONG"),
        ]
    )
    result.stdout.no_fnmatch_line("*also failing at*")


# -- the failure message --------------------------------------------------------------------------


def test_failure_message_shows_condition_level_and_every_presentation(pytester: pytest.Pytester):
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("--competence-model", "ref:always-yes")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_x[[]ref:always-yes[]] _*",
            "Competence condition failed for model 'ref:always-yes' on "
            "Ordering(vocabulary='front_behind')",
            "  condition: strict: C_0 = … = C_K = 1 on every instance at every level",
            "  first failing level: n=4: 4 of 8 instances fail (all-correct 50.0%)",
            "  also failing at n = 8",
            "  failing instance ordering/seed=1/n=4/1:",
            esc("    [original] gold=no parsed=yes raw='yes' → WRONG"),
            "      prompt: There are 4 people standing in some order. Their names are *. "
            "Their standing order can be described by the following set of rules: "
            "* is in front of *? Provide your answer only as yes or no. Answer:",
            esc("    [equivalent] gold=no parsed=yes raw='yes' → WRONG"),
            "      prompt: There are 4 people standing in some order. * is behind *? Provide your "
            "answer only as yes or no. Answer:",
        ]
    )
    assert_no_internals(result.stdout.str())
    result.stdout.fnmatch_lines(
        [
            esc("FAILED test_x.py::test_x[ref:always-yes] - Failed: Competence condition") + "*",
        ]
    )


def test_failure_message_shows_answer_maps(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.mark.competence(levels=[4], pairs=8, presentations=["original", "flipped_query"])
        def test_x(competence):
            pass
    """
    )
    result = pytester.runpytest("--competence-model", "ref:always-yes")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "  first failing level: n=4: 8 of 8 instances fail (all-correct 0.0%)",
            "  failing instance ordering/seed=1/n=4/0:",
            esc("    [original] gold=yes parsed=yes raw='yes' → correct"),
            esc(
                "    [flipped_query] [answer map AnswerMap(yes→no, no→yes)] gold=no parsed=yes "
                "raw='yes' → WRONG"
            ),
        ]
    )
    assert_no_internals(result.stdout.str())


def test_failure_under_long_tracebacks_still_has_no_internals(pytester: pytest.Pytester):
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("--competence-model", "ref:always-no", "--tb=long")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["Competence condition failed for model 'ref:always-no' *"])
    assert_no_internals(result.stdout.str())


# -- threshold requirements -----------------------------------------------------------------------


def test_scoped_threshold_passes_the_threshold_policy(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_gate="""
        import pytest

        @pytest.mark.competence(levels=[4, 8, 16], pairs=16,
                                require=["robust_correct >= 0.95 for n <= 8"])
        def test_gate(competence):
            pass

        @pytest.mark.competence(levels=[4, 8, 16], pairs=16,
                                require=["robust_correct >= 0.95 for n <= 16"])
        def test_gate_wider(competence):
            pass

        @pytest.mark.competence(levels=[4, 8, 16], pairs=16,
                                require=["accuracy >= 0.5", "coverage == 1"])
        def test_conjunction(competence):
            pass
    """
    )
    result = pytester.runpytest("-v", "--competence-model", "ref:threshold?n=8")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            esc("test_gate.py::test_gate[ref:threshold?n=8] PASSED*"),
            esc("test_gate.py::test_gate_wider[ref:threshold?n=8] FAILED*"),
            esc("test_gate.py::test_conjunction[ref:threshold?n=8] PASSED*"),
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "  condition: robust_correct >= 0.95 for n <= 16",
            "  first failing level: n=16: robust_correct = 0.0000, required >= 0.95",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*competence profiles*",
            esc(
                "test_gate.py::test_conjunction[ref:threshold?n=8]  PASS  (accuracy >= 0.5 and "
                "coverage == 1)"
            ),
        ]
    )


def test_accuracy_threshold_fails_always_yes_naming_metric_and_level(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_gate="""
        import pytest

        @pytest.mark.competence(levels=[4, 8], pairs=8, require="accuracy >= 0.9")
        def test_gate(competence):
            pass
    """
    )
    result = pytester.runpytest("--competence-model", "ref:always-yes,ref:ideal")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "Competence condition failed for model 'ref:always-yes' on *",
            "  condition: accuracy >= 0.9",
            "  first failing level: n=4: accuracy = 0.5000, required >= 0.9",
            "  also failing at n = 8",
            "  failing instance ordering/seed=1/n=4/1:",
            esc("    [original] gold=no parsed=yes raw='yes' → WRONG"),
        ]
    )
    assert_no_internals(result.stdout.str())
