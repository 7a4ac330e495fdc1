"""The ``competence`` command: ``generate`` datasets, ``report`` from an archive, ``plan`` sizes.

``competence generate FAMILY …`` writes a design as JSON Lines: one record per prompt, with everything an auditor or a training pipeline needs: family, instance
id, parameters θ, presentation and its relation to the gold answer, system prompt, prompt, gold
answer, answer space, and the metadata (entity names, forward and converse phrases) with which an
independent checker recomputes the gold answer from the prompt text alone.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

from pytest_competence.protocol import InvalidArgument, Item, design_chunks
from pytest_competence.registry import ENTRY_POINT_GROUP

from pytest_competence._settings import (
    DEFAULT_MAX_PROMPTS,
    output_path_problem,
    records_path_problem,
)

__all__ = ["checked_chunks", "main", "prompt_records"]

SCHEMA = "pytest-competence/dataset/1"


def _ints(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


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


def _parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="competence", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    _generate_parser(sub, argv)
    rep = sub.add_parser("report", help="Recompute and re-render a results JSON, no model calls")
    rep.add_argument("results", help="A file written by pytest --competence-json")
    rep.add_argument("--html", help="Write the HTML report here")
    rep.add_argument("--markdown", help="Write the Markdown summary here")
    rep.add_argument("--json", help="Write the recomputed results document here, its records "
                     "beside it")
    rep.add_argument("--records", help="With --json: write the records file here (a name ending "
                     "in .gz is gzip-compressed; default: the JSON's name with .records.jsonl)")
    rep.add_argument("--bootstrap", type=int, default=None,
                     help="Bootstrap resamples (default: as recorded in the file)")
    batch = sub.add_parser("batch", help="The OpenAI Batch path: import a batch run's answers")
    batch_sub = batch.add_subparsers(dest="batch_command", required=True)
    imp = batch_sub.add_parser("import", help="Store OpenAI Batch output lines in the response "
                               "cache (requests exported by pytest --competence-batch-export)")
    imp.add_argument("results", nargs="+", help="Batch output files (JSON Lines)")
    imp.add_argument("--cache", default=".competence/cache.sqlite",
                     help="The response cache file (default: .competence/cache.sqlite, as the "
                     "competence_cache_path ini option)")
    plan = sub.add_parser("plan", help="Interval half-widths and detectable differences for a design")
    plan.add_argument("--pairs", type=int, default=200, help="Instances per level (default 200)")
    plan.add_argument("--levels", type=int, default=9, help="Number of levels (default 9)")
    plan.add_argument("--rates", type=_floats, default=[0.5, 0.85],
                      help="Proportions to plan for, comma-separated (default 0.5,0.85)")
    plan.add_argument("--discordance", type=_floats, default=[0.32, 0.5],
                      help="Paired discordance ψ for the detectable difference (default 0.32,0.5)")
    plan.add_argument("--confidence", type=float, default=0.95, help="Confidence (default 0.95)")
    plan.add_argument("--power", type=float, default=0.8, help="Power (default 0.8)")
    from pytest_competence.audit._command import add_parser as add_audit_parser

    add_audit_parser(sub)
    return parser


def _generate_parser(sub: Any, argv: Sequence[str] | None) -> None:
    """``competence generate FAMILY``: one subcommand per family (the built-in ones and those
    registered by entry point, listed without importing them), each with the common flags and
    the family's own (``Family.generate_options``). Only the family ``argv`` names is imported
    to add its flags, and each family's flags live in its own parser: two families may use the
    same flag, each for its own meaning."""
    from pytest_competence.registry import FAMILIES

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--levels", type=_ints, default=None,
                        help="Levels, comma-separated (default: the family's own grid)")
    common.add_argument("--per-level", type=int, default=None, dest="pairs",
                        help="Instances per level (default: 200, or the family's own)")
    common.add_argument("--seed", type=int, default=None,
                        help="Design seed (default 1; with --split, the split's first seed)")
    common.add_argument("--presentations", type=_names, default=None,
                        help="Comma-separated (default: the family's own)")
    common.add_argument("--option", type=_option, action="append", default=[], dest="options",
                        metavar="KEY=VALUE",
                        help="A constructor option of the family, repeatable (e.g. programs: "
                             "hint=True; grammar: extra_support=8)")
    common.add_argument("--format", choices=["jsonl", "hf"], default="jsonl",
                        help="jsonl: audit records; hf: training rows (prompt, system, gold, "
                             "instance_id, presentation, …) with each instance's rows adjacent")
    common.add_argument("--split", default=None, metavar="NAME",
                        help="A named split of the family (every family: train, eval; some "
                             "have their own): its seeds and option values (default with "
                             "--format hf: the family's training split)")
    common.add_argument("-o", "--output", default="-",
                        help="Output file (default: standard output)")
    common.add_argument("--max-prompts", type=int, default=DEFAULT_MAX_PROMPTS,
                        help=f"Refuse designs of more prompts than this, levels x pairs x "
                             f"presentations (default {DEFAULT_MAX_PROMPTS})")
    gen = sub.add_parser("generate", help="Write a family's seeded design as JSON Lines")
    families = gen.add_subparsers(
        dest="family", metavar="FAMILY", required=True,
        help="Task family: a built-in family's name or that of a family registered in the "
             "pytest_competence.families entry-point group")
    named = _named_family(argv)
    if named is not None and named not in FAMILIES:
        gen.error(f"argument FAMILY: unknown family {named!r}; expected one of "
                  f"{', '.join(FAMILIES)}, or a family registered in the "
                  f"{ENTRY_POINT_GROUP!r} entry-point group")
    for name in FAMILIES:
        parser = families.add_parser(name, parents=[common], help=f"the {name} family",
                                     description=f"Write the {name} family's seeded design "
                                                 f"as JSON Lines")
        if name == named:
            FAMILIES.hooks(name).generate_options(parser.add_argument_group(f"{name} options"))


def _named_family(argv: Sequence[str] | None) -> str | None:
    """The word after ``generate`` in ``argv`` (the command line's by default), if any."""
    words = list(sys.argv[1:] if argv is None else argv)
    if "generate" not in words:
        return None
    after = words[words.index("generate") + 1:]
    return after[0] if after and not after[0].startswith("-") else None


def _floats(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def plan(args: argparse.Namespace) -> int:
    """Print the seeds/000 App. A "Sample sizes" figures for this design."""
    from pytest_competence.stats import half_width, minimum_detectable_difference

    if args.pairs < 1 or args.levels < 1:
        raise ValueError(f"--pairs and --levels must be at least 1, got --pairs={args.pairs} "
                         f"--levels={args.levels}")
    total = args.pairs * args.levels
    cell = args.pairs // 4
    print(f"design: {args.levels} levels x {args.pairs} pairs = {total} pairs; "
          f"{cell} per query cell; {args.confidence:.0%} intervals (normal approximation)")
    for p in args.rates:
        print(f"  at {p:g}: ±{100 * half_width(p, args.pairs, args.confidence):.1f} points per "
              f"level, ±{100 * half_width(p, total, args.confidence):.1f} pooled, "
              f"±{100 * half_width(p, max(cell, 1), args.confidence):.1f} per cell")
    for psi in args.discordance:
        mdd = minimum_detectable_difference(total, discordance=psi, confidence=args.confidence,
                                            power=args.power)
        print(f"  paired difference detectable at {args.power:.0%} power over {total} pairs "
              f"with discordance {psi:g}: {100 * mdd:.1f} points")
    return 0


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


def checked_chunks(family: Any, args: argparse.Namespace, written: int, *,
                   levels: Sequence[int], pairs: int,
                   presentations: Sequence[str]) -> Iterator[list[Item]]:
    """``family``'s design at ``args.seed`` in chunks (:func:`design_chunks`), once its size
    (with the ``written`` prompts before it) is known to be within ``--max-prompts``;
    :class:`InvalidArgument` otherwise, raised here rather than at the first chunk."""
    from pytest_competence._settings import check_prompt_count

    check = getattr(family, "check_design", None)
    if check is not None:  # a bad argument is named before the size is counted from it
        check(levels=levels, pairs=pairs, seed=args.seed, presentations=presentations)
    count = len(levels) * pairs * len(presentations)
    check_prompt_count(written + count, args.max_prompts,
                       f"{len(levels)} level(s) x pairs={pairs} x {len(presentations)} "
                       f"presentation(s)" + (f", after {written:,} already written"
                                            if written else ""), "--max-prompts")
    return design_chunks(family, levels=levels, pairs=pairs, seed=args.seed,
                         presentations=presentations)


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


def report(args: argparse.Namespace) -> int:
    """Recompute and re-render an archive; 1 when its figures disagree with its records."""
    from pytest_competence.report import load_document, recompute, write_outputs
    from pytest_competence.report._archive import disagreements, unrecomputed
    from pytest_competence.report._terminal import summary_lines

    from pytest_competence.report._records_file import archived_records

    archived = load_document(args.results)
    folder = Path(args.results).parent
    document = recompute(archived, bootstrap=args.bootstrap, folder=folder)
    for line in summary_lines(document, verbosity=1):  # everything, comparisons included
        print(line)
    written = write_outputs(document, json_path=args.json, html_path=args.html,
                            markdown_path=args.markdown, records_path=args.records,
                            records=archived_records(archived, folder) if args.json else ())
    for what, path in written:
        print(f"competence {what}: {path}")
    for name in unrecomputed(archived):
        print(f"competence report: {name}: no records, figures kept as archived (not "
              f"recomputed)", file=sys.stderr)
    if args.bootstrap is None:  # another number of resamples changes the intervals, rightly
        differ = disagreements(archived, document)
        for line in differ[:20]:
            print(f"competence report: figure disagrees with the records: {line}",
                  file=sys.stderr)
        if differ:
            print(f"competence report: {len(differ)} archived figure(s) differ from what the "
                  f"records give (edited figures or removed records?); the reports written "
                  f"hold the recomputed ones", file=sys.stderr)
            return 1
    return 0


def batch_import(args: argparse.Namespace) -> int:
    from pytest_competence.batch import import_results
    from pytest_competence._cache import ResponseCache

    if not Path(args.cache).is_file():
        raise ValueError(f"no response cache at {args.cache!r}: export the requests first with "
                         f"pytest --competence-batch-export, or pass --cache PATH")
    cache = ResponseCache(args.cache)
    try:
        done = import_results(args.results, cache)
    finally:
        cache.close()
    for line in done.lines():
        print(line)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser(argv)
    args = parser.parse_args(argv)
    if args.command == "batch":
        from pytest_competence.batch import BatchError

        try:
            return batch_import(args)
        except (OSError, ValueError, BatchError) as exc:
            parser.error(f"batch import: {exc}")
    if args.command == "audit":
        from pytest_competence.audit._command import run as run_audit

        return run_audit(args)
    if args.command == "plan":
        try:
            return plan(args)
        except ValueError as exc:
            parser.error(f"plan: {exc}")
    if args.command == "report":
        for option in ("html", "markdown", "json", "records"):
            problem = getattr(args, option) and output_path_problem(
                f"--{option}", getattr(args, option))
            if problem:
                parser.error(f"report: {problem}")
        problem = records_path_problem("--records", args.records, "--json", args.json)
        if problem:
            parser.error(f"report: {problem}")
        try:
            return report(args)
        except (OSError, ValueError) as exc:  # NotAResultsDocument is a ValueError
            print(f"competence report: {exc}", file=sys.stderr)
            return 2
        except (KeyError, TypeError, AttributeError) as exc:  # a shape check_shape lets pass
            print(f"competence report: not a results document: {args.results}: "
                  f"{type(exc).__name__}: {exc}", file=sys.stderr)
            return 2
    problem = args.output != "-" and output_path_problem("-o", args.output)
    if problem:
        parser.error(problem)
    try:
        if args.output == "-":
            count = generate(args, sys.stdout)
        else:
            from pytest_competence._files import atomic_writer

            with atomic_writer(args.output) as out:
                count = generate(args, out)
    except InvalidArgument as exc:
        parser.error(str(exc))
    if args.output != "-":
        print(f"wrote {count} prompts to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
