"""A Markdown summary for CI (appended to ``$GITHUB_STEP_SUMMARY`` when set)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pytest_competence.report._cells import tables_markdown
from pytest_competence.report._diagnosis import diagnosis_markdown
from pytest_competence.report._gate import bound_markdown, gate_markdown
from pytest_competence.report._matrix import (
    back_anchors,
    cell,
    family_counts,
    family_groups,
    family_matrices,
    family_slugs,
    level_name,
)
from pytest_competence.report._probes import probes_markdown

__all__ = ["STEP_SUMMARY_BYTES", "render_markdown"]


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


#: GitHub's limit on one step's job summary ($GITHUB_STEP_SUMMARY): 1 MiB.
STEP_SUMMARY_BYTES = 1 << 20


def render_markdown(document: Mapping[str, Any], *, max_bytes: int | None = None) -> str:
    """The summary, laid out as the HTML page is: the run's counts and the contents (per family
    its counts, the failures and errors linked one by one), the matrices whose cells link to
    their results, the results family by family (errors and failures first, each linking back
    to its row), the comparisons. Anchors are ``<a id>`` elements, as on the page.

    With ``max_bytes`` (GitHub's 1 MiB for a job summary), the results and comparisons that
    would pass it are left out — the passing ones first — with a line saying how many and
    where they are.
    """
    from pytest_competence.report._markdown_nav import contents_lines, matrix_lines

    matrices = family_matrices(document)
    counts = family_counts(document)
    slugs = family_slugs(list(counts))
    back = back_anchors(document, matrices, slugs)
    head = ["## Competence profiles", "", *_warnings(document)]
    head += contents_lines(document, counts, slugs, matrices=bool(matrices))
    head += matrix_lines(document, matrices, slugs)
    results = document.get("results") or []
    if results:
        head += ['<a id="results"></a>', "", "### Results", ""]
    sections: list[tuple[bool, list[str]]] = []  # (passed, its lines), in the order shown
    for family, indexes in family_groups(document).items():
        title = [f'<a id="family-{slugs[family]}"></a>', ""]
        title += [f"#### {_cell(family)}: {counts[family].text()}", ""]
        for n, i in enumerate(indexes):
            lines = _result(i, results[i], back[i])
            sections.append((cell(results[i]) == "pass", (title if n == 0 else []) + lines))
    return _fit(head, sections, _comparisons(document), max_bytes)


def _fit(
    head: list[str],
    sections: list[tuple[bool, list[str]]],
    tail: list[str],
    max_bytes: int | None,
) -> str:
    """The summary's lines joined, leaving out, past ``max_bytes``, the comparisons, then the
    passing results' sections, then the others from the last, with a note."""
    parts = ["\n".join(lines) + "\n" for _, lines in sections]
    whole = "\n".join(head) + "\n" + "".join(parts) + "\n".join(tail) + "\n"
    if max_bytes is None or len(whole.encode("utf-8")) <= max_bytes:
        return whole
    note_room = 400
    budget = max_bytes - len(("\n".join(head) + "\n").encode("utf-8")) - note_room
    kept: list[int] = []
    for k in sorted(range(len(parts)), key=lambda k: sections[k][0]):  # failures first
        size = len(parts[k].encode("utf-8"))
        if size <= budget:
            kept.append(k)
            budget -= size
    left = len(parts) - len(kept)
    note = (
        f"*{left} of {len(parts)} result sections and the model comparisons are left out to stay "
        f"within GitHub's {max_bytes:,}-byte job summary; the HTML and JSON reports hold "
        f"them.*"
    )
    return "\n".join(head) + "\n" + "".join(parts[k] for k in sorted(kept)) + note + "\n"


def _warnings(document: Mapping[str, Any]) -> list[str]:
    from pytest_competence.report._warnings import warnings_markdown

    return warnings_markdown(document)


def _result(index: int, r: Mapping[str, Any], back: str) -> list[str]:
    """One result's section: its verdict, figures per level, family tables, condition and
    failing cases."""
    out: list[str] = [f'<a id="result-{index}"></a>', ""]
    met = r.get("condition_met")
    if r.get("report_only") and r.get("outcome") == "passed":
        verdict = "✅ pass" if met else "❌ fail (report only)"
    else:
        verdict = "✅ pass" if r.get("outcome") == "passed" else f"❌ {r.get('outcome', '?')}"
    s = r["summary"]
    out += [
        f"##### `{_cell(r['nodeid'])}` — {verdict} · [↑ its row](#{back})",
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
        return out
    case = r.get("failing_case")
    out += [
        "",
        f"- Condition ({_cell(r['condition'])}): "
        + (
            f"❌ first failing level {_cell(level_name(r))}={case['level']}: {_cell(case['what'])}"
            if case
            else "✅ holds at every level"
        ),
    ]
    out += bound_markdown(r, _cell)
    out += _minimal((case or {}).get("minimal"))
    out += gate_markdown(r, _cell)
    out.append("")
    return out


def _comparisons(document: Mapping[str, Any]) -> list[str]:
    """The model comparisons: per test, each model against the reference, on all prompts."""
    blocks = document.get("comparisons") or []
    out: list[str] = ['<a id="comparisons"></a>', "", "### Model comparisons", ""] if blocks else []
    for block in blocks:
        out += [
            f"#### Models against `{_cell(block['reference'])}` on `{_cell(block['test'])}`",
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
    return out
