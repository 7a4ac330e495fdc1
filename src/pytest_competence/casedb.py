"""Minimal failing cases in the Hypothesis example database: replayed first, saved last.

A test's cases live under one key — the test (its node id with the model replaced by ``*``) and
the case space — so every model of the test replays every case the test has saved: the corpus
a next checkpoint must pass builds up by itself. Values are the cases' Hypothesis choice
sequences (``choices_to_bytes``), exactly what the space's strategy draws them from. A second
key per model records which cases a complete minimisation proved minimal *for that model*; a
replayed case in it that still fails needs no shrinking.

The local database is a directory (by default the Hypothesis one, ``.hypothesis/examples``):
pytest-xdist workers share it safely, since each value is its own file written atomically.
Shared databases — a directory checked out from elsewhere, or a GitHub Actions artifact — are
read-only: their cases are replayed, never rewritten.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CaseDatabases", "CaseStore", "case_key", "github_location", "open_databases"]

_PREFIX = b"pytest-competence/cases/1/"
REPLAY_LIMIT = 64  # the smallest cases replayed per test; all of them go in one call


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def case_key(test: str, space: Any) -> bytes:
    """The database key of ``test``'s cases in ``space`` (shared by every model)."""
    return _PREFIX + _digest(test, space.signature()).encode()


@dataclass
class CaseDatabases:
    """Where cases are saved (``local``, or nowhere) and the read-only databases replayed too."""

    local: Any = None  # a hypothesis ExampleDatabase
    shared: tuple[Any, ...] = ()
    description: str = "none"

    def fetch(self, key: bytes) -> list[bytes]:
        seen: dict[bytes, None] = {}
        for db in (self.local, *self.shared):
            if db is not None:
                seen.update(dict.fromkeys(db.fetch(key)))
        return list(seen)


def open_databases(local: str, shared: Sequence[str], root: Path) -> CaseDatabases:
    """Open ``local`` (a directory, or ``none``) and ``shared`` read-only databases.

    A shared entry is a directory or ``github:OWNER/REPO[/ARTIFACT]`` (Hypothesis's
    ``GitHubArtifactDatabase``, default artifact ``hypothesis-example-db``; it reads
    ``GITHUB_TOKEN``). Relative directories are taken from ``root`` (pytest's rootdir).
    """
    from hypothesis.database import DirectoryBasedExampleDatabase, ReadOnlyDatabase

    local = local.strip()
    writable = None
    if local.lower() not in ("", "none", "off"):
        path = Path(local) if Path(local).is_absolute() else root / local
        writable = DirectoryBasedExampleDatabase(path)
    readers = []
    for entry in (s.strip() for s in shared if s.strip()):
        if entry.startswith("github:"):
            readers.append(ReadOnlyDatabase(_github(entry)))
        else:
            path = Path(entry) if Path(entry).is_absolute() else root / entry
            readers.append(ReadOnlyDatabase(DirectoryBasedExampleDatabase(path)))
    description = local if writable is not None else "none"
    if readers:
        description += " (read-only too: " + ", ".join(s.strip() for s in shared if s.strip()) + ")"
    return CaseDatabases(writable, tuple(readers), description)


def github_location(entry: str) -> tuple[str, str, str | None]:
    """``(owner, repo, artifact or None)`` of a ``github:OWNER/REPO[/ARTIFACT]`` entry;
    ``ValueError`` naming the option and the fix when it is malformed."""
    where = entry.removeprefix("github:").strip("/").split("/")
    if len(where) not in (2, 3) or not all(w.strip() for w in where):
        raise ValueError(
            f"competence_database_shared: cannot read {entry!r}; write "
            f"'github:OWNER/REPO' or 'github:OWNER/REPO/ARTIFACT', e.g. "
            f"'github:my-org/my-model/competence-cases'"
        )
    return where[0], where[1], where[2] if len(where) == 3 else None


def _github(entry: str) -> Any:
    from hypothesis.database import GitHubArtifactDatabase

    owner, repo, artifact = github_location(entry)
    if artifact is not None:
        return GitHubArtifactDatabase(owner, repo, artifact_name=artifact)
    return GitHubArtifactDatabase(owner, repo)


class CaseStore:
    """One test's cases for one model: load them for replay, save a minimised one."""

    def __init__(self, databases: CaseDatabases, key: bytes, model: str) -> None:
        self.databases = databases
        self.key = key
        self.minimal_key = key + b"/minimal/" + _digest(model).encode()

    def load(self, space: Any) -> list[tuple[Any, bool]]:
        """The saved cases that fit ``space``, smallest first, each with whether it was proven
        minimal for this model. Entries that no longer decode are dropped from the local database.
        """
        from hypothesis.database import choices_from_bytes

        proven = set(self.databases.fetch(self.minimal_key))
        cases = []
        for value in self.databases.fetch(self.key):
            choices = choices_from_bytes(value)
            case = None if choices is None else space.from_choices(choices)
            if case is None:
                if self.databases.local is not None:
                    self.databases.local.delete(self.key, value)
                continue
            cases.append((space.sort_key(case), case, value in proven))
        cases.sort(key=lambda t: t[0])
        return [(case, minimal) for _, case, minimal in cases[:REPLAY_LIMIT]]

    def save(self, space: Any, case: Any, *, proven: bool) -> bool:
        """Save ``case`` (and, when ``proven``, mark it minimal for this model); whether saved."""
        from hypothesis.database import choices_to_bytes

        db = self.databases.local
        if db is None:
            return False
        value = choices_to_bytes(space.choices(case))
        db.save(self.key, value)
        if proven:
            db.save(self.minimal_key, value)
        else:
            db.delete(self.minimal_key, value)
        return True
