"""``vllm:PATH_OR_ID[?key=value&…]`` — vLLM's offline ``LLM`` engine in this process.

The checkpoint is found as for ``hf:`` (a local directory, or a hub id already in the local cache;
nothing is downloaded). The engine starts on first use with automatic prefix caching on, and the
prompts of a batch go to it sorted by their rendered text, so prompts that share a beginning (the
system prompt, the task's instructions, the same context under several questions) run next to
each other and reuse its cached prefix. Prompts go as token ids, rendered and encoded exactly as
``hf:`` does (:mod:`._tokens`): a chat template that writes BOS gets one BOS, not two. Answers are
handed on chunk by chunk (``chunk`` prompts), so the response cache commits them while the rest
still run.

Parameters: ``max_tokens`` (default 16), ``temperature`` (default 0: greedy), ``top_p``, ``seed``
(default 0; attempt ``k`` samples with ``seed + k``), ``dtype`` (default ``auto``),
``max_model_len``, ``gpu_memory_utilization`` (default 0.9), ``tensor_parallel_size`` (default 1),
``chunk`` (default 1024), ``readout`` (``generate`` or ``score``), ``chat_template``
(``auto`` or ``off``). Needs ``pip install 'pytest-competence[vllm]'`` on a CUDA machine.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pytest_competence.policy import ModelSpecError
from pytest_competence.protocol import Prompt

from ._params import Param, choice, number, parse_params, whole
from ._tokens import continuation, encode, has_template, render
from .readout import Answer, Scores, in_order, scored_stream

__all__ = ["PARAMS", "VLLMModel", "vllm_model"]

PARAMS = (
    Param("max_tokens", whole(1), "longest answer in tokens", 16),
    Param("temperature", number(0, 100), "sampling temperature (0: greedy)", 0.0),
    Param("top_p", number(0, 1, above=True), "nucleus sampling mass"),
    Param("seed", whole(0), "sampling seed; attempt k uses seed + k", 0),
    Param("dtype", choice("auto", "float32", "bfloat16", "float16"), "weights' dtype", "auto"),
    Param("max_model_len", whole(16), "context length the engine reserves for"),
    Param("gpu_memory_utilization", number(0, 1, above=True), "share of GPU memory", 0.9),
    Param("tensor_parallel_size", whole(1), "GPUs per model", 1),
    Param("chunk", whole(1), "prompts per engine call", 1024),
    Param("readout", choice("generate", "score"), "answer by generating or by scoring", "generate"),
    Param("chat_template", choice("auto", "off"), "use the tokenizer's chat template", "auto"),
)


def vllm_model(rest: str, spec: str) -> VLLMModel:
    """Build the model of ``vllm:PATH_OR_ID[?key=value&…]`` (the engine starts on first use)."""
    from .hf import hub_id, locate

    name, _, query = rest.partition("?")
    if not name.strip():
        raise ModelSpecError(
            f"Malformed model spec {spec!r}; expected 'vllm:PATH_OR_ID', e.g. "
            f"'vllm:Qwen/Qwen2.5-7B-Instruct'"
        )
    params = parse_params(query, PARAMS, spec)
    # A directory that is not there is said whatever is installed.
    path = None if hub_id(name.strip()) else locate(name.strip(), spec)
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        raise ImportError(
            f"{spec!r} needs vLLM, which is not installed: "
            f"pip install 'pytest-competence[vllm]' (a CUDA machine), or use "
            f"'hf:{name.strip()}' to run the model with transformers"
        )
    return VLLMModel(spec, path or locate(name.strip(), spec), **params)


class VLLMModel:
    """A model served by vLLM's offline engine; see the module docstring."""

    #: Its forward passes run in torch's kernels, outside the interpreter lock: the design's next
    #: chunk is generated meanwhile (:func:`~pytest_competence.models.overlaps_generation`).
    releases_gil = True

    def __init__(
        self,
        name: str,
        path: Path,
        *,
        max_tokens: int = 16,
        temperature: float = 0.0,
        top_p: float | None = None,
        seed: int = 0,
        dtype: str = "auto",
        max_model_len: int | None = None,
        gpu_memory_utilization: float = 0.9,
        tensor_parallel_size: int = 1,
        chunk: int = 1024,
        readout: str = "generate",
        chat_template: str = "auto",
    ) -> None:
        self.name = name
        self.path = Path(path)
        self.seed = seed
        self.decoding: dict[str, Any] = {
            "max_tokens": max_tokens,
            "temperature": temperature,
            "top_p": top_p,
            "seed": seed,
        }
        self.engine_args: dict[str, Any] = {
            "dtype": dtype,
            "gpu_memory_utilization": gpu_memory_utilization,
            "tensor_parallel_size": tensor_parallel_size,
            "seed": seed,
            **({"max_model_len": max_model_len} if max_model_len else {}),
        }
        self.chunk, self.readout, self.use_template = chunk, readout, chat_template
        self._engine: Any = None

    def __repr__(self) -> str:
        return f"VLLMModel({self.name!r})"

    @property
    def cache_identity(self) -> str:
        """What the response cache keys this model's answers by: the checkpoint and decoding."""
        from .hf import _fingerprint

        return json.dumps(
            {
                "backend": "vllm",
                "path": str(self.path),
                "files": _fingerprint(self.path),
                "dtype": self.engine_args["dtype"],
                "decoding": self.decoding,
                "readout": self.readout,
                "chat_template": self.use_template,
                # Prompts sent as ids encoded as hf: encodes them (answers of the engine's own
                # text tokenisation, which doubled a template's BOS, are not these).
                "tokens": "rendered, no special tokens after a template",
            },
            sort_keys=True,
        )

    @property
    def engine(self) -> Any:
        """The ``vllm.LLM`` engine, started on first use."""
        if self._engine is None:
            from vllm import LLM

            self._engine = LLM(model=str(self.path), enable_prefix_caching=True, **self.engine_args)
        return self._engine

    @property
    def _tokenizer(self) -> tuple[Any, bool]:
        """The engine's tokenizer, and whether prompts are rendered by its chat template."""
        tokenizer = self.engine.get_tokenizer()
        return tokenizer, has_template(tokenizer, self.use_template == "auto")

    def render(self, p: Prompt) -> str:
        """The prompt as the checkpoint's chat template renders it (see :mod:`._tokens`)."""
        tokenizer, template = self._tokenizer
        return render(tokenizer, p, template)

    def _sampling(self, attempt: int, **override: Any) -> Any:
        from vllm import SamplingParams

        settings = {k: v for k, v in self.decoding.items() if v is not None}
        settings.update(seed=self.seed + attempt, **override)
        return SamplingParams(**settings)

    def _chunks(self, texts: Sequence[str]) -> Iterator[list[int]]:
        """Prompt indices sorted by text (shared beginnings side by side), ``chunk`` at a time."""
        order = sorted(range(len(texts)), key=lambda i: texts[i])
        for start in range(0, len(order), self.chunk):
            yield order[start : start + self.chunk]

    def stream(self, prompts: Sequence[Prompt]) -> Iterator[tuple[int, Answer]]:
        """``(index, answer or exception)`` chunk by chunk."""
        if self.readout == "score":
            yield from scored_stream(self, prompts)
            return
        tokenizer, template = self._tokenizer
        texts = [render(tokenizer, p, template) for p in prompts]
        ids = [encode(tokenizer, t, template) for t in texts]
        for part in self._chunks(texts):
            params = [self._sampling(prompts[i].attempt) for i in part]
            sent = [{"prompt_token_ids": ids[i]} for i in part]
            try:
                outputs = self.engine.generate(sent, params, use_tqdm=False)
            except Exception as exc:  # the engine failed this chunk: each prompt records why
                for i in part:
                    yield i, RuntimeError(f"vLLM failed: {type(exc).__name__}: {exc}")
                continue
            for i, out in zip(part, outputs):
                yield i, out.outputs[0].text

    def generate(self, prompts: Sequence[Prompt]) -> list[Answer]:
        """One answer per prompt, in one batched call."""
        return in_order(self.stream(prompts), len(prompts), self.name)

    def score(
        self, prompts: Sequence[Prompt], candidates: Sequence[str]
    ) -> list[Scores | BaseException]:
        """Per prompt, the summed prompt-logprob of each candidate's tokens after the prompt."""
        tokenizer, template = self._tokenizer
        texts = [render(tokenizer, p, template) for p in prompts]
        requests: list[dict[str, list[int]]] = []
        spans: list[tuple[int, int]] = []
        for t in texts:
            context = encode(tokenizer, t, template)
            for c in candidates:
                tail = continuation(tokenizer, t, c, template)
                requests.append({"prompt_token_ids": context + tail})
                spans.append((len(context), len(context) + len(tail)))
        results: list[Any] = [dict() for _ in prompts]
        params = self._sampling(0, max_tokens=1, temperature=0.0, prompt_logprobs=0)
        for part in self._chunks([json.dumps(r["prompt_token_ids"]) for r in requests]):
            try:
                outputs = self.engine.generate([requests[k] for k in part], params, use_tqdm=False)
            except Exception as exc:
                outputs = [exc] * len(part)
            for k, out in zip(part, outputs):
                i, which = divmod(k, len(candidates))
                if isinstance(results[i], BaseException):
                    continue  # another candidate of this prompt failed already
                if isinstance(out, BaseException):
                    results[i] = RuntimeError(f"vLLM failed: {type(out).__name__}: {out}")
                    continue
                start, end = spans[k]
                ids = requests[k]["prompt_token_ids"]
                results[i][candidates[which]] = float(
                    sum(out.prompt_logprobs[j][ids[j]].logprob for j in range(start, end))
                )
        return results
