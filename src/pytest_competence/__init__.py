"""pytest-competence: competence conditions as property-based tests of language models.

This module is imported in every pytest session of every user who installs the plugin, so it
imports nothing heavy; the public names resolve lazily on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_competence._lazy import lazy_attributes
from pytest_competence._version import __version__

__all__ = [
    "CompetenceFailure",
    "CompetenceRun",
    "CompetenceTrainingOverlap",
    "Condition",
    "Evaluation",
    "__version__",
    "evaluate",
    "resolve_model",
]

_LAZY = {
    "CompetenceFailure": "pytest_competence.engine.conditions",
    "CompetenceRun": "pytest_competence.engine.run",
    "CompetenceTrainingOverlap": "pytest_competence.engine.run",
    "Condition": "pytest_competence.engine.conditions",
    "Evaluation": "pytest_competence.engine.evaluation",
    "evaluate": "pytest_competence.engine.evaluate",
    "resolve_model": "pytest_competence.models",
}

if TYPE_CHECKING:
    from pytest_competence.engine.conditions import CompetenceFailure, Condition
    from pytest_competence.engine.evaluate import evaluate
    from pytest_competence.engine.evaluation import Evaluation
    from pytest_competence.engine.run import CompetenceRun, CompetenceTrainingOverlap
    from pytest_competence.models import resolve_model


__getattr__ = lazy_attributes(__name__, _LAZY)
