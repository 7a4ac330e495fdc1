"""Activation patching, original → equivalent, at the answer position of an ``hf:`` model.

CBE paper, arXiv:2610.22894, App. I (after Meng et al., 2022). For an (original, equivalent)
pair whose scored answers disagree, the equivalent prompt is run again with the residual vector
at its answer position and layer ℓ (:mod:`._internals`: residual index ℓ, the last prompt
token) replaced by the original's at its own answer position and layer ℓ — the whole d-vector,
at that one position and layer; the equivalent's other positions are untouched and every block
from ℓ on is recomputed. The two prompts differ in text and length, so "the same position" is
the answer position of each (for the built-in families, both end in the same instruction and
template tokens). A pair is *restored* at ℓ when the patched run answers as the original did.
Because later positions cannot influence earlier ones, a patch at ℓ = L decides the output; the
curve says from which layer on the original's state already does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ._decomposition import answer_of
from ._internals import anatomy, check_layers, first_answer_tokens, hooked, runner_of
from ._rows import PromptRows, plain_floats

if TYPE_CHECKING:
    from pytest_competence.strategies import Prompt

__all__ = ["PatchResult", "patch_pairs"]


@dataclass(frozen=True)
class PatchResult:
    """Original → equivalent residual patching, per pair and layer (the module docstring).

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

    @classmethod
    def empty(cls, answers: Sequence[str], layers: Sequence[int]) -> PatchResult:
        """No pairs (none disagreed)."""
        none = np.zeros(0, dtype=np.int64)
        return cls(
            tuple(answers),
            tuple(layers),
            none,
            none,
            none,
            np.zeros((0, len(layers)), np.int64),
            np.zeros((0, len(layers), len(answers)), np.float32),
            [],
        )

    @classmethod
    def join(cls, parts: Sequence[PatchResult]) -> PatchResult:
        """The pairs of ``parts`` (the chunks of one design, same answers and layers), in order."""
        first = parts[0]
        if any(p.answers != first.answers or p.layers != first.layers for p in parts):
            raise ValueError("patch results of different answers or layers cannot be joined")

        def joined(name: str) -> np.ndarray:
            return np.concatenate([getattr(p, name) for p in parts])

        return cls(
            first.answers,
            first.layers,
            joined("level"),
            joined("original"),
            joined("equivalent"),
            joined("patched"),
            joined("patched_logits"),
            [e for p in parts for e in p.errors],
        )

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
    chosen = tuple(range(L + 1)) if layers is None else check_layers(layers, L)
    if not pairs:
        raise ValueError("no pairs to patch")
    if any(len(pair) != 2 for pair in pairs):
        raise ValueError("pairs must be (original, equivalent) prompts, two per pair")
    flat = [p for pair in pairs for p in pair]
    rows = PromptRows.of(flat)
    K = len(rows.answers)
    first = first_answer_tokens(runner, flat, rows.answers)[0].reshape(len(pairs), 2, K)
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
        with hooked(parts, chosen, captured):
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
                with hooked(parts, (), {}, patch={layer: captured[layer][sel]}):
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
