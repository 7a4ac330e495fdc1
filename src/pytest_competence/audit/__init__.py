"""Identifiability audit and mutation testing of competence suites (no model calls).

Can a suite tell a competent model from the plausible ways of faking competence? The audit runs
a finite policy class over the cells a suite observes and answers exactly: which policies are
observationally equivalent, which cross-estimand pairs collide (with a witness cell that would
separate them), which named components are essential, and the minimum identifying supports.
:func:`suite_universe` builds the cells of any family's declared suite, widened by the family's
audit components; :mod:`.suite` audits a suite with them (``pytest --competence-audit``).
"""

from __future__ import annotations

from .api import AuditResult, audit
from .components import (
    LATTICE_LIMIT,
    Components,
    LatticeRow,
    LeaveOneOut,
    lattice,
    leave_one_out,
)
from .core import Collision, Observations, observe, observe_models
from .hitting import MAX_NODES, HittingSets, minimum_hitting_sets
from .universe import SuiteCell, Universe, suite_universe

__all__ = [
    "LATTICE_LIMIT",
    "MAX_NODES",
    "AuditResult",
    "Collision",
    "Components",
    "HittingSets",
    "LatticeRow",
    "LeaveOneOut",
    "Observations",
    "SuiteCell",
    "Universe",
    "audit",
    "lattice",
    "leave_one_out",
    "minimum_hitting_sets",
    "observe",
    "observe_models",
    "suite_universe",
]
