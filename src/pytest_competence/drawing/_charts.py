"""The charts: series against the levels (:func:`level_chart`), stacked bars per level
(:func:`stacked_bars`) and nested bullet rows (:func:`bullet_chart`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from ._parts import (
    _BOTTOM,
    _GRID,
    _LEFT,
    _MUTED,
    _QUARTERS,
    _RIGHT,
    _WIDTH,
    SHARED,
    Band,
    Defs,
    Series,
    _c,
    _chart,
    _legend,
    _log2_ticks,
    _num,
    _runs,
    _Scale,
    esc,
    level_label,
)

__all__ = ["bullet_chart", "level_chart", "stacked_bars"]


class _Plot(NamedTuple):
    """Where a level chart's plot area sits: its top, width and height, and the chart's height."""

    top: int
    width: int
    height: int
    chart_height: int

    @property
    def bottom(self) -> int:
        return self.top + self.height


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
    defs: Defs | None = None,
) -> str:
    """Series against n on a log₂ x-axis, with shaded bands and dotted horizontal ``rules``.

    A rule is ``(value, label, side)``, its label at the ``"left"`` or ``"right"`` end.
    ``log_x`` false draws a linear axis of whole numbers instead (layers, say); ``x_name``
    names the axis and the series' tooltips. With ``defs``, the frame and the legend are
    drawn once for every chart of the page that shares them.
    """
    legend, top = _legend([(s.label, s.color, "dash" if s.dash else "line") for s in series])
    top += 6
    height = max(height, top + _BOTTOM + 160)  # a long legend pushes the plot down, never into it
    plot = _Plot(top, _WIDTH - _LEFT - _RIGHT, height - top - _BOTTOM, height)
    shown = sorted(set(levels)) or [4, 16]
    x, y = _level_scales(shown, log_x, y_range, plot)
    if log_x:
        ticks = _log2_ticks(shown)
    else:  # every whole number, thinned to about a dozen labels
        ticks = list(range(shown[0], shown[-1] + 1, max(1, math.ceil(len(shown) / 12))))
    frame = _level_frame(plot, x, y, ticks, y_ticks)
    frame.append(
        f'<text x="{_LEFT + plot.width / 2:.1f}" y="{height - 6}" text-anchor="middle" '
        f'class="axis">{esc(x_name)}{" (log₂ scale)" if log_x else ""}</text>'
    )
    frame.append(
        f'<text transform="translate(13 {top + plot.height / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle" class="axis">{esc(y_label)}</text>'
    )
    out = _rules(plot, y, y_range, rules)
    for s in series:
        if s.band is not None:
            out += _band(s.band, x, y)
    for s in sorted(series, key=lambda s: -s.width):  # thin lines stay visible over thick ones
        out += _line(s, x, y)
    if note:
        out.append(
            f'<text x="{_LEFT + plot.width / 2:.1f}" y="{top + plot.height / 2:.1f}" '
            f'text-anchor="middle" class="note">{esc(note)}</text>'
        )
    return _chart(height, title, frame + legend, out, defs)


def _level_scales(
    shown: Sequence[int], log_x: bool, y_range: tuple[float, float], plot: _Plot
) -> tuple[_Scale, _Scale]:
    """The x scale (log₂ of the levels, or linear) and the y scale, in pixels."""
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
        return _LEFT + (log2(n) - lo) / (hi - lo) * plot.width

    def y(v: float) -> float:  # 6 px of headroom keeps a line at y1 off the frame
        return plot.top + 6 + (y1 - min(max(v, y0), y1)) / (y1 - y0) * (plot.height - 12)

    return x, y


def _level_frame(
    plot: _Plot, x: _Scale, y: _Scale, ticks: Sequence[int], y_ticks: Sequence[float]
) -> list[str]:
    """The grid, the tick labels of both axes and the plot's border."""
    top, bottom = plot.top, plot.bottom
    grid = "".join(f"M{_LEFT} {_c(y(t))}H{_LEFT + plot.width}" for t in y_ticks) + "".join(
        f"M{_c(x(n))} {top}V{_c(bottom + 5)}" for n in ticks
    )
    frame = [f'<path d="{grid}" stroke="{_GRID}" fill="none"/>']
    frame += [
        f'<text x="{_LEFT - 6}" y="{_c(y(t) + 4)}" text-anchor="end">{t:g}</text>' for t in y_ticks
    ]
    frame += [
        f'<text x="{_c(x(n))}" y="{_c(bottom + 18)}" text-anchor="middle">'
        f"{esc(level_label(n))}</text>"
        for n in ticks
    ]
    frame.append(
        f'<rect x="{_LEFT}" y="{top}" width="{plot.width}" height="{plot.height}" fill="none" '
        f'stroke="{_MUTED}"/>'
    )
    return frame


def _rules(
    plot: _Plot, y: _Scale, y_range: tuple[float, float], rules: Sequence[tuple[float, str, str]]
) -> list[str]:
    """The dotted horizontal rules inside the y range, each labelled at its end."""
    out: list[str] = []
    for value, label, side in rules:
        if y_range[0] <= value <= y_range[1]:
            out.append(
                f'<path d="M{_LEFT} {_c(y(value))}H{_LEFT + plot.width}" stroke="{_MUTED}" '
                f'stroke-dasharray="2 3"/>'
            )
            at, anchor = (_LEFT + 4, "start") if side == "left" else (_LEFT + plot.width - 4, "end")
            out.append(
                f'<text x="{at}" y="{_c(y(value) - 4)}" text-anchor="{anchor}" '
                f'class="rule">{esc(label)}</text>'
            )
    return out


def _band(band: Band, x: _Scale, y: _Scale) -> list[str]:
    out = []
    for run in _runs(band.points):
        if len(run) == 1:  # a lone interval: an error bar rather than an area
            n, low, high = run[0]
            out.append(
                f'<path d="M{_c(x(n))} {_c(y(low))}V{_c(y(high))}" stroke="{band.color}" '
                f'stroke-width="8" opacity="0.35"/>'
            )
            continue
        edge = [(x(n), y(high)) for n, _, high in run] + [(x(n), y(low)) for n, low, _ in run[::-1]]
        coords = " ".join(f"{_c(a)},{_c(b)}" for a, b in edge)
        out.append(f'<polygon points="{coords}" fill="{band.color}" opacity="0.22"/>')
    return out


def _line(s: Series, x: _Scale, y: _Scale) -> list[str]:
    """One group per series: its line, one run per defined stretch, and a path of dots (a
    round cap on a zero-length segment per point)."""
    runs = _runs(s.points)
    if not runs:
        return []
    dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
    lines = "".join(
        f'<polyline points="{" ".join(f"{_c(x(n))},{_c(y(v))}" for n, v in run)}" '
        f'stroke-width="{s.width:g}"{dash}/>'
        for run in runs
        if len(run) > 1
    )
    dots = "".join(f"M{_c(x(n))} {_c(y(v))}h0" for run in runs for n, v in run)
    return [f'<g stroke="{s.color}" class="series">{lines}<path class="dots" d="{dots}"/></g>']


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
    defs: Defs | None = None,
) -> str:
    """One bar per level stacking ``parts`` (label, colour) from the bottom; ``None``: no bar.
    ``x_name`` names the levels (the axis and the parts' tooltips); with ``defs``, the frame,
    the level labels and the legend are drawn once for every chart that shares them."""
    legend, top = _legend([(label, color, "box") for label, color in parts])
    top += 6
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, height - top - _BOTTOM
    slot = plot_w / max(len(levels), 1)
    bar = min(56.0, slot * 0.7)
    grid = "".join(f"M{_LEFT} {_c(top + (1 - t) * plot_h)}H{_LEFT + plot_w}" for t in _QUARTERS)
    frame = [f'<path d="{grid}" stroke="{_GRID}" fill="none"/>']
    frame += [
        f'<text x="{_LEFT - 6}" y="{_c(top + (1 - t) * plot_h + 4)}" text-anchor="end">{t:g}</text>'
        for t in _QUARTERS
    ]
    frame += [
        f'<text x="{_c(_LEFT + slot * (i + 0.5))}" y="{top + plot_h + 16}" '
        f'text-anchor="middle">{esc(level_label(n))}</text>'
        for i, n in enumerate(levels)
    ]
    frame.append(
        f'<path d="M{_LEFT} {top + plot_h}H{_LEFT + plot_w}" stroke="{_MUTED}"/><text '
        f'x="{_LEFT + plot_w / 2:.1f}" y="{height - 2}" text-anchor="middle" class="axis">'
        f"{esc(x_name)}</text>"
    )
    out: list[str] = []
    paths: list[list[str]] = [[] for _ in parts]
    for i, stack in enumerate(stacks[: len(levels)]):
        cx = _LEFT + slot * (i + 0.5)
        if i < len(notes) and notes[i]:
            out.append(
                f'<text x="{_c(cx)}" y="{top + plot_h + 29}" text-anchor="middle" '
                f'class="small">{esc(notes[i])}</text>'
            )
        if any(v is None for v in stack):
            out.append(
                f'<text x="{_c(cx)}" y="{top + plot_h - 8}" text-anchor="middle" '
                f'class="note">—</text>'
            )
            continue
        base: float = top + plot_h
        for k, value in enumerate(stack[: len(parts)]):
            assert value is not None
            h = value * plot_h
            base -= h
            paths[k].append(f"M{_c(cx - bar / 2)} {_c(base)}h{_c(bar)}v{_c(h)}h{_c(-bar)}z")
    out += [f'<path d="{"".join(d)}" fill="{color}"/>' for d, (_, color) in zip(paths, parts) if d]
    if note:
        out.append(
            f'<text x="{_LEFT + plot_w / 2:.1f}" y="{top + plot_h / 2:.1f}" '
            f'text-anchor="middle" class="note">{esc(note)}</text>'
        )
    return _chart(height, title, frame + legend, out, defs)


def bullet_chart(
    title: str,
    rows: Sequence[tuple[str, Sequence[float | None]]],
    parts: Sequence[tuple[str, str]],
    *,
    spans: Sequence[tuple[float, float] | None] = (),
    span_label: str = "gap",
    defs: Defs | None = None,
) -> str:
    """Nested bars per row, widest first (systematicity paper, arXiv:2609.13948, Fig. 4): each part a narrower, darker bar.

    ``spans[i] = (low, high)`` marks an interval on row ``i`` with a bracket above its bars
    (the systematicity gap between solve-all and solve-any), labelled ``span_label``. With
    ``defs``, the frame, the row labels and the legend are drawn once for every chart that
    shares them.
    """
    legend, top = _legend([(label, color, "box") for label, color in parts])
    top, row_h, value_w = top + 6, 30, 150
    plot_w = _WIDTH - _LEFT - _RIGHT - value_w
    height = top + row_h * max(len(rows), 1) + 30
    end = top + row_h * len(rows)
    grid = "".join(f"M{_c(_LEFT + t * plot_w)} {top}V{end}" for t in _QUARTERS)
    frame = [f'<path d="{grid}" stroke="{_GRID}" fill="none"/>']
    frame += [
        f'<text x="{_c(_LEFT + t * plot_w)}" y="{end + 16}" text-anchor="middle">{t:g}</text>'
        for t in _QUARTERS
    ]
    backs = "".join(
        f"M{_LEFT} {_c(top + row_h * (i + 0.5) - 10)}h{plot_w}v20h-{plot_w}z"
        for i in range(len(rows))
    )
    frame += [f'<path d="{backs}" fill="#f3f4f6"/>'] if rows else []
    frame += [
        f'<text x="{_LEFT - 6}" y="{_c(top + row_h * (i + 0.5) + 4)}" text-anchor="end">'
        f"{esc(label)}</text>"
        for i, (label, _) in enumerate(rows)
    ]
    out: list[str] = []  # drawn over the bars: the brackets, the values
    thickness = [20, 12, 5]
    paths: list[list[str]] = [[] for _ in parts]
    for i, (label, row) in enumerate(rows):
        mid = top + row_h * (i + 0.5)
        for k, value in enumerate(row[: len(parts)]):
            if value is None:
                continue
            h = thickness[min(k, len(thickness) - 1)]
            paths[k].append(
                f"M{_LEFT} {_c(mid - h / 2)}h{_c(value * plot_w)}v{h}h{_c(-value * plot_w)}z"
            )
        span = spans[i] if i < len(spans) else None
        if span is not None and span[1] > span[0]:
            x0, x1, yy = _LEFT + span[0] * plot_w, _LEFT + span[1] * plot_w, mid - 12
            out.append(
                f'<path d="M{_c(x0)} {_c(yy + 3)}V{_c(yy)}H{_c(x1)}V{_c(yy + 3)}" '
                f'fill="none" stroke="{SHARED}" stroke-width="1.5"><title>'
                f"{esc(span_label)}: {esc(label)}, {_num(span[1] - span[0])}</title></path>"
            )
        text = " · ".join("—" if v is None else f"{v:.2f}" for v in row)
        out.append(f'<text x="{_LEFT + plot_w + 10}" y="{_c(mid + 4)}">{text}</text>')
    bars = [f'<path d="{"".join(d)}" fill="{color}"/>' for d, (_, color) in zip(paths, parts) if d]
    return _chart(height, title, frame + legend, bars + out, defs)
