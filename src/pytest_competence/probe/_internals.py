"""Inside an ``hf:`` model: its runner, its anatomy, and hooks at the answer position.

CBE paper, arXiv:2610.22894, App. I: gold probes on the residual stream at the answer position,
the logit lens (nostalgebraist, 2020), and original residual states patched into equivalent
runs (Meng et al., 2022). Prompts are read exactly as the ``hf:`` backend's ``readout=score``
reads them (:meth:`~pytest_competence.models._hf_batches.Runner.answer_batches`). Reading states
is :mod:`._reading`; patching, :mod:`._patching`.

**Layers.** Residual index ℓ ∈ 0 … L for a model of L blocks: ℓ < L is the input of block ℓ
(ℓ = 0 the embeddings as the first block reads them), ℓ = L the last block's output, the input
of the final norm (transformers' last ``hidden_states`` entry is usually *after* that norm).

**Answer position.** The last prompt token, whose next-token logits scoring reads; prompts are
left-padded, so it is column −1. Only it is kept: (layers × d) floats per prompt.

**Logit lens.** At layer ℓ, ``unembed(norm(h_ℓ))[answer token]`` (:func:`lens_logits`); at
ℓ = L the model's logit unless it transforms logits after the unembedding
(:attr:`~._reading.AnswerStates.lens_gap` measures that). torch loads only to read a model.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from pytest_competence.strategies import Prompt

__all__ = [
    "Anatomy",
    "ProbeUnavailable",
    "anatomy",
    "centred",
    "check_layers",
    "first_answer_tokens",
    "hooked",
    "lens_logits",
    "runner_of",
]


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


@contextlib.contextmanager
def hooked(
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


def first_answer_tokens(
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


def lens_logits(parts: Anatomy, hidden: Any, answers: Any) -> Any:
    """(B, layers, K) float32: the answers' logits of (B, layers, d) residuals read through the
    final norm (in the model's dtype, as the model applies it) and the unembedding."""
    normed = parts.norm(hidden).float()
    weight = parts.unembed.weight[answers].float()  # (B, K, d)
    logits = normed @ weight.transpose(1, 2)  # (B, layers, K)
    bias = getattr(parts.unembed, "bias", None)
    if bias is not None:
        logits = logits + bias[answers].float().unsqueeze(1)
    return logits


def centred(logits: Any) -> Any:
    """``logits`` less their mean over the last axis (answers)."""
    return logits - logits.mean(dim=-1, keepdim=True)


def check_layers(layers: Sequence[int], L: int) -> tuple[int, ...]:
    """``layers`` as residual indices of a model of ``L`` blocks, or the error naming them."""
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
