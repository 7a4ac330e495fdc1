"""One request stream across a run's tests: each design asked ahead of its reduction, and the next
test's design asked while this one's last answers arrive.

Without it a test asks its design a chunk at a time (:meth:`~.spec.CompetenceSpec.chunks`), each
chunk once the previous one is answered, and the next test starts asking only after this one's
verdict, reports and teardown: the server idles at the end of every chunk while its last answers
come back, and for a few tenths of a second between tests. With a model whose answers come from
a server (``concurrent_calls``: the ``openai:`` backend, behind the response cache),

- a :class:`Pipeline` generates a design's chunks in a thread of its own and asks each one as soon
  as it is generated, each in a thread that waits on the model's request stream
  (:mod:`.models._pipe`), while the test reduces the chunks before it, in design order;
- once a test's last chunk has been asked, the plugin's
  :class:`~pytest_competence.plugin._lookahead.Lookahead` starts the next test's pipeline
  (pytest's ``nextitem``), so its first prompts are in flight while this test's tail is
  answered, its verdict given and its reports written; the next test's evaluation takes the
  pipeline over instead of starting afresh.

What stays the same: every chunk is reduced in design order, with its answers in prompt order,
exactly as :func:`~.evaluate.evaluate_chunks` reduces them, so every figure and record is what it
would have been (only when each answer arrives changes); prompts asked ahead are asked through
the same wrappers (the response cache, in the cache mode of the run). Minimisation, replays and
baselines ask *now*, ahead of anything asked ahead (:func:`~.models._pipe.asking_ahead`).

Bounds: per model, at most ``competence_lookahead`` prompts (default :data:`DEFAULT_WINDOW`, three
chunks; 0 turns all this off) and three times :data:`~.spec.CHUNK_CHARACTERS` of prompt text are
asked and not yet reduced, whichever tests they belong to, plus at most one chunk: the test being
evaluated always gets its next chunk once it has none outstanding, so it never waits on prompts
asked ahead of it (which get room only within the window); only one test ahead is started, and none
for a design and model already evaluated or under way (a later test reuses that evaluation); a
pipeline started ahead for a test that then does not ask it (skipped, deselected, the run stopped)
is dropped when that test ends, its requests cancelled. At an outage — the model's
:class:`~.models._transport.Breaker` open — nothing more is asked ahead.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_competence.engine.spec import CompetenceSpec
    from pytest_competence.models import Model
    from pytest_competence.protocol import Item, Prompt

__all__ = ["DEFAULT_WINDOW", "FIRST_ROUNDS", "WINDOW_CHUNKS", "Pipeline", "Window", "outage"]

#: Chunks the window holds by default: a test's last two, asked and not yet reduced, and the
#: next test's first. With two, a test of two chunks filled it, and the next test's first chunk
#: waited until this test's first was reduced — after its last answer whenever the smaller
#: second chunk was answered first — and the server sat idle between the tests.
WINDOW_CHUNKS = 3
#: Prompts asked ahead of their reduction, per model: :data:`WINDOW_CHUNKS` chunks of
#: :data:`~.spec.CHUNK_PROMPTS` (not imported here: the spec module loads numpy).
DEFAULT_WINDOW = 3 * 1024
#: A design nothing was asked ahead for starts with a chunk of this many rounds of the model's
#: ``concurrency`` (128 prompts at 32 in flight), not a whole chunk: its first requests go out
#: once those are generated, not once 1,024 are.
FIRST_ROUNDS = 4


class Window:
    """Prompts (and their characters) asked and not yet reduced, for one model."""

    def __init__(self, prompts: int, characters: int) -> None:
        self.prompts, self.characters = prompts, characters
        self._used = [0, 0]
        self._changed = threading.Condition()

    def acquire(
        self, prompts: int, characters: int, stop: threading.Event, pipeline: Pipeline
    ) -> bool:
        """Wait for room for one of ``pipeline``'s chunks; ``False`` if ``stop`` was set
        meanwhile. A pipeline its test is reducing always gets a chunk when it has none
        outstanding, whatever the others hold (so a test never waits on one asked ahead of it:
        at most one chunk beyond the window); one asked ahead gets room only within it."""
        with self._changed:
            while not stop.is_set():
                used_p, used_c = self._used
                if (
                    not used_p
                    or (pipeline.claimed.is_set() and not pipeline.held[0])
                    or (used_p + prompts <= self.prompts and used_c + characters <= self.characters)
                ):
                    self._used = [used_p + prompts, used_c + characters]
                    return True
                self._changed.wait(0.5)
            return False

    def release(self, prompts: int, characters: int) -> None:
        with self._changed:
            self._used = [self._used[0] - prompts, self._used[1] - characters]
            self._changed.notify_all()

    def wake(self) -> None:
        with self._changed:
            self._changed.notify_all()


def outage(model: object) -> bool:
    """Whether ``model``'s server is out: its circuit breaker is open (nothing is asked ahead)."""
    breaker = getattr(model, "breaker", None)
    return bool(getattr(breaker, "open", False))


_END = object()


class Pipeline:
    """One evaluation's chunks, generated and asked ahead; iterate for ``(items, answers)`` in
    design order (see the module docstring). ``submitted`` is called, from the pipeline's own
    thread, once its last chunk has been asked (or it stopped)."""

    def __init__(
        self,
        spec: CompetenceSpec,
        model: Model,
        window: Window,
        submitted: Callable[[], None] = lambda: None,
        *,
        claimed: bool = False,
        first: int | None = None,
    ) -> None:
        from pytest_competence.engine.progress import ProgressModel

        self.spec, self.window, self.submitted = spec, window, submitted
        self.first = first  # prompts in the first chunk, if fewer than a chunk's
        # The progress line is drawn by the test's own thread (:meth:`__iter__`), from a count
        # the asking threads keep; they ask the model beneath it.
        self.progress = model if isinstance(model, ProgressModel) else None
        self.model = model.model if isinstance(model, ProgressModel) else model
        self.answered = 0  # answers arrived, counted by the asking threads
        from pytest_competence.models._pipe import Ahead

        self.token = Ahead()  # drops what was asked ahead and not taken (close())
        self.stop = threading.Event()
        self.claimed = threading.Event()  # its test is reducing it (else it is asked ahead)
        if claimed:
            self.claimed.set()
        self.done = threading.Event()  # every chunk asked (or the pipeline stopped)
        # Room this pipeline holds in the window; all of it given back at close(), whatever
        # thread or queue its chunks were in then.
        self.held = [0, 0]
        self._holding = threading.Lock()
        self._closed = False
        self._chunks: queue.SimpleQueue[Any] = queue.SimpleQueue()

        from concurrent.futures import ThreadPoolExecutor  # not at import: start-up time

        self._asking = ThreadPoolExecutor(4, thread_name_prefix="competence-ask")
        self._feeder = threading.Thread(target=self._feed, name="competence-ahead", daemon=True)
        self._feeder.start()

    # -- the pipeline's threads ------------------------------------------------------------------

    def _feed(self) -> None:
        from pytest_competence.engine.evaluate import sent_prompts

        try:
            for items in self.spec.chunks(first=self.first):
                prompts = sent_prompts(items, self.spec.attempts)
                cost = (len(prompts), sum(len(p.text) for p in prompts))
                if not self._wait_for_room(cost):
                    break
                try:
                    asked = self._asking.submit(self._ask, prompts)
                except RuntimeError:  # the pipeline was closed meanwhile
                    break
                self._chunks.put((items, asked, cost))
        except BaseException as exc:  # a family that cannot generate: the test's error, in order
            self._chunks.put(exc)
        finally:
            self._chunks.put(_END)
            self.done.set()
            self.submitted()

    def _wait_for_room(self, cost: tuple[int, int]) -> bool:
        """Room in the window, and, while the pipeline is still ahead of its test, no outage
        (its test, once it takes the pipeline over, asks every prompt, as it would have);
        ``False`` once the pipeline is closed."""
        while not self.stop.is_set():
            if not self.claimed.is_set() and outage(self.model):
                self.claimed.wait(0.2)
                continue
            if not self.window.acquire(*cost, self.stop, self):
                return False
            if not self._hold(cost):
                return False
            if self.claimed.is_set() or not outage(self.model):
                return True
            self._give_back(cost)  # the outage began while this chunk waited for room
        return False

    def _hold(self, cost: tuple[int, int]) -> bool:
        """Count room just taken as this pipeline's; give it back at once if it is closed."""
        with self._holding:
            if not self._closed:
                self.held = [self.held[0] + cost[0], self.held[1] + cost[1]]
                return True
        self.window.release(*cost)
        return False

    def _give_back(self, cost: tuple[int, int]) -> None:
        with self._holding:
            if self._closed:  # close() gave back all it held
                return
            self.held = [self.held[0] - cost[0], self.held[1] - cost[1]]
        self.window.release(*cost)

    def _ask(self, prompts: Sequence[Prompt]) -> list[object]:
        from pytest_competence.engine.evaluate import ask_model
        from pytest_competence.models._pipe import asking_ahead

        with asking_ahead(self.token):
            return ask_model(_Counted(self.model, self), prompts)

    # -- the test's thread -----------------------------------------------------------------------

    def __iter__(self) -> Iterator[tuple[list[Item], list[object]]]:
        shown = 0
        try:
            while True:
                got = self._chunks.get()
                if got is _END:
                    return
                if isinstance(got, BaseException):
                    raise got
                items, asked, cost = got
                try:
                    while True:
                        try:
                            answers = asked.result(timeout=0.2)
                            break
                        except TimeoutError:
                            shown = self._show(shown)
                finally:
                    self._give_back(cost)
                shown = self._show(shown)
                yield items, answers
        finally:
            self.close()

    def _show(self, shown: int) -> int:
        now = self.answered
        if self.progress is not None and now > shown:
            self.progress.advance(now - shown)
        return now

    def close(self) -> None:
        """Stop asking; chunks asked and not taken give their room back (their requests are
        answered into the cache, if any, or dropped)."""
        self.stop.set()
        self.window.wake()
        self._asking.shutdown(wait=False, cancel_futures=True)
        self.token.cancel()
        with self._holding:
            self._closed, held, self.held = True, self.held, [0, 0]
        if held[0]:
            self.window.release(*held)

    def claim(self) -> None:
        """Its test takes it over: from now on it asks as if asked by its test."""
        self.claimed.set()
        self.window.wake()


class _Counted:
    """``model`` counting its answers as they arrive (the progress line's count)."""

    def __init__(self, model: Model, pipeline: Pipeline) -> None:
        self.model, self.pipeline, self.name = model, pipeline, model.name

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.model, attr)

    def generate(self, prompts: Sequence[Prompt]) -> list[str | BaseException]:
        from pytest_competence.models import as_they_come
        from pytest_competence.models.readout import in_order

        def counted() -> Iterator[tuple[int, str | BaseException]]:
            for pair in as_they_come(self.model, prompts):
                self.pipeline.answered += 1
                yield pair

        return in_order(counted(), len(prompts), self.name)
