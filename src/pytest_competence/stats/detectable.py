"""What a paired gate could have detected: minimum detectable drops and the pairs to reach a margin.

Both gates compare a candidate with a baseline on the same n instances, a level × presentation
at a time; ``b`` counts instances the candidate got right and the baseline wrong, ``c`` the
reverse, ψ̂ = (b + c)/n the observed discordance; drops are accuracy points as fractions, and
``alpha`` the gate's family-wise level. The power formula is the planner's
(:func:`~pytest_competence.stats.minimum_detectable_difference`), Miller's ("Adding Error Bars to
Evals", arXiv:2411.00640, paired differences): power 1 − β at ``s = (z_α + z_β)·sqrt((ψ − Δ²)/n)``.

- **Regression gate** (two-sided McNemar): Δ = 0 against −δ, z_α = z_{1−α/2}: δ = k·sqrt(ψ/(n + k²)).
- **Non-inferiority gate** (one-sided, :mod:`~pytest_competence.stats.noninferiority`): null
  Δ = −margin, alternative Δ = 0, z_α = z_{1−α}: the smallest margin passed is k₁·sqrt(ψ/n).

**Zero discordance.** An observed ψ̂ = 0 is common and says little about ψ; any drop δ makes at
least a share δ discordant, so ψ = max(ψ̂, s): a floor of s = k²/(n + k²) (regression) or
k₁²/n (non-inferiority). **Holm** decides a lone regressed cell among m at α/m, so every cell's
drop is computed at α/m and the gate's is its largest cell's (the stated power wherever the drop
happens); the regression gate's margin on the observed drop is not part of it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from scipy.special import ndtr, ndtri

from pytest_competence.stats.intervals import (
    check_count,
    check_open_unit,
    check_probability,
    two_sided_z,
)
from pytest_competence.stats.noninferiority import (
    check_margin,
    check_table,
    noninferiority_p_value,
)
from pytest_competence.stats.paired import mcnemar
from pytest_competence.stats.planner import minimum_detectable_difference

__all__ = [
    "CellPower",
    "GatePower",
    "GateTest",
    "detectable_drop",
    "gate_power",
    "noninferiority_power",
    "pairs_needed",
    "regression_power",
]

GateTest = Literal["regression", "non-inferiority"]


def regression_power(drop: float, pairs: int, *, discordance: float, alpha: float) -> float:
    """Power of the two-sided paired test at level ``alpha`` against a true drop ``drop``:
    ``Φ(δ·sqrt(n)/sqrt(ψ − δ²) − z_{1−α/2})``, the planner's approximation (the far tail is
    left out, as there). ``drop`` must not exceed ``discordance``, which a drop implies."""
    n = _pairs(pairs)
    delta, psi = _share(drop, "drop"), _share(discordance, "discordance")
    _implied(delta, psi)
    z = two_sided_z(1.0 - check_open_unit(alpha, "alpha", "0.05"))
    if delta == 0.0:
        return float(ndtr(-z))
    return float(ndtr(delta * math.sqrt(n) / math.sqrt(psi - delta * delta) - z))


def noninferiority_power(
    pairs: int, *, margin: float, discordance: float, alpha: float, drop: float = 0.0
) -> float:
    """Power of the one-sided non-inferiority test at level ``alpha`` to pass a candidate whose
    true drop is ``drop`` (below ``margin``): ``Φ((m − δ)·sqrt(n)/sqrt(ψ − δ²) − z_{1−α})``."""
    n = _pairs(pairs)
    m = check_margin(margin)
    delta, psi = _share(drop, "drop"), _share(discordance, "discordance")
    _implied(delta, psi)
    z = float(ndtri(1.0 - check_open_unit(alpha, "alpha", "0.05")))
    spread = psi - delta * delta
    if spread == 0.0:
        return 1.0 if m > delta else 0.0
    return float(ndtr((m - delta) * math.sqrt(n) / math.sqrt(spread) - z))


def detectable_drop(
    b: int, c: int, pairs: int, *, alpha: float, power: float = 0.80, test: GateTest = "regression"
) -> float:
    """The minimum detectable drop at this size and observed discordance ψ̂ = (b + c)/n.

    ``test="regression"``: the true drop the two-sided McNemar test at ``alpha`` detects with
    ``power``, ``minimum_detectable_difference(n, discordance=max(ψ̂, k²/(n + k²)),
    confidence=1 − alpha, power=power)``, k = z_{1−α/2} + z_power (the planner's function,
    with the zero-discordance floor of the module docstring).
    ``test="non-inferiority"``: the smallest margin a candidate exactly as good as the baseline
    passes with ``power`` at one-sided ``alpha``, k₁·sqrt(max(ψ̂, k₁²/n)/n) with
    k₁ = z_{1−α} + z_power, at most 1 (1: no margin below 1 is reached).

    Pass the α Holm leaves the comparison (see :func:`gate_power`), not the gate's α.

    Raises:
        TypeError, ValueError: bad counts, ``alpha`` or ``power`` outside (0, 1), or an
            unknown ``test``.
    """
    b, c, n = check_table(b, c, pairs)
    alpha = check_open_unit(alpha, "alpha", "0.05")
    power = check_open_unit(power, "power", "0.8")
    return _drop_and_discordance((b + c) / n, n, alpha, power, _test(test))[0]


def pairs_needed(
    b: int,
    c: int,
    pairs: int,
    *,
    margin: float,
    alpha: float,
    power: float = 0.80,
    test: GateTest = "regression",
) -> int | None:
    """The fewest pairs per level at which :func:`detectable_drop` is at most ``margin``, the
    observed discordance share ψ̂ = (b + c)/n held fixed; ``None`` when ``margin`` is 0 (no
    finite design detects a drop of 0).

    Regression: n ≥ k²·(max(ψ̂/m², 1/m) − 1); non-inferiority: n ≥ k₁²·max(ψ̂, m)/m², with k
    and k₁ as in :func:`detectable_drop`. The closed form is checked against the detectable
    drop itself, so the returned n meets the margin and n − 1 does not.
    """
    b, c, n = check_table(b, c, pairs)
    m = check_margin(margin)
    alpha = check_open_unit(alpha, "alpha", "0.05")
    power = check_open_unit(power, "power", "0.8")
    test = _test(test)
    if m == 0.0:
        return None
    psi = (b + c) / n
    if test == "regression":
        k = two_sided_z(1.0 - alpha) + float(ndtri(power))
        estimate = k * k * (max(psi / (m * m), 1.0 / m) - 1.0)
    else:
        k1 = float(ndtri(1.0 - alpha)) + float(ndtri(power))
        estimate = k1 * k1 * max(psi, m) / (m * m)

    def reaches(size: int) -> bool:
        return _drop_and_discordance(psi, size, alpha, power, test)[0] <= m

    needed = max(1, math.ceil(estimate - 1e-9))
    while needed > 1 and reaches(needed - 1):
        needed -= 1
    while not reaches(needed):
        needed += 1
    return needed


@dataclass(frozen=True)
class CellPower:
    """One comparison's power: the observed ``discordance`` ψ̂ and the ``discordance_used``
    (after the zero-discordance floor), the ``alpha`` it is judged at (α/m), its
    ``detectable_drop``, and the ``pairs_needed`` to reach the margin (``None`` for margin 0).

    ``smallest_p`` is the p-value of the most telling table at this size: for the regression
    gate a total collapse (every pair discordant against the candidate, the smallest McNemar
    p-value there is), for non-inferiority a candidate answering exactly as the baseline
    (b = c = 0). When it is not below ``alpha``, the cell can never flag a regression, or
    never pass a candidate that is not better than the baseline, whatever the answers."""

    b: int
    c: int
    pairs: int
    discordance: float
    discordance_used: float
    alpha: float
    detectable_drop: float
    pairs_needed: int | None
    smallest_p: float


@dataclass(frozen=True)
class GatePower:
    """A gate's power: every cell's, and the gate's ``detectable_drop`` (the ``worst`` cell's,
    by index in the cells given). ``underpowered`` when it exceeds ``margin`` (always, for a
    margin of 0); ``pairs_needed`` is then the most pairs per level any cell needs (``None``
    for a margin of 0)."""

    test: GateTest
    alpha: float
    alpha_per_cell: float
    power: float
    margin: float
    cells: tuple[CellPower, ...]
    detectable_drop: float
    worst: int
    underpowered: bool
    pairs_needed: int | None


def gate_power(
    cells: Sequence[tuple[int, int, int]],
    *,
    alpha: float,
    margin: float,
    power: float = 0.80,
    test: GateTest = "regression",
) -> GatePower:
    """The detectable drop of every cell and of the gate, at α/m for m cells (Holm's smallest).

    ``cells`` holds one ``(b, c, pairs)`` per level × presentation of the gate's Holm family,
    in any order (the result keeps it). ``alpha`` is the gate's level: two-sided for the
    regression gate, one-sided for non-inferiority.

    Raises:
        ValueError: no cells, a bad count, or ``alpha``, ``power`` or ``margin`` out of range.
    """
    tables = [check_table(*cell) for cell in cells]
    if not tables:
        raise ValueError("cells must hold at least one (b, c, pairs) comparison, got none")
    alpha = check_open_unit(alpha, "alpha", "0.05")
    power = check_open_unit(power, "power", "0.8")
    m = check_margin(margin)
    per_cell = alpha / len(tables)
    results = []
    test = _test(test)
    for b, c, n in tables:
        psi = (b + c) / n
        drop, used = _drop_and_discordance(psi, n, per_cell, power, test)
        if test == "regression":
            smallest = mcnemar(0, n).p_value
        else:
            smallest = noninferiority_p_value(0, 0, n, margin=m)
        results.append(
            CellPower(
                b=b,
                c=c,
                pairs=n,
                discordance=psi,
                discordance_used=used,
                alpha=per_cell,
                detectable_drop=drop,
                pairs_needed=pairs_needed(
                    b, c, n, margin=m, alpha=per_cell, power=power, test=test
                ),
                smallest_p=smallest,
            )
        )
    worst = max(range(len(results)), key=lambda i: results[i].detectable_drop)
    needed = [r.pairs_needed for r in results]
    return GatePower(
        test=test,
        alpha=alpha,
        alpha_per_cell=per_cell,
        power=power,
        margin=m,
        cells=tuple(results),
        detectable_drop=results[worst].detectable_drop,
        worst=worst,
        underpowered=results[worst].detectable_drop > m,
        pairs_needed=None if m == 0.0 else max(n for n in needed if n is not None),
    )


def _drop_and_discordance(
    psi: float, n: int, alpha: float, power: float, test: str
) -> tuple[float, float]:
    """The detectable drop and the discordance it was computed with (ψ̂ or the floor)."""
    if test == "regression":
        k = two_sided_z(1.0 - alpha) + float(ndtri(power))
        used = max(psi, k * k / (n + k * k))
        return minimum_detectable_difference(
            n, discordance=used, confidence=1.0 - alpha, power=power
        ), used
    k1 = float(ndtri(1.0 - alpha)) + float(ndtri(power))
    used = max(psi, k1 * k1 / n)
    return min(1.0, k1 * math.sqrt(used / n)), min(1.0, used)


def _test(test: object) -> GateTest:
    if test == "regression" or test == "non-inferiority":
        return test
    raise ValueError(f"test must be 'regression' or 'non-inferiority', got test={test!r}")


def _pairs(pairs: object) -> int:
    n = check_count(pairs, "pairs")
    if n == 0:
        raise ValueError("pairs must be at least 1, got pairs=0")
    return n


def _share(value: object, name: str) -> float:
    return check_probability(value, name)


def _implied(drop: float, discordance: float) -> None:
    if drop > discordance:
        raise ValueError(
            f"drop must not exceed discordance (a drop δ makes at least a share δ "
            f"of the instances discordant), got drop={drop!r}, "
            f"discordance={discordance!r}"
        )
