"""The response cache: SQLite (standard library), answers committed as they arrive.

A model that declares ``cache_identity`` — a string naming the model and every setting that
decides its answers (the HTTP, transformers and vLLM backends do; reference policies and Python
callables do not, since their code can change under the same name) — is wrapped in a
:class:`CachedModel`. An answer's key is the SHA-256 of that identity, the system prompt, the
prompt text and the attempt index, so sampled repeats are distinct and a rerun reuses every
answer it already has. Only text answers are stored, whole (reports may shorten them; the cache
never does), and exactly: one that UTF-8 cannot hold (a lone surrogate) is kept as a blob of
its ``surrogatepass`` bytes. An error is asked again next time. A candidate-scoring answer
keeps its candidates' scores beside it (table ``scores``, JSON), stored in the same transaction,
so the output decomposition of a rerun reads the same margins.

``--competence-cache=read`` asks the cache only: a prompt it holds no answer for is never sent,
whoever asks (the design's evaluation, minimisation, the replay of saved cases) — its answer is
:class:`NotInCache`, an infrastructure error whose reason is :data:`NOT_IN_CACHE`.

The database is in WAL mode. The answers a model hands over together (the HTTP backend's
request stream: those that arrived within :data:`~.models._pipe.HAND_OVER` of each other, see
:func:`~.models.groups_as_they_come`; any other model's one at a time) are one transaction,
committed before any of them is handed on, so a run killed with ``kill -9`` keeps everything
answered and handed over before the kill, and several xdist workers can write at once (they
wait for each other's short transactions). A transaction per answer cost 50 µs of CPU; one per
hand-over (about 11 answers at 128 in flight, 7 at 32) 11–13 µs an answer
(``bench/bench_cache.py``). Rows hold the key, the answer, the model's name and a timestamp:
never a key, a header or a URL's credentials.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_competence.engine.redaction import redact
from pytest_competence.models import Model, ModelCallError, ModelWrapper, groups_as_they_come
from pytest_competence.models.readout import Scored

if TYPE_CHECKING:
    from pytest_competence.protocol import Prompt

__all__ = [
    "MODES",
    "NOT_IN_CACHE",
    "CachedModel",
    "NotInCache",
    "ResponseCache",
    "cache_key",
    "count_rows",
]

#: ``--competence-cache`` values: read and write, read only (the cache alone answers), write
#: only (refresh), no cache.
MODES = ("rw", "read", "write", "off")

#: The reason of a prompt that ``--competence-cache=read`` finds no answer for.
NOT_IN_CACHE = "not in the response cache (--competence-cache=read asks the cache only)"


class NotInCache(ModelCallError):
    """The answer of a prompt the cache does not hold, under ``--competence-cache=read``: an
    infrastructure error (never an answer, never sent to the model)."""

    def __init__(self) -> None:
        super().__init__(NOT_IN_CACHE)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    answer TEXT NOT NULL,
    model TEXT NOT NULL,
    created REAL NOT NULL
) WITHOUT ROWID
"""
# The candidate scores behind a scored answer (readout=score): JSON, candidate → log-probability.
_SCORES = """
CREATE TABLE IF NOT EXISTS scores (
    key TEXT PRIMARY KEY,
    scores TEXT NOT NULL
) WITHOUT ROWID
"""
# Keys written to an OpenAI Batch input file (pytest_competence.engine.batch), awaiting their answers.
_EXPORTED = """
CREATE TABLE IF NOT EXISTS exported (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    created REAL NOT NULL
) WITHOUT ROWID
"""
# Which batch input file holds each exported key: the file is named by its device and inode, so
# an export appends a prompt once without rereading the file (a new file starts afresh).
_EXPORTED_TO = """
CREATE TABLE IF NOT EXISTS exported_to (
    file TEXT NOT NULL,
    key TEXT NOT NULL,
    PRIMARY KEY (file, key)
) WITHOUT ROWID
"""

# How the response to an exported line that is not a generated answer becomes one (a scoring
# request): the key its answer is stored under, and what reading it takes (JSON, see
# models.http.read_scores). Candidate scores that arrive one line each wait in batch_scores
# until the prompt has them all.
_EXPORTED_READS = """
CREATE TABLE IF NOT EXISTS exported_reads (
    line TEXT PRIMARY KEY,
    answer TEXT NOT NULL,
    how TEXT NOT NULL
) WITHOUT ROWID
"""
_BATCH_SCORES = """
CREATE TABLE IF NOT EXISTS batch_scores (
    answer TEXT NOT NULL,
    candidate INTEGER NOT NULL,
    score REAL NOT NULL,
    PRIMARY KEY (answer, candidate)
) WITHOUT ROWID
"""


def cache_key(identity: str, prompt: Prompt) -> str:
    """The key of one answer: model identity, system prompt, prompt text, attempt index (and the
    readout, when it is not ``"generate"``).

    Each part goes in with its length first, so no two different tuples hash the same bytes.
    """
    digest = hashlib.sha256()
    parts = [identity, prompt.system, prompt.text, str(prompt.attempt)]
    readout = getattr(prompt, "readout", "generate")
    if readout != "generate":  # a scored answer is another answer; generated keys stay as they were
        parts.append(readout)
    for part in parts:
        data = part.encode("utf-8")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


def _storable(answer: str) -> str | bytes:
    """``answer`` as SQLite can take it: text, or, when UTF-8 cannot hold it (a lone
    surrogate), its ``surrogatepass`` bytes as a blob, so the exact text comes back."""
    try:
        answer.encode("utf-8")
    except UnicodeEncodeError:
        return answer.encode("utf-8", "surrogatepass")
    return answer


def _text(stored: str | bytes) -> str:
    return stored.decode("utf-8", "surrogatepass") if isinstance(stored, bytes) else stored


class ResponseCache:
    """Answers by key in one SQLite file; the connection opens on first use."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None
        # Batches asked ahead (._lookahead) use the cache from several threads: one connection
        # (SQLite's serialized mode), opened once, and one writer at a time — a transaction
        # (BEGIN … COMMIT) on the shared connection must not take in another thread's INSERT.
        self._opening = threading.Lock()
        self._writing = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        with self._opening:
            return self._open()

    def _open(self) -> sqlite3.Connection:
        if self._db is None:
            folder = self.path.parent
            folder.mkdir(parents=True, exist_ok=True)
            ignore = folder / ".gitignore"
            if folder.name == ".competence" and not ignore.exists():
                ignore.write_text("# created by pytest-competence\n*\n", encoding="utf-8")
            # Autocommit (isolation_level=None): each INSERT is its own transaction.
            db = sqlite3.connect(
                self.path, timeout=60.0, isolation_level=None, check_same_thread=False
            )
            db.execute("PRAGMA busy_timeout = 60000")
            db.execute("PRAGMA journal_mode = WAL")
            # NORMAL in WAL mode: a committed answer survives the process being killed; only a
            # power cut can take the last few, which the next run then asks for again.
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute(_SCHEMA)
            db.execute(_SCORES)
            db.execute(_EXPORTED)
            db.execute(_EXPORTED_TO)
            db.execute(_EXPORTED_READS)
            db.execute(_BATCH_SCORES)
            self._db = db
        return self._db

    def _select(self, query: str, keys: Sequence[str], *args: str) -> list[tuple[Any, ...]]:
        """``query`` (ending in ``IN ({marks})``) over ``keys`` in chunks SQLite accepts."""
        db, rows = self._connect(), []
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows += db.execute(query.format(marks=marks), (*args, *chunk)).fetchall()
        return rows

    def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        """The stored answers among ``keys``."""
        rows = self._select("SELECT key, answer FROM responses WHERE key IN ({marks})", keys)
        return {key: _text(answer) for key, answer in rows}

    def scores_of(self, keys: Sequence[str]) -> dict[str, dict[str, float]]:
        """The stored candidate scores among ``keys`` (scored answers only)."""
        rows = self._select("SELECT key, scores FROM scores WHERE key IN ({marks})", keys)
        return {key: json.loads(scores) for key, scores in rows}

    def put(
        self, key: str, answer: str, model: str, scores: Mapping[str, float] | None = None
    ) -> None:
        """Store one answer (and the candidate scores behind it) now, in one committed
        transaction."""
        self.put_many([(key, answer, scores)], model)

    def put_many(
        self, rows: Sequence[tuple[str, str, Mapping[str, float] | None]], model: str
    ) -> None:
        """Store ``(key, answer, scores or None)`` rows of ``model`` now, in one committed
        transaction: all of them or, if it fails, none."""
        now = time.time()
        with self._transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO responses (key, answer, model, created) "
                "VALUES (?, ?, ?, ?)",
                [(key, _storable(answer), model, now) for key, answer, _ in rows],
            )
            scored = [(key, json.dumps(dict(s))) for key, _, s in rows if s is not None]
            if scored:
                db.executemany("INSERT OR REPLACE INTO scores (key, scores) VALUES (?, ?)", scored)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One committed transaction on the shared connection, one writer at a time."""
        db = self._connect()
        with self._writing:
            db.execute("BEGIN")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def mark_exported(
        self,
        keys: Sequence[str],
        model: str,
        file: str | None = None,
        reads: Mapping[str, tuple[str, str]] | None = None,
    ) -> None:
        """Remember ``keys`` as exported for ``model`` (to the batch file named ``file``: see
        :meth:`exported_to`), in one transaction; ``reads`` maps a key whose response is not
        the answer text to the answer's key and how to read it (:meth:`reading`)."""
        now = time.time()
        with self._transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO exported (key, model, created) VALUES (?, ?, ?)",
                [(key, model, now) for key in keys],
            )
            if file is not None:
                db.executemany(
                    "INSERT OR IGNORE INTO exported_to (file, key) VALUES (?, ?)",
                    [(file, key) for key in keys],
                )
            if reads:
                db.executemany(
                    "INSERT OR REPLACE INTO exported_reads (line, answer, how) VALUES (?, ?, ?)",
                    [(key, answer, how) for key, (answer, how) in reads.items()],
                )

    def count_exported_to(self, file: str) -> int:
        """How many keys were written to ``file``."""
        row = self._connect().execute("SELECT COUNT(*) FROM exported_to WHERE file = ?", (file,))
        return int(row.fetchone()[0])

    def reading(self, key: str) -> tuple[str, str] | None:
        """The answer's key and how to read the response of the exported line ``key``, when it
        is not the answer text (a scoring request); ``None`` when it is."""
        row = (
            self._connect()
            .execute("SELECT answer, how FROM exported_reads WHERE line = ?", (key,))
            .fetchone()
        )
        return None if row is None else (str(row[0]), str(row[1]))

    def add_score(self, answer: str, candidate: int, score: float) -> dict[int, float]:
        """Keep one candidate's score of the answer ``answer``; every score it has so far."""
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO batch_scores (answer, candidate, score) VALUES (?, ?, ?)",
                (answer, candidate, score),
            )
        rows = db.execute(
            "SELECT candidate, score FROM batch_scores WHERE answer = ?", (answer,)
        ).fetchall()
        return {int(c): float(v) for c, v in rows}

    def exported_to(self, file: str, keys: Sequence[str] | None = None) -> set[str]:
        """The keys among ``keys`` (any, when ``None``: at most one) already written to
        ``file``."""
        if keys is None:
            rows = (
                self._connect()
                .execute("SELECT key FROM exported_to WHERE file = ? LIMIT 1", (file,))
                .fetchall()
            )
        else:
            rows = self._select(
                "SELECT key FROM exported_to WHERE file = ? AND key IN ({marks})", keys, file
            )
        return {str(key) for (key,) in rows}

    def forget_file(self, file: str) -> None:
        """Forget what was exported to ``file`` (an empty file at a reused name and inode)."""
        with self._transaction() as db:
            db.execute("DELETE FROM exported_to WHERE file = ?", (file,))

    def exported_model(self, key: str) -> str | None:
        """The model a batch request with this key was exported for; ``None`` if never."""
        row = self._connect().execute("SELECT model FROM exported WHERE key = ?", (key,))
        found = row.fetchone()
        return None if found is None else str(found[0])

    def __len__(self) -> int:
        return int(self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"


class CachedModel(ModelWrapper):
    """``model`` behind the cache: stored answers come back at once, new ones are stored.

    ``mode`` is ``"rw"`` (read and write), ``"read"`` (the cache alone answers: a prompt it
    lacks is never sent, its answer is :class:`NotInCache`) or ``"write"`` (never reuse: ask
    everything again and store the new answers). ``secrets`` (API keys) are replaced by
    ``[redacted]`` in every new answer, stored or not. Other attributes are the wrapped model's.
    """

    def __init__(
        self, model: Model, cache: ResponseCache, mode: str = "rw", secrets: Sequence[str] = ()
    ) -> None:
        if mode not in ("rw", "read", "write"):
            raise ValueError(f"Expected mode to be one of rw, read, write, but got mode={mode!r}")
        super().__init__(model)
        self.cache = cache
        self.mode = mode
        self.secrets = tuple(secrets)  # API keys: an answer echoing one is stored without it
        self.hits = 0  # answers served from the cache by the last call

    def __repr__(self) -> str:
        return f"CachedModel({self.model!r}, mode={self.mode!r})"

    def stream(self, prompts: Sequence[Prompt]) -> Iterator[tuple[int, str | BaseException]]:
        """Stored answers first, then the model's, stored as they arrive: those that arrive
        together in one transaction, before any of them is yielded."""
        return self._through(prompts, groups_as_they_come)

    def scored(self, prompts: Sequence[Prompt]) -> list[str | BaseException]:
        """The candidate-scoring readout's answers, in order, cached like generated ones."""
        from pytest_competence.models.readout import in_order, scored_stream

        # scored_stream needs a ScoringModel: callers send score prompts only to models with
        # score() (evaluate.ask_model checks), which Model's type cannot say.
        return in_order(
            self._through(
                prompts,
                lambda m, ps: ([pair] for pair in scored_stream(m, ps)),  # type: ignore[arg-type]
            ),
            len(prompts),
            self.name,
        )

    def _through(
        self,
        prompts: Sequence[Prompt],
        ask: Callable[[Model, Sequence[Prompt]], Iterable[list[tuple[int, str | BaseException]]]],
    ) -> Iterator[tuple[int, str | BaseException]]:
        identity = self.model.cache_identity  # type: ignore[attr-defined]
        keys = [cache_key(identity, p) for p in prompts]
        stored = self.cache.get_many(keys) if self.mode != "write" else {}
        scored = self.cache.scores_of(list(stored)) if stored else {}
        # Counted from this call's own lookup and set at once: calls from several threads
        # (requests asked ahead) never interleave their counts.
        missing = [i for i, key in enumerate(keys) if key not in stored]
        self.hits = len(keys) - len(missing)
        for i, key in enumerate(keys):
            if key in stored:
                text = stored[key]
                yield i, Scored(text, scored[key]) if key in scored else text
        if not missing:
            return
        if self.mode == "read":  # offline: nothing is sent, whoever asks
            for i in missing:
                yield i, NotInCache()
            return
        for group in ask(self.model, [prompts[i] for i in missing]):
            pairs, rows = [], []
            for j, answer in group:
                i = missing[j]
                if isinstance(answer, str):
                    # The same text now and from the cache later: redacted in both.
                    scores = answer.scores if isinstance(answer, Scored) else None
                    text = redact(answer, self.secrets)
                    answer = text if scores is None else Scored(text, scores)
                    rows.append((keys[i], text, scores))
                pairs.append((i, answer))
            # The answers that arrived together, committed together before any is yielded.
            if rows:
                self.cache.put_many(rows, self.model.name)
            yield from pairs

    def generate(self, prompts: Sequence[Prompt]) -> list[str | BaseException]:
        from pytest_competence.models.readout import in_order

        return in_order(self.stream(prompts), len(prompts), self.name)


def count_rows(path: str | Path, keys: Iterable[str] | None = None) -> int:
    """Rows in a cache file (all, or those among ``keys``); for tests and tooling."""
    cache = ResponseCache(path)
    try:
        return len(cache) if keys is None else len(cache.get_many(list(keys)))
    finally:
        cache.close()
