"""``competence generate`` for the rule-induction families (systematicity paper, arXiv:2609.13948): flags, designs, metadata.

Records' ``meta`` give the answer format and the isomorphism types (``params`` hold each prompt's
type and variation, and the family options that rebuild it).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pytest_competence.protocol import Family, Item, construct, default_presentations

__all__ = ["add_options", "designs", "meta"]


def add_options(group: Any) -> None:
    group.add_argument(
        "--variations",
        type=int,
        default=5,
        metavar="K",
        help="rule-induction families (systematicity paper, arXiv:2609.13948): isomorphic variations per type "
        "and task (default 5; levels default to the family's whole range)",
    )


def designs(cls: type[Family], args: Any) -> Iterator[tuple[Any, dict[str, Any]]]:
    rules: Any = construct(cls, {"variations": args.variations, **dict(args.options)})
    lo, hi = rules.levels  # a RuleInduction: its smallest and largest level
    yield (
        rules,
        dict(
            levels=args.levels or list(range(lo, hi + 1)),
            pairs=args.pairs or 200,
            presentations=args.presentations or default_presentations(rules),
        ),
    )


def meta(item: Item) -> dict[str, Any]:
    kinds = list(dict.fromkeys(p.params["isomorphism"] for p in item.prompts))
    return {
        "answer_format": "a JSON list, one entry per query, in query order",
        "isomorphisms": kinds,
    }
