"""Minimisation: from a failing competence test to its minimal failing case, saved and replayed.

- :mod:`._asking` asks a model for whole cases in one batched call, remembering every answer
  and counting calls and seconds against a budget (:class:`Asker`, :class:`Budget`);
- :mod:`._shrink` minimises a failing case: replay of the saved ones, a boundary search on n, a
  vocabulary scan, Hypothesis's shrinker, a confirmation (:func:`minimise`);
- :mod:`._casedb` keeps minimal cases in Hypothesis example databases, local and shared
  (:class:`CaseStore`);
- :mod:`._falsify` is the plugin's side: a failed test's case minimised into its failure
  message and its report (:func:`minimise_failure`) — in the suite's declared space first, then
  beyond it for a finding of its own — and saved cases replayed after a pass
  (:func:`replay_saved`); :mod:`._record` is how a minimal case reads, as data and as text;
- :mod:`._hooks` checks the ``competence_shrink`` marker and ini options (:class:`ShrinkHooks`).

This face hands each name on from its module when first asked for: the plugin loads the hooks
at start-up without Hypothesis, and the rest only when a test fails or replays.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_competence._lazy import lazy_attributes

if TYPE_CHECKING:
    from ._asking import Asker, Budget, Memo, verdicts
    from ._casedb import (
        CaseDatabases,
        CaseStore,
        SavedCase,
        case_key,
        github_location,
        open_databases,
    )
    from ._falsify import MINIMAL, attach_minimal, minimise_failure, replay_saved
    from ._hooks import (
        SHRINK_MARKER_HELP,
        ShrinkHooks,
        ShrinkSettings,
        settings_for,
        shrink_settings,
    )
    from ._record import minimal_record, minimal_text
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
        "open_databases",
    ),
    "._falsify": ("MINIMAL", "attach_minimal", "minimise_failure", "replay_saved"),
    "._record": ("minimal_record", "minimal_text"),
    "._hooks": (
        "SHRINK_MARKER_HELP",
        "ShrinkHooks",
        "ShrinkSettings",
        "settings_for",
        "shrink_settings",
    ),
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
    "MINIMAL",
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
    "ShrinkHooks",
    "ShrinkSettings",
    "attach_minimal",
    "boundary_search",
    "case_key",
    "check_minimal",
    "fails",
    "github_location",
    "minimal_record",
    "minimal_text",
    "minimise",
    "minimise_failure",
    "open_databases",
    "replay_saved",
    "settings_for",
    "shrink_settings",
    "verdicts",
]


__getattr__ = lazy_attributes(__name__, _LAZY)
