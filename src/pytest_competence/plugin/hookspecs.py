"""Hook specifications of pytest-competence, added in ``pytest_addhooks``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_competence.engine.result import Result

__all__ = ["pytest_competence_profile"]


@pytest.hookspec
def pytest_competence_profile(config: pytest.Config, result: Result) -> None:
    """Called with every finished competence result, once per test × model.

    Use it to send profiles to your own tracker without parsing report files. Under xdist it
    runs on the controller, in the order reports arrive.

    :param config: The pytest config object.
    :param result: The result, JSON-able (:class:`~pytest_competence.engine.result.Result`):
        ``nodeid``, ``test`` (the node id with the model replaced by ``*``), ``model``,
        ``family``, ``condition``, ``outcome``, ``presentations``, ``design``, ``levels`` (one
        dict of figures per level), ``summary`` (κ̄, McNemar, bootstrap intervals, boundary),
        ``failing_case`` and ``instances`` (per-instance correctness). The fields are those of
        the ``results`` entries of the JSON report (see ``docs/results-schema.md``).

    .. versionadded:: 0.1
    """
