"""Minimise a failing competence case: replay, boundary search on n, vocabulary scan, Hypothesis.

A case fails when some presentation of it is answered wrong (invalid answers count wrong). From a
failing case, the design's or one an earlier run saved, :func:`minimise`

1. replays the saved cases in one call and starts from the smallest that still fails;
2. asks it again :data:`AGAIN` times afresh: if the verdicts differ it does not reproduce;
3. checks a case saved as minimal against the model asked now (:func:`check_minimal`);
4. bisects ``n`` for the smallest failing size (:func:`boundary_search`);
5. asks every earlier catalog vocabulary in one call and keeps the first that fails;
6. lets Hypothesis's shrinker minimise every choice of the case from there;
7. asks the result again, and saves it when the failure reproduces.

Every step is one batched call and every prompt is remembered (:class:`~._asking.Asker`), so a
revisited case costs nothing; a budget of calls and seconds bounds the whole.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Protocol

from pytest_competence.models import Model
from pytest_competence.protocol import Observation, Prompt

from ._asking import Asker, Budget, verdicts
from ._casedb import SavedCase

__all__ = [
    "Boundary",
    "CaseSpace",
    "Minimal",
    "Replay",
    "boundary_search",
    "check_minimal",
    "fails",
    "minimise",
]

PHASES = ("replay", "start", "check", "boundary", "vocabulary", "shrink", "confirm")
AGAIN = 3  # fresh re-asks of a failing case, in one call, that must all give the same verdicts


class CaseSpace(Protocol):
    """What minimisation needs from a family's cases (the ordering family's ``CaseSpace``)."""

    family: Any  # parses the answers
    min_n: int

    def strategy(self) -> Any: ...  # a Hypothesis strategy drawing cases, one choice per field
    def choices(self, case: Any) -> tuple[int | bool, ...]: ...
    def from_choices(self, choices: Sequence[object]) -> Any: ...
    def sort_key(self, case: Any) -> tuple[int, ...]: ...
    def prompts(self, case: Any) -> tuple[Prompt, ...]: ...
    def with_n(self, case: Any, n: int) -> Any: ...
    def earlier_vocabularies(self, case: Any) -> list[Any]: ...


def fails(observations: Sequence[Observation]) -> bool:
    """The strict condition on one case: some presentation is not answered right."""
    return not all(o.correct for o in observations)


@dataclass(frozen=True)
class Boundary:
    """The result of a bisection on ``n``: ``n`` fails and ``n − 1`` passes (or ``n == lo``)."""

    n: int
    lo: int
    hi: int
    calls: int
    trail: tuple[tuple[int, bool], ...]  # (n asked, whether it failed), in order
    complete: bool = True  # False: the budget stopped it

    @property
    def bound(self) -> int:
        """⌈log₂(hi − lo + 1)⌉: the most calls a bisection of this range needs."""
        return math.ceil(math.log2(self.hi - self.lo + 1))

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "lo": self.lo,
            "hi": self.hi,
            "calls": self.calls,
            "bound": self.bound,
            "complete": self.complete,
            "trail": [list(t) for t in self.trail],
        }


@dataclass(frozen=True)
class Replay:
    """The saved case a minimisation started from, and what this run found about it.

    ``saved_for`` is :meth:`.SavedCase.saved_for` seen from the model asked; ``checked`` holds
    the one-step-simpler cases :func:`check_minimal` asked and whether each failed (``None``:
    not checked — the case was not saved as minimal, or the budget refused the call).
    """

    saved: SavedCase
    saved_for: str
    checked: tuple[tuple[Any, bool], ...] | None = None

    @property
    def minimal(self) -> bool:
        """Checked in this run: every one-step-simpler case passed."""
        return self.checked is not None and not any(failed for _, failed in self.checked)


@dataclass
class Minimal:
    """The outcome of :func:`minimise`: the case, its answers, and what it cost.

    ``reproduced`` is False when asking again gave other verdicts (``again`` holds every re-ask):
    the case is then the one that failed once, and nothing was shrunk or saved. ``complete`` is
    False when the budget ended the search, so the case may not be minimal.
    """

    case: Any
    observations: tuple[Observation, ...]
    reproduced: bool
    complete: bool
    source: str  # "design" or "database"
    calls: dict[str, int]
    prompts: int
    seconds: float
    boundary: Boundary | None = None
    again: tuple[tuple[Observation, ...], ...] = ()  # each fresh re-ask of the case
    proven: bool = False  # replayed, and checked minimal for the model asked: no shrinking
    exhausted: bool = False  # the budget refused a step
    saved: bool = False
    notes: list[str] = field(default_factory=list)
    replay: Replay | None = None  # the saved case it started from, when it did

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())

    @property
    def shrinking_calls(self) -> int:
        """Calls spent making the case smaller (boundary, vocabulary, Hypothesis)."""
        return sum(self.calls.get(p, 0) for p in ("boundary", "vocabulary", "shrink"))


class _Search:
    """The state one minimisation shares between its phases."""

    def __init__(self, space: CaseSpace, asker: Asker, case: Any, observations: tuple) -> None:
        self.space, self.asker = space, asker
        self.best, self.best_obs = case, observations

    def check(self, case: Any) -> tuple[Observation, ...] | None:
        """The case's observations, or ``None`` when the budget (less a confirmation) is spent."""
        got = self.asker.ask([self.space.prompts(case)], reserve=1)
        return None if got is None else got[0]

    def offer(self, case: Any, observations: tuple[Observation, ...]) -> bool:
        """Keep ``case`` if it fails and is smaller than the best so far; whether it fails."""
        if not fails(observations):
            return False
        if self.space.sort_key(case) < self.space.sort_key(self.best):
            self.best, self.best_obs = case, observations
        return True


def boundary_search(
    space: CaseSpace,
    asker: Asker,
    case: Any,
    observations: tuple[Observation, ...],
    lo: int | None = None,
) -> tuple[Any, tuple[Observation, ...], Boundary]:
    """Bisect ``n`` between ``lo`` (default ``space.min_n``) and ``case.n``, which fails.

    Everything but ``n`` stays as in ``case`` — the latent seed, layout seeds, rewrite count.
    Returns the smallest failing case found, its observations and the :class:`Boundary`: at
    most ⌈log₂(case.n − lo + 1)⌉ calls, and the smallest failing ``n`` whenever failure is
    monotone in ``n`` for this seed (otherwise a boundary: ``n`` fails and ``n − 1`` passes).
    """
    first = space.min_n if lo is None else lo
    lo, hi, best, best_obs = first, case.n, case, observations
    start, trail, complete = asker.spent, [], True
    while lo < hi:
        mid = (lo + hi) // 2
        candidate = space.with_n(best, mid)
        got = asker.ask([space.prompts(candidate)], reserve=1)
        if got is None:
            complete = False
            break
        failed = fails(got[0])
        trail.append((mid, failed))
        if failed:
            hi, best, best_obs = mid, candidate, got[0]
        else:
            lo = mid + 1
    found = Boundary(
        best.n, min(first, case.n), case.n, asker.spent - start, tuple(trail), complete
    )
    return best, best_obs, found


def _hypothesis(search: _Search) -> None:
    """Shrink ``search.best`` with Hypothesis, starting from its choice sequence."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis.database import InMemoryExampleDatabase, choices_to_bytes
    from hypothesis.errors import Flaky

    space = search.space
    key = b"pytest-competence.shrink"
    db = InMemoryExampleDatabase()
    # One trailing choice the strategy never reads: Hypothesis skips shrinking a replayed example
    # whose choices it consumed exactly (it assumes an earlier run minimised it).
    db.save(key, choices_to_bytes((*space.choices(search.best), False)))

    class Fails(Exception):
        pass

    @settings(
        database=db,
        phases=(Phase.reuse, Phase.shrink),
        deadline=None,
        verbosity=Verbosity.quiet,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        max_examples=1,
    )
    @given(space.strategy())
    def probe(case: Any) -> None:
        got = search.check(case)
        if got is not None and search.offer(case, got):
            raise Fails

    probe._hypothesis_internal_database_key = key
    probe._hypothesis_internal_use_seed = 0  # deterministic shrinking
    try:
        probe()
    except Fails:
        pass
    except Flaky:  # pragma: no cover - answers are remembered, so a replay cannot differ
        pass


def minimise(
    space: CaseSpace,
    model: Model,
    starts: Sequence[Any],
    *,
    attempts: int = 1,
    budget: Budget | None = None,
    store: Any = None,
    asker: Asker | None = None,
    boundary: bool = True,
    vocabularies: bool = True,
    hypothesis: bool = True,
    confirmed: bool = False,
) -> Minimal | None:
    """Minimise the first of ``starts`` that fails (see the module docstring for the phases).

    Args:
        space: a case space (e.g. ``family.strategies.case_space(...)``).
        model: what answers; ``attempts`` sends per prompt, majority-voted.
        starts: candidate failing cases, e.g. the design's failing instances as cases.
        budget: calls and seconds for the whole minimisation (one call is kept for the final
            confirmation).
        store: a :class:`~._casedb.CaseStore`: saved cases are replayed first, the result saved.
        asker: reuse one (and its remembered answers, e.g. the design's); else a new one.
        boundary, vocabularies, hypothesis: switch a phase off (for measuring them apart).
        confirmed: the starts already failed again when asked afresh (the result of another
            minimisation): the first failing one is not asked again.

    Returns ``None`` when no start fails (or the budget allows none to be asked).
    """
    asker = asker or Asker(model, space.family, attempts=attempts, budget=budget)
    start, start_obs, saved_start = _start(space, asker, starts, store)
    if start is None or start_obs is None:
        return None
    replay = (
        None
        if saved_start is None
        else Replay(saved_start, saved_start.saved_for(getattr(store, "identity", None)))
    )
    source = "design" if saved_start is None else "database"
    result = partial(_minimal, asker, source, replay)
    first_again = () if confirmed and saved_start is None else _again(space, asker, start)
    if not _same(start_obs, first_again):
        return result(start, start_obs, first_again, complete=False)
    search = _Search(space, asker, start, start_obs)
    if replay is not None and replay.saved.minimal:
        # Saved as minimal under this name, perhaps for another model than the one asked now.
        replay = check_minimal(search, replay)
        result = partial(_minimal, asker, source, replay)
        if replay.minimal:
            out = result(start, start_obs, first_again, complete=True, proven=True)
            return _finish(out, space, store)
    found_boundary = _shrink(search, boundary, vocabularies, hypothesis)
    complete = asker.refused == 0
    if search.best is start:
        out = result(start, start_obs, first_again, complete=complete, boundary=found_boundary)
        return _finish(out, space, store)
    final_again = _again(space, asker, search.best)
    out = result(
        search.best, search.best_obs, final_again, complete=complete, boundary=found_boundary
    )
    if not out.reproduced:
        # The smaller case failed once only; the starting case did fail twice: report that one.
        out = result(start, start_obs, first_again, complete=False, boundary=found_boundary)
        out.notes.append(
            "the minimised case did not fail again when asked afresh, so the case "
            "shown is the one minimisation started from"
        )
    return _finish(out, space, store)


def _start(
    space: CaseSpace, asker: Asker, starts: Sequence[Any], store: Any
) -> tuple[Any, tuple[Observation, ...] | None, Any]:
    """The smallest saved case that fails on replay, else the first of ``starts`` that fails."""
    start, start_obs, saved_start = None, None, None
    if store is not None:
        saved = store.load(space)
        if saved:
            asker.phase = "replay"
            replayed = asker.ask([space.prompts(s.case) for s in saved], reserve=1) or []
            failing = [(s, o) for s, o in zip(saved, replayed) if fails(o)]
            if failing:
                saved_start, start_obs = min(failing, key=lambda t: space.sort_key(t[0].case))
                start = saved_start.case
    if start is None:
        asker.phase = "start"
        for case in starts:
            got = asker.ask([space.prompts(case)], reserve=1)
            if got is None:
                break
            if fails(got[0]):
                start, start_obs = case, got[0]
                break
    return start, start_obs, saved_start


def _minimal(
    asker: Asker,
    source: str,
    replay: Replay | None,
    case: Any,
    obs: tuple,
    repeat: tuple,
    **kw: Any,
) -> Minimal:
    """The result: ``case``, reproduced when every repeat agrees, and what finding it cost."""
    return Minimal(
        case,
        obs,
        _same(obs, repeat),
        source=source,
        calls={p: asker.calls.get(p, 0) for p in PHASES if asker.calls.get(p)},
        prompts=asker.prompts_sent,
        seconds=asker.seconds,
        again=repeat,
        exhausted=asker.refused > 0,
        replay=replay,
        **kw,
    )


def _again(space: CaseSpace, asker: Asker, case: Any) -> tuple[tuple[Observation, ...], ...]:
    """``case`` asked afresh ``AGAIN`` times (no remembered answer)."""
    asker.phase = "confirm"
    return tuple(asker.again(space.prompts(case), AGAIN))


def _same(obs: tuple, repeat: tuple) -> bool:
    """Every repeat gave the same verdicts as ``obs``."""
    return all(verdicts(r) == verdicts(obs) for r in repeat)


def _shrink(
    search: _Search, boundary: bool, vocabularies: bool, hypothesis: bool
) -> Boundary | None:
    """The shrinking phases that are on, in order; what the boundary search found, if it ran."""
    space, asker = search.space, search.asker
    found_boundary = None
    if boundary:
        asker.phase = "boundary"
        case, obs, found_boundary = boundary_search(space, asker, search.best, search.best_obs)
        search.offer(case, obs)
    if vocabularies:
        earlier = space.earlier_vocabularies(search.best)
        if earlier:
            asker.phase = "vocabulary"
            scanned = asker.ask([space.prompts(c) for c in earlier], reserve=1)
            for case, obs in zip(earlier, scanned or []):
                if search.offer(case, obs):
                    break
    if hypothesis:
        asker.phase = "shrink"
        _hypothesis(search)
    return found_boundary


def check_minimal(search: _Search, replay: Replay) -> Replay:
    """Ask the cases one step simpler than ``search.best`` in one call: ``n − 1`` (the boundary)
    and every earlier catalog vocabulary — the shrink directions that take one batched call.

    A failing one becomes ``search.best``: the head start minimisation continues from. Returns
    ``replay`` with what was asked and whether each failed (unchanged when the budget refused).
    """
    space, asker, case = search.space, search.asker, search.best
    simpler = [space.with_n(case, case.n - 1)] if case.n > space.min_n else []
    simpler += space.earlier_vocabularies(case)
    asker.phase = "check"
    got = asker.ask([space.prompts(c) for c in simpler], reserve=1) if simpler else []
    if got is None:
        return replay
    for c, obs in zip(simpler, got):
        search.offer(c, obs)
    return replace(replay, checked=tuple((c, fails(obs)) for c, obs in zip(simpler, got)))


def _finish(out: Minimal, space: CaseSpace, store: Any) -> Minimal:
    """Save a reproduced case with the model's identity; a complete search saves it as minimal.

    A replayed case checked minimal is saved again only to record the model it now holds for
    (it was saved for an earlier model under this name, or before identities were recorded).
    A case this name had saved as minimal and that minimisation went below is replaced.
    """
    if store is None or not out.reproduced:
        return out
    replay = out.replay
    if (
        out.proven
        and replay is not None
        and replay.saved.recorded
        and replay.saved_for != "earlier"
    ):
        return out
    if replay is not None and out.case == replay.saved.case and not out.complete:
        # Nothing was learnt about the saved case (the budget ended the search): it stays as it
        # was saved, and the next run checks it again.
        out.saved = store.databases.local is not None
        return out
    replaces = None
    if replay is not None and replay.saved.minimal and out.case != replay.saved.case:
        replaces = replay.saved.case
    out.saved = store.save(space, out.case, proven=out.complete, replaces=replaces)
    return out
