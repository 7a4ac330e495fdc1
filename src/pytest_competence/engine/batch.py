"""The OpenAI Batch path: export the requests a run needs, import the answers into the cache.

For sweeps too large or too cheap to hold a connection open, the way model teams already run bulk
inference (``vllm run-batch``, the OpenAI Batch API, any runner of that format):

1. ``pytest … --competence-model=openai:MODEL@URL --competence-batch-export=requests.jsonl``
   writes one Batch input line per request that is not in the response cache yet — the exact
   body the HTTP backend would send, its ``custom_id`` the response-cache key — sends nothing,
   and skips the competence tests as "awaiting batch results". Each served model and endpoint
   gets its own file set, split into numbered parts at OpenAI's limits (50,000 lines, 200 MB;
   see :mod:`pytest_competence.engine.export_files`);
2. ``vllm run-batch -i requests.jsonl -o results.jsonl --model CHECKPOINT --served-model-name
   MODEL`` (or any runner);
3. ``competence batch import results.jsonl`` stores every answer in the response cache;
4. the same pytest command with ``--competence-cache=read`` runs from the cache alone, with no
   request sent.

Scored prompts (the spec's ``readout=score``, or a prompt whose readout is ``score``) export the
requests scoring needs, never a generated answer: in chat mode one line per prompt, one token at
temperature 0 with ``logprobs`` and ``top_logprobs``; in completions mode one line per candidate,
echoed with ``logprobs``. The import reads their logprobs exactly as the HTTP backend does
(:func:`pytest_competence.models.http.read_scores`) and stores the best candidate, once a
prompt's every candidate has come in (in any file, any import).

Exported keys are remembered in the cache file (table ``exported``), so an import can say which
output lines match no exported request. A failed line (non-200 status, an ``error`` object, a body
without answer text or without the logprobs asked for, candidates that tie) is stored nowhere:
the next run asks that prompt again, or reports it as not in the cache — never as an answer.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_competence.engine.cache import ResponseCache
    from pytest_competence.engine.export_files import Target
    from pytest_competence.engine.spec import CompetenceSpec
    from pytest_competence.models import Model
    from pytest_competence.protocol import Prompt

__all__ = [
    "AWAITING",
    "BatchError",
    "Imported",
    "export_design",
    "export_requests",
    "import_results",
]

#: Why a competence test whose requests went to a batch file was skipped.
AWAITING = "awaiting batch results"
_EXPORT_CHUNK = 65536  # prompts per export step: each step reads the batch file once


class BatchError(ValueError):
    """The batch path cannot serve this model or file; the message says why and what to do."""


def _exportable(model: Model) -> tuple[Any, Any]:
    """The backend behind the wrappers, and the run's cache; :class:`BatchError` if not both."""
    from pytest_competence.engine.cache import CachedModel
    from pytest_competence.engine.export_files import backend_of

    cached = model
    while not isinstance(cached, CachedModel) and hasattr(cached, "model"):
        cached = cached.model
    if not isinstance(cached, CachedModel):
        raise BatchError(
            f"--competence-batch-export needs the response cache and a model with a "
            f"cache identity (an openai: model); {model.name!r} has none, or "
            f"--competence-cache=off"
        )
    backend = backend_of(cached.model)
    if backend is None:
        raise BatchError(
            f"--competence-batch-export: model {model.name!r} cannot write OpenAI "
            f"Batch requests; only openai: models can"
        )
    return backend, cached.cache


def export_requests(model: Model, prompts: Sequence[Prompt], path: str | Path | Target) -> int:
    """Append the Batch input lines of each of ``prompts`` not yet answered in the cache to the
    file set ``path`` (a :class:`~pytest_competence.engine.export_files.Target`, or a path: OpenAI's
    caps); the count of lines written.

    A generated answer is one line, its ``custom_id`` the answer's cache key; a scored one is one
    line in chat mode (the same ``custom_id``) and one per candidate in completions mode
    (``KEY-0``, ``KEY-1``, …). Lines are appended under an exclusive lock on the first part, so
    xdist workers can share one file set; a line already exported to one of its parts is not
    written twice. The cache remembers which keys each file holds (the file named by device and
    inode), so an export costs the same whether the file holds ten lines or ten million: a test,
    or a chunk of one, never rereads it.
    """
    from pytest_competence.engine.cache import cache_key
    from pytest_competence.engine.export_files import Target

    target = path if isinstance(path, Target) else Target(Path(path))
    backend, cache = _exportable(model)
    keys = [cache_key(backend.cache_identity, p) for p in prompts]
    stored = cache.get_many(keys)
    lines: dict[str, tuple[str, tuple[str, str] | None]] = {}
    for key, p in zip(keys, prompts):
        if key in stored or key in lines or f"{key}-0" in lines:
            continue
        made = backend.batch_lines(p)
        for j, (line, how) in enumerate(made):
            custom_id = key if len(made) == 1 else f"{key}-{j}"
            text = json.dumps({"custom_id": custom_id, **line}, ensure_ascii=True) + "\n"
            lines[custom_id] = (text, None if how is None else (key, json.dumps(how)))
    return _append(target, lines, cache, backend.name)


def _file_id(fd: int) -> tuple[str, int]:
    info = os.fstat(fd)
    return f"{info.st_dev}:{info.st_ino}", info.st_size


def _append(
    target: Target,
    lines: dict[str, tuple[str, tuple[str, str] | None]],
    cache: ResponseCache,
    model: str,
) -> int:
    """Write the ``lines`` (by ``custom_id``) that no part of ``target`` holds yet, in parts of
    at most ``target.max_lines`` lines and ``target.max_bytes`` bytes; the count written."""
    with open(target.path, "a+", encoding="utf-8") as first:
        fcntl.flock(first, fcntl.LOCK_EX)
        k, out = 1, first
        try:
            while True:  # every part there is: drop what it holds, keep the last one open
                file, size = _file_id(out.fileno())
                if size == 0:
                    cache.forget_file(file)  # a new (or emptied) file under a reused inode
                    count = 0
                elif not cache.exported_to(file):  # written before the cache kept track: read
                    out.seek(0)
                    held = [json.loads(line).get("custom_id") for line in out]
                    count = len(held)
                    found = [key for key in held if lines.pop(key, None) is not None]
                    cache.mark_exported(found, model, file)
                else:
                    count = cache.count_exported_to(file)
                for key in cache.exported_to(file, list(lines)):
                    del lines[key]
                if not target.part(k + 1).exists():
                    break
                if out is not first:
                    out.close()
                k += 1
                out = open(target.part(k), "a+", encoding="utf-8")
            longest = max((len(text) for text, _ in lines.values()), default=0)
            if longest > target.max_bytes:  # before a line is written
                raise BatchError(
                    f"--competence-batch-max-mb: a request line of {longest:,} bytes does not "
                    f"fit in a file of {target.max_bytes:,} bytes; raise the cap"
                )
            written = 0
            batch: list[str] = []
            for key, (text, _) in lines.items():
                if count + 1 > target.max_lines or size + len(text) > target.max_bytes:
                    _mark(out, batch, lines, cache, model, file)
                    if out is not first:
                        out.close()
                    k += 1
                    out = open(target.part(k), "a+", encoding="utf-8")
                    file, size = _file_id(out.fileno())
                    cache.forget_file(file)
                    count, batch = 0, []
                out.write(text)
                size, count = size + len(text), count + 1
                batch.append(key)
                written += 1
            _mark(out, batch, lines, cache, model, file)
        finally:
            if out is not first:
                out.close()
            fcntl.flock(first, fcntl.LOCK_UN)
    return written


def _mark(
    out: Any,
    keys: list[str],
    lines: dict[str, tuple[str, tuple[str, str] | None]],
    cache: ResponseCache,
    model: str,
    file: str,
) -> None:
    """Flush ``out``, then remember ``keys`` as written to it. Under the lock: another worker's
    export sees these keys once it holds the lock."""
    out.flush()
    reads = {key: how for key in keys if (how := lines[key][1]) is not None}
    cache.mark_exported(keys, model, file, reads)


def export_design(model: Model, spec: CompetenceSpec, path: str | Path | Target) -> str:
    """Export the requests of ``model`` on ``spec``'s design, chunk by chunk
    (:func:`export_requests`): the reason the test is skipped, with the count written."""
    from pytest_competence.engine.evaluate import sent_prompts
    from pytest_competence.engine.export_files import Target

    target = path if isinstance(path, Target) else Target(Path(path))
    count = sum(
        export_requests(model, sent_prompts(chunk, spec.attempts), target)
        for chunk in spec.chunks(prompts=_EXPORT_CHUNK)
    )
    parts = target.parts()
    where = str(target.path) if len(parts) < 2 else f"{target.path} … {parts[-1]}"
    return f"{AWAITING}: {count} new requests written to {where}"


@dataclass
class Imported:
    """What an import did: answers stored, lines failed (by reason), lines matching no export,
    and scored prompts still waiting for some of their candidates' lines."""

    stored: int = 0
    failed: Counter[str] = field(default_factory=Counter)
    unmatched: int = 0
    waiting: int = 0

    def lines(self) -> list[str]:
        """What ``competence batch import`` prints: stored, failed (each reason on a line of
        its own under it), unmatched, waiting."""
        failed = sum(self.failed.values())
        out = [
            f"stored {self.stored} answers in the response cache",
            f"failed {failed} lines (not stored; asked again next run)" + (":" if failed else ""),
        ]
        shown = self.failed.most_common(5)
        out += [f"  {count} × {reason}" for reason, count in shown]
        rest = failed - sum(count for _, count in shown)
        if rest:
            out.append(f"  {rest} × {len(self.failed) - len(shown)} other reasons")
        out.append(f"matched no exported request: {self.unmatched} lines")
        if self.waiting:
            out.append(
                f"waiting: {self.waiting} scored prompts lack some of their candidates' lines "
                f"(import the other output files too; a failed line is asked again next run)"
            )
        return out


def _body(line: dict[str, Any]) -> Any:
    """The response body of one Batch output line; ``ValueError`` saying why there is none."""
    if line.get("error"):
        raise ValueError(f"error: {json.dumps(line['error'], ensure_ascii=False)[:200]}")
    response = line.get("response") or {}
    status = response.get("status_code")
    if status != 200:
        raise ValueError(f"status {status}")
    return response.get("body")


def _answer(body: Any) -> str:
    """The answer text of a response body; ``ValueError`` saying why there is none."""
    try:
        choice = body["choices"][0]
        text = choice["message"]["content"] if "message" in choice else choice["text"]
    except (KeyError, IndexError, TypeError):
        raise ValueError("a body without choices[0].message.content or choices[0].text") from None
    if not isinstance(text, str):
        raise ValueError(f"no answer text (finish_reason={choice.get('finish_reason')!r})")
    return text


def _scored(
    body: Any, answer: str, how: dict[str, Any], cache: ResponseCache, waiting: set[str]
) -> tuple[str, dict[str, float]] | None:
    """The best candidate a scoring response (with those before it) names, and every
    candidate's score (kept beside the answer, as a direct run keeps them); ``None`` while the
    prompt waits for other candidates' lines; ``ValueError`` when there is none."""
    from pytest_competence.models.http import read_scores
    from pytest_competence.models.readout import best_candidate

    got = read_scores(how, body)
    candidates = how["candidates"]
    if isinstance(got, dict):
        scores = got
    else:
        have = cache.add_score(answer, int(how["candidate"]), got)
        if len(have) < len(candidates):
            waiting.add(answer)
            return None
        scores = {c: have[j] for j, c in enumerate(candidates)}
    waiting.discard(answer)
    best = best_candidate(scores)
    if isinstance(best, BaseException):
        raise ValueError(str(best))
    return best, dict(scores)


def import_results(files: Iterable[str | Path], cache: ResponseCache) -> Imported:
    """Store the answers of OpenAI Batch output files in ``cache``, keyed by ``custom_id``: the
    answer text of a generated answer, the best candidate of a scored one."""
    done = Imported()
    waiting: set[str] = set()
    for name in files:
        with open(name, encoding="utf-8") as lines:
            for number, raw in enumerate(lines, 1):
                if not raw.strip():
                    continue
                try:
                    line = json.loads(raw)
                    key = line["custom_id"]
                except (ValueError, KeyError, TypeError):
                    raise BatchError(
                        f"{name}:{number}: not an OpenAI Batch output line (JSON "
                        f"with custom_id and response)"
                    ) from None
                model = cache.exported_model(key)
                if model is None:
                    done.unmatched += 1
                    continue
                reading = cache.reading(key)
                scores: dict[str, float] | None = None
                try:
                    body = _body(line)
                    if reading is None:
                        answer: str | None = _answer(body)
                    else:
                        key, how = reading
                        got = _scored(body, key, json.loads(how), cache, waiting)
                        answer, scores = (None, None) if got is None else got
                except ValueError as exc:
                    done.failed[str(exc)] += 1
                    continue
                if answer is not None:
                    cache.put(key, answer, model, scores)
                    done.stored += 1
    done.waiting = len(waiting)
    return done
