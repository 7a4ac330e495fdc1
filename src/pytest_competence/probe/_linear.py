"""The probe's estimator: L2-regularised logistic regression, AUROC, and folds by instance.

CBE paper, arXiv:2610.22894, App. I fits "cross-validated gold-answer probes" (Belinkov, 2022)
on the residual stream at the answer position; it does not name the estimator. This one is
**ridge logistic regression** with an unpenalised intercept: for standardised features
``x_i`` and labels ``y_i ∈ {0, 1}`` it minimises

    Σ_i [log(1 + exp(η_i)) − y_i·η_i] + (λ/2)·‖w‖²,   η_i = b + x_i·w,

the objective of scikit-learn's ``LogisticRegression(C=1/λ)`` (tested against it). It is
solved exactly by **Newton's method with step halving** in the training rows' span: with the
thin SVD ``X = U S Vᵀ`` of the (centred) training matrix, every minimiser has ``w = V β``
(the representer theorem: the loss sees ``X w`` only and the penalty grows off the row space),
and ``‖w‖ = ‖β‖``, so the problem is the same logistic regression on ``Z = U S``, of rank
``r ≤ min(n, d)``. A residual stream of d = 4,096 with 160 training rows is then a
161-parameter Newton problem; many label vectors (the shuffled-label null) share one ``Z``
and are solved together. The objective is strictly convex (λ > 0, and the intercept column
is orthogonal to the centred ``Z``), so the minimiser is unique and Newton converges.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit
from scipy.stats import rankdata

__all__ = ["RowSpace", "auroc", "instance_folds", "ridge_logistic", "standardise"]

_MAX_ITERATIONS = 100
_HALVINGS = 40
_TEMPORARY_BYTES = 64 * 2**20


def standardise(train: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both matrices centred and scaled by the *training* rows' mean and standard deviation
    (``ddof=0``, as scikit-learn's ``StandardScaler``); a feature constant in training is only
    centred (scale 1), so it carries nothing into the fit."""
    mean = train.mean(axis=0)
    scale = train.std(axis=0)
    scale[scale == 0] = 1.0
    return (train - mean) / scale, (test - mean) / scale


class RowSpace(NamedTuple):
    """A training matrix in its row space: ``Z = U S`` (n × r) and ``V`` (d × r)."""

    Z: np.ndarray
    V: np.ndarray

    @classmethod
    def of(cls, X: np.ndarray) -> RowSpace:
        """The row space of the centred matrix ``X`` (n × d), singular values below
        ``max(S)·max(n, d)·ε`` dropped (numpy's rank rule)."""
        if X.shape[0] == 0 or X.shape[1] == 0:
            return cls(np.zeros((X.shape[0], 0)), np.zeros((X.shape[1], 0)))
        U, S, Vt = np.linalg.svd(X, full_matrices=False)
        keep = S > S.max(initial=0.0) * max(X.shape) * np.finfo(float).eps
        return cls(U[:, keep] * S[keep], Vt[keep].T)


def fit_in_row_space(Z: np.ndarray, Y: np.ndarray, l2: float) -> np.ndarray:
    """``(b, β)`` of the ridge logistic regression of each row of ``Y`` (R × n, 0/1) on ``Z``.

    Returns (R, 1 + r). The R problems take Newton steps together, in blocks whose Hessians
    and temporaries stay within 64 MB (q = 1 + r: about R·q·(n + q) doubles); each step is
    halved until its own objective does not increase. Raises ``RuntimeError`` if a problem has
    not converged in 100 steps (it cannot happen for λ > 0 and labels of both classes).
    """
    n, r = Z.shape
    Z1 = np.hstack([np.ones((n, 1)), Z])
    penalty = np.full(r + 1, float(l2))
    penalty[0] = 0.0  # the intercept is not penalised
    Y = np.asarray(Y, dtype=float)
    block = max(1, _TEMPORARY_BYTES // (8 * (r + 1) * (n + r + 1)))
    return (
        np.concatenate(
            [
                _newton(Z1, Y[start : start + block], penalty, l2)
                for start in range(0, len(Y), block)
            ]
        )
        if len(Y)
        else np.zeros((0, r + 1))
    )


def _newton(Z1: np.ndarray, Y: np.ndarray, penalty: np.ndarray, l2: float) -> np.ndarray:
    theta = np.zeros((Y.shape[0], Z1.shape[1]))

    def objective(t: np.ndarray, labels: np.ndarray) -> np.ndarray:
        eta = t @ Z1.T
        return (np.logaddexp(0.0, eta) - labels * eta).sum(axis=1) + 0.5 * (penalty * t * t).sum(
            axis=1
        )

    current = objective(theta, Y)
    for _ in range(_MAX_ITERATIONS):
        p = expit(theta @ Z1.T)
        grad = (p - Y) @ Z1 + penalty * theta
        weights = p * (1.0 - p)
        hessian = np.matmul(Z1.T[None, :, :] * weights[:, None, :], Z1) + np.diag(penalty)
        step = np.linalg.solve(hessian, grad[:, :, None])[:, :, 0]
        decrement = (grad * step).sum(axis=1)  # the Newton decrement squared
        if np.all(decrement <= 1e-24 * np.maximum(1.0, np.abs(current))):
            return theta
        size = np.ones(len(theta))
        trial = objective(theta - size[:, None] * step, Y)
        for _ in range(_HALVINGS):
            worse = trial > current
            if not worse.any():
                break
            size[worse] /= 2
            trial[worse] = objective(theta[worse] - size[worse, None] * step[worse], Y[worse])
        moved = trial < current
        if not moved.any():  # no step lowers any objective: at the minimum, to round-off
            return theta
        theta[moved] -= size[moved, None] * step[moved]
        current = np.where(moved, trial, current)
    raise RuntimeError(
        f"ridge logistic regression did not converge in {_MAX_ITERATIONS} "
        f"Newton steps (λ = {l2}); this is a bug, please report it"
    )


def ridge_logistic(X: ArrayLike, y: ArrayLike, *, l2: float = 1.0) -> tuple[np.ndarray, float]:
    """``(w, b)`` minimising the objective of the module docstring on ``X`` as given.

    ``X`` is (n, d) — standardise it first (:func:`standardise`) as the probes do; ``y`` is
    (n,) boolean with both classes; ``l2`` is λ > 0 (scikit-learn's ``C = 1/λ``).
    """
    X = np.asarray(X, dtype=float)
    labels = np.asarray(y)
    if X.ndim != 2 or labels.shape != (X.shape[0],) or labels.dtype != np.bool_:
        raise ValueError(
            f"X must be (n, d) and y a boolean (n,) array, got shapes "
            f"{X.shape} and {labels.shape} (dtype={labels.dtype})"
        )
    if labels.all() or not labels.any():
        raise ValueError(
            "y must hold both classes: the intercept has no finite optimum on one class"
        )
    check_l2(l2)
    mean = X.mean(axis=0)
    space = RowSpace.of(X - mean)
    theta = fit_in_row_space(space.Z, labels[None, :], l2)[0]
    w = space.V @ theta[1:]
    # Z was fitted on centred X: b + (x − mean)·w = (b − mean·w) + x·w
    return w, float(theta[0] - mean @ w)


def check_l2(l2: object) -> float:
    """``l2`` as a positive float, or the error naming it."""
    if isinstance(l2, bool) or not isinstance(l2, (int, float)) or not np.isfinite(l2) or l2 <= 0:
        raise ValueError(
            f"l2 must be a positive number (the ridge penalty λ; scikit-learn's "
            f"C = 1/λ), got l2={l2!r}; e.g. l2=1.0"
        )
    return float(l2)


def auroc(scores: ArrayLike, labels: ArrayLike) -> np.ndarray:
    """The area under the ROC curve of ``scores`` for boolean ``labels``, over the last axis.

    The Mann–Whitney form: with average ranks of the scores (ties count one half),
    ``(Σ ranks of positives − n₁(n₁ + 1)/2) / (n₁·n₀)``. Shapes broadcast; NaN where a row has
    no positive or no negative, or a NaN score.
    """
    values = np.asarray(scores, dtype=float)
    positive = np.broadcast_to(np.asarray(labels, dtype=bool), values.shape)
    ranks = rankdata(values, axis=-1)
    n1 = positive.sum(axis=-1)
    n0 = positive.shape[-1] - n1
    with np.errstate(divide="ignore", invalid="ignore"):
        area = ((ranks * positive).sum(axis=-1) - n1 * (n1 + 1) / 2) / (n1 * n0)
    bad = (n1 == 0) | (n0 == 0) | np.isnan(values).any(axis=-1)
    return np.where(bad, np.nan, area)


def instance_folds(
    instances: ArrayLike,
    labels: ArrayLike,
    *,
    folds: int,
    strata: ArrayLike | None = None,
    seed: int = 0,
) -> np.ndarray:
    """A fold in ``0 … folds − 1`` for each row, the same for every row of one instance.

    Instances are dealt to folds at random (seeded), stratified by their label and by
    ``strata`` (e.g. the level), so every fold holds about ``1/folds`` of each gold answer at
    each level; all rows of an instance (its presentations) land in one fold, so no instance
    is ever on both sides of a split. Every row of one instance must carry one label.
    """
    codes, first, inverse = np.unique(
        _labels(instances, "instances"), return_index=True, return_inverse=True
    )
    inverse = inverse.reshape(-1)
    label = np.asarray(labels, dtype=bool)
    if np.any(label != label[first][inverse]):
        raise ValueError(
            "the rows of one instance disagree on the gold label: probe "
            "presentations whose answer maps differ separately"
        )
    stratum = (
        np.zeros(len(label), dtype=np.int64)
        if strata is None
        else np.unique(_labels(strata, "strata"), return_inverse=True)[1].reshape(-1)
    )
    if np.any(stratum != stratum[first][inverse]):
        raise ValueError("strata must be constant within an instance (e.g. its level)")
    rng = np.random.default_rng(seed)
    group = stratum[first] * 2 + label[first]
    fold_of = np.empty(len(codes), dtype=np.int64)
    start = 0
    for g in np.unique(group):
        members = rng.permutation(np.flatnonzero(group == g))
        fold_of[members] = (start + np.arange(len(members))) % folds
        start += len(members)
    return fold_of[inverse]


def _labels(values: ArrayLike, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one label per row, shape (N,), got {array.shape}")
    return array


def instance_labels(instances: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``(first row of each instance, instance index of each row)``."""
    _, first, inverse = np.unique(
        _labels(instances, "instances"), return_index=True, return_inverse=True
    )
    return first, inverse.reshape(-1)
