"""``competence audit PATH…``: the audit of every competence suite under PATH, from the shell.

A thin wrapper over ``pytest PATH… --competence-audit``: the suites are collected exactly as a
test run would collect them (markers, parametrization, ini options), no model is called, and
the exit status is pytest's.
"""

from __future__ import annotations

import argparse

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``audit`` subcommand on the ``competence`` parser."""
    aud = sub.add_parser(
        "audit", help="Audit competence suites against the reference policies (no model calls)"
    )
    aud.add_argument("paths", nargs="+", metavar="PATH", help="Test files or folders")
    aud.add_argument("--json", default=None, metavar="PATH", help="Write the audit document")
    aud.add_argument("--html", default=None, metavar="PATH", help="Write the audit page")
    aud.add_argument(
        "-n",
        dest="workers",
        default=None,
        metavar="N",
        help="Distribute over N xdist workers (needs pytest-xdist)",
    )


def run(args: argparse.Namespace) -> int:
    """Run the audit session; returns pytest's exit status."""
    import pytest

    # This process imported the plugin before pytest could rewrite its asserts (only their
    # failure messages would differ): pytest's warning about that is not the user's concern.
    argv = [
        *args.paths,
        "--competence-audit",
        "-q",
        "-p",
        "no:cacheprovider",
        "-W",
        "ignore::pytest_competence.audit.CompetenceAuditWarning",
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
    ]
    if args.json:
        argv.append(f"--competence-json={args.json}")
    if args.html:
        argv.append(f"--competence-html={args.html}")
    if args.workers:
        argv += ["-n", str(args.workers)]
    return int(pytest.main(argv))
