"""The OpenAI Batch path: export the requests a run needs, import the answers into the cache.

For sweeps too large or too cheap to hold a connection open, the way model teams already run bulk
inference (``vllm run-batch``, the OpenAI Batch API, any runner of that format):

1. ``pytest … --competence-model=openai:MODEL@URL --competence-batch-export=requests.jsonl``
   writes one Batch input line per prompt that is not in the response cache yet — the exact body
   the HTTP backend would send, its ``custom_id`` the response-cache key — sends nothing, and
   skips the competence tests as "awaiting batch results";
2. ``vllm run-batch -i requests.jsonl -o results.jsonl --model MODEL`` (or any runner);
3. ``competence batch import results.jsonl`` stores every answer in the response cache;
4. the same pytest command without the export flag runs from the cache, with no request sent.

Exported keys are remembered in the cache file (table ``exported``), so an import can say which
output lines match no exported request. A failed line (non-200 status, an ``error`` object, a body
without answer text) is stored nowhere: the next run asks that prompt again, or reports it as an
infrastructure error — never as an answer.
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
    from pytest_competence._cache import ResponseCache
    from pytest_competence.models import Model
    from pytest_competence.protocol import Prompt
    from pytest_competence.spec import CompetenceSpec

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
    from pytest_competence._cache import CachedModel

    cached = model
    while not isinstance(cached, CachedModel) and hasattr(cached, "model"):
        cached = cached.model
    if not isinstance(cached, CachedModel):
        raise BatchError(
            f"--competence-batch-export needs the response cache and a model with a "
            f"cache identity (an openai: model); {model.name!r} has none, or "
            f"--competence-cache=off"
        )
    backend = cached.model
    if not callable(getattr(backend, "batch_request", None)):
        raise BatchError(
            f"--competence-batch-export: model {model.name!r} cannot write OpenAI "
            f"Batch requests; only openai: models can"
        )
    return backend, cached.cache


def export_requests(model: Model, prompts: Sequence[Prompt], path: str | Path) -> int:
    """Append a Batch input line for each of ``prompts`` not yet answered in the cache; the count.

    Lines are appended under an exclusive lock, so xdist workers can share one file; a prompt
    already exported to this file is not written twice. The cache remembers which keys each file
    holds (the file named by device and inode), so an export costs the same whether the file holds
    ten lines or ten million: a test, or a chunk of one, never rereads it.
    """
    from pytest_competence._cache import cache_key

    backend, cache = _exportable(model)
    for p in prompts:
        if p.readout != "generate":
            raise BatchError(
                f"--competence-batch-export: prompt {p.instance_id} "
                f"[{p.presentation}] uses the {p.readout!r} readout; the batch path "
                f"carries generated answers only — run scored suites over HTTP"
            )
    keys = [cache_key(backend.cache_identity, p) for p in prompts]
    stored = cache.get_many(keys)
    wanted = {k: p for k, p in zip(keys, prompts) if k not in stored}
    with open(Path(path), "a+", encoding="utf-8") as out:
        fcntl.flock(out, fcntl.LOCK_EX)
        try:
            info = os.fstat(out.fileno())
            file = f"{info.st_dev}:{info.st_ino}"
            if info.st_size == 0:
                cache.forget_file(file)  # a new (or emptied) file under a reused inode
            elif not cache.exported_to(file):  # written before the cache kept track: read it
                out.seek(0)
                found = [
                    k
                    for k in (json.loads(line).get("custom_id") for line in out)
                    if wanted.pop(k, None) is not None
                ]
                cache.mark_exported(found, backend.name, file)
            for key in cache.exported_to(file, list(wanted)):
                del wanted[key]
            out.seek(0, 2)
            out.writelines(
                json.dumps({"custom_id": key, **backend.batch_request(p)}, ensure_ascii=True) + "\n"
                for key, p in wanted.items()
            )
            out.flush()
            # Under the lock: another worker's export sees these keys once it holds the lock.
            cache.mark_exported(list(wanted), backend.name, file)
        finally:
            fcntl.flock(out, fcntl.LOCK_UN)
    return len(wanted)


def export_design(model: Model, spec: CompetenceSpec, path: str | Path) -> str:
    """Export the requests of ``model`` on ``spec``'s design, chunk by chunk
    (:func:`export_requests`): the reason the test is skipped, with the count written."""
    from pytest_competence.evaluate import sent_prompts

    count = sum(
        export_requests(model, sent_prompts(chunk, spec.attempts), path)
        for chunk in spec.chunks(prompts=_EXPORT_CHUNK)
    )
    return f"{AWAITING}: {count} new requests written to {path}"


@dataclass
class Imported:
    """What an import did: answers stored, lines failed (by reason), lines matching no export."""

    stored: int = 0
    failed: Counter[str] = field(default_factory=Counter)
    unmatched: int = 0

    def lines(self) -> list[str]:
        """What ``competence batch import`` prints: stored, failed and unmatched lines."""
        out = [
            f"stored {self.stored} answers in the response cache",
            f"failed {sum(self.failed.values())} lines (not stored; asked again next run)",
            f"matched no exported request: {self.unmatched} lines",
        ]
        out += [f"  {count} × {reason}" for reason, count in self.failed.most_common(5)]
        return out


def _answer(line: dict[str, Any]) -> str:
    """The answer text of one Batch output line; ``ValueError`` saying why there is none."""
    if line.get("error"):
        raise ValueError(f"error: {json.dumps(line['error'], ensure_ascii=False)[:200]}")
    response = line.get("response") or {}
    status = response.get("status_code")
    if status != 200:
        raise ValueError(f"status {status}")
    try:
        choice = response["body"]["choices"][0]
        text = choice["message"]["content"] if "message" in choice else choice["text"]
    except (KeyError, IndexError, TypeError):
        raise ValueError("a body without choices[0].message.content or choices[0].text") from None
    if not isinstance(text, str):
        raise ValueError(f"no answer text (finish_reason={choice.get('finish_reason')!r})")
    return text


def import_results(files: Iterable[str | Path], cache: ResponseCache) -> Imported:
    """Store the answers of OpenAI Batch output files in ``cache``, keyed by ``custom_id``."""
    done = Imported()
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
                try:
                    answer = _answer(line)
                except ValueError as exc:
                    done.failed[str(exc)] += 1
                    continue
                cache.put(key, answer, model)
                done.stored += 1
    return done
