"""The answer-position states of an ``hf:`` model's prompts, read chunk by chunk.

:class:`StateReader` reads, per prompt, the residual stream at the answer position at every
residual layer kept (:mod:`._internals`: layers 0 … L, the last prompt token), each answer's
logit-lens logit per layer, and the model's own answer logits — in one forward pass per batch,
the backend's batches (CUDA and bf16 when present). CBE paper, arXiv:2610.22894, App. I.

**Memory.** With ``total`` known, the arrays are allocated once: ``total × |layers| × d`` × 4
bytes (float32) or × 2 (float16), plus ``total × (|layers| + 1) × K × 4`` bytes of lens and
logits (:func:`state_bytes`), whatever the chunking; a chunk's token ids are dropped after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ._internals import (
    ProbeUnavailable,
    anatomy,
    centred,
    check_layers,
    first_answer_tokens,
    hooked,
    lens_logits,
    runner_of,
)
from ._rows import PromptRows

if TYPE_CHECKING:
    from pytest_competence.strategies import Prompt

__all__ = ["PRECISIONS", "AnswerStates", "StateReader", "read_answer_states", "state_bytes"]

PRECISIONS = ("float32", "float16")


def state_bytes(prompts: int, layers: int, width: int, answers: int, precision: str) -> int:
    """Bytes a :class:`StateReader` holds for ``prompts`` prompts: the states (``layers`` ×
    ``width`` floats of ``precision`` each), the lens and the answer logits (float32)."""
    size = 2 if precision == "float16" else 4
    return prompts * (layers * width * size + (layers + 1) * answers * 4)


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
    (``float32`` or ``float16``) is the dtype of the kept states; ``max_mib`` refuses (with
    :class:`~._internals.ProbeUnavailable`) a ``total`` whose states would take more. With
    ``total`` (the number of prompts to come) the arrays are allocated once and filled in
    place: peak memory is
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
        max_mib: float | None = None,
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
        self.layers = tuple(range(L + 1)) if layers is None else check_layers(layers, L)
        self.precision = precision
        self.d = int(self.anatomy.unembed.weight.shape[1])
        self.total = total
        if max_mib is not None and total is not None:
            need = state_bytes(total, len(self.layers), self.d, 2, precision) / 2**20
            if need > max_mib:
                raise ProbeUnavailable(
                    f"the states of {total:,} prompts × {len(self.layers)} layers × "
                    f"{self.d} would take {need:,.0f} MiB, over max_mib={max_mib:g}; keep "
                    f"fewer layers (layers=[...]), precision='float16', fewer prompts, "
                    f"or raise max_mib"
                )
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

    def add(self, prompts: Sequence[Prompt]) -> np.ndarray:
        """Read one chunk of prompts (one answer space throughout); return its answer logits
        (n, K), NaN rows for prompts that could not be read."""
        if not prompts:
            return np.zeros((0, len(self._rows[0].answers) if self._rows else 0), np.float32)
        rows = PromptRows.of(prompts)
        if self._rows and rows.answers != self._rows[0].answers:
            raise ValueError(
                f"every chunk must share one answer space: {self._rows[0].answers!r}"
                f" and {rows.answers!r}"
            )
        K = len(rows.answers)
        first, single = first_answer_tokens(self.runner, prompts, rows.answers)
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
        return logits

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
        with hooked(self.anatomy, wanted, captured):
            logits = self.runner.last_logits(ids, mask, positions)[:, -1, :]
        answers = torch.as_tensor(first[batch], device=logits.device)
        own = logits.gather(1, answers).float()
        with torch.inference_mode():
            lens = lens_logits(self.anatomy, torch.stack([captured[k] for k in wanted], 1), answers)
        gap = centred(lens[:, wanted.index(L)]) - centred(own)
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
