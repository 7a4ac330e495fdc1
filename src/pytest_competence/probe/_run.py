"""All four readings of one design under one ``hf:`` model, in one pass over its chunks.

:func:`probe_design` reads the answer-position states of every prompt of a design, chunk by
chunk (:class:`~._reading.StateReader`), patching each chunk's disagreeing original/equivalent
pairs while its prompts are at hand; then it computes from the states the output decomposition
(App. E.3, Table 11: on the model's own answer logits, the margins ``readout=score`` uses —
first-token logits where an answer spans several tokens, ``single_token`` false), the gold
probes per layer (App. I, Figure 5) and the logit lens per layer. CBE paper, arXiv:2610.22894.
:func:`probe_model` takes a design in memory, :func:`probe_evaluation` the design an evaluation
asked (regenerated chunk by chunk, as the plugin's ``--competence-probe`` does).

**Memory.** The states are the bound: ``prompts × |layers| × d`` floats (:func:`state_bytes`),
allocated once; ``max_mib`` refuses a design past it (:class:`~._internals.ProbeUnavailable`,
before any reading) with the ways down: fewer ``layers``, ``precision="float16"``, fewer
prompts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ._decomposition import DecompositionCell, answer_of, decompose, lens_decomposition
from ._layers import DEFAULTS, ProbeCell, probe_cells
from ._patching import PatchResult, patch_pairs
from ._reading import AnswerStates, StateReader
from ._rows import plain_floats

if TYPE_CHECKING:
    from pytest_competence.engine.evaluation import Evaluation
    from pytest_competence.strategies import Item

__all__ = ["ProbeReport", "probe_design", "probe_evaluation", "probe_model"]

_CHUNK = 1024  # items per reading chunk of a design in memory: bounds the token ids held


@dataclass(frozen=True)
class ProbeReport:
    """What :func:`probe_design` found. ``patching`` covers the pairs whose answers disagreed
    when the states were read (``None`` without patching); ``states`` is kept only when asked
    (``keep_states``). ``state_mib`` is the memory the states, lens and logits took."""

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
    precision: str = "float32"
    patch: str | None = None  # the presentation the originals were patched into
    state_mib: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values for a report."""
        return {
            "model": self.model,
            "device": self.device,
            "dtype": self.dtype,
            "precision": self.precision,
            "layers": list(self.layers),
            "model_layers": self.model_layers,
            "prompts": self.prompts,
            "unread": self.unread,
            "state_mib": round(self.state_mib, 3),
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
            "patch": self.patch,
            "patching": None if self.patching is None else self.patching.to_dict(),
        }


def probe_model(model: Any, items: Sequence[Item], **options: Any) -> ProbeReport:
    """:func:`probe_design` of a design held in memory (``items``: each item's prompts,
    original first)."""
    items = list(items)
    chunks = (items[start : start + _CHUNK] for start in range(0, len(items), _CHUNK))
    return probe_design(model, chunks, total=sum(len(item.prompts) for item in items), **options)


def probe_evaluation(evaluation: Evaluation, model: Any, **options: Any) -> ProbeReport:
    """:func:`probe_design` of exactly the design ``evaluation`` asked ``model`` (regenerated
    chunk by chunk, as the evaluation itself rebuilds its rows), each prompt read once
    whatever the attempts. Raises ``ValueError`` when the regenerated design is not the one
    evaluated (another instance order: a family that does not regenerate the same design)."""
    total = len(evaluation) * len(evaluation.presentations)
    return probe_design(model, _as_evaluated(evaluation), total=total, **options)


def _as_evaluated(evaluation: Evaluation) -> Iterable[Sequence[Item]]:
    """The evaluation's design chunk by chunk, checked instance by instance against the ids
    it evaluated."""
    ids, index = evaluation.ids, 0
    for chunk in evaluation.chunks():
        for item in chunk:
            if index >= len(ids) or item.id != ids[index]:
                found = ids[index] if index < len(ids) else "no instance"
                raise ValueError(
                    f"the design regenerated as {item.id!r} where the evaluation asked "
                    f"{found!r} (instance {index}): the probes must read the prompts the "
                    f"model answered; the family must regenerate its design identically"
                )
            index += 1
        yield chunk
    if index != len(ids):
        raise ValueError(f"the design regenerated {index} instances, the evaluation {len(ids)}")


def probe_design(
    model: Any,
    chunks: Iterable[Sequence[Item]],
    *,
    total: int,
    layers: Sequence[int] | None = None,
    precision: str = "float32",
    patch: str | None = "equivalent",
    patch_layers: Sequence[int] | None = None,
    B: int = 2000,
    keep_states: bool = False,
    max_mib: float | None = None,
    **settings: Any,
) -> ProbeReport:
    """Decomposition, gold probes, logit lens and patching of a design under ``model``.

    ``model`` is an ``hf:`` model (else :class:`~._internals.ProbeUnavailable`, before any
    work);
    ``chunks`` the design's items in chunks (each item's prompts, original first), ``total``
    its prompts. ``layers`` are the residual indices kept and probed (default all, 0 … L);
    ``precision`` the dtype kept (``float32``/``float16``); ``max_mib`` the most the states
    may take (``None``: no bound). ``patch`` names the presentation the original is patched
    into (``None``: no patching), at ``patch_layers`` (default ``layers``). ``B`` is the
    decomposition's bootstrap resamples; ``settings`` the probe's (``folds`` 5, ``l2`` 1.0,
    ``permutations`` 100, ``threshold`` 0.9, ``confidence`` 0.95, ``seed`` 0).
    """
    unknown = sorted(set(settings) - set(DEFAULTS))
    if unknown:
        raise TypeError(
            f"got unknown settings {unknown}; the probe's settings are {', '.join(DEFAULTS)}"
        )
    reader = StateReader(model, layers=layers, precision=precision, total=total, max_mib=max_mib)
    chosen = reader.layers if patch_layers is None else tuple(patch_layers)
    parts: list[PatchResult] = []
    for chunk in chunks:
        if not chunk:
            continue
        names = [p.presentation for p in chunk[0].prompts]
        if patch is not None and patch not in names:
            raise ValueError(
                f"patch={patch!r} is not a presentation of this design (it has {names}); "
                f"name one, or None"
            )
        logits = reader.add([p for item in chunk for p in item.prompts])
        if patch is not None:
            pairs = _disagreeing(chunk, answer_of(logits), patch)
            if pairs:
                parts.append(patch_pairs(model, pairs, layers=chosen))
    states = reader.finish()
    rows, ok = states.rows, states.ok
    scores = np.where(ok[:, None], states.logits, np.nan)
    seed = settings.get("seed", DEFAULTS["seed"])
    patching = None
    if patch is not None:
        patching = PatchResult.join(parts) if parts else PatchResult.empty(rows.answers, chosen)
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
        decompose(scores, rows, B=B, seed=seed),
        probe_cells(states.states, rows, ok=ok, layers=states.layers, **settings),
        lens_decomposition(np.where(ok[:, None, None], states.lens, np.nan), rows),
        patching,
        states if keep_states else None,
        precision,
        patch,
        states.nbytes / 2**20,
    )


def _disagreeing(chunk: Sequence[Item], answer: np.ndarray, into: str) -> list[tuple[Any, Any]]:
    """The (original, ``into``) prompt pairs of ``chunk`` whose read answers differ (the others
    need no patch run); ``answer`` indexes the chunk's prompts, item by item."""
    pairs = []
    start = 0
    for item in chunk:
        k = next(k for k, p in enumerate(item.prompts) if p.presentation == into)
        a, b = answer[start], answer[start + k]
        if a >= 0 and b >= 0 and a != b:
            pairs.append((item.prompts[0], item.prompts[k]))
        start += len(item.prompts)
    return pairs
