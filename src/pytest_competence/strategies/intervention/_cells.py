"""Intervention worlds: the cells (world × mapping × readout), the letters, the rendered theory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import permutations

from pytest_competence.protocol import (
    InvalidArgument,
)

from ._theory import (
    Edit,
    Lit,
    SignedRule,
    Theory,
    apply_edit,
    label,
)

__all__ = [
    "IW_WORLDS",
    "IW_MAPPINGS",
    "IW_READOUTS",
    "IW_PRESENTATIONS",
    "LETTERS",
    "MIN_N",
    "MAX_N",
    "SYSTEM_PROMPT",
    "INSTRUCTION",
    "letter_of",
    "value_of",
    "render_theory",
    "IWInstance",
    "select_presentations",
]


IW_WORLDS = ("base", "target", "sham")
IW_MAPPINGS = tuple("".join(p) for p in permutations("TFU"))  # TFU, TUF, FTU, FUT, UTF, UFT
IW_READOUTS = ("generate", "score")
#: Every cell name, in design order: worlds, then mappings, then readouts.
IW_PRESENTATIONS = tuple(
    f"{w}/{m}/{r}" for w in IW_WORLDS for m in IW_MAPPINGS for r in IW_READOUTS
)
LETTERS = ("A", "B", "C")
_WORD = {"TRUE": "true", "FALSE": "false", "UNKNOWN": "unknown"}
MIN_N, MAX_N = 4, 512

SYSTEM_PROMPT = (
    "You are a careful logical reasoner. You are given facts and rules about made-up words. "
    "A fact states that something is true or that it is false. A rule states that its conclusion "
    "holds whenever all of its conditions hold. The world is open: a statement is true if it "
    "follows from the facts and rules, false if its negation follows, and unknown if neither "
    "follows. Nothing is false merely because it is not stated. Choose one of the lettered "
    'options and end with a line of the form "Answer: X".'
)
INSTRUCTION = 'Reply with the letter of the correct option, as "Answer: X".'

_RENDER = 0  # stream of the construction; one stream per instance keeps clusters independent


def letter_of(value: str, mapping: str) -> str:
    """The letter of ``value`` (TRUE/FALSE/UNKNOWN) under ``mapping`` (e.g. ``"TFU"``)."""
    return LETTERS[mapping.index(value[0])]


def value_of(letter: str, mapping: str) -> str:
    """The value ``letter`` stands for under ``mapping``: decodes an answer back to a label."""
    return {"T": "TRUE", "F": "FALSE", "U": "UNKNOWN"}[mapping[LETTERS.index(letter)]]


def _literal(lit: Lit) -> str:
    return f"{lit[0]} is {'true' if lit[1] else 'false'}"


def _rule(rule: SignedRule) -> str:
    return f"If {' and '.join(_literal(b) for b in rule.body)}, then {_literal(rule.head)}."


def render_theory(theory: Theory, query: str, mapping: str, instruction: str = INSTRUCTION) -> str:
    """The user prompt: facts, rules, the question and the options lettered by ``mapping``."""
    lines = [
        "Facts:",
        *(f"- {_literal(f)}." for f in theory.facts),
        "Rules:",
        *(f"- {_rule(r)}" for r in theory.rules),
        f"Question: is {query} true, false, or unknown?",
    ]
    lines += [f"{x}) {_WORD[value_of(x, mapping)]}" for x in LETTERS]
    lines.append(instruction)
    return "\n".join(lines)


@dataclass(frozen=True)
class IWInstance:
    """A cluster: the query, the base theory, the target and sham edits, and the transition."""

    n: int
    index: int
    seed: int
    query: str
    base: Theory
    target_edit: Edit
    sham_edit: Edit
    transition: tuple[str, str]

    @property
    def id(self) -> str:
        """The instance id: seed, level and cluster."""
        return f"intervention/seed={self.seed}/n={self.n}/{self.index}"

    def world(self, name: str) -> Theory:
        """The theory of world ``name`` (base, target or sham)."""
        if name == "base":
            return self.base
        return apply_edit(self.base, self.target_edit if name == "target" else self.sham_edit)

    def label(self, name: str) -> str:
        """The oracle label of world ``name``."""
        return label(self.world(name), self.query)


def select_presentations(presentations: object) -> tuple[str, ...]:
    """The cell names ``presentations`` selects (patterns ``WORLD/MAPPING/READOUT``, ``*`` = any).

    Raises :class:`InvalidArgument` for anything else, naming the parts that exist.
    """
    if isinstance(presentations, str):
        presentations = (presentations,)
    if (
        isinstance(presentations, (bytes, dict))
        or not isinstance(presentations, Sequence)
        or (not presentations)
    ):
        raise InvalidArgument(
            f"Expected presentations to be a non-empty list of WORLD/MAPPING/READOUT patterns such "
            f"as ['*/*/generate'], but got presentations={presentations!r}"
        )
    if all(isinstance(p, str) for p in presentations):
        return _selected(tuple(presentations))  # every item of a design asks again: memoised
    return _select(tuple(presentations))  # raises, naming the pattern that is not one


def _select(presentations: tuple[object, ...]) -> tuple[str, ...]:
    chosen: set[str] = set()
    for pattern in presentations:
        parts = pattern.split("/") if isinstance(pattern, str) else []
        known = (IW_WORLDS, IW_MAPPINGS, IW_READOUTS)
        ok = len(parts) == 3 and all(p == "*" or p in k for p, k in zip(parts, known))
        if not ok:
            raise InvalidArgument(
                f"Unknown presentation {pattern!r} for family 'intervention'. Expected "
                f"WORLD/MAPPING/READOUT with WORLD in {', '.join(IW_WORLDS)}, MAPPING in "
                f"{', '.join(IW_MAPPINGS)}, READOUT in {', '.join(IW_READOUTS)}, any part '*' "
                f"(e.g. 'base/TFU/generate' or '*/*/score')"
            )
        chosen |= {
            name
            for name in IW_PRESENTATIONS
            if all(p in ("*", q) for p, q in zip(parts, name.split("/")))
        }
    return tuple(name for name in IW_PRESENTATIONS if name in chosen)


_selected = lru_cache(maxsize=64)(_select)
