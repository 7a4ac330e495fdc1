"""Reading an archived results document back: its shape checked, its figures checked.

:func:`check_shape` says in one line where a file stops being a results document (a record set
to ``null``, ``results`` as an object, a record without its gold answer, a JSON Lines dataset
passed by mistake) before anything is recomputed from it (:func:`check_record` checks each
record read from a records file, :mod:`._records_file`); :func:`disagreements` lists the
figures an archive states that its own records do not give back (figures edited by hand,
records removed).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = [
    "NotAResultsDocument",
    "check_record",
    "check_shape",
    "disagreements",
    "holds_records",
    "unrecomputed",
]

#: What a result needs to be recomputed and rendered, and what each of its records needs.
RESULT_FIELDS = (
    "nodeid",
    "model",
    "family",
    "test",
    "presentations",
    "levels",
    "summary",
    "instances",
    "design",
)
RECORD_FIELDS = (
    "instance_id",
    "params",
    "presentation",
    "answer_map",
    "system",
    "prompt",
    "raw",
    "parsed",
    "reason",
    "gold",
    "answer_space",
    "attempts",
)
ATTEMPT_FIELDS = ("raw", "parsed", "reason")
#: The figures compared between an archive and its recomputation.
FIGURES = ("levels", "summary", "instances")


class NotAResultsDocument(ValueError):
    """The file is not (or no longer) a results document; the message says where and why."""


def _need(value: object, kind: type | tuple[type, ...], where: str, what: str) -> None:
    if not isinstance(value, kind):
        shown = "null" if value is None else type(value).__name__
        raise NotAResultsDocument(f"{where} is {shown}, expected {what}")


def _fields(value: object, names: Sequence[str], where: str) -> None:
    _need(value, dict, where, "an object")
    assert isinstance(value, dict)
    missing = [n for n in names if n not in value]
    if missing:
        raise NotAResultsDocument(f"{where} has no {', '.join(map(repr, missing))}")


def check_shape(document: Mapping[str, Any]) -> None:
    """Raise :class:`NotAResultsDocument` at the first place ``document`` is malformed."""
    results = document.get("results")
    _need(results, list, "results", "a list of results")
    assert isinstance(results, list)
    _need(document.get("models", []), list, "models", "a list of model specs")
    pointer = document.get("records_file")
    if pointer is not None:
        _fields(pointer, ("file", "sha256", "count", "gzip"), "records_file")
    for i, result in enumerate(results):
        where = f"results[{i}]"
        _fields(result, RESULT_FIELDS, where)
        _fields(result["design"], ("seed", "require"), f"{where}.design")
        _need(result["summary"], dict, f"{where}.summary", "an object")
        records = result.get("records")
        if records is None:
            continue
        if pointer is not None:  # the records are in the records file, read as a stream
            _fields(records, ("file", "count"), f"{where}.records")
            _need(records["count"], int, f"{where}.records.count", "a number of records")
            continue
        _need(records, list, f"{where}.records", "a list of records")
        for j, record in enumerate(records):
            check_record(record, f"{where}.records[{j}]")


def check_record(record: object, where: str) -> None:
    """Raise :class:`NotAResultsDocument` when ``record`` lacks what a recomputation reads."""
    _fields(record, RECORD_FIELDS, where)
    assert isinstance(record, dict)
    _need(record["answer_map"], dict, f"{where}.answer_map", "an object")
    _need(record["attempts"], list, f"{where}.attempts", "a list")
    for k, attempt in enumerate(record["attempts"]):
        _fields(attempt, ATTEMPT_FIELDS, f"{where}.attempts[{k}]")


def holds_records(result: Mapping[str, Any]) -> bool:
    """Whether ``result`` has prompt-level records: in the document (older archives) or
    counted in the records file."""
    records = result.get("records")
    return bool(records.get("count")) if isinstance(records, dict) else bool(records)


def _differences(archived: object, recomputed: object, path: str) -> Iterator[str]:
    if isinstance(archived, dict) and isinstance(recomputed, dict):
        for key in sorted(set(archived) | set(recomputed), key=str):
            yield from _differences(archived.get(key), recomputed.get(key), f"{path}.{key}")
    elif (
        isinstance(archived, list)
        and isinstance(recomputed, list)
        and (len(archived) == len(recomputed))
    ):
        for k, (a, b) in enumerate(zip(archived, recomputed)):
            yield from _differences(a, b, f"{path}[{k}]")
    elif isinstance(archived, float) and isinstance(recomputed, float):
        if not (
            archived == recomputed
            or math.isclose(archived, recomputed, rel_tol=1e-9)
            or (math.isnan(archived) and math.isnan(recomputed))
        ):
            yield f"{path}: archived {archived!r}, recomputed {recomputed!r}"
    elif archived != recomputed:

        def short(v: object) -> str:
            text = repr(v)
            return text if len(text) <= 60 else text[:57] + "..."

        yield f"{path}: archived {short(archived)}, recomputed {short(recomputed)}"


def disagreements(archived: Mapping[str, Any], recomputed: Mapping[str, Any]) -> list[str]:
    """The figures of ``archived`` that its recomputation does not give back, one per line."""
    out = []
    by_node = {r["nodeid"]: r for r in recomputed["results"]}
    for result in archived["results"]:
        again = by_node.get(result["nodeid"], {})
        if not holds_records(result):
            continue
        for name in FIGURES:
            for line in _differences(result.get(name), again.get(name), name):
                out.append(f"{result['test']} [{result['model']}] {line}")
    return out


def unrecomputed(archived: Mapping[str, Any]) -> list[str]:
    """The results whose figures could not be recomputed (archived without records)."""
    return [f"{r['test']} [{r['model']}]" for r in archived["results"] if not holds_records(r)]
