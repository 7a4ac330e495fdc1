"""A checkpoint series: each checkpoint against the previous one and against the first.

For a team that gates every checkpoint of a training run: per level × presentation, the paired
accuracy difference Δ = later − earlier with Tango's score interval, McNemar's test (Holm across
the cells of each comparison, as the regression gate does), and the drop that comparison could
have detected (:func:`~pytest_competence.stats.detectable_drop`, at α/m for its m cells). With
``test="non-inferiority"``, each comparison is also the non-inferiority gate's decision
(:func:`~pytest_competence.stats.noninferiority_decision`: one-sided, Holm across its cells,
H0: Δ ≤ −margin), so a suite gated that way gets a series of the same test. Every figure comes
from per-instance correctness matched by instance id, so an archive of each checkpoint is
enough: no model is asked again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from pytest_competence.stats.detectable import detectable_drop
from pytest_competence.stats.intervals import check_open_unit
from pytest_competence.stats.noninferiority import (
    check_margin,
    noninferiority_decision,
    paired_difference_interval,
)
from pytest_competence.stats.paired import holm, mcnemar_paired

__all__ = ["Checkpoint", "TrendRow", "checkpoint_series"]


@dataclass(frozen=True)
class Checkpoint:
    """One checkpoint's per-instance correctness on a design.

    ``ids`` names each instance (unique), ``level`` gives its n, and ``correct`` maps each
    presentation to a boolean array with invalid answers counted wrong, all in the same
    instance order (an archive's ``results[].instances``: ``ids``, ``level``, ``correct``).
    """

    name: str
    ids: Sequence[str]
    level: ArrayLike
    correct: Mapping[str, ArrayLike]


@dataclass(frozen=True)
class TrendRow:
    """One cell of one comparison: ``checkpoint`` against ``reference`` (``against`` says which
    of the two that is), at level ``n`` and ``presentation``, on ``pairs`` matched instances.

    ``candidate`` and ``baseline`` are the two accuracies, ``delta`` = candidate − baseline,
    ``low``/``high`` Tango's two-sided score interval on it at the series' confidence;
    ``b``/``c``, ``method`` and ``p_value`` McNemar's test (``b``: the later checkpoint right,
    the reference wrong), ``p_holm`` Holm across the comparison's cells; ``detectable_drop``
    the gate's at α/m (the regression gate's; under ``test="non-inferiority"`` that gate's: the
    smallest margin a checkpoint exactly as good as its reference passes with 80% power);
    ``regression`` is ``delta < −margin and p_holm < alpha``.
    With ``test="non-inferiority"``: ``lower_holm`` is the one-sided lower bound on Δ at the
    level Holm tests the cell at, ``noninferior`` whether Holm rejects Δ ≤ −margin there (the
    non-inferiority gate's cell verdict; a comparison passes when every cell is non-inferior);
    both are ``None`` under the regression test.
    """

    checkpoint: str
    reference: str
    against: Literal["previous", "first"]
    n: int
    presentation: str
    pairs: int
    candidate: float
    baseline: float
    delta: float
    low: float
    high: float
    b: int
    c: int
    method: str
    p_value: float
    p_holm: float
    detectable_drop: float
    regression: bool
    test: Literal["regression", "non-inferiority"] = "regression"
    lower_holm: float | None = None
    noninferior: bool | None = None


def checkpoint_series(
    checkpoints: Sequence[Checkpoint],
    *,
    alpha: float = 0.05,
    margin: float = 0.0,
    power: float = 0.80,
    confidence: float = 0.95,
    test: Literal["regression", "non-inferiority"] = "regression",
) -> list[TrendRow]:
    """Every checkpoint after the first against the previous one, and from the third on also
    against the first (for the second, the previous one is the first).

    Instances are matched by id: each checkpoint must hold exactly the first one's ids (in any
    order) with the same level for each. A comparison covers the presentations both
    checkpoints have, in the later one's order, and its levels ascending. ``alpha`` is the
    two-sided level of the McNemar tests and of the detectable drop; ``confidence`` is the
    intervals'. ``test="non-inferiority"`` adds each comparison's non-inferiority decision at
    one-sided level ``alpha`` with ``margin`` (which must then be above 0), as the gate of that
    name takes it.

    Raises:
        ValueError: fewer than two checkpoints, instances that do not match (named, with
            what differs), arrays of the wrong shape, two checkpoints without a common
            presentation, an unknown ``test``, or ``test="non-inferiority"`` with margin 0.
    """
    alpha = check_open_unit(alpha, "alpha", "0.05")
    power = check_open_unit(power, "power", "0.8")
    confidence = check_open_unit(confidence, "confidence", "0.95")
    margin = check_margin(margin)
    if test not in ("regression", "non-inferiority"):
        raise ValueError(f"test must be 'regression' or 'non-inferiority', got test={test!r}")
    if test == "non-inferiority" and margin == 0:
        raise ValueError(
            "test='non-inferiority' needs a margin above 0 (the accuracy a checkpoint may "
            "lose), got margin=0; at 0 only a checkpoint significantly better than its "
            "reference passes. Give one, e.g. margin=0.02"
        )
    if len(checkpoints) < 2:
        raise ValueError(
            f"checkpoints must hold at least two checkpoints to compare, got {len(checkpoints)}"
        )
    aligned = _aligned(checkpoints)
    rows: list[TrendRow] = []
    for k in range(1, len(aligned)):
        references: list[tuple[int, Literal["previous", "first"]]] = [(k - 1, "previous")]
        if k >= 2:
            references.append((0, "first"))
        for reference, against in references:
            rows.extend(
                _compare(
                    aligned,
                    k,
                    reference,
                    against,
                    alpha=alpha,
                    margin=margin,
                    power=power,
                    confidence=confidence,
                    test=test,
                )
            )
    return rows


def _compare(
    aligned: list[tuple[str, np.ndarray, dict[str, np.ndarray]]],
    k: int,
    reference: int,
    against: Literal["previous", "first"],
    *,
    alpha: float,
    margin: float,
    power: float,
    confidence: float,
    test: Literal["regression", "non-inferiority"],
) -> list[TrendRow]:
    name, level, correct = aligned[k]
    ref_name, _, ref_correct = aligned[reference]
    presentations = [p for p in correct if p in ref_correct]
    if not presentations:
        raise ValueError(
            f"checkpoints {name!r} and {ref_name!r} share no presentation "
            f"({sorted(correct)} against {sorted(ref_correct)}); archive both "
            f"with the same design"
        )
    cells = []
    for n in sorted(set(level.tolist())):
        mask = level == n
        for presentation in presentations:
            x, y = correct[presentation][mask], ref_correct[presentation][mask]
            cells.append((int(n), presentation, x, y, mcnemar_paired(x, y)))
    adjusted = holm([mcnemar.p_value for *_, mcnemar in cells])
    per_cell = alpha / len(cells)
    decided = (
        noninferiority_decision(
            [(m.b, m.c, int(x.size)) for _, _, x, _, m in cells], margin=margin, alpha=alpha
        ).cells
        if test == "non-inferiority"
        else [None] * len(cells)
    )
    rows = []
    for (n, presentation, x, y, mcnemar), p_holm, cell in zip(
        cells, adjusted, decided, strict=True
    ):
        size = int(x.size)
        delta = (mcnemar.b - mcnemar.c) / size
        low, high = paired_difference_interval(mcnemar.b, mcnemar.c, size, confidence=confidence)
        rows.append(
            TrendRow(
                checkpoint=name,
                reference=ref_name,
                against=against,
                n=n,
                presentation=presentation,
                pairs=size,
                candidate=float(x.mean()),
                baseline=float(y.mean()),
                delta=delta,
                low=low,
                high=high,
                b=mcnemar.b,
                c=mcnemar.c,
                method=mcnemar.method,
                p_value=mcnemar.p_value,
                p_holm=p_holm,
                detectable_drop=detectable_drop(
                    mcnemar.b, mcnemar.c, size, alpha=per_cell, power=power, test=test
                ),
                regression=delta < -margin and p_holm < alpha,
                test=test,
                lower_holm=None if cell is None else cell.lower_holm,
                noninferior=None if cell is None else cell.noninferior,
            )
        )
    return rows


def _aligned(
    checkpoints: Sequence[Checkpoint],
) -> list[tuple[str, np.ndarray, dict[str, np.ndarray]]]:
    """Each checkpoint's level and correctness in the first checkpoint's instance order."""
    first = checkpoints[0]
    order = _index(first)
    first_level = _levels(first, len(order))
    aligned = []
    for checkpoint in checkpoints:
        index = _index(checkpoint)
        missing = [i for i in order if i not in index]
        extra = [i for i in index if i not in order]
        if missing or extra:
            raise ValueError(
                f"checkpoint {checkpoint.name!r} holds other instances than {first.name!r}: "
                f"{len(missing)} missing (e.g. {missing[:3]}), {len(extra)} extra "
                f"(e.g. {extra[:3]}); archive every checkpoint with the same design"
            )
        take = np.fromiter((index[i] for i in order), dtype=np.intp, count=len(order))
        level = _levels(checkpoint, len(index))[take]
        if not np.array_equal(level, first_level):
            bad = int(np.flatnonzero(level != first_level)[0])
            raise ValueError(
                f"checkpoint {checkpoint.name!r} puts instance {list(order)[bad]!r} at level "
                f"{level[bad]}, {first.name!r} at {first_level[bad]}; the designs differ"
            )
        correct = {}
        for presentation, values in checkpoint.correct.items():
            array = np.asarray(values)
            if array.dtype != np.bool_ or array.shape != (len(index),):
                raise ValueError(
                    f"checkpoint {checkpoint.name!r}: correct[{presentation!r}] must be a "
                    f"boolean array with one entry per instance ({len(index)}), got "
                    f"dtype={array.dtype}, shape={array.shape}"
                )
            correct[presentation] = array[take]
        aligned.append((checkpoint.name, level, correct))
    return aligned


def _index(checkpoint: Checkpoint) -> dict[str, int]:
    index = {instance: k for k, instance in enumerate(checkpoint.ids)}
    if len(index) != len(checkpoint.ids):
        raise ValueError(
            f"checkpoint {checkpoint.name!r}: instance ids must be unique, got "
            f"{len(checkpoint.ids) - len(index)} repeated"
        )
    if not index:
        raise ValueError(f"checkpoint {checkpoint.name!r} holds no instance")
    return index


def _levels(checkpoint: Checkpoint, count: int) -> np.ndarray:
    level = np.asarray(checkpoint.level)
    if level.shape != (count,) or not np.issubdtype(level.dtype, np.integer):
        raise ValueError(
            f"checkpoint {checkpoint.name!r}: level must be an integer array with "
            f"one entry per instance ({count}), got dtype={level.dtype}, "
            f"shape={level.shape}"
        )
    return level
