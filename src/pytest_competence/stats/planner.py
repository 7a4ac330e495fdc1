"""Sample-size planning for profiles: interval half-widths and detectable paired differences.

CBE paper, arXiv:2610.22894, App. A, "Sample sizes": "At 200 pairs per n the 95% interval on ι_n has half-width
±6.9 points at ι = 0.5 and ±4.9 at ι = 0.85; the overall ι over the nine n levels (1,800 pairs)
has half-width ±2.3 points, and a paired difference in ι between two arms on the same instances
of about 3.7 points is detectable at 80% power. Per-cell accuracy within one n (50 instances) has
half-width up to ±14 points." Which formula and assumptions reproduce each figure is stated in
the docstrings below and checked in tests/test_stats.py.
"""

from __future__ import annotations

import math
from typing import Literal

from scipy.special import ndtri

from pytest_competence.stats.intervals import (
    check_count,
    check_open_unit,
    check_probability,
    two_sided_z,
)

__all__ = ["half_width", "minimum_detectable_difference"]


def half_width(
    p: float,
    pairs: int,
    confidence: float = 0.95,
    *,
    method: Literal["wald", "wilson"] = "wald",
) -> float:
    """Half-width of a confidence interval on a proportion p from ``pairs`` observations.

    ``"wald"`` (the default) is the normal approximation z·sqrt(p(1 − p)/n); it reproduces every
    half-width of the CBE paper, arXiv:2610.22894, App. A "Sample sizes" at the paper's rounding: 6.93 points at
    p = 0.5 and 4.95 at p = 0.85 with n = 200; 2.31 at p = 0.5 with n = 1,800 (the figure is the
    worst case p = 0.5); 13.86 at p = 0.5 with n = 50 ("up to ±14": p = 0.5 maximises it).

    ``"wilson"`` is half the length of the Wilson score interval (the paper's plotted intervals,
    App. B.2), z/(1 + z²/n)·sqrt(p(1 − p)/n + z²/4n²): 6.86, 4.95 and 2.31 points for the first
    three, but 13.36 — "±13", not "±14" — at n = 50, so the paper's planning figures are Wald.

    Raises:
        ValueError: ``p`` outside [0, 1], ``pairs`` < 1, ``confidence`` outside (0, 1), or an
            unknown ``method``.
    """
    share = check_probability(p, "p")
    count = check_count(pairs, "pairs")
    if count == 0:
        raise ValueError("pairs must be at least 1, got pairs=0")
    z = two_sided_z(check_open_unit(confidence, "confidence", "0.95"))
    if method == "wald":
        return z * math.sqrt(share * (1.0 - share) / count)
    if method == "wilson":
        z2_over_n = z * z / count
        spread = share * (1.0 - share) / count + z2_over_n / (4.0 * count)
        return z / (1.0 + z2_over_n) * math.sqrt(spread)
    raise ValueError(f"method must be 'wald' or 'wilson', got method={method!r}")


def minimum_detectable_difference(
    pairs: int,
    *,
    discordance: float,
    confidence: float = 0.95,
    power: float = 0.80,
) -> float:
    """Smallest paired difference δ detectable by a two-sided test on ``pairs`` matched instances.

    Each instance contributes d_i = I_a − I_b ∈ {−1, 0, 1}, where I is an arm's per-instance
    indicator (for ι: "this pair agreed"). With ψ = P(I_a ≠ I_b), the ``discordance``,
    Var(d) = ψ − δ². The normal-approximation power condition for the paired mean,
    δ = (z_{1−α/2} + z_power)·sqrt((ψ − δ²)/n), solves in closed form to::

        δ = k · sqrt(ψ / (n + k²)),   k = z_{1−α/2} + z_power

    CBE paper, arXiv:2610.22894, App. A's "about 3.7 points … at 80% power" for 1,800 pairs follows for
    ψ ∈ [0.307, 0.324), e.g. ψ = 0.32 (δ = 3.73 points): two arms at ι = 0.8 whose agreement
    indicators are independent given the instance, ψ = 2ι(1 − ι). The paper states no ψ; the
    conservative worst case ψ = 0.5 (independent arms at ι = 0.5) gives 4.66 points instead.

    Raises:
        ValueError: ``pairs`` < 1, ``discordance`` outside (0, 1], or ``confidence``/``power``
            outside (0, 1).
    """
    count = check_count(pairs, "pairs")
    if count == 0:
        raise ValueError("pairs must be at least 1, got pairs=0")
    psi = check_probability(discordance, "discordance")
    if psi == 0.0:
        raise ValueError(
            "discordance must be above 0: with no discordant instance no difference is "
            "detectable; use e.g. discordance=2*iota*(1-iota) for independent arms at ι"
        )
    z_alpha = two_sided_z(check_open_unit(confidence, "confidence", "0.95"))
    z_power = float(ndtri(check_open_unit(power, "power", "0.8")))
    k = z_alpha + z_power
    return k * math.sqrt(psi / (count + k * k))
