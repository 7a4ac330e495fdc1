"""An independent, text-level solver for reformulation prompts (CRTBench paper).

It imports nothing from ``pytest_competence`` and knows no lexicon: a clause is identified by its
two nouns — "the AGENT <verb> the PATIENT" (active) or "the PATIENT is <participle> by the AGENT"
(passive) — so a passive rewording of the same clause is recognised as the same atom without any
verb table. Sentences are parsed with their own regular expressions, and the label comes from
brute-force enumeration of assignments with ``itertools.product`` (the package uses numpy
truth tables), answering "yes" / "no" / "cannot be determined".

Public API: :func:`parse` (text → :class:`Reading`), :func:`solve` (text → label),
:func:`atoms_of` (clause keys in first-mention order), :func:`equivalent`.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

__all__ = ["MalformedPrompt", "Reading", "atoms_of", "equivalent", "parse", "solve"]

_ACTIVE = re.compile(r"^the (\w+) (?:does (not|NOT) (\w+)|(\w+)) the (\w+)$")
_PASSIVE = re.compile(r"^the (\w+) is (?:(not|NOT) )?(\w+) by the (\w+)$")
_ASK_ACTIVE = re.compile(r"^Does the (\w+) (not )?(\w+) the (\w+)\?$")
_ASK_PASSIVE = re.compile(r"^Is the (\w+) (not )?(\w+) by the (\w+)\?$")


class MalformedPrompt(ValueError):
    """Not a reformulation prompt of the grammar this solver reads."""


@dataclass(frozen=True)
class Reading:
    """Premises as nested tuples over clause keys ``(agent, patient)``; the question's key and sign.

    Formula forms: ``("lit", key, positive)``, ``("and", [...])``, ``("or", [...])``,
    ``("not", f)``, ``("if", f, g)``. ``voice`` is "active", "passive" or "mixed".
    """

    premises: tuple
    question: tuple
    voice: str


def _clause(text: str, voices: set[str]) -> tuple:
    m = _ACTIVE.match(text)
    if m:
        voices.add("active")
        return ("lit", (m[1], m[5]), m[2] is None)
    m = _PASSIVE.match(text)
    if m:
        voices.add("passive")
        return ("lit", (m[4], m[1]), m[2] is None)
    raise MalformedPrompt(f"not a clause: {text!r}")


def _list(text: str, word: str, voices: set[str]) -> list:
    return [_clause(part, voices) for part in re.split(rf", | {word} ", text)]


def _statement(s: str, voices: set[str]) -> tuple:
    for prefix, op, word in (
        ("it is not the case that all of the following hold: ", "nand", "and"),
        ("at least one of the following holds: ", "or", "or"),
    ):
        if s.startswith(prefix):
            parts = _list(s[len(prefix) :], word, voices)
            return ("not", ("and", parts)) if op == "nand" else ("or", parts)
    if s.startswith("if "):
        ante, then = s[3:].split(", then ", 1)
        return ("if", ("and", _list(ante, "and", voices)), _statement(then, voices))
    parts = _list(s, "and", voices)
    return parts[0] if len(parts) == 1 else ("and", parts)


def _question(q: str, voices: set[str]) -> tuple:
    for pattern, active in ((_ASK_ACTIVE, True), (_ASK_PASSIVE, False)):
        m = pattern.match(q)
        if m:
            voices.add("active" if active else "passive")
            key = (m[1], m[4]) if active else (m[4], m[1])
            return ("lit", key, m[2] is None)
    m = re.match(r"^Is it NOT the case that ((?:it is NOT true that )*)(.*)\?$", q)
    if not m:
        raise MalformedPrompt(f"not a question: {q!r}")
    inner = _clause(m[2], voices)
    for _ in range(1 + m[1].count("it is NOT true that ")):
        inner = ("not", inner)
    return inner


def parse(text: str) -> Reading:
    m = re.match(r"^Premises: (.*) Question: (.*)$", text)
    if not m:
        raise MalformedPrompt(text[:60])
    voices: set[str] = set()
    premises = tuple(
        _statement(s[0].lower() + s[1:], voices) for s in m[1].removesuffix(".").split(". ")
    )
    question = _question(m[2], voices)
    return Reading(premises, question, voices.pop() if len(voices) == 1 else "mixed")


def _keys(f: tuple, out: dict) -> None:
    if f[0] == "lit":
        out.setdefault(f[1], len(out))
    else:
        for part in f[1:]:
            for g in part if isinstance(part, list) else [part]:
                _keys(g, out)


def _value(f: tuple, world: dict) -> bool:
    op = f[0]
    if op == "lit":
        return world[f[1]] == f[2]
    if op == "not":
        return not _value(f[1], world)
    if op == "and":
        return all(_value(g, world) for g in f[1])
    if op == "or":
        return any(_value(g, world) for g in f[1])
    return (not _value(f[1], world)) or _value(f[2], world)


def atoms_of(*formulas: tuple) -> list:
    """Clause keys of ``formulas`` in first-mention order."""
    keys: dict = {}
    for f in formulas:
        _keys(f, keys)
    return list(keys)


def equivalent(f: tuple, g: tuple) -> bool:
    """Whether two formulas agree in every assignment of their clauses."""
    keys = atoms_of(f, g)
    return all(
        _value(f, dict(zip(keys, bits))) == _value(g, dict(zip(keys, bits)))
        for bits in itertools.product((False, True), repeat=len(keys))
    )


def solve(text: str) -> str:
    reading = parse(text)
    keys = atoms_of(*reading.premises, reading.question)
    answers = set()
    for bits in itertools.product((False, True), repeat=len(keys)):
        world = dict(zip(keys, bits))
        if all(_value(f, world) for f in reading.premises):
            answers.add(_value(reading.question, world))
    if not answers:
        raise MalformedPrompt("premises are inconsistent")
    return "cannot be determined" if len(answers) == 2 else "yes" if answers.pop() else "no"
