"""A tiny causal LM with random weights, made on the spot: no download, seconds on a CPU.

The tokenizer is a word-level ``tokenizers`` model trained on the given prompts and wrapped in
``PreTrainedTokenizerFast``; the model is a 2-layer Llama. Its answers are nonsense: the tests
that use it check plumbing (batching, scoring, serving), not competence. Needs torch,
transformers and tokenizers; callers ``pytest.importorskip`` them first.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["TEMPLATE", "build"]

#: A minimal chat template (``transformers serve`` and chat-mode tests need one).
TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def build(
    folder: Path,
    prompts,
    template: str | None = None,
    *,
    layers: int = 2,
    hidden: int = 32,
    heads: int = 2,
    intermediate: int = 64,
    bos: bool = False,
    sampling: bool = False,
) -> Path:
    """A word-level tokenizer trained on ``prompts`` and a random Llama (2 layers of width 32
    unless told otherwise), saved. ``bos``: the tokenizer adds ``[BOS]`` to the text it encodes
    (as Llama's do); ``sampling``: the saved generation config samples (``do_sample``)."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    texts = [f"{p.system}\n\n{p.text}" for p in prompts] + ["yes no Yes No maybe"]
    words = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    specials = ["[PAD]", "[UNK]", "[BOS]", "[EOS]", "<|system|>", "<|user|>", "<|assistant|>"]
    words.train_from_iterator(texts, trainers.WordLevelTrainer(special_tokens=specials))
    if bos:
        from tokenizers import processors

        words.post_processor = processors.TemplateProcessing(
            single="[BOS] $A", special_tokens=[("[BOS]", words.token_to_id("[BOS]"))]
        )
    tok = PreTrainedTokenizerFast(
        tokenizer_object=words,
        unk_token="[UNK]",
        pad_token="[PAD]",
        bos_token="[BOS]",
        eos_token="[EOS]",
    )
    if template:
        tok.chat_template = template
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=hidden,
        intermediate_size=intermediate,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=512,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    model = LlamaForCausalLM(config)
    if sampling:
        model.generation_config.do_sample = True
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder
