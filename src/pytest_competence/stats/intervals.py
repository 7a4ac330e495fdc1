"""Binomial confidence intervals and the argument checks every stats module shares.

CBE paper, arXiv:2610.22894, App. B.2 ("Statistics"): "The new robust-correct curves use pointwise 95% Wilson
intervals on the same jointly parsed support as all three plotted quantities." The Wilson score
interval is used rather than the Wald interval because it stays inside [0, 1] and keeps close to
its nominal coverage near 0 and 1, where robust correctness sits for strong and weak models.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

__all__ = ["check_count", "check_open_unit", "check_probability", "two_sided_z", "wilson_interval"]


def check_count(value: object, name: str) -> int:
    """``value`` as a non-negative ``int``; a bool, a float or a negative number is refused."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(
            f"{name} must be a non-negative int, got {name}={value!r} "
            f"(type={type(value).__name__}); pass a count such as {name}=12"
        )
    if value < 0:
        raise ValueError(f"{name} must be a non-negative int, got {name}={value!r}")
    return int(value)


def check_probability(value: object, name: str) -> float:
    """``value`` as a float in [0, 1]; NaN and out-of-range values are refused."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(
            f"{name} must be a float in [0, 1], got {name}={value!r} (type={type(value).__name__})"
        )
    as_float = float(value)
    if not 0.0 <= as_float <= 1.0:  # also False for NaN
        raise ValueError(f"{name} must be a float in [0, 1], got {name}={value!r}")
    return as_float


def check_open_unit(value: object, name: str, example: str) -> float:
    """``value`` as a float strictly inside (0, 1), as a confidence level or a power must be."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(
            f"{name} must be a float in (0, 1), got {name}={value!r} (type={type(value).__name__})"
        )
    as_float = float(value)
    if not 0.0 < as_float < 1.0:
        raise ValueError(
            f"{name} must be a float strictly between 0 and 1, got {name}={value!r}; "
            f"for example {name}={example}"
        )
    return as_float


# ``float(ndtri(0.5 + c / 2))`` as scipy.special returns it, for the usual confidences (every
# verdict's intervals use 0.95), so that a passing test's verdict imports no scipy (0.3–0.4 s of
# CPU). Looked up by exact value: any other confidence (2 × 0.95 − 1 = 0.8999999999999999 among
# them) is computed. tests/test_stats.py checks every entry against ndtri.
_Z = {0.9: 1.6448536269514722, 0.95: 1.959963984540054, 0.99: 2.5758293035489004}


def two_sided_z(confidence: float) -> float:
    """The standard normal quantile z with ``P(|Z| ≤ z)`` = ``confidence`` (1.95996… at 0.95)."""
    if confidence in _Z:
        return _Z[confidence]
    from scipy.special import ndtri

    return float(ndtri(0.5 + confidence / 2.0))


def wilson_interval(successes: int, total: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``successes / total`` (CBE paper, arXiv:2610.22894, App. B.2).

    With p̂ = successes/total, n = total and z the two-sided normal quantile::

        centre = (p̂ + z²/2n) / (1 + z²/n)
        half   = z / (1 + z²/n) · sqrt(p̂(1 − p̂)/n + z²/4n²)

    and the interval is ``(centre − half, centre + half)``. It always contains p̂ and lies in
    [0, 1]; the result is clamped to both only so that round-off cannot break that (at p̂ = 1
    the upper end would otherwise come out as 0.9999999999999999). ``total = 0`` has no
    estimate and gives ``(nan, nan)``.

    Raises:
        TypeError: ``successes`` or ``total`` is not an int.
        ValueError: a count is negative, ``successes > total``, or ``confidence`` is outside (0, 1).
    """
    successes = check_count(successes, "successes")
    total = check_count(total, "total")
    confidence = check_open_unit(confidence, "confidence", "0.95")
    if successes > total:
        raise ValueError(
            f"successes must not exceed total, got successes={successes}, total={total}"
        )
    if total == 0:
        return (math.nan, math.nan)
    z = two_sided_z(confidence)
    share = successes / total
    z2_over_n = z * z / total
    centre = (share + z2_over_n / 2.0) / (1.0 + z2_over_n)
    half = (
        z / (1.0 + z2_over_n) * math.sqrt(share * (1.0 - share) / total + z2_over_n / (4.0 * total))
    )
    return (max(0.0, min(share, centre - half)), min(1.0, max(share, centre + half)))
