"""Identifiability audit and mutation testing of competence suites (no model calls).

Can a suite tell a competent model from the plausible ways of faking competence? The audit runs
a finite policy class over the cells a suite observes and answers exactly: which policies are
observationally equivalent, which cross-estimand pairs collide (with a witness cell that would
separate them), which named components are essential, and the minimum identifying supports.
:func:`suite_universe` builds the cells of any family's declared suite, widened by the family's
audit components; :func:`audit_suite` audits a suite with them (``pytest --competence-audit``,
which warns :class:`CompetenceAuditWarning` for a shortcut that survives), and :func:`diagnose`
tells which of a family's reference policies (:func:`family_zoo`) a model's answers match. Those
three are imported when first asked for: they need the statistics and the reports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_competence._lazy import lazy_attributes
from pytest_competence.audit._api import AuditResult, audit
from pytest_competence.audit._components import (
    LATTICE_LIMIT,
    Components,
    LatticeRow,
    LeaveOneOut,
    lattice,
    leave_one_out,
)
from pytest_competence.audit._core import Collision, Observations, observe, observe_models
from pytest_competence.audit._hitting import MAX_NODES, HittingSets, minimum_hitting_sets
from pytest_competence.audit._universe import SuiteCell, Universe, family_zoo, suite_universe

if TYPE_CHECKING:
    from pytest_competence.audit._diagnose import diagnose
    from pytest_competence.audit._suite import audit_suite

__all__ = [
    "LATTICE_LIMIT",
    "MAX_NODES",
    "AuditResult",
    "Collision",
    "CompetenceAuditWarning",
    "Components",
    "HittingSets",
    "LatticeRow",
    "LeaveOneOut",
    "Observations",
    "SuiteCell",
    "Universe",
    "audit",
    "audit_suite",
    "diagnose",
    "family_zoo",
    "lattice",
    "leave_one_out",
    "minimum_hitting_sets",
    "observe",
    "observe_models",
    "suite_universe",
]

_LAZY = {
    "audit_suite": "._suite",
    "diagnose": "._diagnose",
}


class CompetenceAuditWarning(UserWarning):
    """A competence suite lets a non-competent reference policy pass."""


__getattr__ = lazy_attributes(__name__, _LAZY)
