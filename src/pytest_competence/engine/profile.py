"""Competence profiles per level θ: the paired masses R/D/U and the all-prompt figures.

Definitions follow the CBE paper, arXiv:2610.22894, §3.2–3.3: R (robust-correct), D (shared-wrong) and U
(presentation-dependent) are computed on *jointly parsed* instances — every presentation valid —
so ``R + D + U = 1`` there; accuracy and coverage are computed on *all* prompts, with invalid
answers counted wrong. With more than two presentations, R is "all correct", D "all wrong" and U
the rest, which reduces to the paper's masses for K = 1. ``all_correct`` is the competence
condition ``C_0 = … = C_K = 1`` (§3.1, eq. 1) on all instances, invalid answers failing it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from pytest_competence import stats
from pytest_competence.engine.evaluation import Evaluation

__all__ = ["METRICS", "SUMMARY_METRICS", "LevelProfile", "kappa_bar", "profile"]

#: Figures a requirement can name, with what each means.
METRICS: dict[str, str] = {
    "robust_correct": "R: all presentations correct, on jointly parsed instances",
    "shared_wrong": "D: all presentations wrong, on jointly parsed instances",
    "presentation_dependent": "U: correctness differs across presentations, jointly parsed",
    "invariance": "ι = R + D on jointly parsed instances",
    "accuracy": "mean over presentations of all-prompt accuracy (invalid counts wrong)",
    "coverage": "lowest valid-answer rate over presentations",
    "all_correct": "share of instances meeting C_0 = … = C_K = 1 (invalid counts wrong)",
    "kappa": "κ_n of the original and the second presentation (undefined for constant answers)",
}

#: Figures of the whole grid rather than of one level.
SUMMARY_METRICS: dict[str, str] = {
    "kappa_bar": "κ̄, the mean of the defined κ_n over the grid (CBE paper, arXiv:2610.22894, §3.2)",
}


@dataclass(frozen=True)
class LevelProfile:
    """The profile of one level: counts, paired masses and per-presentation rates."""

    level: int
    instances: int
    joint: int
    robust_correct: float | None
    shared_wrong: float | None
    presentation_dependent: float | None
    accuracy_by_presentation: Mapping[str, float]
    coverage_by_presentation: Mapping[str, float]
    all_correct: float
    failing: tuple[int, ...]  # indices into the evaluation's items
    kappa: float | None = None  # first pair, CBE paper, arXiv:2610.22894, §3.2

    @property
    def invariance(self) -> float | None:
        """ι = R + D: jointly parsed instances answered alike; ``None`` when undefined."""
        if self.robust_correct is None or self.shared_wrong is None:
            return None
        return self.robust_correct + self.shared_wrong

    @property
    def accuracy(self) -> float:
        """Accuracy averaged over the presentations."""
        rates = list(self.accuracy_by_presentation.values())
        return sum(rates) / len(rates)

    @property
    def coverage(self) -> float:
        """The smallest share of valid answers among the presentations."""
        return min(self.coverage_by_presentation.values())

    def metric(self, name: str) -> float | None:
        """The figure called ``name`` (a key of :data:`METRICS`); ``None`` when undefined."""
        return getattr(self, name)

    def as_dict(self) -> dict[str, object]:
        """The level's figures as the JSON report's ``levels[]`` entry."""
        return {
            "n": self.level,
            "instances": self.instances,
            "jointly_parsed": self.joint,
            **{m: self.metric(m) for m in METRICS},
            "accuracy_by_presentation": dict(self.accuracy_by_presentation),
            "coverage_by_presentation": dict(self.coverage_by_presentation),
        }


def _level(level: int, rows: np.ndarray, evaluation: Evaluation) -> LevelProfile:
    presentations = list(evaluation.presentations)
    correct = evaluation.array("correct")[rows]
    valid = evaluation.array("valid")[rows]
    joint_rows = valid.all(axis=1)
    hits = correct.sum(axis=1)
    joint = int(joint_rows.sum())
    robust = int((joint_rows & (hits == len(presentations))).sum())
    shared = int((joint_rows & (hits == 0)).sum())
    failing = rows[~correct.all(axis=1)]
    total = len(rows)
    kappa = None
    if len(presentations) > 1:
        both = valid[:, 0] & valid[:, 1]
        pairs = int(both.sum())
        if pairs:
            invariance = int((both & (correct[:, 0] == correct[:, 1])).sum()) / pairs
            yes = evaluation.array("answer")[rows][both][:, :2] == evaluation.answer_code("yes")
            kappa = stats.kappa(invariance, int(yes.sum()) / (2 * pairs))

    def share(k: int) -> float | None:
        return k / joint if joint else None

    return LevelProfile(
        level=level,
        instances=total,
        joint=joint,
        robust_correct=share(robust),
        shared_wrong=share(shared),
        presentation_dependent=share(joint - robust - shared),
        accuracy_by_presentation={
            p: int(correct[:, k].sum()) / total for k, p in enumerate(presentations)
        },
        coverage_by_presentation={
            p: int(valid[:, k].sum()) / total for k, p in enumerate(presentations)
        },
        all_correct=(total - len(failing)) / total,
        failing=tuple(failing.tolist()),
        kappa=kappa,
    )


def profile(evaluation: Evaluation, by: str = "n") -> list[LevelProfile]:
    """One :class:`LevelProfile` per level θ (the ``n`` parameter), in design order."""
    if by != "n":
        raise ValueError(f"profiles are per level n; by={by!r} is not kept in the arrays")
    level = evaluation.level
    return [
        _level(int(n), np.flatnonzero(level == n), evaluation)
        for n in dict.fromkeys(level.tolist())
    ]


def kappa_bar(profiles: list[LevelProfile]) -> float | None:
    """κ̄ over the grid: the mean of the defined κ_n (CBE paper, arXiv:2610.22894, §3.2)."""
    return stats.kappa_bar([p.kappa for p in profiles])
