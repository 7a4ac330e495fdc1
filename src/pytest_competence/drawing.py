"""Drawing a report's figures and tables: the standard library only, deterministic output.

The chart helpers a family's :meth:`~pytest_competence.protocol.Family.figures` and the HTML
report draw with — :func:`level_chart` (series against n on a log₂ axis), :func:`stacked_bars`
and :func:`bullet_chart` — and :func:`number`, the way every report writes a figure. Each chart is
one ``<svg>`` element sized by its ``viewBox`` so the page can scale it. Every string that reaches
the markup — labels, tooltips, notes — passes through :func:`esc`, since labels carry
presentation names; coordinates are printed with one decimal, so the same figures always give
the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

__all__ = [
    "BULLET",
    "DEPENDENT",
    "IOTA",
    "PRESENTATION_COLORS",
    "ROBUST",
    "SHARED",
    "SHOWN_PRESENTATIONS",
    "Band",
    "Series",
    "bullet_chart",
    "esc",
    "level_chart",
    "level_label",
    "number",
    "stacked_bars",
]

_WIDTH = 560
_LEFT, _RIGHT, _BOTTOM = 52, 16, 44
_GRID, _MUTED = "#e3e6ea", "#6a737d"
PRESENTATION_COLORS = ["#1f5fa8", "#7b4fa0", "#3d9bd6", "#8c564b", "#0f8b8d", "#a0522d"]
ROBUST, SHARED, DEPENDENT, IOTA = "#2c7a4b", "#c0392b", "#e0a526", "#d95f02"
BULLET = [
    ("any presentation right", "#bcd4ee"),
    ("fraction of prompts right", "#5b8fc9"),
    ("all right: C₀ = … = C_K = 1", "#15365f"),
]

_Scale = Callable[[float], float]


def esc(value: object) -> str:
    """``value`` as text safe in element content and in quoted attributes."""
    return escape(str(value), quote=True)


def _c(x: float) -> str:
    return f"{x:.1f}"


def _num(value: float) -> str:
    return f"{value:.3f}"


def level_label(n: int) -> str:
    """A level as the paper's axes print it: ``512``, ``1k``, ``2k``."""
    return f"{n // 1024}k" if n >= 1024 and n % 1024 == 0 else str(n)


@dataclass(frozen=True)
class Band:
    """A shaded interval around a series: ``(n, low, high)``; ``None`` where undefined."""

    points: Sequence[tuple[int, float | None, float | None]]
    color: str


#: Presentations a table, comparison or per-presentation plot shows in full; the rest (the K
#: variations of each isomorphism type, the 36 cells of an intervention cluster) are in the JSON
#: and folded in the HTML, and the family's own section summarises them.
SHOWN_PRESENTATIONS = 6


@dataclass(frozen=True)
class Series:
    """One line over the levels; ``None`` values leave a gap in the line."""

    label: str
    points: Sequence[tuple[int, float | None]]
    color: str
    dash: str = ""
    width: float = 2.0
    band: Band | None = None


def _legend(entries: Sequence[tuple[str, str, str]]) -> tuple[list[str], int]:
    """Swatches and labels in rows across the top; entries are ``(label, colour, kind)``.

    ``kind`` is ``"line"``, ``"dash"`` or ``"box"``. Returns the markup and the height it takes.
    """
    out, x, row = [], float(_LEFT), 0
    for label, color, kind in entries:
        span = 30 + 6.4 * len(label)  # a generous estimate of the text width
        if x > _LEFT and x + span > _WIDTH - _RIGHT:
            x, row = float(_LEFT), row + 1
        y = 14 + 18 * row
        if kind == "box":
            out.append(f'<rect x="{_c(x)}" y="{y - 5}" width="18" height="10" fill="{color}"/>')
        else:
            dash = ' stroke-dasharray="5 3"' if kind == "dash" else ""
            out.append(
                f'<line x1="{_c(x)}" y1="{y}" x2="{_c(x + 18)}" y2="{y}" '
                f'stroke="{color}" stroke-width="2.5"{dash}/>'
            )
        out.append(f'<text x="{_c(x + 24)}" y="{y + 4}">{esc(label)}</text>')
        x += span + 14
    return out, (18 * (row + 1) + 8 if entries else 8)


def _open(height: float, label: str) -> list[str]:
    return [
        f'<svg class="chart" viewBox="0 0 {_WIDTH} '
        f'{_c(height)}" role="img" aria-label="{esc(label)}">',
        f"<title>{esc(label)}</title>",
    ]


def _log2_ticks(levels: Sequence[int]) -> list[int]:
    if min(levels) <= 0:  # a level 0 (e.g. no distractor rules) gets its own tick
        rest = [n for n in levels if n > 0]
        return sorted({n for n in levels if n <= 0}) + (_log2_ticks(rest) if rest else [])
    lo, hi = min(levels), max(levels)
    powers = [2**k for k in range(math.ceil(math.log2(lo)), math.floor(math.log2(hi)) + 1)]
    ticks = powers if len(powers) >= 2 else sorted(set(levels))
    step = max(1, math.ceil(len(ticks) / 12))  # keep labels from colliding on long grids
    return ticks[::step]


def level_chart(
    title: str,
    levels: Sequence[int],
    series: Sequence[Series],
    *,
    y_label: str,
    y_range: tuple[float, float] = (0.0, 1.0),
    y_ticks: Sequence[float] = (0, 0.25, 0.5, 0.75, 1),
    rules: Sequence[tuple[float, str, str]] = (),
    note: str | None = None,
    height: int = 300,
    x_name: str = "n",
    log_x: bool = True,
) -> str:
    """Series against n on a log₂ x-axis, with shaded bands and dotted horizontal ``rules``.

    A rule is ``(value, label, side)``, its label at the ``"left"`` or ``"right"`` end.
    ``log_x`` false draws a linear axis of whole numbers instead (layers, say); ``x_name``
    names the axis and the points' tooltips.
    """
    legend, top = _legend([(s.label, s.color, "dash" if s.dash else "line") for s in series])
    top += 6
    height = max(height, top + _BOTTOM + 160)  # a long legend pushes the plot down, never into it
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, height - top - _BOTTOM
    shown = sorted(set(levels)) or [4, 16]
    pad = 0.3 if len(shown) > 1 else 1.0  # a single level sits mid-axis
    # n = 0 sits one octave left of the smallest positive level (a log axis has no 0).
    zero = math.log2(min([n for n in shown if n > 0] or [1])) - 1

    def log2(n: float) -> float:
        if not log_x:
            return n
        return math.log2(n) if n > 0 else zero

    lo, hi = log2(shown[0]) - pad, log2(shown[-1]) + pad
    y0, y1 = y_range

    def x(n: float) -> float:
        return _LEFT + (log2(n) - lo) / (hi - lo) * plot_w

    def y(v: float) -> float:  # 6 px of headroom keeps a line at y1 off the frame
        return top + 6 + (y1 - min(max(v, y0), y1)) / (y1 - y0) * (plot_h - 12)

    out = _open(height, title)
    for t in y_ticks:
        out.append(
            f'<line x1="{_LEFT}" y1="{_c(y(t))}" x2="{_LEFT + plot_w}" y2="{_c(y(t))}" '
            f'stroke="{_GRID}"/>'
        )
        out.append(f'<text x="{_LEFT - 6}" y="{_c(y(t) + 4)}" text-anchor="end">{t:g}</text>')
    bottom = top + plot_h
    if log_x:
        ticks = _log2_ticks(shown)
    else:  # every whole number, thinned to about a dozen labels
        ticks = list(range(shown[0], shown[-1] + 1, max(1, math.ceil(len(shown) / 12))))
    for n in ticks:
        out.append(
            f'<line x1="{_c(x(n))}" y1="{top}" x2="{_c(x(n))}" y2="{_c(bottom + 5)}" '
            f'stroke="{_GRID}"/>'
        )
        out.append(
            f'<text x="{_c(x(n))}" y="{_c(bottom + 18)}" text-anchor="middle">'
            f"{esc(level_label(n))}</text>"
        )
    out.append(
        f'<rect x="{_LEFT}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" '
        f'stroke="{_MUTED}"/>'
    )
    out.append(
        f'<text x="{_LEFT + plot_w / 2:.1f}" y="{height - 6}" text-anchor="middle" '
        f'class="axis">{esc(x_name)}{" (log₂ scale)" if log_x else ""}</text>'
    )
    out.append(
        f'<text transform="translate(13 {top + plot_h / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle" class="axis">{esc(y_label)}</text>'
    )
    for value, label, side in rules:
        if y0 <= value <= y1:
            out.append(
                f'<line x1="{_LEFT}" y1="{_c(y(value))}" x2="{_LEFT + plot_w}" '
                f'y2="{_c(y(value))}" stroke="{_MUTED}" stroke-dasharray="2 3"/>'
            )
            at, anchor = (_LEFT + 4, "start") if side == "left" else (_LEFT + plot_w - 4, "end")
            out.append(
                f'<text x="{at}" y="{_c(y(value) - 4)}" text-anchor="{anchor}" '
                f'class="rule">{esc(label)}</text>'
            )
    for s in series:
        if s.band is not None:
            out += _band(s.band, x, y)
    for s in sorted(series, key=lambda s: -s.width):  # thin lines stay visible over thick ones
        out += _line(s, x, y, x_name)
    if note:
        out.append(
            f'<text x="{_LEFT + plot_w / 2:.1f}" y="{top + plot_h / 2:.1f}" '
            f'text-anchor="middle" class="note">{esc(note)}</text>'
        )
    return "\n".join(out + legend + ["</svg>"])


def _runs(points: Sequence[tuple]) -> list[list[tuple]]:
    """Consecutive points whose values are all defined: the pieces of a gapped line."""
    runs: list[list[tuple]] = [[]]
    for p in points:
        if any(v is None or not math.isfinite(v) for v in p[1:]):
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append(p)
    return [r for r in runs if r]


def _band(band: Band, x: _Scale, y: _Scale) -> list[str]:
    out = []
    for run in _runs(band.points):
        if len(run) == 1:  # a lone interval: an error bar rather than an area
            n, low, high = run[0]
            out.append(
                f'<line x1="{_c(x(n))}" y1="{_c(y(low))}" x2="{_c(x(n))}" '
                f'y2="{_c(y(high))}" stroke="{band.color}" stroke-width="8" '
                f'opacity="0.35"/>'
            )
            continue
        edge = [(x(n), y(high)) for n, _, high in run] + [(x(n), y(low)) for n, low, _ in run[::-1]]
        coords = " ".join(f"{_c(a)},{_c(b)}" for a, b in edge)
        out.append(f'<polygon points="{coords}" fill="{band.color}" opacity="0.22"/>')
    return out


def _line(s: Series, x: _Scale, y: _Scale, x_name: str = "n") -> list[str]:
    out = []
    dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
    for run in _runs(s.points):
        if len(run) > 1:
            coords = " ".join(f"{_c(x(n))},{_c(y(v))}" for n, v in run)
            out.append(
                f'<polyline points="{coords}" fill="none" stroke="{s.color}" '
                f'stroke-width="{s.width:g}"{dash}/>'
            )
        for n, v in run:
            out.append(
                f'<circle cx="{_c(x(n))}" cy="{_c(y(v))}" r="3" fill="{s.color}">'
                f"<title>{esc(s.label)}: {esc(x_name)}={esc(n)}, {_num(v)}</title></circle>"
            )
    return out


def stacked_bars(
    title: str,
    levels: Sequence[int],
    stacks: Sequence[Sequence[float | None]],
    parts: Sequence[tuple[str, str]],
    *,
    notes: Sequence[str] = (),
    note: str | None = None,
    height: int = 300,
    x_name: str = "n",
) -> str:
    """One bar per level stacking ``parts`` (label, colour) from the bottom; ``None``: no bar.
    ``x_name`` names the levels (the axis and the bars' tooltips)."""
    legend, top = _legend([(label, color, "box") for label, color in parts])
    top += 6
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, height - top - _BOTTOM
    slot = plot_w / max(len(levels), 1)
    bar = min(56.0, slot * 0.7)
    out = _open(height, title)
    for t in (0, 0.25, 0.5, 0.75, 1):
        yy = top + (1 - t) * plot_h
        out.append(
            f'<line x1="{_LEFT}" y1="{_c(yy)}" x2="{_LEFT + plot_w}" y2="{_c(yy)}" '
            f'stroke="{_GRID}"/>'
        )
        out.append(f'<text x="{_LEFT - 6}" y="{_c(yy + 4)}" text-anchor="end">{t:g}</text>')
    for i, (n, stack) in enumerate(zip(levels, stacks)):
        cx = _LEFT + slot * (i + 0.5)
        out.append(
            f'<text x="{_c(cx)}" y="{top + plot_h + 16}" text-anchor="middle">'
            f"{esc(level_label(n))}</text>"
        )
        if i < len(notes) and notes[i]:
            out.append(
                f'<text x="{_c(cx)}" y="{top + plot_h + 29}" text-anchor="middle" '
                f'class="small">{esc(notes[i])}</text>'
            )
        values = [v for v in stack if v is not None]
        if len(values) < len(stack):
            out.append(
                f'<text x="{_c(cx)}" y="{top + plot_h - 8}" text-anchor="middle" '
                f'class="note">—</text>'
            )
            continue
        base: float = top + plot_h
        for value, (label, color) in zip(values, parts):
            h = value * plot_h
            base -= h
            out.append(
                f'<rect x="{_c(cx - bar / 2)}" y="{_c(base)}" width="{_c(bar)}" '
                f'height="{_c(h)}" fill="{color}"><title>{esc(label)}: {esc(x_name)}={esc(n)}, '
                f"{_num(value)}</title></rect>"
            )
            if h >= 14 and bar >= 30:
                out.append(
                    f'<text x="{_c(cx)}" y="{_c(base + h / 2 + 4)}" text-anchor="middle" '
                    f'class="onbar">{value:.2f}</text>'
                )
    out.append(
        f'<line x1="{_LEFT}" y1="{top + plot_h}" x2="{_LEFT + plot_w}" y2="{top + plot_h}" '
        f'stroke="{_MUTED}"/>'
    )
    out.append(
        f'<text x="{_LEFT + plot_w / 2:.1f}" y="{height - 2}" text-anchor="middle" '
        f'class="axis">{esc(x_name)}</text>'
    )
    if note:
        out.append(
            f'<text x="{_LEFT + plot_w / 2:.1f}" y="{top + plot_h / 2:.1f}" '
            f'text-anchor="middle" class="note">{esc(note)}</text>'
        )
    return "\n".join(out + legend + ["</svg>"])


def bullet_chart(
    title: str,
    rows: Sequence[tuple[str, Sequence[float | None]]],
    parts: Sequence[tuple[str, str]],
    *,
    spans: Sequence[tuple[float, float] | None] = (),
    span_label: str = "gap",
) -> str:
    """Nested bars per row, widest first (systematicity paper, arXiv:2609.13948, Fig. 4): each part a narrower, darker bar.

    ``spans[i] = (low, high)`` marks an interval on row ``i`` with a bracket above its bars
    (the systematicity gap between solve-all and solve-any), labelled ``span_label``.
    """
    legend, top = _legend([(label, color, "box") for label, color in parts])
    top, row_h, value_w = top + 6, 30, 150
    plot_w = _WIDTH - _LEFT - _RIGHT - value_w
    height = top + row_h * max(len(rows), 1) + 30
    out = _open(height, title)
    for t in (0, 0.25, 0.5, 0.75, 1):
        xx = _LEFT + t * plot_w
        out.append(
            f'<line x1="{_c(xx)}" y1="{top}" x2="{_c(xx)}" y2="{top + row_h * len(rows)}" '
            f'stroke="{_GRID}"/>'
        )
        out.append(
            f'<text x="{_c(xx)}" y="{top + row_h * len(rows) + 16}" '
            f'text-anchor="middle">{t:g}</text>'
        )
    thickness = [20, 12, 5]
    for i, (label, values) in enumerate(rows):
        mid = top + row_h * (i + 0.5)
        out.append(f'<text x="{_LEFT - 6}" y="{_c(mid + 4)}" text-anchor="end">{esc(label)}</text>')
        out.append(
            f'<rect x="{_LEFT}" y="{_c(mid - 10)}" width="{plot_w}" height="20" fill="#f3f4f6"/>'
        )
        for k, (value, (name, color)) in enumerate(zip(values, parts)):
            if value is None:
                continue
            h = thickness[min(k, len(thickness) - 1)]
            out.append(
                f'<rect x="{_LEFT}" y="{_c(mid - h / 2)}" width="{_c(value * plot_w)}" '
                f'height="{h}" fill="{color}"><title>{esc(name)}: {esc(label)}, '
                f"{_num(value)}</title></rect>"
            )
        span = spans[i] if i < len(spans) else None
        if span is not None and span[1] > span[0]:
            x0, x1, yy = _LEFT + span[0] * plot_w, _LEFT + span[1] * plot_w, mid - 12
            out.append(
                f'<path d="M{_c(x0)} {_c(yy + 3)}V{_c(yy)}H{_c(x1)}V{_c(yy + 3)}" '
                f'fill="none" stroke="{SHARED}" stroke-width="1.5"><title>'
                f"{esc(span_label)}: {esc(label)}, {_num(span[1] - span[0])}</title></path>"
            )
        text = " · ".join("—" if v is None else f"{v:.2f}" for v in values)
        out.append(f'<text x="{_LEFT + plot_w + 10}" y="{_c(mid + 4)}">{text}</text>')
    return "\n".join(out + legend + ["</svg>"])


def number(value: Any) -> str:
    """Three decimals; ``—`` for a missing or non-finite figure (never ``None`` or ``nan``)."""
    if value is None or isinstance(value, bool) or not math.isfinite(value):
        return "—"
    return f"{value:.3f}"
