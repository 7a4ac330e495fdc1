"""Typed ``?key=value&…`` parameters of model specs, validated with messages that name the fix.

Each backend declares a table of :class:`Param`; :func:`parse_params` reads a spec's query string
against it. Unknown keys, bad values and repeated keys are :class:`ModelSpecError`\\ s that name the
key, the value received, what was expected and the keys that exist.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from pytest_competence.policy import ModelSpecError

__all__ = ["Param", "choice", "describe", "number", "parse_params", "text", "whole"]


@dataclass(frozen=True)
class Param:
    """One spec parameter: how to read its value, and what a reader should be told it means."""

    name: str
    read: Callable[[str], Any]  # raises ValueError with "expected …" text on a bad value
    help: str
    default: Any = None
    many: bool = False  # repeatable (``stop=a&stop=b``); the value is then a tuple


def number(
    lo: float = -math.inf, hi: float = math.inf, *, above: bool = False
) -> Callable[[str], float]:
    """A float in ``[lo, hi]`` (``(lo, hi]`` with ``above=True``)."""

    def read(value: str) -> float:
        try:
            x = float(value)
        except ValueError:
            x = math.nan
        if not (x > lo if above else x >= lo) or not x <= hi or math.isnan(x):
            low = f"> {lo:g}" if above else f">= {lo:g}"
            raise ValueError(f"a number {low}" + (f" and <= {hi:g}" if hi < math.inf else ""))
        return x

    return read


def whole(lo: int = 0, hi: int | None = None) -> Callable[[str], int]:
    """An integer in ``[lo, hi]``."""

    def read(value: str) -> int:
        try:
            x = int(value)
        except ValueError:
            x = lo - 1
        if x < lo or (hi is not None and x > hi):
            raise ValueError(f"an integer >= {lo}" + (f" and <= {hi}" if hi is not None else ""))
        return x

    return read


def choice(*options: str) -> Callable[[str], str]:
    """One of ``options``."""

    def read(value: str) -> str:
        if value not in options:
            raise ValueError("one of " + ", ".join(options))
        return value

    return read


def text(value: str) -> str:
    """Any non-empty string."""
    if not value:
        raise ValueError("a non-empty value")
    return value


def parse_params(query: str, table: Sequence[Param], spec: str) -> dict[str, Any]:
    """The parameters of ``query`` read against ``table``; defaults fill what is not given.

    A parameter whose default is ``None`` and that is not given is left out, so callers can pass
    on only what the user chose (e.g. not sending ``top_p`` to a server at all).
    """
    params = {p.name: p for p in table}
    chosen: dict[str, Any] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        param = params.get(key)
        if param is None:
            from ._suggest import did_you_mean, near

            raise ModelSpecError(
                f"{spec!r}: unknown parameter {key!r}{did_you_mean(near(key, params))}; "
                f"expected one of {', '.join(sorted(params))}"
            )
        try:
            read = param.read(value)
        except ValueError as exc:
            raise ModelSpecError(
                f"{spec!r}: expected {key} to be {exc}, but got {key}={value!r}"
            ) from None
        if param.many:
            chosen[key] = (*chosen.get(key, ()), read)
        elif key in chosen:
            raise ModelSpecError(f"{spec!r}: parameter {key!r} is given twice; keep one")
        else:
            chosen[key] = read
    for param in table:
        if param.name not in chosen and param.default is not None:
            chosen[param.name] = param.default
    return chosen


def describe(table: Sequence[Param]) -> Mapping[str, str]:
    """``name → help (default …)`` for documentation and error messages."""
    return {
        p.name: p.help + (f" (default {p.default})" if p.default is not None else "") for p in table
    }
