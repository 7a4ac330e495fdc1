"""How a minimal failing case reads: as data for the reports, and as lines of a failure message.

:func:`minimal_record` turns a :class:`~._shrink.Minimal` into plain data (``failing_case.minimal``
in the results document, documented in ``docs/results-schema.md``); :func:`minimal_text` renders
such a record as the lines a failure message shows, with a verdict in words: whether it
reproduced, whether the search was complete, where it was saved and who saved a replayed case.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_competence.engine.failure import describe_case, observation_records

from ._budget import ShrinkSettings
from ._shrink import Minimal

__all__ = ["minimal_record", "minimal_text", "outside_text", "saved_by"]

_PHASE_NAMES = {
    "replay": "database replay",
    "start": "starting case",
    "boundary": "boundary search",
    "vocabulary": "vocabulary scan",
    "shrink": "Hypothesis shrinking",
    "confirm": "asking again",
    "check": "minimality check",
}


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
        "origin": None if saved.origin is None else dict(saved.origin, this_run=saved.this_run),
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
            f"Regression replayed from the example database ({saved_by(replayed)}) and "
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


def saved_by(replayed: dict[str, Any]) -> str:
    """Who saved a replayed case: ``saved as minimal on … for this exact model``, ``saved
    earlier in this run for ref:other``, ``saved on … for ref:other``."""
    origin = replayed.get("origin") or {}
    if origin.get("this_run"):
        when = " earlier in this run"
    elif replayed["saved_for"] in _SAVED_FOR and replayed["saved_at"]:
        when = f" on {replayed['saved_at']}"
    elif origin.get("saved_at"):
        when = f" on {origin['saved_at']}"
    else:
        when = ""
    if replayed["saved_for"] in _SAVED_FOR:
        what = "saved as minimal" if replayed["saved_as_minimal"] else "saved"
        return f"{what}{when} {_SAVED_FOR[replayed['saved_for']]}"
    if origin.get("model"):
        return f"saved{when} for {origin['model']}"
    return "saved by an earlier run"


def _continued(replayed: dict[str, Any], *, replaced: bool) -> str:
    """How minimisation went on from a replayed case that was not (or no longer) minimal."""
    failing = [c["case"] for c in replayed["checked"] or [] if c["failed"]]
    head = f"Replayed from the example database ({saved_by(replayed)}): it still fails"
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
    outside = r.get("outside")
    if outside:
        lines.append(outside_text(outside))
    return "\n".join(lines)


def outside_text(o: dict[str, Any]) -> str:
    """The lines of a failure found outside the suite's declared design space (a separate
    finding, under the test's minimal case), or of the search for one that stopped."""
    if "observations" not in o:
        return f"  the search outside this suite stopped: {o['verdict']}"
    calls = o["calls"]["total"]
    kept = (
        f"saved to {o['database']} under a key of its own: this suite does not replay it, "
        f"the next search outside it starts from it"
        if o["saved"]
        else "not saved"
    )
    complete = "" if o["status"] == "minimal" else " (the budget ended the search)"
    return "\n".join(
        [
            f"  also fails outside this suite: {o['summary']}",
            f"    a case this suite's design cannot draw, found in {_plural(calls, 'more call')}"
            f"{complete}; not the test's failing case, and {kept}",
            describe_case(o["observations"], indent="    "),
        ]
    )
