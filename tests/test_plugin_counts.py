"""The terminal in competence terms (issue #47): one line of caught, passed, errors and n/a
beside pytest's counts, and n/a pairs that leave the progress line alone — serial, under
``-n 2`` and with ``--lf``."""

from __future__ import annotations

import re

import pytest

from test_matrix import ONLY_HORN, SUITE

MODELS = "ref:ideal,ref:endpoint,ref:horn-if-then,py:only_horn_model:only_horn"
# endpoint passes the ordering suite; horn-if-then and only-horn are caught on the Horn suite;
# horn-if-then and only-horn do not read ordering prompts, endpoint no Horn prompts.
COUNTS = "competence: 2 caught, 3 passed, 0 errors, 3 n/a (test × model pairs)"


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-o", "competence_database=none", "--competence-model", MODELS, *args
    )


def _progress(result: pytest.RunResult) -> str:
    """The letters of the ``-q`` progress line(s)."""
    return "".join(
        m[1] for line in result.outlines if (m := re.match(r"^([.sFEx]+)\s*(\[\s*\d+%\])?$", line))
    )


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_counts_in_competence_terms_and_no_letter_for_n_a(
    pytester: pytest.Pytester, xdist: list[str]
):
    pytester.makepyfile(test_suite=SUITE, only_horn_model=ONLY_HORN)
    result = _run(pytester, "-q", "-p", "no:cacheprovider", *xdist)
    result.assert_outcomes(passed=3, failed=2)
    lines = result.outlines
    assert COUNTS in lines
    final = next(line for line in lines if re.search(r"\d+ failed, \d+ passed", line))
    assert re.search(r"2 failed, 3 passed, 3 n/a in ", final)
    assert lines.index(COUNTS) < lines.index(final)  # right above pytest's own line
    assert sorted(_progress(result)) == sorted("...FF")  # a letter per result, none for n/a


def test_report_only_says_why_pytest_passed_the_caught_pairs(pytester: pytest.Pytester):
    pytester.makepyfile(test_suite=SUITE, only_horn_model=ONLY_HORN)
    result = _run(pytester, "-q", "-p", "no:cacheprovider", "--competence-report-only")
    result.assert_outcomes(passed=5)
    assert (
        "competence: 2 caught, 3 passed, 0 errors, 3 n/a (test × model pairs; report only: "
        "pytest passed the caught ones)"
    ) in result.outlines


def test_last_failed_reruns_the_caught_pairs_and_leaves_the_n_a_ones_out(
    pytester: pytest.Pytester,
):
    pytester.makepyfile(test_suite=SUITE, only_horn_model=ONLY_HORN)
    first = _run(pytester, "-q")
    first.assert_outcomes(passed=3, failed=2)
    again = _run(pytester, "-q", "--lf")
    again.assert_outcomes(failed=2, passed=0)  # the n/a pairs were never failures
    assert "competence: 2 caught, 0 passed, 0 errors, 0 n/a (test × model pairs)" in (
        again.outlines
    )
    assert _progress(again) == "FF"
    # Under -n 2 too: the same two, and nothing of the n/a pairs.
    twice = _run(pytester, "-q", "--lf", "-n", "2")
    twice.assert_outcomes(failed=2, passed=0)
    assert "competence: 2 caught, 0 passed, 0 errors, 0 n/a (test × model pairs)" in (
        twice.outlines
    )
