"""Reports: the results document (versioned JSON), its records file, and its renderings.

:func:`build_document` assembles one JSON-able document of figures from the per-test results;
the prompt-level records go to a records file next to the JSON (:mod:`._records_file`), which the
document points to. The terminal, Markdown and HTML renderers read only the document, so
``competence report`` can re-render everything from an archive with no model calls, reading the
records file as a stream to recompute the figures.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_competence._version import __version__
from pytest_competence.engine.analysis import SCHEMA

__all__ = [
    "READABLE_SCHEMAS",
    "SCHEMA",
    "RecordSource",
    "build_document",
    "load_document",
    "recompute",
    "write_outputs",
]

#: The schemas :func:`load_document` reads: this one, and /1, whose results embed their records.
READABLE_SCHEMAS = ("pytest-competence/results/1", SCHEMA)

#: One result's records as the records file takes them: node id, model, and JSON lines.
RecordSource = tuple[str, str, Iterable[bytes]]


def build_document(
    results: Sequence[Mapping[str, Any]],
    *,
    models: Sequence[str] = (),
    bootstrap: int = 2000,
    not_applicable: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """The results document: every result's figures, the comparisons, and the test × model pairs
    skipped because the model does not read the test's family. The records are not in it:
    :func:`write_outputs` writes them to the records file the document points to."""
    from pytest_competence.report._compare import compare_models
    from pytest_competence.report._warnings import document_warnings

    ordered = [
        {k: v for k, v in r.items() if k != "records_file"}  # a part file's name
        for r in sorted(results, key=lambda r: r["nodeid"])
    ]
    return {
        "schema": SCHEMA,
        "plugin_version": __version__,
        "models": list(models),
        "results": ordered,
        "not_applicable": sorted(not_applicable, key=lambda r: r["nodeid"]),
        "comparisons": compare_models(ordered, models, bootstrap=bootstrap),
        "warnings": document_warnings(ordered),
    }


def load_document(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a results document, checking its schema and its shape.

    Raises :class:`~pytest_competence.report._archive.NotAResultsDocument` (a ``ValueError``)
    saying where the file stops being one; ``OSError`` when it cannot be read.
    """
    from pytest_competence.report._archive import NotAResultsDocument, check_shape

    text = Path(path).read_text("utf-8", errors="surrogateescape")
    try:
        document = json.loads(text)
    except ValueError as exc:
        hint = (
            " (JSON Lines, one record a line: a dataset from competence generate?)"
            if ("Extra data" in str(exc))
            else ""
        )
        raise NotAResultsDocument(
            f"not a results document: {path}: not JSON, {exc}{hint}"
        ) from None
    if not isinstance(document, dict) or document.get("schema") not in READABLE_SCHEMAS:
        found = document.get("schema") if isinstance(document, dict) else type(document).__name__
        raise NotAResultsDocument(
            f"not a results document: {path}: schema {found!r}, "
            f"expected {SCHEMA!r} (or an older {READABLE_SCHEMAS[0]!r})"
        )
    try:
        check_shape(document)
    except NotAResultsDocument as exc:
        raise NotAResultsDocument(f"not a results document: {path}: {exc}") from None
    return document


def recompute(
    document: dict[str, Any], *, bootstrap: int | None = None, folder: str | os.PathLike[str] = "."
) -> dict[str, Any]:
    """Recompute every figure of an archived document from its prompt-level records, read
    result by result from its records file in ``folder`` (where the document was read from).

    Results without records (written without ``--competence-json``) keep their stored figures.
    Raises :class:`~pytest_competence.report._records_file.RecordsFileError` for a records file
    that is missing, truncated or another document's.
    """
    from pytest_competence.engine.analysis import analyze
    from pytest_competence.engine.conditions import parse_condition
    from pytest_competence.engine.failure import failing_case
    from pytest_competence.engine.profile import profile
    from pytest_competence.engine.records import evaluation_from_records
    from pytest_competence.report._records_file import read_records

    results = []
    for r, rows in read_records(document, folder):
        r = dict(r)
        if rows is not None:
            evaluation = evaluation_from_records(r["model"], r["family"], rows)
            B = (
                bootstrap
                if bootstrap is not None
                else r["summary"].get("bootstrap", {}).get("B", 0)
            )
            named = r.get("level_name")  # the archive's family object is not rebuilt
            r.update(analyze(evaluation, bootstrap=B, seed=r["design"]["seed"]))
            if named:
                r["level_name"] = named
            condition = parse_condition(r["design"]["require"]).with_gates(
                r["design"].get("gates", [])
            )
            minimal = (r.get("failing_case") or {}).get("minimal")
            profiles = profile(evaluation)
            r["failing_case"] = failing_case(condition, evaluation, profiles)
            r["bounds"] = condition.bounds(profiles)
            if minimal and r["failing_case"]:
                # Minimisation asked the model; its record cannot be recomputed, only kept.
                r["failing_case"]["minimal"] = minimal
        results.append(r)
    first = next((c["bootstrap"]["B"] for c in document.get("comparisons", [])), 2000)
    rebuilt = build_document(
        results,
        models=document.get("models", []),
        bootstrap=bootstrap if bootstrap is not None else first,
        not_applicable=document.get("not_applicable", []),
    )
    return rebuilt


def write_outputs(
    document: dict[str, Any],
    *,
    json_path: str | None = None,
    html_path: str | None = None,
    markdown_path: str | None = None,
    records: Iterable[RecordSource] = (),
    records_path: str | None = None,
    failed: list[tuple[str, str, str]] | None = None,
    html_max_bytes: int | None = None,
) -> list[tuple[str, str]]:
    """Write the requested files; append Markdown to ``$GITHUB_STEP_SUMMARY`` when it is set
    (within GitHub's 1 MiB per step, counting what the file holds already: past it, results are
    left out, the passing ones first, with a line that says so).
    Returns ``(what, path)`` of each file written.

    An HTML report past ``html_max_bytes`` (by default :data:`~._html.SPLIT_BYTES`; 0 never
    splits) is a main page at ``html_path`` and a
    page per family in a folder beside it (:func:`~._html.render_pages`); written whole before
    the main page that links to them, with the pages an earlier run left there removed.

    With ``json_path``, ``records`` (each result's record lines, in document order) go to the
    records file, ``records_path`` or by default next to the JSON
    (:func:`~pytest_competence.engine.settings.records_name`), first: the JSON then points to it,
    holding its sha256. Without ``failed`` the first file that cannot be written raises its
    ``OSError``; with a list, each such file is added to it as ``(what, path, reason)`` and the
    others are still written (a JSON whose records file failed is written without pointing to
    one).
    """
    files = _Files(failed)
    if json_path:
        _write_json(files, document, json_path, records_path, records)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if markdown_path or summary:
        _write_markdown(files, document, markdown_path, summary)
    if html_path:
        _write_html(files, document, html_path, html_max_bytes)
    return files.written


class _Files:
    """The files written so far, and those that failed (or the first failure raised)."""

    def __init__(self, failed: list[tuple[str, str, str]] | None) -> None:
        self.written: list[tuple[str, str]] = []
        self.failed = failed

    def attempt(self, what: str, path: str, write: Callable[[], object]) -> bool:
        """Run ``write``; True when it wrote, False when it failed and the failure is listed."""
        try:
            write()
        except OSError as exc:
            if self.failed is None:
                raise
            self.failed.append((what, path, exc.strerror or str(exc)))
            return False
        self.written.append((what, path))
        return True


def _write_json(
    files: _Files,
    document: dict[str, Any],
    json_path: str,
    records_path: str | None,
    records: Iterable[RecordSource],
) -> None:
    """The records file first, then the JSON pointing to it (or not, when it failed)."""
    from pytest_competence.engine.files import write_json_atomic
    from pytest_competence.engine.settings import records_name
    from pytest_competence.report._records_file import pointers, write_records_file

    path = records_path or records_name(json_path)
    made: list[tuple[str, dict[str, int]]] = []
    archived = document
    if files.attempt("records", path, lambda: made.append(write_records_file(path, records))):
        files.written.pop()  # listed after the JSON that points to it
        archived = pointers(document, json_path, path, *made[0])
    files.attempt("JSON", json_path, lambda: write_json_atomic(json_path, archived, indent=1))
    files.written += [("records", path)] if made else []


def _write_markdown(
    files: _Files, document: dict[str, Any], markdown_path: str | None, summary: str | None
) -> None:
    """The Markdown file, and the step summary appended to within what GitHub takes."""
    from pytest_competence.engine.files import write_text_atomic
    from pytest_competence.report._markdown import STEP_SUMMARY_BYTES, render_markdown

    text = render_markdown(document)
    if markdown_path:
        files.attempt("Markdown", markdown_path, lambda: write_text_atomic(markdown_path, text))
    if summary:

        def append() -> None:
            # GitHub takes at most 1 MiB per step's summary: what is there already counts.
            room = STEP_SUMMARY_BYTES - (os.path.getsize(summary) if os.path.exists(summary) else 0)
            fits = len(text.encode("utf-8")) <= room
            with open(summary, "a", encoding="utf-8", errors="backslashreplace") as out:
                out.write(text if fits else render_markdown(document, max_bytes=max(room, 0)))

        files.attempt("GITHUB_STEP_SUMMARY", summary, append)
        if files.written and files.written[-1][0] == "GITHUB_STEP_SUMMARY":
            files.written.pop()  # appended to, not a report of this run's own


def _write_html(
    files: _Files, document: dict[str, Any], html_path: str, html_max_bytes: int | None
) -> None:
    """The HTML page, or the family pages first and the main page that links to them last."""
    from pytest_competence.engine.files import write_text_atomic
    from pytest_competence.report._html import SPLIT_BYTES, pages_folder, render_pages

    where, name = os.path.split(html_path)
    limit = SPLIT_BYTES if html_max_bytes is None else html_max_bytes
    pages = render_pages(document, name=name or "report.html", max_bytes=limit)
    folder = os.path.join(where, pages_folder(name))

    def write_html() -> None:
        for page, text in pages.items():  # the family pages first, the main page last
            if page != name:
                os.makedirs(folder, exist_ok=True)
                write_text_atomic(os.path.join(where, page), text)
        _remove_stale(folder, {os.path.join(where, page) for page in pages})
        write_text_atomic(html_path, pages[name])

    if files.attempt("HTML", html_path, write_html) and len(pages) > 1:
        files.written.append(("HTML pages", f"{folder}{os.sep} ({len(pages) - 1} families)"))


def _remove_stale(folder: str, kept: set[str]) -> None:
    """Remove the family pages an earlier run left in ``folder`` that this run did not write
    (all of them when this run's report is one page), and the folder once empty."""
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return
    for entry in names:
        path = os.path.join(folder, entry)
        if entry.endswith(".html") and path not in kept:
            os.remove(path)
    if not os.listdir(folder):
        os.rmdir(folder)
