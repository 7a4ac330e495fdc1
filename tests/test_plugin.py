"""End-to-end tests of the pytest plugin, written the way pytest and xdist test plugins.

Every test runs a real pytest session with the ``pytester`` fixture — in-process where that is
enough, in a subprocess where isolation matters (xdist, two sessions compared) — and checks its
outcomes and terminal output. Designs are kept tiny (8–16 pairs, small levels) so the whole file
runs in seconds.
"""

from __future__ import annotations

import re
import textwrap

import pytest

# Import the engine here, before any in-process session: pytester restores ``sys.modules`` after
# each in-process run, so anything first imported inside one (numpy included) would be imported
# afresh by the next.
import pytest_competence.conditions  # noqa: F401
import pytest_competence.evaluate  # noqa: F401
import pytest_competence.models.python  # noqa: F401
import pytest_competence.models.reference  # noqa: F401
import pytest_competence.analysis  # noqa: F401
import pytest_competence.profile  # noqa: F401
import pytest_competence.report  # noqa: F401
import pytest_competence.report.compare  # noqa: F401
import pytest_competence.report.terminal  # noqa: F401
import pytest_competence.spec  # noqa: F401
import pytest_competence.stats  # noqa: F401

INTERNALS = re.compile(
    r"(Traceback|During handling of the above exception"
    r"|pytest_competence[/\\]"
    r"|\b(plugin|spec|conditions|evaluate|profile|ordering|_core|reference|python)\.py:\d+)"
)


def esc(text: str) -> str:
    """Escape ``[`` and ``]`` for ``fnmatch_lines`` (test ids and presentations use brackets)."""
    return re.sub(r"[\[\]]", lambda m: f"[{m.group(0)}]", text)


def assert_no_internals(output: str) -> None:
    found = INTERNALS.search(output)
    assert found is None, f"engine internals in the output: {found.group(0)!r}\n{output}"


def profile_section(output: str) -> list[str]:
    """The non-blank lines of the ``competence profiles`` terminal section."""
    lines = output.splitlines()
    starts = [i for i, line in enumerate(lines) if re.match(r"^=+ competence profiles =+$", line)]
    assert len(starts) == 1, output
    section = []
    for line in lines[starts[0] + 1:]:
        if line.startswith("=") or re.match(r"^\d+ (passed|failed|error)", line):
            break
        if line.strip():
            section.append(line)
    return section


SIMPLE = """
    import pytest

    @pytest.mark.competence(levels=[4, 8], pairs=8)
    def test_x(competence):
        pass
"""

# An ideal answerer as a py: model, reusing the reference policy's reader on the prompt text.
IDEAL_PY = """
    from pytest_competence.models.reference import POLICIES

    _ideal = POLICIES["ideal"]()
"""


def ideal_py(body: str) -> str:
    """A model module: the ideal reader ``_ideal(text)`` followed by ``body``."""
    return textwrap.dedent(IDEAL_PY) + textwrap.dedent(body)


# -- options, ids and the marker ----------------------------------------------------------------


def test_models_repeated_and_comma_separated_give_one_test_per_model(pytester: pytest.Pytester):
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest(
        "--collect-only", "-q",
        "--competence-model", "ref:ideal,ref:endpoint",
        "--competence-model=ref:always-yes",
        "--competence-model", " ref:coin?seed=3&p=0.5 , ref:ideal",  # spaces, and a duplicate
    )
    result.stdout.fnmatch_lines([
        esc("test_x.py::test_x[ref:ideal]"),
        esc("test_x.py::test_x[ref:endpoint]"),
        esc("test_x.py::test_x[ref:always-yes]"),
        esc("test_x.py::test_x[ref:coin?seed=3&p=0.5]"),
        "4 tests collected*",
    ])
    assert result.ret == 0


def test_models_run_once_each(pytester: pytest.Pytester):
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("-v", "--competence-model", "ref:ideal,ref:always-no")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        esc("test_x.py::test_x[ref:ideal] PASSED*"),
        esc("test_x.py::test_x[ref:always-no] FAILED*"),
    ])


def test_default_model_is_ref_ideal(pytester: pytest.Pytester):
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([esc("test_x.py::test_x[ref:ideal] PASSED*")])


def test_default_model_from_ini(pytester: pytest.Pytester):
    pytester.makeini("[pytest]\ncompetence_default_model = ref:always-yes\n")
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("-v")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([esc("test_x.py::test_x[ref:always-yes] FAILED*")])
    # The command line wins over the ini default.
    result = pytester.runpytest("-v", "--competence-model", "ref:ideal")
    result.assert_outcomes(passed=1)


def test_unmarked_tests_are_not_parametrized(pytester: pytest.Pytester):
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    result = pytester.runpytest("-v", "--competence-model", "ref:ideal,ref:always-yes")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["test_plain.py::test_plain PASSED*"])
    result.stdout.no_fnmatch_line("*competence profiles*")


def test_marker_is_registered(pytester: pytest.Pytester):
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines([
        "@pytest.mark.competence(family='ordering', *, levels, pairs=200, seed=1, "
        "presentations=('original', 'equivalent'), require='strict', **family_options): *",
    ])
    assert result.ret == 0


def test_strict_markers_accepts_the_marker(pytester: pytest.Pytester):
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("--strict-markers")
    result.assert_outcomes(passed=1)


# -- aliases and model specs ----------------------------------------------------------------------

ALIASES_INI = """
    [pytest]
    competence_models =
        good = ref:ideal
        bad = ref:always-yes
"""


def test_alias_from_ini(pytester: pytest.Pytester):
    pytester.makeini(ALIASES_INI)
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("-v", "--competence-model=good", "--competence-model=bad")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        esc("test_x.py::test_x[good] PASSED*"),
        esc("test_x.py::test_x[bad] FAILED*"),
    ])
    # Results are reported under the alias the user typed.
    result.stdout.fnmatch_lines(["Competence condition failed for model 'bad' on *"])


def test_alias_can_be_mixed_with_specs(pytester: pytest.Pytester):
    pytester.makeini(ALIASES_INI)
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("-v", "--competence-model", "good,ref:always-no")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        esc("test_x.py::test_x[good] PASSED*"), esc("test_x.py::test_x[ref:always-no] FAILED*"),
    ])


def test_unknown_alias_is_a_usage_error_listing_the_aliases(pytester: pytest.Pytester):
    pytester.makeini(ALIASES_INI)
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("--competence-model=nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "ERROR: --competence-model: unknown model 'nope'; it is not an alias "
        "(aliases: bad, good)*Add 'nope = SPEC' to the competence_models ini option*",
    ])
    result.stdout.no_fnmatch_line("*collected*")


def test_unknown_alias_without_configured_aliases(pytester: pytest.Pytester):
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("--competence-model", "ref:ideal,nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown model 'nope'*(aliases: none are configured)*"])


def test_malformed_alias_line_is_a_usage_error(pytester: pytest.Pytester):
    pytester.makeini("[pytest]\ncompetence_models =\n    good = ref:ideal\n    nonsense\n")
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "ERROR: competence_models: cannot read 'nonsense'; write one alias per line as "
        "'name = scheme:rest'*",
    ])


MODEL_SPEC_CASES = [
    ("py:nomodule", "*Malformed model spec 'py:nomodule'; expected 'py:MODULE:ATTR'*"),
    ("py:os:nonexistent", "*Model spec 'py:os:nonexistent': module 'os' has no attribute "
                          "'nonexistent'*"),
    ("py:no_such_module_here:f", "*cannot import module 'no_such_module_here'*check that it "
                                 "is installed or on sys.path*"),
    ("py:os:sep", "*'sep' is a str, not a callable taking a list of prompts*"),
    ("ref:nosuch", "*Unknown reference policy 'nosuch' in 'ref:nosuch'; expected one of "
                   "ideal, always-yes, always-no, coin, endpoint, forward-reader, "
                   "names-order, threshold*"),
    ("nosuchscheme:x", "*Unknown model scheme 'nosuchscheme' in 'nosuchscheme:x'; expected "
                       "one of hf, openai, py, ref, vllm*"),
    ("ref:threshold", "*the threshold policy needs its size, e.g. 'ref:threshold?n=64'*"),
    ("ref:threshold?n=x", "*Expected a number for n, but got n='x'*"),
    ("ref:coin?p=2", "*Expected 0 <= p <= 1, but got p=2*"),
    ("ref:ideal?x=1", "*policy 'ideal' does not take parameters ['x']*"),
]


@pytest.mark.parametrize(("spec", "message"), MODEL_SPEC_CASES,
                         ids=[c[0] for c in MODEL_SPEC_CASES])
def test_malformed_model_specs_give_clear_errors(pytester: pytest.Pytester, spec, message):
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("--competence-model", f"ref:ideal,{spec}")
    if spec.startswith("py:"):
        # Loaded lazily: the other model still runs; the broken one errors with the message alone.
        result.assert_outcomes(passed=1, errors=1)
        result.stdout.fnmatch_lines([
            esc(f"*ERROR at setup of test_x[{spec}]*"),
            "--competence-model: " + esc(message),
        ])
    else:
        # Reference policies and schemes resolve at start-up: a usage error before any test.
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(["*--competence-model: " + esc(message)])
    assert_no_internals(result.stdout.str())


# -- invalid marker arguments ---------------------------------------------------------------------

MARKED = """
    import pytest

    @pytest.mark.competence({args})
    def test_bad(competence):
        pass
"""


MARKER_CASES = [
    ("pairs=8", "@pytest.mark.competence needs levels=, the grid of sizes, e.g. levels=[4, 8, 16]"),
    ("levels=[1], pairs=8", "Expected levels[] >= 2, but got levels[]=1: a chain needs at "
                            "least two entities"),
    ("levels=4, pairs=8", "Expected levels to be a non-empty list of chain lengths*"),
    ("levels=[4], distance=2, pairs=8", "Expected levels[] >= 5, but got levels[]=4: interior "
                                        "queries at distance=2 need n >= distance + 3"),
    ("levels=[4], pairs=6", "Expected pairs per level to be a positive multiple of 4*but got "
                            "pairs=6; try pairs=200"),
    ("levels=[4], pairs=8, seed='x'", "Expected a non-negative integer seed, but got seed='x'"),
    ("levels=[4], pairs=8, vocabulary='nope'", "Unknown vocabulary='nope'. Expected one of the "
                                               "31 catalog names: front_behind, *"),
    ("levels=[4], pairs=8, presentations=['bogus']", "Unknown presentation 'bogus'. Expected one "
                                                     "of: original, equivalent, *"),
    ("levels=[4], pairs=8, presentations=[]", "Expected presentations to be a non-empty list*"),
    ("levels=[4], pairs=8, require='accuracy >= lots'", "Cannot read require='accuracy >= lots'; "
                                                        "write 'METRIC OP VALUE'*"),
    ("levels=[4], pairs=8, require='precision >= 0.5'", "Unknown metric 'precision'*expected "
                                                        "one of robust_correct, *"),
    ("levels=[4], pairs=8, require=3", "Expected require='strict' or threshold strings*"),
    ("family='nope', levels=[4], pairs=8", "Unknown family='nope'. Expected one of: ordering, "
                                           "horn, *"),
    ("'ordering', 'extra', levels=[4], pairs=8", "*takes the family as its only positional "
                                                 "argument*"),
    ("levels=[4], pairs=8, protocol='Q'", "Expected protocol to be one of 'P', 'L', but got "
                                          "protocol='Q'"),
    ("levels=[4], pairs=8, colour='red'", "family='ordering' does not take these options: "
                                          "*'colour'*"),
]


@pytest.mark.parametrize(("args", "message"), MARKER_CASES, ids=[c[0] for c in MARKER_CASES])
def test_invalid_marker_arguments_are_collection_errors(pytester: pytest.Pytester, args, message):
    pytester.makepyfile(test_bad=MARKED.format(args=args))
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([
        "*ERROR collecting test_bad.py*",
        "test_bad.py::test_bad: @pytest.mark.competence: " + esc(message),
    ])
    assert_no_internals(result.stdout.str())


def test_marked_test_must_take_the_competence_fixture(pytester: pytest.Pytester):
    pytester.makepyfile(test_bad="""
        import pytest

        @pytest.mark.competence(levels=[4], pairs=8)
        def test_bad():
            pass
    """)
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([
        "test_bad.py::test_bad: a test marked @pytest.mark.competence must take the 'competence' "
        "fixture as an argument, e.g. def test_ordering(competence): ...",
    ])
    assert_no_internals(result.stdout.str())


def test_competence_fixture_needs_the_marker(pytester: pytest.Pytester):
    pytester.makepyfile(test_bad="""
        def test_bad(competence):
            pass
    """)
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*competence_model is only available to tests marked "
                                 "@pytest.mark.competence*"])


def test_invalid_parametrized_override_fails_at_setup(pytester: pytest.Pytester):
    pytester.makepyfile(test_bad="""
        import pytest

        @pytest.mark.parametrize("vocabulary", ["left_right", "nope"])
        @pytest.mark.competence(levels=[4], pairs=8)
        def test_bad(competence, vocabulary):
            pass
    """)
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([
        esc("*ERROR at setup of test_bad[ref:ideal-nope]*"),
        esc("test_bad.py::test_bad[ref:ideal-nope]: @pytest.mark.competence: Unknown "
            "vocabulary='nope'.") + "*",
    ])


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
    "test_endpoint_front_behind", "test_endpoint_controls", "test_interior_front_behind",
    "test_interior_zorbic", "test_interior_controls", "test_original_only",
    "test_names_line_chain",
)


@pytest.mark.parametrize(
    ("model", "passing"),
    [
        ("ref:ideal", ALL_TESTS),
        ("ref:endpoint", ("test_endpoint_front_behind", "test_endpoint_controls",
                          "test_original_only", "test_names_line_chain")),
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
        [esc(f"test_policies.py::{t}[{model}] {'PASSED' if t in passing else 'FAILED'}") + "*"
         for t in ALL_TESTS]
    )


def test_endpoint_shortcut_fails_interior_queries_with_a_wrong_case(pytester: pytest.Pytester):
    pytester.makepyfile(test_policies=POLICY_SUITE)
    result = pytester.runpytest("--competence-model", "ref:endpoint", "-k", "interior_front")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "Competence condition failed for model 'ref:endpoint' on "
        "Ordering(vocabulary='front_behind', distance=2)",
        "  first failing level: n=5: * of 16 instances fail*",
        "*→ WRONG",
    ])


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
    result.stdout.fnmatch_lines([
        esc("test_threshold.py::test_small[ref:threshold?n=8] PASSED*"),
        esc("test_threshold.py::test_grid[ref:threshold?n=8] FAILED*"),
    ])
    result.stdout.fnmatch_lines([
        "Competence condition failed for model 'ref:threshold?n=8' on "
        "Ordering(vocabulary='front_behind')",
        "  first failing level: n=16: * of 16 instances fail*",
        "  failing instance ordering/seed=1/n=16/*:",
        esc("    [original] gold=* → correct"),
        "      prompt: There are 16 people *",
        esc("    [equivalent] gold=* → WRONG"),
    ])
    result.stdout.no_fnmatch_line("*also failing at*")


# -- the failure message --------------------------------------------------------------------------


def test_failure_message_shows_condition_level_and_every_presentation(pytester: pytest.Pytester):
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("--competence-model", "ref:always-yes")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
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
    ])
    assert_no_internals(result.stdout.str())
    result.stdout.fnmatch_lines([
        esc("FAILED test_x.py::test_x[ref:always-yes] - Failed: Competence condition") + "*",
    ])


def test_failure_message_shows_answer_maps(pytester: pytest.Pytester):
    pytester.makepyfile(test_x="""
        import pytest

        @pytest.mark.competence(levels=[4], pairs=8, presentations=["original", "flipped_query"])
        def test_x(competence):
            pass
    """)
    result = pytester.runpytest("--competence-model", "ref:always-yes")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "  first failing level: n=4: 8 of 8 instances fail (all-correct 0.0%)",
        "  failing instance ordering/seed=1/n=4/0:",
        esc("    [original] gold=yes parsed=yes raw='yes' → correct"),
        esc("    [flipped_query] [answer map AnswerMap(yes→no, no→yes)] gold=no parsed=yes "
            "raw='yes' → WRONG"),
    ])
    assert_no_internals(result.stdout.str())


def test_failure_under_long_tracebacks_still_has_no_internals(pytester: pytest.Pytester):
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("--competence-model", "ref:always-no", "--tb=long")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["Competence condition failed for model 'ref:always-no' *"])
    assert_no_internals(result.stdout.str())


# -- threshold requirements -----------------------------------------------------------------------


def test_scoped_threshold_passes_the_threshold_policy(pytester: pytest.Pytester):
    pytester.makepyfile(test_gate="""
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
    """)
    result = pytester.runpytest("-v", "--competence-model", "ref:threshold?n=8")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        esc("test_gate.py::test_gate[ref:threshold?n=8] PASSED*"),
        esc("test_gate.py::test_gate_wider[ref:threshold?n=8] FAILED*"),
        esc("test_gate.py::test_conjunction[ref:threshold?n=8] PASSED*"),
    ])
    result.stdout.fnmatch_lines([
        "  condition: robust_correct >= 0.95 for n <= 16",
        "  first failing level: n=16: robust_correct = 0.0000, required >= 0.95",
    ])
    result.stdout.fnmatch_lines([
        "*competence profiles*",
        esc("test_gate.py::test_conjunction[ref:threshold?n=8]  PASS  (accuracy >= 0.5 and "
            "coverage == 1)"),
    ])


def test_accuracy_threshold_fails_always_yes_naming_metric_and_level(pytester: pytest.Pytester):
    pytester.makepyfile(test_gate="""
        import pytest

        @pytest.mark.competence(levels=[4, 8], pairs=8, require="accuracy >= 0.9")
        def test_gate(competence):
            pass
    """)
    result = pytester.runpytest("--competence-model", "ref:always-yes,ref:ideal")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "Competence condition failed for model 'ref:always-yes' on *",
        "  condition: accuracy >= 0.9",
        "  first failing level: n=4: accuracy = 0.5000, required >= 0.9",
        "  also failing at n = 8",
        "  failing instance ordering/seed=1/n=4/1:",
        esc("    [original] gold=no parsed=yes raw='yes' → WRONG"),
    ])
    assert_no_internals(result.stdout.str())


# -- py: models -----------------------------------------------------------------------------------


def test_py_callable_model(pytester: pytest.Pytester):
    pytester.syspathinsert()
    pytester.makepyfile(mymodel=ideal_py("""
        def answer(prompts):
            assert all(isinstance(p, str) for p in prompts)
            return [_ideal(p) for p in prompts]

        def lazy(prompts):
            return ["Answer: yes" for p in prompts]
    """))
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("-v", "--competence-model", "py:mymodel:answer,py:mymodel:lazy")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        esc("test_x.py::test_x[py:mymodel:answer] PASSED*"),
        esc("test_x.py::test_x[py:mymodel:lazy] FAILED*"),
    ])
    result.stdout.fnmatch_lines([
        esc("    [original] gold=no parsed=yes raw='Answer: yes' → WRONG"),
    ])


def test_py_model_from_a_file_path(pytester: pytest.Pytester):
    path = pytester.makepyfile(file_model=ideal_py("""
        def answer(prompts):
            return [_ideal(p) for p in prompts]
    """))
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("-v", "--competence-model", f"py:{path}:answer")
    result.assert_outcomes(passed=1)


def test_py_model_with_wrong_number_of_answers(pytester: pytest.Pytester):
    pytester.syspathinsert()
    pytester.makepyfile(shortmodel="""
        def answer(prompts):
            return ["yes"] * (len(prompts) - 1)
    """)
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("--competence-model", "py:shortmodel:answer")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*model 'py:shortmodel:answer' returned 31 answers for 32 prompts; generate() must "
        "return exactly one answer (or exception) per prompt, in order",
    ])
    assert_no_internals(result.stdout.str())


def test_py_model_invalid_answers_are_recorded_with_reasons(pytester: pytest.Pytester):
    pytester.syspathinsert()
    pytester.makepyfile(weirdmodel=ideal_py("""
        def answer(prompts):
            # Four presentations per instance: presentation k always gets kind k.
            kinds = [lambda p: None, lambda p: RuntimeError("boom"), lambda p: "maybe", _ideal]
            return [kinds[i % 4](p) for i, p in enumerate(prompts)]
    """))
    pytester.makepyfile(test_x="""
        import pytest

        @pytest.mark.competence(levels=[4], pairs=8,
                                presentations=["original", "equivalent", "reshuffle", "rewrite"])
        def test_x(competence):
            pass
    """)
    result = pytester.runpytest("--competence-model", "py:weirdmodel:answer")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "  first failing level: n=4: 8 of 8 instances fail (all-correct 0.0%)",
        "  failing instance ordering/seed=1/n=4/0:",
        esc("    [original] gold=yes parsed=INVALID (model returned NoneType, not text) raw=None "
            "→ WRONG"),
        "      prompt: There are 4 people *",
        esc("    [equivalent] gold=yes parsed=INVALID (model error: RuntimeError: boom) raw=None "
            "→ WRONG"),
        "      prompt: There are 4 people *",
        esc("    [reshuffle] gold=yes parsed=INVALID (none of ['no', 'yes'] in answer) "
            "raw='maybe' → WRONG"),
        "      prompt: There are 4 people *",
        esc("    [rewrite] gold=yes parsed=yes raw='yes' → correct"),
    ])
    # The profile row: invalid answers count wrong; R/D/U are undefined with nothing jointly
    # parsed; coverage is the lowest valid rate over presentations.
    result.stdout.re_match_lines([
        r"^\s+n\s+pairs\s+acc\[original\]\s+acc\[equivalent\]\s+acc\[reshuffle\]\s+acc\[rewrite\]"
        r"\s+R\s+R 95% CI\s+D\s+U\s+κ\s+cover\s+all-ok$",
        r"^\s+4\s+8\s+0\.000\s+0\.000\s+0\.000\s+1\.000(\s+—){5}\s+0\.000\s+0\.000$",
    ])
    assert_no_internals(result.stdout.str())


def test_py_model_partial_coverage(pytester: pytest.Pytester):
    pytester.syspathinsert()
    pytester.makepyfile(halfmodel=ideal_py("""
        def answer(prompts):
            return [_ideal(p) if i % 4 else "I am not sure" for i, p in enumerate(prompts)]
    """))
    pytester.makepyfile(test_x="""
        import pytest

        @pytest.mark.competence(levels=[4], pairs=8)
        def test_x(competence):
            cover = competence.profiles[0].coverage_by_presentation
            assert cover == {"original": 0.5, "equivalent": 1.0}
            assert competence.profiles[0].coverage == 0.5
    """)
    result = pytester.runpytest("--competence-model", "py:halfmodel:answer")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "Competence condition failed for model 'py:halfmodel:answer' *",
        esc("    [original] gold=yes parsed=INVALID (none of ['no', 'yes'] in answer) "
            "raw='I am not sure' → WRONG"),
    ])
    result.stdout.re_match_lines([
        r"^\s+4\s+8\s+0\.500\s+1\.000\s+1\.000\s+\[0\.510, 1\.000\]\s+0\.000\s+0\.000"
        r"\s+—\s+0\.500\s+0\.500$",
    ])


def test_py_model_object_with_generate_receives_prompt_objects(pytester: pytest.Pytester):
    pytester.syspathinsert()
    record = pytester.path / "seen.txt"
    pytester.makepyfile(objmodel=ideal_py(f"""
        RECORD = {str(record)!r}

        class Model:
            def generate(self, prompts):
                with open(RECORD, "w") as f:
                    for p in prompts:
                        f.write(f"{{type(p).__name__}}|{{p.presentation}}|{{p.system}}\\n")
                return [_ideal(p.text) if p.system else "no system prompt" for p in prompts]

        instance = Model()
    """))
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest(
        "-v", "--competence-model", "py:objmodel:instance,py:objmodel:Model"
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([
        esc("test_x.py::test_x[py:objmodel:instance] PASSED*"),
        esc("test_x.py::test_x[py:objmodel:Model] PASSED*"),
    ])
    seen = record.read_text().splitlines()
    assert len(seen) == 2 * 8 * 2  # levels × pairs × presentations, in one batch
    system = "You are a helpful assistant. Answer logical reasoning questions concisely."
    assert set(seen) == {f"Prompt|original|{system}", f"Prompt|equivalent|{system}"}


# -- the test body --------------------------------------------------------------------------------


def test_body_reads_profiles_and_evaluation(pytester: pytest.Pytester):
    pytester.makepyfile(test_x="""
        import pytest

        @pytest.mark.competence(levels=[4, 8], pairs=8)
        def test_x(competence):
            assert [p.level for p in competence.profiles] == [4, 8]
            assert [p.instances for p in competence.profiles] == [8, 8]
            ev = competence.evaluation
            assert ev.model == "ref:ideal"
            assert ev.presentations == ("original", "equivalent")
            assert len(ev.items) == 16 and len(ev.observations) == 16
            assert all(o.correct for obs in ev.observations for o in obs)
            assert competence.profiles[0].robust_correct == 1.0
            assert competence.spec.levels == (4, 8) and competence.spec.pairs == 8

        @pytest.mark.competence(levels=[4], pairs=8)
        def test_extra_assertion_fails(competence):
            assert competence.profiles[0].all_correct < 1, "extra check in the body"
    """)
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        esc("test_x.py::test_x[ref:ideal] PASSED*"),
        esc("test_x.py::test_extra_assertion_fails[ref:ideal] FAILED*"),
        "*AssertionError: extra check in the body*",
    ])
    # The profile computed by the failing body still reaches the summary.
    result.stdout.fnmatch_lines([
        "*competence profiles*",
        esc("test_x.py::test_extra_assertion_fails[ref:ideal]  FAILED  (strict: *)"),
        "    all-correct 1.000  κ̄ 1.000 *",
        "    n  pairs  acc[[]original[]]  acc[[]equivalent[]]  *",
        "    4      8          1.000            1.000  1.000  [[]0.676, 1.000[]]  0.000  0.000"
        "  1.000  1.000   1.000",
    ])


def test_explicit_check(pytester: pytest.Pytester):
    pytester.makepyfile(test_x="""
        import pytest

        @pytest.mark.competence(levels=[4], pairs=8)
        def test_x(competence):
            competence.check()
            assert competence.checked
            print("AFTER-CHECK", competence.model.name)

        @pytest.mark.competence(levels=[4], pairs=8)
        def test_catch(competence):
            from pytest_competence import CompetenceFailure
            with pytest.raises(CompetenceFailure, match="first failing level: n=4"):
                competence.check()
    """)
    result = pytester.runpytest("-v", "-s", "--competence-model", "ref:ideal,ref:always-yes")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines([
        esc("test_x.py::test_x[ref:ideal] AFTER-CHECK ref:ideal") + "*",
        "PASSED*",
        esc("test_x.py::test_x[ref:always-yes] FAILED*"),
        esc("test_x.py::test_catch[ref:ideal] FAILED*"),
        esc("test_x.py::test_catch[ref:always-yes] PASSED*"),
    ])
    # The failing explicit check is reported from the test body, with the full message.
    result.stdout.fnmatch_lines([
        ">       competence.check()",
        "E       pytest_competence.conditions.CompetenceFailure: Competence condition failed for "
        "model 'ref:always-yes' *",
        "E         first failing level: n=4: 4 of 8 instances fail (all-correct 50.0%)",
    ])
    result.stdout.no_fnmatch_line("*AFTER-CHECK ref:always-yes*")


# -- parametrization overrides the marker ---------------------------------------------------------


def test_parametrized_vocabulary_overrides_the_marker(pytester: pytest.Pytester):
    pytester.makepyfile(test_x="""
        import pytest

        PHRASE = {"front_behind": ("in front of", "behind"),
                  "left_right": ("to the left of", "to the right of")}

        @pytest.mark.parametrize("vocabulary", ["front_behind", "left_right"])
        @pytest.mark.competence(levels=[4], pairs=8, vocabulary="older_younger")
        def test_x(competence, vocabulary):
            forward, converse = PHRASE[vocabulary]
            original, equivalent = competence.evaluation.items[0].prompts
            assert f" {forward} " in original.text and " older than " not in original.text
            assert f" {converse} " in equivalent.text
            assert original.params["vocabulary"] == vocabulary
            print("PROMPT", vocabulary, original.text)
    """)
    result = pytester.runpytest("-v", "-s", "--competence-model", "ref:ideal,ref:always-no")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines([
        esc("test_x.py::test_x[ref:ideal-front_behind] PROMPT front_behind There are 4 people "
            "standing in some order. *Is * in front of *?*"),
        esc("test_x.py::test_x[ref:ideal-left_right] PROMPT left_right There are 4 people "
            "standing in some order. *Is * to the left of *?*"),
    ])
    result.stdout.fnmatch_lines([
        "*model 'ref:always-no' on Ordering(vocabulary='front_behind')",
        "*model 'ref:always-no' on Ordering(vocabulary='left_right')",
    ])


def test_parametrized_vocabulary_reaches_a_py_model(pytester: pytest.Pytester):
    pytester.syspathinsert()
    record = pytester.path / "prompts.txt"
    pytester.makepyfile(recorder=ideal_py(f"""
        def answer(prompts):
            with open({str(record)!r}, "a") as f:
                f.write(prompts[0] + "\\n")
            return [_ideal(p) for p in prompts]
    """))
    pytester.makepyfile(test_x="""
        import pytest

        @pytest.mark.parametrize("vocabulary", ["front_behind", "left_right"])
        @pytest.mark.competence(levels=[4], pairs=8)
        def test_x(competence, vocabulary):
            pass
    """)
    result = pytester.runpytest("--competence-model", "py:recorder:answer")
    result.assert_outcomes(passed=2)
    first, second = record.read_text().splitlines()
    assert " in front of " in first and " to the left of " not in first
    assert " to the left of " in second and " in front of " not in second
    # Same seed and level: the same latent instance, worded in each vocabulary.
    assert first.replace(" in front of ", " to the left of ") == second


def test_parametrized_design_keys_override_the_marker(pytester: pytest.Pytester):
    pytester.makepyfile(test_x="""
        import pytest

        @pytest.mark.parametrize("seed", [1, 2])
        @pytest.mark.parametrize("presentations", [["original"], ["original", "negated"]])
        @pytest.mark.competence(levels=[4], pairs=8, seed=5)
        def test_x(competence, seed, presentations):
            ev = competence.evaluation
            assert ev.items[0].id == f"ordering/seed={seed}/n=4/0"
            assert ev.presentations == tuple(presentations)
    """)
    result = pytester.runpytest()
    result.assert_outcomes(passed=4)


def test_parametrized_levels_without_marker_levels(pytester: pytest.Pytester):
    pytester.makepyfile(test_x="""
        import pytest

        @pytest.mark.parametrize("levels", [[4], [8]])
        @pytest.mark.competence(pairs=8)
        def test_x(competence, levels):
            assert competence.spec.levels == tuple(levels)
    """)
    result = pytester.runpytest()
    result.assert_outcomes(passed=2)


# -- the terminal summary -------------------------------------------------------------------------


@pytest.mark.parametrize("verbosity", [[], ["-q"], ["-v"]])
def test_profiles_section_has_a_row_per_level(pytester: pytest.Pytester, verbosity):
    pytester.makepyfile(test_x="""
        import pytest

        @pytest.mark.competence(levels=[4, 8, 16], pairs=8)
        def test_x(competence):
            pass
    """)
    result = pytester.runpytest(*verbosity, "--competence-model", "ref:ideal,ref:threshold?n=8")
    result.assert_outcomes(passed=1, failed=1)
    section = profile_section(result.stdout.str())
    if "-q" in verbosity:  # one line per test × model, then the comparison
        assert section[0].startswith("test_x.py::test_x[ref:ideal]  PASS  all-correct 1.000")
        assert section[1].startswith(
            "test_x.py::test_x[ref:threshold?n=8]  FAILED  all-correct 0.667")
        assert section[1].endswith("first failing n: 16")
        return
    headers = [i for i, line in enumerate(section) if line.split()[:2] == ["n", "pairs"]]
    assert section[headers[0]].split() == [
        "n", "pairs", "acc[original]", "acc[equivalent]", "R", "R", "95%", "CI", "D", "U", "κ",
        "cover", "all-ok"]
    ideal, threshold = headers
    assert section[ideal - 2] == ("test_x.py::test_x[ref:ideal]  PASS  "
                                  "(strict: C_0 = … = C_K = 1 on every instance at every level)")
    assert [row.split()[0] for row in section[ideal + 1:ideal + 4]] == ["4", "8", "16"]
    assert section[threshold + 3].split() == [
        "16", "8", "1.000", "0.000", "0.000", "[0.000,", "0.324]", "0.000", "1.000", "-1.000",
        "1.000", "0.000"]


def test_no_profiles_section_without_competence_tests(pytester: pytest.Pytester):
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*competence profiles*")


# -- xdist and reproducibility --------------------------------------------------------------------

XDIST_SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4, 8], pairs=8)
    def test_endpoints(competence):
        pass

    @pytest.mark.competence(levels=[5, 8], pairs=8, distance=2, vocabulary="left_right")
    def test_interior(competence):
        pass

    @pytest.mark.parametrize("vocabulary", ["taller_shorter", "vorpward_morpward"])
    @pytest.mark.competence(levels=[4, 8, 16], pairs=8, require="robust_correct >= 0.9 for n <= 8")
    def test_gate(competence, vocabulary):
        pass

    def test_plain():
        pass
"""
XDIST_MODELS = "ref:ideal,ref:endpoint,ref:threshold?n=5,ref:always-yes,ref:coin?seed=2"


def test_xdist_matches_serial_run(pytester: pytest.Pytester):
    pytester.makepyfile(test_suite=XDIST_SUITE)
    # No example database: the second run would replay the first run's minimal cases.
    args = ("-p", "no:cacheprovider", "-o", "competence_database=none", "-rA",
            "--competence-model", XDIST_MODELS)
    serial = pytester.runpytest_subprocess(*args)
    parallel = pytester.runpytest_subprocess("-n", "2", *args)
    # ideal passes all four competence tests, endpoint all but the interior one, the rest none.
    serial.assert_outcomes(passed=1 + 4 + 3, failed=1 + 4 * 3)
    parallel.assert_outcomes(passed=1 + 4 + 3, failed=1 + 4 * 3)
    parallel.stdout.fnmatch_lines(["*2 workers [[]21 items[]]*"])

    def verdicts(result: pytest.RunResult) -> list[str]:
        return sorted(line for line in result.stdout.lines if re.match(r"^(PASSED|FAILED) ", line))

    assert len(verdicts(serial)) == 21
    assert verdicts(serial) == verdicts(parallel)
    serial_section = profile_section(serial.stdout.str())
    parallel_section = profile_section(parallel.stdout.str())
    # One table per test × model (20), one comparison block per test (4) with a line per other
    # model and presentation.
    assert sum(line.split()[:2] == ["n", "pairs"] for line in serial_section) == 20
    assert sum("models against ref:ideal" in line for line in serial_section) == 4
    assert sum("Δacc" in line for line in serial_section) == 4 * 4 * 2
    assert serial_section == parallel_section  # both list the tests by node id


RECORDER = """
    import hashlib
    import os

    from pytest_competence.models.reference import POLICIES

    _ideal = POLICIES["ideal"]()

    class Recorder:
        def generate(self, prompts):
            digest = hashlib.sha256()
            for p in prompts:
                digest.update(f"{p.instance_id}|{p.presentation}|{p.system}|{p.text}|{p.gold}\\n"
                              .encode())
            with open(os.environ["COMPETENCE_RECORD"], "a") as f:
                f.write(f"{len(prompts)} {digest.hexdigest()}\\n")
            return [_ideal(p.text) for p in prompts]
"""


def test_same_seed_gives_identical_prompts_across_sessions(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
):
    pytester.makepyfile(recorder=RECORDER)
    pytester.makepyfile(test_suite="""
        import pytest

        @pytest.mark.competence(levels=[4, 8], pairs=8)
        def test_default(competence):
            pass

        @pytest.mark.competence(levels=[5, 8], pairs=8, distance=2, names="random",
                                distractors=0.5,
                                presentations=["original", "equivalent", "negated"])
        def test_controls(competence):
            pass

        @pytest.mark.competence(levels=[4, 8], pairs=8, seed=2)
        def test_other_seed(competence):
            pass
    """)

    def record(name: str, *extra: str) -> list[str]:
        path = pytester.path / name
        monkeypatch.setenv("COMPETENCE_RECORD", str(path))
        result = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "--competence-model", "py:recorder:Recorder", *extra
        )
        result.assert_outcomes(passed=3)
        return path.read_text().splitlines()

    first = record("first.txt")
    second = record("second.txt")
    assert len(first) == 3
    assert first == second
    assert len(set(first)) == 3  # a different design (or seed) gives different prompts
    assert sorted(record("parallel.txt", "-n", "2")) == sorted(first)
