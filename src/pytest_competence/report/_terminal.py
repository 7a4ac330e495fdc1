"""The terminal section: a profile table per competence test × model, and model comparisons.

Under ``-q`` each test × model is one line; otherwise levels are rows with the key columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_competence.drawing import SHOWN_PRESENTATIONS
from pytest_competence.report._cells import aligned, tables_lines
from pytest_competence.report._diagnosis import diagnosis_lines
from pytest_competence.report._gate import bound_lines, gate_lines
from pytest_competence.report._matrix import Counts, family_counts, family_matrices, level_name
from pytest_competence.report._probes import probes_lines

__all__ = ["counts_line", "summary_lines", "verdict"]


def _num(value: float | None) -> str:
    return "  —  " if value is None else f"{value:.3f}"


def _p(value: float) -> str:
    return f"{value:.2g}" if value >= 1e-3 else f"{value:.1e}"


def _more(hidden: int) -> list[str]:
    return (
        [f"    (+{hidden} more presentations in the JSON and HTML reports)"] if hidden > 0 else []
    )


def verdict(r: Mapping[str, Any]) -> str:
    """PASS/FAILED by pytest's outcome; by the condition itself in report-only runs."""
    if r.get("report_only") and r.get("outcome") == "passed":
        return "PASS" if r.get("condition_met") else "FAIL (report only)"
    return "PASS" if r.get("outcome") == "passed" else str(r.get("outcome", "?")).upper()


def counts_line(document: Mapping[str, Any]) -> str:
    """The run's test × model pairs in competence terms, the last line before pytest's own:
    ``competence: 126 caught, 129 passed, 0 errors, 748 n/a (test × model pairs)``, and why
    pytest counted the caught ones as passed in a report-only run."""
    total = sum(family_counts(document).values(), Counts())
    only = total.caught and any(r.get("report_only") for r in document.get("results") or [])
    return f"competence: {total.text()} (test × model pairs" + (
        "; report only: pytest passed the caught ones)" if only else ")"
    )


def _matrix(document: Mapping[str, Any]) -> list[str]:
    """Which suite catches which model, one table per family (see :mod:`._matrix`)."""
    matrices = family_matrices(document)
    if not matrices:
        return []
    lines = [
        "which suite catches which model (the condition and gates, per test × model; "
        "FAIL: caught; n/a: the model does not read the family's prompts):"
    ]
    for m in matrices:
        skipped = len(m.not_applicable)
        lines.append(
            f"  {m.family}"
            + (
                f"  (n/a, not reading {m.family} prompts: {skipped} "
                f"model{'' if skipped == 1 else 's'})"
                if skipped
                else ""
            )
        )
        lines.extend(aligned(m.rows, "    "))
    return lines


def _diagnoses(document: Mapping[str, Any]) -> list[str]:
    """Under ``-q`` beside a matrix: each diagnosed test × model's verdict, one line each."""
    found = [(r["nodeid"], diagnosis_lines(r)) for r in document["results"]]
    found = [(nodeid, lines) for nodeid, lines in found if lines]
    if not found:
        return []
    return [
        "which reference policy each model answers like (--competence-diagnose; the tables "
        "without -q):",
        *(f"  {nodeid}: {lines[0].strip().removeprefix('diagnosis: ')}" for nodeid, lines in found),
    ]


_MINIMAL_LABELS = {
    "minimal": "minimal failing case",
    "replayed": "minimal failing case (replayed)",
    "budget": "smallest failing case found within the budget (may not be minimal)",
    "unstable": "failing case (the minimised one did not reproduce)",
    "not_reproduced": "failing case that did not reproduce",
}


def _minimal(r: Mapping[str, Any]) -> list[str]:
    """One line for the minimised failing case, when the failure message has one."""
    m = (r.get("failing_case") or {}).get("minimal") or {}
    if "summary" not in m:
        return [f"    {m['verdict']}"] if m.get("status") == "not_minimised" else []
    label = _MINIMAL_LABELS.get(m["status"], "failing case")
    lines = [f"    {label}: {m['summary']} ({m['calls']['total']} model calls)"]
    outside = m.get("outside") or {}
    if "summary" in outside:
        lines.append(
            f"    also fails outside this suite: {outside['summary']} "
            f"({outside['calls']['total']} more model calls)"
        )
    return lines


def _headline(r: Mapping[str, Any]) -> str:
    s = r["summary"]
    failing = [lv["n"] for lv in r["levels"] if lv["all_correct"] < 1]
    boot = s.get("bootstrap", {})
    kappa = s.get("kappa_bar")
    text = f"all-correct {_num(s['all_correct'])}  κ̄ {_num(kappa)}"
    if "kappa_bar" in boot:
        _, lo, hi = boot["kappa_bar"]
        if lo is not None:
            text += f" [{lo:.3f}, {hi:.3f}]"
    return text + "  " + first_failing(r, failing[0] if failing else None)


def first_failing(r: Mapping[str, Any], strict: int | None) -> str:
    """Where the condition first fails, saying which condition: the strict one's level is the
    first whose all-correct is below 1 (``strict``); a declared condition's is its failing
    case's, shown beside the strict one (a test may pass ``accuracy >= 0.6`` and still have
    instances wrong from some level on)."""
    shown, name = ("—" if strict is None else str(strict)), level_name(r)
    if r.get("design", {}).get("require", "strict") in ("strict", ["strict"]):
        return f"first failing {name}: {shown}"
    level = (r.get("failing_case") or {}).get("level")
    declared = "—" if level is None else str(level)
    return (
        f"first failing {name} ({r['condition']}): {declared}; all-correct < 1 from {name}: {shown}"
    )


def _table(r: Mapping[str, Any]) -> list[str]:
    shown = r["presentations"][:SHOWN_PRESENTATIONS]
    head = (
        [level_name(r), "pairs"]
        + [f"acc[{p}]" for p in shown]
        + ["R", "R 95% CI", "D", "U", "κ", "cover", "all-ok"]
    )
    rows = [head]
    for lv in r["levels"]:
        ci = lv.get("robust_correct_ci")
        rows.append(
            [str(lv["n"]), str(lv["instances"])]
            + [_num(lv["accuracy_by_presentation"][p]) for p in shown]
            + [
                _num(lv["robust_correct"]),
                "—" if not ci else f"[{ci[0]:.3f}, {ci[1]:.3f}]",
                _num(lv["shared_wrong"]),
                _num(lv["presentation_dependent"]),
                _num(lv.get("kappa")),
                _num(lv["coverage"]),
                _num(lv["all_correct"]),
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["    " + "  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in rows]
    for name, test in r["summary"].get("mcnemar", {}).items():
        if name not in shown:
            continue
        lines.append(
            f"    McNemar {shown[0]} vs {name}: b={test['b']} c={test['c']} "
            f"{test['method']} p={_p(test['p_value'])}"
        )
    lines.extend(_more(len(r["presentations"]) - len(shown)))
    boundary = r["summary"].get("boundary")
    if boundary and boundary.get("observed_level") is not None:
        lines.append(f"    {boundary['summary']}")
    return lines


def _error(errors: Mapping[str, Any], shown: bool) -> str:
    if not shown:
        return str(errors["message"])
    return (
        f"{errors['count']} of {errors['prompts']} prompts got no answer (infrastructure "
        f"errors; the reason is the test's error above)"
    )


def summary_lines(
    document: Mapping[str, Any], *, verbosity: int = 0, errors_shown: bool = False
) -> list[str]:
    """Lines for ``pytest_terminal_summary`` from a results document.

    ``-q`` (verbosity < 0): the per-family matrices when two or more models ran, else one line
    per test × model. Default: every test × model's profile table (and a probed test's
    probes), then the matrices. ``-v``: also the output decomposition, the probes per level
    and the logit lens, and each model compared with the first (McNemar, bootstrap Δ
    accuracy), which the HTML and JSON reports always hold. A result that ended in
    infrastructure errors is one line: its count, and its message unless ``errors_shown`` (pytest
    showed it as the test's error already).
    """
    from pytest_competence.report._warnings import warning_lines

    matrix = _matrix(document)
    lines: list[str] = warning_lines(document)
    for r in document["results"]:
        if r.get("outcome") == "error":  # no figures to show: the model was not really asked
            lines.append(f"{r['nodeid']}  ERROR  {_error(r['errors'], errors_shown)}")
            continue
        if verbosity < 0:
            if not matrix:
                lines.append(f"{r['nodeid']}  {verdict(r)}  {_headline(r)}")
                lines.extend(diagnosis_lines(r)[:1])
            continue
        lines.append(f"{r['nodeid']}  {verdict(r)}  ({r['condition']})")
        lines.append(f"    {_headline(r)}")
        lines.extend(_table(r))
        lines.extend(tables_lines(r))
        lines.extend(diagnosis_lines(r))
        lines.extend(probes_lines(r, verbosity))
        lines.extend(bound_lines(r))
        lines.extend(gate_lines(r))
        lines.extend(_minimal(r))
    lines.extend(matrix)
    if matrix and verbosity < 0:  # the matrix stood in for the per-result lines
        lines.extend(_diagnoses(document))
    comparisons = document.get("comparisons", [])
    if matrix and verbosity < 0:
        lines.append(
            "each test × model's profile: without -q; model comparisons (McNemar, "
            "bootstrap Δ accuracy): with -v; both in the HTML and JSON reports"
        )
    elif comparisons and verbosity < 1:
        lines.append(
            f"model comparisons against {comparisons[0]['reference']} (McNemar, "
            f"bootstrap Δ accuracy): with -v, and in the HTML and JSON reports"
        )
    if verbosity < 1:
        return lines
    for block in comparisons:
        lines.append(
            f"{block['test']}: models against {block['reference']} "
            f"(McNemar on all prompts, Holm across models)"
        )
        names = list(dict.fromkeys(row["presentation"] for row in block["mcnemar"]))
        for row in block["mcnemar"]:
            if row["n"] != "all" or row["presentation"] not in names[:SHOWN_PRESENTATIONS]:
                continue
            for t in row["tests"]:
                delta = block["accuracy_delta"][t["model"]][row["presentation"]]
                lines.append(
                    f"    {t['model']} [{row['presentation']}]: Δacc {delta[0]:+.3f} "
                    f"[{delta[1]:+.3f}, {delta[2]:+.3f}]  b={t['b']} c={t['c']} "
                    f"p={_p(t['p_value'])} p_holm={_p(t['p_holm'])}"
                )
        lines.extend(_more(len(names) - SHOWN_PRESENTATIONS))
    return lines
