"""Asking ahead across a run's tests, from pytest: the next test's design (pytest's
``nextitem``) asked while this one's last answers arrive, through the engine's
:class:`~pytest_competence.engine.lookahead.Pipeline`; ``competence_lookahead`` bounds it."""

from __future__ import annotations

import threading
from collections.abc import Generator
from typing import TYPE_CHECKING

import pytest

from pytest_competence.engine.lookahead import (
    DEFAULT_WINDOW,
    FIRST_ROUNDS,
    WINDOW_CHUNKS,
    Pipeline,
    Window,
    outage,
)

if TYPE_CHECKING:
    from pytest_competence.engine.spec import CompetenceSpec
    from pytest_competence.models import Model
    from pytest_competence.plugin._session import CompetenceSession

__all__ = ["DEFAULT_WINDOW", "WINDOW_CHUNKS", "Lookahead", "Window", "add_ini"]


def add_ini(parser: pytest.Parser) -> None:
    """The ``competence_lookahead`` ini option."""
    parser.addini(
        "competence_lookahead",
        default=str(DEFAULT_WINDOW),
        help="Prompts an openai: model may have asked ahead of their test's reduction, the "
        f"next test's included; 0 asks each chunk only when it is needed (default: "
        f"{DEFAULT_WINDOW})",
    )


def window_size(config: pytest.Config) -> int:
    """``competence_lookahead``, checked: a ``pytest.UsageError`` names the option and the fix."""
    raw = str(config.getini("competence_lookahead")).strip()
    try:
        size = int(raw)
    except ValueError:
        size = -1
    if size < 0:
        raise pytest.UsageError(
            f"competence_lookahead: expected a whole number of prompts (0 turns asking ahead "
            f"off), but got {raw!r}; e.g. competence_lookahead = {DEFAULT_WINDOW}"
        )
    return size


class Lookahead:
    """The run's pipelines: the next test's started once this one's last chunk is asked."""

    def __init__(self, session: CompetenceSession, size: int) -> None:
        self.session, self.size = session, size
        self.windows: dict[str, Window] = {}
        self.ahead: dict[tuple, Pipeline] = {}  # started for a later test, not yet taken
        # Evaluations under way or done: a later test of the same design and model reuses the
        # evaluation (CompetenceSession.evaluations), so asking it ahead would ask it twice.
        self.taken: set[tuple] = set()
        self._next: tuple[CompetenceSpec, Model, tuple] | None = None
        self._owed = False  # a pipeline finished asking before the next test was known
        self._lock = threading.Lock()

    @property
    def characters(self) -> int:
        """Prompt characters a window holds. Read when a window is made, not at install: the
        lookahead is made in every run with the plugin on, competence tests or not, and the
        spec module loads numpy (~0.15 s of start-up)."""
        from pytest_competence.engine.spec import CHUNK_CHARACTERS

        return WINDOW_CHUNKS * CHUNK_CHARACTERS

    @classmethod
    def install(cls, config: pytest.Config, session: CompetenceSession) -> Lookahead | None:
        """The run's lookahead, registered as a plugin; ``None`` when it is off."""
        size = window_size(config)
        if not size or session.settings.batch_export or config.getoption("competence_audit"):
            return None
        lookahead = cls(session, size)
        config.pluginmanager.register(lookahead, "competence-lookahead")
        return lookahead

    def applies(self, model: object) -> bool:
        return bool(getattr(model, "concurrent_calls", False))

    def pipeline(self, spec: CompetenceSpec, model: Model, key: tuple) -> Pipeline | None:
        """The pipeline of ``model`` on ``spec``: the one started ahead, or a new one; ``None``
        for a model that answers in this process."""
        if not self.applies(model):
            return None
        with self._lock:
            started = self.ahead.pop(key, None)
            self.taken.add(key)
        if started is None:
            # Nothing was asked ahead: the server waits for this design's first chunk, so that
            # one is small — a few rounds of the model's concurrency, generated in a few ms —
            # and the next, a whole chunk, is generated while it is answered.
            # (A model that does not say its concurrency starts with a whole chunk.)
            concurrency = getattr(model, "concurrency", None)
            first = FIRST_ROUNDS * int(concurrency) if concurrency else None
            return self._start(spec, model, claimed=True, first=first)
        started.claim()
        return started

    def _start(
        self, spec: CompetenceSpec, model: Model, *, claimed: bool = False, first: int | None = None
    ) -> Pipeline:
        window = self.windows.get(model.name)
        if window is None:
            window = self.windows[model.name] = Window(self.size, self.characters)
        return Pipeline(spec, model, window, self._submitted, claimed=claimed, first=first)

    def _submitted(self) -> None:
        with self._lock:
            planned, self._next = self._next, None
            if planned is None:
                self._owed = True
                return
            self._owed = False
            spec, model, key = planned
            if key in self.ahead or key in self.taken or outage(model):
                return
            self.ahead[key] = self._start(spec, model)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, object, object]:
        planned = self._plan(nextitem)
        with self._lock:
            self._next = planned
            owed = self._owed
        if owed:
            self._submitted()
        try:
            return (yield)
        finally:
            keep = planned[2] if planned is not None else None
            with self._lock:
                dropped = [p for k, p in self.ahead.items() if k != keep]
                self.ahead = {k: p for k, p in self.ahead.items() if k == keep}
            for pipeline in dropped:
                pipeline.close()

    def _plan(self, item: pytest.Item | None) -> tuple[CompetenceSpec, Model, tuple] | None:
        """What ``item`` will ask, if it is a competence test of a model asked ahead."""
        marker = item.get_closest_marker("competence") if item is not None else None
        callspec = getattr(item, "callspec", None)
        if marker is None or callspec is None:
            return None
        model = self.session.models.get(callspec.params.get("competence_model"))
        if model is None or not self.applies(model):
            return None
        from pytest_competence.engine.spec import overridable, spec_from_marker
        from pytest_competence.models import reads_family

        names = overridable(marker.args, marker.kwargs)
        overrides = {k: v for k, v in callspec.params.items() if k in names}
        try:
            spec = spec_from_marker(marker.args, marker.kwargs, overrides)
            spec.check_size(self.session.settings.max_prompts)
        except Exception:  # the test's own setup reports it
            return None
        key = (spec.key, spec.attempts, model.name)
        if not reads_family(model, spec.family.name) or key in self.taken:
            return None
        return spec, model, key

    def pytest_sessionfinish(self) -> None:
        with self._lock:
            dropped, self.ahead = list(self.ahead.values()), {}
        for pipeline in dropped:
            pipeline.close()
