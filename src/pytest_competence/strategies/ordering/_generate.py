"""``competence generate ordering``: the ordering family's flags, designs and record metadata.

Records' ``meta`` give the entity names and every phrase of the vocabulary, with which an
independent checker recomputes the gold answer from the prompt text alone. With a split (see
``pytest_competence.training.splits``) the vocabularies default to the split's and must lie inside it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pytest_competence.protocol import InvalidArgument, Item, construct, default_presentations

from ._instances import PRESENTATIONS

if TYPE_CHECKING:
    from . import Ordering
from .vocabularies import CATALOG, vocabulary

__all__ = ["add_options", "designs", "meta"]


def _names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def add_options(group: Any) -> None:
    group.add_argument(
        "--vocabulary",
        type=_names,
        default=None,
        help="Vocabulary names, comma-separated, or 'all' for the 31-relation "
        "catalog (default front_behind; with --split, the split's "
        "vocabularies)",
    )
    group.add_argument("--protocol", choices=["P", "L"], default="P", help="Rewrite protocol")
    group.add_argument(
        "--names",
        choices=["pool", "random"],
        default="pool",
        help="First-name pool, or the random five-letter control",
    )
    group.add_argument(
        "--names-line",
        choices=["shuffled", "chain"],
        default="shuffled",
        help="'chain' is the App. F.3 artifact, a diagnostic control only",
    )
    group.add_argument(
        "--distractors",
        type=float,
        default=0.0,
        metavar="RHO",
        help="Distractor premises over disjoint entities, at ratio RHO",
    )
    group.add_argument(
        "--distance",
        type=int,
        default=None,
        metavar="D",
        help="Ask about interior entities D links apart instead of the endpoints",
    )
    group.description = f"presentations among: {', '.join(PRESENTATIONS)}"


def _vocabularies(args: Any) -> list[str]:
    """``--vocabulary``, resolved: ``all``, the split's held-out values, else front_behind."""
    chosen = getattr(args, "split_chosen", None)
    held = list(chosen.options.get("vocabulary", ())) if chosen is not None else []
    names = args.vocabulary
    if held:
        if names in (None, ["all"]):
            names = held
        outside = [v for v in names if v not in held]
        if outside:
            raise InvalidArgument(f"--vocabulary {','.join(outside)} is outside split {chosen}")
    if names == ["all"]:
        names = [v.name for v in CATALOG]
    return names or ["front_behind"]


def designs(cls: type[Ordering], args: Any) -> Iterator[tuple[Any, dict[str, Any]]]:
    for name in _vocabularies(args):
        family = construct(
            cls,
            {
                "vocabulary": name,
                "protocol": args.protocol,
                "names": args.names,
                "names_line": args.names_line,
                "distractors": args.distractors,
                "distance": args.distance,
                **dict(args.options),
            },
        )
        yield (
            family,
            dict(
                levels=args.levels or list(cls.default_levels),
                pairs=args.pairs or 200,
                presentations=args.presentations or default_presentations(family),
            ),
        )


def meta(item: Item) -> dict[str, Any]:
    phrases = item.params.get("phrases") or vocabulary(item.params["vocabulary"]).phrases
    return {"entities": sorted(item.instance.entities), "phrases": phrases}
