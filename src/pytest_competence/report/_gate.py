"""The release gate and the bounds behind a pass, as report sections of their own.

A result's ``gate`` (:mod:`pytest_competence.engine.gate`) and ``bounds``
(:meth:`~pytest_competence.engine.conditions.Condition.bounds`) become one verdict line, one power
sentence and one table of the gated cells (:func:`gate_rows`), rendered for the terminal
(:func:`gate_lines`), the Markdown summary (:func:`gate_markdown`) and the HTML page
(:func:`gate_html`), and as JUnit properties (:func:`gate_properties`). Gates archived before
the power and the non-inferiority gate existed render as they did.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from pytest_competence.drawing import SHOWN_PRESENTATIONS
from pytest_competence.report._cells import aligned, html_table, markdown_table, p_text
from pytest_competence.report._matrix import level_name

__all__ = [
    "bound_lines",
    "bound_markdown",
    "bound_sentences",
    "gate_html",
    "gate_lines",
    "gate_markdown",
    "gate_properties",
    "gate_rows",
    "gate_title",
    "gate_verdict",
    "power_sentence",
]

_NO_BASELINE = "no baseline (the archive has no result for this test; not gated)"
_ITSELF = "not gated: this model is the baseline (a model is not gated against itself)"


def _ni(gate: Mapping[str, Any]) -> bool:
    return gate.get("test") == "non-inferiority"


def gate_title(gate: Mapping[str, Any]) -> str:
    """The gate's α and margin, and its kind when it is not the regression gate."""
    kind = "non-inferiority, one-sided " if _ni(gate) else ""
    return f"{kind}Holm α {gate['alpha']:g}, margin {gate['margin']:g}"


def gate_verdict(gate: Mapping[str, Any]) -> tuple[bool | None, str]:
    """Whether the gate passed (``None``: nothing gated) and the verdict in words."""
    if gate.get("status") == "no baseline":
        return None, _NO_BASELINE
    if gate.get("status") == "baseline itself":
        return None, _ITSELF
    if _ni(gate):
        unproven = gate.get("unproven") or []
        if not unproven:
            return True, "non-inferior at every level × presentation"
        cells = len(gate["comparisons"])
        return False, f"non-inferiority not shown at {len(unproven)} of {cells} cell(s)"
    found = gate.get("regressions") or []
    if found:
        return False, f"{len(found)} significant regression(s)"
    return True, "no significant regression"


def power_sentence(gate: Mapping[str, Any]) -> str | None:
    """What the gate could have detected, and whether that reaches its margin; ``None`` for
    archives written before gates carried their power."""
    power = gate.get("power")
    if not power:
        return None
    worst = power["worst"]
    what = "an equally good candidate passes at margins from" if _ni(gate) else "detectable drop"
    text = (
        f"{what} {power['detectable_drop']:.3f} at {power['power']:.0%} power "
        f"(α/{power['cells']} = {power['alpha_per_cell']:.3g} per cell; worst n={worst['n']} "
        f"[{worst['presentation']}])"
    )
    if power["underpowered"]:
        text += (
            f"; UNDERPOWERED: over the margin {gate['margin']:g} by "
            f"{power['detectable_drop'] - gate['margin']:.3f}; {power['pairs_needed']:,} pairs "
            f"per level would reach it"
        )
    elif gate["margin"] == 0:
        text += "; no margin declared"
    else:
        text += f"; reaches the margin {gate['margin']:g}"
    undecidable = power.get("undecidable") or []
    if undecidable:
        never = "never pass a candidate no better than the baseline" if _ni(gate) else "never flag"
        text += (
            f"; {len(undecidable)} cell(s) can {never} at this size (e.g. n="
            f"{undecidable[0]['n']} [{undecidable[0]['presentation']}])"
        )
    return text


def gate_rows(
    gate: Mapping[str, Any], *, limit: int | None = None, level: str = "n"
) -> list[list[str]]:
    """The gated cells as text rows, the header first (``level`` heads the levels' column);
    with ``limit``, only the cells of the first ``limit`` presentations."""
    names = list(dict.fromkeys(r["presentation"] for r in gate["comparisons"]))
    shown = set(names if limit is None else names[:limit])
    ni = _ni(gate)
    head = [level, "presentation", "pairs", "candidate", "baseline", "Δ"]
    head += ["lower bound (Holm)", "p (Holm)"] if ni else ["p (Holm)"]
    if gate.get("power"):
        head.append("margin at 80%" if ni else "detectable drop")
    head.append("verdict")
    rows = [head]
    for r in gate["comparisons"]:
        if r["presentation"] not in shown:
            continue
        row = [
            str(r["n"]),
            str(r["presentation"]),
            str(r.get("pairs", "")),
            f"{r['candidate']:.3f}",
            f"{r['baseline']:.3f}",
            f"{r['delta']:+.3f}",
        ]
        if ni:
            row += [f"{r['lower_holm']:+.3f}", p_text(r["p_holm"])]
            verdict = "non-inferior" if r["noninferior"] else "NOT SHOWN"
        else:
            row.append(p_text(r["p_holm"]))
            verdict = "REGRESSION" if r["regression"] else "—"
        if gate.get("power"):
            row.append(f"{r['detectable_drop']:.3f}")
        rows.append(row + [verdict])
    return rows


def _hidden(gate: Mapping[str, Any]) -> int:
    names = dict.fromkeys(r["presentation"] for r in gate["comparisons"])
    return max(0, len(names) - SHOWN_PRESENTATIONS)


def bound_sentences(r: Mapping[str, Any]) -> list[str]:
    """The bound behind a strict pass, and each threshold stated with a confidence."""
    bounds, name = r.get("bounds") or {}, level_name(r)
    out = []
    strict = bounds.get("strict")
    if strict and strict["failures"] == 0:
        out.append(
            f"C = 1 on {strict['instances']:,} instances: failure rate ≤ "
            f"{strict['upper']:.2%} at {strict['confidence']:.0%} (one-sided, Clopper–Pearson)"
        )
    for t in bounds.get("thresholds", []):
        known = [lv for lv in t["levels"] if lv["bound"] is not None]
        pick = min if t["side"] == "lower" else max
        edge = pick(known, key=lambda lv: lv["bound"]) if known else None
        where = (
            f"; {'lowest' if t['side'] == 'lower' else 'highest'} {t['side']} bound "
            f"{edge['bound']:.3f} at {name}={edge['n']}"
            if edge
            else "; no level with a bound"
        )
        failing = [str(lv["n"]) for lv in t["levels"] if not lv["holds"]]
        verdict = "holds" if not failing else f"fails at {name}={', '.join(failing)}"
        out.append(f"{t['threshold']} (one-sided Wilson): {verdict}{where}")
    return out


def bound_lines(r: Mapping[str, Any]) -> list[str]:
    """The terminal's lines for the bounds behind the verdict (:func:`bound_sentences`)."""
    return [f"    {text}" for text in bound_sentences(r)]


def gate_lines(r: Mapping[str, Any]) -> list[str]:
    """The terminal's lines for the gate: its verdict, its power and its cells."""
    gate = r.get("gate")
    if not gate:
        return []
    passed, verdict = gate_verdict(gate)
    if passed is None:
        return [f"    against baseline {gate['baseline']}: {verdict}"]
    lines = [f"    against baseline {gate['baseline']}: {verdict} ({gate_title(gate)})"]
    power = power_sentence(gate)
    if power:
        lines.append(f"      {power}")
    if gate["comparisons"]:
        lines.extend(
            aligned(gate_rows(gate, limit=SHOWN_PRESENTATIONS, level=level_name(r)), "      ")
        )
        hidden = _hidden(gate)
        if hidden:
            lines.append(f"      (+{hidden} more presentations in the JSON and HTML reports)")
    return lines


def bound_markdown(r: Mapping[str, Any], cell: Any) -> list[str]:
    """The Markdown summary's bullets for the bounds; ``cell`` escapes the text."""
    return [f"- Bound: {cell(text)}" for text in bound_sentences(r)]


def gate_markdown(r: Mapping[str, Any], cell: Any) -> list[str]:
    """The Markdown summary's bullets for the gate, the cells folded in a details block;
    ``cell`` escapes a table cell."""
    out: list[str] = []
    gate = r.get("gate")
    if not gate:
        return out
    passed, verdict = gate_verdict(gate)
    name = "Non-inferiority gate" if _ni(gate) else "Regression gate"
    if passed is None:
        return out + [f"- {name} against `{cell(gate['baseline'])}`: ⚪ {verdict}"]
    mark = "✅" if passed else "❌"
    out.append(
        f"- {name} against `{cell(gate['baseline'])}` (Holm α {gate['alpha']:g}, margin "
        f"{gate['margin']:g}): {mark} {verdict}"
    )
    power = power_sentence(gate)
    if power:
        warn = "⚠️ " if gate["power"]["underpowered"] else ""
        out.append(f"  - {warn}{cell(power)}")
    if gate["comparisons"]:
        rows = [[cell(c) for c in row] for row in gate_rows(gate, level=level_name(r))]
        out += [
            "",
            f"  <details><summary>gate per level × presentation ({len(rows) - 1} cells)</summary>",
            "",
            *(f"  {line}" for line in markdown_table(rows)),
            "",
            "  </details>",
        ]
    return out


def gate_html(r: Mapping[str, Any]) -> str:
    """The HTML page's section: the bounds, then the gate's verdict, power and cells."""
    parts = [f"<p><b>Bound.</b> {escape(text)}.</p>" for text in bound_sentences(r)]
    gate = r.get("gate")
    if gate:
        passed, verdict = gate_verdict(gate)
        title = "Non-inferiority gate" if _ni(gate) else "Regression gate"
        parts.append(
            f"<h3>{title}</h3><p>Against baseline <code>{escape(str(gate['baseline']))}</code>: "
            f"<b>{escape(verdict)}</b>"
            + ("" if passed is None else f" ({escape(gate_title(gate))})")
            + ".</p>"
        )
        power = power_sentence(gate)
        if power:
            kind = "warn" if gate["power"]["underpowered"] else "muted"
            parts.append(f'<p class="{kind}"><b>Power.</b> {escape(power)}.</p>')
        if gate.get("comparisons"):
            parts.append(html_table(gate_rows(gate, level=level_name(r))))
    return "".join(parts)


def gate_properties(gate: Mapping[str, Any]) -> list[tuple[str, object]]:
    """JUnit properties: the verdict, the gate's detectable drop, each cell's, and whether the
    gate is underpowered (with the pairs per level that would reach its margin)."""
    passed, verdict = gate_verdict(gate)
    props: list[tuple[str, object]] = [
        ("competence_gate", gate["status"] if passed is None else _short(gate, passed))
    ]
    power = gate.get("power")
    if not power:
        return props
    props.append(("competence_detectable_drop", power["detectable_drop"]))
    props.extend(
        (f"competence_detectable_drop[n={c['n']},{c['presentation']}]", c["detectable_drop"])
        for c in _cells(gate)
    )
    props.append(("competence_gate_underpowered", power["underpowered"]))
    if power["underpowered"]:
        props.append(("competence_gate_pairs_needed", power["pairs_needed"]))
    return props


def _short(gate: Mapping[str, Any], passed: bool) -> str:
    if _ni(gate):
        return "non-inferior" if passed else "non-inferiority not shown"
    return "no significant regression" if passed else "regression"


def _cells(gate: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    return gate.get("comparisons") or []
