"""The probe's estimator: L2-regularised logistic regression, AUROC, and folds by instance.

CBE paper, arXiv:2610.22894, App. I fits "cross-validated gold-answer probes" (Belinkov, 2022)
on the residual stream at the answer position without naming the estimator. This one is
**ridge logistic regression** with an unpenalised intercept: for standardised features
``x_i`` and labels ``y_i ∈ {0, 1}`` it minimises

    Σ_i [log(1 + exp(η_i)) − y_i·η_i] + (λ/2)·‖w‖²,   η_i = b + x_i·w,

the objective of scikit-learn's ``LogisticRegression(C=1/λ)`` (tested against it), solved
exactly by **Newton's method with step halving**. When d > n it runs in the training rows' span:
with the thin SVD ``X = U S Vᵀ`` of the centred training matrix every minimiser is ``w = V β``
(the loss sees ``X w`` only) and ``‖w‖ = ‖β‖``, so it is the same problem on ``Z = U S`` of rank
``r ≤ n`` (:class:`RowSpace`). The label vectors of one fold are stacked and take their Newton
steps together. The objective is strictly convex (λ > 0, the intercept orthogonal to the
centred ``Z``), so the minimiser is unique and Newton converges.
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
    centred (scale 1), so it carries nothing into the fit. Stacks (B, n, d) are standardised
    each by its own training rows."""
    mean = train.mean(axis=-2, keepdims=True)
    centred = train - mean
    scale = np.sqrt(np.einsum("...nd,...nd->...d", centred, centred) / train.shape[-2])
    inverse = np.divide(1.0, scale, out=np.ones_like(scale), where=scale > 0)[..., None, :]
    centred *= inverse
    return centred, (test - mean) * inverse


class RowSpace(NamedTuple):
    """Coordinates ``Z`` (n × k) for the fit of a centred training matrix ``X`` (n × d), in
    which ``X w = Z β``; a stack of matrices (B, n, d) gives a stack (B, n, k).

    When d ≤ n they are ``X`` itself (``w = β``, k = d). Else they span its rows (k = n):
    with the eigendecomposition ``X Xᵀ = U Λ Uᵀ`` (the thin SVD ``X = U S Vᵀ``, S = √Λ, at a
    fraction of its cost), ``Z = U S`` and ``w = V β = Xᵀ U S⁻¹ β``, kept in that form
    (``dual = U S⁻¹``) so that ``V`` (d × n) is never formed. Directions of eigenvalues below
    ``max(Λ)·n·ε`` — the eigensolver's round-off; singular values below ``max(S)·√(n·ε)`` —
    are zero columns of ``Z``: the penalty holds their coefficients at 0, and a stack keeps
    one shape whatever each matrix's rank.
    """

    Z: np.ndarray
    X: np.ndarray
    dual: np.ndarray | None

    @classmethod
    def of(cls, X: np.ndarray) -> RowSpace:
        """The coordinates of ``X`` (n × d, or a stack B × n × d), centred by the caller."""
        n, d = X.shape[-2:]
        if d <= n:
            return cls(X, X, None)
        if n == 0:
            return cls(X[..., :0], X, X[..., :0])
        eigenvalues, U = np.linalg.eigh(np.matmul(X, np.swapaxes(X, -1, -2)))
        keep = eigenvalues > eigenvalues.max(axis=-1, keepdims=True) * n * np.finfo(float).eps
        S = np.sqrt(np.where(keep, eigenvalues, 0.0))
        inverse = np.divide(1.0, S, out=np.zeros_like(S), where=keep)
        return cls(U * S[..., None, :], X, U * inverse[..., None, :])

    def project(self, rows: np.ndarray) -> np.ndarray:
        """Other rows (m × d, or B × m × d) in these coordinates: ``rows · V``."""
        if self.dual is None:
            return rows
        return np.matmul(np.matmul(rows, np.swapaxes(self.X, -1, -2)), self.dual)

    def weights(self, beta: np.ndarray) -> np.ndarray:
        """``w = V β`` for coefficients ``β`` (k,) of one matrix."""
        return beta if self.dual is None else self.X.T @ (self.dual @ beta)


def fit_in_row_space(Z: np.ndarray, Y: np.ndarray, l2: float) -> np.ndarray:
    """``(b, β)`` of the ridge logistic regression of each row of ``Y`` (R × n, 0/1) on ``Z``.

    ``Z`` is one matrix (n × r) shared by every row of ``Y``, or one per row (R × n × r): the
    shuffled-label null fits each shuffle on its own folds. Returns (R, 1 + r). The R problems
    take Newton steps together, in blocks whose Hessians and temporaries stay within 64 MB
    (q = 1 + r: about R·q·(n + q) doubles); each step is halved until its own objective does
    not increase. Raises ``RuntimeError`` if a problem has not converged in 100 steps (it
    cannot happen for λ > 0 and labels of both classes).
    """
    Y = np.asarray(Y, dtype=float)
    n, r = Z.shape[-2:]
    Z1 = np.concatenate([np.ones((*Z.shape[:-1], 1)), Z], axis=-1)
    Z1 = np.broadcast_to(Z1, (len(Y), n, r + 1))
    penalty = np.full(r + 1, float(l2))
    penalty[0] = 0.0  # the intercept is not penalised
    block = max(1, _TEMPORARY_BYTES // (8 * (r + 1) * (n + r + 1)))
    return (
        np.concatenate(
            [
                _newton(Z1[start : start + block], Y[start : start + block], penalty, l2)
                for start in range(0, len(Y), block)
            ]
        )
        if len(Y)
        else np.zeros((0, r + 1))
    )


def _newton(Z1: np.ndarray, Y: np.ndarray, penalty: np.ndarray, l2: float) -> np.ndarray:
    """Newton's method with step halving for the R problems ``(Z1[i], Y[i])``; a problem
    stops stepping once its Newton decrement is at round-off, or no step lowers it."""
    theta = np.zeros((Y.shape[0], Z1.shape[2]))

    def objective(Z: np.ndarray, t: np.ndarray, labels: np.ndarray) -> np.ndarray:
        eta = np.matmul(Z, t[:, :, None])[:, :, 0]
        return (np.logaddexp(0.0, eta) - labels * eta).sum(axis=1) + 0.5 * (penalty * t * t).sum(
            axis=1
        )

    current = objective(Z1, theta, Y)
    active = np.arange(len(Y))
    for _ in range(_MAX_ITERATIONS):
        every = len(active) == len(Y)  # no copy of Z1 while every problem is still stepping
        Z = Z1 if every else Z1[active]
        t, labels, now = theta[active], Y[active], current[active]
        p = expit(np.matmul(Z, t[:, :, None])[:, :, 0])
        grad = np.matmul((p - labels)[:, None, :], Z)[:, 0, :] + penalty * t
        weights = p * (1.0 - p)
        hessian = np.matmul(Z.transpose(0, 2, 1) * weights[:, None, :], Z) + np.diag(penalty)
        step = np.linalg.solve(hessian, grad[:, :, None])[:, :, 0]
        decrement = (grad * step).sum(axis=1)  # the Newton decrement squared
        going = decrement > 1e-24 * np.maximum(1.0, np.abs(now))
        size = np.ones(len(t))
        trial = np.where(going, objective(Z, t - step, labels), now)
        for _ in range(_HALVINGS):
            worse = trial > now
            if not worse.any():
                break
            size[worse] /= 2
            trial[worse] = objective(
                Z[worse], t[worse] - size[worse, None] * step[worse], labels[worse]
            )
        moved = going & (trial < now)  # else at the minimum, to round-off
        theta[active[moved]] = t[moved] - size[moved, None] * step[moved]
        current[active[moved]] = trial[moved]
        active = active[moved]
        if not len(active):
            return theta
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
    w = space.weights(theta[1:])
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


def cross_validated_auroc(
    X: np.ndarray, labels: np.ndarray, fold: np.ndarray, folds: int, l2: float
) -> np.ndarray:
    """The mean over folds of the held-out AUROC of the probe of ``X`` (N, d), one per label
    row, each row on its own folds (``labels`` and ``fold`` are both (R, N)); a fold whose training rows hold one class (no
    finite fit) or whose held-out rows do (no AUROC) is left out of the mean, and a row with no
    fold left is NaN."""
    X = X.astype(np.float64)
    areas = np.full((folds, labels.shape[0]), np.nan)
    # a label row's training matrix is copied about four times on its way through the fit
    # (gathered, standardised, with the intercept, weighted): 64 MB of them a block
    per_block = max(1, _TEMPORARY_BYTES // (4 * 8 * X.size))
    for f in range(folds):
        held_out = fold == f
        size = held_out.sum(axis=1)
        for m in np.unique(size):  # one size, unless instances differ in their row counts
            rows = np.flatnonzero(size == m)
            for start in range(0, len(rows), per_block):
                block = rows[start : start + per_block]
                areas[f, block] = held_out_auroc(X, labels[block], held_out[block], int(m), l2)
    counted = np.isfinite(areas).sum(axis=0)
    return np.where(counted > 0, np.nansum(areas, axis=0) / np.maximum(counted, 1), np.nan)


def held_out_auroc(
    X: np.ndarray, labels: np.ndarray, held_out: np.ndarray, m: int, l2: float
) -> np.ndarray:
    """For each row of ``labels`` (B, N), the AUROC on its ``m`` held-out rows of the probe
    fitted on the others (NaN where either side holds one class)."""
    B, N = labels.shape
    test = np.nonzero(held_out)[1].reshape(B, m)
    train = np.nonzero(~held_out)[1].reshape(B, N - m)
    Ytr = np.take_along_axis(labels, train, axis=1)
    Yte = np.take_along_axis(labels, test, axis=1)
    out = np.full(B, np.nan)
    fit = Ytr.any(axis=1) & ~Ytr.all(axis=1)
    if not fit.any():
        return out
    Xtr, Xte = standardise(X[train[fit]], X[test[fit]])
    space = RowSpace.of(Xtr)
    theta = fit_in_row_space(space.Z, Ytr[fit], l2)
    scores = theta[:, :1] + np.matmul(space.project(Xte), theta[:, 1:, None])[:, :, 0]
    out[fit] = auroc(scores, Yte[fit])
    return out


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
    group = stratum[first] * 2 + label[first]
    return deal_folds(group, folds, np.random.default_rng(seed))[inverse]


def deal_folds(group: np.ndarray, folds: int, rng: np.random.Generator) -> np.ndarray:
    """A fold for each instance of ``group`` (one code per instance: stratum × label): each
    group's instances in a random order, dealt round the folds, each group starting where the
    last one stopped, so that the folds' sizes differ by one at most."""
    order = np.argsort(group, kind="stable")  # each group's members, in index order
    groups = np.split(order, np.flatnonzero(np.diff(group[order])) + 1)
    fold_of = np.empty(len(group), dtype=np.int64)
    fold_of[np.concatenate([rng.permutation(members) for members in groups])] = (
        np.arange(len(group)) % folds
    )
    return fold_of


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
