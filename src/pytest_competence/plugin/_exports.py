"""The batch export's options, read from pytest: ``--competence-batch-export`` and its caps,
checked at configure into the engine's file sets
(:class:`~pytest_competence.engine.export_files.Target`). Imports only the standard library
and pytest: the options are added in every pytest session."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_competence.engine.export_files import CHAT, MAX_LINES, MAX_MB, Target, plan

__all__ = ["add_options", "start"]


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def add_options(group: Any) -> None:
    """The batch options, in the plugin's option group."""
    group.addoption(
        "--competence-batch-export",
        metavar="PATH",
        help="Write the requests not yet in the response cache as OpenAI Batch input lines and "
        "skip the competence tests (then run them, e.g. with vllm run-batch, and 'competence "
        "batch import' the results): one file per model, {model} in PATH naming it (else "
        "requests.MODEL.jsonl when a run exports for several models)",
    )
    group.addoption(
        "--competence-batch-max-lines",
        type=_positive,
        metavar="N",
        help=f"Most requests per batch file; more go on in numbered parts (default: {MAX_LINES}, "
        f"the OpenAI Batch API's limit)",
    )
    group.addoption(
        "--competence-batch-max-mb",
        type=_positive,
        metavar="MB",
        help=f"Most megabytes (10^6 bytes) per batch file; more go on in numbered parts "
        f"(default: {MAX_MB}, the OpenAI Batch API's limit)",
    )
    group.addoption(
        "--competence-batch-runner",
        choices=("any", "vllm"),
        help="What will run the batch files: 'vllm' refuses exports that vllm run-batch "
        "rejects (mode=completions lines); 'any' (default) writes them and says so",
    )


def start(config: pytest.Config, models: Mapping[str, Any], *, worker: bool) -> dict[str, Target]:
    """The run's file sets (``{}`` without ``--competence-batch-export``), checked: a folder
    that cannot be written, a cap without an export, or a line the named runner rejects is a
    ``pytest.UsageError`` now. The controller empties them (a fresh set per run)."""
    template = config.getoption("competence_batch_export")
    caps = {
        "--competence-batch-max-lines": config.getoption("competence_batch_max_lines"),
        "--competence-batch-max-mb": config.getoption("competence_batch_max_mb"),
        "--competence-batch-runner": config.getoption("competence_batch_runner"),
    }
    if not template:
        given = [name for name, value in caps.items() if value is not None]
        if given:
            raise pytest.UsageError(
                f"{given[0]} applies to batch exports; add --competence-batch-export=PATH "
                f"(or drop {given[0]})"
            )
        return {}
    targets = plan(
        template,
        models,
        config.getoption("competence_batch_max_lines") or MAX_LINES,
        (config.getoption("competence_batch_max_mb") or MAX_MB) * 10**6,
    )
    if config.getoption("competence_batch_runner") == "vllm":
        for spec, target in targets.items():
            if target.url != CHAT:
                raise pytest.UsageError(
                    f"--competence-batch-runner=vllm: model {spec!r} writes {target.url} lines "
                    f"(mode=completions), and vllm run-batch takes {CHAT} lines only; use "
                    f"mode=chat, or drop --competence-batch-runner=vllm to write them for the "
                    f"OpenAI Batch API or another runner"
                )
    if not worker:
        from pytest_competence.engine.settings import output_path_problem

        # The same check, and the same line, as every other file the run writes.
        paths = [t.path for t in targets.values()] or [Path(template.replace("{model}", "model"))]
        for path in paths:
            problem = output_path_problem("--competence-batch-export", path)
            if problem:
                raise pytest.UsageError(problem)
        try:
            for target in dict.fromkeys(targets.values()):
                template = str(target.path)
                target.reset()
        except OSError as exc:
            raise pytest.UsageError(
                f"--competence-batch-export: cannot write {template!r} ({exc.strerror}); give "
                f"a path in an existing, writable directory"
            ) from None
    return targets
