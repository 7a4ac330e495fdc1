"""The residual stream at the answer position of an ``hf:`` model: states, logit lens, patching.

CBE paper, arXiv:2610.22894, App. I: gold probes on the residual stream at the answer position,
the logit lens (nostalgebraist, 2020), and original residual states patched into equivalent
runs (Meng et al., 2022). Everything here reads the prompts exactly as the ``hf:`` backend's
``readout=score`` does: the same rendering (chat template or not), token ids, left-padded
batches of ``batch_size`` longest first, device and dtype (CUDA and bf16 when present), through
:meth:`~pytest_competence.models._hf_batches.Runner.answer_batches`.

**Layers.** Residual index ℓ ∈ 0 … L for a model of L blocks: ℓ < L is the input of block ℓ
(ℓ = 0 the embeddings as the first block reads them, scaled where the model scales them), ℓ = L
the last block's output, the input of the final norm. (transformers' ``hidden_states`` agree
for ℓ < L; its last entry is taken *after* the final norm in most models.)

**Answer position.** The last prompt token: the position whose next-token logits scoring reads
for an answer's first token. Prompts are padded on the left, so it is column −1 of every row.
Only that position is kept — (layers × d) floats per prompt, never a sequence.

**Logit lens.** At layer ℓ, each answer's logit read through the model's own final norm and
unembedding: ``unembed(norm(h_ℓ))[answer token]``. At ℓ = L it is the model's logit, unless the
model transforms logits after the unembedding (a soft cap, a scale): :attr:`AnswerStates.lens_gap`
measures that difference.

**Patching** (:func:`patch_pairs`). For an (original, equivalent) pair whose scored answers
disagree, the equivalent prompt is run again with the residual vector at its answer position and
layer ℓ replaced by the original's at its own answer position and layer ℓ — the whole d-vector,
at that one position and layer; the equivalent's other positions are untouched and every block
from ℓ on is recomputed. The two prompts differ in text and length, so "the same position" is
the answer position of each (for the built-in families, both end in the same instruction and
template tokens). A pair is *restored* at ℓ when the patched run answers as the original did.
Because later positions cannot influence earlier ones, a patch at ℓ = L decides the output; the
curve says from which layer on the original's state already does.

torch is imported only when a model is read.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ._decomposition import answer_of
from ._rows import PromptRows, plain_floats

if TYPE_CHECKING:
    from pytest_competence.strategies import Prompt

__all__ = [
    "Anatomy",
    "AnswerStates",
    "PatchResult",
    "ProbeUnavailable",
    "StateReader",
    "anatomy",
    "patch_pairs",
    "read_answer_states",
    "runner_of",
]

PRECISIONS = ("float32", "float16")


class ProbeUnavailable(Exception):
    """The model has no internals these probes can read: report "n/a" with this reason.

    Raised for a model that does not run in this process as a transformers model (``openai:``,
    ``py:``, ``ref:``, ``vllm:``) and for an architecture whose blocks, final norm or
    unembedding are not found. Never a failure of the model.
    """


def runner_of(model: Any) -> Any:
    """The loaded ``hf:`` runner behind ``model`` (through wrappers such as the response cache,
    which forward attributes), or :class:`ProbeUnavailable`."""
    from pytest_competence.models import ModelWrapper
    from pytest_competence.models.hf import HFModel

    name = getattr(model, "name", repr(model))
    inner = model
    while isinstance(inner, ModelWrapper):
        inner = inner.model
    if not isinstance(inner, HFModel):
        raise ProbeUnavailable(
            f"model {name!r} has no in-process internals (layer probes, the "
            f"logit lens and patching need an hf: model)"
        )
    return inner.runner


@dataclass(frozen=True)
class Anatomy:
    """Where a causal LM keeps its blocks, final norm and unembedding."""

    blocks: tuple[Any, ...]
    norm: Any
    unembed: Any

    @property
    def layers(self) -> int:
        """L: residual indices run 0 … L."""
        return len(self.blocks)

    def site(self, layer: int) -> Any:
        """The module whose input is residual ``layer``: block ``layer``, or the final norm."""
        return self.blocks[layer] if layer < len(self.blocks) else self.norm


_BLOCKS = (
    "model.layers",
    "model.language_model.layers",
    "transformer.h",
    "gpt_neox.layers",
    "model.decoder.layers",
    "transformer.layers",
    "backbone.layers",
)
_NORMS = (
    "model.norm",
    "model.language_model.norm",
    "transformer.ln_f",
    "gpt_neox.final_layer_norm",
    "model.decoder.final_layer_norm",
    "transformer.norm",
    "backbone.norm_f",
)


def anatomy(model: Any) -> Anatomy:
    """The blocks, final norm and unembedding of a transformers causal LM, found by the
    attribute paths of the common architectures (Llama, Qwen, Mistral, Gemma, GPT-2,
    GPT-NeoX, OPT, …); :class:`ProbeUnavailable` when one is missing."""

    def find(paths: Sequence[str]) -> Any:
        for path in paths:
            found: Any = model
            for part in path.split("."):
                found = getattr(found, part, None)
                if found is None:
                    break
            if found is not None:
                return found
        return None

    kind = type(model).__name__
    blocks, norm = find(_BLOCKS), find(_NORMS)
    unembed = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    expected = getattr(getattr(model, "config", None), "num_hidden_layers", None)
    if (
        blocks is None
        or norm is None
        or unembed is None
        or getattr(unembed, "weight", None) is None
    ):
        raise ProbeUnavailable(
            f"{kind}: its blocks, final norm or unembedding are not where "
            f"the probes look ({', '.join(_BLOCKS)}; {', '.join(_NORMS)})"
        )
    if expected is not None and len(blocks) != expected:
        raise ProbeUnavailable(f"{kind}: found {len(blocks)} blocks, the config says {expected}")
    return Anatomy(tuple(blocks), norm, unembed)


@dataclass(frozen=True)
class AnswerStates:
    """Per prompt, the residual stream and the answer logits at the answer position.

    ``states`` (N, layers, d) in ``precision``; ``lens`` (N, layers, K) float32, each answer's
    logit-lens logit per layer; ``logits`` (N, K) float32, the model's own logits of the answer
    tokens (their differences are the ``readout=score`` margins); NaN rows where
    ``errors[i]`` says why the prompt could not be read. ``layers`` names the residual indices
    of the second axis; ``model_layers`` is L. ``single_token`` is false when an answer spans
    several tokens: lens and logits then read each answer's first token. ``lens_gap`` is the
    largest ``|lens − logit|`` difference of centred answer logits at ℓ = L over the rows (0 up to
    round-off for a model with no transform after its unembedding).
    """

    rows: PromptRows
    layers: tuple[int, ...]
    model_layers: int
    states: np.ndarray
    lens: np.ndarray
    logits: np.ndarray
    errors: list[str | None]
    single_token: bool
    lens_gap: float
    device: str
    dtype: str

    @property
    def ok(self) -> np.ndarray:
        """(N,) boolean: rows that were read."""
        return np.array([e is None for e in self.errors], dtype=bool)

    @property
    def margins(self) -> np.ndarray:
        """(N,) logit(answers[0]) − logit(answers[1]) (binary spaces: yes − no)."""
        return self.logits[:, 0] - self.logits[:, 1]

    @property
    def nbytes(self) -> int:
        return self.states.nbytes + self.lens.nbytes + self.logits.nbytes


class StateReader:
    """Reads :class:`AnswerStates` chunk by chunk: :meth:`add` each chunk of prompts (they
    are batched as the backend batches), then :meth:`finish`.

    ``layers`` (default every residual index 0 … L) bounds what is kept; ``precision``
    (``float32`` or ``float16``) is the dtype of the kept states. With ``total`` (the number of
    prompts to come) the arrays are allocated once and filled in place: peak memory is
    ``total × |layers| × d`` × 2 or 4 bytes (plus the lens and logits, ``total × (|layers| + 1)
    × K × 4`` bytes), whatever the chunking; without it, chunks are joined at the end.
    """

    def __init__(
        self,
        model: Any,
        *,
        layers: Sequence[int] | None = None,
        precision: str = "float32",
        total: int | None = None,
    ) -> None:
        if precision not in PRECISIONS:
            raise ValueError(
                f"precision must be one of {', '.join(PRECISIONS)}, got precision={precision!r}"
            )
        if total is not None and (
            isinstance(total, bool) or not isinstance(total, int) or total < 0
        ):
            raise ValueError(f"total must be a number of prompts ≥ 0, got total={total!r}")
        self.runner = runner_of(model)
        self.anatomy = anatomy(self.runner.model)
        L = self.anatomy.layers
        self.layers = tuple(range(L + 1)) if layers is None else _check_layers(layers, L)
        self.precision = precision
        self.d = int(self.anatomy.unembed.weight.shape[1])
        self.total = total
        self._parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._filled = 0
        self._gap = 0.0
        self._single = True
        self._errors: list[str | None] = []
        self._rows: list[PromptRows] = []
        if total is not None:
            self._states = np.full((total, len(self.layers), self.d), np.nan, dtype=precision)
            self._lens = np.full((total, len(self.layers), 0), np.nan, dtype=np.float32)
            self._logits = np.full((total, 0), np.nan, dtype=np.float32)

    def add(self, prompts: Sequence[Prompt]) -> None:
        """Read one chunk of prompts (one answer space throughout)."""
        if not prompts:
            return
        rows = PromptRows.of(prompts)
        if self._rows and rows.answers != self._rows[0].answers:
            raise ValueError(
                f"every chunk must share one answer space: {self._rows[0].answers!r}"
                f" and {rows.answers!r}"
            )
        K = len(rows.answers)
        first, single = _answer_tokens(self.runner, prompts, rows.answers)
        self._single &= single
        n = len(prompts)
        if self.total is not None:
            if self._filled + n > self.total:
                raise ValueError(f"more prompts than total={self.total}")
            if self._lens.shape[2] != K:
                self._lens = np.full((self.total, len(self.layers), K), np.nan, np.float32)
                self._logits = np.full((self.total, K), np.nan, np.float32)
            states = self._states[self._filled : self._filled + n]
            lens = self._lens[self._filled : self._filled + n]
            logits = self._logits[self._filled : self._filled + n]
        else:
            states = np.full((n, len(self.layers), self.d), np.nan, dtype=self.precision)
            lens = np.full((n, len(self.layers), K), np.nan, dtype=np.float32)
            logits = np.full((n, K), np.nan, dtype=np.float32)
        errors: list[str | None] = [None] * n
        for i, got in self.runner.answer_batches(
            [[p] for p in prompts], lambda b, inputs: self._read(b, inputs, first)
        ):
            if isinstance(got, BaseException):
                errors[i] = f"{type(got).__name__}: {got}"
            else:
                states[i], lens[i], logits[i], gap = got
                self._gap = max(self._gap, gap)
        if self.total is None:
            self._parts.append((states, lens, logits))
        self._filled += n
        self._errors.extend(errors)
        self._rows.append(rows)

    def finish(self) -> AnswerStates:
        """The states of every prompt added, in the order added."""
        if not self._rows:
            raise ValueError("no prompts were added")
        rows = (
            self._rows[0]
            if len(self._rows) == 1
            else PromptRows(
                self._rows[0].answers,
                *(
                    np.concatenate([getattr(r, k) for r in self._rows])
                    for k in ("gold", "level", "presentation", "instance")
                ),
            )
        )
        if self.total is not None:
            if self._filled != self.total:
                raise ValueError(f"{self._filled} prompts were added, total={self.total} expected")
            states, lens, logits = self._states, self._lens, self._logits
        else:
            states, lens, logits = (np.concatenate(arrays) for arrays in zip(*self._parts))
            self._parts = []
        return AnswerStates(
            rows,
            self.layers,
            self.anatomy.layers,
            states,
            lens,
            logits,
            list(self._errors),
            self._single,
            self._gap,
            str(self.runner.device),
            self.runner.dtype_name,
        )

    def _read(
        self, batch: list[int], inputs: list[tuple[Any, Any, Any]], first: np.ndarray
    ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, float]]:
        torch = self.runner.torch
        ids, mask, positions = inputs[0]
        L = self.anatomy.layers
        wanted = sorted(set(self.layers) | {L})
        captured: dict[int, Any] = {}
        with _hooked(self.anatomy, wanted, captured):
            logits = self.runner.last_logits(ids, mask, positions)[:, -1, :]
        answers = torch.as_tensor(first[batch], device=logits.device)
        own = logits.gather(1, answers).float()
        with torch.inference_mode():
            lens = _lens(self.anatomy, torch.stack([captured[k] for k in wanted], 1), answers)
        gap = _centred(lens[:, wanted.index(L)]) - _centred(own)
        keep = [wanted.index(k) for k in self.layers]
        states = torch.stack([captured[k] for k in self.layers], 1)
        states = states.to(getattr(torch, self.precision)).cpu().numpy()
        lens_np = lens[:, keep].cpu().numpy()
        own_np = own.cpu().numpy()
        gaps = gap.abs().amax(dim=1).cpu().numpy()
        return [(states[r], lens_np[r], own_np[r], float(gaps[r])) for r in range(len(batch))]


def read_answer_states(
    model: Any,
    prompts: Sequence[Prompt],
    *,
    layers: Sequence[int] | None = None,
    precision: str = "float32",
) -> AnswerStates:
    """:class:`AnswerStates` of ``prompts`` in one go (:class:`StateReader` for chunks)."""
    reader = StateReader(model, layers=layers, precision=precision, total=len(prompts))
    reader.add(prompts)
    return reader.finish()


# -- patching ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PatchResult:
    """Original → equivalent residual patching, per pair and layer (module docstring).

    ``original`` and ``equivalent`` (M,) are each run's scored answer (an index into
    ``answers``; −1: no answer — a tie, an error); ``patched`` (M, layers) the patched
    equivalent run's answer, −2 where the pair was not patched (its answers agree, or one is
    missing); ``patched_logits`` (M, layers, K) its answer logits (NaN where not patched);
    ``level`` (M,) the pair's level; ``errors`` why a pair could not be read.
    """

    answers: tuple[str, ...]
    layers: tuple[int, ...]
    level: np.ndarray
    original: np.ndarray
    equivalent: np.ndarray
    patched: np.ndarray
    patched_logits: np.ndarray
    errors: list[str | None]

    @property
    def disagreeing(self) -> np.ndarray:
        """(M,) boolean: pairs whose two answers are both given and differ."""
        return (self.original >= 0) & (self.equivalent >= 0) & (self.original != self.equivalent)

    def restored(self, level: int | None = None) -> tuple[np.ndarray, int]:
        """``(restored per layer, disagreeing pairs)``, at one level or over all: the pairs
        whose patched equivalent answers as the original did. The share is their ratio."""
        mine = self.disagreeing & (True if level is None else self.level == level)
        hits = (self.patched[mine] == self.original[mine, None]).sum(axis=0)
        return hits.astype(np.int64), int(mine.sum())

    def to_dict(self) -> dict[str, Any]:
        """Per level and pooled: the disagreeing pairs and the restored count per layer."""

        def part(level: int | None) -> dict[str, Any]:
            hits, total = self.restored(level)
            return {
                "level": level,
                "disagreeing": total,
                "restored": hits.tolist(),
                "share": plain_floats(hits / total) if total else [None] * len(hits),
            }

        return {
            "layers": list(self.layers),
            "pairs": len(self.original),
            "errors": sum(e is not None for e in self.errors),
            "by_level": [part(int(v)) for v in np.unique(self.level)],
            "pooled": part(None),
        }


def patch_pairs(
    model: Any, pairs: Sequence[tuple[Prompt, Prompt]], *, layers: Sequence[int] | None = None
) -> PatchResult:
    """Patch each original's answer-position residual into its equivalent run, layer by layer.

    ``pairs`` are (original, equivalent) prompts of one instance (the same answer space and
    gold). Both are run once; pairs whose scored answers disagree are rerun patched at each of
    ``layers`` (default every residual index 0 … L) — ``|layers|`` extra forward passes of the
    disagreeing pairs only, batched as the backend batches.
    """
    runner = runner_of(model)
    parts = anatomy(runner.model)
    L = parts.layers
    chosen = tuple(range(L + 1)) if layers is None else _check_layers(layers, L)
    if not pairs:
        raise ValueError("no pairs to patch")
    if any(len(pair) != 2 for pair in pairs):
        raise ValueError("pairs must be (original, equivalent) prompts, two per pair")
    flat = [p for pair in pairs for p in pair]
    rows = PromptRows.of(flat)
    K = len(rows.answers)
    first = _answer_tokens(runner, flat, rows.answers)[0].reshape(len(pairs), 2, K)
    M = len(pairs)
    original = np.full(M, -1, dtype=np.int64)
    equivalent = np.full(M, -1, dtype=np.int64)
    patched = np.full((M, len(chosen)), -2, dtype=np.int64)
    patched_logits = np.full((M, len(chosen), K), np.nan, dtype=np.float32)
    errors: list[str | None] = [None] * M
    torch = runner.torch

    def work(batch: list[int], inputs: list[tuple[Any, Any, Any]]) -> list[Any]:
        (ids_o, mask_o, pos_o), (ids_e, mask_e, pos_e) = inputs
        captured: dict[int, Any] = {}
        with _hooked(parts, chosen, captured):
            logits_o = runner.last_logits(ids_o, mask_o, pos_o)[:, -1, :]
        logits_e = runner.last_logits(ids_e, mask_e, pos_e)[:, -1, :]
        tok_o = torch.as_tensor(first[batch, 0], device=logits_o.device)
        tok_e = torch.as_tensor(first[batch, 1], device=logits_o.device)
        a_o = answer_of(logits_o.gather(1, tok_o).float().cpu().numpy())
        a_e = answer_of(logits_e.gather(1, tok_e).float().cpu().numpy())
        rows_d = np.flatnonzero((a_o >= 0) & (a_e >= 0) & (a_o != a_e))
        out_logits = np.full((len(batch), len(chosen), K), np.nan, dtype=np.float32)
        if len(rows_d):
            sel = torch.as_tensor(rows_d, device=ids_e.device)
            for j, layer in enumerate(chosen):
                with _hooked(parts, (), {}, patch={layer: captured[layer][sel]}):
                    got = runner.last_logits(ids_e[sel], mask_e[sel], pos_e[sel])[:, -1, :]
                out_logits[rows_d, j] = got.gather(1, tok_e[sel]).float().cpu().numpy()
        return [(a_o[r], a_e[r], out_logits[r]) for r in range(len(batch))]

    for i, got in runner.answer_batches(list(pairs), work):
        if isinstance(got, BaseException):
            errors[i] = f"{type(got).__name__}: {got}"
            continue
        original[i], equivalent[i], patched_logits[i] = got
        if np.isfinite(got[2]).all():
            patched[i] = answer_of(got[2])
    return PatchResult(
        rows.answers,
        chosen,
        rows.level[0::2],
        original,
        equivalent,
        patched,
        patched_logits,
        errors,
    )


# -- hooks ---------------------------------------------------------------------------------------


@contextlib.contextmanager
def _hooked(
    parts: Anatomy,
    capture: Sequence[int],
    captured: dict[int, Any],
    patch: Mapping[int, Any] | None = None,
) -> Iterator[None]:
    """Forward pre-hooks on the sites of residual ``capture`` (and ``patch``) layers: each
    captures the input at the answer position (column −1), after writing ``patch[ℓ]`` there."""
    patch = patch or {}
    handles = []
    for layer in sorted(set(capture) | set(patch)):

        def hook(
            module: Any, args: tuple[Any, ...], kwargs: dict[str, Any], layer: int = layer
        ) -> tuple[tuple[Any, ...], dict[str, Any]]:
            hidden = args[0] if args else kwargs["hidden_states"]
            if layer in patch:
                hidden = hidden.clone()
                hidden[:, -1, :] = patch[layer].to(hidden.dtype)
                if args:
                    args = (hidden, *args[1:])
                else:
                    kwargs = {**kwargs, "hidden_states": hidden}
            if layer in capture:
                captured[layer] = hidden[:, -1, :].detach().clone()
            return args, kwargs

        handles.append(parts.site(layer).register_forward_pre_hook(hook, with_kwargs=True))
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def _answer_tokens(
    runner: Any, prompts: Sequence[Prompt], answers: Sequence[str]
) -> tuple[np.ndarray, bool]:
    """``(first token of each answer after each prompt (n, K), every answer one token)``."""
    tokens = [runner.answer_tokens(p, answers) for p in prompts]
    first = np.array([[t[0] if t else -1 for t in row] for row in tokens], dtype=np.int64)
    if (first < 0).any() or any(len(set(r)) != len(answers) for r in first.tolist()):
        raise ProbeUnavailable(
            f"the answers {tuple(answers)!r} do not start with distinct "
            f"tokens for this tokenizer: no answer logit to read"
        )
    return first, all(len(t) == 1 for row in tokens for t in row)


def _lens(parts: Anatomy, hidden: Any, answers: Any) -> Any:
    """(B, layers, K) float32: the answers' logits of (B, layers, d) residuals read through the
    final norm (in the model's dtype, as the model applies it) and the unembedding."""
    normed = parts.norm(hidden).float()
    weight = parts.unembed.weight[answers].float()  # (B, K, d)
    logits = normed @ weight.transpose(1, 2)  # (B, layers, K)
    bias = getattr(parts.unembed, "bias", None)
    if bias is not None:
        logits = logits + bias[answers].float().unsqueeze(1)
    return logits


def _centred(logits: Any) -> Any:
    return logits - logits.mean(dim=-1, keepdim=True)


def _check_layers(layers: Sequence[int], L: int) -> tuple[int, ...]:
    chosen = tuple(layers)
    if (
        not chosen
        or any(
            isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v <= L
            for v in chosen
        )
        or len(set(chosen)) != len(chosen)
    ):
        raise ValueError(
            f"layers must be distinct residual indices in 0 … {L} (0: the "
            f"embeddings, {L}: the last block's output), got layers={list(layers)!r}"
        )
    return tuple(int(v) for v in chosen)
