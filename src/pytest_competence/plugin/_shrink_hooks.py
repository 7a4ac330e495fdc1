"""The ``competence_shrink`` marker and the ini options of minimisation, read from pytest (the checks are :mod:`pytest_competence.minimise._budget`).

Registered by :mod:`pytest_competence.plugin` at configure time: the ini options are checked
then, and the marker at collection, so a bad argument is a usage or collection error that names
it and the fix.
"""

from __future__ import annotations

import pytest

from pytest_competence.minimise import SHRINK_MARKER_HELP, ShrinkSettings, shrink_settings

__all__ = ["SHRINK_MARKER_HELP", "ShrinkHooks", "add_ini_options", "settings_for"]


def add_ini_options(parser: pytest.Parser) -> None:
    """Minimisation's ini options (called from the plugin's ``pytest_addoption``)."""
    parser.addini(
        "competence_shrink_calls",
        default="100",
        help="Model calls a failing competence test may spend minimising its failing "
        "case; 0 turns minimisation off (default: 100)",
    )
    parser.addini(
        "competence_shrink_seconds",
        default="300",
        help="Seconds a failing competence test may spend minimising (default: 300)",
    )
    parser.addini(
        "competence_shrink_outside",
        default="true",
        help="After the minimal case inside the suite's declared design space, also search "
        "beyond it (other vocabularies, no distractors) for a failure reported on its own "
        "(default: true)",
    )


def _ini(config: pytest.Config) -> tuple[str, str, object]:
    return (
        config.getini("competence_shrink_calls"),
        config.getini("competence_shrink_seconds"),
        config.getini("competence_shrink_outside"),
    )


def settings_for(item: pytest.Item) -> ShrinkSettings:
    """The minimisation settings of one test (already validated at collection)."""
    marker = item.get_closest_marker("competence_shrink")
    return shrink_settings(marker.kwargs if marker else None, *_ini(item.config))


class ShrinkHooks:
    """Collection-time validation and Hypothesis defaults (see the module docstring)."""

    def __init__(self, config: pytest.Config) -> None:
        try:
            shrink_settings(None, *_ini(config))
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
