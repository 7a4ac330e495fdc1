"""Progress of long evaluations on the terminal: answers done of total, rate, time left.

Models that answer one by one (a ``stream`` method: the HTTP, transformers and vLLM backends,
and the cache in front of them) move it with each answer; any other model (``py:``, ``ref:``)
with each batch it answers (:func:`per_batch`). The line appears once an evaluation has run for a
second, only on a terminal with markup, not under ``-q`` and not on xdist workers (they have no
terminal). It is drawn after whatever pytest has written on the current line and erased when the
evaluation ends, so pytest's own output is left exactly as it would have been; the model's name
is cut to :data:`LABEL` characters (a server's address to ``@…``), so the rate and the time
left fit an 80-column terminal::

    tests/test_suite.py ..  competence openai:qwen@…: 1,200/3,600  310/s  ETA 0:08
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol

from pytest_competence.models import Model, ModelWrapper, as_they_come

if TYPE_CHECKING:
    from pytest_competence.protocol import Prompt

__all__ = [
    "LABEL",
    "Progress",
    "ProgressModel",
    "Terminal",
    "expecting",
    "label",
    "per_batch",
]


class Terminal(Protocol):
    """Where a progress line is drawn (the plugin's is pytest's terminal reporter)."""

    def enabled(self) -> bool:
        """Whether this process shows a progress line at all."""
        ...

    def writer(self) -> tuple[Callable[[str], None], Callable[[], int]]:
        """``write(raw)`` and ``room()``: the columns left on the current line."""
        ...


#: The most characters of a model's name the line shows.
LABEL = 20


def label(name: str) -> str:
    """A model's name as the progress line shows it: a server's address cut to ``@…``, then at
    most :data:`LABEL` characters."""
    head, at, _ = name.partition("@")
    short = head + "@…" if at else name
    return short if len(short) <= LABEL else short[: LABEL - 1] + "…"


def _clock_text(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    """One evaluation's progress line for model ``name``, drawn through ``write`` at most every
    ``every`` seconds.

    ``room()`` says how many columns are free on the current line. The rate counts only answers
    after the first ``settle`` seconds, so a burst of cached answers does not flatter the ETA.
    """

    def __init__(
        self,
        name: str,
        total: int,
        write: Callable[[str], None],
        room: Callable[[], int],
        *,
        clock: Callable[[], float] = time.monotonic,
        delay: float = 1.0,
        every: float = 0.2,
        settle: float = 0.5,
    ) -> None:
        self.label, self.total = label(name), total
        self._write, self._room, self._clock = write, room, clock
        self.delay, self.every, self.settle = delay, every, settle
        self.start = clock()
        self.done = 0
        self._mark: tuple[float, int] | None = None
        self._drawn_at: float | None = None
        self._shown = False

    def text(self, now: float, *, named: bool = True) -> str:
        """``label: done/total  rate/s  ETA m:ss`` (rate and ETA once they can be measured);
        without ``named``, no label."""
        parts = [f"competence{' ' + self.label if named else ''}: {self.done:,}/{self.total:,}"]
        if self._mark is not None and now - self._mark[0] > 0.05:
            rate = (self.done - self._mark[1]) / (now - self._mark[0])
            if rate > 0:
                parts.append(f"{rate:,.0f}/s" if rate >= 10 else f"{rate:.1f}/s")
                parts.append(f"ETA {_clock_text((self.total - self.done) / rate)}")
        return "  ".join(parts)

    def advance(self, count: int = 1) -> None:
        now = self._clock()
        self.done += count
        if self._mark is None and now - self.start >= self.settle:
            self._mark = (now, self.done)  # the rate counts answers arriving after this one
        if now - self.start < self.delay or self.done >= self.total:
            return
        if self._drawn_at is not None and now - self._drawn_at < self.every:
            return
        self._drawn_at = now
        room = self._room() - 3
        line = self.text(now)
        if room < 20:
            return
        if len(line) > room:  # the figures matter more than the name
            line = self.text(now, named=False)
        if len(line) > room:
            line = line[: room - 3] + "..."
        # Draw after the cursor, clear the rest of the line, step back: pytest's next write
        # lands where it would have.
        self._write("  " + line + "\x1b[K" + "\b" * (len(line) + 2))
        self._shown = True

    def close(self) -> None:
        """Erase the line (if it was ever drawn)."""
        if self._shown:
            self._write("\x1b[K")
            self._shown = False


@contextlib.contextmanager
def per_batch(terminal: Terminal, model: Model, total: int) -> Iterator[Callable[[int], None]]:
    """Inside, a function that counts answers on a progress line of ``total``: for a model
    without a line of its own (no ``stream``), called with each batch it answers; for any other
    model (its answers counted as they arrive) it does nothing."""
    if callable(getattr(model, "expect", None)) or not terminal.enabled():
        yield lambda count: None
        return
    bar = Progress(model.name, total, *terminal.writer())
    try:
        yield bar.advance
    finally:
        bar.close()


@contextlib.contextmanager
def expecting(model: object, total: int) -> Iterator[None]:
    """Inside, ``model``'s progress line (if it has one) counts ``total`` answers in all."""
    expect = getattr(model, "expect", None)
    if not callable(expect):
        yield
        return
    with expect(total):
        yield


class ProgressModel(ModelWrapper):
    """``model`` with a progress line while it answers; other attributes are the model's."""

    def __init__(self, model: Model, terminal: Terminal) -> None:
        super().__init__(model)
        self.terminal = terminal

    def __repr__(self) -> str:
        return f"ProgressModel({self.model!r})"

    _span: Progress | None = None

    @contextlib.contextmanager
    def expect(self, total: int) -> Iterator[None]:
        """One progress line over every call made inside: ``total`` answers in all (a design
        asked chunk by chunk counts, and times, as a whole)."""
        if self._span is not None or not self.terminal.enabled():
            yield
            return
        self._span = Progress(self.name, total, *self.terminal.writer())
        try:
            yield
        finally:
            self._span.close()
            self._span = None

    def advance(self, count: int) -> None:
        """Count ``count`` answers on the line of the evaluation under way (asked elsewhere:
        :class:`~pytest_competence.engine.lookahead.Pipeline` asks the model beneath this one)."""
        if self._span is not None:
            self._span.advance(count)

    def stream(self, prompts: Sequence[Prompt]) -> Iterator[tuple[int, str | BaseException]]:
        if self._span is None and not self.terminal.enabled():
            yield from as_they_come(self.model, prompts)
            return
        bar = self._span or Progress(self.name, len(prompts), *self.terminal.writer())
        try:
            for pair in as_they_come(self.model, prompts):
                bar.advance()
                yield pair
        finally:
            if bar is not self._span:
                bar.close()

    def generate(self, prompts: Sequence[Prompt]) -> list[str | BaseException]:
        from pytest_competence.models.readout import in_order

        return in_order(self.stream(prompts), len(prompts), self.name)
