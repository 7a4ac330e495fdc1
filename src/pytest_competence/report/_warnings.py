"""Warnings about a run that the reports show above the figures, each once per model.

*The server seems to decode greedily.* A test with ``attempts = N > 1`` asks each prompt N
times and counts the strict majority (systematicity paper, arXiv:2609.13948, §3.6); that means
something only if the sends can differ. When a model was asked at ``temperature > 0`` and every prompt sent more than once,
in every test of the run, came back with the same raw answer each time, the server most likely
ignores the temperature: ``transformers serve`` samples only when the checkpoint's generation
config says ``do_sample`` (a request's ``temperature`` alone does not turn sampling on). The
majority is then one answer counted N times. Each result records what this is judged on
(``sampling``: the temperature, the attempts, the prompts compared and those that varied), so
``competence report`` judges an archive the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["document_warnings", "warning_lines", "warnings_html", "warnings_markdown"]

GREEDY = "greedy_server"


def document_warnings(results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The warnings of a run's results: per model, at most one of each kind."""
    seen: dict[str, dict[str, Any]] = {}
    for r in results:
        sampling = r.get("sampling") or {}
        temperature = sampling.get("temperature")
        if not temperature or sampling.get("attempts", 1) < 2 or not sampling.get("compared"):
            continue
        tally = seen.setdefault(
            r["model"], {"tests": 0, "compared": 0, "varied": 0, "temperature": temperature}
        )
        tally["tests"] += 1
        tally["compared"] += sampling["compared"]
        tally["varied"] += sampling["varied"]
        tally["attempts"] = max(tally.get("attempts", 0), sampling["attempts"])
    out = []
    for model, t in seen.items():
        if t["varied"]:
            continue
        out.append(
            {
                "kind": GREEDY,
                "model": model,
                "message": (
                    f"model {model!r}: every prompt sent {t['attempts']} times at temperature "
                    f"{t['temperature']:g} came back identical each time ({t['compared']} of "
                    f"{t['compared']} prompts, {t['tests']} test(s)): the server seems to decode "
                    f"greedily, so each majority counts one answer {t['attempts']} times. Turn "
                    f"sampling on at the server — for `transformers serve`, give the checkpoint "
                    f'a generation config that samples (generation_config.json: "do_sample": '
                    f"true) — or declare attempts=1"
                ),
            }
        )
    return out


def warning_lines(document: Mapping[str, Any]) -> list[str]:
    """The terminal's lines: one per warning."""
    return [f"WARNING: {w['message']}" for w in document.get("warnings") or []]


def warnings_markdown(document: Mapping[str, Any]) -> list[str]:
    """The Markdown summary's lines: a quoted warning each, then a blank line."""
    lines = [f"> ⚠️ **Warning:** {w['message']}" for w in document.get("warnings") or []]
    return [*lines, ""] if lines else []


def warnings_html(document: Mapping[str, Any]) -> str:
    """The HTML report's warnings section (empty without warnings)."""
    from pytest_competence.drawing import esc

    found = document.get("warnings") or []
    if not found:
        return ""
    items = "".join(f"<li>{esc(w['message'])}</li>" for w in found)
    return f"<section id=warnings class=warnings><h2>Warnings</h2><ul>{items}</ul></section>"
