"""Every command and code snippet in README.md runs, so the README cannot rot.

Fenced blocks are run by language (the conventions are in ``tests/doc_blocks.py``, which
``tests/test_docs.py`` applies to every page of the docs site): ``python`` snippets as test
modules (or, when they define the hook, as a conftest) in a pytester session; ``ini`` blocks as
that session's configuration; ``bash`` lines that call ``competence`` or ``pytest`` as commands
(after the install steps). Plain fences are sample output and are not run. A block preceded by
an ``<!-- not run … -->`` comment says why it is skipped.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.doc_blocks import (
    ROOT,
    blocks,
    commands,
    has_hf_extra,
    needs_hf,
    run_command,
    run_ini,
    run_python,
)

BLOCKS = blocks(ROOT / "README.md")


def _blocks(*langs: str) -> list:
    return [
        pytest.param(b.lang, b.body, id=f"line{b.line}")
        for b in BLOCKS
        if b.lang in langs and not b.skip
    ]


@pytest.mark.parametrize("lang, body", _blocks("python", "ini"))
def test_snippets_run(pytester: pytest.Pytester, lang: str, body: str):
    """A python block runs as a test module, conftest or script; an ini block configures a
    session (the front door has few of either, so they share one test)."""
    if lang == "ini":
        run_ini(pytester, body)
        return
    if needs_hf(body) and not has_hf_extra():
        pytest.skip("a transformers model: needs the [hf] extra (.ci/run installs it)")
    run_python(pytester, body)


def test_the_docs_home_page_gives_the_first_command_as_the_readme_does():
    """The same command, and the same time with its source: the README's figure."""

    def first(page: Path) -> tuple[str, str]:
        text = " ".join(page.read_text("utf-8").split())
        timing = re.search(r"\(about [^()]*? after the install: [^()]*\)", text)
        assert timing, f"{page.name} says nothing of the first command's time"
        command = next(b.body for b in blocks(page) if b.lang == "bash")
        return timing[0], command

    assert first(ROOT / "docs" / "index.md") == first(ROOT / "README.md")


def _commands() -> list[str]:
    return [c for b in BLOCKS if b.lang == "bash" and not b.skip for c in commands(b)]


@pytest.mark.slow
def test_readme_commands_run_in_order(tmp_path: Path):
    """In one scratch folder, in README order (a later command may read an earlier one's file)."""
    found = _commands()
    assert any(c.startswith("pytest examples") for c in found)
    assert any(c.startswith("competence report") for c in found)
    for command in found:
        if needs_hf(command) and not has_hf_extra():
            continue  # a transformers model: needs the [hf] extra (.ci/run installs it)
        output = run_command(command, tmp_path)
        if command.startswith("pytest examples") and " -q " in command:
            # The main job teaches through its matrices, not through pages of detail.
            assert len(output.splitlines()) <= 150, output
            assert "which suite catches which model" in output and "Δacc" not in output
    assert (tmp_path / "competence-report.html").stat().st_size > 10_000
    assert (tmp_path / "report.html").exists() and (tmp_path / "summary.md").exists()
