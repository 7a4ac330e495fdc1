"""What must hold: the strict competence condition, or thresholds on the profile for gating.

``"strict"`` is the CBE paper, arXiv:2610.22894, §3.1 eq. (1): every presentation of every instance correct, at every level.
A threshold reads ``"METRIC OP VALUE"`` with an optional confidence ``"at C%"`` and an optional
scope ``"for n OP VALUE"``, e.g. ``"robust_correct >= 0.95 for n <= 128"``; it must hold at
*each* level in scope. With a confidence, ``"robust_correct >= 0.95 at 95%"`` holds only where the
one-sided Wilson bound of the figure at that confidence is at least 0.95 (the lower bound for
``>=``/``>``, the upper for ``<=``/``<``; :func:`~pytest_competence.stats.wilson_lower_bound`).
The bound is of the level's count: R, D, U and ι on the jointly parsed instances, all-correct on
all of them; for ``accuracy`` (a mean over presentations) the mean of each presentation's bound,
and for ``coverage`` (the lowest over presentations) the lowest bound. The mean of the bounds is
conservative: the spread of a mean is at most the mean of the spreads. κ is not a proportion and
takes no confidence. :meth:`Condition.bounds` reports every such bound, and the exact
Clopper–Pearson bound on the failure rate behind a strict pass. How a violation is shown — the
failing case, the failure message — is :mod:`pytest_competence.engine.failure`'s.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_competence import stats
from pytest_competence.engine.profile import METRICS, SUMMARY_METRICS, LevelProfile, kappa_bar
from pytest_competence.protocol import InvalidArgument

if TYPE_CHECKING:
    from pytest_competence.engine.evaluation import Evaluation

__all__ = [
    "BOUNDED_METRICS",
    "PASS_CONFIDENCE",
    "CompetenceFailure",
    "Condition",
    "Threshold",
    "parse_condition",
]

#: The figures a threshold may state with a confidence (``at 95%``): proportions of counts.
BOUNDED_METRICS = (
    "robust_correct",
    "shared_wrong",
    "presentation_dependent",
    "invariance",
    "accuracy",
    "coverage",
    "all_correct",
)
#: The one-sided confidence of the failure-rate bound behind a strict pass.
PASS_CONFIDENCE = 0.95

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "==": operator.eq,
}
_AT = r"(?:at\s+(?P<{name}>[0-9]*\.?[0-9]+)\s*%\s*)?"
_THRESHOLD = re.compile(
    r"^\s*(?P<metric>[a-z_]+)\s*(?P<op>>=|<=|==|>|<)\s*(?P<value>[0-9]*\.?[0-9]+)\s*"
    + _AT.format(name="confidence")
    + r"(?:for\s+n\s*(?P<scope_op>>=|<=|==|>|<)\s*(?P<scope>[0-9]+)\s*)?"
    + _AT.format(name="confidence_after")
    + r"$"
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
    confidence: float | None = None  # ``at 95%``: 0.95; the threshold applies to the bound

    def __str__(self) -> str:
        scope = f" for n {self.scope_op} {self.scope}" if self.scope_op else ""
        at = f" at {100 * self.confidence:g}%" if self.confidence is not None else ""
        return f"{self.metric} {self.op} {self.value:g}{at}{scope}"

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
        """Whether one level's profile meets the threshold (its bound, with a confidence)."""
        value = p.metric(self.metric) if self.confidence is None else self.bound(p)
        return value is not None and _OPS[self.op](value, self.value)

    def bound(self, p: LevelProfile) -> float | None:
        """The one-sided Wilson bound of the figure at :attr:`confidence` (the lower for
        ``>=``/``>``, the upper for ``<=``/``<``); ``None`` with nothing counted."""
        if self.confidence is None:
            raise ValueError(f"{self} states no confidence, so it has no bound")
        confidence, lower = self.confidence, self.op in (">=", ">")

        def one(successes: int, total: int) -> float | None:
            if total == 0:
                return None
            if lower:
                return stats.wilson_lower_bound(successes, total, confidence=confidence)
            return 1.0 - stats.wilson_lower_bound(total - successes, total, confidence=confidence)

        if self.metric in ("accuracy", "coverage"):
            rates = (
                p.accuracy_by_presentation
                if self.metric == "accuracy"
                else p.coverage_by_presentation
            )
            found = [one(round(r * p.instances), p.instances) for r in rates.values()]
            if not found or any(b is None for b in found):
                return None
            known = [b for b in found if b is not None]
            return sum(known) / len(known) if self.metric == "accuracy" else min(known)
        if self.metric == "all_correct":
            return one(p.instances - len(p.failing), p.instances)
        share = p.metric(self.metric)
        return None if share is None else one(round(share * p.joint), p.joint)


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
                    if t.confidence is not None:
                        bound = t.bound(p)
                        side = "lower" if t.op in (">=", ">") else "upper"
                        shown += f", its one-sided {100 * t.confidence:g}% {side} bound " + (
                            "undefined" if bound is None else f"{bound:.4f}"
                        )
                    at = "" if t.confidence is None else f" at {100 * t.confidence:g}%"
                    out.append((f"{t.metric} = {shown}, required {t.op} {t.value:g}{at}", p))
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

    def bounds(self, profiles: Sequence[LevelProfile]) -> dict[str, Any]:
        """The bounds behind the verdict, as the result's ``bounds``.

        ``strict``: the exact one-sided Clopper–Pearson upper bound at :data:`PASS_CONFIDENCE`
        on the per-instance failure rate (an instance fails when any presentation is wrong)
        over every level (:func:`~pytest_competence.stats.failure_rate_upper_bound`): "C = 1 on
        800 instances: failure rate ≤ 0.37% at 95%". ``thresholds``: per threshold stated with
        a confidence, each level in scope with its figure and bound, and whether it holds.
        """
        instances = sum(p.instances for p in profiles)
        failures = sum(len(p.failing) for p in profiles)
        out: dict[str, Any] = {
            "strict": None
            if instances == 0
            else {
                "instances": instances,
                "failures": failures,
                "confidence": PASS_CONFIDENCE,
                "upper": stats.failure_rate_upper_bound(
                    failures, instances, confidence=PASS_CONFIDENCE
                ),
            },
            "thresholds": [],
        }
        for t in self.thresholds:
            if t.confidence is None:
                continue
            levels = [
                {
                    "n": p.level,
                    "value": p.metric(t.metric),
                    "bound": t.bound(p),
                    "holds": t.holds(p),
                }
                for p in profiles
                if t.applies(p.level)
            ]
            out["thresholds"].append(
                {
                    "threshold": str(t),
                    "confidence": t.confidence,
                    "side": "lower" if t.op in (">=", ">") else "upper",
                    "levels": levels,
                    "holds": all(level["holds"] for level in levels),
                }
            )
        return out

    def check(self, evaluation: Evaluation, profiles: Sequence[LevelProfile]) -> None:
        """Raise :class:`CompetenceFailure` with a readable report if the condition fails."""
        __tracebackhide__ = True
        if self.violations(profiles):
            from pytest_competence.engine.failure import failure_message

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
        if re.search(r"\bat\b", text):
            raise InvalidArgument(
                f"Cannot read the confidence in require={text!r}; write it as a percentage "
                f"after the value, e.g. 'robust_correct >= 0.95 at 95%' or "
                f"'robust_correct >= 0.95 at 95% for n <= 128'"
            )
        raise InvalidArgument(
            f"Cannot read require={text!r}; write 'METRIC OP VALUE' with an optional "
            f"'at C%' and 'for n OP SIZE', e.g. 'robust_correct >= 0.95 for n <= 128'"
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
    return Threshold(
        m["metric"], m["op"], float(m["value"]), m["scope_op"], scope, _confidence(m, text)
    )


def _confidence(m: re.Match[str], text: str) -> float | None:
    """The threshold's ``at C%`` as a fraction, checked; ``None`` when it states none."""
    if m["confidence"] and m["confidence_after"]:
        raise InvalidArgument(f"require={text!r} states its confidence twice; keep one 'at C%'")
    percent = m["confidence"] or m["confidence_after"]
    if percent is None:
        return None
    if m["metric"] not in BOUNDED_METRICS:
        raise InvalidArgument(
            f"{m['metric']} is not a proportion of counted instances, so it has no confidence "
            f"bound; drop 'at {percent}%' in require={text!r} (bounded figures: "
            f"{', '.join(BOUNDED_METRICS)})"
        )
    if m["op"] == "==":
        raise InvalidArgument(
            f"require={text!r}: a bound can show a figure above or below a value, never equal "
            f"to it; use >= or <= with 'at {percent}%'"
        )
    confidence = float(percent) / 100
    if not 0.5 < confidence < 1:
        raise InvalidArgument(
            f"require={text!r}: the confidence must lie between 50% and 100% (one-sided), "
            f"got {percent}%; e.g. 'at 95%'"
        )
    return confidence
