"""The parts every chart is drawn with: colours, escaping, number formats, the legend, the
``<svg>`` element, the shared definitions of a page (:class:`Defs`) and the series types."""

from __future__ import annotations

import math
import re
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
    "Defs",
    "Series",
    "esc",
    "level_label",
    "number",
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


class Defs:
    """Markup that the charts of one page share, each distinct piece drawn once.

    :meth:`use` files a piece (a chart's frame and legend, or a whole chart) under an id and
    returns the ``<use>`` that draws it; :meth:`html` is the hidden ``<svg>`` holding them, to
    be placed once on the page — all of them, or only those a part of the charts draws
    (:meth:`drawn`), for a page that holds only that part. Ids are ``prefix`` and a number, in
    first-use order.
    """

    def __init__(self, prefix: str = "svg-") -> None:
        self.prefix = prefix
        self._ids: dict[str, str] = {}  # piece → id
        self._pieces: dict[str, str] = {}  # id → piece

    def use(self, markup: str) -> str:
        """A ``<use>`` of ``markup``, filed on first use."""
        key = self._ids.get(markup)
        if key is None:
            key = self._ids[markup] = f"{self.prefix}{len(self._ids)}"
            self._pieces[key] = markup
        return f'<use href="#{key}"/>'

    def drawn(self, markup: str) -> set[str]:
        """The ids of the pieces ``markup`` draws, and of those they draw in turn."""
        found: set[str] = set()
        todo = _USE.findall(markup)
        while todo:
            key = todo.pop()
            if key not in found and key in self._pieces:
                found.add(key)
                todo += _USE.findall(self._pieces[key])
        return found

    def size(self, keys: set[str]) -> int:
        """The bytes (UTF-8) that :meth:`html` spends on ``keys``."""
        return sum(len(f'<g id="{k}">{self._pieces[k]}</g>'.encode()) for k in keys)

    def html(self, keys: set[str] | None = None) -> str:
        """The hidden ``<svg>`` of every piece filed, or of ``keys`` alone; empty when none."""
        shown = [k for k in self._pieces if keys is None or k in keys]
        if not shown:
            return ""
        pieces = "".join(f'<g id="{key}">{self._pieces[key]}</g>' for key in shown)
        return f'<svg class="defs" aria-hidden="true"><defs>{pieces}</defs></svg>'


_USE = re.compile(r'<use href="#([^"]+)"/>')


def _c(x: float) -> str:
    return f"{x:.0f}"  # a whole unit of a 560-wide chart: finer than the eye


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


def _chart(height: float, label: str, frame: list[str], marks: list[str], defs: Defs | None) -> str:
    """A chart's ``<svg>``: its ``frame`` (grid, ticks, axis labels, legend) under its
    ``marks`` (the data). Alone, it is whole and labelled. With a page's ``defs`` it sits
    under the page's caption: its frame is filed once per page, and its whole drawing once per
    identical chart (every ideal model's profile over the same levels is one drawing), so the
    ``<svg>`` itself is a single ``<use>``."""
    size = f'viewBox="0 0 {_WIDTH} {_c(height)}"'
    if defs is None:
        head = f'<svg class="chart" {size} role="img" aria-label="{esc(label)}">'
        return "\n".join([head, *frame, *marks, "</svg>"])
    drawing = defs.use("".join(frame)) + "".join(marks)
    return f'<svg class="chart" {size}>{defs.use(drawing)}</svg>'


def _log2_ticks(levels: Sequence[int]) -> list[int]:
    if min(levels) <= 0:  # a level 0 (e.g. no distractor rules) gets its own tick
        rest = [n for n in levels if n > 0]
        return sorted({n for n in levels if n <= 0}) + (_log2_ticks(rest) if rest else [])
    lo, hi = min(levels), max(levels)
    powers = [2**k for k in range(math.ceil(math.log2(lo)), math.floor(math.log2(hi)) + 1)]
    ticks = powers if len(powers) >= 2 else sorted(set(levels))
    step = max(1, math.ceil(len(ticks) / 12))  # keep labels from colliding on long grids
    return ticks[::step]


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


_QUARTERS = (0, 0.25, 0.5, 0.75, 1)


def number(value: Any) -> str:
    """Three decimals; ``—`` for a missing or non-finite figure (never ``None`` or ``nan``)."""
    if value is None or isinstance(value, bool) or not math.isfinite(value):
        return "—"
    return f"{value:.3f}"
