"""A Markdown summary for CI (appended to ``$GITHUB_STEP_SUMMARY`` when set)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pytest_competence.report._cells import markdown_table, tables_markdown
from pytest_competence.report._diagnosis import diagnosis_markdown
from pytest_competence.report._gate import bound_markdown, gate_markdown
from pytest_competence.report._matrix import family_matrices, level_name
from pytest_competence.report._probes import probes_markdown

__all__ = ["render_markdown"]


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _minimal(m: Mapping[str, Any] | None) -> list[str]:
    """The minimised failing case: θ, its cost, each presentation, prompts folded away."""
    if not m or "observations" not in m:
        return [f"- {_cell(m['verdict'])}"] if m else []
    title = (
        "Failing case that did not reproduce"
        if m["status"] == "not_reproduced"
        else "Minimal failing case"
    )
    verdicts = "; ".join(
        f"[{o['presentation']}] gold {o['gold']}, parsed {o['parsed'] if o['valid'] else 'invalid'}"
        f" {'✅' if o['correct'] else '❌'}"
        for o in m["observations"]
    )
    out = [
        f"- {title} ({m['calls']['total']} model calls): {_cell(m['summary'])}. {verdicts}.",
        f"  {_cell(m['verdict'])}",
        "",
        "  <details><summary>prompts</summary>",
        "",
    ]
    outside = m.get("outside") or {}
    if "summary" in outside:
        out[2:2] = [
            f"- Also fails outside this suite ({outside['calls']['total']} more model calls; "
            f"not the test's failing case): {_cell(outside['summary'])}."
        ]
    for o in m["observations"]:
        # Fenced, not inline: a raw answer may hold backticks or pipes of its own.
        out += [
            f"  [{o['presentation']}] prompt, then the raw answer:",
            "",
            *_fenced(str(o["prompt"]).splitlines()),
            "",
            *_fenced([repr(o["raw"])]),
            "",
        ]
    return out + ["  </details>"]


def _fenced(lines: list[str]) -> list[str]:
    """``lines`` in a code block whose fence is longer than any run of backticks in them, so
    no text (a model's answer included) can close it (CommonMark §4.5)."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"  {fence}text", *(f"  {line}" for line in lines), f"  {fence}"]


def render_markdown(document: Mapping[str, Any]) -> str:
    """The matrix of which suite catches which model, one section per test × model with its
    verdict and per-level profile, then comparisons."""
    from pytest_competence.report._warnings import warnings_markdown

    out = ["## Competence profiles", "", *warnings_markdown(document)]
    matrices = family_matrices(document)
    if matrices:
        out += [
            "### Which suite catches which model",
            "",
            "FAIL: the suite caught the model; n/a: the model does not read the family's "
            "prompts (skipped, never caught).",
            "",
        ]
    for m in matrices:
        out += [
            f"#### {_cell(m.family)}",
            "",
            *markdown_table([[_cell(c) for c in row] for row in m.rows]),
            "",
        ]
        if m.not_applicable:
            out += [
                f"n/a (they do not read {_cell(m.family)} prompts): "
                + ", ".join(f"`{_cell(name)}`" for name in m.not_applicable),
                "",
            ]
    skipped = document.get("not_applicable") or []
    if skipped and not matrices:  # no table to show them in: one model, or nothing evaluated
        out += [
            "n/a (skipped: the model does not read the family's prompts): "
            + ", ".join(f"`{_cell(r['nodeid'])}`" for r in skipped),
            "",
        ]
    for r in document["results"]:
        met = r.get("condition_met")
        if r.get("report_only") and r.get("outcome") == "passed":
            verdict = "✅ pass" if met else "❌ fail (report only)"
        else:
            verdict = "✅ pass" if r.get("outcome") == "passed" else f"❌ {r.get('outcome', '?')}"
        s = r["summary"]
        out += [
            f"### `{_cell(r['nodeid'])}` — {verdict}",
            "",
            f"Model `{_cell(r['model'])}` on {_cell(r['family'])}; condition: {_cell(r['condition'])}; "
            f"all-correct {_num(s['all_correct'])}, κ̄ {_num(s.get('kappa_bar'))}.",
            "",
        ]
        shown = r["presentations"]
        out.append(
            f"| {_cell(level_name(r))} | pairs | "
            + " | ".join(f"acc[{p}]" for p in shown)
            + " | R | D | U | κ | coverage | all-correct |"
        )
        out.append("|" + "---|" * (len(shown) + 8))
        for lv in r["levels"]:
            out.append(
                f"| {lv['n']} | {lv['instances']} | "
                + " | ".join(_num(lv["accuracy_by_presentation"][p]) for p in shown)
                + f" | {_num(lv['robust_correct'])} | {_num(lv['shared_wrong'])} | "
                f"{_num(lv['presentation_dependent'])} | {_num(lv.get('kappa'))} | "
                f"{_num(lv['coverage'])} | {_num(lv['all_correct'])} |"
            )
        out += tables_markdown(r)
        out += diagnosis_markdown(r)
        out += probes_markdown(r)
        errors = r.get("errors") if r.get("outcome") == "error" else None
        if errors:  # the figures count the lost prompts as invalid: no verdict on the model
            out += [
                "",
                f"- Infrastructure errors, so the condition was not judged (the figures above "
                f"count the prompts without an answer as invalid): {_cell(errors['message'])}",
                "",
            ]
            continue
        case = r.get("failing_case")
        out += [
            "",
            f"- Condition ({_cell(r['condition'])}): "
            + (
                f"❌ first failing level {_cell(level_name(r))}={case['level']}: "
                f"{_cell(case['what'])}"
                if case
                else "✅ holds at every level"
            ),
        ]
        out += bound_markdown(r, _cell)
        out += _minimal((case or {}).get("minimal"))
        out += gate_markdown(r, _cell)
        out.append("")
    for block in document.get("comparisons", []):
        out += [
            f"### Models against `{_cell(block['reference'])}` on `{_cell(block['test'])}`",
            "",
            "| model | presentation | Δ accuracy [95% CI] | b | c | p | p (Holm) |",
            "|---|---|---|---|---|---|---|",
        ]
        for row in block["mcnemar"]:
            if row["n"] != "all":
                continue
            for t in row["tests"]:
                d = block["accuracy_delta"][t["model"]][row["presentation"]]
                out.append(
                    f"| `{_cell(t['model'])}` | {row['presentation']} | {d[0]:+.3f} "
                    f"[{d[1]:+.3f}, {d[2]:+.3f}] | {t['b']} | {t['c']} | "
                    f"{t['p_value']:.3g} | {t['p_holm']:.3g} |"
                )
        out.append("")
    return "\n".join(out) + "\n"
