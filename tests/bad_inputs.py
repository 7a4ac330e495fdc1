"""The pytest half of the bad-input tables: a row, and how one is run.

A row is a marker declaration, ini lines and command-line arguments, run in-process with
``pytester`` (the ``ref:`` model answers with no cost); it must end in one clean error — the exit
code, the first words that name the fix, no traceback. The tables are ``test_bad_inputs.py``
(the design, ini options, the release gate) and ``test_bad_inputs_options.py`` (command-line
options, the probes); the ``competence`` command's table is ``test_bad_inputs_cli.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

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
    files: tuple[tuple[str, str], ...] = ()  # (path, text) written beside the test first
    conftest: str = ""  # a conftest.py for the session (a family it registers)


def check_row(pytester: pytest.Pytester, row: Row) -> None:
    """Run ``row`` in a fresh pytester folder and check its exit code and error line."""
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
    for name, text in row.files:
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if row.conftest:
        pytester.makeconftest(row.conftest)
    from pytest_competence.registry import FAMILIES

    before = set(FAMILIES)
    try:
        result = pytester.runpytest("-p", "no:cacheprovider", *row.args)
    finally:  # a family the conftest registered in this process is forgotten after it
        for name in set(FAMILIES) - before:
            del FAMILIES[name]
    output = "\n".join(result.outlines + result.errlines)
    assert result.ret == row.exit, output
    assert "Traceback" not in output, output
    if row.expected:
        lines = [line for line in output.splitlines() if row.expected in line]
        assert lines, f"{row.expected!r} not in:\n{output}"
    if row.exit == USAGE:  # stopped before any model answered: nothing collected, nothing run
        assert "competence profiles" not in output
