"""The run-wide settings read from pytest's ini and command-line options, each checked once at
configure time.

:func:`read_settings` raises one ``pytest.UsageError`` line naming the option, the value, what
it takes and how to fix it — before any model is loaded or asked. (The ``competence_shrink_*``
options are checked at the same moment by :class:`~pytest_competence.plugin._shrink_hooks.ShrinkHooks`.)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from pytest_competence.engine.settings import (
    DEFAULT_CACHE,
    DEFAULT_DATABASE,
    DEFAULT_MAX_PROMPTS,
    GATES,
    UNDERPOWERED,
    Settings,
    output_path_problem,
    records_path_problem,
    writable_dir_problem,
)

__all__ = ["add_gate_options", "read_settings"]

T = TypeVar("T", int, float)


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
        from pytest_competence.plugin._wiring import cache_path

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
    why = writable_dir_problem(path.parent)
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
        from pytest_competence.plugin._wiring import files_root

        path = Path(local) if Path(local).is_absolute() else files_root(config) / local
        if path.exists() and not path.is_dir():
            raise _usage("competence_database", local, "a directory", "not a file")
        why = writable_dir_problem(path)
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
