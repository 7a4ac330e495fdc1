"""Helpers for writing reference policies: what a family's ``shortcut_policies`` build on.

A reference policy (``ref:NAME``) is a factory taking the spec's ``key=value`` parameters as
strings and returning an answer function (see :data:`~pytest_competence.protocol.PolicyFactory`).
These helpers read the parameters (:func:`number`), draw repeatable noise (:func:`uniform`),
mark a function that needs the whole prompt (:func:`reads_prompt`), score candidates the way a
deterministic policy does (:func:`point_mass`), and answer another family's prompt as the
competent reader would (:func:`ideal_answer`). A bad parameter is a :class:`ModelSpecError`.
Importing this module imports nothing else of the package (the models' face re-exports
:class:`ModelSpecError` at start-up).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from pytest_competence.protocol import Family, Prompt

__all__ = [
    "UNREADABLE",
    "ModelSpecError",
    "ideal_answer",
    "number",
    "point_mass",
    "reads_prompt",
    "uniform",
]

#: What a policy answers to a prompt it cannot read.
UNREADABLE = "I cannot read this prompt."


class ModelSpecError(ValueError):
    """A ``--competence-model`` spec that cannot be resolved; the message says how to fix it."""


def number(key: str, value: str, lo: float, hi: float) -> float:
    """The policy parameter ``key=value`` as a number in ``[lo, hi]``, else
    :class:`ModelSpecError` naming it."""
    try:
        x = float(value)
    except ValueError:
        raise ModelSpecError(f"Expected a number for {key}, but got {key}={value!r}") from None
    if not lo <= x <= hi:
        raise ModelSpecError(f"Expected {lo:g} <= {key} <= {hi:g}, but got {key}={value}")
    return x


def uniform(seed: str, text: str) -> float:
    """A uniform number in [0, 1) fixed by ``seed`` and the prompt text: repeatable noise."""
    digest = hashlib.blake2b(f"{seed}:{text}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


_Answer = TypeVar("_Answer", bound=Callable[..., str])


def reads_prompt(answer: _Answer) -> _Answer:
    """Mark a policy's answer function as taking the whole :class:`Prompt`, not its text.

    Rule-induction policies need the prompt's design coordinates (``params``), which the text
    does not carry; a reference policy passes them the prompt itself.
    """
    answer.reads_prompt = True  # type: ignore[attr-defined]
    return answer


def point_mass(answer: object, candidates: Sequence[str]) -> dict[str, float]:
    """Scores of a deterministic policy: log-probability 0 for the candidate its answer names
    (the whole answer, or its last ``Answer: X``), ``-inf`` for every other one."""
    text = answer.strip() if isinstance(answer, str) else ""
    named = text.rpartition("Answer: ")[2].strip() if "Answer: " in text else text
    return {c: 0.0 if c == named else -math.inf for c in candidates}


def _text_prompt(text: str) -> Prompt:
    from pytest_competence.protocol import Prompt

    return Prompt(
        family="", instance_id="", presentation="", system="", text=text, gold="", answer_space=()
    )


def ideal_answer(prompt: Prompt | str) -> str:
    """The ``ideal`` policy's answer: the prompt's family reads it (``Family.ideal_answer``);
    a bare text, or a prompt of a family not registered, is offered to every family in turn.
    A family whose ``ideal_answer`` raises, rather than returning ``None`` for a prompt it
    cannot read, is a ``RuntimeError`` naming it, the prompt and the fix."""
    from pytest_competence.registry import FAMILIES  # each family imported on first lookup

    if isinstance(prompt, str):
        prompt = _text_prompt(prompt)
    names = [prompt.family] if prompt.family in FAMILIES else list(FAMILIES)
    for name in names:
        family = FAMILIES.hooks(name)
        try:
            found = family.ideal_answer(prompt)
        except Exception as exc:
            # Its traceback, so that "where it raised" is the family's code, not this line.
            raise RuntimeError(_read_failure(family, prompt, exc)).with_traceback(
                exc.__traceback__
            ) from exc
        if found is not None:
            return str(found)
    return UNREADABLE


def _read_failure(family: type[Family], prompt: Prompt, exc: Exception) -> str:
    """Why ``family.ideal_answer`` could not serve ``prompt``, in which function and the fix."""
    import traceback

    function = traceback.extract_tb(exc.__traceback__)[-1].name
    whose = (
        f"a prompt of its own family {prompt.family!r}"
        if prompt.family == family.name
        else f"a prompt of family {prompt.family!r}"
        if prompt.family
        else "a prompt's text"
    )
    text = prompt.text if len(prompt.text) <= 60 else prompt.text[:59] + "…"
    return (
        f"{family.__qualname__}.ideal_answer raised {type(exc).__name__}: {exc} in "
        f"{function}(), on {whose} ({text!r}); return "
        f"None for a prompt it cannot read, as pytest_competence.strategies.Family.ideal_answer "
        f"says"
    )
