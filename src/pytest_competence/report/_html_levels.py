"""A result's figures as HTML tables: per level, per pair of presentations, and the summary
over the whole grid."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_competence.drawing import SHOWN_PRESENTATIONS, esc
from pytest_competence.report._html_parts import as_text, kv, num, p_value, table
from pytest_competence.report._matrix import level_name

__all__ = ["level_table", "pairs_table", "summary_html"]


def _one_pair(r: Mapping[str, Any]) -> bool:
    """Two presentations: the pair's figures are the level's, but for its McNemar test."""
    return len(r["presentations"]) == 2


def level_table(r: Mapping[str, Any], *, compact: bool = False) -> str:
    """Every figure per level (with two presentations, their McNemar test too: the pair's
    other figures are the level's); ``compact``: the key ones (accuracy of the first
    presentations, R with its interval, ι, κₙ, coverage, all correct)."""
    if compact:
        return _key_figures(r)
    shown = r["presentations"]
    head = (
        [esc(level_name(r)), "instances", "joint"]
        + [f"acc [{esc(p)}]" for p in shown]
        + [
            "mean acc (joint)",
            "R",
            "R 95% CI",
            "D",
            "U",
            "ι",
            "strict ι",
            "yes-rate",
            "κₙ",
            "coverage",
            "any",
            "fraction",
            "all",
        ]
    )
    rows = []
    for lv in r["levels"]:
        ci = lv.get("robust_correct_ci")
        rows.append(
            [esc(lv["n"]), esc(lv["instances"]), esc(lv["jointly_parsed"])]
            + [num(lv["accuracy_by_presentation"].get(p)) for p in shown]
            + [num(lv.get(k)) for k in ("mean_accuracy_joint", "robust_correct")]
            + [_ci(ci)]
            + [
                num(lv.get(k))
                for k in (
                    "shared_wrong",
                    "presentation_dependent",
                    "invariance",
                    "strict_invariance",
                    "yes_rate",
                    "kappa",
                    "coverage",
                    "any_correct",
                    "fraction_correct",
                    "all_correct",
                )
            ]
        )
    if rows and _one_pair(r):
        head += ["b", "c", "test", "p"]
        for row, lv in zip(rows, r["levels"]):
            pair: Mapping[str, Any] = next(iter((lv.get("pairs") or {}).values()), {})
            m = pair.get("mcnemar") or {}
            row += [esc(m.get("b", "—")), esc(m.get("c", "—")), esc(m.get("method", "—"))]
            row.append(p_value(m.get("p_value")))
    return table(head, rows) if rows else '<p class="muted">No levels.</p>'


def _key_figures(r: Mapping[str, Any]) -> str:
    shown = r["presentations"][:SHOWN_PRESENTATIONS]
    head = [esc(level_name(r)), "instances", *(f"acc [{esc(p)}]" for p in shown)]
    head += ["R", "R 95% CI", "ι", "κₙ", "coverage", "all"]
    rows = [
        [esc(lv["n"]), esc(lv["instances"])]
        + [num(lv["accuracy_by_presentation"].get(p)) for p in shown]
        + [num(lv.get("robust_correct")), _ci(lv.get("robust_correct_ci"))]
        + [num(lv.get(k)) for k in ("invariance", "kappa", "coverage", "all_correct")]
        for lv in r["levels"]
    ]
    return table(head, rows) if rows else '<p class="muted">No levels.</p>'


def _ci(ci: Any) -> str:
    return "—" if not ci else f"[{num(ci[0])}, {num(ci[1])}]"


def pairs_table(r: Mapping[str, Any]) -> str:
    """Per level and pair of presentations (the original and another), their figures and
    McNemar test; nothing with two presentations (:func:`level_table` has their test)."""
    if _one_pair(r):
        return ""
    rows = []
    for lv in r["levels"]:
        for name, pr in lv.get("pairs", {}).items():
            m = pr.get("mcnemar") or {}
            rows.append(
                [
                    esc(lv["n"]),
                    f"{esc(r['presentations'][0])} vs {esc(name)}",
                    esc(pr.get("jointly_parsed")),
                ]
                + [
                    num(pr.get(k))
                    for k in ("invariance", "strict_invariance", "yes_rate", "kappa", "consistency")
                ]
                + [
                    esc(m.get("b")),
                    esc(m.get("c")),
                    esc(m.get("method")),
                    p_value(m.get("p_value")),
                    p_value(m.get("p_holm")),
                ]
            )
    if not rows:
        return ""
    head = [
        esc(level_name(r)),
        "pair",
        "joint",
        "ι",
        "strict ι",
        "yes-rate",
        "κₙ",
        "both right",
        "b",
        "c",
        "test",
        "p",
        "p (Holm)",
    ]
    shown = table(head, rows, left=2)
    if len(r["presentations"]) > SHOWN_PRESENTATIONS:  # variations, intervention cells: folded
        return (
            f"<details><summary><b>Paired figures per level</b> ({len(rows)} pairs)"
            f"</summary>{shown}</details>"
        )
    return "<h3>Paired figures per level</h3>" + shown


def summary_html(r: Mapping[str, Any]) -> str:
    s, shown = r["summary"], r["presentations"]
    boot = s.get("bootstrap") or {}

    def ci(key: str, signed: bool = False) -> str:
        triple = boot.get(key)
        if not triple or triple[1] is None:
            return ""
        low, high = num(triple[1], signed=signed), num(triple[2], signed=signed)
        return f" (95% interval [{low}, {high}])"

    rows = [
        ("instances", esc(s.get("instances"))),
        ("accuracy (pooled)", as_text(s.get("accuracy_by_presentation") or {})),
        ("all correct (pooled)", num(s.get("all_correct"))),
        ("κ̄", num(s.get("kappa_bar")) + ci("kappa_bar")),
    ]
    for key, label in (("robust_correct", "R (pooled)"), ("invariance", "ι (pooled)")):
        if key in boot:
            rows.append((label, num(boot[key][0]) + ci(key)))
    per_pair: list[tuple[str, str]] = []  # one row per non-original presentation
    for key, value in boot.items():
        if key.startswith("accuracy_difference["):
            pair = key[len("accuracy_difference[") : -1].replace("-", " − ", 1)
            per_pair.append(
                (
                    f"accuracy difference {esc(pair)}",
                    num(value[0], signed=True) + ci(key, signed=True),
                )
            )
    for name, m in (s.get("mcnemar") or {}).items():
        per_pair.append(
            (
                f"McNemar {esc(shown[0])} vs {esc(name)}",
                f"b = {esc(m.get('b'))}, c = {esc(m.get('c'))}, {esc(m.get('method'))}, "
                f"statistic {num(m.get('statistic'))}, p = {p_value(m.get('p_value'))}",
            )
        )
    folded = len(shown) > SHOWN_PRESENTATIONS
    if not folded:
        rows.extend(per_pair)
    if "repeat_agreement" in s:
        rows.append(("repeat agreement", as_text(s["repeat_agreement"])))
    if boot:
        rows.append(
            (
                "intervals",
                f"paired bootstrap, B = {esc(boot.get('B'))}, seed "
                f"{esc(boot.get('seed'))}, stratified by "
                f"{esc(boot.get('stratified_by'))}",
            )
        )
    html = kv(rows)
    if folded and per_pair:
        html += (
            f"<details><summary>accuracy differences and McNemar tests for "
            f"{len(shown) - 1} presentations</summary>{kv(per_pair)}</details>"
        )
    b = s.get("boundary")
    if b:
        tau = "—" if b.get("tau") is None else f"{b['tau']:g}"
        # The schema's names; stats.BoundaryReproducibility.as_dict() calls them differently.
        crossing = b["crossing"] if "crossing" in b else b.get("observed_level")
        again = (
            b["reproducibility"] if "reproducibility" in b else b.get("reproduction_probability")
        )
        if crossing is None:
            text = f"ι stays at or above τ = {tau} at every level"
        else:
            text = f"ι first falls below τ = {tau} at {esc(level_name(r))} = {esc(crossing)}"
        if again is not None:
            text += f"; the same crossing recurs in {again:.0%} of parametric bootstrap resamples"
        html += f"<p><b>Boundary.</b> {text}.</p>"
        if b.get("coin_flip"):
            html += (
                '<p class="warn">The crossing is close to a coin flip: the curve sits near '
                "τ there, so read the shape of the profile, not the crossing point.</p>"
            )
    return "<h3>Summary</h3>" + html
