"""A tiny causal LM made on the spot: no download, random weights, a word-level tokenizer.

Used by the transformers backend tests and the TRL training test; importing it needs torch,
transformers and tokenizers (the caller skips first when they are missing).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def build(folder: Path, texts: Iterable[str], template: str | None = None) -> Path:
    """A word-level tokenizer trained on ``texts`` and a random 2-layer Llama, saved in ``folder``."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    words = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    specials = ["[PAD]", "[UNK]", "[BOS]", "[EOS]", "<|system|>", "<|user|>", "<|assistant|>"]
    words.train_from_iterator([*texts, "yes no Yes No maybe"],
                              trainers.WordLevelTrainer(special_tokens=specials))
    tok = PreTrainedTokenizerFast(tokenizer_object=words, unk_token="[UNK]", pad_token="[PAD]",
                                  bos_token="[BOS]", eos_token="[EOS]")
    if template:
        tok.chat_template = template
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=512, pad_token_id=tok.pad_token_id,
                         bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    LlamaForCausalLM(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder
