"""Where the plugin keeps a test's run: on the item's stash."""

from __future__ import annotations

import pytest

from pytest_competence.engine.run import CompetenceRun

__all__ = ["RUN"]

#: The test × model's run, set by the ``competence_run`` fixture and read by the verdict.
RUN = pytest.StashKey[CompetenceRun]()
