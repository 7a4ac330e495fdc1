"""An independent text-level reader and ideal observer for Boolean concepts (systematicity paper, arXiv:2609.13948, §4.4).

It imports nothing from ``pytest_competence``. :func:`parse` reads the rendered prompt — the
features and values from the grammar the prompt states, then the labelled examples and the new
objects — into named objects (tuples of value names in the order the grammar lists features).
:func:`evaluate` runs a rule written in the grammar's notation (``and(is_color(x, blue), …)``) on
a named object. :func:`observe` is the ideal observer, built differently from the package's: it
enumerates truth tables as frozensets of object positions, combining *every* pair of rule sets
whose lengths sum to ``k`` (no exact-length bookkeeping), and keeps the rules consistent with
the examples. :func:`isomorphisms` finds every feature/value bijection that carries one parsed
task onto another.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import cache

__all__ = ["Concept", "MalformedPrompt", "evaluate", "isomorphisms", "observe", "parse", "predict"]

_HEADER = re.compile(
    r"^Each object has a (\w+), (\w+) and (\w+)\. The rules are generated from "
    r"the following context-free grammar:$"
)
_TEST = re.compile(r"is_(\w+)\(O,([A-Z])\)")
_VALUES = re.compile(r"^([A-Z]) -> (.*)$")
_EXAMPLE = re.compile(r"^(.*) -> (wudsy|not wudsy)$")
_QUERY = re.compile(r"^(\d+)\. (.*) -> \?$")
_ANSWER = re.compile(r"JSON list of (\d+) booleans")


class MalformedPrompt(ValueError):
    """The text is not a Boolean concept prompt as this reader understands it."""


@dataclass(frozen=True)
class Concept:
    """A parsed prompt: features (grammar order), their values, examples and new objects."""

    features: tuple[str, ...]
    values: tuple[tuple[str, ...], ...]
    support: tuple[tuple[tuple[str, ...], bool], ...]
    query: tuple[tuple[str, ...], ...]

    @property
    def objects(self) -> list[tuple[str, ...]]:
        """All objects the grammar's features allow."""
        return list(itertools.product(*self.values))


def _object(
    text: str, concept_features: tuple[str, ...], values: tuple[tuple[str, ...], ...]
) -> tuple[str, ...]:
    parts = [p.split(": ") for p in text.split(", ")]
    if [p[0] for p in parts] != list(concept_features):
        raise MalformedPrompt(f"object {text!r} does not list {concept_features}")
    obj = tuple(p[1] for p in parts)
    if any(v not in allowed for v, allowed in zip(obj, values)):
        raise MalformedPrompt(f"object {text!r} has a value outside the grammar")
    return obj


def parse(text: str) -> Concept:
    """Read a rendered prompt; raise :class:`MalformedPrompt` when it does not fit."""
    lines = text.split("\n")
    head = _HEADER.match(lines[0])
    if not head:
        raise MalformedPrompt(f"unexpected first line {lines[0]!r}")
    features = head.groups()
    tests = dict((letter, feature) for feature, letter in _TEST.findall(lines[1]))
    if sorted(tests.values()) != sorted(features):
        raise MalformedPrompt("grammar tests do not match the features")
    by_feature = {}
    for line in lines[3:6]:
        m = _VALUES.match(line)
        if not m:
            raise MalformedPrompt(f"unexpected grammar line {line!r}")
        by_feature[tests[m[1]]] = tuple(v.strip().strip("'") for v in m[2].split("|"))
    values = tuple(by_feature[f] for f in features)
    support, query = [], []
    for line in lines[6:]:
        if m := _EXAMPLE.match(line):
            support.append((_object(m[1], features, values), m[2] == "wudsy"))
        elif m := _QUERY.match(line):
            if int(m[1]) != len(query) + 1:
                raise MalformedPrompt(f"new object numbered {m[1]} out of order")
            query.append(_object(m[2], features, values))
    count = _ANSWER.search(text)
    if not count or int(count[1]) != len(query):
        raise MalformedPrompt("the answer instruction does not count the new objects")
    return Concept(features, values, tuple(support), tuple(query))


def _split_args(body: str) -> list[str]:
    depth, start, out = 0, 0, []
    for i, ch in enumerate(body):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(body[start:i].strip())
            start = i + 1
    return out + [body[start:].strip()]


def evaluate(rule: str, concept: Concept, obj: tuple[str, ...]) -> bool:
    """Whether ``obj`` satisfies ``rule``, written in the prompt grammar's notation."""
    name, _, rest = rule.partition("(")
    args = _split_args(rest[:-1])
    if name == "and":
        return evaluate(args[0], concept, obj) and evaluate(args[1], concept, obj)
    if name == "or":
        return evaluate(args[0], concept, obj) or evaluate(args[1], concept, obj)
    if name.startswith("is_") and args[0] == "x":
        feature = concept.features.index(name[3:])
        if args[1] not in concept.values[feature]:
            raise MalformedPrompt(f"{args[1]!r} is not a {name[3:]}")
        return obj[feature] == args[1]
    raise MalformedPrompt(f"not a rule of the grammar: {rule!r}")


@cache
def _tables(longest: int) -> tuple[dict[frozenset[int], int], ...]:
    """``tables[k]``: every truth table some rule of length ≤ k has, with its shortest length."""
    atoms = frozenset(range(27))
    coords = [(o // 9, o // 3 % 3, o % 3) for o in range(27)]
    tests = {
        frozenset(o for o in range(27) if coords[o][f] == v) for f in range(3) for v in range(3)
    }
    tables: list[dict[frozenset[int], int]] = [{frozenset(): 0, atoms: 0}]
    tables.append({**tables[0], **{t: 1 for t in tests if t not in tables[0]}})
    for k in range(2, longest + 1):
        table = dict(tables[k - 1])
        for i in range(1, k):
            for a in tables[i]:
                for b in tables[k - i]:
                    for c in (a & b, a | b):
                        table.setdefault(c, k)
        tables.append(table)
    return tuple(tables)


def observe(concept: Concept, longest: int) -> tuple[int, list[frozenset[int]]]:
    """The shortest consistent rule length and every truth table of that length (positions in
    :attr:`Concept.objects`); ``(longest + 1, [])`` when no rule of length ≤ ``longest`` fits."""
    position = {obj: i for i, obj in enumerate(concept.objects)}
    shown = [(position[x], y) for x, y in concept.support]
    fits = {
        t: k for t, k in _tables(longest)[longest].items() if all((i in t) == y for i, y in shown)
    }
    best = min(fits.values(), default=longest + 1)
    return best, [t for t, k in fits.items() if k == best]


def predict(concept: Concept, table: frozenset[int]) -> list[bool]:
    """The labels of the new objects under one truth table."""
    position = {obj: i for i, obj in enumerate(concept.objects)}
    return [position[x] in table for x in concept.query]


def isomorphisms(a: Concept, b: Concept) -> list[tuple[int, ...]]:
    """For every feature/value bijection carrying ``a``'s labelled examples onto ``b``'s and its
    new objects onto ``b``'s, the position in ``b.query`` of each of ``a``'s new objects."""
    target = dict(b.support)
    where = {x: j for j, x in enumerate(b.query)}
    if len(target) != len(a.support) or len(where) != len(a.query):
        return []
    found = []
    for order in itertools.permutations(range(3)):  # a's feature i is b's feature order[i]
        for perms in itertools.product(itertools.permutations(range(3)), repeat=3):

            def move(x: tuple[str, ...]) -> tuple[str, ...]:
                out = [""] * 3
                for i, v in enumerate(x):
                    out[order[i]] = b.values[order[i]][perms[i][a.values[i].index(v)]]
                return tuple(out)

            if all(target.get(move(x)) == y for x, y in a.support):
                sigma = [where.get(move(x)) for x in a.query]
                if None not in sigma:
                    found.append(tuple(sigma))
    return found
