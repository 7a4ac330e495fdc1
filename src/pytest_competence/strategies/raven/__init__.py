"""Symbolic Raven matrices: infer one hidden rule per feature of a 3×3 grid (systematicity paper, arXiv:2609.13948, §4.2).

Each task is a 3×3 grid of panels with ``F`` integer features (``0..9``); every feature follows
one hidden rule along the rows — constant, progression ±1/±2, modular addition or subtraction,
minimum, maximum or distribute-three (:mod:`._rules`), modulo 10. Rows 1–2 are the support
(``x`` = the first two panels, ``y`` = the third), row 3's first two panels the one query, and the
answer is the masked panel as a JSON list of ``F`` integers. The level ``n`` is ``F``: 2 is the
paper's default, 3 its harder setting (App. B Fig. 10); 1..4 are drawn.

Every task is checked by enumeration before it is used: rows 1–2 single out each feature's rule
among the rule set (:func:`._rules.identifiable`; features are redrawn until they do), and
every feature correspondence between columns that explains the grid predicts the same missing
panel (:func:`._rules.answers_over_alignments`; the values are redrawn, keeping the rules,
until it does) — so the answer of every column-permuted variation is determined by its text.

Isomorphisms (systematicity paper, arXiv:2609.13948, §3.4): ``"reorder"`` shows rows 1 and 2 in a random order (``σ`` is
trivial with one query; there are only two orders, so half the variations repeat the original
— distribute-three is symmetric in the two rows, so the swap is an isomorphism); ``"permute"``
is feature rebinding: each column lists its features in its own order (drawn independently per
column, never the same order in all three columns when ``F > 1``), and the answer is the missing
panel in column 3's order. With ``F = 1`` there is nothing to permute.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from pytest_competence.protocol import InvalidArgument, Prompt

from .._induction import REORDER, RuleInduction, Task
from .._rng import stream_rng
from ._rules import MODULUS, RULES, answers_over_alignments, draw_rows, solve

__all__ = ["EXACT_RULES", "PERMUTE", "RULES", "SYSTEM", "Raven", "render_grid", "system_prompt"]

PERMUTE = "permute"
_RULES, _VALUES = 0, 1  # streams of task(): the rules, then the rows drawn for them

#: systematicity paper, arXiv:2609.13948, App. C Fig. 12, verbatim; ``n_features`` is replaced by ``F`` in each prompt.
SYSTEM = (
    "Your task is to predict integers in structured sequences of integers. Specifically, you "
    "will be presented with tasks that consist of three rows with three columns each. Each panel "
    "in this three by three matrix contains n_features feature(s) encoded as integer(s). Within "
    "a row the n_features feature(s) of the last column can be predicted by applying the correct "
    "rules to the first two columns. Within a task, all rows follow the same underlying rules "
    "applied to different inputs.\n"
    "Each row is delimited by ||, each column is delimited by | and the features within a panel "
    "are separated by spaces. The last n_features feature(s) in the last panel are masked with "
    "n_features question marks, '?'.\n"
    "1. Try to identify which integers in a given task are governed by the same underlying "
    "rules.\n"
    "2. Try to identify the n_features rule(s) that govern a task.\n"
    "3. Consider the following rules/patterns:\n"
    "- Constant, e.g. the same integer is repeated\n"
    "- Progression, e.g. integers are systematically incremented or decremented by steps of +1, "
    "+2, -1, or -2\n"
    "- Modular addition, e.g. two integers prior in the sequence are summed to produce the next "
    "integer\n"
    "- Modular subtraction, e.g. two integers prior in the sequence are subtracted to produce "
    "the next integer\n"
    "- Maximum/Minimum, e.g. the maximum/minimum of two integers prior in the sequence makes up "
    "the next integer"
)


#: The rule list of :data:`SYSTEM` stated exactly (the default). Fig. 12's list omits
#: distribute-three and the modulus, yet about a quarter of the tasks use distribute-three, and
#: under a looser reading of it two panels fit some tasks (e.g. ``raven/seed=4/n=2/5``). Stated
#: exactly, every rule a task can use is named, and the enumeration that makes each task's
#: answer unique (:func:`._rules.identifiable`, :func:`._rules.answers_over_alignments`)
#: applies to the text as read.
EXACT_RULES = (
    "3. Consider the following rules/patterns; all arithmetic is modulo 10 (integers 0 to 9), "
    "and each feature follows one rule in all three rows:\n"
    "- Constant: the same integer three times in a row (a, a, a)\n"
    "- Progression: the integer grows or shrinks by the same step of +1, +2, -1 or -2 along the "
    "row (a, a+d, a+2d)\n"
    "- Modular addition: the third integer is the sum of the first two (a, b, a+b)\n"
    "- Modular subtraction: the third integer is the first minus the second (a, b, a-b)\n"
    "- Maximum/Minimum: the third integer is the maximum/minimum of the first two\n"
    "- Distribution of three values: three different integers; each row holds all three, "
    "each row a different cyclic rotation of the first row's order, so every integer appears "
    "once in every row and once in every column"
)
_FIGURE_RULES = SYSTEM[SYSTEM.index("3. Consider") :]


def system_prompt(features: int, *, verbatim: bool = False) -> str:
    """The instructions for panels of ``features`` features: Fig. 12's, with its rule list
    stated exactly (:data:`EXACT_RULES`) unless ``verbatim``."""
    text = SYSTEM if verbatim else SYSTEM.replace(_FIGURE_RULES, EXACT_RULES)
    return text.replace("n_features", str(features))


def render_grid(rows: tuple[tuple[tuple[int, ...], ...], ...]) -> str:
    """The paper's grid: rows split by ``||``, columns by ``|``, features by spaces, the masked
    final panel as ``F`` question marks."""
    f = len(rows[0][0])
    cells = [[" ".join(map(str, panel)) for panel in panels] for panels in rows]
    cells[-1] = cells[-1] + [" ".join("?" * f)]
    return " || ".join(" | ".join(panels) for panels in cells)


def _grid(task: Task) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Rows 1–3 as shown: support rows in their order, then the query's two panels."""
    return tuple((x[0], x[1], y) for x, y in task.support) + (task.query[0],)


class Raven(RuleInduction):
    """The symbolic Raven matrices family (systematicity paper, arXiv:2609.13948, §4.2, App. C Fig. 12).

    Args:
        variations: ``K``, the variations sampled per isomorphism type and task.
        verbatim: show Fig. 12's rule list word for word, which omits distribute-three and
            the modulus (beyond the paper, the default names every rule exactly:
            :data:`EXACT_RULES`).

    A task's ``rule`` is the tuple of ``F`` rule names (latent feature order) and its
    ``context`` the binding: ``context[c][s]`` is the latent feature shown in slot ``s`` of
    column ``c`` (the identity in the original task).
    """

    name = "raven"
    level_name = "features"
    isomorphisms = (REORDER, PERMUTE)
    levels = (1, 4)
    shortcuts = ("ref:raven-aligned", "ref:surface")

    @classmethod
    def shortcut_policies(cls) -> Mapping[str, Any]:
        """The rule-induction policies and ``raven-aligned``."""
        from .policies import RAVEN_POLICIES

        return {**super().shortcut_policies(), **RAVEN_POLICIES}

    system = SYSTEM

    def __init__(self, *, variations: int = 5, verbatim: bool = False) -> None:
        super().__init__(variations=variations)
        if not isinstance(verbatim, bool):
            raise InvalidArgument(
                f"Expected verbatim to be True or False (Fig. 12's rule list "
                f"word for word), but got verbatim={verbatim!r}"
            )
        self.verbatim = verbatim

    def options(self) -> dict[str, Any]:
        """The constructor keywords that rebuild this family (recorded with every prompt)."""
        return {"variations": self.variations, **({"verbatim": True} if self.verbatim else {})}

    def __repr__(self) -> str:
        extra = ", verbatim=True" if self.verbatim else ""
        return f"Raven(variations={self.variations}{extra})"

    def task(self, n: int, index: int, seed: int) -> Task:
        """Task ``index`` with ``F = n`` features: rules, then rows that identify them."""
        self.check_level(n)
        pick = stream_rng(seed, n, index, _RULES).integers(0, len(RULES), size=n).tolist()
        rule = tuple(RULES[i] for i in pick)
        rng = stream_rng(seed, n, index, _VALUES)
        while True:
            features = [draw_rows(name, rng) for name in rule]
            # rows[r][c] = panel: feature i of row r, column c is features[i][r][c]
            rows = tuple(
                tuple(tuple(feat[r][c] for feat in features) for c in range(3)) for r in range(3)
            )
            columns = [[rows[r][c] for r in range(3)] for c in range(3)]
            if len(answers_over_alignments(columns)) == 1:
                break
        identity = tuple(range(n))
        return self._build(rule, (identity,) * 3, rows[:2], rows[2][:2])

    def _build(
        self,
        rule: tuple[str, ...],
        binding: tuple[tuple[int, ...], ...],
        support_rows: Any,
        query: Any,
    ) -> Task:
        """A task from shown panels, its answer from the interpreter."""
        support = tuple(((panels[0], panels[1]), panels[2]) for panels in support_rows)
        answer = solve(rule, binding, tuple(support_rows) + (tuple(query),))
        return Task(rule, support, (tuple(query),), answer, binding)

    def reorder(self, task: Task, rng: np.random.Generator) -> Task:
        """``π`` on the two support rows; ``σ`` is trivial and the one answer panel stays whole.

        (The base would permute ``answers`` as if each entry were a query; here they are the
        features of the single missing panel.)
        """
        pi = rng.permutation(len(task.support))
        return replace(task, support=tuple(task.support[i] for i in pi))

    def vary(self, task: Task, kind: str, rng: np.random.Generator) -> Task:
        """Feature rebinding: a new order of the features in each column, answer recomputed."""
        if kind != PERMUTE:
            raise ValueError(f"raven has no isomorphism {kind!r}")
        f = len(task.rule)
        while True:
            order = tuple(tuple(int(v) for v in rng.permutation(f)) for _ in range(3))
            if f == 1 or len(set(order)) > 1:
                break
        binding = tuple(tuple(task.context[c][order[c][s]] for s in range(f)) for c in range(3))
        rows = [
            tuple(tuple(panel[order[c][s]] for s in range(f)) for c, panel in enumerate(p))
            for p in _grid(task)
        ]
        return self._build(task.rule, binding, rows[:2], rows[2])

    def render(self, task: Task) -> str:
        """The grid on one line, then how to answer."""
        f = len(task.rule)
        return (
            f"{render_grid(_grid(task))}\n\n"
            f"Give the {f} masked integer(s) of the last panel, in the panel's order, as a "
            f"JSON list on a final line: Answer: [...]"
        )

    def element(self, value: object) -> int:
        """One feature of the missing panel: an integer in 0..9."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{value!r} is not an integer")
        if not 0 <= value < MODULUS:
            raise ValueError(f"{value} is not in 0..{MODULUS - 1}")
        return value

    def prompts(
        self, task: Task, presentations: Any, *, n: int, index: int, seed: int
    ) -> tuple[Prompt, ...]:
        """The base's prompts, with Fig. 12's ``n_features`` filled in as ``F = n``."""
        system = system_prompt(n, verbatim=self.verbatim)
        return tuple(
            replace(p, system=system)
            for p in super().prompts(task, presentations, n=n, index=index, seed=seed)
        )
