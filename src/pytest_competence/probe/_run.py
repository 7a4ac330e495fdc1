"""All four readings of one design under one ``hf:`` model, in one call.

:func:`probe_model` reads the answer-position states of every prompt of a design (chunk by
chunk, :class:`~.internals.StateReader`), then computes from them the output decomposition
(App. E.3, Table 11: on the model's own answer logits, the margins ``readout=score`` uses —
first-token logits where an answer spans several tokens, ``single_token`` false), the
gold probes per layer (App. I, Figure 5), the logit lens per layer, and original → equivalent
patching on the pairs whose answers disagree. CBE paper, arXiv:2610.22894.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ._decomposition import DecompositionCell, answer_of, decompose, lens_decomposition
from ._internals import AnswerStates, PatchResult, StateReader, patch_pairs
from ._layers import DEFAULTS, ProbeCell, probe_cells
from ._rows import plain_floats

if TYPE_CHECKING:
    from pytest_competence.strategies import Item

__all__ = ["ProbeReport", "probe_model"]

_CHUNK = 1024  # items per reading chunk: bounds the prompts' token ids held at once


@dataclass(frozen=True)
class ProbeReport:
    """What :func:`probe_model` found. ``patching`` covers the pairs whose answers disagreed
    when the states were read (``None`` without patching); ``states`` is kept only when asked
    (``keep_states``)."""

    model: str
    device: str
    dtype: str
    layers: tuple[int, ...]
    model_layers: int
    prompts: int
    unread: int  # prompts whose states could not be read (errors, over the context)
    single_token: bool
    lens_gap: float
    decomposition: list[DecompositionCell]
    probes: list[ProbeCell]
    lens: list[dict[str, Any]]
    patching: PatchResult | None
    states: AnswerStates | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values for a report."""
        return {
            "model": self.model,
            "device": self.device,
            "dtype": self.dtype,
            "layers": list(self.layers),
            "model_layers": self.model_layers,
            "prompts": self.prompts,
            "unread": self.unread,
            "single_token": self.single_token,
            "lens_gap": self.lens_gap,
            "decomposition": [c.to_dict() for c in self.decomposition],
            "probes": [c.to_dict() for c in self.probes],
            "lens": [
                {
                    "presentation": c["presentation"],
                    "level": c["level"],
                    "default": plain_floats(c["default"]),
                    "signal": plain_floats(c["signal"]),
                    "accuracy": plain_floats(c["accuracy"]),
                }
                for c in self.lens
            ],
            "patching": None if self.patching is None else self.patching.to_dict(),
        }


def probe_model(
    model: Any,
    items: Sequence[Item],
    *,
    layers: Sequence[int] | None = None,
    precision: str = "float32",
    patch: str | None = "equivalent",
    patch_layers: Sequence[int] | None = None,
    B: int = 2000,
    keep_states: bool = False,
    **settings: Any,
) -> ProbeReport:
    """Decomposition, gold probes, logit lens and patching of ``items`` under ``model``.

    ``model`` is an ``hf:`` model (else :class:`~.internals.ProbeUnavailable`, before any
    work); ``items`` a design (each item's prompts, original first). ``layers`` are the
    residual indices kept and probed (default all, 0 … L); ``precision`` the dtype kept
    (``float32``/``float16``). ``patch`` names the presentation the original is patched into
    (``None``: no patching), at ``patch_layers`` (default ``layers``). ``B`` is the
    decomposition's bootstrap resamples; ``settings`` the probe's (``folds`` 5, ``l2`` 1.0,
    ``permutations`` 100, ``threshold`` 0.9, ``confidence`` 0.95, ``seed`` 0).
    """
    unknown = sorted(set(settings) - set(DEFAULTS))
    if unknown:
        raise TypeError(
            f"probe_model() got unknown settings {unknown}; the probe's settings "
            f"are {', '.join(DEFAULTS)}"
        )
    total = sum(len(item.prompts) for item in items)
    reader = StateReader(model, layers=layers, precision=precision, total=total)
    if patch is not None and items and patch not in [p.presentation for p in items[0].prompts]:
        raise ValueError(
            f"patch={patch!r} is not a presentation of this design (it has "
            f"{[p.presentation for p in items[0].prompts]}); name one, or None"
        )
    for start in range(0, len(items), _CHUNK):
        reader.add([p for item in items[start : start + _CHUNK] for p in item.prompts])
    states = reader.finish()
    rows, ok = states.rows, states.ok
    scores = np.where(ok[:, None], states.logits, np.nan)
    seed = settings.get("seed", DEFAULTS["seed"])
    decomposition = decompose(scores, rows, B=B, seed=seed)
    probes = probe_cells(states.states, rows, ok=ok, layers=states.layers, **settings)
    lens = lens_decomposition(np.where(ok[:, None, None], states.lens, np.nan), rows)
    patching = None
    if patch is not None:
        patching = _patch(
            model,
            items,
            states,
            patch,
            states.layers if patch_layers is None else tuple(patch_layers),
        )
    return ProbeReport(
        getattr(model, "name", repr(model)),
        states.device,
        states.dtype,
        states.layers,
        states.model_layers,
        len(rows),
        int((~ok).sum()),
        states.single_token,
        states.lens_gap,
        decomposition,
        probes,
        lens,
        patching,
        states if keep_states else None,
    )


def _patch(
    model: Any, items: Sequence[Item], states: AnswerStates, into: str, layers: tuple[int, ...]
) -> PatchResult:
    """Patching of the pairs whose answers disagreed when the states were read (the others
    need no patch run)."""
    answer = answer_of(states.logits)
    offsets = np.cumsum([0] + [len(item.prompts) for item in items])[:-1]
    pairs = []
    for item, start in zip(items, offsets):
        k = next(k for k, p in enumerate(item.prompts) if p.presentation == into)
        a, b = answer[start], answer[start + k]
        if a >= 0 and b >= 0 and a != b:
            pairs.append((item.prompts[0], item.prompts[k]))
    if pairs:
        return patch_pairs(model, pairs, layers=layers)
    none = np.zeros(0, dtype=np.int64)
    return PatchResult(
        states.rows.answers,
        layers,
        none,
        none,
        none,
        np.zeros((0, len(layers)), np.int64),
        np.zeros((0, len(layers), len(states.rows.answers)), np.float32),
        [],
    )
