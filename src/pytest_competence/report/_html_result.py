"""One result's section of the HTML report: its plots, summary, levels, pairs and failing cases.

:func:`result_section` renders one ``results[]`` entry of a results document; the page around
the sections is :func:`pytest_competence.report._html.render_html`'s. Every string that came
from a model or a user is escaped (:func:`~pytest_competence.drawing.esc`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pytest_competence.drawing import Defs, esc
from pytest_competence.report._cells import family_html
from pytest_competence.report._diagnosis import diagnosis_html
from pytest_competence.report._gate import gate_html
from pytest_competence.report._html_cases import failing_case_html
from pytest_competence.report._html_levels import level_table, pairs_table, summary_html
from pytest_competence.report._html_parts import as_text, badge, num
from pytest_competence.report._matrix import cell
from pytest_competence.report._probes import probes_html
from pytest_competence.report._svg import result_plots

__all__ = ["result_section"]


def _plots(r: Mapping[str, Any], defs: Defs | None, profile_only: bool = False) -> str:
    figures = "".join(
        f"<figure><figcaption>{esc(title)} <span>{esc(note)}</span></figcaption>{svg}</figure>"
        for title, note, svg in result_plots(r, defs, profile_only=profile_only)
    )
    return f'<div class="plots">{figures}</div>'


def _back(href: str) -> str:
    return f'<a class=back href="{esc(href)}">↑ back to its row</a>' if href else ""


def _meta(r: Mapping[str, Any]) -> str:
    """The model, the family, the condition, the presentations and the design, in one line."""
    design = r.get("design") or {}
    require = design.get("require")
    text = (
        f"<code>{esc(r['model'])}</code> on <code>{esc(r.get('family'))}</code> · condition "
        f"{esc(r.get('condition'))} · presentations "
        f"{', '.join(esc(p) for p in r['presentations'])} · levels "
        f"{as_text(design.get('levels'))}; {esc(design.get('pairs'))} pairs per level; seed "
        f"{esc(design.get('seed'))}; require "
        f"<code>{esc(require if isinstance(require, str) else json.dumps(require))}</code>"
    )
    errors = r.get("errors") if r.get("outcome") == "error" else None
    if errors:  # the figures count the lost prompts as invalid: no verdict on the model
        text += (
            f'</p><p class="warn"><b>Infrastructure errors</b>, so the condition was not judged '
            f"(the figures below count the prompts without an answer as invalid): "
            f"{esc(errors['message'])}"
        )
    return f"<p class=meta>{text}</p>"


def result_section(
    index: int, r: Mapping[str, Any], back: str = "", defs: Defs | None = None
) -> str:
    """The section of result ``index``: its heading (with a link ``back`` to the row that
    leads to it), plots, tables and failing cases. With ``defs``, the plots' frames are the
    page's shared ones.

    A result that passed is one line, its detail folded under it and compact: the profile plot
    and the key figures per level (the other plots, the per-pair table and the summary block
    are in the JSON). A caught one or an error is open, with every plot and table, and its
    failing and minimal cases.
    """
    family = f"{family_html(r, f'result-{index}-')}{diagnosis_html(r)}{probes_html(index, r)}"
    if cell(r) == "pass":
        s = r["summary"]
        return (
            f'<details id="result-{index}" class="result"><summary>{badge(r)}'
            f"<code>{esc(r['nodeid'])}</code> <span class=muted>κ̄ {num(s.get('kappa_bar'))} · "
            f"all correct {num(s.get('all_correct'))}</span>{_back(back)}</summary>"
            f"{_meta(r)}{_plots(r, defs, profile_only=True)}{family}<h3>Per level</h3>"
            f"{level_table(r, compact=True)}{gate_html(r)}</details>"
        )
    errors = r.get("outcome") == "error"
    return (
        f'<section id="result-{index}"><h2>{badge(r)}'
        f"<code>{esc(r['nodeid'])}</code>{_back(back)}</h2>{_meta(r)}{_plots(r, defs)}"
        # A family's own figures and tables (Family.figures, Family.tables) lead.
        f"{family}<h3>Per level</h3>{level_table(r)}{pairs_table(r)}{summary_html(r)}"
        f"{gate_html(r)}{'' if errors else failing_case_html(r)}</section>"
    )
