"""Why a model fails, not only where: answer-position readings of in-process models.

CBE paper, arXiv:2610.22894, App. E.3 (Table 11) and App. I (Figure 5):

* **output decomposition** (:func:`decompose`, :func:`decompose_evaluation`): per
  presentation × level, the yes − no margin at the answer position split into a default toward
  "yes" (δ) and an instance signal (s), with accuracy, yes-rate and bootstrap intervals by
  instance, from the scores any scoring backend kept as it answered;
* **gold probes by layer** (:func:`probe_cells`, :func:`probe_layers`): cross-validated probes
  of the gold on the residual stream, AUROC per layer with a shuffled-label null band;
* **logit lens** (:attr:`AnswerStates.lens`, :func:`lens_decomposition`);
* **activation patching** original → equivalent (:func:`patch_pairs`);
* all four for an ``hf:`` model: :func:`probe_model`, :func:`probe_evaluation`, :func:`probe_design`.

The statistics need numpy and scipy; reading a model needs the ``hf`` extra. Each name loads its
own module on first use, so the decomposition a scored run reads costs no scipy. A model
without in-process internals raises :class:`ProbeUnavailable` (reported "n/a" with its reason).
What the figures can and cannot show: ``docs/probes.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_competence._lazy import lazy_attributes

# Importing the package imports none of these: the output decomposition (which any scored run
# reads) needs numpy alone, and the probes' scipy is imported only by a run that probes.
if TYPE_CHECKING:
    from ._decomposition import (
        DecompositionCell,
        answer_of,
        decompose,
        decompose_evaluation,
        lens_decomposition,
        score_matrix,
    )
    from ._internals import ProbeUnavailable
    from ._layers import DEFAULTS, ProbeCell, ProbeCurve, probe_cells, probe_layers
    from ._linear import auroc, instance_folds, ridge_logistic
    from ._patching import PatchResult, patch_pairs
    from ._reading import AnswerStates, StateReader, read_answer_states, state_bytes
    from ._rows import Cell, PromptRows, evaluation_rows
    from ._run import ProbeReport, probe_design, probe_evaluation, probe_model
    from ._settings import DEFAULT_MAX_MIB, ProbeSettings, probe_settings

_MODULES = {
    "._decomposition": (
        "DecompositionCell",
        "answer_of",
        "decompose",
        "decompose_evaluation",
        "lens_decomposition",
        "score_matrix",
    ),
    "._internals": ("ProbeUnavailable",),
    "._layers": ("DEFAULTS", "ProbeCell", "ProbeCurve", "probe_cells", "probe_layers"),
    "._linear": ("auroc", "instance_folds", "ridge_logistic"),
    "._patching": ("PatchResult", "patch_pairs"),
    "._reading": ("AnswerStates", "StateReader", "read_answer_states", "state_bytes"),
    "._rows": ("Cell", "PromptRows", "evaluation_rows"),
    "._run": ("ProbeReport", "probe_design", "probe_evaluation", "probe_model"),
    "._settings": ("DEFAULT_MAX_MIB", "ProbeSettings", "probe_settings"),
}
_LAZY = {name: module for module, names in _MODULES.items() for name in names}

__all__ = [
    "DEFAULTS",
    "DEFAULT_MAX_MIB",
    "AnswerStates",
    "Cell",
    "DecompositionCell",
    "PatchResult",
    "ProbeCell",
    "ProbeCurve",
    "ProbeReport",
    "ProbeSettings",
    "ProbeUnavailable",
    "PromptRows",
    "StateReader",
    "answer_of",
    "auroc",
    "decompose",
    "decompose_evaluation",
    "evaluation_rows",
    "instance_folds",
    "lens_decomposition",
    "patch_pairs",
    "probe_cells",
    "probe_design",
    "probe_evaluation",
    "probe_layers",
    "probe_model",
    "probe_settings",
    "read_answer_states",
    "ridge_logistic",
    "score_matrix",
    "state_bytes",
]


__getattr__ = lazy_attributes(__name__, _LAZY)
