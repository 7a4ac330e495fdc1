"""The files a batch export writes: one set per model and endpoint, split into numbered parts.

``vllm run-batch --model`` serves one model, and the OpenAI Batch API takes one model and one
endpoint per file, at most 50,000 requests and 200 MB: so each served model (the body's
``model``) and endpoint of a run gets its own :class:`Target`. ``--competence-batch-export=PATH``
names it: ``{model}`` in PATH is replaced by the model's name (made safe for a file name); without
it, a run that exports for one model writes PATH itself, and one that exports for several writes
``requests.MODEL.jsonl`` beside ``requests.jsonl``. A file that reaches
``--competence-batch-max-lines`` lines or ``--competence-batch-max-mb`` MB (10⁶ bytes) goes on in
``requests.part2.jsonl``, ``requests.part3.jsonl``, …

Each file set is written under an exclusive lock on its first part, so xdist workers can share
it; the controller empties the first part and removes older parts when the run starts (a fresh
set per run), and removes at the end a first part the run left empty. This module also writes the lines the terminal summary shows after an export (what to run next,
per file); the options are the plugin's (:mod:`pytest_competence.plugin._exports`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "CHAT",
    "COMPLETIONS",
    "MAX_LINES",
    "MAX_MB",
    "Target",
    "backend_of",
    "plan",
    "remove_empty",
    "summary_lines",
]

#: The OpenAI Batch API's limits per input file: requests, and megabytes (10⁶ bytes).
MAX_LINES = 50_000
MAX_MB = 200
CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"


@dataclass(frozen=True)
class Target:
    """One batch file set: its first part's path, the served model and endpoint of its lines,
    and the caps per part."""

    path: Path
    model: str = ""
    url: str = CHAT
    max_lines: int = MAX_LINES
    max_bytes: int = MAX_MB * 10**6

    def part(self, k: int) -> Path:
        """Part ``k`` (from 1): the path itself, then ``NAME.part2.jsonl`` and on."""
        if k == 1:
            return self.path
        return self.path.with_name(f"{self.path.stem}.part{k}{self.path.suffix}")

    def parts(self) -> list[Path]:
        """The parts that exist, in order."""
        found, k = [], 1
        while self.part(k).exists():
            found.append(self.part(k))
            k += 1
        return found

    def reset(self) -> None:
        """Empty the first part (created if missing) and remove the others: a fresh set."""
        open(self.path, "w").close()
        k = 2
        while self.part(k).exists():
            self.part(k).unlink()
            k += 1


def backend_of(model: Any) -> Any:
    """The backend behind a model's wrappers that writes Batch lines; ``None`` if none does."""
    from pytest_competence.models import ModelWrapper

    while isinstance(model, ModelWrapper):
        model = model.model
    return model if callable(getattr(model, "batch_lines", None)) else None


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "model"


def plan(
    template: str, models: Mapping[str, Any], max_lines: int, max_bytes: int
) -> dict[str, Target]:
    """The file set of each exporting model spec: one per served model and endpoint (see the
    module docstring); specs whose model writes no Batch lines have none."""
    keys: dict[str, tuple[str, str]] = {}
    for spec, model in models.items():
        backend = backend_of(model)
        if backend is not None:
            keys[spec] = (backend.model, CHAT if backend.mode == "chat" else COMPLETIONS)
    distinct = list(dict.fromkeys(keys.values()))
    names: dict[tuple[str, str], str] = {}
    for model, url in distinct:
        name = _slug(model)
        if url == COMPLETIONS and (model, CHAT) in distinct:
            name += "-completions"
        while name in names.values():
            name += "-2"
        names[(model, url)] = name
    path = Path(template)
    out = {}
    for spec, (model, url) in keys.items():
        name = names[(model, url)]
        if "{model}" in template:
            where = Path(template.replace("{model}", name))
        elif len(distinct) > 1:
            where = path.with_name(f"{path.stem}.{name}{path.suffix}")
        else:
            where = path
        out[spec] = Target(where, model, url, max_lines, max_bytes)
    return out


def remove_empty(targets: Iterable[Target]) -> None:
    """Remove the first parts that the run left empty (it exported nothing to them, or stopped
    at collection): an empty file is not an export."""
    for target in dict.fromkeys(targets):
        try:
            if target.path.stat().st_size == 0:
                target.path.unlink()
        except OSError:  # gone already, or not ours to remove: the summary says what exists
            pass


def _lines(path: Path) -> int:
    with open(path, "rb") as data:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: data.read(1 << 20), b""))


def _results_name(path: Path) -> Path:
    if "requests" in path.name:
        return path.with_name(path.name.replace("requests", "results", 1))
    return path.with_name(f"{path.stem}.results{path.suffix}")


def summary_lines(targets: Iterable[Target], awaiting: int) -> Iterator[str]:
    """What the terminal summary says after an export: per file, its requests and the command
    that runs it; then the import. Files without lines are left out."""
    files = [(t, p, _lines(p)) for t in dict.fromkeys(targets) for p in t.parts()]
    files = [(t, p, n) for t, p, n in files if n]
    if not files:
        yield (
            f"competence: {awaiting} competence test(s) skipped under --competence-batch-export, "
            f"with no request to write: the response cache holds every answer they need; run "
            f"again without --competence-batch-export"
        )
        return
    yield (
        f"competence: {awaiting} competence test(s) awaiting batch results; nothing was sent, "
        f"the requests are in {len(files)} file(s):"
    )
    for target, path, count in files:
        head = f"  {path}: {count} requests for model {target.model!r} ({target.url})"
        if target.url == CHAT:
            yield head
            yield (
                f"    vllm run-batch -i {path} -o {_results_name(path)} --model CHECKPOINT "
                f"--served-model-name {target.model}   (CHECKPOINT: its path or hub id)"
            )
        else:
            yield (
                f"{head}: vllm run-batch takes {CHAT} lines only; send this file to the "
                f"OpenAI Batch API or another runner of {COMPLETIONS} lines"
            )
    results = " ".join(str(_results_name(p)) for _, p, _ in files)
    yield (
        f"  then: competence batch import {results}, and run again with "
        f"--competence-cache=read instead of --competence-batch-export"
    )
