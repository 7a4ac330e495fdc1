"""The intervention-worlds family end to end: a pytester suite under ``-n 2``, JSON and reports."""

from __future__ import annotations

import json

import pytest

SUITE = """
import pytest


@pytest.mark.competence(family="intervention", levels=[4, 8], pairs=6)
def test_worlds(competence):
    pass


@pytest.mark.competence(family="intervention", levels=[4], pairs=6, presentations=["*/*/score"])
def test_scored(competence):
    pass
"""


def test_suite_under_xdist_catches_stuck_and_jumpy(pytester: pytest.Pytester):
    pytester.makepyfile(test_iw_suite=SUITE)
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-n",
        "2",
        "--competence-model",
        "ref:ideal,ref:iw-stuck,ref:iw-jumpy",
        "--competence-json",
        "r.json",
        "--competence-markdown",
        "r.md",
        "--competence-html",
        "r.html",
    )
    result.assert_outcomes(passed=2, failed=4)
    doc = json.loads((pytester.path / "r.json").read_text())
    rates = {
        (r["nodeid"].split("::")[1], r["model"]): r["summary"]["intervention"]["rates"]
        for r in doc["results"]
    }
    assert rates[("test_worlds[ref:ideal]", "ref:ideal")]["selective_response"] == 1.0
    assert rates[("test_worlds[ref:iw-stuck]", "ref:iw-stuck")]["target_follow"] == 0.0
    assert rates[("test_worlds[ref:iw-jumpy]", "ref:iw-jumpy")]["sham_stay"] == 0.0
    assert rates[("test_scored[ref:ideal]", "ref:ideal")]["full_support"] == 1.0
    assert "Intervention worlds:" in (pytester.path / "r.md").read_text()
    assert "Intervention worlds</h3>" in (pytester.path / "r.html").read_text()


def test_terminal_summary_shows_the_section(pytester: pytest.Pytester):
    pytester.makepyfile(test_iw_terminal=SUITE)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--competence-model", "ref:iw-letter", "--competence-report-only"
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*intervention: 12 clusters; base acc 0.333*"])
