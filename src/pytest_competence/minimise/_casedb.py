"""Minimal failing cases in the Hypothesis example database: replayed first, saved last.

A test's cases live under one key — the test (its node id with the model replaced by ``*``) and
the case space — so every model of the test replays every case the test has saved: the corpus
a next checkpoint must pass builds up by itself. Values are the cases' Hypothesis choice
sequences (``choices_to_bytes``), exactly what the space's strategy draws them from. A second
key per model name records which cases a complete minimisation found minimal under that name,
and a third when, and for which model identity (:func:`~.models.identity.model_identity`), each
case was saved: the name stays, the model behind it changes. A replayed case marked minimal is
still checked against the model now asked (:func:`~._shrink.minimise`) before it is called
minimal. Databases written before identities were recorded load as they are: their cases have
no recorded identity.

The local database is a directory (by default the Hypothesis one, ``.hypothesis/examples``):
pytest-xdist workers share it safely, since each value is its own file written atomically.
Shared databases — a directory checked out from elsewhere, or a GitHub Actions artifact — are
read-only: their cases are replayed, never rewritten.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

__all__ = [
    "CaseDatabases",
    "CaseStore",
    "SavedCase",
    "case_key",
    "github_location",
    "may_hold_cases",
    "open_databases",
]

_PREFIX = b"pytest-competence/cases/1/"
REPLAY_LIMIT = 64  # the smallest cases replayed per test; all of them go in one call
_ORIGIN = ("model", "saved_at", "run")


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

    path = _local_directory(local, root)
    writable = None if path is None else DirectoryBasedExampleDatabase(path)
    readers = []
    for entry in (s.strip() for s in shared if s.strip()):
        if entry.startswith("github:"):
            readers.append(ReadOnlyDatabase(_github(entry)))
        else:
            path = Path(entry) if Path(entry).is_absolute() else root / entry
            readers.append(ReadOnlyDatabase(DirectoryBasedExampleDatabase(path)))
    description = local.strip() if writable is not None else "none"
    if readers:
        description += " (read-only too: " + ", ".join(s.strip() for s in shared if s.strip()) + ")"
    return CaseDatabases(writable, tuple(readers), description)


def _local_directory(local: str, root: Path) -> Path | None:
    """The local database's directory (relative to ``root``), ``None`` when it is off."""
    local = local.strip()
    if local.lower() in ("", "none", "off"):
        return None
    return Path(local) if Path(local).is_absolute() else root / local


def may_hold_cases(local: str, shared: Sequence[str], root: Path) -> bool:
    """Whether the databases :func:`open_databases` would open can hold a case at all: a
    shared one is named, or the local directory exists and is not empty. Answered from the
    file system alone, so a run with nothing saved anywhere imports no Hypothesis database
    and builds no case space to replay nothing."""
    if any(s.strip() for s in shared):
        return True
    path = _local_directory(local, root)
    if path is None:
        return False
    try:
        return path.is_dir() and any(path.iterdir())
    except OSError:  # unreadable: let open_databases say what is wrong
        return True


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


@dataclass(frozen=True)
class SavedCase:
    """A case loaded for replay, with what was recorded about it under this model's name."""

    case: Any
    minimal: bool = False  # a complete minimisation under this model's name saved it as minimal
    identity: str | None = None  # the identity of the model it was saved for, when recorded
    saved_at: str | None = None  # when, in UTC, when recorded
    recorded: bool = False  # saved under this model's name (by a run that recorded it)
    #: who saved it last, whichever model: ``{"model", "saved_at", "run"}``; ``None`` for a
    #: case saved before this was recorded
    origin: dict[str, Any] | None = None
    this_run: bool = False  # saved by this very run (another model of the test, or earlier)

    def saved_for(self, identity: str | None) -> str:
        """For which model the case was saved, seen from a model of ``identity``:
        ``same`` (this exact model), ``earlier`` (another model under the same name),
        ``name`` (this name; an identity is not known on one side) or ``unknown`` (another
        model's case, or one saved before this was recorded, not as minimal)."""
        if self.identity is not None and identity is not None:
            return "same" if self.identity == identity else "earlier"
        return "name" if self.recorded or self.minimal else "unknown"


class CaseStore:
    """One test's cases for one model: load them for replay, save a minimised one.

    ``identity`` is the model's :func:`~.models.identity.model_identity`, recorded with every
    case saved (``None``: not known); ``run`` tells this run's saves from earlier ones (one id
    per pytest session, shared by its xdist workers). Every case also records who saved it
    last — model name, time and run — under a key of the test's, read by every model. ``keep``
    says which cases may be saved at all (the search outside a suite saves only cases outside
    it); by default every case.
    """

    def __init__(
        self,
        databases: CaseDatabases,
        key: bytes,
        model: str,
        identity: str | None = None,
        run: str | None = None,
        *,
        keep: Callable[[Any], bool] | None = None,
    ) -> None:
        self.databases = databases
        self.keep = keep
        self.key = key
        self.model = model
        self.identity = identity
        self.run = run
        self.minimal_key = key + b"/minimal/" + _digest(model).encode()
        self.saved_key = key + b"/saved/" + _digest(model).encode()
        self.origin_key = key + b"/origin"

    def _records(self, key: bytes | None = None) -> dict[bytes, tuple[dict[str, Any], bytes]]:
        """Per saved value, what was recorded when saving it under ``key`` (by default this
        model's name), and the entry."""
        found: dict[bytes, tuple[dict[str, Any], bytes]] = {}
        for entry in self.databases.fetch(self.saved_key if key is None else key):
            try:
                record = json.loads(entry)
                found[bytes.fromhex(record["case"])] = (record, entry)
            except (ValueError, KeyError, TypeError):
                continue  # not written by this version: the case keeps no identity
        return found

    def load(self, space: Any) -> list[SavedCase]:
        """The saved cases that fit ``space``, smallest first, each with whether it was saved
        as minimal under this model's name, and for which model identity. Entries that no
        longer decode are dropped from the local database.
        """
        from hypothesis.database import choices_from_bytes

        proven = set(self.databases.fetch(self.minimal_key))
        records = self._records()
        origins = self._records(self.origin_key)
        cases = []
        for value in self.databases.fetch(self.key):
            choices = choices_from_bytes(value)
            case = None if choices is None else space.from_choices(choices)
            if case is None:
                if self.databases.local is not None:
                    self.databases.local.delete(self.key, value)
                continue
            record = records[value][0] if value in records else {}
            origin = origins[value][0] if value in origins else None
            cases.append(
                (
                    space.sort_key(case),
                    SavedCase(
                        case,
                        value in proven,
                        record.get("identity"),
                        record.get("saved_at"),
                        value in records,
                        None if origin is None else {k: origin.get(k) for k in _ORIGIN},
                        origin is not None and self.run is not None and origin["run"] == self.run,
                    ),
                )
            )
        cases.sort(key=lambda t: t[0])
        return [saved for _, saved in cases[:REPLAY_LIMIT]]

    def save(self, space: Any, case: Any, *, proven: bool, replaces: Any = None) -> bool:
        """Save ``case`` (and, when ``proven``, mark it minimal for this model) with this
        model's identity and the time; whether saved. ``replaces``: a case this name had saved
        as minimal that ``case`` was minimised from, deleted (this model fails a smaller one).
        """
        from hypothesis.database import choices_to_bytes

        db = self.databases.local
        if db is None or self.keep is not None and not self.keep(case):
            return False
        value = choices_to_bytes(space.choices(case))
        records = self._records()
        if replaces is not None:
            old = choices_to_bytes(space.choices(replaces))
            for key in (self.key, self.minimal_key):
                db.delete(key, old)
            if old in records:
                db.delete(self.saved_key, records[old][1])
            origins = self._records(self.origin_key)
            if old in origins:
                db.delete(self.origin_key, origins[old][1])
        db.save(self.key, value)
        if proven:
            db.save(self.minimal_key, value)
        else:
            db.delete(self.minimal_key, value)
        now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        for key, record in (
            (self.saved_key, {"identity": self.identity}),
            (self.origin_key, {"model": self.model, "run": self.run}),
        ):
            earlier = records if key == self.saved_key else self._records(key)
            if value in earlier:
                db.delete(key, earlier[value][1])
            entry = dict(record, case=value.hex(), saved_at=now)
            db.save(key, json.dumps(entry, sort_keys=True).encode())
        return True
