"""Task families for competence-based evaluation: latent instances, oracles, renderers, transforms.

Installed as ``pytest_competence.strategies`` (never as a bare top-level ``strategies``, which would
collide in users' environments). Depends on numpy, and on Hypothesis for the strategies only.
"""

from __future__ import annotations

from typing import Any

from ._core import (
    AnswerMap,
    AuditComponent,
    Family,
    Figure,
    InvalidArgument,
    Item,
    Parsed,
    Prompt,
    Table,
    Transform,
    compose,
    default_presentations,
    is_family,
    parse_choice,
    stream_rng,
)
from ._registry import ENTRY_POINT_GROUP, FamilyRegistry
from .concepts import Concepts
from .grammar import Grammar
from .horn import HORN_PRESENTATIONS, Horn, HornInstance
from .intervention import IW_PRESENTATIONS, Intervention, IWInstance
from .ordering import CELLS, PRESENTATIONS, SYSTEM_PROMPT, Ordering, OrderingInstance, OrderingView
from .programs import Programs
from .raven import Raven
from .reformulations import CATEGORIES, Reformulations
from .ordering.vocabularies import CATALOG, GROUPS, Phrase, Vocabulary, vocabulary

__all__ = [
    "AuditComponent",
    "CATALOG",
    "CATEGORIES",
    "CELLS",
    "DEFAULT_FAMILY",
    "FAMILIES",
    "GROUPS",
    "HORN_PRESENTATIONS",
    "PRESENTATIONS",
    "SYSTEM_PROMPT",
    "AnswerMap",
    "AuditComponent",
    "Concepts",
    "DesignSpace",
    "ENTRY_POINT_GROUP",
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
    "Table",
    "Transform",
    "Vocabulary",
    "compose",
    "default_presentations",
    "family",
    "is_family",
    "parse_choice",
    "stream_rng",
    "vocabulary",
]

#: Family classes by name, as markers, ``competence generate``, reports and ``ref:`` policies
#: refer to them: the built-in ones, then those registered in the ``pytest_competence.families``
#: entry-point group (imported when first looked up).
FAMILIES = FamilyRegistry({"ordering": Ordering, "horn": Horn, "reformulations": Reformulations,
                           "intervention": Intervention, "programs": Programs,
                           "raven": Raven, "concepts": Concepts,
                           "grammar": Grammar})


#: The family of a ``@pytest.mark.competence`` declaration that names none.
DEFAULT_FAMILY = "ordering"


def __getattr__(name: str) -> Any:
    if name == "DesignSpace":  # imports Hypothesis: only when asked for
        from ._design_cases import DesignSpace

        return DesignSpace
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def family(name: str, **options: object) -> Family:
    """Construct the family called ``name`` with ``options``; unknown names list what exists."""
    try:
        cls = FAMILIES[name]
    except (KeyError, TypeError):
        raise InvalidArgument(
            f"Unknown family={name!r}. Expected one of: {', '.join(FAMILIES)} (or a family "
            f"registered in the {ENTRY_POINT_GROUP!r} entry-point group)"
        ) from None
    try:
        return cls(**options)
    except TypeError as exc:
        if isinstance(exc, InvalidArgument):
            raise
        raise InvalidArgument(
            f"family={name!r} does not take these options: {exc} "
            f"(given: {', '.join(map(repr, sorted(options)))})"
        ) from None
