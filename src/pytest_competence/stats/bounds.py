"""One-sided bounds behind a pass: the failure rate of a strict pass, a threshold with confidence.

A strict competence test passes when every instance is right on every presentation (C = 1
throughout). The pass says more on 4,000 instances than on 40; the exact one-sided upper bound on
the per-instance failure rate says how much: "C = 1 on 800 instances: failure rate ≤ 0.37% at
95%". A threshold such as ``robust_correct >= 0.95 at 95%`` holds when the one-sided Wilson lower
bound of the figure is at least 0.95. Both levels are one-sided: "at 95%" means that a rate
outside the bound would give data this good at most 5% of the time.
"""

from __future__ import annotations

import math

from pytest_competence.stats.intervals import check_count, check_open_unit, wilson_interval

__all__ = ["failure_rate_upper_bound", "wilson_lower_bound"]


def failure_rate_upper_bound(failures: int, instances: int, *, confidence: float = 0.95) -> float:
    """Clopper–Pearson one-sided upper bound on a binomial rate (failures per instance).

    Clopper and Pearson, "The use of confidence or fiducial limits illustrated in the case of
    the binomial", Biometrika 26:404–413 (1934): the bound is the rate p at which
    ``P(Bin(n, p) ≤ failures) = 1 − confidence``, i.e. the ``confidence`` quantile of
    Beta(failures + 1, n − failures); 1 when every instance failed. With no failure it is
    ``1 − (1 − confidence)^(1/n)`` (the "rule of three" is its approximation 3/n at 95%):
    0.37% for n = 800. It equals the upper end of the two-sided exact interval at level
    ``2·confidence − 1`` (``scipy.stats.binomtest(failures, n).proportion_ci(2·confidence − 1,
    method="exact").high``).

    Raises:
        TypeError, ValueError: a count is not a non-negative int, ``failures > instances``,
            ``instances`` is 0, or ``confidence`` is outside (0, 1).
    """
    failures = check_count(failures, "failures")
    instances = check_count(instances, "instances")
    confidence = check_open_unit(confidence, "confidence", "0.95")
    if instances == 0:
        raise ValueError(
            "instances must be at least 1, got instances=0: a test that ran no "
            "instance has no failure rate to bound"
        )
    if failures > instances:
        raise ValueError(
            f"failures must not exceed instances, got failures={failures}, instances={instances}"
        )
    if failures == instances:
        return 1.0
    if failures == 0:  # closed form, exact to the last bit where betaincinv rounds
        return -math.expm1(math.log1p(-confidence) / instances)
    from scipy.special import betaincinv  # here: a strict pass (no failure) needs no scipy

    return float(betaincinv(failures + 1, instances - failures, confidence))


def wilson_lower_bound(successes: int, total: int, *, confidence: float = 0.95) -> float:
    """One-sided Wilson score lower bound on a proportion at ``confidence``.

    The lower end of the Wilson interval (:func:`~pytest_competence.stats.wilson_interval`,
    Wilson, "Probable inference, the law of succession, and statistical inference", JASA
    22:209–212, 1927) at two-sided level ``2·confidence − 1``, so that its z is the one-sided
    z_{confidence} (1.645 at 95%): ``statsmodels.stats.proportion.proportion_confint(successes,
    total, alpha=2·(1 − confidence), method="wilson")[0]``. It is higher than the lower end of
    the two-sided 95% intervals the reports show beside each figure, which use z = 1.96.
    ``total = 0`` gives NaN: nothing was observed, so no threshold holds.

    Raises:
        TypeError, ValueError: as :func:`~pytest_competence.stats.wilson_interval`, or
            ``confidence`` at or below 0.5 (a one-sided bound at 50% or less is no bound).
    """
    confidence = check_open_unit(confidence, "confidence", "0.95")
    if confidence <= 0.5:
        raise ValueError(
            f"confidence must be above 0.5 for a one-sided bound, got "
            f"confidence={confidence!r}; for example confidence=0.95"
        )
    return wilson_interval(successes, total, 2.0 * confidence - 1.0)[0]
