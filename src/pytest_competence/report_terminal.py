"""The terminal section: one compact profile table per competence test × model."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["summary_lines"]


def _num(value: float | None) -> str:
    return "  —  " if value is None else f"{value:.3f}"


def summary_lines(results: Iterable[Mapping[str, Any]]) -> list[str]:
    """Lines for ``pytest_terminal_summary``: levels as rows, the key columns of the profile."""
    lines: list[str] = []
    for r in results:
        verdict = "PASS" if r["outcome"] == "passed" else r["outcome"].upper()
        lines.append(f"{r['nodeid']}  {verdict}  ({r['condition']})")
        shown = r["presentations"]
        head = ["n", "pairs"] + [f"acc[{p}]" for p in shown] + ["R", "D", "U", "cover", "all-ok"]
        rows = [head]
        for lv in r["levels"]:
            rows.append(
                [str(lv["n"]), str(lv["instances"])]
                + [_num(lv["accuracy_by_presentation"][p]) for p in shown]
                + [_num(lv[k]) for k in
                   ("robust_correct", "shared_wrong", "presentation_dependent", "coverage",
                    "all_correct")]
            )
        widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
        for row in rows:
            lines.append("    " + "  ".join(c.rjust(w) for c, w in zip(row, widths)))
    return lines
