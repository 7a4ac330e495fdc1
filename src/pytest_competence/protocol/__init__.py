"""The family protocol: what the engine, the reports and every family agree on.

The bottom layer of pytest-competence, importing nothing of the engine or the families: the
values a family produces and the engine reads (:class:`Prompt`, :class:`Item`, :class:`Parsed`,
:class:`Observation`, :class:`AnswerMap`, :class:`Transform`, :class:`AuditComponent`, the
report data :class:`Table` and :class:`Figure`), and the :class:`Family` base class with its
optional hooks. Families (``pytest_competence.strategies``) and the engine both stand on it;
family authors usually import these names from ``pytest_competence.strategies``, which re-exports
them beside the registry and the helpers.
"""

from __future__ import annotations

from ._family import (
    CHUNK_INSTANCES,
    DEFAULT_PRESENTATIONS,
    DELEGATED,
    REQUIRED,
    Evaluated,
    Family,
    FamilyLike,
    PolicyFactory,
    case_spaces,
    construct,
    default_presentations,
    design_chunks,
)
from ._values import (
    IDENTITY,
    AnswerMap,
    AuditComponent,
    Figure,
    InvalidArgument,
    Item,
    Observation,
    Parsed,
    Prompt,
    Table,
    Transform,
    compose,
    parse_choice,
)

__all__ = [
    "CHUNK_INSTANCES",
    "IDENTITY",
    "DEFAULT_PRESENTATIONS",
    "DELEGATED",
    "REQUIRED",
    "AnswerMap",
    "AuditComponent",
    "Evaluated",
    "Family",
    "FamilyLike",
    "Figure",
    "InvalidArgument",
    "Item",
    "Observation",
    "Parsed",
    "PolicyFactory",
    "Prompt",
    "Table",
    "Transform",
    "case_spaces",
    "compose",
    "construct",
    "default_presentations",
    "design_chunks",
    "parse_choice",
]
