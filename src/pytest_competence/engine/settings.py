"""The run-wide settings, validated (:class:`Settings`), and the checks of report paths and
design sizes that the plugin, the command and the reports share; the plugin reads them from
pytest's options (:mod:`pytest_competence.plugin._options`)."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_CACHE",
    "DEFAULT_DATABASE",
    "DEFAULT_MAX_PROMPTS",
    "GATES",
    "UNDERPOWERED",
    "Settings",
    "check_prompt_count",
    "output_path_problem",
    "records_name",
    "records_path_problem",
    "writable_dir_problem",
]

#: The largest design a test may declare (levels × pairs × presentations × attempts) unless
#: the ``competence_max_prompts`` ini option raises it: about a day of a fast HTTP endpoint.
DEFAULT_MAX_PROMPTS = 2_000_000
DEFAULT_DATABASE = ".hypothesis/examples"
DEFAULT_CACHE = ".competence/cache.sqlite"

#: The release gates ``competence_gate`` and the marker's ``gate=`` name (see :mod:`._release_gate`).
GATES = ("regression", "non-inferiority")
#: What ``competence_underpowered`` makes of a gate that cannot detect its margin.
UNDERPOWERED = ("note", "error")


@dataclass(frozen=True)
class Settings:
    """The validated run-wide settings: ini options and command-line options alike."""

    bootstrap: int
    alpha: float
    margin: float
    gates: tuple[str, ...]
    max_prompts: int
    max_error_rate: float
    json_path: str | None = None  # --competence-json and the other report paths
    records_path: str | None = None
    html_path: str | None = None
    markdown_path: str | None = None
    report_only: bool = False
    diagnose: bool = False
    baseline: str | None = None  # --competence-baseline: a spec, an alias or an archive
    batch_export: str | None = None
    trained_on: tuple[str, ...] = ()  # competence_trained_on, one split a line (parsed later)
    gate: str = "regression"  # competence_gate: the release gate of a --competence-baseline
    underpowered: str = "note"  # competence_underpowered: note, or a test error


def check_prompt_count(count: int, limit: int, breakdown: str, raise_with: str) -> None:
    """``InvalidArgument`` when a design of ``count`` prompts (``breakdown`` says how they
    multiply) is over ``limit``; ``raise_with`` names the setting that raises the limit."""
    if count > limit:
        from pytest_competence.protocol import InvalidArgument

        raise InvalidArgument(
            f"the design asks {count:,} prompts ({breakdown}), over the limit of {limit:,}; "
            f"use fewer pairs or levels, or raise {raise_with}"
        )


def output_path_problem(
    option: str, path: str | os.PathLike[str], *, append: bool = False
) -> str | None:
    """Why no file can be written at ``path`` — a directory, a missing folder, a folder this
    user cannot write in (checked by writing a file there, :func:`_writable_dir`, as the
    database and cache folders are) — as one line naming ``option`` and the fix; ``None``
    when it can. Reports are written to a temporary file that then replaces ``path``, so only
    the folder must be writable; an ``append`` target (``$GITHUB_STEP_SUMMARY``) must be too."""
    target = Path(path)
    if target.is_dir():
        return f"{option} {path}: is a directory; give a file name, e.g. {target / 'results'}"
    folder = target.parent
    if not folder.is_dir():
        return (
            f"{option} {path}: the directory {folder} does not exist; create it "
            f"first or write elsewhere"
        )
    why = writable_dir_problem(folder, create=False)
    if why is None and append and target.exists() and not os.access(target, os.W_OK):
        why = "the file is read-only"
    if why:
        return (
            f"{option} {path}: cannot write in {folder} ({why}); give a path in a "
            f"folder you can write, or make {folder} writable"
        )
    return None


def records_path_problem(
    option: str, records: str | None, json_option: str, json_path: str | None
) -> str | None:
    """Why ``records`` cannot be the records file of ``json_path``, as one line naming
    ``option``; ``None`` when it can (or when no records file is asked for)."""
    if records is None:
        return None
    if not json_path:
        return (
            f"{option} {records}: the records file belongs to a results document; add "
            f"{json_option} PATH (or drop {option})"
        )
    if os.path.abspath(records) == os.path.abspath(json_path):
        return (
            f"{option} {records}: is the {json_option} file itself; give the records "
            f"their own file, e.g. {records_name(json_path)}"
        )
    return None


def records_name(json_path: str) -> str:
    """The records file of ``json_path`` when none is named: ``report.records.jsonl``."""
    return (json_path[: -len(".json")] if json_path.endswith(".json") else json_path) + (
        ".records.jsonl"
    )


def writable_dir_problem(folder: Path, *, create: bool = True) -> str | None:
    """Why files cannot be written in ``folder`` (created if missing, with ``create``), or
    ``None``: a file is made there and removed, so permissions, ACLs and read-only mounts all
    count, for root as for anyone."""
    try:
        if create:
            folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return None
