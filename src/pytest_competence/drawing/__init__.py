"""Drawing a report's figures and tables: the standard library only, deterministic output.

The chart helpers a family's :meth:`~pytest_competence.protocol.Family.figures` and the HTML
report draw with — :func:`level_chart` (series against n on a log₂ axis), :func:`stacked_bars`
and :func:`bullet_chart` — and :func:`number`, the way every report writes a figure. Each chart is
one ``<svg>`` element sized by its ``viewBox`` so the page can scale it. Every string that reaches
the markup — labels, tooltips, notes — passes through :func:`esc`, since labels carry
presentation names; coordinates are printed with one decimal, so the same figures always give
the same bytes.

A page of many charts passes one :class:`Defs`: what charts of one kind share — the frame, the
grid, the ticks, the axis labels, the legend — is then drawn once, in the page's ``Defs.html()``,
and each chart refers to it (``<use>``), drawing only its own data: one line and one path of
dots per series, one path per stacked part, each with a ``<title>`` listing its values.
"""

from __future__ import annotations

from ._charts import bullet_chart, level_chart, stacked_bars
from ._parts import (
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
    esc,
    level_label,
    number,
)

__all__ = [
    "BULLET",
    "DEPENDENT",
    "Defs",
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
