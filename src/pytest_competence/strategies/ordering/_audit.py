"""The supports an audit may add to an ordering suite (:meth:`Ordering.audit_components`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_competence.protocol import AuditComponent, InvalidArgument

if TYPE_CHECKING:
    from . import Ordering

__all__ = ["audit_components"]


def audit_components(
    family: Ordering, levels: Sequence[int], presentations: Sequence[str]
) -> list[AuditComponent]:
    """A larger n (if the name pool holds it), the converse rewording (if absent), interior
    queries (or endpoint queries), a second vocabulary and, with the chain-ordered names line,
    the shuffled one — each catches a known shortcut."""
    out = []
    larger = 2 * max(levels)
    try:
        family.check_n(larger)
        out.append(AuditComponent(f"larger n (n={larger})", "level", larger))
    except InvalidArgument:
        pass
    if "equivalent" not in presentations:
        out.append(AuditComponent("converse rewording", "presentation", "equivalent"))
    if family.distance is None:
        out.append(AuditComponent("interior queries (distance=2)", "option", {"distance": 2}))
    else:
        out.append(AuditComponent("endpoint queries", "option", {"distance": None}))
    second = "left_right" if family.vocabulary.name != "left_right" else "front_behind"
    out.append(AuditComponent(f"second vocabulary ({second})", "option", {"vocabulary": second}))
    if family.names_line == "chain":
        out.append(AuditComponent("shuffled names line", "option", {"names_line": "shuffled"}))
    return out
