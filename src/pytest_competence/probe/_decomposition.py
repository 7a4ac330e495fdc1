"""Output decomposition at the answer position: a default toward "yes" and an instance signal.

CBE paper, arXiv:2610.22894, App. E.3 (Table 11) and App. I: "A balanced-cell decomposition
distinguishes the presentation-level default δ toward 'yes' from instance signal s". For one
presentation at one level, with m = logit(yes) − logit(no) at the answer position and μ_g the
mean of m over the prompts whose gold is g (each gold cell counts equally, whatever its size):

    δ = (μ_yes + μ_no) / 2      (the default toward "yes", in logits)
    s = (μ_yes − μ_no) / 2      (the instance signal, in logits)

A readout follows the gold where ``s > |δ|``; a default can overwhelm the signal (δ > s > 0).
For K > 2 answers, ℓ_a the score of answer a, averaged within each gold class, then over classes:

    s   = mean_g  mean_{gold = g} [ ℓ_gold − max_{b ≠ gold} ℓ_b ]
    δ_a = mean_g  mean_{gold = g} [ ℓ_a − mean_{b ≠ a} ℓ_b ]     (for K = 2: s and δ = δ_yes)

Only score differences enter, so log-probabilities serve as well as logits. Each cell also gives
the readout's accuracy and yes-rate, each with a percentile bootstrap interval by instance.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from pytest_competence.stats.bootstrap import BootstrapInterval, paired_bootstrap

from ._rows import PromptRows, evaluation_rows, plain_floats

if TYPE_CHECKING:
    from pytest_competence.engine.evaluation import Evaluation

__all__ = [
    "DecompositionCell",
    "answer_of",
    "decompose",
    "decompose_evaluation",
    "lens_decomposition",
    "score_matrix",
]


@dataclass(frozen=True)
class DecompositionCell:
    """The decomposition of one presentation at one level (``level`` ``None``: pooled).

    ``default`` is δ toward ``answers[0]`` ("yes"), ``signal`` is s; ``defaults`` holds δ_a for
    every answer of a space of more than two (empty for a binary one). ``prompts`` counts the
    cell's rows, ``scored`` those with finite scores; ``gold_counts`` the scored rows per gold
    answer. Estimates are NaN where undefined (fewer than two gold answers scored).
    """

    presentation: str
    level: int | None
    prompts: int
    scored: int
    gold_counts: dict[str, int]
    accuracy: BootstrapInterval
    yes_rate: BootstrapInterval
    default: BootstrapInterval
    signal: BootstrapInterval
    defaults: dict[str, BootstrapInterval] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values: each figure as ``[estimate, low, high]`` (NaN as ``None``)."""

        def triple(b: BootstrapInterval) -> list[float | None]:
            return plain_floats([b.estimate, b.low, b.high])

        return {
            "presentation": self.presentation,
            "level": self.level,
            "prompts": self.prompts,
            "scored": self.scored,
            "gold_counts": dict(self.gold_counts),
            "accuracy": triple(self.accuracy),
            "yes_rate": triple(self.yes_rate),
            "default": triple(self.default),
            "signal": triple(self.signal),
            "defaults": {a: triple(b) for a, b in self.defaults.items()},
        }


def score_matrix(
    results: Sequence[Mapping[str, float] | BaseException], answers: Sequence[str]
) -> np.ndarray:
    """(N, K) scores from a backend's ``score(prompts, answers)`` (NaN rows for exceptions)."""
    out = np.full((len(results), len(answers)), np.nan)
    for i, got in enumerate(results):
        if not isinstance(got, BaseException):
            out[i] = [got[a] for a in answers]
    return out


def answer_of(scores: np.ndarray) -> np.ndarray:
    """The candidate-scoring readout's answer index per row (last axis: answers); −1 where
    a score is not finite or the best score is tied."""
    best = np.argmax(scores, axis=-1)
    top = np.take_along_axis(scores, best[..., None], axis=-1)
    unique = (scores == top).sum(axis=-1) == 1
    ok = np.isfinite(scores).all(axis=-1) & unique
    return np.where(ok, best, -1)


def decompose(
    scores: ArrayLike,
    rows: PromptRows,
    *,
    B: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
    per_level: bool = True,
    pooled: bool = True,
) -> list[DecompositionCell]:
    """δ, s, accuracy and yes-rate per presentation × level (module docstring).

    ``scores`` is (N, K): row i the scores of ``rows.answers`` for prompt i (logits or
    log-probabilities; NaN where the prompt got none — an error, a prompt too long);
    ``rows`` labels the rows (:class:`~.rows.PromptRows`). ``B`` = 0 gives estimates without
    intervals. Cells in :meth:`PromptRows.cells` order.
    """
    values = np.asarray(scores, dtype=float)
    if values.shape != (len(rows), len(rows.answers)):
        raise ValueError(
            f"scores must be (N, K) = ({len(rows)}, {len(rows.answers)}): one "
            f"row per prompt, one column per answer of {rows.answers!r}; got "
            f"{values.shape}"
        )
    return [
        _cell(
            values[c.index],
            rows.take(c.index),
            c.presentation,
            c.level,
            B=B,
            seed=seed,
            confidence=confidence,
        )
        for c in rows.cells(per_level=per_level, pooled=pooled)
    ]


def decompose_evaluation(
    evaluation: Evaluation, *, B: int = 2000, seed: int = 0, confidence: float = 0.95
) -> list[DecompositionCell] | None:
    """:func:`decompose` of an evaluation's own scores — the candidate-scoring readout's, kept
    as it answered (:attr:`~pytest_competence.engine.evaluation.Evaluation.scores`): no second model
    pass. ``None`` when no answer of the evaluation came from scoring (generated answers carry
    no margins; for an ``hf:`` model the probes read them: :func:`~.run.probe_evaluation`)."""
    scores = evaluation.scores
    if scores is None:
        return None
    rows, kept = evaluation_rows(evaluation, evaluation.score_answers)
    flat = scores.reshape(-1, scores.shape[-1])[kept]
    return decompose(flat, rows, B=B, seed=seed, confidence=confidence)


def lens_decomposition(lens: ArrayLike, rows: PromptRows) -> list[dict[str, Any]]:
    """δ, s and accuracy of each layer's logit-lens scores, per presentation × level.

    ``lens`` is (N, layers, K) (:attr:`~.internals.AnswerStates.lens`). Point estimates only
    (arrays over layers); one dict per cell: ``presentation``, ``level``, ``default``,
    ``signal``, ``accuracy``.
    """
    values = np.asarray(lens, dtype=float)
    if values.ndim != 3 or values.shape[0] != len(rows) or values.shape[2] != len(rows.answers):
        raise ValueError(
            f"lens must be (N, layers, K) with N = {len(rows)} and K = "
            f"{len(rows.answers)}, got {values.shape}"
        )
    out = []
    for c in rows.cells():
        part, gold = values[c.index], rows.gold[c.index]
        scored = np.isfinite(part).all(axis=-1)  # (n, layers)
        columns = _margin_columns(
            np.where(scored[..., None], part, 0.0), gold, scored, len(rows.answers)
        )
        statistic = _margin_statistic(_present(columns[:, -1]), len(rows.answers))
        default, signal, _ = statistic(columns.sum(axis=0))  # sums: (layers, m)
        correct = (answer_of(part) == gold[:, None]).mean(axis=0)
        out.append(
            {
                "presentation": c.presentation,
                "level": c.level,
                "default": default,
                "signal": signal,
                "accuracy": correct,
            }
        )
    return out


# -- the figures as functions of per-row columns (for the instance bootstrap) --------------------


def _cell(
    scores: np.ndarray,
    rows: PromptRows,
    presentation: str,
    level: int | None,
    *,
    B: int,
    seed: int,
    confidence: float,
) -> DecompositionCell:
    K = len(rows.answers)
    scored = np.isfinite(scores).all(axis=1)
    answer = answer_of(scores)
    gold = rows.gold
    columns = _margin_columns(np.where(scored[:, None], scores, 0.0), gold, scored, K)
    statistic = _margin_statistic(_present(columns), K)
    accuracy = np.column_stack([answer == gold, np.ones(len(gold))]).astype(float)
    yes_rate = np.column_stack([answer == 0, answer >= 0]).astype(float)
    boot: Callable[..., BootstrapInterval] = _bootstrapper(
        rows, B=B, seed=seed, confidence=confidence
    )
    default = boot(columns, lambda s: statistic(s)[0])
    signal = boot(columns, lambda s: statistic(s)[1])
    defaults = (
        {
            a: boot(columns, lambda s, k=k: statistic(s)[2][..., k])
            for k, a in enumerate(rows.answers)
        }
        if K > 2
        else {}
    )
    counts = np.bincount(gold[scored], minlength=K)
    return DecompositionCell(
        presentation,
        level,
        len(gold),
        int(scored.sum()),
        {a: int(counts[k]) for k, a in enumerate(rows.answers)},
        boot(accuracy, _ratio),
        boot(yes_rate, _ratio),
        default,
        signal,
        defaults,
    )


def _margin_columns(scores: np.ndarray, gold: np.ndarray, scored: np.ndarray, K: int) -> np.ndarray:
    """Per row (leading axes kept), K blocks of (2 + K) columns, block g nonzero only on
    scored rows of gold g: [1, ℓ_gold − max_{b≠gold} ℓ_b, (ℓ_a − mean_{b≠a} ℓ_b) for each a]."""
    gold_score = np.take_along_axis(scores, _expand(gold, scores), axis=-1)[..., 0]
    others = np.where(np.arange(K) == _expand(gold, scores), -np.inf, scores)
    signal = gold_score - others.max(axis=-1)
    centred = scores - (scores.sum(axis=-1, keepdims=True) - scores) / (K - 1)
    block = np.concatenate([np.ones(signal.shape + (1,)), signal[..., None], centred], axis=-1)
    member = (np.arange(K) == _expand(gold, scores)) & scored[..., None]  # (..., K)
    return (member[..., :, None] * block[..., None, :]).reshape(*signal.shape, K * (2 + K))


def _expand(gold: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """``gold`` (n,) broadcast against ``scores`` (n, …, K) with a trailing axis of 1."""
    return gold.reshape((-1,) + (1,) * (scores.ndim - 1))


def _present(columns: np.ndarray) -> np.ndarray:
    """The gold classes with scored rows in the whole cell (the classes every replicate must
    keep for its δ and s to mean the same)."""
    total = columns.reshape(-1, columns.shape[-1]).sum(axis=0)
    K = int(round((-2 + np.sqrt(4 + 4 * columns.shape[-1])) / 2))  # m = K(2 + K)
    return total.reshape(K, 2 + K)[:, 0] > 0


def _margin_statistic(
    present: np.ndarray, K: int
) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``sums → (δ toward answers[0], s, δ per answer)``: class means averaged over the
    ``present`` classes; NaN where fewer than two are present, or a replicate lost one."""

    def statistic(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        blocks = sums.reshape(*sums.shape[:-1], K, 2 + K)
        count = blocks[..., 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            means = blocks[..., 1:] / count[..., None]  # (..., K, 1 + K)
        kept = means[..., present, :]
        lost = (count[..., present] == 0).any(axis=-1)
        undefined = lost | (present.sum() < 2)
        averaged = (
            kept.mean(axis=-2) if present.any() else np.full(means.shape[:-2] + (1 + K,), np.nan)
        )
        averaged = np.where(undefined[..., None], np.nan, averaged)
        return averaged[..., 1], averaged[..., 0], averaged[..., 1:]

    return statistic


def _ratio(sums: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sums[..., 1] > 0, sums[..., 0] / sums[..., 1], np.nan)


def _bootstrapper(
    rows: PromptRows, *, B: int, seed: int, confidence: float
) -> Callable[..., BootstrapInterval]:
    """Intervals by instance (clusters), levels as strata."""

    def boot(
        columns: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray]
    ) -> BootstrapInterval:
        estimate = float(np.asarray(statistic(columns.sum(axis=0))))
        if B == 0 or not len(columns):
            return BootstrapInterval(estimate, np.nan, np.nan, B, confidence, B)
        return paired_bootstrap(
            columns,
            statistic,
            strata=rows.level,
            clusters=rows.instance,
            B=B,
            seed=seed,
            confidence=confidence,
        )

    return boot
