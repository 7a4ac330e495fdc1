"""Prompt-level records: an :class:`~pytest_competence.evaluate.Evaluation` as plain JSON and back.

A record holds everything needed to recompute every figure without a model call (seeds/000
App. B.2: figures are "recomputed from archived answers"): the prompt and its hash, the raw and
parsed answers, validity and its reason, the gold answer, the presentation, the instance and θ.
Records keep the answers whole (they go to the records file, :mod:`.report.records_file`); what
a person reads — failing cases, the reports, failure messages — cuts them with :func:`shown`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from pytest_competence.evaluate import Evaluation, Observation
from pytest_competence.strategies import AnswerMap, Item, Parsed, Prompt

__all__ = ["SHOWN_CHARACTERS", "ArchivedFamily", "evaluation_from_records", "iter_records",
           "prompt_sha256", "records", "shown"]

#: Characters of an answer (or an error reason) that failing cases and reports show; a longer
#: one ends with a marker saying how many were cut. Records and the response cache keep it whole.
SHOWN_CHARACTERS = 2000


def shown(text: str | None) -> str | None:
    """``text`` as the reports keep it: at most :data:`SHOWN_CHARACTERS` characters and a
    marker ``… [N more characters cut]`` when it was longer.

    Only raw text is cut: figures come from the parsed answers, which are recorded whole.
    """
    if text is None or len(text) <= SHOWN_CHARACTERS:
        return text
    return f"{text[:SHOWN_CHARACTERS]}… [{len(text) - SHOWN_CHARACTERS} more characters cut]"


def prompt_sha256(prompt: Prompt) -> str:
    """Hash of what the model saw: system prompt and prompt text."""
    return hashlib.sha256(f"{prompt.system}\x00{prompt.text}".encode()).hexdigest()


def _record(o: Observation) -> dict[str, Any]:
    p = o.prompt
    return {
        "instance_id": p.instance_id,
        "params": dict(p.params),
        "presentation": p.presentation,
        "readout": p.readout,
        "answer_map": dict(p.answer_map.pairs),
        "prompt_sha256": prompt_sha256(p),
        "system": p.system,
        "prompt": p.text,
        "raw": o.raw,
        "parsed": o.parsed.answer,
        "valid": o.valid,
        "reason": o.parsed.reason,
        "error": o.error,
        "gold": p.gold,
        "correct": o.correct,
        "answer_space": list(p.answer_space),
        "attempts": [
            {"raw": raw, "parsed": parsed.answer, "valid": parsed.valid,
             "reason": parsed.reason}
            for raw, parsed in o.attempts
        ],
    }


def records(evaluation: Evaluation) -> list[dict[str, Any]]:
    """One record per prompt, instance by instance, presentations in design order."""
    return list(iter_records(evaluation))


def iter_records(evaluation: Evaluation) -> Iterator[dict[str, Any]]:
    """:func:`records` one at a time: what a part file is written from, never all held."""
    return (_record(o) for row in evaluation.observations for o in row)


class ArchivedFamily:
    """Stands in for the family of an archived evaluation: its name, answer space and repr."""

    def __init__(self, name: str, description: str, answer_space: Sequence[str]) -> None:
        self.name = name
        self.description = description
        self.answer_space = tuple(answer_space)

    def __repr__(self) -> str:
        return self.description

    def design(self, **_: object) -> list[Item]:
        raise TypeError("an archived family holds answers, not a generator")

    def parse(self, text: object) -> Parsed:
        raise TypeError("an archived family's answers are already parsed")


def evaluation_from_records(
    model: str, description: str, rows: Iterable[Mapping[str, Any]]
) -> Evaluation:
    """Rebuild an :class:`Evaluation` from its records (the latent instances are not needed)."""
    items: list[Item] = []
    observations: list[tuple[Observation, ...]] = []
    current: list[Observation] = []
    answer_space: tuple[str, ...] = ()
    family = description.split("(", 1)[0].lower()

    def close() -> None:
        if current:
            items.append(Item(None, tuple(o.prompt for o in current)))
            observations.append(tuple(current))

    for r in rows:
        answer_space = tuple(r["answer_space"])
        prompt = Prompt(
            family=family, instance_id=r["instance_id"], presentation=r["presentation"],
            system=r["system"], text=r["prompt"], gold=r["gold"], answer_space=answer_space,
            answer_map=AnswerMap(tuple(tuple(kv) for kv in r["answer_map"].items())),
            params=r["params"], readout=r.get("readout", "generate"),
        )
        if current and current[0].prompt.instance_id != r["instance_id"]:
            close()
            current = []
        attempts = tuple((a["raw"], Parsed(a["parsed"], a["reason"])) for a in r["attempts"])
        current.append(Observation(prompt, r["raw"], Parsed(r["parsed"], r["reason"]), attempts,
                                   r.get("error")))
    close()
    return Evaluation(model, ArchivedFamily(family, description, answer_space), tuple(items),
                      tuple(observations))
