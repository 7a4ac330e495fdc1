"""``competence generate horn``: the Horn family's flags, designs and record metadata.

Records' ``meta`` say how an independent checker re-derives the gold answer from the prompt text
alone (CBE paper, arXiv:2610.22894, App. C): the atoms, the goal and the two rule templates.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pytest_competence.protocol import Family, Item, construct, default_presentations

__all__ = ["HORN_GRID", "TEMPLATES", "add_options", "designs", "meta"]

HORN_GRID = (4, 8, 16, 32, 64, 128)  # the rule counts of the CBE paper, arXiv:2610.22894, App. C.1
TEMPLATES = {"if": "If {body}, then {head}.", "whenever": "{head} holds whenever {body} hold."}


def add_options(group: Any) -> None:
    group.add_argument(
        "--vary",
        choices=["rules", "depth", "distractors"],
        default="rules",
        help="horn: what the level counts (default rules; grid 4,…,128 by default)",
    )
    group.add_argument("--depth", type=int, default=None, help="horn: fixed proof depth")
    group.add_argument(
        "--distractor-rules",
        type=int,
        default=None,
        metavar="K",
        help="horn: distractor rules beside the proof (with --vary depth)",
    )


def designs(cls: type[Family], args: Any) -> Iterator[tuple[Any, dict[str, Any]]]:
    horn = construct(
        cls,
        {
            "vary": args.vary,
            "depth": args.depth,
            "distractors": args.distractor_rules,
            **dict(args.options),
        },
    )
    yield (
        horn,
        dict(
            levels=args.levels or list(HORN_GRID),
            pairs=args.pairs or 200,
            presentations=args.presentations or default_presentations(horn),
        ),
    )


def meta(item: Item) -> dict[str, Any]:
    z = item.instance
    return {"atoms": sorted(z.atoms), "goal": z.goal, "templates": TEMPLATES}
