"""Program induction over integer sequences (systematicity paper, arXiv:2609.13948, §4.3, App. C Fig. 13).

A task's hidden rule is a program of ``n`` steps (the level) drawn from the grammar of
:mod:`._ops`; the learner sees ``support`` input/output list pairs and must give the
program's output on each of ``queries`` new input lists. Input lists hold digits 0..9.

The input lengths come from three disjoint pools drawn per task (systematicity paper, arXiv:2609.13948, §4.3, "Support and
query set"): the queries' lengths form a band of two consecutive lengths, and the support lists
are half shorter and half longer than every query. No support example has a query's length, so
copying the output of a same-length (or nearest-length) example cannot solve a task.

Isomorphisms (systematicity paper, arXiv:2609.13948, §3.4): ``"reorder"`` (π on the support, σ on the queries; the base's)
and ``"substitute"``: one bijection ψ of the digits applied to every list and to the program's
inserted values, never to its positions, lengths or offsets. Because no operation reads or
computes with values, the substituted program computes ``ψ ∘ f ∘ ψ⁻¹``, so the varied task's
interpreter answers are ψ of the original's (tests/test_programs.py checks it on every draw).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pytest_competence.protocol import InvalidArgument

from .._induction import REORDER, RuleInduction, Task
from .._rng import stream_rng
from ._ops import DIGITS, draw_program, run, substitute

__all__ = ["HINT", "LONGEST", "SHORTEST", "SUBSTITUTE", "Programs", "ProgramsContext"]

SUBSTITUTE = "substitute"
SHORTEST, LONGEST = 2, 10  # input list lengths; the query band sits strictly inside
_BAND = 2  # query lengths per task: two consecutive lengths

_SYSTEM = (
    "Your task is to discover the rule that transforms input lists of integers into output "
    "lists of integers. In the following, you will be presented with {n_support} examples of "
    "input and output list pairs. Afterwards, you will be presented with {n_query} new input "
    "list(s) and you have to apply the inferred rule to predict their corresponding output lists."
)

#: The hint of App. C Fig. 13 (bottom), appended to the system prompt when ``hint=True``.
HINT = (
    "The rule is a composition of the following basic operations:\n"
    "- insert: Insert an element at a specific position.\n"
    "- remove: Remove an element at a specific position.\n"
    "- repeat: Repeat the list until it reaches a specified length.\n"
    "- shift: Shift all elements by a given offset, wrapping around.\n"
    "- swap: Swap the first and second halves of the list.\n"
    "- tail: Keep only a specified number of elements from the end of the list."
)


@dataclass(frozen=True)
class ProgramsContext:
    """The length pools of a task and the digit substitution it was shown under.

    ``substitution[d]`` is ψ(d); the identity for the original task and its reorderings.
    """

    short: tuple[int, ...]
    query: tuple[int, ...]
    long: tuple[int, ...]
    substitution: tuple[int, ...] = tuple(range(DIGITS))


class Programs(RuleInduction):
    """Program induction over integer lists: level ``n`` = steps in the hidden program.

    Args:
        variations: ``K``, isomorphic variations per type and task (systematicity paper, arXiv:2609.13948, §5: 5).
        support: input/output examples shown, half shorter and half longer than the queries.
        queries: new input lists to answer; a task is solved only if every one is right.
        hint: append App. C Fig. 13's list of the basic operations to the instructions.
    """

    name = "programs"
    level_name = "steps"
    isomorphisms = (REORDER, SUBSTITUTE)
    levels = (1, 5)
    shortcuts = ("ref:programs-copy-nearest", "ref:surface")

    @classmethod
    def shortcut_policies(cls) -> Mapping[str, Any]:
        """The rule-induction policies and ``programs-copy-nearest``."""
        from .policies import PROGRAMS_POLICIES

        return {**super().shortcut_policies(), **PROGRAMS_POLICIES}

    def __init__(
        self, *, variations: int = 5, support: int = 6, queries: int = 3, hint: bool = False
    ) -> None:
        super().__init__(variations=variations)
        for key, value, least, fix in (("support", support, 2, 6), ("queries", queries, 1, 3)):
            if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= 20:
                raise InvalidArgument(
                    f"Expected {key} to be an integer in [{least}, 20], but got {key}={value!r}; "
                    f"tasks sized as in the systematicity paper (arXiv:2609.13948) use {key}={fix}"
                )
        if not isinstance(hint, bool):
            raise InvalidArgument(f"Expected hint to be True or False, but got hint={hint!r}")
        self.support, self.queries, self.hint = support, queries, hint
        self.system = _SYSTEM.format(n_support=support, n_query=queries) + (
            "\n\n" + HINT if hint else ""
        )

    def options(self) -> dict[str, Any]:
        """``variations``, ``support``, ``queries`` and ``hint``: ``Programs(**options)``."""
        return {
            "variations": self.variations,
            "support": self.support,
            "queries": self.queries,
            "hint": self.hint,
        }

    def task(self, n: int, index: int, seed: int) -> Task:
        """Task ``index`` of level ``n``: pools, a program total on them, lists, answers."""
        self.check_level(n)
        rng = stream_rng(seed, n, index, 0)
        start = int(rng.integers(SHORTEST + 2, LONGEST - _BAND))  # ≥ 2 lengths on either side
        context = ProgramsContext(
            tuple(range(SHORTEST, start)),
            tuple(range(start, start + _BAND)),
            tuple(range(start + _BAND, LONGEST + 1)),
        )
        program_rng, data_rng = stream_rng(seed, n, index, 1), stream_rng(seed, n, index, 2)
        n_short = self.support // 2
        while True:  # almost always once: redraw when the program changes no example shown
            program = draw_program(n, SHORTEST, LONGEST, program_rng)
            sizes = np.concatenate(
                [
                    data_rng.choice(context.short, n_short),
                    data_rng.choice(context.long, self.support - n_short),
                ]
            )
            data_rng.shuffle(sizes)
            digits = data_rng.integers(0, DIGITS, int(sizes.sum())).tolist()
            ends = np.cumsum(sizes).tolist()
            inputs = [digits[end - int(k) : end] for k, end in zip(sizes, ends)]
            outputs = [run(program, x) for x in inputs]
            if any(x != y for x, y in zip(inputs, outputs)):
                break
        query = [
            data_rng.integers(0, DIGITS, int(k)).tolist()
            for k in data_rng.choice(context.query, self.queries)
        ]
        return Task(
            rule=program,
            support=tuple((tuple(x), tuple(y)) for x, y in zip(inputs, outputs)),
            query=tuple(tuple(q) for q in query),
            answers=tuple(tuple(run(program, q)) for q in query),
            context=context,
        )

    def vary(self, task: Task, kind: str, rng: np.random.Generator) -> Task:
        """``"substitute"``: a non-identity digit bijection ψ on the lists and inserted values;
        support outputs and answers are the substituted program's, recomputed."""
        if kind != SUBSTITUTE:
            raise InvalidArgument(
                f"Unknown isomorphism kind={kind!r} for programs; expected "
                f"one of {list(self.isomorphisms)!r}"
            )
        psi = rng.permutation(DIGITS)
        while (psi == np.arange(DIGITS)).all():
            psi = rng.permutation(DIGITS)
        mapping = tuple(int(d) for d in psi)
        program = substitute(task.rule, mapping)
        inputs = [tuple(mapping[d] for d in x) for x, _ in task.support]
        query = [tuple(mapping[d] for d in q) for q in task.query]
        before = task.context.substitution  # compose, so a varied task records its whole ψ
        return Task(
            rule=program,
            support=tuple((x, tuple(run(program, x))) for x in inputs),
            query=tuple(query),
            answers=tuple(tuple(run(program, q)) for q in query),
            context=ProgramsContext(
                task.context.short,
                task.context.query,
                task.context.long,
                tuple(mapping[before[d]] for d in range(DIGITS)),
            ),
        )

    def render(self, task: Task) -> str:
        """Examples as ``[x] -> [y]`` lines, queries as ``[x] -> ?``, then the answer format."""
        lines = ["Examples:"]
        lines += [f"{_show(x)} -> {_show(y)}" for x, y in task.support]
        lines += ["", "Queries:"]
        lines += [f"{_show(q)} -> ?" for q in task.query]
        lines += [
            "",
            f"Give the output list of each of the {len(task.query)} queries, in order, "
            f"as one JSON list of lists on the last line, e.g. "
            f"Answer: [[...], ...] with {len(task.query)} inner lists.",
        ]
        return "\n".join(lines)

    def element(self, value: object) -> object:
        """One answer entry: a list of integers (any integers; bools and floats are not)."""
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"{value!r} is not a list of integers")
        for v in value:
            if isinstance(v, bool) or not isinstance(v, int):
                raise ValueError(f"{v!r} in {value!r} is not an integer")
        return list(value)

    def __repr__(self) -> str:
        return (
            f"Programs(variations={self.variations}, support={self.support}, "
            f"queries={self.queries}, hint={self.hint})"
        )


def _show(xs: tuple[int, ...]) -> str:
    return "[" + ", ".join(map(str, xs)) + "]"
