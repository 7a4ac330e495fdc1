"""The terminal the progress line is drawn on, from pytest's terminal reporter (the engine's
:class:`~pytest_competence.engine.progress.Terminal`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from pytest_competence.engine import progress

if TYPE_CHECKING:
    from pytest_competence.models import Model

__all__ = ["PytestTerminal", "per_batch", "progress_enabled"]


class PytestTerminal:
    """Pytest's terminal: shown only with markup, not under ``-q``, not on an xdist worker; the
    line is written out of capture, after what pytest wrote on the current line."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def enabled(self) -> bool:
        return progress_enabled(self.config)

    def writer(self) -> tuple[Callable[[str], None], Callable[[], int]]:
        return _terminal(self.config)


def progress_enabled(config: pytest.Config) -> bool:
    """Whether this process shows progress: a terminal with markup, not ``-q``, not a worker."""
    if hasattr(config, "workerinput") or config.getoption("verbose") < 0:
        return False
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return False
    tty = reporter.isatty  # a bool before pytest 8.4, a callable bool since
    return bool((tty() if callable(tty) else tty) and getattr(reporter, "hasmarkup", False))


def _terminal(config: pytest.Config) -> tuple[Callable[[str], None], Callable[[], int]]:
    writer = config.get_terminal_writer()
    capture = config.pluginmanager.get_plugin("capturemanager")

    def write(raw: str) -> None:
        # The evaluation runs while pytest captures output: step out of capture, like live logs.
        guard = capture.global_and_fixture_disabled() if capture else contextlib.nullcontext()
        with guard:
            writer.write_raw(raw, flush=True)

    def room() -> int:
        used = writer.width_of_current_line
        return writer.fullwidth - used if used >= 0 else 0

    return write, room


def per_batch(
    config: pytest.Config, model: Model, total: int
) -> contextlib.AbstractContextManager[Callable[[int], None]]:
    """:func:`~pytest_competence.engine.progress.per_batch` on pytest's terminal."""
    return progress.per_batch(PytestTerminal(config), model, total)
