"""A violated condition shown: the failing case as data, and the failure message that shows it.

:func:`failing_case` is the first violation of a :class:`~pytest_competence.engine.conditions.Condition`
as plain data (the ``failing_case`` of a result: level, what failed, one failing instance with
its observations); :func:`failure_message` is the text a failed test prints, and
:func:`describe_case` the lines of one instance in it — every presentation's prompt, raw and
parsed answer and gold. Answers are cut as every report cuts them
(:func:`~pytest_competence.engine.records.shown`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from pytest_competence.engine.files import utf8_safe
from pytest_competence.engine.records import shown
from pytest_competence.protocol import AnswerMap, Observation

if TYPE_CHECKING:
    from pytest_competence.engine.evaluation import Evaluation
    from pytest_competence.engine.profile import LevelProfile

__all__ = [
    "ConditionLike",
    "describe_case",
    "failing_case",
    "failure_message",
    "observation_records",
]

_PROMPT_HEAD, _PROMPT_TAIL = 900, 400


class ConditionLike(Protocol):
    """What a violation is read from: a :class:`~pytest_competence.engine.conditions.Condition`."""

    def violations(self, profiles: Sequence[LevelProfile]) -> list[tuple[str, LevelProfile]]:
        """``(what failed, level)`` pairs, smallest level first."""
        ...


def _show_prompt(text: str) -> str:
    if len(text) <= _PROMPT_HEAD + _PROMPT_TAIL + 100:
        return text
    cut = len(text) - _PROMPT_HEAD - _PROMPT_TAIL
    return f"{text[:_PROMPT_HEAD]} … [{cut:,} characters elided] … {text[-_PROMPT_TAIL:]}"


def failing_case(
    condition: ConditionLike, evaluation: Evaluation, profiles: Sequence[LevelProfile]
) -> dict[str, Any] | None:
    """The first violation as plain data: level, what failed, and one failing instance."""
    violations = condition.violations(profiles)
    if not violations:
        return None
    what, first = violations[0]
    case: dict[str, Any] = {
        "condition": str(condition),
        "level": first.level,
        "what": what,
        "also_failing": sorted({p.level for _, p in violations[1:]} - {first.level}),
        "instance_id": None,
        "observations": [],
    }
    if first.failing:
        index = first.failing[0]
        case["instance_id"] = evaluation.ids[index]
        case["observations"] = observation_records(evaluation.observed(index))
    return case


def observation_records(observations: Sequence[Observation]) -> list[dict[str, Any]]:
    """One instance's observations as the plain records a failing case shows: long answers cut
    (:func:`~pytest_competence.engine.records.shown`), lone surrogates escaped (the case travels from
    xdist workers, which take UTF-8 only; the records keep the exact text)."""
    return [
        {
            "presentation": o.prompt.presentation,
            "answer_map": dict(o.prompt.answer_map.pairs),
            "prompt": o.prompt.text,
            "raw": utf8_safe(shown(o.raw)),
            "parsed": o.parsed.answer,
            "valid": o.valid,
            "reason": utf8_safe(shown(o.parsed.reason)),
            "gold": o.prompt.gold,
            "correct": o.correct,
        }
        for o in observations
    ]


def describe_case(observations: Sequence[Mapping[str, Any]], indent: str = "  ") -> str:
    """Every presentation of one instance: prompt, raw answer, parsed answer and gold."""
    lines = []
    for o in observations:
        parsed = o["parsed"] if o["valid"] else f"INVALID ({o['reason']})"
        verdict = "correct" if o["correct"] else "WRONG"
        mapping = AnswerMap(tuple(o["answer_map"].items()))
        mapped = "" if mapping.preserving else f" [answer map {mapping!r}]"
        lines.append(
            f"{indent}[{o['presentation']}]{mapped} gold={o['gold']} "
            f"parsed={parsed} raw={o['raw']!r} → {verdict}"
        )
        lines.append(f"{indent}  prompt: {_show_prompt(o['prompt'])}")
    return "\n".join(lines)


def failure_message(
    condition: ConditionLike, evaluation: Evaluation, profiles: Sequence[LevelProfile]
) -> str:
    """The message of a failed condition: the model and family, the condition, the first failing
    level (and the others), and one failing instance with every presentation."""
    case = failing_case(condition, evaluation, profiles)
    assert case is not None
    name = getattr(evaluation.family, "level_name", "n")  # what the level counts
    lines = [
        f"Competence condition failed for model {evaluation.model!r} on {evaluation.family!r}",
        f"  condition: {condition}",
        f"  first failing level: {name}={case['level']}: {case['what']}",
    ]
    if case["also_failing"]:
        lines.append(f"  also failing at {name} = {', '.join(map(str, case['also_failing']))}")
    if case["instance_id"] is not None:
        lines.append(f"  failing instance {case['instance_id']}:")
        lines.append(describe_case(case["observations"], indent="    "))
    return "\n".join(lines)
