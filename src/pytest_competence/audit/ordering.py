"""The ordering family's reference-policy zoo for the audit and the diagnosis.

The audit universe of every family, ordering included, is :mod:`.universe`; ordering's
candidate components are :meth:`~pytest_competence.strategies.Ordering.audit_components`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["reference_zoo"]


def reference_zoo(levels: Sequence[int]) -> tuple[dict[str, Any], dict[str, int]]:
    """The reference policies as models, and their estimand (1 competent, 0 not).

    The zoo: the ideal solver; the constant, coin and noisy policies; the endpoint shortcut, the
    forward reader, the names-order reader; and one threshold policy per declared level (ideal
    up to that size, wrong on reworded prompts beyond it).
    """
    from pytest_competence.models.reference import reference_policy

    names = ["ideal", "always-yes", "always-no", "coin", "noisy?p=0.1", "endpoint",
             "forward-reader", "names-order", *(f"threshold?n={n}" for n in sorted(set(levels)))]
    models = {f"ref:{n}": reference_policy(n, f"ref:{n}") for n in names}
    return models, {name: int(name == "ref:ideal") for name in models}
