"""Every command and code snippet in README.md runs, so the README cannot rot.

Fenced blocks are run by language: ``python`` snippets as test modules (or, when they define
the hook, as a conftest) in a pytester session; ``ini`` blocks as that session's configuration;
``bash`` lines that call ``competence`` or ``pytest`` as commands (after the install steps). Plain
fences are sample output and are not run. A block preceded by an ``<!-- not run … -->`` comment
says why it is skipped.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"(?P<skip><!-- not run[^>]*-->\n)?```(?P<lang>\w*)\n(?P<body>.*?)\n```", re.S)
README = ROOT.joinpath("README.md").read_text("utf-8")
BLOCKS = [
    (m["lang"], m["body"], bool(m["skip"]), README.count("\n", 0, m.start()) + 1)
    for m in FENCE.finditer(README)
]


def _blocks(lang: str) -> list:
    return [
        pytest.param(body, id=f"line{line}")
        for kind, body, skip, line in BLOCKS
        if kind == lang and not skip
    ]


SUITE = """
import pytest

@pytest.mark.competence(levels=[4, 8], pairs=8)
def test_small(competence):
    pass
"""


@pytest.fixture
def registry():  # noqa: ANN201
    """Families a snippet registers in this process are forgotten after it."""
    from pytest_competence.strategies import FAMILIES

    before = set(FAMILIES)
    yield FAMILIES
    for name in set(FAMILIES) - before:
        del FAMILIES[name]


@pytest.mark.parametrize("body", _blocks("python"))
def test_python_snippets_run(pytester: pytest.Pytester, body: str, registry):
    if "def pytest_competence_profile" in body:
        pytester.makeconftest(body)
        pytester.makepyfile(test_suite=SUITE)
        result = pytester.runpytest("-p", "no:cacheprovider", "--competence-model", "ref:ideal")
        result.assert_outcomes(passed=1)
        assert (pytester.path / "competence-results.jsonl").read_text().count("\n") == 1
        return
    pytester.makepyfile(test_snippet=body)
    result = pytester.runpytest("-p", "no:cacheprovider", "--competence-model", "ref:ideal")
    outcomes = result.parseoutcomes()
    assert (
        outcomes.get("passed", 0) >= 1 and not outcomes.get("failed") and not outcomes.get("errors")
    )


@pytest.mark.parametrize("body", _blocks("ini"))
def test_ini_snippets_configure_a_session(pytester: pytest.Pytester, body: str):
    pytester.makeini(body)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider", "--competence-model", "ref:ideal")
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stderr.str()
    result.stdout.fnmatch_lines(["*competence profiles*"])


def _commands() -> list[str]:
    out = []
    for body in (p.values[0] for p in _blocks("bash")):
        for line in body.splitlines():
            # After the install steps, the command itself: `… && .venv/bin/python -m pytest …`.
            command = re.sub(r"^\S*python -m ", "", line.split("&& ")[-1])
            if command.startswith(("competence ", "pytest ")):
                out.append(command)
    return out


def _has_hf_extra() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers"))


@pytest.mark.slow
def test_readme_commands_run_in_order(tmp_path: Path):
    """In one scratch folder, in README order (a later command may read an earlier one's file)."""
    commands = _commands()
    assert any(c.startswith("pytest examples") for c in commands)
    assert any(c.startswith("competence report") for c in commands)
    for command in commands:
        if "hf:" in command and not _has_hf_extra():
            continue  # a transformers model: needs the [hf] extra (.ci/run installs it)
        argv = [
            str(ROOT / a) if not a.startswith("-") and (ROOT / a).exists() else a
            for a in shlex.split(command)
        ]
        tool = (
            ["-m", "pytest", "-p", "no:cacheprovider"]
            if argv[0] == "pytest"
            else ["-m", "pytest_competence.cli"]
        )
        done = subprocess.run(
            [sys.executable, *tool, *argv[1:]],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, command + "\n" + done.stdout[-3000:] + done.stderr[-3000:]
        if command.startswith("pytest examples") and " -q " in command:
            # The main job teaches through its matrices, not through pages of detail.
            assert len(done.stdout.splitlines()) <= 150, done.stdout
            assert "which suite catches which model" in done.stdout and "Δacc" not in done.stdout
    assert (tmp_path / "competence-report.html").stat().st_size > 10_000
    assert (tmp_path / "report.html").exists() and (tmp_path / "summary.md").exists()


def test_the_py_contract_snippet_is_a_model_the_suite_catches(pytester: pytest.Pytester):
    """The README's model module (issue #24) runs as ``py:my_model.py:answer`` on the README's
    first suite, which catches it; and the prompt the README shows is the one it gets first."""
    model = next(b for k, b, _, _ in BLOCKS if k == "python" and b.startswith("# my_model.py"))
    suite = next(b for k, b, skip, _ in BLOCKS if k == "python" and "def test_front_behind" in b)
    shown = README.split("as `answer` receives it", 1)[1].split("```\n", 2)[1].strip()
    pytester.makepyfile(
        my_model=model
        + "\n\nSEEN = []\n\ndef recording(prompts):\n    SEEN.extend(prompts)\n"
        + "    return answer(prompts)\n",
        test_suite=suite.replace("pairs=200", "pairs=8"),
        conftest="import pytest, my_model\n\n@pytest.fixture(autouse=True, scope='session')\n"
        "def _first():\n    yield\n    if my_model.SEEN:\n"
        "        open('first.txt', 'w').write(my_model.SEEN[0])\n",
    )
    pytester.syspathinsert()
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--competence-model=py:my_model.py:answer"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*Competence condition failed for model 'py:my_model.py:answer'*"])
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--competence-model=py:my_model:recording"
    )
    result.assert_outcomes(failed=1)
    assert (pytester.path / "first.txt").read_text() == shown
