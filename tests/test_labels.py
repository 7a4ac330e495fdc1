"""Every label true: a report says what happened, and which condition each figure belongs to.

- ``--competence-report-only`` does not minimise: the design's first failing instance is
  labelled as such, never as a minimal case (JSON, HTML, Markdown, terminal);
- a test that passes its declared ``require=`` shows that condition's first failing level beside
  the strict condition's, each named;
- a model named as its own baseline is not gated, says so, and a run that gated nothing is not
  green.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4, 8, 16], pairs=20)
    def test_strict(competence):
        pass

    @pytest.mark.competence(levels=[4, 8, 16], pairs=20, require="accuracy >= 0.4")
    def test_floor(competence):
        pass
"""

#: Right up to n = 8, guessing beyond: the strict condition fails at 16, the floor holds.
THRESHOLD = "ref:threshold?n=8"


def test_report_only_labels_the_first_failing_instance_as_not_minimised(pytester: pytest.Pytester):
    pytester.makepyfile(test_s=SUITE)
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        f"--competence-model={THRESHOLD}",
        "--competence-report-only",
        "--competence-json=r.json",
        "--competence-html=r.html",
        "--competence-markdown=r.md",
    )
    result.assert_outcomes(passed=2)
    document = json.loads((pytester.path / "r.json").read_text("utf-8"))
    strict = next(r for r in document["results"] if "test_strict" in r["nodeid"])
    assert strict["condition_met"] is False
    minimal = strict["failing_case"]["minimal"]
    assert minimal["status"] == "not_minimised" and "Not minimised" in minimal["verdict"]
    assert set(minimal) == {"status", "verdict"}  # no case, no calls: nothing was asked
    html = (pytester.path / "r.html").read_text("utf-8")
    markdown = (pytester.path / "r.md").read_text("utf-8")
    for text in (html, markdown, result.stdout.str()):
        assert "Minimal failing case" not in text and "minimal failing case" not in text
        assert "Not minimised: --competence-report-only" in text
    assert "First failing case of the design" in html


def test_a_declared_condition_and_the_strict_one_are_named_apart(pytester: pytest.Pytester):
    pytester.makepyfile(test_s=SUITE)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", f"--competence-model={THRESHOLD}", "--junitxml=j.xml"
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            f"test_s.py::test_floor[[]{THRESHOLD}[]]  PASS  (accuracy >= 0.4)",
            "    all-correct * first failing n (accuracy >= 0.4): —; all-correct < 1 from n: 16",
            f"test_s.py::test_strict[[]{THRESHOLD}[]]  FAILED  (strict: *)",
            "    all-correct * first failing n: 16",
        ]
    )
    cases = {c.get("name"): c for c in ET.parse(pytester.path / "j.xml").getroot().iter("testcase")}
    floor = {
        p.get("name"): p.get("value") for p in cases[f"test_floor[{THRESHOLD}]"].iter("property")
    }
    assert floor["competence_first_failing_n"] == "16"  # the strict condition's
    assert floor["competence_condition_first_failing_n"] == "None"  # the floor holds


def test_a_model_is_not_gated_against_itself_and_says_so(pytester: pytest.Pytester):
    pytester.makepyfile(test_s=SUITE)
    args = ("-p", "no:cacheprovider", "--competence-json=r.json")
    alone = pytester.runpytest(
        *args, "--competence-model=ref:ideal", "--competence-baseline=ref:ideal"
    )
    assert alone.ret == pytest.ExitCode.USAGE_ERROR  # nothing was gated: not green
    alone.stdout.fnmatch_lines(
        [
            "*against baseline ref:ideal: not gated: this model is the baseline*",
            "--competence-baseline ref:ideal: it is the only model under test, so nothing was "
            "gated (a model is not gated against itself)*",
        ]
    )
    document = json.loads((pytester.path / "r.json").read_text("utf-8"))
    assert {r["gate"]["status"] for r in document["results"]} == {"baseline itself"}

    both = pytester.runpytest(
        *args, f"--competence-model=ref:ideal,{THRESHOLD}", "--competence-baseline=ref:ideal"
    )
    assert both.ret == pytest.ExitCode.TESTS_FAILED  # the threshold model regressed at n = 16
    assert "nothing was gated" not in both.stdout.str()
    both.stdout.fnmatch_lines(
        ["*against baseline ref:ideal: not gated: this model is the baseline*"]
    )
