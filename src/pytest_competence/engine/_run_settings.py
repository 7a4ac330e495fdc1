"""The run-wide settings from ini options and report paths, each checked once at configure time.

:func:`read_settings` reads every competence ini option that shapes a run and raises one
``pytest.UsageError`` line naming the option, the value, what it takes and how to fix it —
before any model is loaded or asked. (The ``competence_shrink_*`` options are checked at the
same moment by :class:`~pytest_competence.minimise.ShrinkHooks`, which owns them.)
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

__all__ = [
    "DEFAULT_MAX_PROMPTS",
    "GATES",
    "UNDERPOWERED",
    "Settings",
    "add_gate_options",
    "check_prompt_count",
    "output_path_problem",
    "read_settings",
    "records_name",
    "records_path_problem",
]

#: The largest design a test may declare (levels × pairs × presentations × attempts) unless
#: the ``competence_max_prompts`` ini option raises it: about a day of a fast HTTP endpoint.
DEFAULT_MAX_PROMPTS = 2_000_000
DEFAULT_DATABASE = ".hypothesis/examples"
DEFAULT_CACHE = ".competence/cache.sqlite"

T = TypeVar("T", int, float)

#: The release gates ``competence_gate`` and the marker's ``gate=`` name (see :mod:`._gate`).
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


def add_gate_options(parser: pytest.Parser) -> None:
    """The release gate's ini options (read by :func:`read_settings`)."""
    parser.addini(
        "competence_gate",
        default="regression",
        help="The gate of --competence-baseline: 'regression' (fail on a significant "
        "drop over the margin) or 'non-inferiority' (pass only on evidence that no "
        "level lost more than the margin); the marker's gate= wins (default: regression)",
    )
    parser.addini(
        "competence_alpha",
        default="0.05",
        help="Significance level of the gate, after Holm: two-sided for the regression "
        "gate, one-sided for non-inferiority (default: 0.05)",
    )
    parser.addini(
        "competence_regression_margin",
        default="0",
        help="Accuracy drop the gate tolerates; the non-inferiority margin (default: 0, "
        "no margin declared)",
    )
    parser.addini(
        "competence_underpowered",
        default="note",
        help="A gate whose detectable drop (80% power) exceeds its margin: 'note' "
        "reports it, 'error' makes the test an error (default: note)",
    )


def _usage(option: str, value: object, expected: str, fix: str) -> pytest.UsageError:
    return pytest.UsageError(f"ini option {option} = {value!s}: expected {expected}; {fix}")


def _number(
    config: pytest.Config,
    option: str,
    kind: Callable[[str], T],
    ok: Callable[[T], bool],
    expected: str,
    fix: str,
) -> T:
    raw = str(config.getini(option)).strip()
    try:
        value = kind(raw)
    except ValueError:
        raise _usage(option, raw, expected, fix) from None
    if not ok(value):
        raise _usage(option, raw, expected, fix)
    return value


def read_settings(config: pytest.Config) -> Settings:
    """The settings of this run; ``pytest.UsageError`` on the first bad value."""
    bootstrap = _number(
        config,
        "competence_bootstrap",
        int,
        lambda b: b >= 0,
        "a whole number of resamples >= 0",
        "the default is 2000",
    )
    alpha = _number(
        config,
        "competence_alpha",
        float,
        lambda a: 0 < a < 1,
        "a significance level in (0, 1)",
        "e.g. competence_alpha = 0.05",
    )
    margin = _number(
        config,
        "competence_regression_margin",
        float,
        lambda m: math.isfinite(m) and 0 <= m < 1,
        "an accuracy difference in [0, 1)",
        "e.g. competence_regression_margin = 0.02",
    )
    gate = _choice(config, "competence_gate", GATES)
    if gate == "non-inferiority" and margin == 0:
        raise _usage(
            "competence_gate",
            gate,
            "competence_regression_margin above 0 beside it, but it is 0",
            "at margin 0 only a candidate significantly better than the baseline passes; "
            "declare the loss a release may have, e.g. competence_regression_margin = 0.02",
        )
    max_prompts = _number(
        config,
        "competence_max_prompts",
        int,
        lambda n: n >= 1,
        "a positive whole number of prompts",
        f"the default is {DEFAULT_MAX_PROMPTS}",
    )
    # Parsed at configure by the plugin (_check_run_settings), with the baseline.
    gates = tuple(g for g in config.getini("competence_require") if g.strip())
    _check_database(config)
    if str(config.getoption("competence_cache") or "rw") != "off":
        from pytest_competence.engine._wiring import cache_path

        _check_cache(config, cache_path(config))
    for option in (
        "competence_json",
        "competence_records",
        "competence_html",
        "competence_markdown",
    ):
        path = config.getoption(option)
        if path:
            problem = output_path_problem("--" + option.replace("_", "-"), path)
            if problem:
                raise pytest.UsageError(problem)
    problem = records_path_problem(
        "--competence-records",
        config.getoption("competence_records"),
        "--competence-json",
        config.getoption("competence_json"),
    )
    if problem:
        raise pytest.UsageError(problem)
    max_error_rate = _number(
        config,
        "competence_max_error_rate",
        float,
        lambda r: 0 <= r < 1,
        "the share of prompts that may end in infrastructure errors, a number in [0, 1)",
        "e.g. competence_max_error_rate = 0.001",
    )
    return Settings(
        bootstrap,
        alpha,
        margin,
        gates,
        max_prompts,
        max_error_rate,
        json_path=config.getoption("competence_json"),
        records_path=config.getoption("competence_records"),
        html_path=config.getoption("competence_html"),
        markdown_path=config.getoption("competence_markdown"),
        report_only=bool(config.getoption("competence_report_only")),
        diagnose=bool(config.getoption("competence_diagnose")),
        baseline=config.getoption("competence_baseline"),
        batch_export=config.getoption("competence_batch_export"),
        trained_on=tuple(t for t in config.getini("competence_trained_on") if t.strip()),
        gate=gate,
        underpowered=_choice(config, "competence_underpowered", UNDERPOWERED),
    )


def _choice(config: pytest.Config, option: str, choices: tuple[str, ...]) -> str:
    raw = str(config.getini(option)).strip()
    if raw not in choices:
        raise _usage(
            option, raw, " or ".join(repr(c) for c in choices), f"e.g. {option} = {choices[0]}"
        )
    return raw


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
    why = _writable_dir(folder, create=False)
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


def _writable_dir(folder: Path, *, create: bool = True) -> str | None:
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


def _explicit(config: pytest.Config, option: str, default: str) -> str | None:
    """The option's value when it differs from the default (set by the user), else ``None``."""
    value = str(config.getini(option)).strip()
    return value if value != default else None


def _check_cache(config: pytest.Config, path: Path) -> None:
    if _explicit(config, "competence_cache_path", DEFAULT_CACHE) is None:
        return  # the default is made on first use, by models that have a cache
    if path.is_dir():
        raise _usage(
            "competence_cache_path",
            path,
            "a file, not a directory",
            f"e.g. competence_cache_path = {path / 'cache.sqlite'}",
        )
    why = _writable_dir(path.parent)
    if why:
        raise _usage(
            "competence_cache_path",
            path,
            "a file in a writable directory",
            f"cannot write in {path.parent} ({why}); choose another path or run with "
            f"--competence-cache=off",
        )


def _check_database(config: pytest.Config) -> None:
    local = _explicit(config, "competence_database", DEFAULT_DATABASE)
    if local is not None and local.lower() not in ("", "none", "off"):
        from pytest_competence.engine._wiring import files_root

        path = Path(local) if Path(local).is_absolute() else files_root(config) / local
        if path.exists() and not path.is_dir():
            raise _usage("competence_database", local, "a directory", "not a file")
        why = _writable_dir(path)
        if why:
            raise _usage(
                "competence_database",
                local,
                "a writable directory",
                f"cannot write in {path} ({why}); choose another directory, or 'none' "
                f"to save nothing",
            )
    from pytest_competence.minimise import github_location

    for entry in config.getini("competence_database_shared"):
        if entry.strip().startswith("github:"):
            try:
                github_location(entry.strip())
            except ValueError as exc:
                raise pytest.UsageError(f"ini option {exc}") from None
