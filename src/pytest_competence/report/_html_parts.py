"""What every part of the HTML report writes with: figures as text, tables of escaped cells,
key-value tables and the verdict badge."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_competence.drawing import esc
from pytest_competence.report._terminal import verdict

__all__ = ["LEFT_COLUMNS", "badge", "interval", "kv", "num", "p_value", "table", "as_text"]


def num(value: Any, digits: int = 3, signed: bool = False) -> str:
    if value is None or isinstance(value, bool) or not math.isfinite(value):
        return "—"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def p_value(value: Any) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:.1e}" if value < 1e-3 else f"{value:.3f}"


def interval(triple: Any, signed: bool = False) -> str:
    """``estimate [low, high]`` from an ``[estimate, low, high]`` triple."""
    if not triple or triple[0] is None:
        return "—"
    est, low, high = (num(v, signed=signed) for v in triple)
    return f"{est} [{low}, {high}]"


def as_text(value: Any) -> str:
    """Any JSON value as escaped text: numbers to three places, mappings as ``key: value``."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return num(value)
    if isinstance(value, Mapping):
        return ", ".join(f"{esc(k)}: {as_text(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(as_text(v) for v in value)
    return esc(value)


#: The most columns :func:`table` aligns left (one CSS rule each, on the table, not its cells).
LEFT_COLUMNS = 7


def table(head: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> str:
    """A table of already-escaped cells; the first ``left`` columns align left and wrap (the
    table's class ``l1`` … ``l7``: no class on each cell). Cells and rows leave out their end
    tags, which HTML makes optional (the next cell, row or ``</table>`` closes them): a tenth
    of a long report's bytes."""
    body = "".join("<tr>" + "".join(f"<td>{c}" for c in row) for row in rows)
    heads = "".join(f"<th>{c}" for c in head)
    return (
        f'<div class="wide"><table class=l{min(left, LEFT_COLUMNS)}><tr>{heads}{body}</table></div>'
    )


def kv(rows: Sequence[tuple[str, str]]) -> str:
    return '<table class="kv">' + "".join(f"<tr><td>{k}<td>{v}" for k, v in rows) + "</table>"


def badge(r: Mapping[str, Any]) -> str:
    """The terminal's verdict: pytest's outcome, or the condition itself in report-only runs."""
    text = verdict(r)
    kind = "passed" if text == "PASS" else "failed" if text.startswith("FAIL") else "other"
    return f'<span class="badge {kind}">{esc(text)}</span>'
