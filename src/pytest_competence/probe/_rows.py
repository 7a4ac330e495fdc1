"""What the probes group by: one row per prompt, as compact arrays.

Every figure of :mod:`pytest_competence.probe` is per presentation × level (CBE paper,
arXiv:2610.22894, Table 11 and App. I report each presentation apart, and App. I follows
decodability across n), bootstrapped or cross-validated by instance. :class:`PromptRows`
holds exactly that per prompt — the gold answer as an index into the answer space, the level,
the presentation and the instance id — and nothing proportional to the prompt text.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from pytest_competence.engine.evaluation import Evaluation
    from pytest_competence.strategies import Prompt

__all__ = ["Cell", "PromptRows", "evaluation_rows", "plain_floats"]


def plain_floats(values: ArrayLike) -> list[float | None]:
    """JSON numbers for a report: 6 significant digits (margins of a near-indifferent model
    are 1e-5 logits), NaN and infinities as ``None``."""
    return [
        float(f"{v:.6g}") if np.isfinite(v) else None
        for v in np.asarray(values, dtype=float).reshape(-1).tolist()
    ]


@dataclass(frozen=True)
class Cell:
    """The rows of one presentation at one level (``level`` ``None``: all levels pooled)."""

    presentation: str
    level: int | None
    index: np.ndarray  # row indices into the PromptRows


@dataclass(frozen=True)
class PromptRows:
    """One row per prompt: its gold, level, presentation and instance.

    ``answers`` is the answer space, in the column order of every score array (``answers[0]``
    is the positive answer of a binary space: the "yes" of yes − no margins); ``gold`` (N,)
    indexes it; ``level`` (N,) is the prompt's ``n`` parameter (0 without one, as the compact
    evaluation arrays keep it); ``presentation`` and ``instance`` are (N,) string arrays.
    Build it from prompts with :meth:`of`, or directly from arrays (an evaluation's
    instance × presentation arrays flattened row-major, for instance).
    """

    answers: tuple[str, ...]
    gold: np.ndarray
    level: np.ndarray
    presentation: np.ndarray
    instance: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.gold)
        for name in ("level", "presentation", "instance"):
            if np.shape(getattr(self, name)) != (n,):
                raise ValueError(
                    f"PromptRows.{name} must have shape ({n},) like gold, got "
                    f"{np.shape(getattr(self, name))}"
                )
        if len(self.answers) < 2 or len(set(self.answers)) != len(self.answers):
            raise ValueError(
                f"answers must name at least two distinct answers, got {self.answers!r}"
            )
        gold = np.asarray(self.gold)
        if n and (gold.dtype.kind not in "iu" or gold.min() < 0 or gold.max() >= len(self.answers)):
            raise ValueError(
                f"gold must index answers (0 … {len(self.answers) - 1}), got "
                f"values in [{gold.min()}, {gold.max()}] (dtype={gold.dtype})"
            )

    @classmethod
    def of(cls, prompts: Sequence[Prompt]) -> PromptRows:
        """The rows of ``prompts``, which must share one answer space."""
        if not prompts:
            raise ValueError("no prompts: the probes need at least one")
        answers = tuple(prompts[0].answer_space)
        other = next((p for p in prompts if tuple(p.answer_space) != answers), None)
        if other is not None:
            raise ValueError(
                f"prompts must share one answer space: {answers!r} and "
                f"{tuple(other.answer_space)!r} ({other.instance_id}); probe one "
                f"family's design at a time"
            )
        position = {a: k for k, a in enumerate(answers)}
        stray = next((p for p in prompts if p.gold not in position), None)
        if stray is not None:
            raise ValueError(
                f"prompt {stray.instance_id} ({stray.presentation}) has gold "
                f"{stray.gold!r}, outside its answer space {answers!r}"
            )
        return cls(
            answers,
            np.fromiter((position[p.gold] for p in prompts), np.int64, len(prompts)),
            np.fromiter((int(p.params.get("n", 0)) for p in prompts), np.int64, len(prompts)),
            np.array([p.presentation for p in prompts], dtype=object),
            np.array([p.instance_id for p in prompts], dtype=object),
        )

    def __len__(self) -> int:
        return len(self.gold)

    @property
    def binary(self) -> bool:
        return len(self.answers) == 2

    def take(self, index: ArrayLike) -> PromptRows:
        """The rows at ``index`` (indices or a boolean mask)."""
        at = np.asarray(index)
        return PromptRows(
            self.answers, self.gold[at], self.level[at], self.presentation[at], self.instance[at]
        )

    def presentations(self) -> list[str]:
        """The presentations, in first-seen order."""
        return list(dict.fromkeys(self.presentation.tolist()))

    def cells(self, *, per_level: bool = True, pooled: bool = True) -> Iterator[Cell]:
        """Per presentation (first-seen order): each level's rows (ascending), then all its
        rows pooled over levels (``level`` ``None``; only when there are several levels)."""
        levels = np.unique(self.level)
        for name in self.presentations():
            mine = self.presentation == name
            if per_level:
                for level in levels:
                    index = np.flatnonzero(mine & (self.level == level))
                    if len(index):
                        yield Cell(name, int(level), index)
            if pooled and (len(np.unique(self.level[mine])) > 1 or not per_level):
                yield Cell(name, None, np.flatnonzero(mine))


def evaluation_rows(
    evaluation: Evaluation, answers: Sequence[str]
) -> tuple[PromptRows, np.ndarray]:
    """The rows of an evaluation's prompts (instance × presentation, flattened row-major, as
    its arrays are) over the answer space ``answers``, and the (N·P,) mask of the prompts kept:
    those whose gold is one of ``answers`` (a prompt of another answer space is left out)."""
    P = len(evaluation.presentations)
    codes = evaluation.array("gold").reshape(-1)
    gold = np.full(len(codes), -1, dtype=np.int64)
    for k, answer in enumerate(answers):
        code = evaluation.answer_code(answer)
        if code >= 0:
            gold[codes == code] = k
    kept = gold >= 0
    ids = np.array(evaluation.ids, dtype=object)
    rows = PromptRows(
        tuple(answers),
        gold[kept],
        np.repeat(evaluation.level, P)[kept],
        np.tile(np.array(evaluation.presentations, dtype=object), len(ids))[kept],
        np.repeat(ids, P)[kept],
    )
    return rows, kept
