"""``competence merge``: the archives of several runs — the shards of one suite — as one.

``pytest --competence-shard=K/N --competence-json=shard-K.json`` writes one archive per shard
(:mod:`pytest_competence.engine.shard`); ``competence merge -o all.json shard-*.json`` writes the
archive and the records file a single run of the whole suite writes. Each result and each n/a
pair is taken as archived; the comparisons between models (McNemar, bootstrap Δ) and the
document's warnings are recomputed over all of them (:func:`~pytest_competence.report.
build_document`), so a test whose models ran on different shards is compared as in one run;
the gates, computed per test × model against the same baseline, are kept. The records are
copied line by line from each archive's records file (checked against its sha256) into one,
in document order: the merge holds the documents, never the records, in memory.

It refuses, in one line naming the test and the archives (:class:`MergeError`): another schema
or another version of pytest-competence; the same test with two designs (their fingerprints);
one model name bound to two model identities (the checkpoint, server or code behind the name
changed); the same test × model twice with different results; archives computed with
different bootstrap resamples. The same test × model twice, identical, is kept once, with a
note.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pytest_competence._version import __version__
from pytest_competence.engine.analysis import SCHEMA

__all__ = ["MergeError", "Merged", "add_parser", "merge", "merge_documents", "run"]

_T = TypeVar("_T")


class MergeError(ValueError):
    """The archives cannot be merged into one run's; the message says why, in one line."""


@dataclass
class Merged:
    """The merged document (records not yet written), and what the merge noticed."""

    document: dict[str, Any]
    sources: list[int]  # per result of the document, the archive its records come from
    notes: list[str] = field(default_factory=list)


@dataclass
class _Seen:
    """The first archive that held a test × model, a model or a test, and what it held."""

    path: str
    value: Any
    test: str = ""


def merge_documents(
    documents: Sequence[Mapping[str, Any]],
    paths: Sequence[str],
    *,
    same_model: Iterable[str] = (),
) -> Merged:
    """The document of a single run holding every result and n/a pair of ``documents`` (read
    from ``paths``, which messages name): comparisons and warnings recomputed. Raises
    :class:`MergeError`; ``same_model`` names models whose identities may differ."""
    from pytest_competence.report import build_document

    merging = _Merging(paths, set(same_model))
    for k, document in enumerate(documents):
        merging.add(k, document)
    document = build_document(
        [r for r, _ in merging.results.values()],
        models=merging.models,
        bootstrap=merging.resamples.value if merging.resamples is not None else 2000,
        not_applicable=[seen.value for seen in merging.skipped.values()],
    )
    origin = {nodeid: k for nodeid, (_, k) in merging.results.items()}
    return Merged(document, [origin[r["nodeid"]] for r in document["results"]], merging.notes)


class _Merging:
    """What the archives merged so far hold, each checked against the ones before it."""

    def __init__(self, paths: Sequence[str], lenient: set[str]) -> None:
        self.paths, self.lenient = paths, lenient
        self.results: dict[str, tuple[dict[str, Any], int]] = {}  # node id → result, archive
        self.skipped: dict[str, _Seen] = {}  # node id → the n/a pair
        self.identities: dict[str, _Seen] = {}  # model → its identity
        self.designs: dict[str, _Seen] = {}  # test → its design's fingerprint
        self.resamples: _Seen | None = None
        self.models: list[str] = []
        self.notes: list[str] = []

    def add(self, k: int, document: Mapping[str, Any]) -> None:
        path = self.paths[k]
        _check_version(document, path)
        self.models += [m for m in document.get("models", []) if m not in self.models]
        B = _bootstrap(document)
        if B is not None:
            if self.resamples is not None and self.resamples.value != B:
                raise MergeError(
                    f"{path} was computed with {B} bootstrap resamples, {self.resamples.path} "
                    f"with {self.resamples.value} (competence_bootstrap): run every shard with "
                    f"one setting"
                )
            self.resamples = self.resamples or _Seen(path, B)
        for result in document["results"]:
            self._identity(result, path)
            self._design(result, path)
            self._result(result, k)
        for pair in document.get("not_applicable", []):
            self._pair(pair, path)

    def _identity(self, result: Mapping[str, Any], path: str) -> None:
        """One model name, one model: the identities its results recorded agree."""
        model, identity = result["model"], result.get("model_identity")
        seen = self.identities.setdefault(model, _Seen(path, identity, result["test"]))
        if seen.value is None:  # not known there: the first known one stands
            seen.value, seen.path, seen.test = identity, path, result["test"]
        elif identity is not None and identity != seen.value and model not in self.lenient:
            raise MergeError(
                f"model {model!r} is two models: {result['test']} [{model}] in {path} was "
                f"answered by identity {identity}, {seen.test} in {seen.path} by {seen.value} "
                f"(the checkpoint, server or code behind the name differs); merge one model's "
                f"runs, or pass --same-model {model} if they are one"
            )

    def _design(self, result: Mapping[str, Any], path: str) -> None:
        """One test, one design, whichever model answered it."""
        from pytest_competence.engine.gate import archived_fingerprint, design_differences

        fingerprint = archived_fingerprint(result)
        first = self.designs.setdefault(result["test"], _Seen(path, fingerprint))
        differ = design_differences(first.value, fingerprint, (first.path, path))
        if differ:
            raise MergeError(
                f"{result['test']} [{result['model']}]: {path} holds another design than "
                f"{first.path} (" + "; ".join(differ) + "); merge the shards of one suite, run "
                "with one version"
            )

    def _result(self, result: dict[str, Any], k: int) -> None:
        nodeid, path = result["nodeid"], self.paths[k]
        where = f"{result['test']} [{result['model']}]"
        if nodeid in self.skipped:
            raise MergeError(
                f"{where}: a result in {path}, but n/a in {self.skipped[nodeid].path}; merge "
                f"runs of one model"
            )
        if nodeid not in self.results:
            self.results[nodeid] = (result, k)
            return
        kept, j = self.results[nodeid]
        if _comparable(kept) != _comparable(result):
            raise MergeError(
                f"{where}: {self.paths[j]} and {path} hold different results for it (one "
                f"design, other answers); merge only one of them"
            )
        self.notes.append(f"{where}: in {self.paths[j]} and {path}, identical: kept once")

    def _pair(self, pair: dict[str, Any], path: str) -> None:
        nodeid, where = pair["nodeid"], f"{pair['test']} [{pair['model']}]"
        if nodeid in self.results:
            held = self.paths[self.results[nodeid][1]]
            raise MergeError(
                f"{where}: n/a in {path}, but a result in {held}; merge runs of one model"
            )
        if nodeid not in self.skipped:
            self.skipped[nodeid] = _Seen(path, pair)
            return
        first = self.skipped[nodeid].path
        if self.skipped[nodeid].value != pair:
            raise MergeError(
                f"{where}: n/a in {first} and {path} for other reasons; merge only one of them"
            )
        self.notes.append(f"{where}: n/a in {first} and {path}: kept once")


def _check_version(document: Mapping[str, Any], path: str) -> None:
    if document.get("schema") != SCHEMA:
        raise MergeError(
            f"{path}: schema {document.get('schema')!r}, expected {SCHEMA!r}; rewrite it with "
            f"this version first: competence report {path} --json NEW.json"
        )
    version = document.get("plugin_version")
    if version != __version__:
        raise MergeError(
            f"{path} was written by pytest-competence {version}, this is {__version__}: "
            f"rewrite it with this version first (competence report {path} --json NEW.json), "
            f"or merge with the version that wrote it"
        )


def _bootstrap(document: Mapping[str, Any]) -> int | None:
    """The bootstrap resamples the document was computed with (``competence_bootstrap``): as
    its comparisons or its results record them; 0 when results with instances hold none."""
    for comparison in document.get("comparisons", []):
        return int(comparison["bootstrap"]["B"])
    for result in document["results"]:
        if result["summary"].get("bootstrap"):
            return int(result["summary"]["bootstrap"]["B"])
    if any(result["instances"].get("level") for result in document["results"]):
        return 0  # a result with instances holds no interval only when none was asked
    return None


def _comparable(result: Mapping[str, Any]) -> dict[str, Any]:
    """A result without where its records lie (their count stays)."""
    records = result.get("records")
    count = records.get("count") if isinstance(records, dict) else records
    return {**result, "records": count}


def _records(
    merged: Merged, documents: Sequence[Mapping[str, Any]], paths: Sequence[str]
) -> Iterator[tuple[str, str, Iterator[bytes]]]:
    """Each merged result's record lines, from the archive that held it, in document order:
    one stream per archive, read forward (each archive's results are in node id order, as the
    merged document's are); every records file is read to its end, so each is checked whole."""
    from pytest_competence.report._records_file import record_lines

    streams = [
        _named(record_lines(document, Path(path).parent), path)
        for document, path in zip(documents, paths)
    ]
    for result, k in zip(merged.document["results"], merged.sources):
        for held, lines in streams[k]:
            if held["nodeid"] == result["nodeid"]:
                if lines is not None:
                    yield result["nodeid"], result["model"], _named(lines, paths[k])
                break
    for stream in streams:
        for _ in stream:
            pass


def _named(stream: Iterator[_T], path: str) -> Iterator[_T]:
    """``stream``, its records file's errors named by the archive that points to it."""
    from pytest_competence.report._records_file import RecordsFileError

    try:
        yield from stream
    except RecordsFileError as exc:
        raise MergeError(f"{path}: {exc}") from None


def merge(
    paths: Sequence[str],
    json_path: str,
    *,
    records_path: str | None = None,
    same_model: Iterable[str] = (),
) -> tuple[Merged, str]:
    """Merge the archives at ``paths`` into ``json_path`` and its records file (``records_path``,
    by default beside it), each written whole or not at all. Returns the merge and the records
    file's path; raises :class:`MergeError`, or ``OSError`` for a file that cannot be read or
    written."""
    from pytest_competence.engine.files import write_json_atomic
    from pytest_competence.engine.settings import records_name
    from pytest_competence.report import load_document
    from pytest_competence.report._archive import NotAResultsDocument
    from pytest_competence.report._records_file import pointers, write_records_file

    documents = []
    for path in paths:
        try:
            documents.append(load_document(path))
        except NotAResultsDocument as exc:
            raise MergeError(str(exc)) from None
        except OSError as exc:
            raise MergeError(f"{path}: {exc.strerror or exc}") from None
    merged = merge_documents(documents, paths, same_model=same_model)
    records = records_path or records_name(json_path)
    sha256, counts = write_records_file(records, _records(merged, documents, paths))
    merged.document = pointers(merged.document, json_path, records, sha256, counts)
    write_json_atomic(json_path, merged.document, indent=1)
    return merged, records


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``merge`` subcommand on the ``competence`` parser."""
    command = sub.add_parser(
        "merge",
        help="Merge the archives of several runs (the shards of a suite) into one",
        description="Write one results document and one records file equal to a single run's "
        "from the --competence-json archives of several runs, e.g. the shards of a suite "
        "(pytest --competence-shard=K/N): comparisons between models recomputed, records "
        "copied as a stream.",
    )
    command.add_argument("archives", nargs="+", metavar="ARCHIVE", help="Results documents")
    command.add_argument(
        "-o", "--output", required=True, metavar="OUT.json", help="The merged results document"
    )
    command.add_argument(
        "--records",
        metavar="PATH",
        help="The merged records file (a name ending in .gz is gzip-compressed; default: the "
        "output's name with .records.jsonl)",
    )
    command.add_argument(
        "--same-model",
        action="append",
        default=[],
        metavar="NAME",
        help="Merge this model's results though their model identities differ (e.g. a "
        "checkpoint copied to each machine: its files' times differ); repeatable",
    )


def run(args: argparse.Namespace, say: Any) -> int:
    """``competence merge``: 0, or 2 with one line (``say``) when the archives cannot merge."""
    from pytest_competence.engine.settings import output_path_problem, records_path_problem

    inputs = {os.path.abspath(p) for p in args.archives}
    problem = (
        output_path_problem("-o", args.output)
        or (args.records and output_path_problem("--records", args.records))
        or records_path_problem("--records", args.records, "-o", args.output)
    )
    if not problem and os.path.abspath(args.output) in inputs:
        problem = f"-o {args.output} is one of the archives merged; write the merge to a new file"
    if problem:
        say(f"competence merge: {problem}")
        return 2
    try:
        merged, records = merge(
            args.archives, args.output, records_path=args.records, same_model=args.same_model
        )
    except (MergeError, OSError) as exc:
        say(f"competence merge: {exc}")
        return 2
    document = merged.document
    print(
        f"merged {len(args.archives)} archive(s): {len(document['results'])} result(s), "
        f"{len(document['not_applicable'])} n/a pair(s), "
        f"{document['records_file']['count']} record(s), "
        f"{len(document['comparisons'])} comparison(s)"
    )
    print(f"competence JSON: {args.output}")
    print(f"competence records: {records}")
    for note in merged.notes:
        say(f"competence merge: {note}")
    return 0
