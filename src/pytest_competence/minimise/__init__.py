"""Minimisation: from a failing competence test to its minimal failing case, saved and replayed.

- :mod:`._asking` asks a model for whole cases in one batched call, remembering every answer
  and counting calls and seconds against a budget (:class:`Asker`, :class:`Budget`);
- :mod:`._shrink` minimises a failing case: replay of the saved ones, a boundary search on n, a
  vocabulary scan, Hypothesis's shrinker, a confirmation (:func:`minimise`);
- :mod:`._casedb` keeps minimal cases in Hypothesis example databases, local and shared
  (:class:`CaseStore`);
- :mod:`._record` is how a minimal case reads, as data and as text;
- :mod:`._budget` checks the ``competence_shrink`` marker's arguments and the ini options
  (:func:`shrink_settings`).

The plugin's side — a failed test's case minimised into its failure message and saved cases
replayed after a pass — is :mod:`pytest_competence.plugin._falsify`. This face hands each name
on from its module when first asked for, so nothing here loads Hypothesis before a test fails.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_competence._lazy import lazy_attributes

if TYPE_CHECKING:
    from ._asking import Asker, Budget, Memo, verdicts
    from ._budget import SHRINK_MARKER_HELP, ShrinkSettings, shrink_settings
    from ._casedb import (
        CaseDatabases,
        CaseStore,
        SavedCase,
        case_key,
        github_location,
        may_hold_cases,
        open_databases,
    )
    from ._record import minimal_record, minimal_text, saved_by
    from ._shrink import (
        Boundary,
        CaseSpace,
        Minimal,
        Replay,
        boundary_search,
        check_minimal,
        fails,
        minimise,
    )

_MODULES = {
    "._asking": ("Asker", "Budget", "Memo", "verdicts"),
    "._casedb": (
        "CaseDatabases",
        "CaseStore",
        "SavedCase",
        "case_key",
        "github_location",
        "may_hold_cases",
        "open_databases",
    ),
    "._record": ("minimal_record", "minimal_text", "saved_by"),
    "._budget": ("SHRINK_MARKER_HELP", "ShrinkSettings", "shrink_settings"),
    "._shrink": (
        "Boundary",
        "CaseSpace",
        "Minimal",
        "Replay",
        "boundary_search",
        "check_minimal",
        "fails",
        "minimise",
    ),
}
_LAZY = {name: module for module, names in _MODULES.items() for name in names}

__all__ = [
    "SHRINK_MARKER_HELP",
    "Asker",
    "Boundary",
    "Budget",
    "CaseDatabases",
    "CaseSpace",
    "CaseStore",
    "Memo",
    "Minimal",
    "Replay",
    "SavedCase",
    "ShrinkSettings",
    "boundary_search",
    "case_key",
    "check_minimal",
    "fails",
    "github_location",
    "may_hold_cases",
    "minimal_record",
    "minimal_text",
    "minimise",
    "open_databases",
    "saved_by",
    "shrink_settings",
    "verdicts",
]


__getattr__ = lazy_attributes(__name__, _LAZY)
