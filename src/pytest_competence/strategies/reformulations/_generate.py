"""``competence generate reformulations``: the CRTBench paper family's flags, designs and metadata.

Records' ``meta`` give the category and the answers; ``params`` the transformation and its
declared answer map.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pytest_competence.protocol import Family, Item, construct, default_presentations

from ._instances import CATEGORIES

__all__ = ["REFORMULATION_GRID", "add_options", "designs", "meta"]

REFORMULATION_GRID = (2, 4, 6)


def _names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def add_options(group: Any) -> None:
    group.add_argument(
        "--category",
        type=_names,
        default=["all"],
        help="reformulations: categories, comma-separated, or 'all' (default)",
    )
    group.add_argument(
        "--prompt",
        choices=["zero_shot", "cot"],
        default="zero_shot",
        help="reformulations: the CRTBench paper, App. B system prompt",
    )


def designs(cls: type[Family], args: Any) -> Iterator[tuple[Any, dict[str, Any]]]:
    categories = list(CATEGORIES) if args.category == ["all"] else args.category
    for category in categories:
        family = construct(cls, {"category": category, "prompt": args.prompt, **dict(args.options)})
        levels = args.levels or [n for n in REFORMULATION_GRID if n >= CATEGORIES[category][0]]
        yield (
            family,
            dict(
                levels=levels,
                pairs=args.pairs or 200,
                presentations=args.presentations or default_presentations(family),
            ),
        )


def meta(item: Item) -> dict[str, Any]:
    return {"category": item.params["category"], "answers": ["Yes", "No", "Cannot be determined"]}
