"""The plugin side of minimisation: from a failed competence test to its minimal failing case.

When the plugin's check of the declared condition fails, :func:`minimise_failure` minimises the
design's smallest failing instance (see :mod:`._shrink`) within the test's budget, appends the
minimal case to the failure message, and keeps it for the reports, where it appears as
``failing_case.minimal`` (documented in ``docs/results-schema.md``). Imported only on failure.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from pytest_competence._failure import describe_case, observation_records
from pytest_competence.models.identity import model_identity

from ._asking import Asker, Budget
from ._casedb import CaseDatabases, CaseStore, case_key, open_databases
from ._hooks import ShrinkSettings, settings_for
from ._shrink import Minimal, minimise

if TYPE_CHECKING:
    from pytest_competence.result import Result

__all__ = [
    "MINIMAL",
    "attach_minimal",
    "minimal_record",
    "minimal_text",
    "minimise_failure",
    "replay_saved",
]

MINIMAL = pytest.StashKey[dict]()
_DATABASES = pytest.StashKey[CaseDatabases]()
_STARTS = 8  # failing design instances tried as starting points, smallest n first

_PHASE_NAMES = {
    "replay": "database replay",
    "start": "starting case",
    "boundary": "boundary search",
    "vocabulary": "vocabulary scan",
    "shrink": "Hypothesis shrinking",
    "confirm": "asking again",
    "check": "minimality check",
}


def _databases(config: pytest.Config) -> CaseDatabases:
    if _DATABASES not in config.stash:
        config.stash[_DATABASES] = open_databases(
            config.getini("competence_database"),
            config.getini("competence_database_shared"),
            config.rootpath,
        )
    return config.stash[_DATABASES]


def _store(item: pytest.Item, run: Any, space: Any) -> CaseStore:
    """The test's cases (every model's), seen from this model: its name and identity."""
    model_param = item.callspec.getparam("competence_model")  # type: ignore[attr-defined]
    test = item.nodeid.replace(model_param, "*", 1)
    return CaseStore(
        _databases(item.config), case_key(test, space), run.model.name, model_identity(run.model)
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
    except Exception as exc:
        return f"{message}\n  minimisation stopped by an error: {type(exc).__name__}: {exc}"
    if found is None:
        return message
    record, seconds = found
    item.stash[MINIMAL] = record
    return f"{message}\n{minimal_text(record, seconds=seconds)}"


def replay_saved(item: pytest.Item, run: Any) -> str | None:
    """A passing test asks its saved cases first: the regression corpus of earlier runs.

    Under the strict condition, the cases an earlier run (or another model) saved for this test
    are asked in one batched call; one that still fails — and fails again when asked afresh — is
    a violation the design did not draw, so it is minimised and returned as a failure message.
    Returns ``None`` when there is nothing saved, nothing fails, or the failure does not
    reproduce. Costs no call when the database holds nothing for this test.
    """
    settings = settings_for(item)
    spec = run.spec
    condition = getattr(run, "condition", spec.condition)
    make = getattr(getattr(spec.family, "strategies", None), "case_space", None)
    if settings.calls == 0 or not condition.strict or make is None:
        return None
    space = make(
        max_n=max(spec.levels), presentations=spec.presentations, vocabularies=settings.vocabulary
    )
    store = _store(item, run, space)
    if not store.load(space):
        return None
    attempts = settings.attempts or spec.attempts
    asker = Asker(
        run.model, space.family, attempts=attempts, budget=Budget(settings.calls, settings.seconds)
    )
    found = minimise(space, run.model, [], attempts=attempts, asker=asker, store=store)
    if found is None or not found.reproduced:
        return None
    record = minimal_record(
        found,
        space,
        settings=settings,
        attempts=attempts,
        database=store.databases.description,
        identity=store.identity,
    )
    item.stash[MINIMAL] = record
    replayed = record["replay"]
    origin = f" ({_saved_by(replayed)})" if replayed["saved_for"] in _SAVED_FOR else ""
    return (
        f"Competence condition failed for model {run.model.name!r} on {spec.family!r}\n"
        f"  condition: {condition}\n"
        f"  every instance of the design passed, but a case saved in the example database by an "
        f"earlier run fails: {replayed['summary']}{origin}\n"
        f"{minimal_text(record, seconds=found.seconds)}"
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
            "what": "a case saved by an earlier run fails",
            "also_failing": [],
            "instance_id": None,
            "observations": [],
        }
        result["condition_met"] = False
    case["minimal"] = record


def _minimise(
    item: pytest.Item, run: Any, settings: ShrinkSettings
) -> tuple[dict[str, Any], float | None] | None:
    spec, evaluation = run.spec, run.evaluation
    condition = getattr(run, "condition", spec.condition)
    if not condition.violations(run.profiles):
        return None
    make = getattr(getattr(spec.family, "strategies", None), "case_space", None)
    if make is None:
        return {
            "status": "unsupported",
            "verdict": f"{spec.family!r} has no case space, so its failing case was not minimised",
        }, None
    space = make(
        max_n=max(spec.levels), presentations=spec.presentations, vocabularies=settings.vocabulary
    )
    import numpy as np

    failing = sorted(
        (int(evaluation.level[k]), k)
        for k in np.flatnonzero(~evaluation.array("correct").all(axis=1)).tolist()
    )
    first = [k for _, k in failing[:_STARTS]]
    items = {k: item for k, item, _ in evaluation.rows(first)}  # regenerated from the spec
    starts = [c for c in (space.from_item(items[k]) for k in first) if c is not None]
    attempts = settings.attempts or spec.attempts
    asker = Asker(
        run.model, space.family, attempts=attempts, budget=Budget(settings.calls, settings.seconds)
    )
    asker.remember(evaluation)
    store = _store(item, run, space)
    found = minimise(space, run.model, starts, attempts=attempts, asker=asker, store=store)
    if found is None:
        return {
            "status": "no_start",
            "verdict": "not minimised: no failing instance of the "
            "design failed again as a case of the family's case space",
        }, None
    record = minimal_record(
        found,
        space,
        settings=settings,
        attempts=attempts,
        database=store.databases.description,
        identity=store.identity,
    )
    return record, found.seconds


def _status(m: Minimal) -> str:
    if not m.reproduced:
        return "not_reproduced"
    if m.proven:
        return "replayed"
    if m.exhausted:
        return "budget"
    return "minimal" if m.complete else "unstable"


def _changes(before: dict[str, Any], after: dict[str, Any]) -> str:
    """The fields of a case that differ from another's, as ``n=257, vocabulary=…``."""
    return ", ".join(f"{k}={v}" for k, v in after.items() if before.get(k) != v) or "itself"


def _replay_record(m: Minimal, space: Any) -> dict[str, Any] | None:
    if m.replay is None:
        return None
    saved, checked = m.replay.saved, m.replay.checked
    fields = saved.case.fields
    return {
        "summary": space.summary(saved.case),
        "case": fields,
        "saved_as_minimal": saved.minimal,
        "saved_for": m.replay.saved_for,
        "saved_at": saved.saved_at,
        "identity": saved.identity,
        "checked": None
        if checked is None
        else [{"case": _changes(fields, c.fields), "failed": failed} for c, failed in checked],
        "continued_to": None if m.case == saved.case else _changes(fields, m.case.fields),
    }


def minimal_record(
    m: Minimal,
    space: Any,
    *,
    settings: ShrinkSettings,
    attempts: int,
    database: str,
    identity: str | None = None,
) -> dict[str, Any]:
    """The minimal case as plain data (``failing_case.minimal`` in the results document);
    ``identity`` is the model's (:func:`~.models.identity.model_identity`)."""
    status = _status(m)
    record: dict[str, Any] = {
        "status": status,
        "reproduced": m.reproduced,
        "complete": m.complete,
        "source": m.source,
        "summary": space.summary(m.case),
        "params": space.describe(m.case),
        "case": m.case.fields,
        "instance_id": m.observations[0].prompt.instance_id,
        "observations": observation_records(m.observations),
        "asked_again": [
            [
                {
                    "presentation": o.prompt.presentation,
                    "parsed": o.parsed.answer,
                    "correct": o.correct,
                }
                for o in row
            ]
            for row in m.again
        ],
        "attempts": attempts,
        "calls": dict(m.calls, total=m.total_calls),
        "shrinking_calls": m.shrinking_calls,
        "prompts_sent": m.prompts,
        "boundary": None if m.boundary is None else m.boundary.as_dict(),
        "budget": {"calls": settings.calls, "seconds": settings.seconds},
        "database": database,
        "saved": m.saved,
        "model_identity": identity,
        "replay": _replay_record(m, space),
        "notes": list(m.notes),
    }
    record["verdict"] = _verdict(record)
    # Plain JSON types (lists, not tuples): the record crosses to the xdist controller and must
    # equal what an archived results document reloads.
    return json.loads(json.dumps(record))


def _verdict(r: dict[str, Any]) -> str:
    n, times = r["attempts"], len(r["asked_again"])
    each = f", each time the strict majority of {n} fresh sends" if n > 1 else " with fresh sends"
    if r["status"] == "not_reproduced":
        first = r["observations"]
        differing = next(
            (
                row
                for row in r["asked_again"]
                if [a["correct"] for a in row] != [o["correct"] for o in first]
                or [a["parsed"] for a in row] != [o["parsed"] for o in first]
            ),
            r["asked_again"][0] if r["asked_again"] else [],
        )
        shown = ", ".join(
            f"[{a['presentation']}] {a['parsed'] or 'invalid'} "
            f"({'right' if a['correct'] else 'wrong'})"
            for a in differing
        )
        more = f"attempts={2 * n + 1}" if n > 1 else "attempts=5"
        return (
            f"The failure did not reproduce: asked the same prompts {times} more times"
            f"{each}, the model answered differently ({shown}). Its answers change from one "
            f"send to the next, so this case is neither minimised nor saved; declare {more} "
            f"(on the marker, or @pytest.mark.competence_shrink(attempts=...)) to count a "
            f"presentation wrong only by a strict majority of sends."
        )
    again = f"Asked {times} more times{each}, it fails the same way every time."
    saved = (
        f" Saved to the example database {r['database']}; the next run replays it first."
        if r["saved"]
        else " Not saved (no writable example database)."
    )
    replayed = r["replay"]
    if r["status"] == "replayed":
        checked = r["calls"].get("check", 0)
        simpler = (
            ", ".join(f"{c['case']} passes" for c in replayed["checked"])
            or "nothing is simpler in one step"
        )
        recorded = (
            " Recorded in the example database as minimal for this model." if r["saved"] else ""
        )
        return (
            f"Regression replayed from the example database ({_saved_by(replayed)}) and "
            f"checked minimal for the model just asked: {simpler} "
            f"({_plural(checked, 'call')}), so no shrinking calls were spent. "
            f"{again}{recorded}"
        )
    head = "" if replayed is None else _continued(replayed, replaced=r["saved"]) + " "
    if r["status"] == "budget":
        b = r["budget"]
        return (
            f"{head}Minimisation stopped at its budget ({b['calls']} calls, "
            f"{b['seconds']:g} s): this is the smallest failing case found so far and may not "
            f"be minimal; raise @pytest.mark.competence_shrink(calls=...) or "
            f"competence_shrink_calls to search further. {again}{saved}"
        )
    notes = " ".join(n[0].upper() + n[1:] + "." for n in r["notes"])
    return f"{head}{notes + ' ' if notes else ''}{again}{saved}"


_SAVED_FOR = {
    "same": "for this exact model",
    "earlier": "for an earlier model under the same name",
    "name": "under this model's name (for which model exactly was not recorded)",
}


def _saved_by(replayed: dict[str, Any]) -> str:
    """Who saved a replayed case: ``saved as minimal on … for this exact model``."""
    if replayed["saved_for"] not in _SAVED_FOR:
        return "saved by an earlier run"
    what = "saved as minimal" if replayed["saved_as_minimal"] else "saved"
    when = f" on {replayed['saved_at']}" if replayed["saved_at"] else ""
    return f"{what}{when} {_SAVED_FOR[replayed['saved_for']]}"


def _continued(replayed: dict[str, Any], *, replaced: bool) -> str:
    """How minimisation went on from a replayed case that was not (or no longer) minimal."""
    failing = [c["case"] for c in replayed["checked"] or [] if c["failed"]]
    head = f"Replayed from the example database ({_saved_by(replayed)}): it still fails"
    if failing:
        head += (
            f", but {' and '.join(failing)} fails too now, so it is not minimal for the "
            f"model just asked"
        )
    if replayed["continued_to"] is None:
        return head + "."
    head += f"; minimisation continued from it to {replayed['continued_to']}."
    if replayed["saved_as_minimal"] and replaced:
        head += " The smaller case replaces it in the example database."
    return head


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


# Only a complete search, or a replayed case checked in this run, is called minimal.
_HEADS = {
    "not_reproduced": "failing case (did not reproduce)",
    "budget": "smallest failing case found within the budget (may not be minimal)",
    "unstable": "failing case (the minimised one did not reproduce)",
}


def minimal_text(r: dict[str, Any], *, seconds: float | None = None) -> str:
    """The lines a failure message shows for a minimal-case record.

    Seconds appear in the message only: the results document stays equal between runs.
    """
    if "observations" not in r:
        return f"  {r['verdict']}"
    calls = r["calls"]
    spent = ", ".join(f"{_PHASE_NAMES.get(k, k)} {v}" for k, v in calls.items() if k != "total")
    head = _HEADS.get(r["status"], "minimal failing case")
    lines = [
        f"  {head}: {r['summary']}",
        f"    {_plural(calls['total'], 'model call')} ({spent}); {r['prompts_sent']} prompts"
        + ("" if seconds is None else f", {seconds:.1f} s"),
    ]
    b = r.get("boundary")
    if b and b["trail"] and not b["complete"]:
        lines.append(
            f"    boundary search on n stopped by the budget at n={b['n']} after {b['calls']} calls"
        )
    elif b and b["trail"]:
        passes = f", n={b['n'] - 1} passes" if b["n"] > b["lo"] else f" (the smallest n={b['lo']})"
        lines.append(
            f"    boundary search on n for the failing instance's latent seed: n={b['n']} "
            f"fails{passes}, in {b['calls']} calls "
            f"(at most ⌈log₂ {b['hi'] - b['lo'] + 1}⌉"
            f" = {b['bound']})"
        )
    lines.append(describe_case(r["observations"], indent="    "))
    lines.append(f"    {r['verdict']}")
    return "\n".join(lines)
