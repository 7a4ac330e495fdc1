"""Hooks for minimisation and for model-backed Hypothesis tests; imports only pytest.

Registered by :mod:`pytest_competence.plugin` at configure time:

- the ``competence_shrink`` marker is validated at collection, so a bad argument is a collection
  error that names it and the fix;
- a Hypothesis test that takes the ``competence_model`` fixture gets settings that make sense when
  each example costs a model call — no per-example deadline, no ``too_slow`` health check, and no
  ``function_scoped_fixture`` check for the model fixture — but only where the test's settings
  still hold Hypothesis's own defaults: explicit ``@settings`` and profiles are left as they are.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

__all__ = ["SHRINK_MARKER_HELP", "ShrinkHooks", "ShrinkSettings", "shrink_settings"]

SHRINK_MARKER_HELP = (
    "competence_shrink(*, calls=100, seconds=300, attempts=None, vocabulary=True): how a failing "
    "competence test minimises its failing case (calls=0 turns minimisation off)"
)

#: Fixtures whose value lives for the whole session whatever their scope says: a Hypothesis
#: test may use them across examples.
MODEL_FIXTURES = frozenset({"competence_model"})


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
        raise ValueError(f"Expected {name} to be a positive number of seconds, but got "
                         f"{name}={value!r}")
    return x


def shrink_settings(marker: Mapping[str, Any] | None, ini_calls: str,
                    ini_seconds: str) -> ShrinkSettings:
    """Settings from the ini options, overridden by ``@pytest.mark.competence_shrink(...)``.

    Raises ``ValueError`` naming the argument and what it takes.
    """
    base = ShrinkSettings(_count("competence_shrink_calls", ini_calls, least=0),
                          _seconds("competence_shrink_seconds", ini_seconds))
    if not marker:
        return base
    known = ("calls", "seconds", "attempts", "vocabulary")
    unknown = sorted(set(marker) - set(known))
    if unknown:
        raise ValueError(f"unknown arguments {unknown}; expected some of {', '.join(known)}, "
                         f"e.g. competence_shrink(calls=60, seconds=120)")
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
    return shrink_settings(marker.kwargs if marker else None,
                           item.config.getini("competence_shrink_calls"),
                           item.config.getini("competence_shrink_seconds"))


class ShrinkHooks:
    """Collection-time validation and Hypothesis defaults (see the module docstring)."""

    def __init__(self, config: pytest.Config) -> None:
        try:
            shrink_settings(None, config.getini("competence_shrink_calls"),
                            config.getini("competence_shrink_seconds"))
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

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, object, object]:
        # First in line: Hypothesis's own hook checks fixtures and health checks after this one.
        fn: Any = getattr(item, "obj", None)
        names = getattr(item, "fixturenames", ())
        if getattr(fn, "is_hypothesis_test", False) and MODEL_FIXTURES & set(names):
            from pytest_competence.given import model_backed_settings

            fn = getattr(fn, "__func__", fn)
            current = fn._hypothesis_internal_use_settings
            others = _function_scoped_arguments(item) - MODEL_FIXTURES
            fn._hypothesis_internal_use_settings = model_backed_settings(
                current, model_fixture_only=not others)
        return (yield)


def _function_scoped_arguments(item: pytest.Item) -> set[str]:
    """Function-scoped fixtures the test function names in its signature.

    Looked up the way Hypothesis's pytest plugin does for its ``function_scoped_fixture`` check,
    so the two agree on which fixtures count (parametrized arguments are not fixtures).
    """
    import inspect

    request = getattr(item, "_request", None)
    if request is None:
        return set()
    function = item.function  # type: ignore[attr-defined]
    info = request._fixturemanager.getfixtureinfo(node=item, func=function, cls=None)
    argnames = set(inspect.signature(function).parameters)
    return {name for name, defs in info.name2fixturedefs.items()
            if name in argnames and defs and defs[-1].scope == "function"}
