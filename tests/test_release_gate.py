"""The release gate as a user meets it: power on every gate, the non-inferiority gate, the
bound behind every pass and thresholds with a confidence (``competence trend`` is in
``tests/test_trend.py``).

The statistics themselves are checked against statsmodels and scipy in
``tests/test_stats_gate.py``; here every figure a report shows is recomputed independently from
the archived per-instance bits (scipy's normal quantiles, ``binomtest``, statsmodels' Wilson
interval) and compared with what the plugin wrote.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.proportion import proportion_confint

from gate_helpers import GOOD, TWIN, WORSE, bits, write_suite

ROOT = Path(__file__).resolve().parent.parent


def _detectable(discordance: float, n: int, alpha: float) -> float:
    """The planner's closed form, independently: k·sqrt(ψ/(n + k²)) with k = z_{1−α/2} + z_0.8
    and ψ no smaller than the drop it detects (k²/(n + k²))."""
    k = scipy_stats.norm.ppf(1 - alpha / 2) + scipy_stats.norm.ppf(0.8)
    psi = max(discordance, k * k / (n + k * k))
    return k * math.sqrt(psi / (n + k * k))


def _properties(junit: Path) -> dict[str, dict[str, str]]:
    return {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in ET.parse(junit).getroot().iter("testcase")
    }


def _run_with_reports(
    pytester: pytest.Pytester, *args: str, fresh: bool = False
) -> tuple[pytest.RunResult, dict]:
    """One run with every report; ``fresh``: in its own process, as each checkpoint of a CI
    job is (nothing of an earlier run survives but its files)."""
    run = pytester.runpytest_subprocess if fresh else pytester.runpytest
    result = run(
        "-p",
        "no:cacheprovider",
        "--competence-json=r.json",
        "--competence-markdown=r.md",
        "--competence-html=r.html",
        "--junitxml=j.xml",
        *args,
    )
    return result, json.loads((pytester.path / "r.json").read_text("utf-8"))


# -- power on every gate ---------------------------------------------------------------------


def test_every_gated_cell_and_the_gate_carry_the_detectable_drop_in_every_report(
    pytester: pytest.Pytester,
):
    write_suite(pytester)
    result, document = _run_with_reports(
        pytester, "--competence-model", f"{GOOD},{TWIN}", "--competence-baseline", GOOD
    )
    result.assert_outcomes(passed=2)
    twin, good = (
        next(r for r in document["results"] if r["model"] == name) for name in (TWIN, GOOD)
    )
    gate = twin["gate"]
    assert gate["test"] == "regression" and gate["passed"] is True
    cells = len(gate["comparisons"])
    assert cells == 4 and gate["power"]["alpha_per_cell"] == pytest.approx(0.05 / 4)
    for row in gate["comparisons"]:
        mask = np.array(twin["instances"]["level"]) == row["n"]
        x, y = bits(twin, row["presentation"])[mask], bits(good, row["presentation"])[mask]
        # The cell's table is the design's matched instances, nothing else.
        assert row["pairs"] == 200
        assert (row["b"], row["c"]) == (int((x & ~y).sum()), int((~x & y).sum()))
        assert row["detectable_drop"] == pytest.approx(
            _detectable((row["b"] + row["c"]) / 200, 200, 0.05 / cells), rel=1e-9
        )
    worst = max(gate["comparisons"], key=lambda r: r["detectable_drop"])
    assert gate["power"]["detectable_drop"] == worst["detectable_drop"]
    assert gate["power"]["worst"] == {"n": worst["n"], "presentation": worst["presentation"]}
    # Margin 0 declares no margin: the drop is shown, never flagged.
    assert gate["power"]["underpowered"] is False and gate["power"]["pairs_needed"] is None
    shown = f"{gate['power']['detectable_drop']:.3f}"
    result.stdout.fnmatch_lines(
        [
            f"    against baseline {GOOD}: no significant regression (Holm α 0.05, margin 0)",
            f"      detectable drop {shown} at 80% power (α/4 = 0.0125 per cell; worst n=*"
            "; no margin declared",
            "      n * presentation  pairs  candidate  baseline * Δ  p (Holm)  detectable drop  verdict",
        ]
    )
    assert "UNDERPOWERED" not in result.stdout.str()
    markdown = (pytester.path / "r.md").read_text("utf-8")
    assert f"detectable drop {shown} at 80% power" in markdown
    assert "| n | presentation | pairs | candidate | baseline | Δ | p (Holm) |" in markdown
    html = (pytester.path / "r.html").read_text("utf-8")
    assert "<h3>Regression gate</h3>" in html and f"detectable drop {shown}" in html
    props = _properties(pytester.path / "j.xml")[f"test_gate[{TWIN}]"]
    assert props["competence_gate"] == "no significant regression"
    assert float(props["competence_detectable_drop"]) == gate["power"]["detectable_drop"]
    assert props["competence_gate_underpowered"] == "False"
    for row in gate["comparisons"]:
        key = f"competence_detectable_drop[n={row['n']},{row['presentation']}]"
        assert float(props[key]) == row["detectable_drop"]


def test_a_gate_that_cannot_detect_its_margin_is_flagged_with_the_pairs_it_needs(
    pytester: pytest.Pytester,
):
    write_suite(pytester, pairs=8, extra=", regression_margin=0.05")
    result, document = _run_with_reports(
        pytester, "--competence-model", TWIN, "--competence-baseline", GOOD
    )
    result.assert_outcomes(passed=1)  # a note: the verdict stands
    power = document["results"][0]["gate"]["power"]
    assert power["underpowered"] is True and power["detectable_drop"] > 0.05
    needed = power["pairs_needed"]
    rows = document["results"][0]["gate"]["comparisons"]
    alpha = power["alpha_per_cell"]
    # At the pairs it names, every cell (its discordance share held) reaches the margin; one
    # pair fewer, some cell does not.
    shares = [(r["b"] + r["c"]) / r["pairs"] for r in rows]
    assert all(_detectable(s, needed, alpha) <= 0.05 for s in shares)
    assert not all(_detectable(s, needed - 1, alpha) <= 0.05 for s in shares)
    result.stdout.fnmatch_lines(
        [
            "*CompetenceUnderpoweredGate: test_suite.py::test_gate[[]*[]]: the gate against "
            f"baseline '{GOOD}' is underpowered*",
            f"*detectable drop {power['detectable_drop']:.3f} at 80% power*UNDERPOWERED: over "
            f"the margin 0.05 by {power['detectable_drop'] - 0.05:.3f}; {needed:,} pairs per "
            "level would reach it",
        ]
    )
    assert "⚠️ detectable drop" in (pytester.path / "r.md").read_text("utf-8")
    assert 'class="warn"><b>Power.</b>' in (pytester.path / "r.html").read_text("utf-8")
    props = _properties(pytester.path / "j.xml")[f"test_gate[{TWIN}]"]
    assert props["competence_gate_underpowered"] == "True"
    assert int(props["competence_gate_pairs_needed"]) == needed


def test_competence_underpowered_error_makes_it_a_test_error_not_a_failure(
    pytester: pytest.Pytester,
):
    write_suite(pytester, pairs=8, extra=", regression_margin=0.05")
    pytester.makeini("[pytest]\ncompetence_underpowered = error\n")
    result = pytester.runpytest("--competence-model", TWIN, "--competence-baseline", GOOD)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_gate*",
            "test_suite.py::test_gate[[]*[]]: the gate against baseline * is underpowered: it "
            "detects drops of 0.* or more at 80% power*; * pairs per level would reach the "
            "margin at the discordance observed. Declare more pairs= or a larger "
            "regression_margin=, or set competence_underpowered = note to gate anyway",
        ]
    )
    # Sized for its margin, the same option lets the gate run.
    write_suite(pytester, pairs=600, extra=", regression_margin=0.05")
    pytester.runpytest("--competence-model", TWIN, "--competence-baseline", GOOD).assert_outcomes(
        passed=1
    )
    # --competence-report-only fails nothing, so it reports the gate with the note instead.
    write_suite(pytester, pairs=8, extra=", regression_margin=0.05")
    result = pytester.runpytest(
        "--competence-model", TWIN, "--competence-baseline", GOOD, "--competence-report-only"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*UNDERPOWERED*"])


# -- the non-inferiority gate ----------------------------------------------------------------


def test_non_inferiority_passes_only_on_evidence_and_says_why_not(pytester: pytest.Pytester):
    write_suite(pytester, extra=", gate='non-inferiority', regression_margin=0.1")
    result, document = _run_with_reports(
        pytester, "--competence-model", f"{GOOD},{TWIN},{WORSE}", "--competence-baseline", GOOD
    )
    result.assert_outcomes(passed=2, failed=1)
    by_model = {r["model"]: r for r in document["results"]}
    assert by_model[GOOD]["gate"]["status"] == "baseline itself"  # said, not gated
    good = by_model[GOOD]
    for model, passed in ((TWIN, True), (WORSE, False)):
        gate = by_model[model]["gate"]
        assert gate["test"] == "non-inferiority" and gate["passed"] is passed
        assert "regressions" not in gate
        for row in gate["comparisons"]:
            mask = np.array(by_model[model]["instances"]["level"]) == row["n"]
            x = bits(by_model[model], row["presentation"])[mask]
            y = bits(good, row["presentation"])[mask]
            assert (row["b"], row["c"]) == (int((x & ~y).sum()), int((~x & y).sum()))
            assert row["delta"] == pytest.approx((row["b"] - row["c"]) / row["pairs"])
            # Holm at one-sided α: the bound at the level Holm tests the cell at clears −margin
            # exactly when the cell is declared non-inferior (Holm never stops early here:
            # every cell passes or none does).
            assert row["noninferior"] is passed
            assert (row["lower_holm"] > -0.1) is passed
            assert row["lower_holm"] <= row["lower"] <= row["delta"]
        assert [r for r in gate["comparisons"] if not r["noninferior"]] == gate["unproven"]
        # Its power: the smallest margin an equally good candidate passes at 80% power.
        k1 = scipy_stats.norm.ppf(1 - 0.05 / 4) + scipy_stats.norm.ppf(0.8)
        for row in gate["comparisons"]:
            psi = max((row["b"] + row["c"]) / row["pairs"], k1 * k1 / row["pairs"])
            assert row["detectable_drop"] == pytest.approx(k1 * math.sqrt(psi / row["pairs"]))
    result.stdout.fnmatch_lines(
        [
            f"*test_gate[[]{TWIN}[]]*",
            f"    against baseline {GOOD}: non-inferior at every level × presentation "
            "(non-inferiority, one-sided Holm α 0.05, margin 0.1)",
            "      an equally good candidate passes at margins from 0.* at 80% power*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            f"*Non-inferiority against baseline '{GOOD}' not shown (every level × presentation "
            "needs a one-sided lower bound of candidate − baseline above −0.1, Holm at α = 0.05):",
            "  n=8 accuracy[[]original[]]: 0.* vs baseline 0.* (Δ -0.*, b=* c=*); lower bound "
            "-0.* at *%, not above -0.100; * p=*, Holm *",
        ]
    )
    props = _properties(pytester.path / "j.xml")
    assert props[f"test_gate[{TWIN}]"]["competence_gate"] == "non-inferior"
    assert props[f"test_gate[{WORSE}]"]["competence_gate"] == "non-inferiority not shown"
    assert "Non-inferiority gate" in (pytester.path / "r.md").read_text("utf-8")


def test_the_ini_chooses_the_gate_and_the_marker_wins(pytester: pytest.Pytester):
    pytester.makeini(
        "[pytest]\ncompetence_gate = non-inferiority\ncompetence_regression_margin = 0.1\n"
    )
    pytester.makepyfile(
        test_suite="""
        import pytest

        @pytest.mark.competence(levels=[8], pairs=200, require="coverage >= 0.99")
        def test_ini(competence):
            pass

        @pytest.mark.competence(levels=[8], pairs=200, require="coverage >= 0.99",
                                gate="regression", regression_margin=0)
        def test_own(competence):
            pass
    """
    )
    result, document = _run_with_reports(
        pytester, "--competence-model", TWIN, "--competence-baseline", GOOD
    )
    result.assert_outcomes(passed=2)
    gates = {r["test"]: r["gate"] for r in document["results"]}
    assert gates["test_suite.py::test_ini[*]"]["test"] == "non-inferiority"
    assert gates["test_suite.py::test_ini[*]"]["margin"] == 0.1
    assert gates["test_suite.py::test_own[*]"]["test"] == "regression"
    assert gates["test_suite.py::test_own[*]"]["margin"] == 0


def test_the_gate_and_its_power_are_the_same_under_xdist(pytester: pytest.Pytester):
    """Under ``-n 2`` the workers gate, the controller reports: the same gates, figure for
    figure, as one process, and an underpowered gate is still the ERROR the ini asks for."""
    pytester.makeini("[pytest]\ncompetence_underpowered = error\n")
    pytester.makepyfile(
        test_suite="""
        import pytest

        @pytest.mark.competence(levels=[8, 16], pairs=8, require="coverage >= 0.99",
                                regression_margin=0.05)
        def test_small(competence):
            pass

        @pytest.mark.competence(levels=[8, 16], pairs=600, require="coverage >= 0.99",
                                regression_margin=0.05)
        def test_sized(competence):
            pass

        @pytest.mark.competence(levels=[8, 16], pairs=200, require="coverage >= 0.99",
                                gate="non-inferiority", regression_margin=0.1)
        def test_noninferior(competence):
            pass
    """
    )
    args = ("--competence-model", TWIN, "--competence-baseline", GOOD, "--competence-json=r.json")
    gates = []
    for extra in ((), ("-n", "2")):
        result = pytester.runpytest("-p", "no:cacheprovider", *args, *extra)
        result.assert_outcomes(passed=2, errors=1)
        result.stdout.fnmatch_lines(["*ERROR at setup of test_small*"])
        document = json.loads((pytester.path / "r.json").read_text("utf-8"))
        gates.append({r["test"]: r["gate"] for r in document["results"] if r.get("gate")})
    alone, spread = gates
    assert set(alone) >= {"test_suite.py::test_sized[*]", "test_suite.py::test_noninferior[*]"}
    assert spread == alone
    assert alone["test_suite.py::test_sized[*]"]["power"]["underpowered"] is False
    assert alone["test_suite.py::test_noninferior[*]"]["passed"] is True


# -- the bound behind every pass -------------------------------------------------------------


def test_a_strict_pass_states_the_failure_rate_it_bounds(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_suite="""
        import pytest

        @pytest.mark.competence(levels=[4, 8], pairs=400)
        def test_strict(competence):
            pass
    """
    )
    result, document = _run_with_reports(pytester, "--competence-model", "ref:ideal")
    result.assert_outcomes(passed=1)
    strict = document["results"][0]["bounds"]["strict"]
    exact = scipy_stats.binomtest(0, 800).proportion_ci(confidence_level=0.9, method="exact")
    assert strict == {
        "instances": 800,
        "failures": 0,
        "confidence": 0.95,
        "upper": pytest.approx(exact.high, rel=1e-12),
    }
    line = "C = 1 on 800 instances: failure rate ≤ 0.37% at 95% (one-sided, Clopper–Pearson)"
    result.stdout.fnmatch_lines([f"    {line}"])
    assert line in (pytester.path / "r.html").read_text("utf-8")
    assert line in (pytester.path / "r.md").read_text("utf-8")
    props = _properties(pytester.path / "j.xml")["test_strict[ref:ideal]"]
    assert float(props["competence_failure_rate_bound"]) == pytest.approx(exact.high)
    # competence report recomputes the bound from the records and gives it back.
    done = subprocess.run(
        [sys.executable, "-m", "pytest_competence.cli", "report", "r.json", "--json", "again.json"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    again = json.loads((pytester.path / "again.json").read_text("utf-8"))
    assert again["results"][0]["bounds"] == document["results"][0]["bounds"]
    assert line in done.stdout


def test_a_threshold_at_a_confidence_holds_only_on_its_wilson_bound(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_suite="""
        import pytest

        @pytest.mark.competence(levels=[8, 16], pairs=200, require="robust_correct >= 0.85")
        def test_point(competence):
            pass

        @pytest.mark.competence(levels=[8, 16], pairs=200,
                                require="robust_correct >= 0.85 at 99% for n <= 16")
        def test_bound(competence):
            pass

        @pytest.mark.competence(levels=[8, 16], pairs=200,
                                require=["accuracy >= 0.85 at 95%", "shared_wrong <= 0.2 at 95%"])
        def test_others(competence):
            pass
    """
    )
    result, document = _run_with_reports(pytester, "--competence-model", "ref:noisy?p=0.05&seed=5")
    by_test = {r["test"].split("::")[1]: r for r in document["results"]}
    point, bound = by_test["test_point[*]"], by_test["test_bound[*]"]
    for lv in point["levels"]:
        assert lv["robust_correct"] >= 0.85
    checked = bound["bounds"]["thresholds"][0]
    assert checked["threshold"] == "robust_correct >= 0.85 at 99% for n <= 16"
    for lv, level in zip(bound["levels"], checked["levels"], strict=True):
        successes = round(lv["robust_correct"] * lv["jointly_parsed"])
        low = proportion_confint(successes, lv["jointly_parsed"], alpha=0.02, method="wilson")[0]
        assert level["bound"] == pytest.approx(low, rel=1e-12)
        assert level["holds"] is (low >= 0.85)
    held = all(level["holds"] for level in checked["levels"])
    assert bound["condition_met"] is held and point["condition_met"] is True
    others = by_test["test_others[*]"]["bounds"]["thresholds"]
    for lv, level in zip(by_test["test_others[*]"]["levels"], others[0]["levels"], strict=True):
        # accuracy: the mean of each presentation's bound, never above their pooled figure's
        lows = [
            proportion_confint(round(a * lv["instances"]), lv["instances"], 0.1, "wilson")[0]
            for a in lv["accuracy_by_presentation"].values()
        ]
        assert level["bound"] == pytest.approx(sum(lows) / len(lows), rel=1e-12)
    for lv, level in zip(by_test["test_others[*]"]["levels"], others[1]["levels"], strict=True):
        wrong = round(lv["shared_wrong"] * lv["jointly_parsed"])
        high = proportion_confint(wrong, lv["jointly_parsed"], 0.1, "wilson")[1]
        assert others[1]["side"] == "upper" and level["bound"] == pytest.approx(high, rel=1e-12)
    result.stdout.fnmatch_lines(
        ["    robust_correct >= 0.85 at 99% for n <= 16 (one-sided Wilson): * bound 0.* at n=*"]
    )
    if not held:
        result.stdout.fnmatch_lines(
            ["*robust_correct = 0.*, its one-sided 99% lower bound 0.*, required >= 0.85 at 99%*"]
        )


# -- minimisation and replay stay outside the gated sample -----------------------------------

ONLY_NINE = """
    from pytest_competence.models.reference import POLICIES

    _ideal = POLICIES["ideal"]()
    CALLS = []

    def answer(prompts):
        CALLS.append(len(prompts))
        flip = {"yes": "no", "no": "yes"}
        return [flip[_ideal(p)] if p.startswith("There are 9 people") else _ideal(p)
                for p in prompts]
"""


def test_minimisation_and_replay_calls_never_enter_the_gated_sample(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
):
    """The gate compares the design's matched instances only: the calls minimisation and the
    replay of saved cases make (other instances, other sizes) are not in its cells."""
    pytester.makepyfile(
        test_suite="""
        import pytest

        @pytest.mark.competence(levels=[4, 16], pairs=8)
        def test_order(competence):
            pass
    """
    )
    pytester.makepyfile(only_nine=ONLY_NINE)
    monkeypatch.setenv("PYTHONPATH", str(pytester.path))
    # A failing checkpoint: minimised (many calls at other sizes), and its case saved. Each
    # checkpoint runs in its own process, so only the example database carries the case over.
    result, document = _run_with_reports(
        pytester,
        "--competence-model",
        "ref:threshold?n=8",
        "--competence-baseline",
        "ref:ideal",
        fresh=True,
    )
    result.assert_outcomes(failed=1)
    minimised = document["results"][0]
    assert minimised["failing_case"]["minimal"]["calls"]["total"] > 1
    # A checkpoint that passes the design but fails the saved case (n = 9) when it is replayed.
    result, document = _run_with_reports(
        pytester,
        "--competence-model",
        "py:only_nine:answer",
        "--competence-baseline",
        "ref:ideal",
        fresh=True,
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*a case in the example database (saved on * for *) fails*"])
    for r in (minimised, document["results"][0]):
        gate = r["gate"]
        assert {c["pairs"] for c in gate["comparisons"]} == {8}  # the design's pairs per level
        assert len(r["instances"]["ids"]) == 16
        for row in gate["comparisons"]:
            mask = np.array(r["instances"]["level"]) == row["n"]
            x = bits(r, row["presentation"])[mask]
            # The baseline (ref:ideal) is right everywhere: c counts the candidate's misses.
            assert (row["b"], row["c"]) == (0, int((~x).sum()))
    replayed = document["results"][0]
    # The design passed (no instance at n = 9); the replayed case failed; the gate saw the
    # design's 16 instances, all right, so the candidate equals the baseline there.
    assert all(row["candidate"] == 1.0 for row in replayed["gate"]["comparisons"])
    assert replayed["failing_case"]["minimal"]["calls"]["total"] >= 1


# -- the example suite -----------------------------------------------------------------------


def test_the_underpowered_example_says_so_and_by_how_much(pytester: pytest.Pytester):
    suite = ROOT / "examples" / "ci" / "underpowered_gate.py"
    pytester.makepyfile(underpowered_gate=suite.read_text("utf-8"))
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "underpowered_gate.py",
        "--competence-model",
        TWIN,
        "--competence-baseline",
        GOOD,
    )
    result.assert_outcomes(passed=2)
    text = result.stdout.str()
    small, sized = (
        text.split("test_a_gate_sized_for_its_margin", 1)[0],
        text.split("competence profiles", 1)[1],
    )
    assert "UNDERPOWERED: over the margin 0.05 by 0." in small
    result.stdout.fnmatch_lines(
        [
            "*test_a_gate_sized_for_its_margin*",
            "*detectable drop 0.0* at 80% power*reaches the margin 0.05",
        ]
    )
    assert sized.count("UNDERPOWERED") == 1
