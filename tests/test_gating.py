"""Checkpoint gating: floors, the regression gate against a baseline, report-only runs."""

from __future__ import annotations

import json

import pytest

# Two noisy ideal solvers: each answer flipped with probability p, fixed by seed and prompt.
GOOD, TWIN, WORSE = "ref:noisy?p=0.05&seed=1", "ref:noisy?p=0.05&seed=2", "ref:noisy?p=0.3&seed=3"

SUITE = """
    import pytest

    @pytest.mark.competence(levels=[8, 16], pairs=200, require="coverage >= 0.99"{extra})
    def test_gate(competence):
        pass
"""


def _suite(pytester: pytest.Pytester, extra: str = "") -> None:
    pytester.makepyfile(test_suite=SUITE.format(extra=extra))


def test_a_degraded_checkpoint_fails_naming_level_figure_values_interval_and_p(
    pytester: pytest.Pytester,
):
    _suite(pytester)
    result = pytester.runpytest(
        "--competence-model", f"{GOOD},{WORSE}", "--competence-baseline", GOOD
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            f"*Significant regression against baseline '{GOOD}' (Holm-adjusted McNemar < α = 0.05 "
            "and a drop over the margin 0):",
            "  n=8 accuracy[[]original[]]: 0.* vs baseline 0.9* (Δ -0.*, 95% CI [[]-0.*, -0.*[]]); "
            "McNemar b=* c=* chi2-cc p=*, Holm *",
        ]
    )
    result.stdout.no_fnmatch_line("*Traceback*")


def test_an_equally_good_checkpoint_passes(pytester: pytest.Pytester):
    _suite(pytester)
    result = pytester.runpytest(
        "--competence-model", f"{GOOD},{TWIN}", "--competence-baseline", GOOD
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([f"    against baseline {GOOD}: no significant regression*"])


def test_false_alarm_rate_over_repeated_seeds_stays_near_alpha(pytester: pytest.Pytester):
    """Equally good models over 40 design seeds: Holm keeps each test's family-wise error at
    α = 0.05, so about 2 false alarms are expected; more than 5 (P < 1.4% under α) fails."""
    pytester.makepyfile(
        test_suite="""
        import pytest

        @pytest.mark.parametrize("seed", range(40))
        @pytest.mark.competence(levels=[8, 16], pairs=100, require="coverage >= 0.99")
        def test_gate(competence, seed):
            pass
    """
    )
    result = pytester.runpytest("-q", "--competence-model", TWIN, "--competence-baseline", GOOD)
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) <= 5, outcomes
    assert outcomes.get("passed", 0) >= 35


def test_a_regression_within_the_margin_passes(pytester: pytest.Pytester):
    _suite(pytester, extra=", regression_margin=0.4")
    result = pytester.runpytest("--competence-model", WORSE, "--competence-baseline", GOOD)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*no significant regression (Holm α 0.05, margin 0.4)*"])


def test_an_archived_baseline_gates_a_later_run(pytester: pytest.Pytester):
    _suite(pytester)
    archive = pytester.path / "released.json"
    pytester.runpytest("--competence-model", GOOD, "--competence-json", str(archive))
    # The gate reads the archived per-instance correctness in the JSON, not the records file.
    (pytester.path / "released.records.jsonl").unlink()
    result = pytester.runpytest("--competence-model", WORSE, "--competence-baseline", str(archive))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*Significant regression against baseline '{GOOD}'*"])
    # Another design cannot be compared: a test error (not a failure of the model) names what
    # differs, before the model is asked.
    _suite(pytester, extra=", seed=7")
    result = pytester.runpytest("--competence-model", WORSE, "--competence-baseline", str(archive))
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*was archived from another design*; seed: archived 1, now 7. Archive the baseline again*"]
    )


def test_configured_condition_replaces_strict_for_tests_that_declare_none(
    pytester: pytest.Pytester,
):
    """competence_require is the default condition: it replaces "strict" where a test declares
    no require=, and a test's own require= wins outright."""
    pytester.makeini("""
        [pytest]
        competence_require =
            kappa_bar >= 0.6
    """)
    pytester.makepyfile(
        test_suite="""
        import pytest

        @pytest.mark.competence(levels=[4, 8], pairs=20)
        def test_default(competence):
            pass

        @pytest.mark.competence(levels=[4, 8], pairs=20, require="coverage >= 0.99")
        def test_own(competence):
            pass
    """
    )
    # ref:noisy is not strictly correct, but its κ̄ is high: the ini condition alone passes it.
    result = pytester.runpytest("--competence-model", "ref:noisy?p=0.02&seed=1,ref:always-yes")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_default[[]ref:always-yes[]]*",
            "*condition: kappa_bar >= 0.6",
            "*kappa_bar = undefined over the grid, required >= 0.6",
        ]
    )
    # With a "strict" line the strict condition stays and the floor is added.
    pytester.makeini("""
        [pytest]
        competence_require =
            strict
            kappa_bar >= 0.6
    """)
    result = pytester.runpytest("--competence-model", "ref:noisy?p=0.02&seed=1")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*condition: strict: C_0 = … = C_K = 1 on every instance at "
            "every level and kappa_bar >= 0.6"
        ]
    )


def test_a_garbage_configured_condition_is_a_usage_error(pytester: pytest.Pytester):
    pytester.makeini("[pytest]\ncompetence_require = garbage\n")
    pytester.makepyfile(test_suite=SUITE.format(extra=""))
    result = pytester.runpytest("--competence-model", "ref:ideal")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: competence_require: *'garbage'*"])


def test_report_only_exits_zero_and_still_shows_what_failed(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_suite="""
        import pytest

        @pytest.mark.competence(levels=[4, 8], pairs=20)
        def test_endpoints(competence):
            pass

        @pytest.mark.competence(levels=[8], pairs=20, distance=2)
        def test_interior(competence):
            pass
    """
    )
    md = pytester.path / "summary.md"
    result = pytester.runpytest(
        "--competence-report-only",
        "--competence-markdown",
        str(md),
        "--competence-model",
        "ref:ideal,ref:endpoint",
    )
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "*test_interior[[]ref:endpoint[]]  FAIL (report only)*",
            "which suite catches which model*",
            "    test*ref:ideal*ref:endpoint",
            "    test_suite.py::test_endpoints[[]*[]]*pass*pass",
            "    test_suite.py::test_interior[[]*[]]*pass*FAIL",
        ]
    )
    text = md.read_text("utf-8")
    assert "❌ fail (report only)" in text and "❌ first failing level n=8" in text


def test_gate_results_are_in_the_json_report(pytester: pytest.Pytester):
    _suite(pytester)
    out = pytester.path / "r.json"
    pytester.runpytest(
        "--competence-model",
        f"{GOOD},{WORSE}",
        "--competence-baseline",
        GOOD,
        "--competence-json",
        str(out),
    )
    results = {r["model"]: r for r in json.loads(out.read_text("utf-8"))["results"]}
    assert results[GOOD]["gate"] == {  # not compared with itself, and says so
        "baseline": GOOD,
        "status": "baseline itself",
        "comparisons": [],
        "regressions": [],
    }
    gate = results[WORSE]["gate"]
    assert gate["baseline"] == GOOD and gate["regressions"]
    assert {(c["n"], c["presentation"]) for c in gate["comparisons"]} == {
        (8, "original"),
        (8, "equivalent"),
        (16, "original"),
        (16, "equivalent"),
    }


def test_an_archived_baseline_that_shares_no_test_with_the_run_is_an_error(
    pytester: pytest.Pytester,
):
    """Issue #24 item 5: every test says "no baseline", so the gate compared nothing: almost
    always the wrong file. The summary comes first, then one line naming the archive's tests
    and the run's, and the exit status is a usage error."""
    pytester.makepyfile(
        test_other="""
        import pytest

        @pytest.mark.competence(levels=[8], pairs=8)
        def test_other(competence):
            pass
        """
    )
    archive = pytester.path / "other.json"
    pytester.runpytest("--competence-model", GOOD, "--competence-json", str(archive))
    (pytester.path / "test_other.py").unlink()
    _suite(pytester)
    result = pytester.runpytest("--competence-model", WORSE, "--competence-baseline", str(archive))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*competence profiles*",
            f"--competence-baseline {archive}: the archive shares no test with this run, so "
            "nothing was gated. It holds 1 result(s) of 'test_other.py::test_other[[]*[]]' for "
            f"'{GOOD}'; this run's competence tests are 'test_suite.py::test_gate[[]*[]]'. Pass the "
            "--competence-json archive of this suite, or drop --competence-baseline",
        ]
    )
    assert out.index("competence profiles") < out.index("the archive shares no test")
    # The archive of this very suite gates it: no such line, and the status is the gate's.
    pytester.runpytest("--competence-model", GOOD, "--competence-json", str(archive))
    result = pytester.runpytest("--competence-model", GOOD, "--competence-baseline", str(archive))
    assert result.ret == pytest.ExitCode.OK and "shares no test" not in result.stdout.str()
