"""The HTML report's plots of one result as inline SVG, drawn with :mod:`pytest_competence.drawing`.

:func:`result_plots` draws the four plots of one ``results[]`` entry: the profile, κₙ, the
paired masses and any/fraction/all correct.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_competence.drawing import (
    BULLET,
    DEPENDENT,
    IOTA,
    PRESENTATION_COLORS,
    ROBUST,
    SHARED,
    SHOWN_PRESENTATIONS,
    Band,
    Defs,
    Series,
    bullet_chart,
    level_chart,
    level_label,
    stacked_bars,
)
from pytest_competence.report._matrix import level_name

__all__ = ["result_plots"]


def result_plots(
    r: Mapping[str, Any], defs: Defs | None = None, *, profile_only: bool = False
) -> list[tuple[str, str, str]]:
    """The four plots of one ``results[]`` entry as ``(title, caption, svg)`` (``profile_only``:
    the first alone); with ``defs``, their frames are the page's shared ones.

    (1) accuracy per presentation, ι and R with its Wilson band against n (CBE paper, arXiv:2610.22894, Fig. 2);
    (2) κₙ per pair against n, gaps where undefined (Fig. 7); (3) R/D/U stacked per level;
    (4) any/fraction/all correct as bullet rows (systematicity paper, arXiv:2609.13948, Fig. 4).
    """
    x_name = level_name(r)
    shown = r["presentations"][:SHOWN_PRESENTATIONS]  # the rest: the family's own section
    more = len(r["presentations"]) - len(shown)
    first_of = (
        f"; the first {len(shown)} of {len(r['presentations'])} presentations" if more else ""
    )
    profile = (
        "Profile",
        f"accuracy per presentation, ι and R (log₂ {x_name}){first_of}",
        _profile_chart(r, shown, x_name, defs),
    )
    if profile_only:
        return [profile]
    levels = r["levels"]
    rows = [
        (
            f"{x_name} = {level_label(lv['n'])}",
            (lv.get("any_correct"), lv.get("fraction_correct"), lv.get("all_correct")),
        )
        for lv in levels
    ]
    return [
        profile,
        (
            "Chance-corrected invariance",
            f"gaps where κₙ is undefined{first_of}",
            _kappa_chart(r, shown, x_name, defs),
        ),
        (
            "Paired masses",
            "on jointly parsed instances; below: jointly parsed/instances",
            _masses_chart(levels, x_name, defs),
        ),
        (
            "Systematicity",
            "any · fraction · all correct",
            bullet_chart("Any, fraction and all correct per level", rows, BULLET, defs=defs),
        ),
    ]


def _undefined(levels: Sequence[Mapping[str, Any]]) -> bool:
    """True when no level has an instance jointly parsed (ι undefined throughout)."""
    return bool(levels) and all(lv.get("invariance") is None for lv in levels)


def _profile_chart(
    r: Mapping[str, Any], shown: Sequence[str], x_name: str, defs: Defs | None
) -> str:
    """Accuracy per shown presentation, ι, and R with its Wilson band, against the levels."""
    levels = r["levels"]
    series = [
        Series(
            f"accuracy [{p}]",
            [(lv["n"], lv["accuracy_by_presentation"].get(p)) for lv in levels],
            PRESENTATION_COLORS[k % len(PRESENTATION_COLORS)],
            "" if k == 0 else "5 3",
            1.6,
        )
        for k, p in enumerate(shown)
    ]
    series.append(
        Series("invariance ι", [(lv["n"], lv.get("invariance")) for lv in levels], IOTA, width=2.4)
    )
    cis = [(lv["n"], *(lv.get("robust_correct_ci") or (None, None))) for lv in levels]
    series.append(
        Series(
            "R with 95% Wilson band",
            [(lv["n"], lv.get("robust_correct")) for lv in levels],
            ROBUST,
            width=2.6,
            band=Band(cis, ROBUST),
        )
    )
    tau = (r["summary"].get("boundary") or {}).get("tau")
    return level_chart(
        f"Accuracy, invariance and robust correctness against {x_name}",
        [lv["n"] for lv in levels],
        series,
        y_label="share",
        x_name=x_name,
        defs=defs,
        rules=[(tau, f"τ = {tau:g}", "left")] if tau is not None else [],
        note="no levels"
        if not levels
        else "R and ι undefined: no instance jointly parsed"
        if _undefined(levels)
        else None,
    )


def _kappa_chart(r: Mapping[str, Any], shown: Sequence[str], x_name: str, defs: Defs | None) -> str:
    """κₙ of each shown presentation against the first (or the result's κₙ), with κ = 0 and κ̄."""
    levels = r["levels"]
    names = [
        name
        for name in dict.fromkeys(name for lv in levels for name in lv.get("pairs", {}))
        if name in shown
    ]
    kappas = [
        Series(
            f"κₙ ({shown[0]} vs {name})",
            [(lv["n"], lv.get("pairs", {}).get(name, {}).get("kappa")) for lv in levels],
            PRESENTATION_COLORS[(k + 1) % len(PRESENTATION_COLORS)],
            width=2.2,
        )
        for k, name in enumerate(names)
    ] or [Series("κₙ", [(lv["n"], lv.get("kappa")) for lv in levels], PRESENTATION_COLORS[1])]
    values = [v for s in kappas for _, v in s.points if v is not None]
    low = max(-1.0, min(-0.25, math.floor(min(values, default=0) * 4) / 4))
    ticks = [low + 0.25 * k for k in range(int(round((1 - low) / 0.25)) + 1)]
    kbar = r["summary"].get("kappa_bar")
    rules = [(0.0, "κ = 0: chance agreement", "right")]
    if kbar is not None:
        rules.append((kbar, f"κ̄ = {kbar:.2f}", "left"))
    return level_chart(
        f"Chance-corrected invariance κₙ against {x_name}",
        [lv["n"] for lv in levels],
        kappas,
        y_label="κₙ",
        x_name=x_name,
        defs=defs,
        y_range=(low, 1.0),
        y_ticks=ticks,
        rules=rules,
        note=None if values else "κₙ undefined at every level",
    )


def _masses_chart(levels: Sequence[Mapping[str, Any]], x_name: str, defs: Defs | None) -> str:
    """R, D and U stacked per level, each bar noted with jointly parsed/instances."""
    stacks = [
        (lv.get("robust_correct"), lv.get("shared_wrong"), lv.get("presentation_dependent"))
        for lv in levels
    ]
    return stacked_bars(
        "R, D and U per level",
        [lv["n"] for lv in levels],
        stacks,
        [
            ("R robust-correct", ROBUST),
            ("D shared-wrong", SHARED),
            ("U presentation-dependent", DEPENDENT),
        ],
        notes=[f"{lv['jointly_parsed']}/{lv['instances']}" for lv in levels],
        note="no instance jointly parsed" if _undefined(levels) else None,
        x_name=x_name,
        defs=defs,
    )
