"""What the rule-induction families share below their base class: tasks, answers, the interface.

:class:`Task` is a latent task ``(f, S, Q)`` with its answers; :func:`canonical` is the one
string a list of answers compares by, and :func:`last_json_list` reads one from a model's text.
:class:`Inductive` is what this folder's policies call on a family (rebuild the task a prompt
showed, spell an answer), and :func:`induction_families` the registered families that have it:
the policies find the families through the registry and this interface, never by importing
the base class that hands the policies out.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_competence.registry import FAMILIES

__all__ = ["REORDER", "Inductive", "Task", "canonical", "induction_families", "last_json_list"]

REORDER = "reorder"


@dataclass(frozen=True)
class Task:
    """A latent rule-induction task: support pairs, query inputs and the rule's query answers.

    ``rule`` is the hidden rule in the family's own latent form and ``answers[j]`` its
    interpreter's output on ``query[j]``; ``context`` holds whatever else the renderer needs
    (a vocabulary, a feature binding). Everything is hashable plain data.
    """

    rule: Any
    support: tuple[tuple[Any, Any], ...]
    query: tuple[Any, ...]
    answers: tuple[Any, ...]
    context: Any = None


def canonical(answers: Sequence[Any]) -> str:
    """The one string a list of answers compares by: compact JSON, keys in order."""
    return json.dumps(list(answers), separators=(",", ":"), ensure_ascii=False)


_PYTHON_LITERAL = re.compile(r"\b(True|False|None)\b")


def last_json_list(text: str) -> list[Any] | None:
    """The last top-level JSON list in ``text``, or ``None`` when there is none.

    Reasoning models write lists while they think; the final answer is the last one. Python's
    ``True``/``False``/``None`` are read as JSON's, a common slip that changes no meaning.
    """
    text = _PYTHON_LITERAL.sub(lambda m: {"True": "true", "False": "false"}.get(m[1], "null"), text)
    decoder = json.JSONDecoder()
    found: list[Any] | None = None
    i = text.find("[")
    while i != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            i = text.find("[", i + 1)
            continue
        if isinstance(value, list):
            found = value
        i = text.find("[", end)
    return found


class Inductive(ABC):
    """The interface of a rule-induction family that the policies and metrics of this folder
    call (:class:`~pytest_competence.strategies._induction.RuleInduction` implements it)."""

    @abstractmethod
    def shown(self, *, n: int, index: int, seed: int, presentation: str) -> Task:
        """The task the prompt of instance ``index`` of level ``n`` showed in ``presentation``."""

    @abstractmethod
    def element(self, value: object) -> object:
        """One answer of the rule's interpreter as the answer format spells it."""


def induction_families() -> dict[str, type[Any]]:
    """Every rule-induction family registered in ``FAMILIES``, by name, in registry order."""
    return {
        name: cls
        for name, cls in FAMILIES.items()
        if isinstance(cls, type) and issubclass(cls, Inductive)
    }
