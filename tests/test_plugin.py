"""End-to-end tests of the pytest plugin: options, model specs, aliases and marker errors.

Written the way pytest and xdist test plugins: every test runs a real pytest session with the
``pytester`` fixture and checks outcomes and terminal output. The other ``test_plugin_*.py``
files cover verdicts, models and the test body, and the summary under xdist; shared helpers
live in ``plugin_helpers.py``.
"""

from __future__ import annotations

import pytest

from plugin_helpers import SIMPLE, assert_no_internals, esc

# -- options, ids and the marker ----------------------------------------------------------------


def test_models_repeated_and_comma_separated_give_one_test_per_model(pytester: pytest.Pytester):
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest(
        "--collect-only",
        "-q",
        "--competence-model",
        "ref:ideal,ref:endpoint",
        "--competence-model=ref:always-yes",
        "--competence-model",
        " ref:coin?seed=3&p=0.5 , ref:ideal",  # spaces, and a duplicate
    )
    result.stdout.fnmatch_lines(
        [
            esc("test_x.py::test_x[ref:ideal]"),
            esc("test_x.py::test_x[ref:endpoint]"),
            esc("test_x.py::test_x[ref:always-yes]"),
            esc("test_x.py::test_x[ref:coin?seed=3&p=0.5]"),
            "4 tests collected*",
        ]
    )
    assert result.ret == 0


def test_models_run_once_each(pytester: pytest.Pytester):
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("-v", "--competence-model", "ref:ideal,ref:always-no")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            esc("test_x.py::test_x[ref:ideal] PASSED*"),
            esc("test_x.py::test_x[ref:always-no] FAILED*"),
        ]
    )


def test_no_model_skips_with_the_reason_and_says_so(pytester: pytest.Pytester):
    """No built-in default model: a run that names none tested nothing, and says so."""
    pytester.makepyfile(test_x=SIMPLE, test_plain="def test_plain():\n    pass\n")
    result = pytester.runpytest("-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "competence: 1 competence test(s) skipped: no model was named; pass "
            "--competence-model=SPEC or set competence_default_model",
            "*SKIPPED*no competence model: pass --competence-model=SPEC*",
        ]
    )


def test_no_model_is_a_usage_error_when_a_model_is_required(pytester: pytest.Pytester):
    pytester.makeini("[pytest]\ncompetence_require_model = true\n")
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: competence_require_model is set, but no model was "
            "named: pass --competence-model=SPEC*"
        ]
    )
    assert pytester.runpytest("--competence-model", "ref:ideal").ret == 0


@pytest.mark.parametrize("blank", ["", " ", ",", " , "])
def test_a_blank_model_is_a_usage_error(pytester: pytest.Pytester, blank: str):
    """An unset $MODEL in a workflow must not turn into a green run."""
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest(f"--competence-model={blank}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            f"ERROR: --competence-model: got {blank!r}, which names no "
            f"model (an unset variable in a CI workflow?)*"
        ]
    )


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
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.competence(family='ordering', *, levels, pairs=200, seed=1, "
            "presentations=<the family's default>, require='strict', *attempts=<the family's default>*",
        ]
    )
    assert result.ret == 0


def test_the_model_option_names_every_scheme(pytester: pytest.Pytester):
    """``pytest --help`` is where a user looks for what --competence-model takes."""
    from pytest_competence.models import SCHEMES

    result = pytester.runpytest("--help")
    shown = " ".join(result.stdout.str().split("--competence-model", 1)[1].split()).split(
        "--competence-json"
    )[0]
    missing = [scheme for scheme in SCHEMES if f"{scheme}:" not in shown]
    assert not missing, f"--competence-model's help names no {missing}: {shown}"


def test_strict_markers_accepts_the_marker(pytester: pytest.Pytester):
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("--strict-markers", "--competence-model", "ref:ideal")
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
    result.stdout.fnmatch_lines(
        [
            esc("test_x.py::test_x[good] PASSED*"),
            esc("test_x.py::test_x[bad] FAILED*"),
        ]
    )
    # Results are reported under the alias the user typed.
    result.stdout.fnmatch_lines(["Competence condition failed for model 'bad' on *"])


def test_alias_can_be_mixed_with_specs(pytester: pytest.Pytester):
    pytester.makeini(ALIASES_INI)
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("-v", "--competence-model", "good,ref:always-no")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            esc("test_x.py::test_x[good] PASSED*"),
            esc("test_x.py::test_x[ref:always-no] FAILED*"),
        ]
    )


def test_unknown_alias_is_a_usage_error_listing_the_aliases(pytester: pytest.Pytester):
    pytester.makeini(ALIASES_INI)
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("--competence-model=nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --competence-model: unknown model 'nope'; it is not an alias "
            "(aliases: bad, good)*Add 'nope = SPEC' to the competence_models ini option*",
        ]
    )
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
    result.stderr.fnmatch_lines(
        [
            "ERROR: competence_models: cannot read 'nonsense'; write one alias per line as "
            "'name = scheme:rest'*",
        ]
    )


MODEL_SPEC_CASES = [
    ("py:nomodule", "*Malformed model spec 'py:nomodule'; expected 'py:MODULE:ATTR'*"),
    (
        "py:os:nonexistent",
        "*Model spec 'py:os:nonexistent': module 'os' has no attribute 'nonexistent'*",
    ),
    (
        "py:no_such_module_here:f",
        "*cannot import module 'no_such_module_here' (No module named 'no_such_module_here'; "
        "looked in the rootdir * and on sys.path); check that it is installed*",
    ),
    ("py:os:sep", "*'sep' is a str, not a callable taking a list of prompts*"),
    (
        "ref:nosuch",
        "*Unknown reference policy 'nosuch' in 'ref:nosuch'; expected one of "
        "ideal, always-yes, always-no, coin, noisy, sampled, endpoint, forward-reader, "
        "names-order, threshold*",
    ),
    (
        "nosuchscheme:x",
        "*Unknown model scheme 'nosuchscheme' in 'nosuchscheme:x'; expected "
        "one of hf, openai, py, ref, vllm*",
    ),
    ("ref:threshold", "*the threshold policy needs its size, e.g. 'ref:threshold?n=64'*"),
    ("ref:threshold?n=x", "*Expected a number for n, but got n='x'*"),
    ("ref:coin?p=2", "*Expected 0 <= p <= 1, but got p=2*"),
    ("ref:ideal?x=1", "*policy 'ideal' does not take parameters ['x']*"),
]


@pytest.mark.parametrize(
    ("spec", "message"), MODEL_SPEC_CASES, ids=[c[0] for c in MODEL_SPEC_CASES]
)
def test_malformed_model_specs_give_clear_errors(pytester: pytest.Pytester, spec, message):
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("--competence-model", f"ref:ideal,{spec}")
    # Reference policies and schemes resolve at start-up, and a py: module named on
    # --competence-model is imported then (os binds its names through `from posix import *`:
    # only importing it shows a missing attribute): a usage error before any test.
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
    (
        "levels=[1], pairs=8",
        "Expected levels[] >= 2, but got levels[]=1: a chain needs at least two entities",
    ),
    ("levels=4, pairs=8", "Expected levels to be a non-empty list of chain lengths*"),
    (
        "levels=[4], distance=2, pairs=8",
        "Expected levels[] >= 5, but got levels[]=4: interior "
        "queries at distance=2 need n >= distance + 3",
    ),
    (
        "levels=[4], pairs=6",
        "Expected pairs per level to be a positive multiple of 4*but got pairs=6; try pairs=4 or "
        "pairs=8",
    ),
    ("levels=[4], pairs=8, seed='x'", "Expected a non-negative integer seed, but got seed='x'"),
    (
        "levels=[4], pairs=8, vocabulary='nope'",
        "Unknown vocabulary='nope'. Expected one of the 31 catalog names: front_behind, *",
    ),
    (
        "levels=[4], pairs=8, presentations=['bogus']",
        "Unknown presentation 'bogus'. Expected one of: original, equivalent, *",
    ),
    ("levels=[4], pairs=8, presentations=[]", "Expected presentations to be a non-empty list*"),
    (
        "levels=[4], pairs=8, require='accuracy >= lots'",
        "Cannot read require='accuracy >= lots'; write 'METRIC OP VALUE'*",
    ),
    (
        "levels=[4], pairs=8, require='precision >= 0.5'",
        "Unknown metric 'precision'*expected one of robust_correct, *",
    ),
    ("levels=[4], pairs=8, require=3", "Expected require='strict' or threshold strings*"),
    (
        "family='nope', levels=[4], pairs=8",
        "Unknown family='nope'. Expected one of: ordering, horn, *",
    ),
    (
        "'ordering', 'extra', levels=[4], pairs=8",
        "*takes the family as its only positional argument*",
    ),
    (
        "levels=[4], pairs=8, protocol='Q'",
        "Expected protocol to be one of 'P', 'L', but got protocol='Q'",
    ),
    (
        "levels=[4], pairs=8, colour='red'",
        "family='ordering' has no option 'colour'; its options are vocabulary, *",
    ),
]


@pytest.mark.parametrize(("args", "message"), MARKER_CASES, ids=[c[0] for c in MARKER_CASES])
def test_invalid_marker_arguments_are_collection_errors(pytester: pytest.Pytester, args, message):
    pytester.makepyfile(test_bad=MARKED.format(args=args))
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting test_bad.py*",
            "test_bad.py::test_bad: @pytest.mark.competence: " + esc(message),
        ]
    )
    assert_no_internals(result.stdout.str())


def test_marked_test_must_take_the_competence_fixture(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.competence(levels=[4], pairs=8)
        def test_bad():
            pass
    """
    )
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "test_bad.py::test_bad: a test marked @pytest.mark.competence must take the 'competence' "
            "fixture as an argument, e.g. def test_ordering(competence): ...",
        ]
    )
    assert_no_internals(result.stdout.str())


def test_competence_fixture_needs_the_marker(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_bad="""
        def test_bad(competence):
            pass
    """
    )
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*competence_model is only available to tests marked @pytest.mark.competence*"]
    )


def test_invalid_parametrized_override_fails_at_setup(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.parametrize("vocabulary", ["left_right", "nope"])
        @pytest.mark.competence(levels=[4], pairs=8)
        def test_bad(competence, vocabulary):
            pass
    """
    )
    result = pytester.runpytest("-v", "--competence-model", "ref:ideal")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            esc("*ERROR at setup of test_bad[ref:ideal-nope]*"),
            esc(
                "test_bad.py::test_bad[ref:ideal-nope]: @pytest.mark.competence: Unknown "
                "vocabulary='nope'."
            )
            + "*",
        ]
    )


def test_xdist_is_a_core_dependency():
    """Issue #24 item 11: `-n 2` works after the README's plain install: pytest-xdist is among
    the installed distribution's unconditional requirements, not an extra's."""
    from importlib.metadata import requires

    core = [r for r in requires("pytest-competence") or [] if "extra ==" not in r]
    assert any(r.replace("_", "-").startswith("pytest-xdist") for r in core), core
