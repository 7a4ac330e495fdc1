"""Task families for competence-based evaluation: latent instances, oracles, renderers, transforms.

One folder per built-in family (``ordering/``, ``horn/``, ``reformulations/``, ``intervention/``,
``programs/``, ``raven/``, ``concepts/``, ``grammar/``; rule-induction code shared by the last four
in ``_induction/``). This face is what a family author imports: the family protocol
(:mod:`pytest_competence.protocol`), the registry (:mod:`pytest_competence.registry`), the
helpers families are written with (:func:`stream_rng`, :func:`parse_choice`, the ``check_*``
functions, :class:`DesignSpace`), and the built-in families' classes and tables, each imported
only when first used. Installed as ``pytest_competence.strategies`` (never as a bare top-level
``strategies``, which would collide in users' environments). Depends on numpy, and on Hypothesis
for the strategies only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_competence._lazy import lazy_attributes
from pytest_competence.protocol import (
    AnswerMap,
    AuditComponent,
    Family,
    FamilyLike,
    Figure,
    InvalidArgument,
    Item,
    Observation,
    Parsed,
    Prompt,
    Table,
    Transform,
    compose,
    default_presentations,
    parse_choice,
)
from pytest_competence.registry import DEFAULT_FAMILY, ENTRY_POINT_GROUP, FAMILIES, family

from ._checks import (
    check_levels,
    check_pairs,
    check_presentations,
    check_seed,
    check_sequence,
    check_word,
)
from ._rng import stream_rng

if TYPE_CHECKING:
    from ._design_cases import DesignSpace
    from .concepts import Concepts
    from .grammar import Grammar
    from .horn import HORN_PRESENTATIONS, Horn, HornInstance
    from .intervention import IW_PRESENTATIONS, Intervention, IWInstance
    from .ordering import (
        CELLS,
        PRESENTATIONS,
        SYSTEM_PROMPT,
        Ordering,
        OrderingInstance,
        OrderingView,
    )
    from .ordering.vocabularies import CATALOG, GROUPS, Phrase, Vocabulary, vocabulary
    from .programs import Programs
    from .raven import Raven
    from .reformulations import CATEGORIES, Reformulations

__all__ = [
    "CATALOG",
    "CATEGORIES",
    "CELLS",
    "DEFAULT_FAMILY",
    "ENTRY_POINT_GROUP",
    "FAMILIES",
    "GROUPS",
    "HORN_PRESENTATIONS",
    "IW_PRESENTATIONS",
    "PRESENTATIONS",
    "SYSTEM_PROMPT",
    "AnswerMap",
    "AuditComponent",
    "Concepts",
    "DesignSpace",
    "Family",
    "FamilyLike",
    "Figure",
    "Grammar",
    "Horn",
    "HornInstance",
    "IWInstance",
    "Intervention",
    "InvalidArgument",
    "Item",
    "Observation",
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
    "check_levels",
    "check_pairs",
    "check_presentations",
    "check_seed",
    "check_sequence",
    "check_word",
    "compose",
    "default_presentations",
    "family",
    "parse_choice",
    "stream_rng",
    "vocabulary",
]

#: The names this face hands on from a family's folder (or from Hypothesis's strategies), each
#: imported when first asked for: importing the protocol, or one family, imports no other.
_LAZY = {
    "DesignSpace": "._design_cases",
    "Concepts": ".concepts",
    "Grammar": ".grammar",
    **dict.fromkeys(("HORN_PRESENTATIONS", "Horn", "HornInstance"), ".horn"),
    **dict.fromkeys(("IW_PRESENTATIONS", "Intervention", "IWInstance"), ".intervention"),
    **dict.fromkeys(
        ("CELLS", "PRESENTATIONS", "SYSTEM_PROMPT", "Ordering", "OrderingInstance", "OrderingView"),
        ".ordering",
    ),
    **dict.fromkeys(
        ("CATALOG", "GROUPS", "Phrase", "Vocabulary", "vocabulary"), ".ordering.vocabularies"
    ),
    "Programs": ".programs",
    "Raven": ".raven",
    **dict.fromkeys(("CATEGORIES", "Reformulations"), ".reformulations"),
}


__getattr__ = lazy_attributes(__name__, _LAZY)
