"""Prompt-level records: an :class:`~pytest_competence.engine.evaluate.Evaluation` as plain JSON and back.

A record holds everything needed to recompute every figure without a model call (CBE paper, arXiv:2610.22894
App. B.2: figures are "recomputed from archived answers"): the prompt and its hash, the raw and
parsed answers, validity and its reason, the gold answer, the presentation, the instance and θ —
and, for an answer from candidate scoring, each candidate's score (``scores``: candidate →
log-probability, ``null`` for one the model gave none), which the output decomposition reads.
Records keep the answers whole (they go to the records file, :mod:`.report._records_file`); what
a person reads — failing cases, the reports, failure messages — cuts them with :func:`shown`.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_competence.engine.evaluation import Evaluation, Reduction
from pytest_competence.protocol import AnswerMap, Item, Observation, Parsed, Prompt

__all__ = [
    "SHOWN_CHARACTERS",
    "ArchivedFamily",
    "RecordsPart",
    "evaluation_from_records",
    "prompt_sha256",
    "records",
    "shown",
]

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
    record: dict[str, Any] = {
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
            {"raw": raw, "parsed": parsed.answer, "valid": parsed.valid, "reason": parsed.reason}
            for raw, parsed in o.attempts
        ],
    }
    if o.scores is not None:  # strict JSON: a candidate with no score is null
        record["scores"] = {
            a: v if math.isfinite(v) else None for a, v in zip(p.answer_space, o.scores)
        }
    return record


def records(evaluation: Evaluation) -> list[dict[str, Any]]:
    """One record per prompt, instance by instance, presentations in design order (the rows are
    rebuilt: a run writes its records chunk by chunk instead, through :class:`RecordsPart`)."""
    return [_record(o) for _, _, row in evaluation.rows() for o in row]


class RecordsPart:
    """One test's prompt-level records, appended chunk by chunk to a JSON Lines part file.

    Each line is one record (:func:`_record`), with every secret in ``secrets`` redacted as it is
    written; the file is written under a temporary name and renamed by :meth:`close`, so a part
    file that exists is whole. ``name`` is the part file's name in ``parts``.
    """

    def __init__(self, parts: Path, label: str, secrets: Sequence[str] = ()) -> None:
        self.name = hashlib.sha256(label.encode()).hexdigest()[:24] + ".jsonl"
        self.path = parts / self.name
        self._temp = parts / f".{self.name}.{os.getpid()}.tmp"
        self._file = open(self._temp, "w", encoding="utf-8", errors="surrogatepass")
        self._secrets = list(secrets)
        self.count = 0

    def append(self, rows: Iterable[Sequence[Observation]]) -> None:
        """Write the records of ``rows`` (one row of observations per instance)."""
        from pytest_competence.engine.files import json_text
        from pytest_competence.engine.redaction import redact_all

        lines = []
        for row in rows:
            for o in row:
                lines.append(json_text(redact_all(_record(o), self._secrets)) + "\n")
        self._file.write("".join(lines))
        self.count += len(lines)

    def close(self) -> str:
        """Finish the file; return its name."""
        if not self._file.closed:
            self._file.close()
            os.replace(self._temp, self.path)
        return self.name

    def discard(self) -> None:
        """Drop a part file that will not be finished (the evaluation failed)."""
        if not self._file.closed:
            self._file.close()
            self._temp.unlink(missing_ok=True)


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
    model: str,
    description: str,
    rows: Iterable[Mapping[str, Any]] | Callable[[], Iterable[Mapping[str, Any]]],
) -> Evaluation:
    """Rebuild an :class:`Evaluation` from its records (the latent instances are not needed).

    ``rows`` is read once, as a stream, into the evaluation's arrays. The evaluation rebuilds its
    rows (:meth:`Evaluation.rows`, which a family's metrics — :func:`~.analysis.family_metrics` —
    read) from ``rows`` again when it is a function that reads them again (e.g. from a file) or a
    list; from a one-pass stream it keeps them only for a family that has such an analysis.
    """
    family = description.split("(", 1)[0].lower()
    again = rows if callable(rows) else (lambda: rows) if isinstance(rows, Sequence) else None
    stream = rows() if callable(rows) else rows
    held: list[tuple[Item, tuple[Observation, ...]]] | None = (
        [] if again is None and _has_metrics(family) else None
    )
    archived = ArchivedFamily(family, description, ())
    reduction = Reduction(model, archived, (), bounded=True)
    for items, observations in _chunks(_instances(family, stream)):
        archived.answer_space = items[-1].prompts[-1].answer_space
        reduction.add(items, observations)
        if held is not None:
            held.extend(zip(items, observations))

    def source() -> Iterable[tuple[Item, tuple[Observation, ...]]]:
        if held is not None:
            return held
        assert again is not None
        return _instances(family, again())

    return reduction.finish(source if again is not None or held is not None else None)


def _has_metrics(family: str) -> bool:
    """Whether the family called ``family`` has metrics of its own (beyond the default's none)."""
    from pytest_competence.engine.analysis import family_metrics
    from pytest_competence.protocol import Family

    metrics, default = family_metrics(family), getattr(Family, "metrics", None)
    return metrics is not None and getattr(metrics, "__func__", metrics) is not getattr(
        default, "__func__", default
    )


def _instances(
    family: str, rows: Iterable[Mapping[str, Any]]
) -> Iterator[tuple[Item, tuple[Observation, ...]]]:
    """Records grouped into instances: consecutive records of one instance id."""
    current: list[Observation] = []
    for r in rows:
        answer_space = tuple(r["answer_space"])
        prompt = Prompt(
            family=family,
            instance_id=r["instance_id"],
            presentation=r["presentation"],
            system=r["system"],
            text=r["prompt"],
            gold=r["gold"],
            answer_space=answer_space,
            answer_map=AnswerMap(tuple(tuple(kv) for kv in r["answer_map"].items())),
            params=r["params"],
            readout=r.get("readout", "generate"),
        )
        if current and current[0].prompt.instance_id != r["instance_id"]:
            yield Item(None, tuple(o.prompt for o in current)), tuple(current)
            current = []
        attempts = tuple((a["raw"], Parsed(a["parsed"], a["reason"])) for a in r["attempts"])
        scored = r.get("scores")
        scores = (
            None
            if not isinstance(scored, dict)
            else tuple(
                -math.inf if scored.get(a) is None else float(scored[a]) for a in answer_space
            )
        )
        current.append(
            Observation(
                prompt,
                r["raw"],
                Parsed(r["parsed"], r["reason"]),
                attempts,
                r.get("error"),
                scores,
            )
        )
    if current:
        yield Item(None, tuple(o.prompt for o in current)), tuple(current)


def _chunks(
    instances: Iterable[tuple[Item, tuple[Observation, ...]]], size: int = 2000
) -> Iterator[tuple[list[Item], list[tuple[Observation, ...]]]]:
    items: list[Item] = []
    observations: list[tuple[Observation, ...]] = []
    for item, observed in instances:
        items.append(item)
        observations.append(observed)
        if len(items) >= size:
            yield items, observations
            items, observations = [], []
    if items:
        yield items, observations
