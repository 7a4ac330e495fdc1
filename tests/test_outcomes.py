"""Honest outcomes: a broken server or model object is an ERROR, never a failing model.

Three outcomes stay apart (see ``pytest_competence.engine.evaluate``): answers, invalid answers (counted
wrong), and infrastructure errors — a test whose evaluation holds errors is pytest's ERROR, is not
minimised, saves nothing to the example database, and says why in one line.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from plugin_helpers import assert_no_internals, esc, ideal_py

SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4, 8], pairs=8)
    def test_x(competence):
        pass
"""


def _closed_port() -> int:
    """A loopback port with nothing listening on it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _database_files(root: Path) -> list[Path]:
    folder = root / ".hypothesis"
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


@pytest.mark.slow
def test_a_dead_server_is_an_error_fast_and_poisons_nothing(pytester: pytest.Pytester):
    """Nothing listening: ERROR (``<error>`` in JUnit), not FAILED; no minimisation; nothing
    saved to the example database; the suite ends within seconds with default settings."""
    pytester.makepyfile(test_x=SUITE, test_y=SUITE.replace("test_x", "test_y"))
    spec = f"openai:m@http://127.0.0.1:{_closed_port()}/v1"
    junit = pytester.path / "junit.xml"
    start = time.monotonic()
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        f"--competence-model={spec}",
        f"--junitxml={junit}",
        "--competence-json=r.json",
    )
    seconds = time.monotonic() - start
    result.assert_outcomes(errors=2)
    assert seconds < 60, seconds
    result.stdout.fnmatch_lines(
        [
            f"infrastructure errors from model '{spec}': 32 of 32 prompts got no answer (first: "
            f"the server cannot be reached: every replica failed to connect 3+ times in a row over "
            f"5+ s, so no request is retried any more (last: ConnectError: *",
        ]
    )
    result.stdout.no_fnmatch_line("*minimal failing case*")
    result.stdout.no_fnmatch_line("*FAILED*")
    assert _database_files(pytester.path) == []
    cases = ET.parse(junit).getroot().iter("testcase")
    assert all(case.find("error") is not None and case.find("failure") is None for case in cases)
    document = json.loads((pytester.path / "r.json").read_text("utf-8"))
    assert [r["outcome"] for r in document["results"]] == ["error", "error"]
    errors = document["results"][0]["errors"]
    assert errors["count"] == errors["prompts"] == 32 and "cannot be reached" in errors["message"]
    assert_no_internals(result.stdout.str())


ERRORING = ideal_py("""
    def answer(prompts):
        # every eighth prompt is lost to an outage; the rest are answered right
        return [RuntimeError("upstream 502") if i % 8 == 0 else _ideal(p)
                for i, p in enumerate(prompts)]
""")


def test_errors_from_the_model_are_an_error_with_the_count_and_reason(pytester: pytest.Pytester):
    pytester.syspathinsert()
    pytester.makepyfile(flaky=ERRORING, test_x=SUITE)
    result = pytester.runpytest("--competence-model", "py:flaky:answer")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_x[[]py:flaky:answer[]]*",
            "infrastructure errors from model 'py:flaky:answer': 4 of 32 prompts got no answer "
            "(first: RuntimeError: upstream 502)",
            "*competence profiles*",
            "test_x.py::test_x[[]py:flaky:answer[]]  ERROR  4 of 32 prompts got no answer "
            "(infrastructure errors; the reason is the test's error above)",
        ]
    )
    # Once, as the test's error; pytest's own short summary (untruncated where CI is set) may repeat it.
    ours = result.stdout.str().split("short test summary info")[0]
    assert ours.count("upstream 502") == 1
    assert _database_files(pytester.path) == []
    assert_no_internals(result.stdout.str())


def test_errors_reach_the_reports_from_xdist_workers(pytester: pytest.Pytester):
    pytest.importorskip("xdist")
    pytester.syspathinsert()
    pytester.makepyfile(flaky=ERRORING, test_x=SUITE, test_y=SUITE.replace("test_x", "test_y"))
    result = pytester.runpytest_subprocess(
        "-n",
        "2",
        "--competence-model",
        "py:flaky:answer",
        "--competence-json=r.json",
        "--junitxml=j.xml",
    )
    result.assert_outcomes(errors=2)
    document = json.loads((pytester.path / "r.json").read_text("utf-8"))
    assert sorted(r["outcome"] for r in document["results"]) == ["error", "error"]
    assert all(r["errors"]["count"] == 4 for r in document["results"])
    assert len(ET.parse(pytester.path / "j.xml").getroot().findall(".//error")) == 2


def test_an_error_rate_below_the_configured_share_counts_errors_as_invalid(
    pytester: pytest.Pytester,
):
    pytester.syspathinsert()
    pytester.makeini("[pytest]\ncompetence_max_error_rate = 0.2\n")
    pytester.makepyfile(flaky=ERRORING, test_x=SUITE)
    result = pytester.runpytest("--competence-model", "py:flaky:answer")
    result.assert_outcomes(failed=1)  # 4 of 32 ≤ 20%: judged, the lost prompts counted wrong
    result.stdout.fnmatch_lines(["*parsed=INVALID (RuntimeError: upstream 502)*"])


#: How the errors of a broken model object's batch begin: every prompt of the design is one.
BROKEN = (
    "infrastructure errors from model 'py:broken:answer': 32 of 32 prompts got no answer (first: "
)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "return None",
            BROKEN + "model 'py:broken:answer': generate() returned a NoneType; it must return a "
            "list with one answer (str or exception) per prompt, in order)",
        ),
        (
            "return 'yes' * len(prompts)",
            BROKEN + "model 'py:broken:answer': generate() returned a str; *",
        ),
        (
            "return {p: 'yes' for p in prompts}",
            BROKEN + "model 'py:broken:answer': generate() returned a dict; *",
        ),
        (
            "return [1] * len(prompts)",
            BROKEN + "the model returned a int, not text; generate() must return one str (or "
            "exception) per prompt)",
        ),
        (
            "return ['yes'] * (len(prompts) - 1)",
            BROKEN + "model 'py:broken:answer' returned 31 answers for 32 prompts; generate() "
            "must return exactly one answer (or exception) per prompt, in order)",
        ),
        (
            "raise ValueError('weights not found')",
            BROKEN + "model 'py:broken:answer' raised ValueError: "
            "weights not found (at *broken.py:3) instead of "
            "answering a batch of 32 prompts (the first: ordering/seed=1/n=4/0 [[]original[]] "
            "?There are 4 people *?))",
        ),
    ],
)
def test_a_broken_model_object_is_a_one_line_error(
    pytester: pytest.Pytester, body: str, message: str
):
    pytester.syspathinsert()
    pytester.makepyfile(
        broken=f"def answer(prompts):\n    {body}\n".replace(
            "def answer(prompts):\n", "def answer(prompts):\n    prompts = list(prompts)\n"
        )
    )
    pytester.makepyfile(test_x=SUITE)
    result = pytester.runpytest("--competence-model", "py:broken:answer")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([esc(message) if "*" not in message else message])
    assert "Traceback" not in result.stdout.str()


def test_a_stream_answering_one_prompt_twice_is_an_error(pytester: pytest.Pytester):
    pytester.syspathinsert()
    pytester.makepyfile(
        twice="""
        class Twice:
            name = "twice"

            def stream(self, prompts):
                for i, _ in enumerate(prompts):
                    yield 0, "yes"

            def generate(self, prompts):
                from pytest_competence.models.readout import in_order

                return in_order(self.stream(prompts), len(prompts), self.name)

        model = Twice()
    """,
        test_x=SUITE,
    )
    result = pytester.runpytest("--competence-model", "py:twice:model")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*model 'twice' answered prompt 0 of 32 twice or out of range; "
            "a stream() must yield each prompt's index exactly once)"
        ]
    )
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize("raised", ["KeyboardInterrupt", "SystemExit(3)"])
def test_a_model_that_interrupts_stops_the_run_cleanly(pytester: pytest.Pytester, raised: str):
    pytester.syspathinsert()
    pytester.makepyfile(
        stop=f"def answer(prompts):\n    raise {raised}\n",
        test_x=SUITE,
        test_y=SUITE.replace("test_x", "test_y"),
    )
    result = pytester.runpytest_subprocess("--competence-model", "py:stop:answer")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    if raised == "KeyboardInterrupt":  # Ctrl-C lands in the model's call: the user's, not its
        result.stdout.fnmatch_lines(
            [
                "competence: the run was interrupted; the reports hold the 0 test × model "
                "result(s) that finished",
                "*interrupted by the user while 'py:stop:answer' answered "
                "test_x.py::test_x[[]py:stop:answer[]]; the tests that finished are in the reports*",
            ]
        )
        assert "raised KeyboardInterrupt" not in result.stdout.str()
    else:
        result.stdout.fnmatch_lines(
            ["*model 'py:stop:answer' raised SystemExit: 3; stopping the run*"]
        )
    assert "_fixtures.py" not in result.stdout.str()  # no internal path line
    assert "test_y" not in result.stdout.str()  # nothing after it ran


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "def answer(prompts)\n    return []\n",
            "Model spec 'py:bad:answer': *bad.py:1: SyntaxError: *; fix the module",
        ),
        (
            "import numpyy\n\n\ndef answer(prompts):\n    return []\n",
            "Model spec 'py:bad:answer': importing 'bad' raised ModuleNotFoundError: No module "
            "named 'numpyy' (at *bad.py:1); install what it imports, or fix the import",
        ),
        (
            "raise RuntimeError('no GPU here')\n\n\ndef answer(prompts):\n    return []\n",
            "Model spec 'py:bad:answer': importing 'bad' raised "
            "RuntimeError: no GPU here (at *bad.py:1)",
        ),
        (
            "class answer:\n    def __init__(self, path):\n        pass\n    def generate(self, p):\n"
            "        return []\n",
            "Model spec 'py:bad:answer': class 'answer' cannot be built without "
            "arguments (*); point the spec at an instance or a function*",
        ),
    ],
)
def test_a_py_spec_that_cannot_load_is_a_one_line_error(
    pytester: pytest.Pytester, source: str, message: str
):
    """A module named on --competence-model is imported when the run starts (issue #49): what
    its source shows (issue #24) and what only running it shows are one usage error, before
    any test, with the exception and the module's line and no traceback."""
    pytester.syspathinsert()
    pytester.makepyfile(bad=source, test_x=SUITE)
    result = pytester.runpytest("--competence-model", "py:bad:answer")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --competence-model: " + message])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


# -- py: specs resolve against the rootdir -------------------------------------------------------


def _plain_pytest() -> str:
    """The ``pytest`` script beside this interpreter: plain ``pytest`` puts no working directory
    on ``sys.path`` (``python -m pytest`` would)."""
    script = Path(sys.executable).with_name("pytest")
    if not script.exists():
        pytest.skip(f"no pytest script beside {sys.executable}")
    return str(script)


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["py:my_models:answer", "py:my_models.py:answer"])
@pytest.mark.parametrize("where", [".", "tests"])
def test_py_specs_resolve_against_the_rootdir_under_plain_pytest(
    pytester: pytest.Pytester, spec: str, where: str
):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(my_models=ideal_py("answer = lambda prompts: [_ideal(p) for p in prompts]"))
    tests = pytester.mkdir("tests")
    (tests / "test_suite.py").write_text(SUITE.replace("\n    ", "\n"), encoding="utf-8")
    proc = subprocess.run(
        [_plain_pytest(), "-p", "no:cacheprovider", f"--competence-model={spec}"],
        cwd=pytester.path / where,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


# -- the baseline gate over a repository's life ---------------------------------------------------

GATED = """
    import pytest

    @pytest.mark.competence(levels=[8], pairs=40, require="coverage >= 0.99")
    def test_old(competence):
        pass
"""


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            None,
            "ERROR: --competence-baseline: no such file '*missing.json'; archive one with "
            "--competence-json on the released model, or drop --competence-baseline for this run",
        ),
        (
            '{"schema": "pytest-competence/results/1", "results": [',
            "ERROR: --competence-baseline: "
            "'*missing.json' is not a complete pytest-competence results document (*",
        ),
        (
            '{"schema": "something-else"}',
            "ERROR: --competence-baseline: '*missing.json' is not a "
            "complete pytest-competence results document (*",
        ),
        (
            '{"schema": "pytest-competence/results/1", "results": {}}',
            "ERROR: --competence-baseline: "
            "'*missing.json' is not a complete * (not a results document: *results is dict, expected a "
            "list of results)*",
        ),
        ("", "ERROR: --competence-baseline: '*missing.json' is not a complete *"),
    ],
)
def test_a_missing_or_broken_baseline_is_a_usage_error_before_any_model_call(
    pytester: pytest.Pytester,
    content: str | None,
    message: str,
):
    pytester.syspathinsert()
    pytester.makepyfile(
        test_suite=GATED,
        counting="""
        def answer(prompts):
            raise AssertionError("the model must not be asked")
    """,
    )
    if content is not None:
        (pytester.path / "missing.json").write_text(content, encoding="utf-8")
    result = pytester.runpytest(
        "--competence-model", "py:counting:answer", "--competence-baseline", "missing.json"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_test_absent_from_the_baseline_is_reported_as_not_gated(pytester: pytest.Pytester):
    pytester.makepyfile(test_suite=GATED)
    pytester.runpytest("--competence-model", "ref:ideal", "--competence-json", "base.json")
    pytester.makepyfile(
        test_suite=GATED
        + """
    @pytest.mark.competence(levels=[8], pairs=40, require="coverage >= 0.99")
    def test_new(competence):
        pass
    """
    )
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest(
        "--competence-model",
        "ref:ideal",
        "--competence-baseline",
        "base.json",
        "--competence-json",
        "now.json",
        "--competence-markdown",
        "now.md",
        f"--junitxml={junit}",
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*test_new*",
            "*against baseline base.json: no baseline (the "
            "archive has no result for this test; not gated)",
        ]
    )
    result.stdout.fnmatch_lines(
        ["*test_old*", "*against baseline ref:ideal: no significant regression*"]
    )
    gates = {
        r["test"]: r["gate"]
        for r in json.loads((pytester.path / "now.json").read_text("utf-8"))["results"]
    }
    assert gates["test_suite.py::test_new[*]"]["status"] == "no baseline"
    assert gates["test_suite.py::test_old[*]"]["comparisons"]
    assert "⚪ no baseline" in (pytester.path / "now.md").read_text("utf-8")
    props = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in ET.parse(junit).getroot().iter("testcase")
    }
    assert props["test_new[ref:ideal]"]["competence_gate"] == "no baseline"
    assert props["test_old[ref:ideal]"]["competence_gate"] == "no significant regression"


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (
            "presentations=['original']",
            "presentations: archived ['original', 'equivalent'], now ['original']",
        ),
        (
            "vocabulary='left_right'",
            "family: archived \"Ordering(vocabulary='front_behind')\", now "
            "\"Ordering(vocabulary='left_right')\"",
        ),
        ("distractors=0.5", 'family: archived *, now "Ordering(*distractors=0.5*)"'),
    ],
)
def test_a_baseline_of_another_design_is_an_error_naming_the_difference(
    pytester: pytest.Pytester,
    change: str,
    named: str,
):
    pytester.makepyfile(test_suite=GATED)
    pytester.runpytest("--competence-model", "ref:ideal", "--competence-json", "base.json")
    pytester.makepyfile(test_suite=GATED.replace("require=", f"{change}, require="))
    result = pytester.runpytest(
        "--competence-model", "ref:ideal", "--competence-baseline", "base.json"
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*test_suite.py::test_old[[]*[]] was archived from another design, so its instances "
            "cannot be matched; " + esc(named) + "*"
        ]
    )
