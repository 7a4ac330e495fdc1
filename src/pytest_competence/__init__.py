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
    "CompetenceFailure": "pytest_competence.conditions",
    "CompetenceRun": "pytest_competence._run",
    "CompetenceTrainingOverlap": "pytest_competence._run",
    "Condition": "pytest_competence.conditions",
    "Evaluation": "pytest_competence.evaluation",
    "evaluate": "pytest_competence.evaluate",
    "resolve_model": "pytest_competence.models",
}

if TYPE_CHECKING:
    from pytest_competence._run import CompetenceRun, CompetenceTrainingOverlap
    from pytest_competence.conditions import CompetenceFailure, Condition
    from pytest_competence.evaluate import evaluate
    from pytest_competence.evaluation import Evaluation
    from pytest_competence.models import resolve_model


__getattr__ = lazy_attributes(__name__, _LAZY)
