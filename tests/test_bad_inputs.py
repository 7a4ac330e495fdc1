"""Every bad input is one clean error: the exit code, the first words that name the fix, no traceback.

One table per entry point; this one holds the pytest rows for the marker's design, the ini
options and the release gate (a row and how it runs: ``bad_inputs.py``). Command-line options
and the probes are in ``test_bad_inputs_options.py``, the ``competence`` command in
``test_bad_inputs_cli.py``. Rows that already gave clean errors before issue #15 are here too,
so they stay that way.
"""

from __future__ import annotations

import pytest

from bad_inputs import INTERRUPTED, Row, check_row
from plugin_helpers import PARITY

ROWS = [
    # -- the design: refused at collection, before anything is generated
    Row(
        "pairs-1e9",
        "the design asks 2,000,000,000 prompts (1 level(s) x pairs=1000000000 x 2 "
        "presentation(s) x attempts=1), over the limit of 2,000,000; use fewer pairs or levels, "
        "or raise competence_max_prompts",
        INTERRUPTED,
        marker="levels=[4], pairs=10**9",
    ),
    Row(
        "max-prompts-lowered",
        "the design asks 32 prompts",
        INTERRUPTED,
        ini=("competence_max_prompts = 31",),
    ),
    Row("max-prompts-at-the-size", "", 0, ini=("competence_max_prompts = 32",)),
    Row(
        "repeated-levels",
        "Expected levels to name each size once, but got levels=[4, 4]",
        INTERRUPTED,
        marker="levels=[4, 4], pairs=8",
    ),
    Row(
        "repeated-presentations",
        "Expected presentations to name each presentation once, but "
        "got presentations=['original', 'original']",
        INTERRUPTED,
        marker="levels=[4], pairs=8, presentations=['original', 'original']",
    ),
    Row("no-levels", "@pytest.mark.competence needs levels=", INTERRUPTED, marker="pairs=8"),
    Row(
        "concepts-balanced",
        "Expected balanced to be True or False",
        INTERRUPTED,
        marker="family='concepts', levels=[1], pairs=8, balanced='yes'",
    ),
    Row(
        "raven-verbatim",
        "Expected verbatim to be True or False",
        INTERRUPTED,
        marker="family='raven', levels=[2], pairs=2, verbatim=1",
    ),
    Row(
        "pairs-not-multiple",
        "but got pairs=10; try pairs=8 or pairs=12",
        INTERRUPTED,
        marker="levels=[4], pairs=10",
    ),
    Row(
        "pairs-nearest",
        "but got pairs=30; try pairs=28 or pairs=32",
        INTERRUPTED,
        marker="levels=[4], pairs=30",
    ),
    Row(
        "family-option-typo",
        "family='ordering' has no option 'vocabluary' (did you mean vocabulary=?); its options "
        "are vocabulary, protocol, names, names_line, distractors, distance",
        INTERRUPTED,
        marker="levels=[4], pairs=8, vocabluary='front_behind'",
    ),
    Row(
        "design-key-typo",
        "family='ordering' has no option 'pair' (did you mean pairs=?)",
        INTERRUPTED,
        marker="levels=[4], pair=8",
    ),
    Row(
        "unknown-family",
        "Unknown family='nope'",
        INTERRUPTED,
        marker="family='nope', levels=[4], pairs=8",
    ),
    Row(  # a family's ideal_answer raising on its own prompt: an ERROR naming the fix
        "family-reader-raises",
        "Unread.ideal_answer raised IndexError: list index out of range in ideal_answer(), on "
        "a prompt of its own family 'unread'",
        pytest.ExitCode.TESTS_FAILED,
        marker="family='unread', levels=[4], pairs=8",
        args=("--competence-model=ref:ideal",),
        conftest=PARITY
        + """
class Unread(Parity):
    name = "unread"

    @classmethod
    def ideal_answer(cls, prompt):
        return prompt.text.split("Count: ")[1]


FAMILIES["unread"] = Unread
""",
    ),
    Row(
        # A vocabulary of one's own is checked as the suite's module builds it: a collection
        # error at the template's own line.
        "vocabulary-phrase-template",
        "Expected statement to read '{a} ... {b}' (starting with {a}, ending with {b}, the "
        "relation's words between and no other fields), but got statement='{a}在{b}前面', "
        "which has '前面' after {b}; e.g. statement='{a} is in front of {b}'",
        INTERRUPTED,
        marker="levels=[4], pairs=8, vocabulary=__import__('pytest_competence.strategies', "
        "fromlist=['Phrase']).Phrase('{a}在{b}前面', '{a}不在{b}前面', '{a}在{b}前面吗？')",
    ),
    Row(
        "unknown-presentation",
        "Unknown presentation 'nope'",
        INTERRUPTED,
        marker="levels=[4], pairs=8, presentations=['nope']",
    ),
    Row(
        "attempts-zero",
        "Expected attempts to be a positive integer",
        INTERRUPTED,
        marker="levels=[4], pairs=8, attempts=0",
    ),
    Row(
        "marker-require",
        "Cannot read require='garbage'",
        INTERRUPTED,
        marker="levels=[4], pairs=8, require='garbage'",
    ),
    # -- ini options: a usage error at configure time, before any model
    Row(
        "bootstrap-text",
        "ini option competence_bootstrap = abc: expected a whole number of resamples >= 0",
        ini=("competence_bootstrap = abc",),
    ),
    Row(
        "bootstrap-negative",
        "ini option competence_bootstrap = -5: expected",
        ini=("competence_bootstrap = -5",),
    ),
    Row(
        "alpha-text",
        "ini option competence_alpha = abc: expected a significance level in (0, 1)",
        ini=("competence_alpha = abc",),
    ),
    Row(
        "alpha-two",
        "ini option competence_alpha = 2: expected a significance level in (0, 1)",
        ini=("competence_alpha = 2",),
    ),
    Row(
        "margin-negative",
        "ini option competence_regression_margin = -1: expected an accuracy difference in [0, 1)",
        ini=("competence_regression_margin = -1",),
    ),
    Row(
        "require-garbage",
        "competence_require: Cannot read require='garbage'",
        ini=("competence_require = garbage",),
    ),
    Row(
        "cache-path-directory",
        "ini option competence_cache_path = ",
        ini=("competence_cache_path = .",),
    ),
    Row(
        "cache-path-unwritable",
        "ini option competence_cache_path = /proc/nope/cache.sqlite: "
        "expected a file in a writable directory",
        ini=("competence_cache_path = /proc/nope/cache.sqlite",),
    ),
    Row(
        "database-unwritable",
        "ini option competence_database = /proc/nope: expected a writable directory",
        ini=("competence_database = /proc/nope",),
    ),
    Row(
        "database-shared-github",
        "competence_database_shared: cannot read 'github:'; write 'github:OWNER/REPO'",
        ini=("competence_database_shared = github:",),
    ),
    Row(
        "database-shared-github-owner",
        "cannot read 'github:only-owner'",
        ini=("competence_database_shared = github:only-owner",),
    ),
    Row(
        "shrink-calls",
        "Expected competence_shrink_calls to be an integer >= 0",
        ini=("competence_shrink_calls = many",),
    ),
    Row(
        "shrink-seconds",
        "Expected competence_shrink_seconds to be a positive number",
        ini=("competence_shrink_seconds = -1",),
    ),
    Row(
        "shrink-outside",
        "Expected competence_shrink_outside to be true or false, but got "
        "competence_shrink_outside='maybe'",
        ini=("competence_shrink_outside = maybe",),
    ),
    Row("shrink-outside-off", "", 0, ini=("competence_shrink_outside = false",)),
    Row(
        "max-prompts-zero",
        "ini option competence_max_prompts = 0: expected a positive whole number",
        ini=("competence_max_prompts = 0",),
    ),
    Row(
        "max-error-rate",
        "ini option competence_max_error_rate = 1: expected the share of "
        "prompts that may end in infrastructure errors",
        ini=("competence_max_error_rate = 1",),
    ),
    Row("alias-line", "competence_models", ini=("competence_models = =",)),
    # -- the release gate (issue #26)
    Row(
        "gate-unknown",
        "ini option competence_gate = superiority: expected 'regression' or 'non-inferiority'",
        ini=("competence_gate = superiority",),
    ),
    Row(
        "gate-non-inferiority-margin-0",
        "ini option competence_gate = non-inferiority: expected competence_regression_margin "
        "above 0 beside it, but it is 0; at margin 0 only a candidate significantly better",
        ini=("competence_gate = non-inferiority",),
    ),
    Row(
        "gate-non-inferiority-with-margin",
        "",
        0,
        ini=("competence_gate = non-inferiority", "competence_regression_margin = 0.05"),
    ),
    Row(
        "underpowered-choice",
        "ini option competence_underpowered = loud: expected 'note' or 'error'",
        ini=("competence_underpowered = loud",),
    ),
    Row(
        "underpowered-error",
        "is underpowered: it detects drops of 0.",
        pytest.ExitCode.TESTS_FAILED,
        ini=("competence_underpowered = error", "competence_regression_margin = 0.05"),
        args=("--competence-model=ref:ideal", "--competence-baseline=ref:noisy?p=0.1&seed=1"),
    ),
    Row(
        "marker-gate-unknown",
        "Expected gate to be 'regression' or 'non-inferiority', but got gate='nope'",
        INTERRUPTED,
        marker="levels=[4], pairs=8, gate='nope'",
    ),
    Row(
        "marker-gate-non-inferiority-margin-0",
        "gate='non-inferiority' needs a margin above 0",
        INTERRUPTED,
        marker="levels=[4], pairs=8, gate='non-inferiority'",
    ),
    Row(
        "marker-require-confidence-no-percent",
        "Cannot read the confidence in require='robust_correct >= 0.95 at 95'; write it as a "
        "percentage",
        INTERRUPTED,
        marker="levels=[4], pairs=8, require='robust_correct >= 0.95 at 95'",
    ),
    Row(
        "marker-require-confidence-kappa",
        "kappa is not a proportion of counted instances, so it has no confidence bound",
        INTERRUPTED,
        marker="levels=[4], pairs=8, require='kappa >= 0.5 at 95%'",
    ),
    Row(
        "marker-require-confidence-range",
        "the confidence must lie between 50% and 100% (one-sided), got 40%",
        INTERRUPTED,
        marker="levels=[4], pairs=8, require='accuracy >= 0.9 at 40%'",
    ),
    Row(
        "marker-require-confidence-equal",
        "a bound can show a figure above or below a value, never equal to it",
        INTERRUPTED,
        marker="levels=[4], pairs=8, require='accuracy == 0.9 at 95%'",
    ),
    Row(
        "require-confidence-ini",
        "competence_require: Cannot read the confidence in require='accuracy >= 0.9 at high'",
        ini=("competence_require = accuracy >= 0.9 at high",),
    ),
    Row(
        "require-confidence-ini-good",
        "",
        0,
        ini=("competence_require = robust_correct >= 0.9 at 95% for n <= 8",),
    ),
    Row(
        "trained-on-unknown",
        "competence_trained_on: Unknown split 'ordering:nope'",
        ini=("competence_trained_on = ordering:nope",),
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_pytest_input(pytester: pytest.Pytester, row: Row):
    check_row(pytester, row)
