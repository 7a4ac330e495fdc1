"""Task families for competence-based evaluation: latent instances, oracles, renderers, transforms.

Installed as ``pytest_competence.strategies`` (never as a bare top-level ``strategies``, which would
collide in users' environments). Depends on numpy, and on Hypothesis for the strategies only.
"""

from __future__ import annotations

from ._core import (
    AnswerMap,
    AuditComponent,
    Family,
    InvalidArgument,
    Item,
    Parsed,
    Prompt,
    default_presentations,
    parse_choice,
)
from .concepts import Concepts
from .grammar import Grammar
from .horn import HORN_PRESENTATIONS, Horn, HornInstance
from .intervention import IW_PRESENTATIONS, Intervention, IWInstance
from .ordering import CELLS, PRESENTATIONS, SYSTEM_PROMPT, Ordering, OrderingInstance, OrderingView
from .programs import Programs
from .raven import Raven
from .reformulations import CATEGORIES, Reformulations
from .vocabularies import CATALOG, GROUPS, Phrase, Vocabulary, vocabulary

__all__ = [
    "CATALOG",
    "CATEGORIES",
    "CELLS",
    "FAMILIES",
    "GROUPS",
    "HORN_PRESENTATIONS",
    "PRESENTATIONS",
    "SYSTEM_PROMPT",
    "AnswerMap",
    "AuditComponent",
    "Concepts",
    "Family",
    "Grammar",
    "Horn",
    "HornInstance",
    "IWInstance",
    "IW_PRESENTATIONS",
    "Intervention",
    "InvalidArgument",
    "Item",
    "Ordering",
    "OrderingInstance",
    "OrderingView",
    "Parsed",
    "Phrase",
    "Programs",
    "Prompt",
    "Raven",
    "Reformulations",
    "Vocabulary",
    "default_presentations",
    "family",
    "parse_choice",
    "vocabulary",
]

#: Family constructors by name, as markers and ``competence generate`` refer to them.
FAMILIES: dict[str, type] = {"ordering": Ordering, "horn": Horn, "reformulations": Reformulations,
                           "intervention": Intervention, "programs": Programs,
                           "raven": Raven, "concepts": Concepts,
                           "grammar": Grammar}


def family(name: str, **options: object) -> Family:
    """Construct the family called ``name`` with ``options``; unknown names list what exists."""
    try:
        cls = FAMILIES[name]
    except (KeyError, TypeError):
        raise InvalidArgument(
            f"Unknown family={name!r}. Expected one of: {', '.join(FAMILIES)}"
        ) from None
    try:
        return cls(**options)
    except TypeError as exc:
        if isinstance(exc, InvalidArgument):
            raise
        raise InvalidArgument(f"family={name!r} does not take these options: {exc}") from None
