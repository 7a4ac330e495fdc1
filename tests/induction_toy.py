"""A toy rule-induction family for the engine's systematicity tests (no real family needed).

``f(x) = x + n`` over integers, level ``n`` in 1…6: four support pairs and two queries. Its
isomorphism types besides ``reorder`` act on the latent task: ``negate`` maps every input and
output ``v ↦ −v`` (the rule becomes ``x − n``); ``relabel`` adds ``c ∈ {0, 1, 2}`` to every input
and output (the rule is unchanged; ``c = 0`` is the identity, so a learner tied to the original
symbols solves some relabelled variations and not others: a systematicity gap). Answers are always recomputed by the interpreter ``x + rule``.
This file is also written verbatim into pytester sessions as a conftest, with
:func:`register`, so it imports nothing from the test suite.
"""

from __future__ import annotations

import numpy as np

from pytest_competence.strategies import FAMILIES
from pytest_competence.strategies._induction import RuleInduction, Task
from pytest_competence.strategies._rng import stream_rng


class Toyshift(RuleInduction):
    """The toy family: learn the offset ``n`` from four examples, apply it to two queries."""

    name = "toyshift"
    isomorphisms = ("reorder", "negate", "relabel")
    levels = (1, 6)
    system = "Infer the rule from the examples. Answer with a JSON list, e.g. Answer: [1, 2]."

    def task(self, n: int, index: int, seed: int) -> Task:
        xs = stream_rng(seed, n, index, 0).choice(100, size=6, replace=False).tolist()
        return Task(
            n, tuple((x, x + n) for x in xs[:4]), tuple(xs[4:]), tuple(x + n for x in xs[4:])
        )

    def vary(self, task: Task, kind: str, rng: np.random.Generator) -> Task:
        sign, shift = (-1, 0) if kind == "negate" else (1, int(rng.integers(0, 3)))
        rule = sign * task.rule

        def phi(v: int) -> int:
            return sign * v + shift

        query = tuple(phi(x) for x in task.query)
        support = tuple((phi(x), phi(y)) for x, y in task.support)
        support = tuple(support[i] for i in rng.permutation(len(support)))  # π, so K differ
        return Task(rule, support, query, tuple(x + rule for x in query))

    def render(self, task: Task) -> str:
        lines = [f"{x} -> {y}" for x, y in task.support] + [f"{x} -> ?" for x in task.query]
        return "\n".join(lines) + "\nAnswer: [..] with one number per query."

    def element(self, value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{value!r} is not an integer")
        return value


def register() -> None:
    """Make ``family="toyshift"`` and its systematicity analysis known to this process."""
    from pytest_competence.engine.analysis import FAMILY_ANALYSES
    from pytest_competence.strategies._induction.metrics import systematicity_summary

    FAMILIES["toyshift"] = Toyshift
    FAMILY_ANALYSES["toyshift"] = systematicity_summary
