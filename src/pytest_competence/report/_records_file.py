"""The records file: every prompt-level record of a results document, one JSON line each.

The results document (``--competence-json report.json``) holds the figures; the records go to a
file next to it, ``report.records.jsonl`` by default (``--competence-records PATH``; a name
ending in ``.gz`` is gzip-compressed). Each line is one record tagged with the result it belongs
to — ``{"nodeid": …, "model": …, <the record's fields>}`` — the results in document order, so a
reader takes them result by result in one pass. The document names the file, its sha256 and each
result's count (:func:`pointers`): a records file of another run, a truncated one or one edited
by hand is refused in one line (:class:`RecordsFileError`) before anything is recomputed.

Nothing here holds more than one line: part files and archives are copied line by line (the
tag spliced in front of each line, no JSON parsed), compressed on the fly when asked, and read
back as a stream.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import itertools
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, TypeVar

from pytest_competence.report._archive import NotAResultsDocument, check_record

__all__ = [
    "RecordsFileError",
    "archived_records",
    "part_lines",
    "pointers",
    "read_records",
    "record_lines",
    "write_records_file",
]

#: Bytes read at a time when hashing a records file.
_CHUNK = 1 << 20
_T = TypeVar("_T")


class RecordsFileError(NotAResultsDocument):
    """The records file a document points to is missing, truncated, or not that document's."""


def part_lines(path: Path) -> Iterator[bytes]:
    """The record lines of a part file (JSON Lines, one record a line), blank lines skipped."""
    with open(path, "rb") as part:
        for line in part:
            if line.strip():
                yield line


class _Hashing(io.RawIOBase):
    """A binary sink that hashes what goes through it to the file below."""

    def __init__(self, target: IO[bytes]) -> None:
        self.target = target
        self.digest = hashlib.sha256()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.digest.update(data)
        return self.target.write(data)


def _tag(nodeid: str, model: str) -> bytes:
    from pytest_competence.engine.files import json_text

    return f'{{"nodeid": {json_text(nodeid)}, "model": {json_text(model)}'.encode()


def write_records_file(
    path: str | os.PathLike[str], sources: Iterable[tuple[str, str, Iterable[bytes]]]
) -> tuple[str, dict[str, int]]:
    """Write each ``(nodeid, model, lines)`` source's record lines, tagged, to ``path`` (gzip
    when it ends in ``.gz``), written whole or not at all; the sha256 of the bytes written and
    each node id's count of records."""
    from pytest_competence.engine.files import atomic_binary

    counts: dict[str, int] = {}
    with atomic_binary(path) as raw:
        hashing = _Hashing(raw)
        sink: io.BufferedIOBase
        if os.fspath(path).endswith(".gz"):  # mtime 0: the same records, the same bytes;
            # level 6 (gzip's own default): nearly level 9's size at several times its speed
            sink = gzip.GzipFile(filename="", fileobj=hashing, mode="wb", mtime=0, compresslevel=6)
        else:
            sink = io.BufferedWriter(hashing, buffer_size=_CHUNK)
        with sink:
            for nodeid, model, lines in sources:
                tag, count = _tag(nodeid, model), 0
                for line in lines:
                    body = line.strip()
                    if not body.startswith(b"{"):
                        raise ValueError(
                            f"records of {nodeid}: line {count + 1} is not a JSON object"
                        )
                    # '{' + the tag, then the record's own fields (none for an empty record)
                    rest = body[1:].lstrip()
                    sink.write(tag + (b"" if rest.startswith(b"}") else b", ") + rest + b"\n")
                    count += 1
                counts[nodeid] = counts.get(nodeid, 0) + count
    return hashing.digest.hexdigest(), counts


def pointers(
    document: Mapping[str, Any],
    json_path: str | os.PathLike[str],
    records_path: str | os.PathLike[str],
    sha256: str,
    counts: Mapping[str, int],
) -> dict[str, Any]:
    """``document`` pointing to its records file: ``records_file`` (``file`` relative to the
    JSON's folder, ``sha256``, ``count``, ``gzip``) and, on each result with records, ``records``
    (``file`` and ``count``)."""
    file = os.path.relpath(
        os.path.abspath(records_path), os.path.dirname(os.path.abspath(json_path))
    )
    results = []
    for result in document["results"]:
        result = {k: v for k, v in result.items() if k != "records"}
        if counts.get(result["nodeid"]):
            result["records"] = {"file": file, "count": counts[result["nodeid"]]}
        results.append(result)
    return {
        **document,
        "results": results,
        "records_file": {
            "file": file,
            "sha256": sha256,
            "count": sum(counts.values()),
            "gzip": os.fspath(records_path).endswith(".gz"),
        },
    }


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as data:
        for chunk in iter(lambda: data.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _opened(document: Mapping[str, Any], folder: Path) -> tuple[IO[bytes], str]:
    """The document's records file, checked against its sha256, open for reading."""
    pointer = document["records_file"]
    path = folder / pointer["file"]
    if not path.is_file():
        raise RecordsFileError(
            f"records file {path} is missing: the document counts "
            f"{pointer['count']} records there; keep the records file next "
            f"to the JSON it belongs to"
        )
    if _sha256(path) != pointer["sha256"]:
        raise RecordsFileError(
            f"records file {path} is not the one this document was written "
            f"with (sha256 differs: truncated, edited, or of another run)"
        )
    return (gzip.open(path, "rb") if pointer["gzip"] else open(path, "rb")), str(path)


def read_records(
    document: Mapping[str, Any], folder: str | os.PathLike[str]
) -> Iterator[tuple[dict[str, Any], Iterable[dict[str, Any]] | None]]:
    """Each result of ``document`` with its records (``None`` when it holds none), in document
    order: the records a list (an archive that holds them) or a stream read from the records
    file, which must be consumed before the next result is taken."""
    if "records_file" not in document:
        for result in document["results"]:
            yield result, result.get("records") or None
        return
    yield from _per_result(document, Path(folder), _result_records)


def _per_result(
    document: Mapping[str, Any], folder: Path, stream: Callable[..., Iterator[_T]]
) -> Iterator[tuple[dict[str, Any], Iterator[_T] | None]]:
    """Each result with ``stream(result, count, lines, name)`` over its lines of the records
    file (checked against its sha256 first), drained before the next result is taken."""
    handle, name = _opened(document, folder)
    with handle:
        lines = enumerate(handle, 1)
        for result in document["results"]:
            pointer = result.get("records")
            if not isinstance(pointer, dict) or not pointer.get("count"):
                yield result, None
                continue
            records = stream(result, pointer["count"], lines, name)
            yield result, records
            for _ in records:  # what the caller left unread
                pass
        for number, _ in lines:
            raise RecordsFileError(
                f"records file {name}: line {number} is past the last record "
                f"the document counts ({document['records_file']['count']})"
            )


def record_lines(
    document: Mapping[str, Any], folder: str | os.PathLike[str]
) -> Iterator[tuple[dict[str, Any], Iterator[bytes] | None]]:
    """As :func:`read_records`, each record as its line with the result's tag taken off: the
    bytes :func:`write_records_file` takes back, so a copy is byte for byte and no JSON is
    parsed (``competence merge`` copies records this way). A line of another result, or one
    too few, is a :class:`RecordsFileError`; a document without a records file has none."""
    if "records_file" not in document:
        for result in document["results"]:
            yield result, None
        return
    yield from _per_result(document, Path(folder), _untagged)


def _untagged(
    result: Mapping[str, Any], count: int, lines: Iterator[tuple[int, bytes]], name: str
) -> Iterator[bytes]:
    nodeid, tag, read = result["nodeid"], _tag(result["nodeid"], result["model"]), 0
    for number, line in itertools.islice(lines, count):
        rest = line[len(tag) :] if line.startswith(tag) else b""
        if not rest.startswith((b", ", b"}")):
            raise RecordsFileError(
                f"records file {name}: line {number} is not a record of {nodeid}: the records "
                f"file does not match the document"
            )
        read += 1
        yield b"{" + (rest[2:] if rest.startswith(b", ") else rest)
    if read < count:
        raise RecordsFileError(
            f"records file {name} ends after {read} of the {count} records of {nodeid}: truncated"
        )


def _result_records(
    result: Mapping[str, Any], count: int, lines: Iterator[tuple[int, bytes]], name: str
) -> Iterator[dict[str, Any]]:
    nodeid, read = result["nodeid"], 0
    for number, line in itertools.islice(lines, count):
        where = f"records file {name}: line {number}"
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise RecordsFileError(f"{where} is not JSON ({exc})") from None
        if not isinstance(record, dict) or record.pop("nodeid", None) != nodeid:
            raise RecordsFileError(
                f"{where} is not a record of {nodeid}: the records file does not match the document"
            )
        record.pop("model", None)
        check_record(record, where)
        read += 1
        yield record
    if read < count:
        raise RecordsFileError(
            f"records file {name} ends after {read} of the {count} records of {nodeid}: truncated"
        )


def archived_records(
    document: Mapping[str, Any], folder: str | os.PathLike[str]
) -> Iterator[tuple[str, str, Iterable[bytes]]]:
    """The records of an archived document as :func:`write_records_file` sources: what
    ``competence report --json`` writes next to the recomputed document."""
    from pytest_competence.engine.files import json_text

    for result, rows in read_records(document, folder):
        if rows is not None:
            yield result["nodeid"], result["model"], (json_text(r).encode() for r in rows)
