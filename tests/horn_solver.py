"""An independent, text-level solver for Horn-clause prompts (CBE paper, arXiv:2610.22894, App. C).

It reads nothing but the rendered prompt and imports nothing from ``pytest_competence``: its own
regular expressions for the two renderers of App. C.1 ("If a and b, then c." and "c holds
whenever a and b hold."), and naive round-by-round forward chaining (every rule re-checked each
round until nothing changes) — a different algorithm from the package's counting oracle.

Public API: :func:`parse` (text → :class:`Program`), :func:`solve` (text → "yes"/"no", the
answer to the question as asked), :func:`derivable`, :func:`proof_depth` (the round in which the
goal is first derived, or ``None``) and :func:`repairs` (single facts whose addition derives the
goal — a near miss has at least one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MalformedPrompt", "Program", "derivable", "parse", "proof_depth", "repairs", "solve"]

ATOM = r"[a-z]+"
_PROMPT = re.compile(
    r"^Here are some facts and rules\. Facts: (?P<facts>.*?) Rules: (?P<rules>.*?) ?"
    r"(?:Can (?P<pos>[a-z]+) be derived from the facts and rules\?"
    r"|Is it true that (?P<neg>[a-z]+) cannot be derived from the facts and rules\?)"
    r" Provide your answer only as yes or no\. Answer:$"
)
_FACT = re.compile(rf"({ATOM}) is true\.")
_IF = re.compile(rf"If ([a-z, ]+?), then ({ATOM})\.")
_WHENEVER = re.compile(rf"({ATOM}) holds whenever ([a-z, ]+?) holds?\.")
_LIST = re.compile(rf"^{ATOM}(?:, {ATOM})*(?: and {ATOM})?$")


class MalformedPrompt(ValueError):
    """The text is not a Horn prompt in either renderer."""


@dataclass(frozen=True)
class Program:
    """Facts, rules as ``(head, frozenset(body), renderer)`` in text order, the goal, the query sign."""

    facts: tuple[str, ...]
    rules: tuple[tuple[str, frozenset[str], str], ...]
    goal: str
    negated: bool


def _body(text: str) -> frozenset[str]:
    if not _LIST.match(text):
        raise MalformedPrompt(f"not a conjunction of atoms: {text!r}")
    return frozenset(re.split(r", | and ", text))


def parse(text: str) -> Program:
    m = _PROMPT.match(text)
    if not m:
        raise MalformedPrompt(f"not a Horn prompt: {text[:80]!r}")
    facts = _FACT.findall(m["facts"])
    if " ".join(f"{a} is true." for a in facts) != m["facts"]:
        raise MalformedPrompt("facts line does not consist of 'X is true.' sentences")
    rules = []
    rest = m["rules"]
    while rest:
        for pattern, kind in ((_IF, "if"), (_WHENEVER, "whenever")):
            r = pattern.match(rest)
            if r:
                body, head = (r[1], r[2]) if kind == "if" else (r[2], r[1])
                rules.append((head, _body(body), kind))
                rest = rest[r.end() :].lstrip(" ")
                break
        else:
            raise MalformedPrompt(f"unreadable rule at {rest[:60]!r}")
    goal = m["pos"] or m["neg"]
    return Program(tuple(facts), tuple(rules), goal, m["neg"] is not None)


def derivable(program: Program, extra: frozenset[str] = frozenset()) -> dict[str, int]:
    """Atom → the round in which naive forward chaining first derives it (facts: round 0)."""
    rounds = {a: 0 for a in (*program.facts, *extra)}
    r = 0
    while True:
        r += 1
        new = [h for h, body, _ in program.rules if h not in rounds and body <= rounds.keys()]
        if not new:
            return rounds
        for h in new:
            rounds[h] = r


def proof_depth(program: Program) -> int | None:
    return derivable(program).get(program.goal)


def solve(text: str) -> str:
    program = parse(text)
    derived = program.goal in derivable(program)
    return "yes" if derived != program.negated else "no"


def repairs(program: Program) -> list[str]:
    """Body atoms that, added as one fact, make the goal derivable."""
    known = derivable(program)
    candidates = sorted({a for _, body, _ in program.rules for a in body if a not in known})
    return [a for a in candidates if program.goal in derivable(program, frozenset([a]))]
