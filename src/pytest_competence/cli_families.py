"""``competence generate horn|reformulations|…``: the families beyond ordering as JSON Lines.

Records have the same fields as ordering's (see :mod:`pytest_competence.cli`); ``meta`` says how
an independent checker re-derives the gold answer from the prompt text alone: for Horn programs
(seeds/000 App. C) the atoms and the two rule templates; for reformulations (seeds/004) the
category, the transformation and its declared answer map; for intervention worlds the literal and
rule templates, the three-valued semantics and the letter mapping (``params``: world, mapping,
readout, transition, label); for the rule-induction families
(seeds/002) the answer format and the isomorphism types (``params`` hold each prompt's type and
variation, and the family options that rebuild it).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

from pytest_competence.strategies import (
    CATEGORIES,
    FAMILIES,
    Horn,
    InvalidArgument,
    Item,
    IWInstance,
    Reformulations,
    default_presentations,
)
from pytest_competence.strategies import family as make_family
from pytest_competence.strategies._induction import Task
from pytest_competence.strategies._induction.metrics import induction_families

__all__ = [
    "HORN_GRID", "REFORMULATION_GRID", "family_records", "generate_family", "options_error",
]

HORN_GRID = [4, 8, 16, 32, 64, 128]  # the rule counts of seeds/000 App. C.1
REFORMULATION_GRID = [2, 4, 6]
INTERVENTION_GRID = [4, 8, 16, 32]  # rules in the base theory
IW_SEMANTICS = {
    "fact": "{atom} is true. | {atom} is false.",
    "rule": "If {literal} and {literal}, then {literal}.",
    "label": "TRUE if forward chaining over signed literals derives the query, FALSE if it "
             "derives its negation, UNKNOWN otherwise (open world)",
    "mapping": "params.mapping 'TFU' means A = TRUE, B = FALSE, C = UNKNOWN",
}
TEMPLATES = {"if": "If {body}, then {head}.", "whenever": "{head} holds whenever {body} hold."}


#: The families whose records and designs this module knows; any other family gives its own
#: (``Family.record_meta``, ``Family.default_levels``, ``--option``).
_OWN = ("horn", "reformulations", "intervention")


def _meta(item: Item) -> dict[str, Any]:
    name = item.prompts[0].family if item.prompts else ""
    if name not in _OWN and name not in induction_families():
        return dict(FAMILIES.hook(name, "record_meta")(item))
    z = item.instance
    if isinstance(z, Task):  # a rule-induction task: the answers are read back as a JSON list
        kinds = list(dict.fromkeys(p.params["isomorphism"] for p in item.prompts))
        return {"answer_format": "a JSON list, one entry per query, in query order",
                "isomorphisms": kinds}
    if isinstance(z, IWInstance):
        return {"query": z.query, "semantics": IW_SEMANTICS}
    if hasattr(z, "goal"):  # a Horn instance
        return {"atoms": sorted(z.atoms), "goal": z.goal, "templates": TEMPLATES}
    return {"category": item.params["category"], "answers": ["Yes", "No", "Cannot be determined"]}


def family_records(items: Sequence[Item], schema: str) -> Iterator[dict[str, Any]]:
    """The JSON Lines records of a design, one per prompt."""
    from pytest_competence.cli import prompt_records

    return prompt_records(items, schema, _meta)


def _designs(args: argparse.Namespace,
             default_levels: list[int]) -> Iterator[tuple[Any, dict[str, Any]]]:
    """``(family, design arguments)`` for each design the arguments describe (seed aside)."""
    induction = induction_families().get(args.family)
    if induction is not None:
        rules = make_family(args.family, **{"variations": args.variations, **dict(args.options)})
        assert isinstance(rules, induction)
        lo, hi = rules.levels
        levels = list(range(lo, hi + 1)) if args.levels == default_levels else args.levels
        yield rules, dict(levels=levels, pairs=args.pairs,
                          presentations=args.presentations or default_presentations(rules))
        return
    if args.family not in _OWN:
        made = make_family(args.family, **dict(args.options))
        own = list(FAMILIES.hook(args.family, "default_levels"))
        levels = own if own and args.levels == default_levels else args.levels
        yield made, dict(levels=levels, pairs=args.pairs,
                         presentations=args.presentations or default_presentations(made))
        return
    if args.options and args.family != "intervention":
        raise options_error(args.family)
    if args.family == "horn":
        horn = Horn(vary=args.vary, depth=args.depth, distractors=args.distractor_rules)
        levels = HORN_GRID if args.levels == default_levels else args.levels
        yield horn, dict(levels=levels, pairs=args.pairs,
                         presentations=args.presentations or default_presentations(horn))
        return
    if args.family == "intervention":
        levels = INTERVENTION_GRID if args.levels == default_levels else args.levels
        pairs = 60 if args.pairs == 200 else args.pairs  # 200 (the default) is not a multiple of 6
        worlds = make_family("intervention", **dict(args.options))
        yield worlds, dict(levels=levels, pairs=pairs,
                           presentations=args.presentations or default_presentations(worlds))
        return
    categories = list(CATEGORIES) if args.category == ["all"] else args.category
    for category in categories:
        family = Reformulations(category=category, prompt=args.prompt)
        levels = ([n for n in REFORMULATION_GRID if n >= CATEGORIES[category][0]]
                  if args.levels == default_levels else args.levels)
        yield family, dict(levels=levels, pairs=args.pairs,
                           presentations=args.presentations or default_presentations(family))


def options_error(name: str) -> InvalidArgument:
    """``--option`` given to a family that takes dedicated flags instead."""
    return InvalidArgument(
        f"--option applies to the intervention and rule-induction families; {name} takes its "
        f"own flags (see competence generate --help)")


def generate_family(args: argparse.Namespace, out: TextIO, schema: str,
                    default_levels: list[int]) -> int:
    """Write the design the arguments describe; default grids become the family's own."""
    designs = _checked_designs(args, default_levels)
    if args.format == "hf":
        from pytest_competence.training import write_rows

        return write_rows(designs, out, seed=args.seed)
    count = 0
    for items in designs:
        for record in family_records(items, schema):
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count


def _checked_designs(args: argparse.Namespace, default_levels: list[int]) -> Iterator[list[Item]]:
    """Each design, once its size (with the prompts before it) is within ``--max-prompts``."""
    from pytest_competence.cli import checked_design

    written = 0
    for family, design in _designs(args, default_levels):
        items = checked_design(family, args, written, **design)
        written += sum(len(item.prompts) for item in items)
        yield items
