"""How a failing competence test minimises its case: the ``competence_shrink`` marker's
arguments and the ini options, checked (no pytest: the plugin reads them and hands them here)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["SHRINK_MARKER_HELP", "ShrinkSettings", "shrink_settings"]

SHRINK_MARKER_HELP = (
    "competence_shrink(*, calls=100, seconds=300, attempts=None, outside=True): how a failing "
    "competence test minimises its failing case (calls=0 turns minimisation off; outside=False "
    "keeps it inside the suite's declared design space)"
)


@dataclass(frozen=True)
class ShrinkSettings:
    """How a failing competence test minimises its case.

    ``calls`` and ``seconds`` bound the minimisation (``calls=0`` skips it); ``attempts`` sends
    per prompt while minimising (default: the test's own ``attempts``), majority-voted. The
    test's minimal case is always searched in the suite's declared design space; ``outside``
    also searches beyond it, with what is left of the budget, for a failure of its own (other
    vocabularies, no distractors).
    """

    calls: int = 100
    seconds: float = 300.0
    attempts: int | None = None
    outside: bool = True


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


def _flag(name: str, value: object) -> bool:
    text = str(value).strip().lower() if isinstance(value, str) else None
    if isinstance(value, bool):
        return value
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"Expected {name} to be true or false, but got {name}={value!r}")


def shrink_settings(
    marker: Mapping[str, Any] | None, ini_calls: str, ini_seconds: str, ini_outside: object = True
) -> ShrinkSettings:
    """Settings from the ini options, overridden by ``@pytest.mark.competence_shrink(...)``.

    Raises ``ValueError`` naming the argument and what it takes.
    """
    base = ShrinkSettings(
        _count("competence_shrink_calls", ini_calls, least=0),
        _seconds("competence_shrink_seconds", ini_seconds),
        outside=_flag("competence_shrink_outside", ini_outside),
    )
    if not marker:
        return base
    if "vocabulary" in marker:
        raise ValueError(
            "vocabulary= is gone: the minimal case keeps the suite's vocabulary, and other "
            "vocabularies are searched only as a finding of their own; outside=False turns "
            "that search off"
        )
    known = ("calls", "seconds", "attempts", "outside")
    unknown = sorted(set(marker) - set(known))
    if unknown:
        raise ValueError(
            f"unknown arguments {unknown}; expected some of {', '.join(known)}, "
            f"e.g. competence_shrink(calls=60, seconds=120)"
        )
    attempts = marker.get("attempts")
    outside = marker.get("outside", base.outside)
    if not isinstance(outside, bool):
        raise ValueError(f"Expected outside=True or False, but got outside={outside!r}")
    return ShrinkSettings(
        _count("calls", marker.get("calls", base.calls), least=0),
        _seconds("seconds", marker.get("seconds", base.seconds)),
        None if attempts is None else _count("attempts", attempts, least=1),
        outside,
    )
