"""The Horn family's presentations (CBE paper, arXiv:2610.22894, App. C) and how its rules are worded."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_competence.protocol import (
    AnswerMap,
    Transform,
)

from .._rng import stream_rng
from ..atoms import pseudowords
from ._programs import _RENAMED, _SHUFFLED, HornInstance, Rule

__all__ = [
    "SYSTEM_PROMPT",
    "INSTRUCTION",
    "VARY",
    "WHENEVER",
    "RESHUFFLE",
    "RENAME",
    "NEGATE_QUERY",
    "HORN_PRESENTATIONS",
    "render",
    "render_rule",
]


SYSTEM_PROMPT = "You are a helpful assistant. Answer logical reasoning questions concisely."
INSTRUCTION = "Provide your answer only as yes or no. Answer:"
VARY = ("rules", "depth", "distractors")


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


def render(z: HornInstance, transforms: tuple[Transform, ...], instruction: str) -> str:
    """The user prompt for ``z`` under a composition of transforms, ending in ``instruction``."""
    facts, rules, goal = list(z.facts), list(z.rules), z.goal
    if RESHUFFLE in transforms:
        rng = stream_rng(z.seed, z.n, z.index, _SHUFFLED)
        facts = [facts[i] for i in rng.permutation(len(facts)).tolist()]
        rules = [rules[i] for i in rng.permutation(len(rules)).tolist()]
    if RENAME in transforms:
        atoms = z.atoms
        fresh = pseudowords(stream_rng(z.seed, z.n, z.index, _RENAMED), len(atoms), exclude=atoms)
        to = dict(zip(atoms, fresh))
        facts = [to[a] for a in facts]
        rules = [Rule(to[r.head], tuple(to[a] for a in r.body)) for r in rules]
        goal = to[goal]
    whenever = WHENEVER in transforms
    question = (
        f"Is it true that {goal} cannot be derived from the facts and rules?"
        if NEGATE_QUERY in transforms
        else f"Can {goal} be derived from the facts and rules?"
    )
    return (
        f"Here are some facts and rules. Facts: {' '.join(f'{a} is true.' for a in facts)} "
        f"Rules: {' '.join(render_rule(r, whenever) for r in rules)} "
        f"{question} {instruction}"
    )
