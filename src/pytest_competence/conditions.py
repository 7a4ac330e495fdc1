"""What must hold: the strict competence condition, or thresholds on the profile for gating.

``"strict"`` is seeds/000 §3.1 eq. (1): every presentation of every instance correct, at every level.
A threshold reads ``"METRIC OP VALUE"`` with an optional scope ``"for n OP VALUE"``, e.g.
``"robust_correct >= 0.95 for n <= 128"``; it must hold at *each* level in scope. How a violation
is shown — the failing case, the failure message — is :mod:`pytest_competence._failure`'s.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_competence.profile import METRICS, SUMMARY_METRICS, LevelProfile, kappa_bar
from pytest_competence.protocol import InvalidArgument

if TYPE_CHECKING:
    from pytest_competence.evaluation import Evaluation

__all__ = ["CompetenceFailure", "Condition", "Threshold", "parse_condition"]

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "==": operator.eq,
}
_THRESHOLD = re.compile(
    r"^\s*(?P<metric>[a-z_]+)\s*(?P<op>>=|<=|==|>|<)\s*(?P<value>[0-9]*\.?[0-9]+)\s*"
    r"(?:for\s+n\s*(?P<scope_op>>=|<=|==|>|<)\s*(?P<scope>[0-9]+))?\s*$"
)


class CompetenceFailure(AssertionError):
    """A competence condition did not hold; the message carries the level and a failing case."""


@dataclass(frozen=True)
class Threshold:
    """``metric op value`` at each level whose ``n`` satisfies the optional scope."""

    metric: str
    op: str
    value: float
    scope_op: str | None = None
    scope: int | None = None

    def __str__(self) -> str:
        scope = f" for n {self.scope_op} {self.scope}" if self.scope_op else ""
        return f"{self.metric} {self.op} {self.value:g}{scope}"

    @property
    def summary(self) -> bool:
        """Whether the figure belongs to the whole grid (κ̄) rather than to each level."""
        return self.metric in SUMMARY_METRICS

    def applies(self, level: int) -> bool:
        """Whether the threshold holds at ``level``: inside its ``for n`` scope, if any."""
        if self.scope_op is None or self.scope is None:
            return True
        return _OPS[self.scope_op](level, self.scope)

    def holds(self, p: LevelProfile) -> bool:
        """Whether one level's profile meets the threshold."""
        value = p.metric(self.metric)
        return value is not None and _OPS[self.op](value, self.value)


@dataclass(frozen=True)
class Condition:
    """The strict condition, thresholds (:class:`Threshold`), or both: all must hold."""

    thresholds: tuple[Threshold, ...] = ()
    strict: bool = True

    def __str__(self) -> str:
        parts = (
            ["strict: C_0 = … = C_K = 1 on every instance at every level"] if self.strict else []
        )
        return " and ".join(parts + [str(t) for t in self.thresholds])

    @property
    def declared(self) -> str | list[str]:
        """The condition as ``require=`` would declare it (:func:`parse_condition` reads it)."""
        if not self.thresholds:
            return "strict" if self.strict else []
        return ["strict"] * self.strict + [str(t) for t in self.thresholds]

    def with_gates(self, gates: Sequence[str]) -> Condition:
        """This condition and extra gates (archives written before ``competence_require``
        replaced the default condition kept them apart)."""
        extra = tuple(_threshold(g) for g in gates if g.strip())
        return Condition(self.thresholds + extra, self.strict) if extra else self

    def violations(self, profiles: Sequence[LevelProfile]) -> list[tuple[str, LevelProfile]]:
        """``(what failed, level)`` pairs, smallest level first."""
        out = []
        for p in profiles:
            if self.strict and p.failing:
                out.append(
                    (
                        f"{len(p.failing)} of {p.instances} instances fail "
                        f"(all-correct {p.all_correct:.1%})",
                        p,
                    )
                )
            for t in self.thresholds:
                if t.summary:
                    continue
                if t.applies(p.level) and not t.holds(p):
                    value = p.metric(t.metric)
                    shown = "undefined" if value is None else f"{value:.4f}"
                    out.append((f"{t.metric} = {shown}, required {t.op} {t.value:g}", p))
        out.sort(key=lambda v: v[1].level)
        for t in self.thresholds:
            if t.summary and profiles:
                value = kappa_bar(list(profiles))
                if value is None or not _OPS[t.op](value, t.value):
                    shown = "undefined" if value is None else f"{value:.4f}"
                    # Reported at the level with the lowest κ_n: where the grid is weakest.
                    worst = min(profiles, key=lambda p: (p.kappa is None, p.kappa or 0.0))
                    out.append(
                        (f"{t.metric} = {shown} over the grid, required {t.op} {t.value:g}", worst)
                    )
        return out

    def check(self, evaluation: Evaluation, profiles: Sequence[LevelProfile]) -> None:
        """Raise :class:`CompetenceFailure` with a readable report if the condition fails."""
        __tracebackhide__ = True
        if self.violations(profiles):
            from pytest_competence._failure import failure_message

            raise CompetenceFailure(failure_message(self, evaluation, profiles))


def parse_condition(require: object) -> Condition:
    """Read the ``require=`` marker argument: ``"strict"``, one threshold string, or a list."""
    if require == "strict":
        return Condition()
    items = [require] if isinstance(require, str) else require
    if isinstance(items, (list, tuple)) and items and all(isinstance(r, str) for r in items):
        strict = "strict" in items
        return Condition(tuple(_threshold(r) for r in items if r != "strict"), strict)
    raise InvalidArgument(
        f"Expected require='strict' or threshold strings such as "
        f"'robust_correct >= 0.95 for n <= 128', but got require={require!r}"
    )


def _threshold(text: str) -> Threshold:
    m = _THRESHOLD.match(text)
    if not m:
        raise InvalidArgument(
            f"Cannot read require={text!r}; write 'METRIC OP VALUE' with an optional "
            f"'for n OP SIZE', e.g. 'robust_correct >= 0.95 for n <= 128'"
        )
    if m["metric"] not in METRICS and m["metric"] not in SUMMARY_METRICS:
        raise InvalidArgument(
            f"Unknown metric {m['metric']!r} in require={text!r}; expected one of "
            f"{', '.join([*METRICS, *SUMMARY_METRICS])}"
        )
    if m["metric"] in SUMMARY_METRICS and m["scope"]:
        raise InvalidArgument(
            f"{m['metric']} is a figure of the whole grid; drop the 'for n ...' scope in "
            f"require={text!r}, or require kappa per level instead"
        )
    scope = int(m["scope"]) if m["scope"] else None
    return Threshold(m["metric"], m["op"], float(m["value"]), m["scope_op"], scope)
