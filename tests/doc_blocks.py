"""The fenced code blocks of a Markdown page (README.md, docs/**/*.md), read with markdown-it.

The conventions the doc tests run them by (``tests/test_readme.py``, ``tests/test_docs.py``):

- a ``python`` block is a test module run in a pytester session (a conftest when it defines
  the ``pytest_competence_profile`` hook); one that defines no test is a script, run as it is;
- an ``ini`` block configures a pytester session;
- the ``bash`` lines that call ``competence`` or ``pytest`` (after any install steps) are
  commands, run in page order in one scratch folder;
- a plain or ``text`` fence is sample output, not run; a MyST directive (```` ```{name} ````)
  is not code.

HTML comments right before a fence qualify it: ``<!-- not run: why -->`` skips it (every block of
another language must say why), ``<!-- file: NAME -->`` makes it a file the page's commands use
(written to the scratch folder before they run, its folders made, e.g. ``my_package/__init__.py``;
not run on its own), ``<!-- exit N -->`` says
that the block's commands exit with status N.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Block", "blocks", "commands"]

_NOT_RUN = re.compile(r"<!--\s*not run\b(?P<why>.*?)-->", re.S)
_FILE = re.compile(r"<!--\s*file:\s*(?P<name>\S+)\s*-->")
_EXIT = re.compile(r"<!--\s*exit\s+(?P<status>\d+)\s*-->")
_TORCH = re.compile(r"\b(torch|transformers|trl|datasets)\b")


@dataclass(frozen=True)
class Block:
    """One fenced block: its language, text, first line (1-based) and qualifiers."""

    page: Path
    lang: str
    body: str
    line: int
    skip: str | None = None  # why it is not run
    file: str | None = None  # the file name the page's commands read it as
    exit: int = 0  # the status its commands exit with

    @property
    def id(self) -> str:
        """``page:line``, for test ids."""
        return f"{self.page.name}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page`` that is code or output (MyST directives left out)."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(page.read_text("utf-8"))
    found: list[Block] = []
    comments: list[str] = []
    for token in tokens:
        if token.type == "html_block":
            comments.append(token.content)
            continue
        if token.type == "fence" and not token.info.startswith("{"):
            said = "\n".join(comments)
            skip, file, status = _NOT_RUN.search(said), _FILE.search(said), _EXIT.search(said)
            found.append(
                Block(
                    page=page,
                    lang=token.info.split()[0] if token.info.strip() else "",
                    body=token.content.rstrip("\n"),
                    line=(token.map[0] + 1) if token.map else 0,
                    skip=(skip["why"].strip(" :") or "not run") if skip else None,
                    file=file["name"] if file else None,
                    exit=int(status["status"]) if status else 0,
                )
            )
        comments = []
    return found


def commands(block: Block) -> list[str]:
    """The ``competence`` and ``pytest`` commands of a ``bash`` block, install steps dropped."""
    out = []
    lines = block.body.replace("\\\n", " ").splitlines()
    for line in lines:
        line = line.split("  # ")[0].strip()
        # After the install steps, the command itself: `… && .venv/bin/python -m pytest …`.
        command = re.sub(r"^\S*python -m ", "", line.split("&& ")[-1])
        if command.startswith(("competence ", "pytest ")):
            out.append(command)
    return out


# --- running them -------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent

#: The suite an ``ini`` block or a hook is tried on.
SUITE = """
import pytest

@pytest.mark.competence(levels=[4, 8], pairs=8)
def test_small(competence):
    pass
"""


def has_hf_extra() -> bool:
    """Whether torch and transformers are installed (the ``hf`` extra)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers"))


def needs_hf(text: str) -> bool:
    """Whether ``text`` loads an in-process transformers model."""
    return "hf:" in text


def run_python(pytester, body: str) -> None:  # noqa: ANN001
    """Run a ``python`` block: a conftest with the hook, a test module, or a script. Families it
    registers in this process (and so their reference policies) are forgotten after it, so a
    later test in the same process (the reference's completeness check) does not see them."""
    from pytest_competence.strategies import FAMILIES

    before = set(FAMILIES)
    try:
        _run_python(pytester, body)
    finally:
        for name in set(FAMILIES) - before:
            del FAMILIES[name]


def _run_python(pytester, body: str) -> None:  # noqa: ANN001
    if "def pytest_competence_profile" in body:
        pytester.makeconftest(body)
        pytester.makepyfile(test_suite=SUITE)
        result = pytester.runpytest("-p", "no:cacheprovider", "--competence-model", "ref:ideal")
        result.assert_outcomes(passed=1)
        assert (pytester.path / "competence-results.jsonl").read_text().count("\n") == 1
        return
    if re.search(r"^def test_", body, re.M) is None:
        script = pytester.makepyfile(snippet=body)
        result = pytester.runpython(script)
        assert result.ret == 0, result.stdout.str() + result.stderr.str()
        return
    pytester.makepyfile(test_snippet=body)
    # pytester's in-process runs drop the modules a run imported, and torch (under trl,
    # transformers, datasets) cannot be imported a second time in one process: those run apart.
    run = pytester.runpytest_subprocess if _TORCH.search(body) else pytester.runpytest
    result = run("-p", "no:cacheprovider", "--competence-model", "ref:ideal")
    outcomes = result.parseoutcomes()
    assert (
        outcomes.get("passed", 0) >= 1 and not outcomes.get("failed") and not outcomes.get("errors")
    ), result.stdout.str()


def run_ini(pytester, body: str) -> None:  # noqa: ANN001
    """Run an ``ini`` block as a session's configuration, on :data:`SUITE`."""
    import pytest

    pytester.makeini(body)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider", "--competence-model", "ref:ideal")
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stderr.str()
    result.stdout.fnmatch_lines(["*competence profiles*"])


def run_command(command: str, cwd: Path, status: int = 0) -> str:
    """Run a ``pytest …`` or ``competence …`` command in ``cwd`` with this Python; its output.

    A relative path the repository has (``examples``) is the repository's; every other one is
    the scratch folder's."""
    import shlex
    import subprocess
    import sys

    argv = [
        str(ROOT / a)
        if not a.startswith("-") and not (cwd / a).exists() and (ROOT / a).exists()
        else a
        for a in shlex.split(command)
    ]
    tool = (
        ["-m", "pytest", "-p", "no:cacheprovider"]
        if argv[0] == "pytest"
        else ["-m", "pytest_competence.cli"]
    )
    done = subprocess.run(
        [sys.executable, *tool, *argv[1:]],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = done.stdout + done.stderr
    assert done.returncode == status, (
        f"{command}\nexit {done.returncode}, expected {status}\n"
        + done.stdout[-3000:]
        + done.stderr[-3000:]
    )
    return output
