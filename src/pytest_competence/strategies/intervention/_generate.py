"""``competence generate intervention``: the intervention-worlds designs and record metadata.

Records' ``meta`` give the literal and rule templates, the three-valued semantics and the letter
mapping (``params``: world, mapping, readout, transition, label).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pytest_competence.protocol import Family, Item, construct, default_presentations

__all__ = ["INTERVENTION_GRID", "IW_SEMANTICS", "designs", "meta"]

INTERVENTION_GRID = (4, 8, 16, 32)  # rules in the base theory
IW_SEMANTICS = {
    "fact": "{atom} is true. | {atom} is false.",
    "rule": "If {literal} and {literal}, then {literal}.",
    "label": "TRUE if forward chaining over signed literals derives the query, FALSE if it "
    "derives its negation, UNKNOWN otherwise (open world)",
    "mapping": "params.mapping 'TFU' means A = TRUE, B = FALSE, C = UNKNOWN",
}


def designs(cls: type[Family], args: Any) -> Iterator[tuple[Any, dict[str, Any]]]:
    worlds = construct(cls, dict(args.options))
    # 60, not the usual 200: the design's cells (6 transitions) must divide the pairs.
    yield (
        worlds,
        dict(
            levels=args.levels or list(INTERVENTION_GRID),
            pairs=args.pairs or 60,
            presentations=args.presentations or default_presentations(worlds),
        ),
    )


def meta(item: Item) -> dict[str, Any]:
    return {"query": item.instance.query, "semantics": IW_SEMANTICS}
