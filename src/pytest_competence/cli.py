"""The ``competence`` command: ``competence generate FAMILY …`` writes a design as JSON Lines.

One record per prompt, with everything an auditor or a training pipeline needs: family, instance
id, parameters θ, presentation and its relation to the gold answer, system prompt, prompt, gold
answer, answer space, and the metadata (entity names, forward and converse phrases) with which an
independent checker recomputes the gold answer from the prompt text alone.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

from pytest_competence.strategies import CATALOG, PRESENTATIONS, InvalidArgument, Item, Ordering

__all__ = ["main", "records"]

SCHEMA = "pytest-competence/dataset/1"
BASE_GRID = "4,8,16,32,64,128,256,512,1024"


def _ints(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def _names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="competence", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="Write a family's seeded design as JSON Lines")
    gen.add_argument("family", choices=["ordering"], help="Task family")
    gen.add_argument("--levels", type=_ints, default=_ints(BASE_GRID),
                     help=f"Chain lengths, comma-separated (default {BASE_GRID})")
    gen.add_argument("--per-level", type=int, default=200, dest="pairs",
                     help="Instances per level, a multiple of 4 (default 200)")
    gen.add_argument("--seed", type=int, default=1, help="Design seed (default 1)")
    gen.add_argument("--vocabulary", type=_names, default=["front_behind"],
                     help="Vocabulary names, comma-separated, or 'all' for the 31-relation catalog")
    gen.add_argument("--protocol", choices=["P", "L"], default="P", help="Rewrite protocol")
    gen.add_argument("--presentations", type=_names, default=["original", "equivalent"],
                     help=f"Comma-separated, among: {', '.join(PRESENTATIONS)}")
    gen.add_argument("--names", choices=["pool", "random"], default="pool",
                     help="First-name pool, or the random five-letter control")
    gen.add_argument("--names-line", choices=["shuffled", "chain"], default="shuffled",
                     help="'chain' is the App. F.3 artifact, a diagnostic control only")
    gen.add_argument("--distractors", type=float, default=0.0, metavar="RHO",
                     help="Distractor premises over disjoint entities, at ratio RHO")
    gen.add_argument("--distance", type=int, default=None, metavar="D",
                     help="Ask about interior entities D links apart instead of the endpoints")
    gen.add_argument("-o", "--output", default="-", help="Output file (default: standard output)")
    return parser


def records(family: Ordering, items: Sequence[Item]) -> Iterator[dict[str, Any]]:
    """The JSON Lines records of a design, one per prompt."""
    voc = family.vocabulary
    phrases = {
        "forward": voc.forward.statement,
        "converse": voc.converse.statement,
        "forward_negated": voc.forward.negation,
        "converse_negated": voc.converse.negation,
        "forward_question": voc.forward.question,
        "converse_question": voc.converse.question,
    }
    for item in items:
        z = item.instance
        for prompt in item.prompts:
            yield {
                "schema": SCHEMA,
                "family": prompt.family,
                "instance_id": prompt.instance_id,
                "params": dict(prompt.params),
                "presentation": prompt.presentation,
                "answer_map": dict(prompt.answer_map.pairs),
                "system": prompt.system,
                "prompt": prompt.text,
                "gold": prompt.gold,
                "answer_space": list(prompt.answer_space),
                "meta": {"entities": sorted(z.entities), "phrases": phrases},
            }


def generate(args: argparse.Namespace, out: TextIO) -> int:
    vocabularies = [v.name for v in CATALOG] if args.vocabulary == ["all"] else args.vocabulary
    count = 0
    for name in vocabularies:
        family = Ordering(
            vocabulary=name, protocol=args.protocol, names=args.names,
            names_line=args.names_line, distractors=args.distractors, distance=args.distance,
        )
        items = family.design(levels=args.levels, pairs=args.pairs, seed=args.seed,
                              presentations=args.presentations)
        for record in records(family, items):
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.output == "-":
            count = generate(args, sys.stdout)
        else:
            with open(args.output, "w", encoding="utf-8") as out:
                count = generate(args, out)
    except InvalidArgument as exc:
        parser.error(str(exc))
    if args.output != "-":
        print(f"wrote {count} prompts to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
