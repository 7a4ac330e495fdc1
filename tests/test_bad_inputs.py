"""Every bad input is one clean error: the exit code, the first words that name the fix, no traceback.

One table per entry point. A pytest row is a marker declaration, ini lines and command-line
arguments, run in-process with ``pytester`` (the ``ref:`` model answers with no cost); a CLI
row is ``python -m pytest_competence.cli`` arguments on prepared files, in a subprocess. Rows
that already gave clean errors before issue #15 are here too, so they stay that way.
"""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass, field

import pytest

from plugin_helpers import scripted_document
from pytest_competence.report import write_outputs
from pytest_competence.report._records_file import archived_records
from pytest_competence.spec import spec_from_marker

USAGE, INTERRUPTED = pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERRUPTED


@dataclass(frozen=True)
class Row:
    """One bad (or, with exit 0, just-acceptable) pytest invocation."""

    id: str
    expected: str  # a substring of the error line
    exit: int = USAGE
    marker: str = "levels=[4, 8], pairs=8"
    ini: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    probe: str | None = None  # the arguments of a @pytest.mark.competence_probe line


PYTEST_ROWS = [
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
    # -- command-line options
    Row(
        "json-missing-dir",
        "--competence-json missing/out.json: the directory missing does not exist",
        args=("--competence-json", "missing/out.json"),
    ),
    Row(
        "html-unwritable-dir",
        "--competence-html /proc/r.html: cannot write in /proc",
        args=("--competence-html", "/proc/r.html"),
    ),
    Row(
        "records-without-json",
        "--competence-records r.jsonl: the records file belongs to a "
        "results document; add --competence-json PATH",
        args=("--competence-records=r.jsonl",),
    ),
    Row(
        "records-is-the-json",
        "--competence-records out.json: is the --competence-json file "
        "itself; give the records their own file, e.g. out.records.jsonl",
        args=("--competence-json=out.json", "--competence-records=out.json"),
    ),
    Row(
        "records-missing-dir",
        "--competence-records missing/r.jsonl.gz: the directory missing does not exist",
        args=("--competence-json=out.json", "--competence-records=missing/r.jsonl.gz"),
    ),
    Row(
        "records-gzip",
        "",
        0,
        args=("--competence-json=out.json", "--competence-records=r.jsonl.gz"),
    ),
    Row(
        "html-missing-dir",
        "--competence-html missing/out.html: the directory missing",
        args=("--competence-html", "missing/out.html"),
    ),
    Row(
        "markdown-is-dir",
        "--competence-markdown .: is a directory",
        args=("--competence-markdown", "."),
    ),
    Row(
        "unknown-model",
        "--competence-model: unknown model 'nosuch'",
        args=("--competence-model", "nosuch"),
    ),
    Row(
        "unknown-policy",
        "--competence-model: Unknown reference policy 'nosuch'",
        args=("--competence-model", "ref:nosuch"),
    ),
    Row(
        "py-attribute-typo",
        "--competence-model: Model spec 'py:json:dunps': module 'json' has no attribute 'dunps' "
        "(did you mean 'dumps'?); it defines dump, dumps",
        args=("--competence-model=py:json:dunps",),
    ),
    Row(
        "py-missing-file",
        "--competence-model: Model spec 'py:missing.py:answer': no such file 'missing.py'",
        args=("--competence-model=py:missing.py:answer",),
    ),
    Row(
        "py-missing-module",
        "--competence-model: Model spec 'py:no_such_module:answer': cannot import module",
        args=("--competence-model=py:no_such_module:answer",),
    ),
    Row(
        "py-not-callable",
        "--competence-model: Model spec 'py:string:digits': 'digits' is a str, not a callable",
        args=("--competence-model=py:string:digits",),
    ),
    Row(
        "default-model-bad",
        "competence_default_model: Unknown reference policy 'nosuch'",
        ini=("competence_default_model = ref:nosuch",),
    ),
    Row(
        "alias-target-bad",
        "--competence-model: alias 'q' in competence_models: Unknown reference policy 'nosuch'",
        ini=("competence_models = q = ref:nosuch",),
        args=("--competence-model=q",),
    ),
    Row(
        "cache-choice",
        "argument --competence-cache: invalid choice: 'bad'",
        args=("--competence-cache=bad",),
    ),
    Row(
        "blank-model",
        "--competence-model: got ' ', which names no model",
        args=("--competence-model= ",),
    ),
    Row(
        "no-model-required",
        "competence_require_model is set, but no model was named",
        ini=("competence_require_model = true",),
    ),
    Row("no-model-skips", "", 0),
    Row(
        "openai-no-url",
        "'openai:gpt-4o-mini' names no server; write its base URL out in full",
        args=("--competence-model=openai:gpt-4o-mini",),
    ),
    Row(
        "openai-max-response-zero",
        "expected max_response_mib to be an integer >= 1, but got max_response_mib='0'",
        args=("--competence-model=openai:m@http://127.0.0.1:9/v1?max_response_mib=0",),
    ),
    Row(
        "max-response-mib-ini",
        "the ini option competence_max_response_mib = 16MB: expected an integer >= 1 (MiB)",
        ini=("competence_max_response_mib = 16MB",),
        args=("--competence-model=openai:m@http://127.0.0.1:9/v1",),
    ),
    Row(
        "lookahead-not-a-number",
        "competence_lookahead: expected a whole number of prompts (0 turns asking ahead off), "
        "but got '2k'",
        ini=("competence_lookahead = 2k",),
    ),
    Row(
        "lookahead-negative",
        "competence_lookahead: expected a whole number of prompts",
        ini=("competence_lookahead = -1",),
    ),
    Row("lookahead-off", "", 0, ini=("competence_lookahead = 0",)),
    Row(
        "baseline-missing",
        "--competence-baseline: no such file 'missing.json'",
        args=("--competence-model=ref:ideal", "--competence-baseline=missing.json"),
    ),
    Row(
        "baseline-not-a-model-or-file",
        "--competence-baseline: unknown model 'ckpt_a'; it is not an alias (aliases: none are "
        "configured), a spec such as 'ref:ideal' or 'py:my_models:answer' or an archived "
        "results document (no such file)",
        args=("--competence-model=ref:ideal", "--competence-baseline=ckpt_a"),
    ),
    Row(
        "baseline-records-file",
        "--competence-baseline: 'r.records.jsonl' is a records file (one JSON line per "
        "prompt), not a results document; pass the --competence-json file it belongs to, e.g. "
        "r.json",
        args=("--competence-model=ref:ideal", "--competence-baseline=r.records.jsonl"),
    ),
    Row(
        "baseline-bad-spec",
        "--competence-baseline: Unknown reference policy 'nosuch'",
        args=("--competence-model=ref:ideal", "--competence-baseline=ref:nosuch"),
    ),
    Row(
        "baseline-py-typo",
        "--competence-baseline: Model spec 'py:json:dumpz': module 'json' has no attribute",
        args=("--competence-model=ref:ideal", "--competence-baseline=py:json:dumpz"),
    ),
    Row(
        "baseline-blank",
        "--competence-baseline: got an empty value",
        args=("--competence-model=ref:ideal", "--competence-baseline= "),
    ),
    Row(
        "batch-export-missing-dir",
        "--competence-batch-export missing/r.jsonl: the directory missing does not exist",
        args=("--competence-model=ref:ideal", "--competence-batch-export=missing/r.jsonl"),
    ),
    Row(
        "batch-export-template-missing-dir",
        "--competence-batch-export missing/m.jsonl: the directory missing does not exist",
        args=(
            "--competence-model=openai:m@http://127.0.0.1:9/v1",
            "--competence-batch-export=missing/{model}.jsonl",
        ),
    ),
    Row(
        "batch-max-lines-zero",
        "argument --competence-batch-max-lines: expected a whole number >= 1, got '0'",
        args=("--competence-batch-export=r.jsonl", "--competence-batch-max-lines=0"),
    ),
    Row(
        "batch-max-mb-text",
        "argument --competence-batch-max-mb: expected a whole number >= 1, got '200MB'",
        args=("--competence-batch-export=r.jsonl", "--competence-batch-max-mb=200MB"),
    ),
    Row(
        "batch-max-lines-without-export",
        "--competence-batch-max-lines applies to batch exports; add "
        "--competence-batch-export=PATH (or drop --competence-batch-max-lines)",
        args=("--competence-batch-max-lines=10",),
    ),
    Row(
        "batch-runner-choice",
        "argument --competence-batch-runner: invalid choice: 'sglang'",
        args=("--competence-batch-export=r.jsonl", "--competence-batch-runner=sglang"),
    ),
    Row(
        "batch-runner-without-export",
        "--competence-batch-runner applies to batch exports",
        args=("--competence-batch-runner=vllm",),
    ),
    Row(
        "batch-runner-vllm-completions",
        "--competence-batch-runner=vllm: model 'openai:m@http://127.0.0.1:9/v1?mode=completions' "
        "writes /v1/completions lines (mode=completions), and vllm run-batch takes "
        "/v1/chat/completions lines only; use mode=chat",
        args=(
            "--competence-model=openai:m@http://127.0.0.1:9/v1?mode=completions",
            "--competence-batch-export=r.jsonl",
            "--competence-batch-runner=vllm",
        ),
    ),
    Row(
        "openai-max-completion-tokens-zero",
        "expected max_completion_tokens to be an integer >= 1, but got max_completion_tokens='0'",
        args=("--competence-model=openai:m@http://127.0.0.1:9/v1?max_completion_tokens=0",),
    ),
    Row(
        "openai-max-completion-tokens-and-max-tokens",
        "max_tokens and max_completion_tokens name the same limit; keep one",
        args=(
            "--competence-model=openai:m@http://127.0.0.1:9/v1?max_tokens=4&max_completion_tokens=4",
        ),
    ),
    Row(
        "openai-max-completion-tokens-completions",
        "max_completion_tokens is a chat-mode field; /completions takes max_tokens",
        args=(
            "--competence-model=openai:m@http://127.0.0.1:9/v1?mode=completions"
            "&max_completion_tokens=4",
        ),
    ),
    # -- the probes (issue #27): the marker's settings at collection, the option itself
    Row(
        "probe-positional",
        "@pytest.mark.competence_probe: takes keywords only",
        INTERRUPTED,
        probe="[0, 2]",
    ),
    Row(
        "probe-unknown",
        "@pytest.mark.competence_probe: unknown argument(s) permutation; it takes layers",
        INTERRUPTED,
        probe="permutation=3",
    ),
    Row(
        "probe-permutations",
        "permutations must be an integer ≥ 0, got permutations=-1; e.g. permutations=100",
        INTERRUPTED,
        probe="permutations=-1",
    ),
    Row("probe-folds", "folds must be an integer ≥ 2, got folds=1", INTERRUPTED, probe="folds=1"),
    Row(
        "probe-threshold",
        "threshold must be an AUROC in [0.5, 1], got threshold=0.3",
        INTERRUPTED,
        probe="threshold=0.3",
    ),
    Row(
        "probe-confidence",
        "confidence must be in (0, 1), got confidence=1.5",
        INTERRUPTED,
        probe="confidence=1.5",
    ),
    Row(
        "probe-l2",
        "l2 must be a positive number (the ridge penalty λ; scikit-learn's C = 1/λ), got l2=-1.0",
        INTERRUPTED,
        probe="l2=-1.0",
    ),
    Row(
        "probe-precision",
        "precision must be one of float32, float16, got precision='bfloat16'",
        INTERRUPTED,
        probe="precision='bfloat16'",
    ),
    Row(
        "probe-layers",
        "layers must be distinct residual indices ≥ 0 (0: the embeddings, L: the last "
        "block's output), or None for all, got layers=[1, 1]",
        INTERRUPTED,
        probe="layers=[1, 1]",
    ),
    Row(
        "probe-patch-layers",
        "patch_layers must be distinct residual indices ≥ 0",
        INTERRUPTED,
        probe="patch_layers=[-1]",
    ),
    Row(
        "probe-patch",
        "patch must name the presentation the original is patched into, or be None, got patch=3",
        INTERRUPTED,
        probe="patch=3",
    ),
    Row(
        "probe-max-mib",
        "max_mib must be a positive number of MiB, got max_mib=0",
        INTERRUPTED,
        probe="max_mib=0",
    ),
    Row("probe-defaults-ref", "", 0, probe="", args=("--competence-model=ref:ideal",)),
    Row("probe-option-ref", "", 0, args=("--competence-model=ref:ideal", "--competence-probe")),
    Row(
        "probe-option-takes-no-value",
        "argument --competence-probe: ignored explicit argument 'yes'",
        args=("--competence-model=ref:ideal", "--competence-probe=yes"),
    ),
]


@pytest.mark.parametrize("row", PYTEST_ROWS, ids=[r.id for r in PYTEST_ROWS])
def test_pytest_input(pytester: pytest.Pytester, row: Row):
    pytester.makepyfile(
        test_x=f"""
        import pytest

        @pytest.mark.competence({row.marker})
        {"" if row.probe is None else f"@pytest.mark.competence_probe({row.probe})"}
        def test_x(competence):
            pass
    """
    )
    pytester.makeini("[pytest]\n" + "\n".join(row.ini) + "\n")
    result = pytester.runpytest("-p", "no:cacheprovider", *row.args)
    output = "\n".join(result.outlines + result.errlines)
    assert result.ret == row.exit, output
    assert "Traceback" not in output, output
    if row.expected:
        lines = [line for line in output.splitlines() if row.expected in line]
        assert lines, f"{row.expected!r} not in:\n{output}"
    if row.exit == USAGE:  # stopped before any model answered: nothing collected, nothing run
        assert "competence profiles" not in output


# -- the competence command -------------------------------------------------------------------


@dataclass(frozen=True)
class CliRow:
    id: str
    args: tuple[str, ...]  # {file} is replaced with the path of the prepared file
    expected: str
    exit: int = 2
    file: str = ""  # which prepared file, see prepared()
    extra: tuple[str, ...] = field(default=())
    usage: bool = False  # an argument error: argparse's usage line comes first


def _edited(document: dict, how: str) -> object:
    doc = copy.deepcopy(document)
    result = doc["results"][0]
    if how == "record-null":
        result["records"][0] = None
    elif how == "results-dict":
        doc["results"] = {"test_x": result}
    elif how == "no-gold":
        del result["records"][3]["gold"]
    elif how == "result-null":
        doc["results"][0] = None
    elif how == "figure-edited":
        result["summary"]["all_correct"] = 0.123
    elif how == "records-removed":
        del result["records"][:2]
    return doc


CLI_ROWS = [
    CliRow(
        "generate-pairs-1e9",
        ("generate", "ordering", "--per-level", "1000000000"),
        "the design asks 18,000,000,000 prompts (9 level(s) x pairs=1000000000 x 2 "
        "presentation(s)), over the limit of 2,000,000; use fewer pairs or levels, or raise "
        "--max-prompts",
    ),
    CliRow(
        "generate-max-prompts",
        ("generate", "horn", "--levels", "4", "--per-level", "8", "--max-prompts", "15"),
        "the design asks 16 prompts",
    ),
    CliRow(
        "generate-missing-dir",
        ("generate", "horn", "-o", "missing/x.jsonl"),
        "-o missing/x.jsonl: the directory missing does not exist",
    ),
    CliRow(
        "generate-repeated-levels",
        ("generate", "ordering", "--levels", "4,4"),
        "Expected levels to name each size once",
    ),
    CliRow(
        "generate-bad-levels",
        ("generate", "ordering", "--levels", "a,b"),
        "argument --levels: expected comma-separated integers, got 'a,b'",
    ),
    CliRow(
        "generate-unknown-split",
        ("generate", "ordering", "--split", "nope"),
        "Unknown split 'ordering:nope'. Expected one of: ordering:paper-heldin",
    ),
    CliRow(
        "generate-bad-format",
        ("generate", "ordering", "--format", "xml"),
        "argument --format: invalid choice: 'xml'",
    ),
    CliRow(
        "generate-unknown-family",
        ("generate", "nope"),
        "argument FAMILY: unknown family 'nope'; expected one of ordering, horn",
    ),
    CliRow(
        "generate-unknown-option",
        ("generate", "horn", "--option", "hint=True"),
        "family='horn' has no option 'hint'",
    ),
    CliRow(
        "batch-import-no-cache",
        ("batch", "import", "{file}"),
        "/.competence/cache.sqlite' (competence_cache_path; no ini file): export the requests "
        "first with pytest --competence-batch-export, or pass --cache PATH",
        file="jsonl",
    ),
    CliRow(
        "batch-import-cache-missing",
        ("batch", "import", "{file}", "--cache", "nope.sqlite"),
        "batch import: no response cache at 'nope.sqlite' (--cache)",
        file="jsonl",
    ),
    CliRow("plan-zero-pairs", ("plan", "--pairs", "0"), "--per-level must be at least 1"),
    CliRow("plan-zero-levels", ("plan", "--level-count", "0"), "a design needs at least one level"),
    CliRow(
        "plan-levels-and-count",
        ("plan", "--levels", "4,8", "--level-count", "2"),
        "argument --level-count: not allowed with argument --levels",
    ),
    CliRow(
        "generate-per-level",
        ("generate", "ordering", "--levels", "4", "--per-level", "30"),
        "but got --per-level 30; try --per-level 28 or --per-level 32",
    ),
    CliRow("report-missing-file", ("report", "nothing.json"), "competence report: "),
    CliRow("report-jsonl", ("report", "{file}"), "not a results document: ", file="jsonl"),
    CliRow(
        "report-record-null",
        ("report", "{file}"),
        "results[0].records[0] is null, expected an object",
        file="record-null",
    ),
    CliRow(
        "report-results-dict",
        ("report", "{file}"),
        "results is dict, expected a list of results",
        file="results-dict",
    ),
    CliRow(
        "report-no-gold",
        ("report", "{file}"),
        "results[0].records[3] has no 'gold'",
        file="no-gold",
    ),
    CliRow("report-result-null", ("report", "{file}"), "results[0] is null", file="result-null"),
    CliRow(
        "report-other-schema", ("report", "{file}"), "schema 'something/else'", file="other-schema"
    ),
    CliRow(
        "report-figure-edited",
        ("report", "{file}"),
        "summary.all_correct: archived 0.123",
        exit=1,
        file="figure-edited",
    ),
    CliRow(
        "report-records-removed",
        ("report", "{file}"),
        "archived figure(s) differ from what the records give",
        exit=1,
        file="records-removed",
    ),
    CliRow(
        "report-missing-dir",
        ("report", "{file}", "--html", "missing/r.html"),
        "--html missing/r.html: the directory missing does not exist",
        file="good",
        usage=True,
    ),
    CliRow("report-good", ("report", "{file}"), "", exit=0, file="good"),
    # -- an archive whose records are in a records file (schema /2)
    CliRow("report-records-good", ("report", "{file}"), "", exit=0, file="v2"),
    CliRow("report-records-gz-good", ("report", "{file}"), "", exit=0, file="v2-gz"),
    CliRow(
        "report-records-missing",
        ("report", "{file}"),
        "missing.records.jsonl is missing: "
        "the document counts 16 records there; keep the records file next to the JSON",
        file="records-missing",
    ),
    CliRow(
        "report-records-truncated",
        ("report", "{file}"),
        "records-truncated.records.jsonl is "
        "not the one this document was written with (sha256 differs: truncated, edited, or "
        "of another run)",
        file="records-truncated",
    ),
    CliRow(
        "report-records-gz-truncated",
        ("report", "{file}"),
        "records-gz-truncated.records.jsonl.gz is not the one this document was written with",
        file="records-gz-truncated",
    ),
    CliRow(
        "report-records-of-another-run",
        ("report", "{file}"),
        "sha256 differs",
        file="records-foreign",
    ),
    CliRow(
        "report-records-cut-and-rehashed",
        ("report", "{file}"),
        "ends after 10 of the 16 records of test_hostile.py::test_x[py:scripted]: truncated",
        file="records-rehashed",
    ),
    CliRow(
        "report-records-no-json",
        ("report", "{file}", "--records", "r.jsonl"),
        "report: --records r.jsonl: the records file belongs to a results document; add "
        "--json PATH",
        file="v2",
        usage=True,
    ),
    # -- competence trend (issue #26): {file:NAME} is the prepared file NAME
    CliRow("trend-one-archive", ("trend", "{file}"), "give at least two archives", file="good"),
    CliRow(
        "trend-missing-file",
        ("trend", "{file}", "nothing.json"),
        "competence trend: nothing.json: no such file",
        file="good",
    ),
    CliRow(
        "trend-not-results",
        ("trend", "{file:good}", "{file:jsonl}"),
        "not a results document: ",
    ),
    CliRow(
        "trend-share-nothing",
        ("trend", "{file:good}", "{file:other-test}"),
        "the archives share no test (",
    ),
    CliRow(
        "trend-other-design",
        ("trend", "{file:good}", "{file:other-seed}"),
        "was archived from another design than in ",
    ),
    CliRow(
        "trend-two-models",
        ("trend", "{file:two-models}", "{file:good}"),
        "holds 2 models for test_hostile.py::test_x[*] (py:other, py:scripted); choose one "
        "with --model NAME",
    ),
    CliRow(
        "trend-model-count",
        ("trend", "{file:good}", "{file:good}", "{file:good}", "--model", "a", "--model", "b"),
        "--model given 2 times for 3 archives",
    ),
    CliRow(
        "trend-bad-alpha",
        ("trend", "{file:good}", "{file:good}", "--alpha", "2"),
        "competence trend: --alpha 2: expected a number in (0, 1), e.g. 0.05",
    ),
    CliRow(
        "trend-markdown-missing-dir",
        ("trend", "{file:good}", "{file:good}", "--markdown", "missing/t.md"),
        "--markdown missing/t.md: the directory missing does not exist",
        usage=True,
    ),
    CliRow(
        "trend-good",
        ("trend", "{file:good}", "{file:two-models}", "--model", "py:scripted"),
        "",
        exit=0,
    ),
    CliRow(
        "report-records-missing-dir",
        ("report", "{file}", "--json", "r.json", "--records", "missing/r.jsonl"),
        "--records missing/r.jsonl: the directory missing does not exist",
        file="v2",
        usage=True,
    ),
]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """The files the CLI rows read: a good results document and its damaged copies."""
    folder = tmp_path_factory.mktemp("cli")
    spec = spec_from_marker((), {"levels": [4, 8], "pairs": 4})
    n = sum(len(item.prompts) for item in spec.design())
    document = scripted_document(spec, (["yes", "no", "maybe"] * n)[:n])
    other = scripted_document(spec, (["no", "yes"] * n)[:n])
    files = {"good": document, "other-schema": {"schema": "something/else"}}
    for how in (
        "record-null",
        "results-dict",
        "no-gold",
        "result-null",
        "figure-edited",
        "records-removed",
    ):
        files[how] = _edited(document, how)
    paths = {}
    for name, doc in files.items():
        paths[name] = folder / f"{name}.json"
        paths[name].write_text(json.dumps(doc), "utf-8")
    for name, records, answers in (
        ("v2", "v2.records.jsonl", document),
        ("v2-gz", "v2.records.jsonl.gz", document),
        ("records-missing", "missing.records.jsonl", document),
        ("records-truncated", "records-truncated.records.jsonl", document),
        ("records-gz-truncated", "records-gz-truncated.records.jsonl.gz", document),
        ("records-foreign", "records-foreign.records.jsonl", document),
        ("other", "other.records.jsonl", other),
        ("records-rehashed", "records-rehashed.records.jsonl", document),
    ):
        paths[name] = folder / f"{name}.json"
        write_outputs(
            document,
            json_path=str(paths[name]),
            records_path=str(folder / records),
            records=archived_records(answers, folder),
        )
    (folder / "missing.records.jsonl").unlink()
    (folder / "other.records.jsonl").replace(folder / "records-foreign.records.jsonl")
    for name in ("records-truncated", "records-gz-truncated", "records-rehashed"):
        records = folder / json.loads(paths[name].read_text("utf-8"))["records_file"]["file"]
        data = records.read_bytes()
        records.write_bytes(
            b"".join(data.splitlines(keepends=True)[:10])
            if name == "records-rehashed"
            else data[: len(data) // 2]
        )
    rehashed = json.loads(paths["records-rehashed"].read_text("utf-8"))
    rehashed["records_file"]["sha256"] = hashlib.sha256(
        (folder / "records-rehashed.records.jsonl").read_bytes()
    ).hexdigest()
    paths["records-rehashed"].write_text(json.dumps(rehashed), "utf-8")
    for name, how in (("other-test", "test"), ("other-seed", "seed"), ("two-models", "models")):
        doc = copy.deepcopy(document)
        result = doc["results"][0]
        if how == "test":
            result["test"] = result["test"].replace("test_x", "test_y")
        elif how == "seed":
            result["design"]["seed"] = 7
        else:
            doc["results"].append(dict(result, model="py:other", nodeid="other"))
        paths[name] = folder / f"{name}.json"
        paths[name].write_text(json.dumps(doc), "utf-8")
    paths["jsonl"] = folder / "data.jsonl"
    paths["jsonl"].write_text('{"schema": "pytest-competence/dataset/1"}\n{"prompt": "p"}\n')
    return folder, paths


@pytest.mark.parametrize("row", CLI_ROWS, ids=[r.id for r in CLI_ROWS])
def test_cli_input(prepared, row: CliRow):
    folder, paths = prepared
    args = [
        str(paths[a[len("{file:") : -1]])
        if a.startswith("{file:")
        else a.replace("{file}", str(paths.get(row.file, "")))
        for a in row.args
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest_competence.cli", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = done.stdout + done.stderr
    assert done.returncode == row.exit, output
    assert "Traceback" not in output, output
    assert row.expected in done.stderr, done.stderr
    if row.exit == 2 and row.id.startswith(("report", "trend")) and not row.usage:
        assert len(done.stderr.splitlines()) == 1, done.stderr  # one line, no usage banner
