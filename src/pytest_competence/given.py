"""The competence condition inside plain Hypothesis tests.

::

    from hypothesis import given
    from pytest_competence.given import assert_competent
    from pytest_competence.strategies import Ordering

    family = Ordering(vocabulary="left_right")

    @given(case=family.strategies.cases(max_n=32))
    def test_left_right(competence_model, case):
        assert_competent(competence_model, case)

:func:`assert_competent` asks every presentation of one instance in one batched model call and
raises :class:`~pytest_competence.engine.conditions.CompetenceFailure` naming the case, every prompt,
raw and parsed answer and gold. Answers are remembered per model for the session, so
Hypothesis's shrinker never sends a prompt twice and its final replay of the minimal example sees
the answers that failed; on that final replay the case is asked once more with fresh attempts,
and a failure that does not come back is said to be non-reproducing, in plain words.

The test takes ``competence_model``: the plugin runs it once per ``--competence-model`` and gives
it settings that make sense when every example costs a model call (:func:`model_backed_settings`).
``@settings``, ``@example`` and ``target()`` work as in any Hypothesis test.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_competence.engine.conditions import CompetenceFailure
from pytest_competence.engine.failure import describe_case, observation_records
from pytest_competence.minimise import Asker, Budget, Memo, verdicts
from pytest_competence.models import Model
from pytest_competence.protocol import InvalidArgument, Observation, Prompt, default_presentations

__all__ = ["assert_competent", "model_backed_settings"]

_MEMO_LIMIT = 50_000  # remembered answers per model before the memo starts afresh


@dataclass
class _Remembered:
    answers: Memo = field(default_factory=dict)
    fresh: int = 0


_REMEMBERED: weakref.WeakKeyDictionary[Any, _Remembered] = weakref.WeakKeyDictionary()


def _remembered(model: Model) -> _Remembered:
    try:
        found = _REMEMBERED.get(model)
        if found is None or len(found.answers) > _MEMO_LIMIT:
            found = _REMEMBERED[model] = _Remembered()
        return found
    except TypeError:  # a model that cannot be weakly referenced: remember for this call only
        return _Remembered()


def _prompts(
    case: Any, family: Any, presentations: Sequence[str] | None
) -> tuple[tuple[Prompt, ...], Any, str]:
    space = getattr(case, "space", None)
    if space is not None and callable(getattr(case, "prompts", None)):
        if family is not None or presentations is not None:
            raise InvalidArgument(
                "A case drawn from family.strategies.cases() carries its family and "
                "presentations; pass the case alone: assert_competent(model, case)"
            )
        return case.prompts(), space.family_of(case), space.summary(case)
    if family is None or not callable(getattr(family, "prompt", None)):
        raise InvalidArgument(
            f"Expected a case drawn from family.strategies.cases(), or an instance together "
            f"with its family (assert_competent(model, z, family=family)), but got "
            f"case={case!r} and family={family!r}"
        )
    names = default_presentations(family) if presentations is None else tuple(presentations)
    prompts = tuple(family.prompt(case, p) for p in names)
    return prompts, family, f"instance {prompts[0].instance_id}"


def _final_replay() -> bool:
    """Whether Hypothesis is replaying the example it will report."""
    from hypothesis.control import current_build_context, currently_in_test_context

    return currently_in_test_context() and bool(getattr(current_build_context(), "is_final", False))


def assert_competent(
    model: Model,
    case: Any,
    *,
    family: Any = None,
    presentations: Sequence[str] | None = None,
    attempts: int = 1,
) -> tuple[Observation, ...]:
    """Assert ``C_0 = … = C_K = 1`` on one instance: every presentation answered right.

    Args:
        model: what answers (the ``competence_model`` fixture, or any :class:`~.models.Model`).
        case: a case from ``family.strategies.cases()``, or an instance from
            ``family.strategies.instances()`` together with ``family=``.
        presentations: for an instance, the presentations to ask (default original and
            equivalent); a case carries its own.
        attempts: sends per prompt; with N > 1 each answer is the strict majority of N.

    Returns the observations (e.g. for ``target()``); raises
    :class:`~pytest_competence.engine.conditions.CompetenceFailure` when a presentation is wrong.
    """
    __tracebackhide__ = True
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise InvalidArgument(
            f"Expected attempts to be a positive integer, but got attempts={attempts!r}"
        )
    prompts, fam, label = _prompts(case, family, presentations)
    remembered = _remembered(model)
    asker = Asker(model, fam, attempts=attempts, budget=Budget.unlimited(), memo=remembered.answers)
    got = asker.ask([prompts])
    assert got is not None  # an unlimited budget never refuses
    observations = got[0]
    if all(o.correct for o in observations):
        return observations
    lines = [
        f"Competence condition failed for model {model.name!r} on {fam!r}: {label}",
        describe_case(observation_records(observations), indent="  "),
    ]
    if _final_replay():
        remembered.fresh += attempts
        again = asker.ask([prompts], fresh=remembered.fresh)[0]  # type: ignore[index]
        sends = f"{attempts} fresh sends per prompt, majority-voted" if attempts > 1 else "afresh"
        if verdicts(again) == verdicts(observations):
            lines.append(f"Asked again ({sends}), it fails the same way.")
        else:
            shown = ", ".join(
                f"[{o.prompt.presentation}] {'right' if o.correct else 'wrong'}" for o in again
            )
            lines.append(
                f"The failure did not reproduce: asked again ({sends}) the model answered "
                f"differently ({shown}). Its answers change from one send to the next; pass "
                f"attempts=5 to count a presentation wrong only by a strict majority of 5 sends."
            )
    raise CompetenceFailure("\n".join(lines))


def model_backed_settings(current: Any, *, model_fixture_only: bool) -> Any:
    """``current`` Hypothesis settings, with defaults for tests whose examples call a model.

    Only values still at Hypothesis's built-in defaults change: the 200 ms ``deadline`` becomes
    none; the explain phase, which runs extra examples (model calls) to comment the report, is
    dropped; and the ``too_slow`` health check — and ``function_scoped_fixture`` when the model is
    the only function-scoped fixture the test takes — join the suppressed ones.
    """
    from hypothesis import HealthCheck, Phase, settings

    builtin = settings.get_profile("default")
    changes: dict[str, Any] = {}
    if current.deadline == builtin.deadline:
        changes["deadline"] = None
    if tuple(current.phases) == tuple(builtin.phases):
        changes["phases"] = tuple(p for p in builtin.phases if p is not Phase.explain)
    wanted = {HealthCheck.too_slow}
    if model_fixture_only:
        wanted.add(HealthCheck.function_scoped_fixture)
    suppressed = set(current.suppress_health_check)
    if not wanted <= suppressed:
        changes["suppress_health_check"] = [h for h in HealthCheck if h in suppressed | wanted]
    return settings(current, **changes) if changes else current
