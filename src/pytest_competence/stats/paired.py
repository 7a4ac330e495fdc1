"""Paired tests of marginal accuracy differences: McNemar with Holm correction.

CBE paper, arXiv:2610.22894, §3.3: "McNemar tests marginal accuracy differences, including format failures, with
Holm correction." CBE paper, arXiv:2610.22894, App. B.2 ("Statistics"): "McNemar uses all-prompt correctness,
counting invalid answers wrong, with the continuity-corrected χ² for b + c > 25 and the exact
binomial test otherwise. Holm correction is across the compared models."
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from pytest_competence.stats.intervals import check_count

__all__ = ["EXACT_UP_TO_DISCORDANT", "McNemar", "holm", "mcnemar", "mcnemar_paired"]

#: CBE paper, arXiv:2610.22894, App. B.2: the χ² approximation is used only when there are more discordant pairs.
EXACT_UP_TO_DISCORDANT = 25


@dataclass(frozen=True)
class McNemar:
    """One McNemar test on the discordant counts of a paired comparison (CBE paper, arXiv:2610.22894, App. B.2).

    ``b`` counts pairs the first arm got right and the second wrong, ``c`` the reverse.
    ``statistic`` is ``(|b − c| − 1)² / (b + c)`` for ``method="chi2-cc"`` (df 1) and
    ``min(b, c)``, the binomial count in the smaller tail, for ``method="exact"``.
    """

    b: int
    c: int
    statistic: float
    method: Literal["chi2-cc", "exact"]
    p_value: float

    @property
    def discordant(self) -> int:
        """``b + c``, the number of pairs on which the two arms disagree in correctness."""
        return self.b + self.c


def mcnemar(b: int, c: int) -> McNemar:
    """McNemar's test of equal marginal accuracy from the discordant counts (CBE paper, arXiv:2610.22894, App. B.2).

    For ``b + c > 25`` the continuity-corrected χ² statistic ``(|b − c| − 1)² / (b + c)`` is
    referred to χ² with one degree of freedom. Otherwise the exact two-sided binomial test is
    used: under the null each discordant pair falls on either side with probability 1/2, and
    ``p = min(1, 2 · P(Bin(b + c, 1/2) ≤ min(b, c)))``. With no discordant pair (``b + c = 0``)
    nothing speaks against the null: ``p = 1``, statistic 0, method ``"exact"``.

    The χ² formula is applied as written, so ``b = c`` gives ``1 / (b + c)`` rather than 0
    (p slightly below 1), as in statsmodels' ``mcnemar(exact=False, correction=True)``.

    Raises:
        TypeError, ValueError: ``b`` or ``c`` is not a non-negative int.
    """
    b = check_count(b, "b")
    c = check_count(c, "c")
    discordant = b + c
    if not discordant:
        return McNemar(b, c, 0.0, "exact", 1.0)
    from scipy.special import bdtr, chdtrc  # here: arms that never disagree need no scipy

    if discordant > EXACT_UP_TO_DISCORDANT:
        statistic = (abs(b - c) - 1) ** 2 / discordant
        return McNemar(b, c, float(statistic), "chi2-cc", float(chdtrc(1, statistic)))
    smaller = min(b, c)
    # bdtr(k, n, p) is P(Bin(n, p) ≤ k).
    p_value = min(1.0, 2.0 * float(bdtr(smaller, discordant, 0.5)))
    return McNemar(b, c, float(smaller), "exact", p_value)


def mcnemar_paired(x_correct: ArrayLike, y_correct: ArrayLike) -> McNemar:
    """McNemar's test from per-instance correctness of two arms on the same instances.

    ``b`` counts instances with ``x`` right and ``y`` wrong, ``c`` those with ``x`` wrong and
    ``y`` right. Pass all-prompt correctness with invalid answers counted wrong (CBE paper, arXiv:2610.22894, App.
    B.2), so format failures count against an arm.

    Raises:
        ValueError: the arrays are not one-dimensional boolean arrays of equal length.
    """
    x = _boolean_vector(x_correct, "x_correct")
    y = _boolean_vector(y_correct, "y_correct")
    if x.shape != y.shape:
        raise ValueError(
            f"x_correct and y_correct must hold the same instances, got lengths {x.size} and "
            f"{y.size}; pass both arms' correctness for every matched instance"
        )
    return mcnemar(int(np.count_nonzero(x & ~y)), int(np.count_nonzero(~x & y)))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the order given (CBE paper, arXiv:2610.22894, §3.3, App. B.2).

    Sorting the m p-values ascending as p₍₁₎ ≤ … ≤ p₍ₘ₎, the adjusted value of p₍ᵢ₎ is
    ``max_{j ≤ i} min(1, (m − j + 1) · p₍ⱼ₎)``: the running maximum makes the adjusted values
    monotone in the raw ones, and rejecting where an adjusted value is at most α controls the
    family-wise error rate at α. Ties keep their input order (a stable sort), which cannot change
    any adjusted value because tied raw values receive the same running maximum.

    Raises:
        ValueError: a p-value is not a number in [0, 1].
    """
    raw = np.asarray(list(p_values), dtype=float)
    if raw.ndim != 1:
        raise ValueError(f"p_values must be a flat sequence of floats, got shape {raw.shape}")
    bad = np.flatnonzero(~((raw >= 0.0) & (raw <= 1.0)))
    if bad.size:
        raise ValueError(f"p_values must lie in [0, 1], got p_values[{bad[0]}]={raw[bad[0]]!r}")
    count = raw.size
    order = np.argsort(raw, kind="stable")
    multipliers = count - np.arange(count)
    stepped = np.minimum(1.0, np.maximum.accumulate(multipliers * raw[order]))
    adjusted = np.empty(count)
    adjusted[order] = stepped
    return adjusted.tolist()


def _boolean_vector(values: ArrayLike, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1 or array.dtype != np.bool_:
        raise ValueError(
            f"{name} must be a one-dimensional boolean array, got dtype={array.dtype}, "
            f"shape={array.shape}; pass e.g. np.asarray(correct, dtype=bool)"
        )
    return array
