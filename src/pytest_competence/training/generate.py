"""``competence generate FAMILY``: a family's seeded design as a dataset, streamed.

One JSON Lines record per prompt (:data:`SCHEMA`), with everything an auditor or a training
pipeline needs: family, instance id, parameters θ, presentation and its relation to the gold
answer, system prompt, prompt, gold answer, answer space, and the family's metadata
(``Family.record_meta``) with which an independent checker recomputes the gold answer from the
prompt text alone; or, with ``--format hf``, training rows (:mod:`pytest_competence.training`).
Each family is a subcommand of its own (:func:`add_parser`), and the design is written a chunk
at a time (:func:`~pytest_competence.protocol.design_chunks`), so memory stays flat at any size.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

from pytest_competence.engine.settings import DEFAULT_MAX_PROMPTS
from pytest_competence.protocol import InvalidArgument, Item, design_chunks
from pytest_competence.registry import ENTRY_POINT_GROUP

__all__ = ["SCHEMA", "add_parser", "checked_chunks", "generate", "prompt_records"]

#: The schema every record of ``competence generate`` names.
SCHEMA = "pytest-competence/dataset/1"


def _ints(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from None


class _AsTyped(argparse.Action):
    """Stores an option's value and the spelling the command line gave it (``--pairs`` or
    ``--per-level``, ``-o`` or ``--output``), so that an error names what the user typed
    (:func:`_typed_as`)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        typed = dict(getattr(namespace, "typed_as", None) or {})
        typed[self.dest] = option_string
        namespace.typed_as = typed


def _typed_as(args: argparse.Namespace, dest: str, default: str) -> str:
    """The spelling of ``dest``'s option in the command line ``args`` were parsed from
    (:class:`_AsTyped`); ``default`` when it was not given."""
    return str((getattr(args, "typed_as", None) or {}).get(dest) or default)


def _floats(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers, got {text!r}"
        ) from None


def _names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _option(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` with VALUE a Python literal (``hint=True``, ``extra_support=8``) or text."""
    import ast

    key, sep, value = text.partition("=")
    if not sep or not key.strip().isidentifier():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE (e.g. hint=True), got {text!r}")
    try:
        return key.strip(), ast.literal_eval(value.strip())
    except (ValueError, SyntaxError):
        return key.strip(), value.strip()


def add_parser(sub: Any, argv: Sequence[str] | None) -> None:
    """``competence generate FAMILY``: one subcommand per family (the built-in ones and those
    registered by entry point, listed without importing them), each with the common flags and
    the family's own (``Family.generate_options``). Only the family ``argv`` names is imported
    to add its flags, and each family's flags live in its own parser: two families may use the
    same flag, each for its own meaning."""
    from pytest_competence.registry import FAMILIES

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--levels",
        type=_ints,
        default=None,
        help="Levels, comma-separated (default: the family's own grid)",
    )
    common.add_argument(
        "--per-level",
        type=int,
        default=None,
        dest="pairs",
        help="Instances per level (default: 200, or the family's own)",
    )
    common.add_argument(
        "--seed",
        type=int,
        default=None,
        help="Design seed (default 1; with --split, the split's first seed)",
    )
    common.add_argument(
        "--presentations",
        type=_names,
        default=None,
        help="Comma-separated (default: the family's own)",
    )
    common.add_argument(
        "--option",
        type=_option,
        action="append",
        default=[],
        dest="options",
        metavar="KEY=VALUE",
        help="A constructor option of the family, repeatable (e.g. programs: "
        "hint=True; grammar: extra_support=8)",
    )
    common.add_argument(
        "--format",
        choices=["jsonl", "hf"],
        default="jsonl",
        help="jsonl: audit records; hf: training rows (prompt, system, gold, "
        "instance_id, presentation, …) with each instance's rows adjacent",
    )
    common.add_argument(
        "--split",
        default=None,
        metavar="NAME",
        help="A named split of the family (every family: train, eval; some "
        "have their own): its seeds and option values (default with "
        "--format hf: the family's training split)",
    )
    common.add_argument(
        "-o",
        "--output",
        default="-",
        action=_AsTyped,
        help="Output file (default: standard output)",
    )
    common.add_argument(
        "--max-prompts",
        type=int,
        default=DEFAULT_MAX_PROMPTS,
        help=f"Refuse designs of more prompts than this, levels x pairs x "
        f"presentations (default {DEFAULT_MAX_PROMPTS})",
    )
    gen = sub.add_parser("generate", help="Write a family's seeded design as JSON Lines")
    families = gen.add_subparsers(
        dest="family",
        metavar="FAMILY",
        required=True,
        help="Task family: a built-in family's name or that of a family registered in the "
        "pytest_competence.families entry-point group",
    )
    named = _named_family(argv)
    if named is not None and named not in FAMILIES:
        gen.error(
            f"argument FAMILY: unknown family {named!r}; expected one of "
            f"{', '.join(FAMILIES)}, or a family registered in the "
            f"{ENTRY_POINT_GROUP!r} entry-point group"
        )
    for name in FAMILIES:
        parser = families.add_parser(
            name,
            parents=[common],
            help=f"the {name} family",
            description=f"Write the {name} family's seeded design as JSON Lines",
        )
        if name == named:
            FAMILIES.hooks(name).generate_options(parser.add_argument_group(f"{name} options"))


def _named_family(argv: Sequence[str] | None) -> str | None:
    """The word after ``generate`` in ``argv`` (the command line's by default), if any."""
    words = list(sys.argv[1:] if argv is None else argv)
    if "generate" not in words:
        return None
    after = words[words.index("generate") + 1 :]
    return after[0] if after and not after[0].startswith("-") else None


def prompt_records(
    items: Sequence[Item], schema: str, meta: Callable[[Item], dict[str, Any]]
) -> Iterator[dict[str, Any]]:
    """One JSON Lines record per prompt, with the family's checker metadata per instance."""
    for item in items:
        shared = meta(item)
        for prompt in item.prompts:
            yield {
                "schema": schema,
                "family": prompt.family,
                "instance_id": prompt.instance_id,
                "params": dict(prompt.params),
                "presentation": prompt.presentation,
                "answer_map": dict(prompt.answer_map.pairs),
                "system": prompt.system,
                "prompt": prompt.text,
                "gold": prompt.gold,
                "answer_space": list(prompt.answer_space),
                "meta": shared,
            }


def checked_chunks(
    family: Any,
    args: argparse.Namespace,
    written: int,
    *,
    levels: Sequence[int],
    pairs: int,
    presentations: Sequence[str],
) -> Iterator[list[Item]]:
    """``family``'s design at ``args.seed`` in chunks (:func:`design_chunks`), once its size
    (with the ``written`` prompts before it) is known to be within ``--max-prompts``;
    :class:`InvalidArgument` otherwise, raised here rather than at the first chunk."""
    from pytest_competence.engine.settings import check_prompt_count

    check = getattr(family, "check_design", None)
    if check is not None:  # a bad argument is named before the size is counted from it
        try:
            check(levels=levels, pairs=pairs, seed=args.seed, presentations=presentations)
        except InvalidArgument as exc:  # in the command's words: --per-level is pairs=
            raise InvalidArgument(re.sub(r"\bpairs=(-?\d+)", r"--per-level \1", str(exc))) from None
    count = len(levels) * pairs * len(presentations)
    check_prompt_count(
        written + count,
        args.max_prompts,
        f"{len(levels)} level(s) x pairs={pairs} x {len(presentations)} "
        f"presentation(s)" + (f", after {written:,} already written" if written else ""),
        "--max-prompts",
    )
    return design_chunks(
        family, levels=levels, pairs=pairs, seed=args.seed, presentations=presentations
    )


def generate(args: argparse.Namespace, out: TextIO) -> int:
    """Write the designs the arguments describe (``Family.generate_designs``): audit records
    with the family's checker metadata (``Family.record_meta``), or training rows."""
    from pytest_competence.registry import FAMILIES
    from pytest_competence.training import resolve_split

    resolve_split(args)
    if args.format == "hf" and not args.presentations:
        args.presentations = list(FAMILIES.hooks(args.family).training_presentations) or None
    designs = _checked_designs(args)
    if args.format == "hf":
        from pytest_competence.training import write_rows

        return write_rows(designs, out, seed=args.seed)
    meta = FAMILIES.hooks(args.family).record_meta
    count = 0
    for items in designs:
        for record in prompt_records(items, SCHEMA, meta):
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count


def _checked_designs(args: argparse.Namespace) -> Iterator[list[Item]]:
    """Each design a chunk at a time, once its size (with the prompts before it) is within
    ``--max-prompts``."""
    from pytest_competence.registry import FAMILIES

    written = 0
    for family, design in FAMILIES.hooks(args.family).generate_designs(args):
        for items in checked_chunks(family, args, written, **design):
            written += sum(len(item.prompts) for item in items)
            yield items
