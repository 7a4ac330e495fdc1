"""The torch side of the ``hf:`` backend: loading, batched generation, candidate scoring, and the
batches the probes read (:mod:`pytest_competence.probe._internals`).

Imported only when an ``hf:`` model first answers. Prompts are batched longest first and padded on
the left with explicit position ids, so a padded prompt is computed exactly as it would be alone;
scoring reads the logits of the last positions only (``logits_to_keep``), so a long prompt does
not cost a vocabulary-sized row per token.
"""

from __future__ import annotations

import contextlib
import os
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pytest_competence.protocol import Prompt

from ._base import NoAnswer
from ._tokens import continuation, encode, has_template, render

__all__ = ["Runner", "Weights"]


def _device(torch: Any, requested: str) -> Any:
    if requested != "auto":
        return torch.device(requested)
    if torch.cuda.is_available():
        # Under pytest -n N, worker gwK takes GPU K mod count: one GPU per worker.
        worker = os.environ.get("PYTEST_XDIST_WORKER", "")
        k = int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0
        return torch.device("cuda", k % torch.cuda.device_count())
    return torch.device("cpu")


def _dtype(torch: Any, requested: str, device: Any) -> Any:
    if requested != "auto":
        return getattr(torch, requested)
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32


@contextlib.contextmanager
def _quiet_loading() -> Iterator[None]:
    """No progress bars from transformers while loading: they would land in every test report."""
    from transformers.utils import logging

    shown = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        if shown:
            logging.enable_progress_bar()


class Weights:
    """A checkpoint's tokenizer and model, loaded on a device in a dtype."""

    def __init__(self, path: Path, dtype: str, device: str) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.device = _device(torch, device)
        self.dtype = _dtype(torch, dtype, self.device)
        with _quiet_loading():
            self.tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
            self.model = AutoModelForCausalLM.from_pretrained(
                path, local_files_only=True, dtype=self.dtype
            )
        self.model.to(self.device).eval()
        if self.tok.pad_token_id is None:
            if self.tok.eos_token_id is None:
                raise ValueError(
                    f"{path}: the tokenizer has neither a pad nor an eos token; "
                    f"set tokenizer.pad_token before saving the checkpoint"
                )
            self.tok.pad_token = self.tok.eos_token


#: Weights in memory, by (path, dtype, device) as asked: ``hf:X`` and ``hf:X?readout=score`` in
#: one run share one copy. Weak: the weights go when the last model using them does.
_LOADED: weakref.WeakValueDictionary[tuple[str, str, str], Weights] = weakref.WeakValueDictionary()


class Runner:
    """Loaded weights (shared within the process), and the batched work on them."""

    def __init__(
        self, path: Path, *, batch_size: int, use_template: bool, dtype: str, device: str
    ) -> None:
        import torch

        key = (str(path), dtype, device)
        weights = _LOADED.get(key)
        if weights is None:
            weights = _LOADED[key] = Weights(path, dtype, device)
        self.weights = weights  # holds them alive while this runner is
        self.torch = torch
        self.tok, self.model = weights.tok, weights.model
        self.device, self.dtype = weights.device, weights.dtype
        self.dtype_name = str(self.dtype).removeprefix("torch.")
        self.batch_size = batch_size
        self.template = has_template(self.tok, use_template)
        config = self.model.config
        self.context = getattr(config, "max_position_embeddings", None) or getattr(
            config, "n_positions", None
        )

    # -- prompts → token ids ---------------------------------------------------------------------

    def render(self, p: Prompt) -> str:
        return render(self.tok, p, self.template)

    def encode(self, text: str) -> list[int]:
        # A chat template writes its own special tokens; a plain prompt gets the tokenizer's.
        return encode(self.tok, text, self.template)

    def _padded(self, seqs: Sequence[Sequence[int]]) -> tuple[Any, Any, Any]:
        torch, width = self.torch, max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), self.tok.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for r, s in enumerate(seqs):
            ids[r, width - len(s) :] = torch.tensor(list(s), dtype=torch.long)
            mask[r, width - len(s) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        return ids.to(self.device), mask.to(self.device), positions.to(self.device)

    def _batches(
        self, indices: list[int], lengths: Sequence[int], work: Callable[[list[int]], Sequence[Any]]
    ) -> Iterator[tuple[int, Any]]:
        """``work`` on batches of ``indices``, longest first; a failing batch is split until the
        failing prompt stands alone and is answered with the error."""
        order = sorted(indices, key=lambda i: -lengths[i])
        for start in range(0, len(order), self.batch_size):
            yield from self._guarded(order[start : start + self.batch_size], work)

    def _guarded(
        self, batch: list[int], work: Callable[[list[int]], Sequence[Any]]
    ) -> Iterator[tuple[int, Any]]:
        try:
            results = work(batch)
        except Exception as exc:  # out of memory, a prompt the model cannot take, …
            if self.device.type == "cuda":
                self.torch.cuda.empty_cache()
            if len(batch) == 1:
                yield batch[0], RuntimeError(f"{type(exc).__name__}: {exc}")
                return
            mid = len(batch) // 2
            yield from self._guarded(batch[:mid], work)
            yield from self._guarded(batch[mid:], work)
            return
        yield from zip(batch, results)

    def _too_long(self, length: int, extra: int) -> NoAnswer | None:
        # The model's own limit, like a wrong answer at that size: invalid, not an outage.
        if self.context and length + extra > self.context:
            return NoAnswer(
                f"the prompt has {length} tokens; with {extra} more it exceeds "
                f"the model's context of {self.context}"
            )
        return None

    # -- generation --------------------------------------------------------------------------------

    def generate(
        self,
        prompts: Sequence[Prompt],
        *,
        max_new_tokens: int,
        temperature: float,
        top_p: float | None,
        seed: int,
    ) -> Iterator[tuple[int, Any]]:
        from transformers import GenerationConfig

        seqs = [self.encode(self.render(p)) for p in prompts]
        settings: dict[str, Any] = {
            "max_new_tokens": max_new_tokens,
            "pad_token_id": self.tok.pad_token_id,
            "eos_token_id": self.tok.eos_token_id,
            "do_sample": temperature > 0,
        }
        if temperature > 0:
            settings.update(temperature=temperature, top_p=top_p if top_p else 1.0)
            self.torch.manual_seed(seed)
        config = GenerationConfig(**settings)
        ready = []
        for i, s in enumerate(seqs):
            problem = self._too_long(len(s), max_new_tokens)
            if problem is None:
                ready.append(i)
            else:
                yield i, problem

        def work(batch: list[int]) -> list[str]:
            ids, mask, _ = self._padded([seqs[i] for i in batch])
            with self.torch.inference_mode():
                out = self.model.generate(
                    input_ids=ids, attention_mask=mask, generation_config=config
                )
            return list(self.tok.batch_decode(out[:, ids.shape[1] :], skip_special_tokens=True))

        yield from self._batches(ready, [len(s) for s in seqs], work)

    # -- candidate scoring -------------------------------------------------------------------------

    def score(
        self, prompts: Sequence[Prompt], candidates: Sequence[str]
    ) -> list[dict[str, float] | BaseException]:
        texts = [self.render(p) for p in prompts]
        contexts = [self.encode(t) for t in texts]
        tails = [[self._continuation(t, c) for c in candidates] for t in texts]
        results: list[Any] = [None] * len(prompts)
        longest = max((len(x) for row in tails for x in row), default=1)
        ready = []
        for i, ctx in enumerate(contexts):
            problem = self._too_long(len(ctx), longest)
            if problem is not None:
                results[i] = problem
            elif not ctx or any(not x for x in tails[i]):
                results[i] = RuntimeError("an empty prompt or candidate cannot be scored")
            else:
                ready.append(i)
        single = all(len(x) == 1 for row in tails for x in row)

        def work(batch: list[int]) -> list[dict[str, float]]:
            if single:  # one pass: the next-token distribution after each prompt
                rows = self._last_logprobs([contexts[i] for i in batch], keep=1)
                return [
                    {c: float(rows[r, -1, tails[i][k][0]]) for k, c in enumerate(candidates)}
                    for r, i in enumerate(batch)
                ]
            out = []
            for i in batch:  # one row per candidate: prompt + candidate tokens
                seqs = [contexts[i] + tails[i][k] for k in range(len(candidates))]
                keep = max(len(x) for x in tails[i]) + 1
                rows = self._last_logprobs(seqs, keep=keep)
                out.append(
                    {
                        c: float(sum(rows[k, keep - 1 - len(x) + j, t] for j, t in enumerate(x)))
                        for k, (c, x) in enumerate(zip(candidates, tails[i]))
                    }
                )
            return out

        for i, got in self._batches(ready, [len(c) for c in contexts], work):
            results[i] = got
        return results

    # -- forward passes for the probes (pytest_competence.probe) ----------------------------------

    def answer_batches(
        self,
        groups: Sequence[Sequence[Prompt]],
        work: Callable[[list[int], list[tuple[Any, Any, Any]]], Sequence[Any]],
    ) -> Iterator[tuple[int, Any]]:
        """``(index, result)`` of ``work`` on batches of prompt groups, batched as scoring is.

        A group is one prompt, or several read together (an original and its equivalent).
        Each prompt is rendered and encoded exactly as :meth:`score` does; ``work(batch,
        inputs)`` gets the group indices of a batch and, per member k, the left-padded
        ``(ids, mask, positions)`` of the batch's k-th prompts, so column −1 is every row's
        answer position (where scoring reads the first answer token). Batches run longest
        first; a failing batch is split until the failing group stands alone (its result is
        the error); a group with a prompt over the model's context gets that prompt's
        :class:`NoAnswer`.
        """
        seqs = [[self.encode(self.render(p)) for p in group] for group in groups]
        ready = []
        for i, members in enumerate(seqs):
            problem = next(filter(None, (self._too_long(len(s), 1) for s in members)), None)
            if problem is not None:
                yield i, problem
            elif not members or any(not s for s in members):
                yield i, RuntimeError("an empty prompt has no answer position")
            else:
                ready.append(i)

        def padded(batch: list[int]) -> Sequence[Any]:
            return work(
                batch,
                [self._padded([seqs[i][k] for i in batch]) for k in range(len(seqs[batch[0]]))],
            )

        yield from self._batches(ready, [max(map(len, s), default=0) for s in seqs], padded)

    def answer_tokens(self, p: Prompt, candidates: Sequence[str]) -> list[list[int]]:
        """The tokens of each candidate after the prompt, as :meth:`score` reads them."""
        text = self.render(p)
        return [self._continuation(text, c) for c in candidates]

    def _continuation(self, text: str, candidate: str) -> list[int]:
        return continuation(self.tok, text, candidate, self.template)

    def _last_logprobs(self, seqs: Sequence[Sequence[int]], keep: int) -> Any:
        """Log-softmax over the vocabulary at the last ``keep`` positions (float32, on the CPU)."""
        logits = self.last_logits(*self._padded(seqs), keep=keep)
        return self.torch.log_softmax(logits.float(), dim=-1).cpu()

    def last_logits(self, ids: Any, mask: Any, positions: Any, *, keep: int = 1) -> Any:
        """The logits of a padded batch at its last ``keep`` positions: one forward pass (under
        ``inference_mode``; the model's dtype, on its device)."""
        with self.torch.inference_mode():
            try:
                logits = self.model(
                    input_ids=ids, attention_mask=mask, position_ids=positions, logits_to_keep=keep
                ).logits
            except TypeError:  # a model without logits_to_keep: compute all, keep the tail
                logits = self.model(
                    input_ids=ids, attention_mask=mask, position_ids=positions
                ).logits
            return logits[:, -keep:]
