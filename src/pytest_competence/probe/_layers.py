"""Gold probes by layer: cross-validated AUROC with a shuffled-label null band.

CBE paper, arXiv:2610.22894, App. I and Figure 5: per layer, a cross-validated linear probe of
the gold on the residual stream at the answer position, its AUROC and a shuffled-label null band;
Table 11's "Layer", the first reaching AUROC 0.9. For one presentation, at a level or pooled:

* **folds by instance** (:func:`~.linear.instance_folds`), stratified by gold and ``strata``
  (the level, when levels are pooled): every row of an instance in one fold;
* per fold, the ridge probe (:mod:`.linear`, λ = ``l2``) on standardised features scores the
  held-out rows; **AUROC** per fold, averaged (a pooled AUROC would be biased by the intercepts);
* **null**: the procedure again on the gold shuffled within strata, ``permutations`` times, each
  on folds dealt anew for its labels, so ``(1 + #{null ≥ observed}) / (1 + permutations)`` holds
  its level as a p-value; the band is the null AUROCs' central ``confidence`` interval per layer;
* **first layer** reaching ``threshold`` (the paper's definition), and the **first layer above
  the null**: reaching it *and* above the band (``None`` without a band, ``permutations=0``).

The probe is binary (gold = the first answer, "yes"); λ is fixed, not tuned. The cost is about
``layers × folds × (1 + permutations) × (n²·d + steps × n·q²)`` multiply-adds, q = 1 + min(n, d).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._linear import (
    check_l2,
    cross_validated_auroc,
    deal_folds,
    instance_folds,
    instance_labels,
)
from ._rows import PromptRows, plain_floats

__all__ = ["ProbeCell", "ProbeCurve", "probe_cells", "probe_layers"]


#: The probe's settings and their defaults (module docstring).
DEFAULTS: dict[str, Any] = {
    "folds": 5,
    "l2": 1.0,
    "permutations": 100,
    "threshold": 0.9,
    "confidence": 0.95,
    "seed": 0,
}


@dataclass(frozen=True)
class ProbeCurve:
    """A gold probe's AUROC by layer and its shuffled-label null (module docstring).

    ``layers`` are the residual-stream indices probed (0: the embeddings as the first block
    reads them; ``L``: the last block's output, before the final norm). Arrays have one entry
    per layer; they are all NaN, and ``reason`` says why, when the rows cannot be probed (too
    few instances of a gold answer). ``null_dropped`` counts permutations with no fold
    left to score (each fold's training or held-out rows of one class), left out of the band.
    """

    layers: tuple[int, ...]
    auroc: np.ndarray
    null_mean: np.ndarray
    null_low: np.ndarray
    null_high: np.ndarray
    p_value: np.ndarray
    first_layer: int | None
    threshold: float
    instances: int
    positives: int
    negatives: int
    folds: int
    permutations: int
    l2: float
    confidence: float
    null_dropped: int = 0
    reason: str | None = None
    #: The first layer reaching ``threshold`` with its AUROC above ``null_high`` (module docstring).
    first_above_null: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (NaN as ``None``)."""
        return {
            "layers": list(self.layers),
            "auroc": plain_floats(self.auroc),
            "null_mean": plain_floats(self.null_mean),
            "null_low": plain_floats(self.null_low),
            "null_high": plain_floats(self.null_high),
            "p_value": plain_floats(self.p_value),
            "first_layer": self.first_layer,
            "first_above_null": self.first_above_null,
            "threshold": self.threshold,
            "instances": self.instances,
            "positives": self.positives,
            "negatives": self.negatives,
            "folds": self.folds,
            "permutations": self.permutations,
            "l2": self.l2,
            "confidence": self.confidence,
            "null_dropped": self.null_dropped,
            "reason": self.reason,
        }


def probe_layers(
    states: ArrayLike,
    gold: ArrayLike,
    instances: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    layers: Sequence[int] | None = None,
    folds: int = 5,
    l2: float = 1.0,
    permutations: int = 100,
    threshold: float = 0.9,
    confidence: float = 0.95,
    seed: int = 0,
) -> ProbeCurve:
    """The gold probe's curve over the rows given (see the module docstring).

    ``states`` is (N, layers, d), float32 or float16 (each layer is fitted in float64);
    ``gold`` (N,) boolean (the first answer, "yes"); ``instances`` (N,) labels (rows of one
    instance share a fold and a gold); ``strata`` (N,) labels the folds and the shuffles are
    balanced within (pass the level when pooling levels; each shuffle's folds are dealt for
    it, balanced for its labels within strata as the gold's are); ``layers`` names the layers of
    ``states``' second axis (default 0, 1, …). Seeded: equal arguments give equal curves.
    """
    check_arguments(
        folds=folds,
        l2=l2,
        permutations=permutations,
        threshold=threshold,
        confidence=confidence,
        seed=seed,
    )
    X, y, names = _checked(states, gold, layers)
    first, inverse = instance_labels(instances)
    if len(inverse) != len(y):
        raise ValueError(f"instances must be (N,) with N = {len(y)}, got {len(inverse)}")
    positives = int(y[first].sum())
    negatives = len(first) - positives
    empty = np.full(len(names), np.nan)
    curve: dict[str, Any] = dict(
        layers=names,
        threshold=float(threshold),
        instances=len(first),
        positives=positives,
        negatives=negatives,
        folds=folds,
        permutations=permutations,
        l2=float(l2),
        confidence=float(confidence),
    )
    if min(positives, negatives) < folds:
        return ProbeCurve(
            auroc=empty,
            null_mean=empty,
            null_low=empty,
            null_high=empty,
            p_value=empty,
            first_layer=None,
            reason=f"needs at least {folds} instances of each gold answer (one "
            f"per fold), has {positives} and {negatives}",
            **curve,
        )
    labels, fold = _shuffled_and_dealt(y, instances, strata, folds, permutations, seed)
    areas = _areas(X, labels, fold, folds, float(l2))  # (layers, 1 + permutations)
    observed, null = areas[:, 0], areas[:, 1:]
    defined = np.isfinite(null).all(axis=0)
    mean, low, high, p = _null_band(observed, null[:, defined], confidence)
    reached = [k for k in range(len(names)) if observed[k] >= threshold]
    above = [k for k in reached if observed[k] > high[k]]  # NaN (no band): never above
    return ProbeCurve(
        auroc=observed,
        null_mean=mean,
        null_low=low,
        null_high=high,
        p_value=p,
        first_layer=names[reached[0]] if reached else None,
        first_above_null=names[above[0]] if above else None,
        null_dropped=int((~defined).sum()),
        **curve,
    )


def _checked(
    states: ArrayLike, gold: ArrayLike, layers: Sequence[int] | None
) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """``states`` and ``gold`` as arrays, and the layers' names, once their shapes are checked."""
    X = np.asarray(states)
    y = np.asarray(gold)
    if X.ndim != 3 or y.shape != (X.shape[0],) or y.dtype != np.bool_:
        raise ValueError(
            f"states must be (N, layers, d) and gold a boolean (N,) array, got "
            f"shapes {X.shape} and {y.shape} (dtype={y.dtype})"
        )
    names = tuple(range(X.shape[1])) if layers is None else tuple(int(v) for v in layers)
    if len(names) != X.shape[1]:
        raise ValueError(f"layers names {len(names)} layers but states has {X.shape[1]}")
    if not np.all(np.isfinite(X)):
        raise ValueError(
            "states must be finite: drop the rows of prompts that errored "
            "(AnswerStates.errors) before probing"
        )
    return X, y, names


def _areas(
    X: np.ndarray, labels: np.ndarray, fold: np.ndarray, folds: int, l2: float
) -> np.ndarray:
    """Each layer's cross-validated AUROC for every label vector: (layers, label vectors)."""
    small = min(X.shape[0], X.shape[2]) <= _SMALL_RANK
    with _one_blas_thread() if small else contextlib.nullcontext():
        return np.stack(
            [cross_validated_auroc(X[:, k, :], labels, fold, folds, l2) for k in range(X.shape[1])]
        )


def _null_band(
    observed: np.ndarray, null: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per layer, the null AUROCs' mean, the central ``confidence`` band and the permutation
    p-value of the observed AUROC (all NaN when no shuffle gave a defined AUROC)."""
    if not null.shape[1]:
        empty = np.full(len(observed), np.nan)
        return empty, empty, empty, empty
    tail = (1.0 - confidence) / 2
    low, high = np.quantile(null, [tail, 1 - tail], axis=1)
    mean = null.mean(axis=1)
    p = (1 + (null >= observed[:, None]).sum(axis=1)) / (1 + null.shape[1])
    return mean, low, high, p


@dataclass(frozen=True)
class ProbeCell:
    """The gold probe of one presentation at one level (``level`` ``None``: levels pooled)."""

    presentation: str
    level: int | None
    curve: ProbeCurve

    def to_dict(self) -> dict[str, Any]:
        return {"presentation": self.presentation, "level": self.level, **self.curve.to_dict()}


def probe_cells(
    states: ArrayLike,
    rows: PromptRows,
    *,
    ok: ArrayLike | None = None,
    layers: Sequence[int] | None = None,
    per_level: bool = True,
    pooled: bool = True,
    **settings: Any,
) -> list[ProbeCell]:
    """:func:`probe_layers` for each presentation × level of ``rows`` (and each presentation
    pooled over its levels, levels as strata), in :meth:`PromptRows.cells` order.

    ``states`` is (N, layers, d) for the N rows; ``ok`` (N,) boolean leaves out rows that could
    not be read (:attr:`AnswerStates.ok`); ``settings`` are :func:`probe_layers`' (``folds``,
    ``l2``, ``permutations``, ``threshold``, ``confidence``, ``seed``). The gold is
    ``answers[0]`` ("yes"); a space of more than two answers gets cells that say why not.
    """
    X = np.asarray(states)
    keep = np.ones(len(rows), dtype=bool) if ok is None else np.asarray(ok, dtype=bool)
    if X.ndim != 3 or X.shape[0] != len(rows) or keep.shape != (len(rows),):
        raise ValueError(
            f"states must be (N, layers, d) and ok (N,) with N = {len(rows)} rows, "
            f"got {X.shape} and {keep.shape}"
        )
    unknown = sorted(set(settings) - set(DEFAULTS))
    if unknown:
        raise TypeError(
            f"probe_cells() got unknown settings {unknown}; the probe's settings "
            f"are {', '.join(DEFAULTS)}"
        )
    chosen = {**DEFAULTS, **settings}
    check_arguments(**chosen)
    names = tuple(range(X.shape[1])) if layers is None else tuple(layers)
    out = []
    for cell in rows.cells(per_level=per_level, pooled=pooled):
        index = cell.index[keep[cell.index]]
        if not rows.binary:
            curve = _no_curve(
                names,
                chosen,
                f"the gold probe is binary; this answer space has {len(rows.answers)} answers",
            )
        elif not len(index):
            curve = _no_curve(names, chosen, "no prompt of this cell could be read")
        else:
            curve = probe_layers(
                X[index],
                rows.gold[index] == 0,
                rows.instance[index],
                strata=rows.level[index] if cell.level is None else None,
                layers=names,
                **settings,
            )
        out.append(ProbeCell(cell.presentation, cell.level, curve))
    return out


def _no_curve(layers: tuple[int, ...], settings: dict[str, Any], reason: str) -> ProbeCurve:
    empty = np.full(len(layers), np.nan)
    return ProbeCurve(
        layers,
        empty,
        empty,
        empty,
        empty,
        empty,
        None,
        float(settings["threshold"]),
        0,
        0,
        0,
        settings["folds"],
        settings["permutations"],
        float(settings["l2"]),
        float(settings["confidence"]),
        reason=reason,
    )


def check_arguments(
    *,
    folds: object,
    l2: object,
    permutations: object,
    threshold: object,
    confidence: object,
    seed: object,
) -> None:
    """The probe's settings, or the error naming the one that is wrong."""

    def whole(value: object, name: str, least: int, example: str) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise ValueError(
                f"{name} must be an integer ≥ {least}, got {name}={value!r}; e.g. {name}={example}"
            )

    whole(folds, "folds", 2, "5")
    whole(permutations, "permutations", 0, "100")
    whole(seed, "seed", 0, "0")
    check_l2(l2)
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float))
        or not 0.5 <= threshold <= 1
    ):
        raise ValueError(
            f"threshold must be an AUROC in [0.5, 1], got threshold={threshold!r}; "
            f"e.g. threshold=0.9 (CBE paper, Table 11)"
        )
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, (int, float))
        or not 0 < confidence < 1
    ):
        raise ValueError(
            f"confidence must be in (0, 1), got confidence={confidence!r}; e.g. confidence=0.95"
        )


def _shuffled_and_dealt(
    y: np.ndarray,
    instances: ArrayLike,
    strata: ArrayLike | None,
    folds: int,
    permutations: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, fold)``, both (1 + permutations, N): the gold and its folds
    (:func:`~._linear.instance_folds` with ``seed``), then ``permutations`` times the gold
    shuffled across instances within strata (each instance keeps one label for all its rows)
    and folds dealt anew for it by the same function, stratified by the shuffled label and the
    strata, from a stream of its own (``[seed, 2, r]`` for shuffle r; the shuffles draw from
    ``[seed, 1]``). Dealing once, for the gold, and reusing those folds would leave each
    shuffle's folds unbalanced for its own labels: where the probe reads the strata (pooled
    levels), that pulls the null's AUROC below the gold's and its p-values below their level."""
    gold_folds = instance_folds(instances, y, folds=folds, strata=strata, seed=seed)
    first, inverse = instance_labels(instances)
    stratum = (
        np.zeros(len(first), dtype=np.int64)
        if strata is None
        else np.unique(np.asarray(strata), return_inverse=True)[1].reshape(-1)[first]
    )
    rng = np.random.default_rng([seed, 1])  # a stream apart from the folds'
    labels = np.empty((1 + permutations, len(first)), dtype=bool)
    fold = np.empty((1 + permutations, len(first)), dtype=np.int64)
    labels[0], fold[0] = y[first], gold_folds[first]
    groups = [np.flatnonzero(stratum == s) for s in np.unique(stratum)]
    for row in range(1, 1 + permutations):
        for members in groups:
            labels[row, members] = labels[0, rng.permutation(members)]
        fold[row] = deal_folds(
            stratum * 2 + labels[row], folds, np.random.default_rng([seed, 2, row])
        )
    return labels[:, inverse], fold[:, inverse]


#: Up to this rank (rows or features, whichever is fewer) the fits run on one BLAS thread.
_SMALL_RANK = 256


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    """One BLAS thread during small fits, when threadpoolctl is installed: on a loaded machine
    waking BLAS threads for matrices of rank ≤ 256 costs far more than the work (measured: 101
    fits of a 200 × 65 problem, 3.4 s on two OpenBLAS threads, 0.09 s on one); larger fits
    keep every thread."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(1, user_api="blas"):
        yield
