"""The Horn family's presentations (CBE paper, arXiv:2610.22894, App. C) and how its rules are worded."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_competence.protocol import (
    AnswerMap,
    Transform,
)

from ._programs import Rule

__all__ = [
    "SYSTEM_PROMPT",
    "INSTRUCTION",
    "VARY",
    "WHENEVER",
    "RESHUFFLE",
    "RENAME",
    "NEGATE_QUERY",
    "HORN_PRESENTATIONS",
    "render_rule",
]


SYSTEM_PROMPT = "You are a helpful assistant. Answer logical reasoning questions concisely."
INSTRUCTION = "Provide your answer only as yes or no. Answer:"
VARY = ("rules", "depth", "distractors")

_PROGRAM, _ORDER, _SHUFFLED, _RENAMED = range(4)


WHENEVER = Transform("whenever")
RESHUFFLE = Transform("reshuffle")
RENAME = Transform("rename")
NEGATE_QUERY = Transform("negated_query", AnswerMap.swap("yes", "no"))

#: Named presentations, each a composition of transforms of the original (If…then, fixed order).
HORN_PRESENTATIONS: dict[str, tuple[Transform, ...]] = {
    "original": (),
    "equivalent": (WHENEVER,),  # the paper's pair: the other renderer, rule order unchanged
    "whenever": (WHENEVER,),
    "reshuffle": (RESHUFFLE,),
    "rename": (RENAME,),
    "shuffled_renamed": (WHENEVER, RESHUFFLE, RENAME),
    "negated_query": (NEGATE_QUERY,),
    "repeat": (),  # the original prompt sent again: the repeat-agreement control (App. H)
}


def _conjunction(atoms: Sequence[str]) -> str:
    return atoms[0] if len(atoms) == 1 else f"{', '.join(atoms[:-1])} and {atoms[-1]}"


def render_rule(rule: Rule, whenever: bool) -> str:
    """One rule in either renderer of App. C.1."""
    if whenever:
        verb = "holds" if len(rule.body) == 1 else "hold"
        return f"{rule.head} holds whenever {_conjunction(rule.body)} {verb}."
    return f"If {_conjunction(rule.body)}, then {rule.head}."
