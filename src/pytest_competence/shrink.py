"""Minimise a failing competence case: replay, boundary search on n, vocabulary scan, Hypothesis.

A case fails when some presentation of it is answered wrong (invalid answers count wrong). From a
failing case — one the design found, or one an earlier run saved — :func:`minimise`

1. replays the cases saved for this test in the example database, all in one call; a saved case
   that still fails and was saved as minimal for this model is the answer, with no shrinking;
2. asks the starting case again, :data:`AGAIN` times with fresh attempts (one call): a failure
   that does not give the same verdicts every time is reported as not reproducing, and nothing
   is shrunk — a greedy model answers a prompt the same way every time, and with ``attempts=N``
   the strict majority of N sends must come back the same;
3. searches the size axis by bisection for the starting latent seed — the smallest failing ``n``
   in ⌈log₂(range)⌉ calls when failure grows with ``n`` (:func:`boundary_search`);
4. asks every earlier catalog vocabulary in one call and keeps the first that fails;
5. lets Hypothesis's shrinker minimise every choice of the case from there (the rewrite count
   toward one, layouts toward chain order, the latent instance toward index and seed 0, ``n``
   and the vocabulary again);
6. asks the result again the same way, and saves it when the failure reproduces.

Every step is one batched call; every prompt is remembered (:class:`~.asking.Asker`), so Hypothesis
revisiting a case costs nothing. A budget of calls and seconds bounds the whole; when it runs out
the best case so far is reported as possibly not minimal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pytest_competence.asking import Asker, Budget, verdicts
from pytest_competence.evaluate import Observation
from pytest_competence.models import Model
from pytest_competence.strategies import Prompt

__all__ = ["Boundary", "Budget", "CaseSpace", "Minimal", "boundary_search", "minimise"]

PHASES = ("replay", "start", "boundary", "vocabulary", "shrink", "confirm")
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
        return {"n": self.n, "lo": self.lo, "hi": self.hi, "calls": self.calls,
                "bound": self.bound, "complete": self.complete,
                "trail": [list(t) for t in self.trail]}


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
    proven: bool = False  # replayed as minimal from the database: no shrinking was needed
    exhausted: bool = False  # the budget refused a step
    saved: bool = False
    notes: list[str] = field(default_factory=list)

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
    space: CaseSpace, asker: Asker, case: Any, observations: tuple[Observation, ...],
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
    found = Boundary(best.n, min(first, case.n), case.n, asker.spent - start, tuple(trail),
                     complete)
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

    @settings(database=db, phases=(Phase.reuse, Phase.shrink), deadline=None,
              verbosity=Verbosity.quiet, suppress_health_check=list(HealthCheck),
              report_multiple_bugs=False, max_examples=1)
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
    space: CaseSpace, model: Model, starts: Sequence[Any], *, attempts: int = 1,
    budget: Budget | None = None, store: Any = None, asker: Asker | None = None,
    boundary: bool = True, vocabularies: bool = True, hypothesis: bool = True,
) -> Minimal | None:
    """Minimise the first of ``starts`` that fails (see the module docstring for the phases).

    Args:
        space: a case space (e.g. ``Ordering().strategies.case_space(...)``).
        model: what answers; ``attempts`` sends per prompt, majority-voted.
        starts: candidate failing cases, e.g. the design's failing instances as cases.
        budget: calls and seconds for the whole minimisation (one call is kept for the final
            confirmation).
        store: a :class:`~.casedb.CaseStore`: saved cases are replayed first, the result saved.
        asker: reuse one (and its remembered answers, e.g. the design's); else a new one.
        boundary, vocabularies, hypothesis: switch a phase off (for measuring them apart).

    Returns ``None`` when no start fails (or the budget allows none to be asked).
    """
    asker = asker or Asker(model, space.family, attempts=attempts, budget=budget)
    start, start_obs, source, proven = None, None, "design", False
    if store is not None:
        saved = store.load(space)
        if saved:
            asker.phase = "replay"
            replayed = asker.ask([space.prompts(c) for c, _ in saved], reserve=1) or []
            failing = [(space.sort_key(c), c, o, m)
                       for (c, m), o in zip(saved, replayed) if fails(o)]
            if failing:
                _, start, start_obs, proven = min(failing, key=lambda t: t[0])
                source = "database"
    if start is None:
        asker.phase = "start"
        for case in starts:
            got = asker.ask([space.prompts(case)], reserve=1)
            if got is None:
                break
            if fails(got[0]):
                start, start_obs = case, got[0]
                break
    if start is None or start_obs is None:
        return None

    def again(case: Any) -> tuple[tuple[Observation, ...], ...]:
        asker.phase = "confirm"
        return tuple(asker.again(space.prompts(case), AGAIN))

    def same(obs: tuple, repeat: tuple) -> bool:
        return all(verdicts(r) == verdicts(obs) for r in repeat)

    def result(case: Any, obs: tuple, repeat: tuple, **kw: Any) -> Minimal:
        return Minimal(case, obs, same(obs, repeat), source=source,
                       calls={p: asker.calls.get(p, 0) for p in PHASES if asker.calls.get(p)},
                       prompts=asker.prompts_sent, seconds=asker.seconds, again=repeat,
                       exhausted=asker.refused > 0, **kw)

    first_again = again(start)
    if not same(start_obs, first_again):
        return result(start, start_obs, first_again, complete=False)
    if proven:
        return result(start, start_obs, first_again, complete=True, proven=True)
    search = _Search(space, asker, start, start_obs)
    found_boundary = None
    if boundary:
        asker.phase = "boundary"
        case, obs, found_boundary = boundary_search(space, asker, start, start_obs)
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
    complete = asker.refused == 0
    if search.best is start:
        out = result(start, start_obs, first_again, complete=complete, boundary=found_boundary)
        return _finish(out, space, store)
    final_again = again(search.best)
    out = result(search.best, search.best_obs, final_again, complete=complete,
                 boundary=found_boundary)
    if not out.reproduced:
        # The smaller case failed once only; the starting case did fail twice: report that one.
        out = result(start, start_obs, first_again, complete=False, boundary=found_boundary)
        out.notes.append("the minimised case did not fail again when asked afresh, so the case "
                         "shown is the one minimisation started from")
    return _finish(out, space, store)


def _finish(out: Minimal, space: CaseSpace, store: Any) -> Minimal:
    """Save a reproduced, newly found case; a complete search saves it as minimal."""
    if store is not None and out.reproduced and not out.proven:
        out.saved = store.save(space, out.case, proven=out.complete)
    return out
