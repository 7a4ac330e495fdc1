"""The ``competence_shrink`` marker and the ini options of minimisation; imports only pytest.

Registered by :mod:`pytest_competence.plugin` at configure time: the ini options are checked
then, and the marker at collection, so a bad argument is a usage or collection error that names
it and the fix.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

__all__ = ["SHRINK_MARKER_HELP", "ShrinkHooks", "ShrinkSettings", "settings_for", "shrink_settings"]

SHRINK_MARKER_HELP = (
    "competence_shrink(*, calls=100, seconds=300, attempts=None, vocabulary=True): how a failing "
    "competence test minimises its failing case (calls=0 turns minimisation off)"
)


@dataclass(frozen=True)
class ShrinkSettings:
    """How a failing competence test minimises its case.

    ``calls`` and ``seconds`` bound the minimisation (``calls=0`` skips it); ``attempts`` sends
    per prompt while minimising (default: the test's own ``attempts``), majority-voted;
    ``vocabulary`` lets the vocabulary move toward the first in catalog order.
    """

    calls: int = 100
    seconds: float = 300.0
    attempts: int | None = None
    vocabulary: bool = True


def _count(name: str, value: object, *, least: int) -> int:
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"Expected {name} to be an integer >= {least}, but got {name}={value!r}")
    return value


def _seconds(name: str, value: object) -> float:
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        x = math.nan
    if isinstance(value, bool) or not x > 0:
        raise ValueError(
            f"Expected {name} to be a positive number of seconds, but got {name}={value!r}"
        )
    return x


def shrink_settings(
    marker: Mapping[str, Any] | None, ini_calls: str, ini_seconds: str
) -> ShrinkSettings:
    """Settings from the ini options, overridden by ``@pytest.mark.competence_shrink(...)``.

    Raises ``ValueError`` naming the argument and what it takes.
    """
    base = ShrinkSettings(
        _count("competence_shrink_calls", ini_calls, least=0),
        _seconds("competence_shrink_seconds", ini_seconds),
    )
    if not marker:
        return base
    known = ("calls", "seconds", "attempts", "vocabulary")
    unknown = sorted(set(marker) - set(known))
    if unknown:
        raise ValueError(
            f"unknown arguments {unknown}; expected some of {', '.join(known)}, "
            f"e.g. competence_shrink(calls=60, seconds=120)"
        )
    attempts = marker.get("attempts")
    vocabulary = marker.get("vocabulary", base.vocabulary)
    if not isinstance(vocabulary, bool):
        raise ValueError(f"Expected vocabulary=True or False, but got vocabulary={vocabulary!r}")
    return ShrinkSettings(
        _count("calls", marker.get("calls", base.calls), least=0),
        _seconds("seconds", marker.get("seconds", base.seconds)),
        None if attempts is None else _count("attempts", attempts, least=1),
        vocabulary,
    )


def settings_for(item: pytest.Item) -> ShrinkSettings:
    """The minimisation settings of one test (already validated at collection)."""
    marker = item.get_closest_marker("competence_shrink")
    return shrink_settings(
        marker.kwargs if marker else None,
        item.config.getini("competence_shrink_calls"),
        item.config.getini("competence_shrink_seconds"),
    )


class ShrinkHooks:
    """Collection-time validation and Hypothesis defaults (see the module docstring)."""

    def __init__(self, config: pytest.Config) -> None:
        try:
            shrink_settings(
                None,
                config.getini("competence_shrink_calls"),
                config.getini("competence_shrink_seconds"),
            )
        except ValueError as exc:
            raise pytest.UsageError(f"ini option {exc}") from None

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        marker = metafunc.definition.get_closest_marker("competence_shrink")
        if marker is None:
            return
        try:
            if marker.args:
                raise ValueError("takes keyword arguments only, e.g. competence_shrink(calls=60)")
            settings_for(metafunc.definition)
        except ValueError as exc:
            message = f"{metafunc.definition.nodeid}: @pytest.mark.competence_shrink: {exc}"
        else:
            return
        pytest.fail(message, pytrace=False)
