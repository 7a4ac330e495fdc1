"""Reference policies for the intervention-worlds family: they read the prompt text only.

==============  ======================================================================
``ideal``       (shared) reads every fact and rule, chains forward over signed literals
                and answers the letter of TRUE / FALSE / UNKNOWN: competent.
``iw-stuck``    never changes its answer: the first world of a question it reads in a
                batch (the base: the design lists it first) fixes its verdict, and every
                later world within two statements of it (a target or a sham) gets the
                same verdict, relettered under that prompt's mapping. Right on the base
                and the sham, wrong on every target: caught by target-follow.
``iw-jumpy``    changes its answer on any edit: right on the base and on targets, and on
                a sham — any other world within two statements — it answers a value other
                than the base's. Caught by sham-stay and the selective-response rate.
``iw-letter``   always answers the same letter (``letter``, default ``A``): caught by base
                accuracy under the six letter mappings.
==============  ======================================================================

"Within two statements": the target and sham edits add, remove or negate one statement, so a
world differs from its base by at most two rendered lines (a negated fact: the old and the new).
These are batch-reading policies — they remember what they answered earlier in the same call,
as a model with a conversation history would — so each one is a model (``generate`` over a
batch) and, like every reference policy, can also *score*: all probability on its answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_competence.policy import UNREADABLE, ModelSpecError, point_mass

if TYPE_CHECKING:
    from pytest_competence.protocol import Prompt

__all__ = ["IW_POLICIES", "BatchPolicy", "IWText", "Lit", "iw_ideal", "point_mass", "read_iw"]

_LIT = re.compile(r"^(\w+) is (true|false)$")
_OPTION = re.compile(r"^([ABC])\) (true|false|unknown)$")
_QUESTION = re.compile(r"^Question: is (\w+) true, false, or unknown\?$")
_VALUE = {"true": "TRUE", "false": "FALSE", "unknown": "UNKNOWN"}
Lit = tuple[str, bool]


@dataclass(frozen=True)
class IWText:
    """What a reader takes from an intervention prompt: statements, the query, the options."""

    facts: tuple[Lit, ...]
    rules: tuple[tuple[tuple[Lit, ...], Lit], ...]
    query: str
    letters: Mapping[str, str]  # value (TRUE/FALSE/UNKNOWN) → letter
    statements: frozenset[str]  # the rendered fact and rule lines, for comparing worlds


def _lit(text: str) -> Lit | None:
    m = _LIT.match(text.strip())
    return None if m is None else (m.group(1), m.group(2) == "true")


def read_iw(text: str) -> IWText | None:
    """Parse an intervention prompt from its text alone; ``None`` when it is not one."""
    lines = text.split("\n")
    if not lines or lines[0] != "Facts:" or "Rules:" not in lines:
        return None
    split = lines.index("Rules:")
    facts, rules, letters = [], [], {}
    for line in lines[1:split]:
        lit = _lit(line.removeprefix("- ").removesuffix("."))
        if lit is None:
            return None
        facts.append(lit)
    # The rules, the question, its three options; what follows is the suite's instruction,
    # whatever words it holds.
    asked = next((k for k in range(split + 1, len(lines)) if _QUESTION.match(lines[k])), None)
    if asked is None:
        return None
    for line in lines[split + 1 : asked]:
        if not (line.startswith("- If ") and ", then " in line):
            return None
        body, _, head = line[len("- If ") :].removesuffix(".").rpartition(", then ")
        parts = [_lit(b) for b in body.split(" and ")] + [_lit(head)]
        if any(p is None for p in parts):
            return None
        rules.append((tuple(parts[:-1]), parts[-1]))
    for line in lines[asked + 1 : asked + 4]:
        if (o := _OPTION.match(line)) is not None:
            letters[_VALUE[o.group(2)]] = o.group(1)
    if len(letters) != 3:
        return None
    query = _QUESTION.match(lines[asked]).group(1)  # type: ignore[union-attr]
    statements = frozenset(lines[1:split] + lines[split + 1 : asked])
    return IWText(tuple(facts), tuple(rules), query, letters, statements)  # type: ignore[arg-type]


def _value(t: IWText) -> str:
    """TRUE / FALSE / UNKNOWN by forward chaining over signed literals (open world)."""
    known = set(t.facts)
    changed = True
    while changed:
        changed = False
        for body, head in t.rules:
            if head not in known and all(b in known for b in body):
                known.add(head)
                changed = True
    if (t.query, True) in known:
        return "TRUE"
    return "FALSE" if (t.query, False) in known else "UNKNOWN"


def _say(t: IWText, value: str) -> str:
    return f"Answer: {t.letters[value]}"


def iw_ideal(text: str) -> str | None:
    """The ideal answer to an intervention prompt, or ``None`` when ``text`` is not one."""
    t = read_iw(text)
    return None if t is None else _say(t, _value(t))


class _Memory:
    """Verdicts on earlier worlds of the same question in a batch (anchors), by query atom."""

    def __init__(self) -> None:
        self.anchors: dict[str, list[tuple[frozenset[str], str]]] = {}

    def anchor(self, t: IWText) -> tuple[bool, str]:
        """``(new, verdict)``: the verdict of the world ``t`` is an edit of, else its own."""
        for statements, verdict in self.anchors.get(t.query, ()):
            if len(statements ^ t.statements) <= 2:
                return statements == t.statements, verdict
        verdict = _value(t)
        self.anchors.setdefault(t.query, []).append((t.statements, verdict))
        return True, verdict


def _stuck(memory: _Memory, t: IWText) -> str:
    return _say(t, memory.anchor(t)[1])


def _jumpy(memory: _Memory, t: IWText) -> str:
    same, base = memory.anchor(t)
    if same:
        return _say(t, base)
    value = _value(t)
    if value != base:
        return _say(t, value)
    order = ("TRUE", "FALSE", "UNKNOWN")
    return _say(t, order[(order.index(base) + 1) % 3])  # an edit happened, so it moves


class BatchPolicy:
    """A reference policy that reads a whole batch in order; it also scores (:func:`point_mass`)."""

    def __init__(self, rule: Callable[[_Memory, IWText], str] | None, letter: str = "A") -> None:
        self.name = "ref"
        self.families: tuple[str, ...] | None = ("intervention",)
        self._rule = rule
        self._letter = letter

    def generate(self, prompts: Sequence[Prompt]) -> list[str]:
        """The policy's answer to each prompt, reading the batch in order."""
        memory = _Memory()  # a fresh memory per call: the same batch always gets the same answers
        out = []
        for p in prompts:
            if self._rule is None:
                out.append(f"Answer: {self._letter}")
                continue
            t = read_iw(p.text)
            out.append(UNREADABLE if t is None else self._rule(memory, t))
        return out

    def score(self, prompts: Sequence[Prompt], candidates: Sequence[str]) -> list[dict[str, float]]:
        """Candidate scores: log-probability 0 for the answer it generates, ``-inf`` elsewhere."""
        return [point_mass(a, candidates) for a in self.generate(prompts)]

    def reads(self, prompt: Prompt) -> bool:
        """Whether the policy can read ``prompt`` (``iw-letter`` reads none and answers all)."""
        return self._rule is None or read_iw(prompt.text) is not None

    def __repr__(self) -> str:
        return f"BatchPolicy({self.name!r})"


def _letter(letter: str = "A") -> BatchPolicy:
    if letter not in ("A", "B", "C"):
        raise ModelSpecError(f"Expected letter to be A, B or C, but got letter={letter!r}")
    return BatchPolicy(None, letter)


#: Policy name → factory, merged into :data:`pytest_competence.models.reference.POLICIES`.
IW_POLICIES: dict[str, Callable[..., object]] = {
    "iw-stuck": lambda: BatchPolicy(_stuck),
    "iw-jumpy": lambda: BatchPolicy(_jumpy),
    "iw-letter": _letter,
}
