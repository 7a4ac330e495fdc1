"""Saved minimal cases are a regression corpus: a passing design still has to pass them."""

from __future__ import annotations

import pytest

SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4, 16], pairs=8)
    def test_order(competence):
        pass
"""

ONLY_NINE = """
    from pytest_competence.models.reference import POLICIES

    _ideal = POLICIES["ideal"]()

    def answer(prompts):
        # Right everywhere except on chains of exactly 9 people: the design (n = 4, 16) never
        # draws one, the case an earlier run saved (n* = 9) is one.
        flip = {"yes": "no", "no": "yes"}
        return [flip[_ideal(p)] if p.startswith("There are 9 people") else _ideal(p)
                for p in prompts]
"""


def test_a_saved_case_fails_a_checkpoint_whose_design_passes(pytester: pytest.Pytester):
    pytester.makepyfile(test_suite=SUITE)
    pytester.makepyfile(only_nine=ONLY_NINE)
    pytester.syspathinsert()
    first = pytester.runpytest("--competence-model", "ref:threshold?n=8")
    first.assert_outcomes(failed=1)
    first.stdout.fnmatch_lines(["*n=9*"])
    # Without the corpus the new checkpoint passes: its design never draws n = 9.
    clean = pytester.runpytest("--competence-model", "py:only_nine:answer",
                               "-o", "competence_database=none")
    clean.assert_outcomes(passed=1)
    second = pytester.runpytest("--competence-model", "py:only_nine:answer")
    second.assert_outcomes(failed=1)
    second.stdout.fnmatch_lines([
        "*every instance of the design passed, but a case saved in the example database by an "
        "earlier run fails*",
    ])
    # The ideal solver passes the design and the saved case alike.
    pytester.runpytest("--competence-model", "ref:ideal").assert_outcomes(passed=1)
