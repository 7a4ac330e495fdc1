"""Reference policies for the rule-induction families (systematicity paper, arXiv:2609.13948, §4): they read the whole prompt.

A rule-induction prompt's rule cannot be recovered from its text by a generic reader, so these
policies regenerate the latent task the prompt showed from its design coordinates
(``params``: ``n``, ``index``, ``seed``, presentation and the family's options) with
:meth:`~pytest_competence.strategies._induction.RuleInduction.shown`, and answer with its
interpreter's answers. That makes them references for the *engine* (metrics, reports, gates),
not evidence that the generators are right: each family's generator is checked separately by an
independent solver that reads the rendered text (``tests/<family>_solver.py``).

=====================  ==================================================================
``ideal``              (shared) on rule-induction prompts, the oracle below.
``oracle``             the interpreter's answers to the task the prompt showed: solves every
                       task and every variation (any = fraction = all = 1).
``surface``            the oracle on original and ``reorder`` prompts; on every other
                       isomorphism type the ORIGINAL task's answers — a learner tied to the
                       surface symbols it was shown first: a systematicity gap on those types,
                       none on reordering.
``concepts-constant``  Boolean concepts: every new object the same label (``value=true``,
                       the default, or ``false``) — the shortcut that solves every query set
                       of one label; ``concepts(balanced=True)`` designs catch it.
``induction-sampled``  the oracle on each attempt with probability ``p`` (default 0.6), else
                       the wrong answer ``[]``; the draw is fixed by ``seed``, the prompt text
                       and the attempt number, so attempts differ and reruns agree (the
                       within-variation variance of App. A).
=====================  ==================================================================

Every policy answers prompts of other families the way ``ideal`` does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache

from pytest_competence.policy import ModelSpecError, ideal_answer, number, reads_prompt, uniform
from pytest_competence.protocol import Prompt

from ._tasks import Inductive, Task, canonical, induction_families

__all__ = ["INDUCTION_POLICIES", "induction_oracle", "induction_task"]

Answer = Callable[[Prompt], str]


@lru_cache(maxsize=64)
def _family(name: str, options: str) -> Inductive | None:
    cls = induction_families().get(name)
    return None if cls is None else cls(**json.loads(options))


def _options(prompt: Prompt) -> str:
    return json.dumps(prompt.params.get("options") or {}, sort_keys=True)


def _rebuild(prompt: Prompt) -> Inductive | None:
    """The family that wrote ``prompt``, rebuilt from its recorded options; else ``None``."""
    if "isomorphism" not in prompt.params:
        return None
    return _family(prompt.family, _options(prompt))


@lru_cache(maxsize=4096)
def _shown(name: str, options: str, n: int, index: int, seed: int, presentation: str) -> Task:
    """One shown task, built once: the N attempts of a prompt, and ``surface``'s many asks for
    the original task, all need the same one."""
    family = _family(name, options)
    assert family is not None
    return family.shown(n=n, index=index, seed=seed, presentation=presentation)


def induction_task(prompt: Prompt, *, original: bool = False) -> Task | None:
    """The latent task ``prompt`` showed (or, with ``original``, the unvaried task it came from)."""
    if _rebuild(prompt) is None:
        return None
    p = prompt.params
    presentation = "original" if original else prompt.presentation
    return _shown(prompt.family, _options(prompt), p["n"], p["index"], p["seed"], presentation)


def _say(prompt: Prompt, task: Task) -> str:
    family = _rebuild(prompt)
    assert family is not None  # only called once induction_task found it
    return f"Answer: {canonical([family.element(a) for a in task.answers])}"


def induction_oracle(prompt: Prompt) -> str | None:
    """The interpreter's answer to a rule-induction prompt; ``None`` for any other prompt."""
    task = induction_task(prompt)
    return None if task is None else _say(prompt, task)


def _other(prompt: Prompt) -> str:
    """A prompt of another family: the shared ``ideal`` policy's answer."""
    return ideal_answer(prompt)


def _oracle() -> Answer:
    return lambda prompt: induction_oracle(prompt) or _other(prompt)


def _surface() -> Answer:
    def answer(prompt: Prompt) -> str:
        kind = prompt.params.get("isomorphism")
        task = induction_task(prompt, original=kind not in ("original", "reorder"))
        return _other(prompt) if task is None else _say(prompt, task)

    return answer


def _sampled(p: str = "0.6", seed: str = "0") -> Answer:
    rate = number("p", p, 0.0, 1.0)

    def answer(prompt: Prompt) -> str:
        right = induction_oracle(prompt)
        if right is None:
            return _other(prompt)
        # Keyed on the attempt, not on a send count: attempts differ, reruns agree.
        draw = uniform(f"{seed}:{prompt.attempt}", f"{prompt.system}\x00{prompt.text}")
        return right if draw < rate else "Answer: []"

    return answer


def _constant(value: str = "true") -> Answer:
    if value not in ("true", "false"):
        raise ModelSpecError(
            f"ref:concepts-constant: expected value=true or value=false, but got value={value!r}"
        )

    def answer(prompt: Prompt) -> str:
        task = induction_task(prompt) if prompt.family == "concepts" else None
        return (
            _other(prompt) if task is None else f"Answer: [{', '.join([value] * len(task.query))}]"
        )

    return answer


#: Policy name → factory taking the spec's parameters; merged into ``reference.POLICIES``.
#: Each answer takes the whole :class:`Prompt` (see ``reference.reads_prompt``).
INDUCTION_POLICIES: dict[str, Callable[..., Answer]] = {
    "oracle": _oracle,
    "surface": _surface,
    "concepts-constant": _constant,
    "induction-sampled": _sampled,
}


def _whole(factory: Callable[..., Answer]) -> Callable[..., Answer]:
    return lambda **params: reads_prompt(factory(**params))


#: :data:`INDUCTION_POLICIES` as the families declare them: made once, so that every
#: rule-induction family declares the same factory (and each policy reads all of them).
WHOLE_PROMPT_POLICIES: dict[str, Callable[..., Answer]] = {
    name: _whole(factory) for name, factory in INDUCTION_POLICIES.items()
}
