"""Why it fails, in the reports: the output decomposition and the layer probes of one result.

Renders ``result["summary"]["decomposition"]`` (δ, s, accuracy and yes-rate per presentation ×
level from the evaluation's candidate scores: CBE paper, arXiv:2610.22894, App. E.3, Table 11)
and ``result["probes"]`` (a probed ``hf:`` model: the gold probe's AUROC by layer with its
shuffled-label null band and the first layer reaching the stated AUROC, per level; the logit
lens; original → equivalent patching: App. I, Figure 5). Without evaluation scores, the
decomposition shown is the probe pass's own (the answer-token logits at the answer position).
Terminal (the decomposition under ``-v``), Markdown and HTML, with an inline SVG of AUROC by
layer per level as Figure 5 draws it. A result with neither renders nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_competence.drawing import (
    PRESENTATION_COLORS,
    Band,
    Series,
    esc,
    level_chart,
    number,
)
from pytest_competence.report._cells import aligned, html_table, markdown_table

__all__ = ["probes_html", "probes_lines", "probes_markdown"]

_NULL = "#8c8c8c"  # Figure 5 draws the shuffled-label null as a grey band
_SOURCES = {
    "scores": "the evaluation's candidate scores (readout=score)",
    "probes": "the answer-token logits the probes read (first token of each answer)",
}


def _fig(value: Any, signed: bool = False) -> str:
    """Three significant digits (a near-indifferent model's δ is 1e-4 logits); — if undefined."""
    if value is None or isinstance(value, bool) or not math.isfinite(value):
        return "—"
    return f"{value:+.3g}" if signed else f"{value:.3g}"


def _interval(triple: Sequence[Any] | None, signed: bool = False, share: bool = False) -> str:
    """``estimate [low, high]``: shares to three places, margins to three digits."""
    if not triple or triple[0] is None:
        return "—"

    def shown(v: Any) -> str:
        return number(v) if share else _fig(v, signed)

    text = shown(triple[0])
    if len(triple) > 2 and triple[1] is not None:
        text += f" [{shown(triple[1])}, {shown(triple[2])}]"
    return text


def _level(level: Any) -> str:
    return "all" if level is None else str(level)


def _decomposition(r: Mapping[str, Any]) -> tuple[list[dict[str, Any]], str] | None:
    block = (r.get("summary") or {}).get("decomposition")
    if block and block.get("cells"):
        return block["cells"], _SOURCES["scores"]
    probes = _probes(r)
    if probes and probes.get("decomposition"):
        return probes["decomposition"], _SOURCES["probes"]
    return None


def _probes(r: Mapping[str, Any]) -> Mapping[str, Any] | None:
    block = r.get("probes")
    return block if isinstance(block, Mapping) else None


def _decomposition_rows(cells: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    answers = list(next((c["defaults"] for c in cells if c.get("defaults")), {}))
    head = ["presentation", "n", "scored", "accuracy", "yes-rate", "δ default", "s signal"]
    rows = [head + [f"δ[{a}]" for a in answers]]
    for c in cells:
        rows.append(
            [
                str(c["presentation"]),
                _level(c["level"]),
                f"{c['scored']}/{c['prompts']}",
                _interval(c["accuracy"], share=True),
                _interval(c["yes_rate"], share=True),
                _interval(c["default"], signed=True),
                _interval(c["signal"], signed=True),
            ]
            + [_interval(c["defaults"].get(a), signed=True) for a in answers]
        )
    return rows


def _peak(curve: Mapping[str, Any]) -> tuple[int | None, float | None, str]:
    """The layer of the highest AUROC, that AUROC, and the null band there."""
    values = [(a, k) for k, a in enumerate(curve["auroc"]) if a is not None]
    if not values:
        return None, None, "—"
    best, k = max(values)
    low, high = curve["null_low"][k], curve["null_high"][k]
    band = "—" if low is None else f"[{low:.2f}, {high:.2f}]"
    return curve["layers"][k], best, band


def _probe_rows(block: Mapping[str, Any], by_layer: bool) -> list[list[str]]:
    threshold = block["settings"]["threshold"]
    head = ["presentation", "n", "instances", f"first layer ≥ {threshold:g}", "peak AUROC"]
    head += ["null band there", "AUROC by layer"] if by_layer else ["null band there"]
    rows = [head]
    for c in block["probes"]:
        if c.get("reason"):
            rows.append([str(c["presentation"]), _level(c["level"]), "—", f"n/a: {c['reason']}"])
            rows[-1] += [""] * (len(head) - len(rows[-1]))
            continue
        layer, best, band = _peak(c)
        row = [
            str(c["presentation"]),
            _level(c["level"]),
            str(c["instances"]),
            _first_layer(c),
            "—" if best is None else f"{best:.2f} (layer {layer})",
            band,
        ]
        if by_layer:
            row.append(" ".join("—" if a is None else f"{a:.2f}" for a in c["auroc"]))
        rows.append(row)
    return rows


def _patch_rows(block: Mapping[str, Any]) -> list[list[str]]:
    patching = block.get("patching")
    if not patching:
        return []
    rows = [["n", "disagreeing pairs", "restored share by layer " + _layers(patching["layers"])]]
    for part in [*patching["by_level"], patching["pooled"]]:
        shares = " ".join("—" if v is None else f"{v:.2f}" for v in part["share"])
        rows.append([_level(part["level"]), str(part["disagreeing"]), shares])
    return rows


def _lens_rows(block: Mapping[str, Any]) -> list[list[str]]:
    rows = [["presentation", "n", "accuracy by layer", "δ by layer", "s by layer"]]
    for c in block.get("lens") or []:
        rows.append(
            [
                str(c["presentation"]),
                _level(c["level"]),
                " ".join("—" if v is None else f"{v:.2f}" for v in c["accuracy"]),
                " ".join(_fig(v, signed=True) for v in c["default"]),
                " ".join(_fig(v, signed=True) for v in c["signal"]),
            ]
        )
    return rows


def _layers(layers: Sequence[int]) -> str:
    return f"({layers[0]}–{layers[-1]})" if len(layers) > 1 else f"({layers[0]})"


def _headline(block: Mapping[str, Any]) -> str:
    """One line: where the gold becomes decodable, per presentation (levels pooled, else the
    cells), and what patching restores at the last layer patched."""
    if block.get("status") != "ok":
        return f"probes: {block.get('status')} — {block.get('reason')}"
    cells = [c for c in block["probes"] if c["level"] is None] or block["probes"]
    threshold = block["settings"]["threshold"]
    found = "; ".join(f"{_cell_name(c)} {_first(c)}" for c in cells)
    text = (
        f"probes ({block['device']} {block['dtype']}, residual layers "
        f"{_layers(block['layers'])[1:-1]}, {block['prompts']} prompts, "
        f"{block['state_mib']:.1f} MiB): gold AUROC ≥ {threshold:g} {found}"
    )
    pooled = (block.get("patching") or {}).get("pooled")
    if pooled:
        text += f"; patching into {block['patch']}: {pooled['disagreeing']} disagreeing pairs"
    elif block.get("patch_reason"):
        text += f"; no patching: {block['patch_reason']}"
    return text


def _cell_name(c: Mapping[str, Any]) -> str:
    return str(c["presentation"]) + ("" if c["level"] is None else f" n={c['level']}")


def _first(c: Mapping[str, Any]) -> str:
    if c.get("reason"):
        return f"n/a ({c['reason']})"
    return "never" if c["first_layer"] is None else f"from layer {_first_layer(c)}"


def _first_layer(c: Mapping[str, Any]) -> str:
    """The first layer reaching the threshold, and where that is not above the null band, the
    first that is (documents written before it was recorded show the layer alone)."""
    first = c["first_layer"]
    if first is None:
        return "never"
    if "first_above_null" not in c or c["first_above_null"] == first:
        return str(first)
    above = c["first_above_null"]
    if above is None:
        return f"{first} (never above the null band)"
    return f"{first} (above the null band from {above})"


def probes_lines(r: Mapping[str, Any], verbosity: int = 0) -> list[str]:
    """Terminal lines: the probes' headline and table (per level under ``-v``), patching; the
    decomposition and the logit lens under ``-v``."""
    out: list[str] = []
    found = _decomposition(r)
    if found and verbosity >= 1:
        cells, source = found
        out.append(f"    output decomposition (δ: default toward yes, s: signal; from {source}):")
        out += aligned(_decomposition_rows(cells), "      ")
    block = _probes(r)
    if block is None:
        return out
    out.append(f"    {_headline(block)}")
    if block.get("status") != "ok":
        return out
    if verbosity < 1:  # levels pooled, where there are several levels
        pooled = [c for c in block["probes"] if c["level"] is None]
        block = {**block, "probes": pooled or block["probes"]}
    out += aligned(_probe_rows(block, by_layer=verbosity >= 1), "      ")
    patching = _patch_rows(block)
    out += aligned(patching, "      ") if patching else []
    if verbosity >= 1 and block.get("lens"):
        out.append("      logit lens:")
        out += aligned(_lens_rows(block), "        ")
    return out


def probes_markdown(r: Mapping[str, Any]) -> list[str]:
    """Markdown lines: the decomposition, the probes by layer, patching and the lens."""
    out: list[str] = []
    found = _decomposition(r)
    if found:
        cells, source = found
        out += [
            "",
            f"Output decomposition (CBE App. E.3; δ default toward yes, s instance signal, "
            f"95% bootstrap intervals by instance; from {source}):",
            "",
            *markdown_table(_decomposition_rows(cells)),
        ]
    block = _probes(r)
    if block is not None:
        out += ["", f"{_headline(block)}.".replace(" — ", ": ")]
        if block.get("status") == "ok":
            out += ["", *markdown_table(_probe_rows(block, by_layer=True))]
            if _patch_rows(block):
                out += ["", *markdown_table(_patch_rows(block))]
            if block.get("lens"):
                out += ["", "Logit lens:", "", *markdown_table(_lens_rows(block))]
    return out + [""] if out else []


def _curve_charts(block: Mapping[str, Any]) -> list[tuple[str, str]]:
    """One chart per level (then pooled): AUROC by layer per presentation, grey null bands."""
    by_level: dict[Any, list[Mapping[str, Any]]] = {}
    for c in block["probes"]:
        if not c.get("reason"):
            by_level.setdefault(c["level"], []).append(c)
    threshold = block["settings"]["threshold"]
    charts = []
    for level, cells in by_level.items():
        series = [
            Series(
                f"{c['presentation']} (first ≥ {threshold:g}: {_first_layer(c)})",
                list(zip(c["layers"], c["auroc"])),
                PRESENTATION_COLORS[k % len(PRESENTATION_COLORS)],
                "" if k == 0 else "5 3",
                width=2.2,
                band=Band(list(zip(c["layers"], c["null_low"], c["null_high"])), _NULL),
            )
            for k, c in enumerate(cells)
        ]
        title = f"Gold probe AUROC by layer, {'all levels' if level is None else f'n = {level}'}"
        svg = level_chart(
            title,
            list(block["layers"]),
            series,
            y_label="AUROC",
            rules=[(threshold, f"AUROC {threshold:g}", "left"), (0.5, "chance", "right")],
            x_name="residual layer",
            log_x=False,
        )
        charts.append((title, svg))
    return charts


def probes_html(index: int, r: Mapping[str, Any]) -> str:
    """An HTML block (``id="result-INDEX-probes"``): the decomposition table, the AUROC-by-layer
    plots with the null band, the probe, patching and lens tables; ``""`` with neither."""
    found, block = _decomposition(r), _probes(r)
    if found is None and block is None:
        return ""
    out = [f'<div id="result-{index}-probes"><h3>Why it fails: the answer position</h3>']
    if found:
        cells, source = found
        out.append(
            f"<p class=muted>Output decomposition (CBE App. E.3, Table 11): the margin "
            f"m = score(yes) − score(no) split into δ = (μ_yes + μ_no)/2, the default toward "
            f"yes, and s = (μ_yes − μ_no)/2, the instance signal, μ_g the mean margin of "
            f"the prompts whose gold is g; 95% bootstrap intervals by instance. From "
            f"{esc(source)}.</p>{html_table(_decomposition_rows(cells))}"
        )
    if block is not None:
        out.append(f"<p><b>{esc(_headline(block))}.</b></p>")
        if block.get("status") == "ok":
            confidence = block["settings"]["confidence"]
            figures = "".join(
                f"<figure><figcaption>{esc(title)} <span>grey: {confidence:.0%} "
                f"shuffled-label null</span></figcaption>{svg}</figure>"
                for title, svg in _curve_charts(block)
            )
            out.append(f'<div class="plots">{figures}</div>')
            out.append(html_table(_probe_rows(block, by_layer=True)))
            if _patch_rows(block):
                out.append(
                    f"<p class=muted>Patching: the original's residual at one layer and its "
                    f"answer position written into the {esc(block['patch'])} run where their "
                    f"answers disagree; the share whose answer turns into the original's."
                    f"</p>{html_table(_patch_rows(block))}"
                )
            if block.get("lens"):
                out.append(
                    "<p class=muted>Logit lens: each layer read through the final norm and "
                    f"the unembedding.</p>{html_table(_lens_rows(block))}"
                )
        out.append(
            "<p class=muted>Linear decodability at one position is not a mechanism, and its "
            "absence does not prove the answer absent (CBE App. I; docs/probes.md).</p>"
        )
    return "".join(out) + "</div>"
