"""Prompts as token ids, the same way for every in-process backend (``hf:`` and ``vllm:``).

A prompt is rendered by the tokenizer's chat template when it has one (and the spec did not turn
it off), else it is the system prompt, a blank line and the text. Rendered text is then encoded:

- *with* a template, without adding special tokens: the template writes its own (Llama 3's
  writes ``<|begin_of_text|>``), and a tokenizer that adds BOS would double it;
- *without* one, with the tokenizer's special tokens, as the plain text would be encoded alone.

A scored candidate's tokens are encoded after the rendered prompt without special tokens, with a
space before them unless a template ends the prompt or the text already ends in whitespace. Two
backends that use these functions send the engine the same ids for the same prompt, in
generation and in scoring (``tests/test_vllm.py`` checks ``hf:`` against ``vllm:``).
"""

from __future__ import annotations

from typing import Any

from pytest_competence.protocol import Prompt

__all__ = ["continuation", "encode", "has_template", "render"]


def has_template(tokenizer: Any, wanted: bool) -> bool:
    """Whether prompts are rendered by ``tokenizer``'s chat template (``wanted``: the spec's
    ``chat_template=auto``)."""
    return wanted and bool(getattr(tokenizer, "chat_template", None))


def render(tokenizer: Any, p: Prompt, template: bool) -> str:
    """The text of ``p`` the model reads: its chat template's rendering, or the plain prompt."""
    if template:
        messages = [{"role": "system", "content": p.system}] if p.system else []
        messages.append({"role": "user", "content": p.text})
        return str(
            tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        )
    return f"{p.system}\n\n{p.text}" if p.system else p.text


def encode(tokenizer: Any, text: str, template: bool) -> list[int]:
    """The ids of rendered ``text``: special tokens added only when no template wrote them."""
    return list(tokenizer(text, add_special_tokens=not template)["input_ids"])


def continuation(tokenizer: Any, text: str, candidate: str, template: bool) -> list[int]:
    """The ids of ``candidate`` read as the answer after rendered ``text``."""
    joined = candidate if template or not text or text[-1].isspace() else f" {candidate}"
    return list(tokenizer(joined, add_special_tokens=False)["input_ids"])
