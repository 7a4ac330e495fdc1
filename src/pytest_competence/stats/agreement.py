"""Agreement, chance correction and systematicity figures over matched answers.

Chance-corrected invariance κ follows the CBE paper, arXiv:2610.22894, §3.2 and App. A ("Two different chance
references"); identical-prompt repeat agreement CBE paper, arXiv:2610.22894, App. H; majority over attempts and the
any/fraction/all systematicity metrics systematicity paper, arXiv:2609.13948, §3.5–3.6; the within/between variance
decomposition systematicity paper, arXiv:2609.13948, App. A; family and per-transformation consistency CRTBench paper, §2.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from pytest_competence.stats.intervals import check_probability

__all__ = [
    "VarianceDecomposition",
    "chance_agreement",
    "family_consistency",
    "kappa",
    "kappa_bar",
    "majority_vote",
    "per_transformation_consistency",
    "repeat_agreement",
    "systematicity",
    "variance_decomposition",
]


def chance_agreement(yes_rate: float) -> float:
    """ι_e = q² + (1 − q)², the pooled output-bias chance reference (CBE paper, arXiv:2610.22894, §3.2, App. A).

    ``yes_rate`` is q, the pooled yes-rate over both presentations within one level: the
    agreement expected of two independent answers that share the marginal rate q.
    """
    q = check_probability(yes_rate, "yes_rate")
    return q * q + (1.0 - q) * (1.0 - q)


def kappa(invariance: float, yes_rate: float) -> float | None:
    """κ_n = (ι_n − ι_e) / (1 − ι_e) with ι_e = q² + (1 − q)² (CBE paper, arXiv:2610.22894, §3.2, App. A).

    Returns ``None`` when q is 0 or 1: the outputs are constant, ι_e = 1 and "the reported
    normalization is undefined" (CBE paper, arXiv:2610.22894, App. A). κ discounts a common-bias independent-answer
    reference; its sign is not the sign of correctness covariance (same appendix).
    """
    iota = check_probability(invariance, "invariance")
    q = check_probability(yes_rate, "yes_rate")
    if q in (0.0, 1.0):
        return None
    # The same κ written as 1 − (observed disagreement)/(expected disagreement), with
    # 1 − ι_e = 2q(1 − q) exactly: the textbook form cancels catastrophically near q = 0 or 1
    # (1 − ι_e rounds to 0 below q ≈ 1e-17), this one keeps full precision there.
    return 1.0 - (1.0 - iota) / (2.0 * q * (1.0 - q))


def kappa_bar(kappas: Iterable[float | None]) -> float | None:
    """κ̄, the mean of κ_n over the levels where it is defined (CBE paper, arXiv:2610.22894, §3.2).

    Undefined levels (``None`` or NaN, i.e. constant outputs) are left out of the mean rather
    than counted as zero; ``None`` when no level is defined.
    """
    defined = [float(k) for k in kappas if k is not None and not np.isnan(k)]
    return sum(defined) / len(defined) if defined else None


def repeat_agreement(
    first_answers: Sequence[str | None], repeat_answers: Sequence[str | None]
) -> float | None:
    """Identical-prompt repeat agreement on jointly parsed pairs (CBE paper, arXiv:2610.22894, App. H.1).

    The share of pairs whose two answers are equal, among pairs where both answers parsed
    (``None`` marks an invalid answer): "Both agreement measures condition on parseable answers
    in the corresponding pair." ``None`` when no pair parsed on both sides. The App. H figure
    "invariance − repeat agreement" is left to the caller, who holds both on matched prompts.

    Raises:
        ValueError: the two sequences have different lengths.
    """
    if len(first_answers) != len(repeat_answers):
        raise ValueError(
            f"first_answers and repeat_answers must be matched prompt by prompt, got lengths "
            f"{len(first_answers)} and {len(repeat_answers)}"
        )
    pairs = [
        (a, b)
        for a, b in zip(first_answers, repeat_answers, strict=True)
        if a is not None and b is not None
    ]
    if not pairs:
        return None
    return sum(a == b for a, b in pairs) / len(pairs)


def majority_vote(answers: Sequence[str | None]) -> str | None:
    """The answer given in a strict majority of all attempts, else ``None`` (systematicity paper, arXiv:2609.13948, §3.6).

    systematicity paper, arXiv:2609.13948, §3.6 counts a variation as passed "if it was correctly solved in the majority of
    the attempts" (N = 5 there). The rule here keeps exactly that meaning for any gold answer:
    an answer wins only with more than half of *all* attempts, invalid ones (``None``) counted
    in the denominator, so ``majority_vote(answers) == gold`` holds exactly when the attempts
    were correct in the majority. A tie or a mere plurality therefore gives ``None`` — with an
    even number of attempts, 2 of 4 is not a majority — and so does an all-invalid or empty list.
    """
    counts = Counter(a for a in answers if a is not None)
    if not counts:
        return None
    answer, votes = counts.most_common(1)[0]
    return answer if 2 * votes > len(answers) else None


def systematicity(solved: ArrayLike) -> dict[str, float]:
    """Solve-any, fraction-solved and solve-all over K variations, task-averaged (systematicity paper, arXiv:2609.13948, §3.5).

    ``solved`` is a boolean array of shape (tasks, variations): pass(τ_k(T)) for each sampled
    isomorphic variation (under stochastic decoding, the majority outcome, systematicity paper, arXiv:2609.13948, §3.6). Per
    task the metrics are max_k, mean_k and min_k of pass; the returned ``"any"``, ``"fraction"``
    and ``"all"`` are their means over tasks, and ``"gap"`` is ``any − all``, the share of tasks
    solved in some variations but not all — the systematicity gap.

    Raises:
        ValueError: ``solved`` is not a non-empty two-dimensional boolean array.
    """
    grid = np.asarray(solved)
    if grid.ndim != 2 or grid.dtype != np.bool_ or 0 in grid.shape:
        raise ValueError(
            f"solved must be a non-empty boolean array of shape (tasks, variations), got "
            f"dtype={grid.dtype}, shape={grid.shape}"
        )
    solve_any = float(grid.any(axis=1).mean())
    solve_all = float(grid.all(axis=1).mean())
    return {
        "any": solve_any,
        "fraction": float(grid.mean(axis=1).mean()),
        "all": solve_all,
        "gap": solve_any - solve_all,
    }


@dataclass(frozen=True)
class VarianceDecomposition:
    """Per-task variance components of success rates over K variations × N attempts.

    Every field is an array with one entry per task (systematicity paper, arXiv:2609.13948, App. A.2). ``between`` is the
    raw estimate ``total − within`` and can be negative; ``rho_between`` is clipped at zero as
    in the systematicity paper, arXiv:2609.13948, Table 1. The normalised fields are NaN where σ²_max = 0, i.e. p̂ ∈ {0, 1}.
    """

    success_rate: np.ndarray  # p̂ over all K·N attempts of the task
    total: np.ndarray  # σ̂²_total
    within: np.ndarray  # σ̂²_within
    between: np.ndarray  # σ̂²_between = σ̂²_total − σ̂²_within, unclipped
    max_variance: np.ndarray  # σ²_max = K/(K − 1) · p̂(1 − p̂)
    rho_total: np.ndarray
    rho_within: np.ndarray
    rho_between: np.ndarray  # max(0, ρ_total − ρ_within)

    def mean(self) -> dict[str, float]:
        """Mean normalised components over the tasks where they are defined (systematicity paper, arXiv:2609.13948, Table 1).

        Tasks with p̂ ∈ {0, 1} have no variance to split and are left out; all-NaN gives NaN.
        """
        defined = ~np.isnan(self.rho_total)
        if not defined.any():
            return {"rho_total": np.nan, "rho_within": np.nan, "rho_between": np.nan}
        return {
            "rho_total": float(self.rho_total[defined].mean()),
            "rho_within": float(self.rho_within[defined].mean()),
            "rho_between": float(self.rho_between[defined].mean()),
        }


def variance_decomposition(passed: ArrayLike) -> VarianceDecomposition:
    """Split success-rate variance into within- and between-variation parts (systematicity paper, arXiv:2609.13948, App. A).

    ``passed`` is boolean, shape (variations K, attempts N) for one task or (tasks, K, N), with
    K > 1 and N > 1. With p̂_k the success rate of variation k and p̂ the task's rate over all
    K·N attempts (systematicity paper, arXiv:2609.13948, App. A.2)::

        σ̂²_total   = 1/(K − 1) · Σ_k (p̂_k − p̂)²
        σ̂²_within  = 1/K · Σ_k p̂_k(1 − p̂_k) / (N − 1)     (unbiased for E_τ[p_τ(1 − p_τ)/N])
        σ̂²_between = σ̂²_total − σ̂²_within
        σ²_max     = K/(K − 1) · p̂(1 − p̂),   ρ_x = σ̂²_x / σ²_max

    "Since our estimators are noisy, ρ_within can be larger than ρ_total, in which case we clip
    ρ_between to zero" (systematicity paper, arXiv:2609.13948, Table 1): only ρ_between is clipped, per task, before any
    averaging; ρ_total and ρ_within are reported as estimated.

    Raises:
        ValueError: ``passed`` is not boolean of shape (K, N) or (tasks, K, N) with K, N > 1.
    """
    grid = np.asarray(passed)
    if grid.ndim == 2:
        grid = grid[np.newaxis]
    if grid.ndim != 3 or grid.dtype != np.bool_ or grid.shape[0] == 0:
        raise ValueError(
            f"passed must be a boolean array of shape (variations, attempts) or (tasks, "
            f"variations, attempts), got dtype={grid.dtype}, shape={np.shape(passed)}"
        )
    _, variations, attempts = grid.shape
    if variations < 2 or attempts < 2:
        raise ValueError(
            f"passed needs at least 2 variations and 2 attempts per variation (systematicity paper, arXiv:2609.13948, App. A "
            f"takes K > 1, N > 1), got K={variations}, N={attempts}"
        )
    rates = grid.mean(axis=2)
    overall = rates.mean(axis=1)
    total = ((rates - overall[:, None]) ** 2).sum(axis=1) / (variations - 1)
    within = (rates * (1.0 - rates) / (attempts - 1)).mean(axis=1)
    between = total - within
    max_variance = variations / (variations - 1) * overall * (1.0 - overall)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(max_variance > 0.0, max_variance, np.nan)
        rho_total, rho_within = total / scale, within / scale
    return VarianceDecomposition(
        success_rate=overall,
        total=total,
        within=within,
        between=between,
        max_variance=max_variance,
        rho_total=rho_total,
        rho_within=rho_within,
        rho_between=np.maximum(rho_total - rho_within, 0.0),
    )


def family_consistency(
    base_correct: ArrayLike,
    reformulation_correct: ArrayLike,
    *,
    applicable: ArrayLike | None = None,
) -> float:
    """Share of families with the base and every applicable reformulation correct (CRTBench paper, §2).

    "A family is consistent only if the model gets every version right": the base question and
    all its reformulations must match their respective labels (for an answer-reversing transform,
    the reversed label — encode that in ``reformulation_correct``). ``base_correct`` has shape
    (units,), ``reformulation_correct`` (units, K); ``applicable`` (units, K) marks which of the
    K transformations a family has, since not all apply to every family (CRTBench paper, §2). CRTBench paper
    App. B excludes unextractable answers from both accuracy and consistency: drop those units
    before calling, or count them wrong, and say which.

    Raises:
        ValueError: shapes disagree or an array is not boolean.
    """
    base, reformulations, mask = _families(base_correct, reformulation_correct, applicable)
    return float((base & (reformulations | ~mask).all(axis=1)).mean())


def per_transformation_consistency(
    base_correct: ArrayLike,
    reformulation_correct: ArrayLike,
    *,
    applicable: ArrayLike | None = None,
) -> np.ndarray:
    """Per transformation k: the share of families with both base and reformulation k correct.

    CRTBench paper, Table 6: "the percentage of families where the model answered both the base question
    and its reformulation correctly for that transformation type", over the families to which
    transformation k applies (contrapositive n = 290 of 350 there). Shapes as in
    :func:`family_consistency`; returns K floats, NaN where no family has transformation k.
    """
    base, reformulations, mask = _families(base_correct, reformulation_correct, applicable)
    both = (base[:, None] & reformulations & mask).sum(axis=0)
    applies = mask.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(applies > 0, both / np.maximum(applies, 1), np.nan)


def _families(
    base_correct: ArrayLike, reformulation_correct: ArrayLike, applicable: ArrayLike | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    base = np.asarray(base_correct)
    reformulations = np.asarray(reformulation_correct)
    if base.ndim != 1 or base.dtype != np.bool_ or base.size == 0:
        raise ValueError(
            f"base_correct must be a non-empty boolean array of shape (units,), got "
            f"dtype={base.dtype}, shape={base.shape}"
        )
    if (
        reformulations.ndim != 2
        or reformulations.dtype != np.bool_
        or reformulations.shape[0] != base.size
    ):
        raise ValueError(
            f"reformulation_correct must be boolean of shape (units={base.size}, K), got "
            f"dtype={reformulations.dtype}, shape={reformulations.shape}"
        )
    mask = np.ones_like(reformulations) if applicable is None else np.asarray(applicable)
    if mask.shape != reformulations.shape or mask.dtype != np.bool_:
        raise ValueError(
            f"applicable must be boolean with the shape of reformulation_correct "
            f"{reformulations.shape}, got dtype={mask.dtype}, shape={mask.shape}"
        )
    return base, reformulations, mask
