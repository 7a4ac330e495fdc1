"""The JSON bodies an ``openai:`` model sends: a prompt as chat messages or as completion text,
and the bodies that score candidates from logprobs. Kept apart from the model so that the live
requests and the Batch API's input lines (:mod:`pytest_competence.engine.batch`) are built in one place."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_competence.protocol import Prompt

__all__ = ["Bodies"]


@dataclass(frozen=True)
class Bodies:
    """The bodies of one model's requests: its ``model`` name, ``mode`` (``chat`` or
    ``completions``), ``decoding`` parameters, ``seed`` and chat-mode ``top_logprobs``."""

    model: str
    mode: str
    decoding: Mapping[str, Any]
    seed: int | None
    top_logprobs: int

    @property
    def path(self) -> str:
        """The endpoint under the base URL: ``/chat/completions`` or ``/completions``."""
        return "/chat/completions" if self.mode == "chat" else "/completions"

    def prompt_text(self, p: Prompt) -> str:
        """``p`` as one completion text: the system prompt, a blank line, the text."""
        return f"{p.system}\n\n{p.text}" if p.system else p.text

    def body(self, p: Prompt, **override: Any) -> dict[str, Any]:
        """The body that asks for ``p``'s answer (sent with ``seed + attempt`` when seeded)."""
        body: dict[str, Any] = {"model": self.model, **self.decoding}
        if self.seed is not None:
            body["seed"] = self.seed + p.attempt
        if self.mode == "chat":
            messages = [{"role": "system", "content": p.system}] if p.system else []
            body["messages"] = [*messages, {"role": "user", "content": p.text}]
        else:
            body["prompt"] = self.prompt_text(p)
        body.update(override)
        return body

    def scoring(
        self, p: Prompt, candidates: Sequence[str]
    ) -> list[tuple[dict[str, Any], tuple[int, int] | None]]:
        """The bodies that score ``p``'s candidates, each with the characters of its candidate
        in the echoed text (completions mode), or ``None`` (chat mode: one body for all).

        Chat: one token at temperature 0 with ``logprobs`` and ``top_logprobs`` (the first answer
        token's alternatives). Completions: per candidate, the prompt and the candidate echoed
        with ``logprobs`` (exact: the sum over the candidate's tokens). The one-token cap goes
        under ``max_completion_tokens`` when the spec sends that field, else ``max_tokens``.
        """
        cap = "max_completion_tokens" if "max_completion_tokens" in self.decoding else "max_tokens"
        if self.mode == "chat":
            body = self.body(
                p, temperature=0.0, logprobs=True, top_logprobs=self.top_logprobs, **{cap: 1}
            )
            return [(body, None)]
        t = self.prompt_text(p)
        out: list[tuple[dict[str, Any], tuple[int, int] | None]] = []
        for c in candidates:
            joined = c if not t or t[-1].isspace() else f" {c}"
            body = self.body(
                p, prompt=t + joined, temperature=0.0, echo=True, logprobs=1, **{cap: 1}
            )
            out.append((body, (len(t), len(t) + len(joined))))
        return out
