"""The plugin side of minimisation: from a failed competence test to its minimal failing case.

When the plugin's check of the declared condition fails, :func:`minimise_failure` minimises the
design's smallest failing instance (see :mod:`._shrink`) within the test's budget, appends the
minimal case to the failure message, and keeps it for the reports, where it appears as
``failing_case.minimal`` (documented in ``docs/results-schema.md``). Imported only on failure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from pytest_competence.engine.evaluation import InfrastructureError, NotInCacheError
from pytest_competence.minimise import (
    Asker,
    Budget,
    CaseDatabases,
    CaseStore,
    Minimal,
    ShrinkSettings,
    case_key,
    may_hold_cases,
    minimal_record,
    minimal_text,
    minimise,
    open_databases,
    saved_by,
)
from pytest_competence.models import ModelRaised
from pytest_competence.models.identity import model_identity
from pytest_competence.plugin._shrink_hooks import settings_for
from pytest_competence.protocol import case_spaces

if TYPE_CHECKING:
    from pytest_competence.engine.result import Result

__all__ = ["MINIMAL", "attach_minimal", "minimise_failure", "replay_saved"]

MINIMAL = pytest.StashKey[dict]()
_DATABASES = pytest.StashKey[CaseDatabases]()
_STARTS = 8  # failing design instances tried as starting points, smallest n first


def _where(config: pytest.Config) -> tuple[str, list[str], Any]:
    """The example databases' settings: local directory, shared ones, the folder relative
    directories are taken from (the rootdir: :func:`~pytest_competence.plugin._wiring.files_root`)."""
    from pytest_competence.plugin._wiring import files_root

    return (
        config.getini("competence_database"),
        config.getini("competence_database_shared"),
        files_root(config),
    )


def _test_id(item: pytest.Item) -> str:
    """The test's node id, its file's path taken from the folder the databases' paths are
    (so that a suite run from another working directory, without an ini file, keys its
    cases as before)."""
    from pytest_competence.plugin._wiring import files_root

    root = files_root(item.config)
    if root == item.config.rootpath:
        return item.nodeid
    try:
        where = item.path.relative_to(root).as_posix()
    except ValueError:
        return item.nodeid
    return where + "::" + item.nodeid.partition("::")[2]


def _databases(config: pytest.Config) -> CaseDatabases:
    if _DATABASES not in config.stash:
        config.stash[_DATABASES] = open_databases(*_where(config))
    return config.stash[_DATABASES]


def _store(item: pytest.Item, run: Any, space: Any, keep: Any = None) -> CaseStore:
    """The test's cases in ``space`` (every model's), seen from this model: its name and
    identity; ``keep`` says which cases may be saved (default: all)."""
    model_param = item.callspec.getparam("competence_model")  # type: ignore[attr-defined]
    test = _test_id(item).replace(model_param, "*", 1)
    return CaseStore(
        _databases(item.config),
        case_key(test, space),
        run.model.name,
        model_identity(run.model),
        getattr(run.session, "run_id", None),
        keep=keep,
    )


def minimise_failure(item: pytest.Item, run: Any, message: str) -> str:
    """Minimise the failing case of ``run``; return ``message`` with the minimal case appended.

    Nothing is appended when minimisation is off (``calls=0``) or the condition itself held
    (e.g. only a regression gate failed). An error while minimising is reported in one line
    below the failure it was trying to explain, never instead of it.
    """
    settings = settings_for(item)
    if settings.calls == 0:
        return message
    try:
        found = _minimise(item, run, settings)
    except NotInCacheError as exc:  # offline: no export holds what minimising will ask
        return f"{message}\n  minimisation stopped: {_offline(exc)}"
    except (ModelRaised, InfrastructureError) as exc:  # say which model, where, on what
        return f"{message}\n  minimisation stopped: {run.session.redact(str(exc))}"
    except Exception as exc:
        return f"{message}\n  minimisation stopped by an error: {type(exc).__name__}: {exc}"
    if found is None:
        return message
    record, seconds = found
    item.stash[MINIMAL] = record
    return f"{message}\n{minimal_text(record, seconds=seconds)}"


def _offline(exc: NotInCacheError) -> str:
    """Why minimisation stopped under ``--competence-cache=read``: it picks each prompt from the
    answers before it, so only asking can answer them."""
    return exc.chosen_as_it_goes(
        "minimisation",
        "run with --competence-cache=rw to minimise, or with -o competence_shrink_calls=0 to "
        "report the design's first failing case alone",
    )


def replay_saved(item: pytest.Item, run: Any) -> str | None:
    """A passing test asks its saved cases first: the regression corpus of earlier runs.

    Under the strict condition, the cases an earlier run (or another model) saved for this test
    are asked in one batched call; one that still fails — and fails again when asked afresh — is
    a violation the design did not draw, so it is minimised and returned as a failure message.
    Returns ``None`` when there is nothing saved, nothing fails, or the failure does not
    reproduce. Costs no call when the database holds nothing for this test, and not even the
    case space when no database holds anything (:func:`~._casedb.may_hold_cases`), so a first
    run pays nothing for the replay. Only the suite's own cases are replayed: a failure found
    outside the suite is saved under a key of its own.
    """
    settings = settings_for(item)
    spec = run.spec
    condition = getattr(run, "condition", spec.condition)
    if settings.calls == 0 or not condition.strict or not may_hold_cases(*_where(item.config)):
        return None
    suite, wider = _spaces(spec)
    if suite is None:
        return None
    store = _store(item, run, suite)
    if not store.load(suite):
        return None
    found = _search(item, run, settings, suite, wider, [], store)
    if found is None or not found[0]["reproduced"]:
        return None
    record, seconds = found
    item.stash[MINIMAL] = record
    replayed = record["replay"]
    return (
        f"Competence condition failed for model {run.model.name!r} on {spec.family!r}\n"
        f"  condition: {condition}\n"
        f"  every instance of the design passed, but a case in the example database "
        f"({saved_by(replayed)}) fails: {replayed['summary']}\n"
        f"{minimal_text(record, seconds=seconds)}"
    )


def attach_minimal(item: pytest.Item, result: Result) -> None:
    """Put the minimal case of ``item`` (if any) on its result for the reports."""
    record = item.stash.get(MINIMAL, None)
    if record is None:
        return
    case = result.get("failing_case")
    if not case:  # the design passed; a saved case failed
        case = result["failing_case"] = {
            "condition": result["condition"],
            "level": record["params"].get("n"),
            "what": f"a case in the example database ({saved_by(record['replay'])}) fails",
            "also_failing": [],
            "instance_id": None,
            "observations": [],
        }
        result["condition_met"] = False
    case["minimal"] = record


def _spaces(spec: Any) -> tuple[Any, Any]:
    """The suite's declared case space and the family's wider one (either ``None``)."""
    return case_spaces(spec.family, max_n=max(spec.levels), presentations=spec.presentations)


def _minimise(
    item: pytest.Item, run: Any, settings: ShrinkSettings
) -> tuple[dict[str, Any], float | None] | None:
    spec, evaluation = run.spec, run.evaluation
    condition = getattr(run, "condition", spec.condition)
    if not condition.violations(run.profiles):
        return None
    suite, wider = _spaces(spec)
    if suite is None:
        return {
            "status": "unsupported",
            "verdict": f"{spec.family!r} has no case space, so its failing case was not minimised",
        }, None
    import numpy as np

    failing = sorted(
        (int(evaluation.level[k]), k)
        for k in np.flatnonzero(~evaluation.array("correct").all(axis=1)).tolist()
    )
    first = [k for _, k in failing[:_STARTS]]
    items = {k: item for k, item, _ in evaluation.rows(first)}  # regenerated from the spec
    starts = [c for c in (suite.from_item(items[k]) for k in first) if c is not None]
    found = _search(item, run, settings, suite, wider, starts, _store(item, run, suite))
    if found is None:
        return {
            "status": "no_start",
            "verdict": "not minimised: no failing instance of the "
            "design failed again as a case of the family's case space",
        }, None
    return found


def _search(
    item: pytest.Item,
    run: Any,
    settings: ShrinkSettings,
    suite: Any,
    wider: Any,
    starts: list[Any],
    store: CaseStore,
) -> tuple[dict[str, Any], float] | None:
    """Minimise in the suite's space (replaying its saved cases first), then — unless
    ``competence_shrink_outside`` is off — go on from that case in the wider space for a
    failure outside the suite: a record of its own (``outside``), never the test's case."""
    attempts = settings.attempts or run.spec.attempts
    budget = Budget(settings.calls, settings.seconds)
    asker = Asker(run.model, suite.family, attempts=attempts, budget=budget)
    if starts:
        asker.remember(run.evaluation)
    found = minimise(suite, run.model, starts, attempts=attempts, asker=asker, store=store)
    if found is None:
        return None
    record = _record(found, suite, settings, attempts, store)
    if wider is not None and settings.outside and found.reproduced:
        record["outside"] = _outside(item, run, settings, suite, wider, found, asker)
    return record, found.seconds


def _record(
    found: Minimal, space: Any, settings: ShrinkSettings, attempts: int, store: CaseStore
) -> dict[str, Any]:
    return minimal_record(
        found,
        space,
        settings=settings,
        attempts=attempts,
        database=store.databases.description,
        identity=store.identity,
    )


def _outside(
    item: pytest.Item,
    run: Any,
    settings: ShrinkSettings,
    suite: Any,
    wider: Any,
    inside: Minimal,
    asker: Asker,
) -> dict[str, Any] | None:
    """Minimise on from the suite's minimal case in ``wider`` with what is left of the budget
    (and every answer remembered); the result when it lies outside the suite, else ``None``.
    Saved only under the wider space's key, and only when outside the suite."""

    def within(case: Any) -> bool:
        return suite.from_choices(suite.choices(case)) == case

    start = wider.from_choices(wider.choices(inside.case))
    calls, seconds = settings.calls - asker.spent, settings.seconds - asker.seconds
    if start is None or calls < 2 or seconds <= 0:  # one to search, one to confirm
        return None
    store = _store(item, run, wider, keep=lambda case: not within(case))
    more = Asker(
        run.model,
        wider.family,
        attempts=asker.attempts,
        budget=Budget(calls, seconds),
        memo=asker.memo,
    )
    try:
        found = minimise(
            wider, run.model, [start], asker=more, store=store, boundary=False, confirmed=True
        )
    except (ModelRaised, InfrastructureError) as exc:
        return {"status": "stopped", "verdict": run.session.redact(str(exc))}
    if found is None or not found.reproduced or within(found.case):
        return None
    return _record(found, wider, settings, asker.attempts, store)
