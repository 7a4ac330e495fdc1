"""A result's failing cases in HTML: the design's first failing instance, the minimised case
and a case found outside the suite, each with every presentation's prompt and answer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from pytest_competence.drawing import esc
from pytest_competence.report._html_parts import table
from pytest_competence.report._matrix import level_name

__all__ = ["failing_case_html"]


def _answer_map(mapping: Mapping[str, Any]) -> str:
    if all(k == v for k, v in mapping.items()):
        return "identity"
    return ", ".join(f"{esc(k)}→{esc(v)}" for k, v in mapping.items())


def failing_case_html(r: Mapping[str, Any]) -> str:
    case, name = r.get("failing_case"), esc(level_name(r))
    if not case:
        return '<h3>Failing case</h3><p class="muted">None: the condition holds.</p>'
    minimal = case.get("minimal") or {}
    title = "First failing case of the design"
    also = case.get("also_failing") or []
    text = (
        f"Level {name} = {esc(case.get('level'))}: {esc(case.get('what'))}"
        + (f"; also failing at {name} = {', '.join(esc(n) for n in also)}" if also else "")
        + (
            f". Instance <code>{esc(case['instance_id'])}</code>."
            if case.get("instance_id") is not None
            else "."
        )
    )
    rows = _observation_table(case.get("observations") or [])
    return f"<h3>{title}</h3><p>{text}</p>{rows}{_minimal_case(minimal, name)}"


def _text(value: object) -> str:
    """Text for element content: ``&``, ``<`` and ``>`` escaped; quotes, which only an
    attribute value needs escaped, left as they are (a prompt full of quoted names stays its
    size)."""
    return escape(str(value), quote=False)


def _observation_table(observations: Sequence[Mapping[str, Any]]) -> str:
    """Every presentation's answer; a prompt that an earlier row showed already (the same text
    read by generating and by scoring, say) is named, not repeated."""
    rows = []
    shown: dict[str, str] = {}  # prompt → the presentation that showed it
    for o in observations:
        prompt = str(o.get("prompt"))
        first = shown.setdefault(prompt, str(o.get("presentation")))
        text = (
            f"<details><summary>prompt</summary><pre>{_text(prompt)}</pre></details>"
            if first == o.get("presentation")
            else f"<span class=muted>as for {esc(first)}</span>"
        )
        parsed = esc(o.get("parsed")) if o.get("valid") else f"invalid ({esc(o.get('reason'))})"
        rows.append(
            [
                esc(o.get("presentation")),
                _answer_map(o.get("answer_map") or {}),
                esc(o.get("gold")),
                parsed,
                "right" if o.get("correct") else "<b>wrong</b>",
                f"<pre>{_text(o.get('raw'))}</pre>",
                text,
            ]
        )
    head = ["presentation", "answer map", "gold", "parsed", "verdict", "raw answer", "prompt"]
    return table(head, rows, left=7) if rows else ""


def _minimal_case(m: Mapping[str, Any], name: str = "n") -> str:
    """The minimised case (``failing_case.minimal``): θ, its cost, every presentation."""
    if not m:
        return ""
    if not m.get("observations"):  # not minimised: the verdict says why
        return f"<h3>Minimisation</h3><p class=muted>{esc(m.get('verdict'))}</p>"
    title = (
        "Failing case that did not reproduce"
        if m.get("status") == "not_reproduced"
        else "Minimal failing case"
    )
    calls = m.get("calls") or {}
    spent = ", ".join(f"{esc(k)} {esc(v)}" for k, v in calls.items() if k != "total")
    boundary = m.get("boundary") or {}
    found = (
        f" Boundary search on {name}: {name} = {esc(boundary.get('n'))} fails, in "
        f"{esc(boundary.get('calls'))} calls (at most {esc(boundary.get('bound'))})."
        if boundary.get("trail")
        else ""
    )
    outside = m.get("outside") or {}
    beyond = (
        f"<h3>Also fails outside this suite</h3><p><b>{esc(outside['summary'])}</b></p>"
        f"<p class=muted>A case this suite's design cannot draw, found in "
        f"{esc(outside['calls']['total'])} more model calls: a finding of its own, not the "
        f"test's failing case.</p>{_observation_table(outside['observations'])}"
        if outside.get("observations")
        else ""
    )
    return (
        f"<h3>{title}</h3><p><b>{esc(m.get('summary'))}</b></p>"
        f"<p>{esc(calls.get('total'))} model calls ({spent}); {esc(m.get('prompts_sent'))} "
        f"prompts.{found}</p>"
        f"<p>{esc(m.get('verdict'))}</p>{_observation_table(m['observations'])}{beyond}"
    )
