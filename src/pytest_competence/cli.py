"""The ``competence`` command: ``generate`` datasets, ``report`` from an archive, ``plan`` sizes.

``competence generate FAMILY …`` writes a family's design as JSON Lines
(:mod:`pytest_competence.training.generate`); ``competence report`` recomputes and re-renders an archived
``--competence-json`` document; ``competence trend`` compares a series of archived checkpoints
(:mod:`pytest_competence.report._trend`); ``competence merge`` joins the archives of several runs
(:mod:`pytest_competence.report._merge`); ``competence plan`` prints a design's interval widths;
``competence batch import`` stores OpenAI Batch results in the response cache; ``competence
audit`` audits the suites of a folder (:mod:`pytest_competence.audit`).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pytest_competence._version import __version__
from pytest_competence.engine.settings import output_path_problem, records_path_problem
from pytest_competence.protocol import InvalidArgument
from pytest_competence.training.generate import _AsTyped, _floats, _ints, _typed_as

__all__ = ["BROKEN_PIPE", "batch_import", "main", "plan", "report", "trend"]

#: What ``competence --help`` says first: plain text, not the docstring's reStructuredText.
_DESCRIPTION = (
    "Work on the families and on what a pytest run wrote, without pytest: generate a family's "
    "design as a dataset, recompute and re-render an archived run (report), merge the archives "
    "of several runs (merge), compare archived checkpoints (trend), plan a design's sample sizes, import OpenAI Batch answers, audit "
    "suites."
)


def _parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="competence", description=_DESCRIPTION)
    parser.add_argument(
        "--version", action="version", version=f"competence {__version__}", help="Print the version"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    from pytest_competence.training.generate import add_parser as add_generate_parser

    add_generate_parser(sub, argv)
    rep = sub.add_parser("report", help="Recompute and re-render a results JSON, no model calls")
    rep.add_argument("results", help="A file written by pytest --competence-json")
    rep.add_argument("--html", help="Write the HTML report here")
    rep.add_argument("--markdown", help="Write the Markdown summary here")
    rep.add_argument(
        "--json", help="Write the recomputed results document here, its records beside it"
    )
    rep.add_argument(
        "--records",
        help="With --json: write the records file here (a name ending "
        "in .gz is gzip-compressed; default: the JSON's name with .records.jsonl)",
    )
    rep.add_argument(
        "--bootstrap",
        type=int,
        default=None,
        help="Bootstrap resamples (default: as recorded in the file)",
    )
    trend = sub.add_parser(
        "trend", help="Each checkpoint against the previous and the first, from archives"
    )
    trend.add_argument(
        "archives", nargs="+", help="Results documents (--competence-json), oldest first"
    )
    trend.add_argument(
        "--model",
        action="append",
        default=[],
        help="The model to read in archives that hold several: once for every archive, or "
        "once per archive in order",
    )
    trend.add_argument(
        "--test",
        choices=("regression", "non-inferiority"),
        default="regression",
        help="regression (McNemar; the default) or non-inferiority (one-sided, H0: Δ <= -margin, "
        "as the gate of that name; needs --margin above 0), Holm per comparison",
    )
    trend.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="The tests' level after Holm: McNemar's two-sided, non-inferiority's one-sided "
        "(default 0.05)",
    )
    trend.add_argument(
        "--margin", type=float, default=0.0, help="Accuracy drop tolerated (default 0)"
    )
    trend.add_argument(
        "--confidence", type=float, default=0.95, help="The intervals' level (default 0.95)"
    )
    trend.add_argument("--markdown", help="Write the table as Markdown here")
    trend.add_argument("--json", help="Write the series as JSON here")
    batch = sub.add_parser("batch", help="The OpenAI Batch path: import a batch run's answers")
    batch_sub = batch.add_subparsers(dest="batch_command", required=True)
    imp = batch_sub.add_parser(
        "import",
        help="Store OpenAI Batch output lines in the response "
        "cache (requests exported by pytest --competence-batch-export)",
    )
    imp.add_argument("results", nargs="+", help="Batch output files (JSON Lines)")
    imp.add_argument(
        "--cache",
        help="The response cache file (default: the competence_cache_path ini option, read "
        "as pytest run here reads it: the same ini file and rootdir)",
    )
    plan = sub.add_parser(
        "plan", help="Interval half-widths and detectable differences for a design"
    )
    plan.add_argument(
        "--per-level",
        "--pairs",
        type=int,
        default=200,
        dest="pairs",
        action=_AsTyped,
        help="Instances per level, as competence generate's --per-level (default 200)",
    )
    grid = plan.add_mutually_exclusive_group()
    grid.add_argument(
        "--levels",
        type=_ints,
        default=None,
        help="The grid of sizes, comma-separated, as competence generate's --levels (e.g. "
        "4,8,16,32); only their number matters",
    )
    grid.add_argument(
        "--level-count",
        type=int,
        default=None,
        help="The number of levels instead of the grid (default 9, ordering's 4 to 1024)",
    )
    plan.add_argument(
        "--rates",
        type=_floats,
        default=[0.5, 0.85],
        help="Proportions to plan for, comma-separated (default 0.5,0.85)",
    )
    plan.add_argument(
        "--discordance",
        type=_floats,
        default=[0.32, 0.5],
        help="Paired discordance ψ for the detectable difference (default 0.32,0.5)",
    )
    plan.add_argument("--confidence", type=float, default=0.95, help="Confidence (default 0.95)")
    plan.add_argument("--power", type=float, default=0.8, help="Power (default 0.8)")
    from pytest_competence.plugin._audit_command import add_parser as add_audit_parser
    from pytest_competence.report._merge import add_parser as add_merge_parser

    add_audit_parser(sub)
    add_merge_parser(sub)
    return parser


def _say(line: str) -> None:
    """``line`` on stderr, after everything printed so far: stdout is flushed first, so the two
    keep their order when they go to one file or pipe (``competence trend … 2>&1 | less``)."""
    with contextlib.suppress(BrokenPipeError):  # stdout's reader is gone; main() ends it
        sys.stdout.flush()
    print(line, file=sys.stderr)


def plan(args: argparse.Namespace) -> int:
    """Print the CBE paper, arXiv:2610.22894, App. A "Sample sizes" figures for this design."""
    from pytest_competence.stats import half_width, minimum_detectable_difference

    levels = len(args.levels) if args.levels is not None else args.level_count
    levels = 9 if levels is None else levels
    if args.pairs < 1:
        flag = _typed_as(args, "pairs", "--per-level")
        raise ValueError(f"{flag} must be at least 1, got {flag} {args.pairs}")
    if levels < 1:
        given = "--levels names none" if args.levels is not None else f"got {levels}"
        raise ValueError(f"a design needs at least one level: {given}; e.g. --levels 4,8,16")
    total = args.pairs * levels
    cell = args.pairs // 4
    grid = f" ({', '.join(map(str, args.levels))})" if args.levels else ""
    print(
        f"design: {levels} level{'' if levels == 1 else 's'}{grid} x {args.pairs} pairs = "
        f"{total} pairs; {cell} per query cell; {args.confidence:.0%} intervals (normal "
        f"approximation)"
    )
    for p in args.rates:
        print(
            f"  at {p:g}: ±{100 * half_width(p, args.pairs, args.confidence):.1f} points per "
            f"level, ±{100 * half_width(p, total, args.confidence):.1f} pooled, "
            f"±{100 * half_width(p, max(cell, 1), args.confidence):.1f} per cell"
        )
    for psi in args.discordance:
        mdd = minimum_detectable_difference(
            total, discordance=psi, confidence=args.confidence, power=args.power
        )
        print(
            f"  paired difference detectable at {args.power:.0%} power over {total} pairs "
            f"with discordance {psi:g}: {100 * mdd:.1f} points"
        )
    return 0


def report(args: argparse.Namespace) -> int:
    """Recompute and re-render an archive; 1 when its figures disagree with its records."""
    from pytest_competence.report import load_document, recompute, write_outputs
    from pytest_competence.report._archive import disagreements, unrecomputed
    from pytest_competence.report._records_file import archived_records
    from pytest_competence.report._terminal import summary_lines

    archived = load_document(args.results)
    folder = Path(args.results).parent
    document = recompute(archived, bootstrap=args.bootstrap, folder=folder)
    for line in summary_lines(document, verbosity=1):  # everything, comparisons included
        print(line)
    written = write_outputs(
        document,
        json_path=args.json,
        html_path=args.html,
        markdown_path=args.markdown,
        records_path=args.records,
        records=archived_records(archived, folder) if args.json else (),
    )
    for what, path in written:
        print(f"competence {what}: {path}")
    for name in unrecomputed(archived):
        _say(f"competence report: {name}: no records, figures kept as archived (not recomputed)")
    if args.bootstrap is None:  # another number of resamples changes the intervals, rightly
        differ = disagreements(archived, document)
        for line in differ[:20]:
            _say(f"competence report: figure disagrees with the records: {line}")
        if differ:
            _say(
                f"competence report: {len(differ)} archived figure(s) differ from what the "
                f"records give (edited figures or removed records?); the reports written "
                f"hold the recomputed ones"
            )
            return 1
    return 0


def trend(args: argparse.Namespace) -> int:
    """``competence trend``: print the series, write it as Markdown and JSON if asked; exit 1
    when any comparison shows a significant regression or, with ``--test non-inferiority``,
    when any comparison is not shown non-inferior (so a CI step can gate on it)."""
    from pytest_competence.engine.files import write_json_atomic, write_text_atomic
    from pytest_competence.report._trend import trend_document, trend_lines, trend_markdown

    for option, value, low_closed, example in (
        ("--alpha", args.alpha, False, "0.05"),
        ("--margin", args.margin, True, "0.02"),
        ("--confidence", args.confidence, False, "0.95"),
    ):
        if not (0 <= value < 1 if low_closed else 0 < value < 1):
            kind = "[0, 1)" if low_closed else "(0, 1)"
            raise ValueError(f"{option} {value:g}: expected a number in {kind}, e.g. {example}")
    document, notes = trend_document(
        args.archives,
        models=args.model,
        alpha=args.alpha,
        margin=args.margin,
        confidence=args.confidence,
        test=args.test,
    )
    for line in trend_lines(document):
        print(line)
    if args.markdown:
        write_text_atomic(args.markdown, trend_markdown(document))
        print(f"competence Markdown: {args.markdown}")
    if args.json:
        write_json_atomic(args.json, document, indent=1)
        print(f"competence JSON: {args.json}")
    for note in notes:
        _say(f"competence trend: {note}")

    def comparisons(flagged: Callable[[dict[str, Any]], bool]) -> list[str]:
        return sorted(
            {
                f"{block['test']}: {r['checkpoint']} against {r['reference']}"
                for block in document["tests"]
                for r in block["rows"]
                if flagged(r)
            }
        )

    regressed = comparisons(lambda r: r["regression"])
    unproven = comparisons(lambda r: r["noninferior"] is False)
    for where in regressed:
        _say(f"competence trend: significant regression, {where}")
    for where in unproven:
        _say(f"competence trend: not shown non-inferior (margin {args.margin:g}), {where}")
    return 1 if regressed or unproven else 0


def batch_import(args: argparse.Namespace) -> int:
    """``competence batch import``: store a batch run's answers in the response cache."""
    from pytest_competence.engine.batch import import_results
    from pytest_competence.engine.cache import ResponseCache

    if args.cache:
        path, source = Path(args.cache), "--cache"
    else:
        from pytest_competence.plugin._wiring import ini_cache

        path, source = ini_cache()
    if not path.is_file():
        raise ValueError(
            f"no response cache at {str(path)!r} ({source}): export the requests first with "
            f"pytest --competence-batch-export, or pass --cache PATH"
        )
    cache = ResponseCache(path)
    try:
        done = import_results(args.results, cache)
    finally:
        cache.close()
    print(f"response cache: {path} ({source})")
    for line in done.lines():
        print(line)
    return 0


#: The exit status of a command whose reader went away (``competence generate … | head``):
#: what a shell shows for a process ended by SIGPIPE, as ``yes | head`` gives.
BROKEN_PIPE = 128 + 13


def main(argv: Sequence[str] | None = None) -> int:
    """The ``competence`` command; its exit status. A reader that stops early (``| head``)
    ends it quietly with :data:`BROKEN_PIPE`, as a shell tool killed by SIGPIPE would."""
    import os

    try:
        status = _main(argv)
        sys.stdout.flush()  # a pipe closed under the last lines shows here
        return status
    except BrokenPipeError:
        # Python flushes stdout again at exit: point it at devnull so that flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return BROKEN_PIPE


def _unwritable(args: argparse.Namespace, *options: str) -> str | None:
    """Why the file the first of ``options`` (their ``dest``) names cannot be written, in the
    flag's words as typed; ``None`` when every one given can (``-`` is standard output)."""
    for option in options:
        path = getattr(args, option)
        problem = path not in (None, "-") and output_path_problem(
            _typed_as(args, option, f"--{option}"), path
        )
        if problem:
            return problem
    return None


def _main(argv: Sequence[str] | None) -> int:
    parser = _parser(argv)
    args = parser.parse_args(argv)
    if args.command == "batch":
        from pytest_competence.engine.batch import BatchError

        try:
            return batch_import(args)
        except (OSError, ValueError, BatchError) as exc:
            parser.error(f"batch import: {exc}")
    if args.command == "merge":
        from pytest_competence.report._merge import run as run_merge

        return run_merge(args, _say)
    if args.command == "audit":
        from pytest_competence.plugin._audit_command import run as run_audit

        return run_audit(args)
    if args.command == "trend":
        problem = _unwritable(args, "markdown", "json")
        if problem:
            parser.error(f"trend: {problem}")
        try:
            return trend(args)
        except ValueError as exc:  # TrendError, and the statistics' own argument checks
            _say(f"competence trend: {exc}")
            return 2
    if args.command == "plan":
        try:
            return plan(args)
        except ValueError as exc:
            parser.error(f"plan: {exc}")
    if args.command == "report":
        problem = _unwritable(args, "html", "markdown", "json", "records") or (
            records_path_problem("--records", args.records, "--json", args.json)
        )
        if problem:
            parser.error(f"report: {problem}")
        try:
            return report(args)
        except (OSError, ValueError) as exc:  # NotAResultsDocument is a ValueError
            _say(f"competence report: {exc}")
            return 2
        except (KeyError, TypeError, AttributeError) as exc:  # a shape check_shape lets pass
            _say(
                f"competence report: not a results document: {args.results}: "
                f"{type(exc).__name__}: {exc}"
            )
            return 2
    from pytest_competence.training.generate import generate

    problem = _unwritable(args, "output")
    if problem:
        parser.error(problem)
    try:
        if args.output == "-":
            count = generate(args, sys.stdout)
        else:
            from pytest_competence.engine.files import atomic_writer

            with atomic_writer(args.output) as out:
                count = generate(args, out)
    except InvalidArgument as exc:
        sys.stdout.flush()  # the records written before it come first
        parser.error(str(exc))
    if args.output != "-":
        _say(f"wrote {count} prompts to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
