"""Boolean concept learning: is a new object *wudsy*? (systematicity paper, arXiv:2609.13948, §4.4, App. C Fig. 14).

Each task binds three of the five physical features (shape, size, color, material, numerosity),
three values each, so there are 27 possible objects. The hidden rule is drawn from the and/or
grammar without ``not``; the level ``n`` is its length, the number of feature tests (1 to 5). The
support set is a set of adjacent pairs on the Hamming graph that straddle the rule's decision
boundary, grown until the ideal observer finds the rule the unique shortest one consistent with
it (:func:`~._concepts_logic.build_support`); a rule with a shorter equivalent, or one its
boundary cannot single out, is redrawn from the same stream. The queries are drawn from the
objects not shown. The prompt states the task's grammar, as the paper does, and asks for a JSON
list of booleans (``true`` = wudsy); an entry may also be the label words ``"wudsy"``/``"not
wudsy"`` or a quoted ``"true"``/``"false"``, which say the same thing, and anything else (numbers,
``null``, other words) makes the answer invalid.

Isomorphisms (systematicity paper, arXiv:2609.13948, §3.2, §4.4): ``reorder`` (the base's ``π``, ``σ``) and ``rebind``: a
bijection ``φ`` of the object space that permutes which latent variable each feature slot holds
and the values within every slot, shown through a freshly drawn choice of three of the five
physical features — so "all red objects are wudsy" may become "all squares are wudsy". The rule
is transformed by the same ``φ`` and every label recomputed by the interpreter; ``ψ`` is the
identity on booleans (without ``not`` the complement of a rule is not a rule of the same length).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from pytest_competence.protocol import AuditComponent, InvalidArgument

from .._induction import REORDER, RuleInduction, Task
from .._rng import stream_rng
from ._logic import (
    FEATURES,
    OBJECTS,
    Obj,
    Rule,
    build_support,
    draw_rule,
    ideal_observer,
    index,
    labels,
)

__all__ = [
    "CONCEPTS_SYSTEM",
    "MAX_QUERIES",
    "REBIND",
    "Concepts",
    "describe",
    "expression",
    "ideal_observer",
    "rebind",
]

REBIND = "rebind"
MAX_QUERIES = 8  # every support leaves at least this many objects unseen
_ORDER = tuple(FEATURES)  # features are listed in this order in every prompt
_RULE, _QUERY, _BINDING = range(3)
_ATTEMPTS = 10_000

#: App. C Fig. 14, verbatim but for ``n_query``, which :class:`Concepts` fills in.
CONCEPTS_SYSTEM = (
    "Your task is to discover the meaning of 'wudsy', a word in an alien language. In the "
    "following you will be presented with several examples of objects that are either wudsy or "
    "not wudsy. Afterwards you will be presented with {n_query} new object(s) and you have to "
    "determine whether they are either wudsy or not wudsy. Try to identify the simplest, "
    "deterministic rule for what makes objects wudsy or not wudsy and apply it to decide for the "
    "new objects.\n\n"
    "Each rule is generated from a context-free grammar. The specific grammar and properties of "
    "the objects will be provided for each task. The shortest generated rule that explains the "
    "examples is the correct one to base the decision on.\n\n"
    "Note in particular that this grammar does not contain a not() operation, keep this in mind "
    'when trying to identify the "simplest" rule, i.e. the shortest rule that explains all '
    "examples that can be expressed in this grammar.\n\n"
    "Respond with the boolean value for each of the {n_query} new object(s) in their presented "
    "order according to the rule you identified."
)


def expression(rule: Rule, context: Sequence[str]) -> str:
    """``rule`` in the grammar's own notation under a binding, e.g. ``is_color(x, blue)``."""
    if rule[0] == "is":
        feature = context[rule[1]]
        return f"is_{feature}(x, {FEATURES[feature][rule[2]]})"
    return f"{rule[0]}({expression(rule[1], context)}, {expression(rule[2], context)})"


def _map_rule(rule: Rule, slots: Sequence[int], values: Sequence[Sequence[int]]) -> Rule:
    if rule[0] == "is":
        return ("is", slots[rule[1]], values[rule[1]][rule[2]])
    return (rule[0], _map_rule(rule[1], slots, values), _map_rule(rule[2], slots, values))


def rebind(
    task: Task, slots: Sequence[int], values: Sequence[Sequence[int]], context: Sequence[str]
) -> Task:
    """``φ(task)``: slot ``s`` moves to ``slots[s]``, its value ``v`` becomes ``values[s][v]``.

    The new ``context`` names the physical feature each slot is shown as. Objects and rule are
    mapped by the same ``φ`` and every label is recomputed by the interpreter, so the answers
    agree with the original's exactly when ``φ`` is an isomorphism (which the tests check).
    """
    for name, perm in [("slots", slots), *((f"values[{s}]", v) for s, v in enumerate(values))]:
        if sorted(perm) != [0, 1, 2]:
            raise InvalidArgument(
                f"Expected {name} to be a permutation of [0, 1, 2], but got {name}={perm!r}"
            )
    if len(values) != 3 or len(set(context)) != 3 or not set(context) <= set(FEATURES):
        raise InvalidArgument(
            f"Expected three permutations in values and three distinct features "
            f"of {list(FEATURES)} in context, but got values={values!r}, "
            f"context={context!r}"
        )

    def move(obj: Obj) -> Obj:
        out = [0, 0, 0]
        for s, v in enumerate(obj):
            out[slots[s]] = values[s][v]
        return (out[0], out[1], out[2])

    rule = _map_rule(task.rule, slots, values)
    shown, query = [move(x) for x, _ in task.support], tuple(move(x) for x in task.query)
    return Task(
        rule=rule,
        support=tuple(zip(shown, labels(rule, shown))),
        query=query,
        answers=labels(rule, query),
        context=tuple(context),
    )


@lru_cache(maxsize=256)
def _header(context: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """The task-specific instruction for a binding, and every object described under it."""
    shown = sorted(range(3), key=lambda s: _ORDER.index(context[s]))
    names = [context[s] for s in shown]
    symbols = "ABC"
    tests = " | ".join(f"is_{f}(O,{symbols[i]})" for i, f in enumerate(names))
    lines = [
        f"Each object has a {names[0]}, {names[1]} and {names[2]}. The rules are generated from "
        "the following context-free grammar:",
        f"S -> 'true' | 'false' | and(S,S) | or(S,S) | {tests}",
        "O -> 'x'",
        *(
            f"{symbols[i]} -> " + " | ".join(f"'{v}'" for v in FEATURES[f])
            for i, f in enumerate(names)
        ),
    ]
    return "\n".join(lines), tuple(describe(x, context, shown) for x in OBJECTS)


def describe(obj: Obj, context: Sequence[str], shown: Sequence[int]) -> str:
    """One object in words: ``shape: circle, color: blue, size: tiny``."""
    return ", ".join(f"{context[s]}: {FEATURES[context[s]][obj[s]]}" for s in shown)


class Concepts(RuleInduction):
    """The Boolean concept learning family (systematicity paper, arXiv:2609.13948, §4.4); the level is the rule length.

    Args:
        variations: ``K``, isomorphic variations per type and task (default 5).
        queries: new objects to classify per task, 1 to 8 (default 6).
        balanced: draw half the queries wudsy (beyond the paper, whose uniform draws leave
            30–40% of query sets all one label; rules that cannot be balanced are redrawn).
    """

    name = "concepts"
    level_name = "length"
    isomorphisms = (REORDER, REBIND)
    levels = (1, 5)
    system = CONCEPTS_SYSTEM.format(n_query=6)  # the default; each instance fills in its own
    shortcuts = ("ref:concepts-constant", "ref:surface")
    induction_policies = (*RuleInduction.induction_policies, "concepts-constant")

    @classmethod
    def audit_policies(cls, levels: Sequence[int]) -> tuple[str, ...]:
        """The shortcuts and the constant shortcut's other constant."""
        return (*cls.shortcuts, "ref:concepts-constant?value=false")

    def __init__(self, *, variations: int = 5, queries: int = 6, balanced: bool = False) -> None:
        super().__init__(variations=variations)
        if not isinstance(balanced, bool):
            raise InvalidArgument(
                f"Expected balanced to be True or False (half the queries "
                f"wudsy), but got balanced={balanced!r}"
            )
        self.balanced = balanced
        if (
            isinstance(queries, bool)
            or not isinstance(queries, int)
            or not 1 <= queries <= MAX_QUERIES
        ):
            raise InvalidArgument(
                f"Expected queries to be an integer in [1, {MAX_QUERIES}] (new objects per task), "
                f"but got queries={queries!r}; try queries=6"
            )
        self.queries = queries
        self.system = CONCEPTS_SYSTEM.format(n_query=queries)

    def options(self) -> dict[str, Any]:
        """The constructor keywords that rebuild this family."""
        return {
            "variations": self.variations,
            "queries": self.queries,
            **({"balanced": True} if self.balanced else {}),
        }

    def task(self, n: int, index: int, seed: int) -> Task:
        """Task ``index`` of level ``n``: rule, boundary-pair support, unseen queries, binding.

        The rule and support come from one stream and are redrawn until the ideal observer
        accepts them and at least :data:`MAX_QUERIES` objects stay unseen, so the same rules
        appear whatever ``queries`` is.
        """
        self.check_level(n)
        rng = stream_rng(seed, n, index, _RULE)
        for _ in range(_ATTEMPTS):
            rule = draw_rule(rng, n)
            support = build_support(rule, rng)
            if (
                support is not None
                and len(support) <= len(OBJECTS) - MAX_QUERIES
                and (not self.balanced or _balanceable(rule, support, self.queries))
            ):
                break
        else:  # pragma: no cover - every level accepts a draw within a handful of tries
            raise RuntimeError(f"no concept of length {n} found for seed={seed}, index={index}")
        shown = {x for x, _ in support}
        unseen = [x for x in OBJECTS if x not in shown]
        query_rng = stream_rng(seed, n, index, _QUERY)
        if self.balanced:
            query = _balanced(rule, unseen, self.queries, query_rng)
        else:
            picks = query_rng.choice(len(unseen), self.queries, replace=False)
            query = tuple(unseen[i] for i in picks)
        features = stream_rng(seed, n, index, _BINDING).choice(len(_ORDER), 3, replace=False)
        return Task(
            rule=rule,
            support=support,
            query=query,
            answers=labels(rule, query),
            context=tuple(_ORDER[i] for i in features),
        )

    def vary(self, task: Task, kind: str, rng: np.random.Generator) -> Task:
        """``rebind``: a random non-identity ``φ`` (see :func:`rebind`), then ``π`` and ``σ``."""
        if kind != REBIND:
            raise InvalidArgument(
                f"Unknown isomorphism type {kind!r} for concepts; expected "
                f"one of {list(self.isomorphisms)!r}"
            )
        while True:
            slots = [int(s) for s in rng.permutation(3)]
            values = [[int(v) for v in rng.permutation(3)] for _ in range(3)]
            context = [_ORDER[int(i)] for i in rng.choice(len(_ORDER), 3, replace=False)]
            # φ must change how some (feature, value) is shown, or the variation is the original
            if any(
                context[slots[s]] != task.context[s] or values[s] != [0, 1, 2] for s in range(3)
            ):
                break
        return self.reorder(rebind(task, slots, values, context), rng)

    def render(self, task: Task) -> str:
        """The task-specific instruction (the grammar), the examples, the new objects."""
        header, words = _header(task.context)
        lines = [header, "", "Examples:"]
        lines += [f"{words[index(x)]} -> {'wudsy' if y else 'not wudsy'}" for x, y in task.support]
        lines += ["", "New objects:"]
        lines += [f"{j}. {words[index(x)]} -> ?" for j, x in enumerate(task.query, 1)]
        k = len(task.query)
        lines += [
            "",
            f"End with one line 'Answer: [...]' holding a JSON list of {k} booleans, one "
            f"per new object in the order shown (true = wudsy, false = not wudsy).",
        ]
        return "\n".join(lines)

    def element(self, value: object) -> bool:
        """A JSON boolean, or the words ``"wudsy"``/``"not wudsy"`` (or ``"true"``/``"false"``).

        The label words and quoted booleans say the same thing unambiguously; numbers and
        anything else are rejected rather than guessed.
        """
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            word = " ".join(value.lower().split())
            if word in ("wudsy", "true"):
                return True
            if word in ("not wudsy", "false"):
                return False
        raise ValueError(f"expected true/false (wudsy/not wudsy), got {value!r}")

    def expression(self, task: Task) -> str:
        """The hidden rule of ``task`` in the grammar's notation (for readers and reports)."""
        return expression(task.rule, task.context)

    def audit_components(
        self, levels: Sequence[int], presentations: Sequence[str]
    ) -> list[AuditComponent]:
        """The base's (isomorphism types, a larger level), and query sets with both labels
        (``balanced=True``), which catch ``ref:concepts-constant``."""
        out = super().audit_components(levels, presentations)
        if not self.balanced:
            out.append(AuditComponent("balanced query labels", "option", {"balanced": True}))
        return out

    def __repr__(self) -> str:
        extra = ", balanced=True" if self.balanced else ""
        return f"Concepts(variations={self.variations}, queries={self.queries}{extra})"


def _balanceable(rule: Rule, support: Sequence[tuple[Obj, bool]], k: int) -> bool:
    """Whether the objects ``support`` leaves unseen hold ``⌈k/2⌉`` of each label."""
    shown = {x for x, _ in support}
    marks = labels(rule, [x for x in OBJECTS if x not in shown])
    return min(sum(marks), len(marks) - sum(marks)) >= (k + 1) // 2


def _balanced(
    rule: Rule, unseen: Sequence[Obj], k: int, rng: np.random.Generator
) -> tuple[Obj, ...]:
    """``k`` unseen objects, half of them wudsy (for odd ``k`` one more of a label drawn at
    random), in random order.

    Beyond the paper: with uniform draws 30–40% of query sets hold one label only, which the
    constant answer "all true" / "all false" solves (``ref:concepts-constant``). Rules whose
    boundary leaves too few unseen objects of a label are redrawn (:func:`_balanceable`), so a
    balanced design's rules are not the paper's distribution of rules.
    """
    marks = labels(rule, unseen)
    yes = [x for x, m in zip(unseen, marks) if m]
    no = [x for x, m in zip(unseen, marks) if not m]
    want_yes = (k + int(rng.integers(2))) // 2
    chosen = [yes[i] for i in rng.choice(len(yes), want_yes, replace=False)] + [
        no[i] for i in rng.choice(len(no), k - want_yes, replace=False)
    ]
    return tuple(chosen[i] for i in rng.permutation(k))
