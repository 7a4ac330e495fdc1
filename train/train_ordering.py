"""Train a small causal transformer on the ordering family and save it for ``hf:PATH`` (issue #10).

Everything is local: the word-level tokenizer is built from the generator's own vocabulary (the
2,500-name pool, every catalog phrase and every prompt word), the model is a randomly initialised
``LlamaForCausalLM``, and the training data are fresh ordering instances drawn from the project's
generator (original and equivalent presentations of the training vocabularies, sizes 2..--max-n) at
a seed far from the evaluation seeds. The loss is on the answer token after the prompt only.

    python train/train_ordering.py --out checkpoints/ordering --steps 20000 --device cuda

The saved directory loads with ``--competence-model hf:checkpoints/ordering``; ``training.json``
beside the weights records the seed, the hyperparameters, the wall time and the hardware.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import time
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from pytest_competence.strategies import CATALOG, Ordering
from pytest_competence.strategies.names import first_names
from pytest_competence.training.splits import TRAIN_SEEDS

SPECIALS = ["[PAD]", "[UNK]", "[BOS]", "[EOS]"]
ANSWERS = ("yes", "no")
#: Evaluation designs use small seeds (the plugin's default is 1); training draws from far away,
#: from the seeds of the training splits (pytest_competence.training.splits).
TRAIN_SEED_BASE = TRAIN_SEEDS.start


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, type=Path, help="checkpoint directory to write")
    p.add_argument(
        "--vocabularies",
        nargs="+",
        default=["front_behind", "older_younger"],
        help="training vocabularies (catalog names); the others stay held out",
    )
    p.add_argument(
        "--presentations",
        nargs="+",
        default=["original", "equivalent"],
        help="presentations the training prompts are drawn in",
    )
    p.add_argument("--min-n", type=int, default=2, help="smallest training chain length")
    p.add_argument("--max-n", type=int, default=8, help="largest training chain length")
    p.add_argument("--steps", type=int, default=20_000)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--heads", type=int, default=0, help="attention heads (0: d_model // 64)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--log-every", type=int, default=100)
    p.add_argument(
        "--eval-every",
        type=int,
        default=0,
        help="every this many steps, measure greedy accuracy on a fixed evaluation "
        "set, keep it in the learning curve and save the checkpoint (0: never)",
    )
    p.add_argument(
        "--max-minutes",
        type=float,
        default=0.0,
        help="stop after this much wall time (0: no limit); training.json records "
        "the steps run, and --stop-at with that count repeats the run exactly",
    )
    p.add_argument(
        "--stop-at",
        type=int,
        default=0,
        help="stop after this many steps (0: --steps); the learning-rate schedule "
        "still follows --steps",
    )
    return p.parse_args(argv)


def sample_prompts(
    family: Ordering,
    n: int,
    seed: int,
    presentations: tuple[str, ...] = ("original", "equivalent"),
    pairs: int = 4,
) -> list:
    """The presentations of a balanced batch of instances at level ``n`` (4 cells per 4 pairs)."""
    items = family.design(levels=[n], pairs=pairs, seed=seed, presentations=list(presentations))
    return [p for item in items for p in item.prompts]


def vocabulary_words(families: dict[str, Ordering], max_n: int) -> list[str]:
    """Every word the generator can emit for these settings: names, phrases, prompt scaffolding."""
    texts = list(first_names())
    for v in CATALOG:
        for phrase in (v.forward, v.converse):
            texts += [phrase.statement, phrase.negation, phrase.question]
        texts += [v.context(max_n, "x"), v.setting, v.order, v.rule]
    for family in families.values():
        for n in range(2, max_n + 1):
            texts += [f"{p.system}\n\n{p.text}" for p in sample_prompts(family, n, seed=1)]
    texts += [str(k) for k in range(2, max(max_n, 2048) + 1)] + list(ANSWERS)
    splitter = pre_tokenizers.Whitespace()
    words = {w for t in texts for w, _ in splitter.pre_tokenize_str(t)}
    return sorted(words - {"{", "}"})  # the "{a}"/"{b}" placeholders' braces


def build_tokenizer(words: list[str]) -> PreTrainedTokenizerFast:
    vocab = {w: i for i, w in enumerate(SPECIALS + [w for w in words if w not in SPECIALS])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        unk_token="[UNK]",
        pad_token="[PAD]",
        bos_token="[BOS]",
        eos_token="[EOS]",
    )


def make_batch(tok, families, sizes, presentations, rng, step, batch_size, device):
    """Token ids, padded on the right, with labels only on the answer token (and EOS after it)."""
    rows, labels = [], []
    while len(rows) < batch_size:
        name = rng.choice(sorted(families))
        n = rng.randint(*sizes)
        for p in sample_prompts(
            families[name],
            n,
            seed=TRAIN_SEED_BASE + step * 997 + len(rows),
            presentations=presentations,
        ):
            context = tok(f"{p.system}\n\n{p.text}")["input_ids"]  # the backend's plain rendering
            answer = tok(f" {p.gold}", add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
            rows.append(context + answer)
            labels.append([-100] * len(context) + answer)
    order = rng.sample(range(len(rows)), batch_size)
    width = max(len(rows[i]) for i in order)
    ids = torch.full((batch_size, width), tok.pad_token_id)
    lab = torch.full((batch_size, width), -100)
    mask = torch.zeros((batch_size, width), dtype=torch.long)
    for r, i in enumerate(order):
        ids[r, : len(rows[i])] = torch.tensor(rows[i])
        lab[r, : len(rows[i])] = torch.tensor(labels[i])
        mask[r, : len(rows[i])] = 1
    return ids.to(device), lab.to(device), mask.to(device)


def answer_loss(model, ids, mask, labels):
    """The causal LM loss on the labelled (answer) positions only, as ``labels=`` computes it.

    The output layer runs on those few positions alone rather than on every prompt token: with a
    vocabulary of thousands of words and a small model, that layer is most of the work.
    """
    hidden = model.model(input_ids=ids, attention_mask=mask).last_hidden_state[:, :-1]
    targets = labels[:, 1:]
    keep = targets != -100
    logits = model.lm_head(hidden[keep])
    return torch.nn.functional.cross_entropy(logits.float(), targets[keep])


#: The evaluation set of the learning curve: its own seed, far from training and from the designs.
EVAL_SEED = 2_000_000
EVAL_PAIRS = 32


def evaluation_set(
    families: dict[str, Ordering], sizes: range, presentations: tuple[str, ...]
) -> dict[str, list]:
    """Fixed prompts per ``vocabulary/n/presentation`` for the learning curve (32 instances)."""
    out: dict[str, list] = {}
    for name, family in families.items():
        for n in sizes:
            for p in sample_prompts(family, n, EVAL_SEED, presentations, pairs=EVAL_PAIRS):
                out.setdefault(f"{name}/n={n}/{p.presentation}", []).append(p)
    return out


@torch.no_grad()
def greedy_accuracy(model, tok, evaluation: dict[str, list], device) -> dict[str, float]:
    """The share of prompts whose greedy first answer token is the gold answer, per key."""
    model.eval()
    out = {}
    for key, prompts in evaluation.items():
        rows = [tok(f"{p.system}\n\n{p.text}")["input_ids"] for p in prompts]
        width = max(map(len, rows))
        ids = torch.full((len(rows), width), tok.pad_token_id)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, row in enumerate(rows):  # left padding with explicit positions, as hf: does
            ids[r, width - len(row) :] = torch.tensor(row)
            mask[r, width - len(row) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        logits = model(
            input_ids=ids.to(device),
            attention_mask=mask.to(device),
            position_ids=positions.to(device),
            logits_to_keep=1,
        ).logits[:, -1]
        best = tok.convert_ids_to_tokens(logits.argmax(-1).tolist())
        out[key] = sum(b == p.gold for b, p in zip(best, prompts)) / len(prompts)
    model.train()
    return out


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    device = torch.device(
        "cuda"
        if args.device == "auto" and torch.cuda.is_available()
        else "cpu"
        if args.device == "auto"
        else args.device
    )
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(device.type == "cpu")

    families = {v: Ordering(vocabulary=v) for v in args.vocabularies}
    tok = build_tokenizer(vocabulary_words(families, args.max_n))
    heads = args.heads or max(1, args.d_model // 64)
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=args.d_model,
        intermediate_size=4 * args.d_model,
        num_hidden_layers=args.layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=max(512, 32 * args.max_n + 256),
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(config).to(device)
    optim = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(  # linear warm-up, then constant
        optim, lambda s: min(1.0, (s + 1) / max(1, min(1000, args.steps // 10)))
    )
    rng = random.Random(args.seed)
    params = sum(p.numel() for p in model.parameters())
    print(f"{params / 1e6:.2f}M parameters, vocabulary {len(tok)}, device {device}", flush=True)
    presentations = tuple(args.presentations)
    # Original and equivalent whatever the training presentations: the curve shows both.
    evaluation = (
        evaluation_set(families, range(args.min_n, args.max_n + 1), ("original", "equivalent"))
        if args.eval_every
        else {}
    )
    curve: list[dict] = []

    def save(steps_run: int, wall: float) -> dict:
        args.out.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(args.out)
        tok.save_pretrained(args.out)
        window = losses[-args.log_every :]
        record = {
            "seed": args.seed,
            "train_seed_base": TRAIN_SEED_BASE,
            "hyperparameters": {
                k: v
                for k, v in vars(args).items()
                if k not in ("out", "log_every", "max_minutes", "stop_at")
            },
            "steps_run": steps_run,
            "parameters": params,
            "final_loss": sum(window) / len(window) if window else None,
            "wall_time_s": round(wall, 2),
            "hardware": {
                "device": str(device),
                "name": (
                    torch.cuda.get_device_name(device)
                    if device.type == "cuda"
                    else platform.processor() or platform.machine()
                ),
                "cpus": os.cpu_count(),
                "torch": torch.__version__,
                "threads": torch.get_num_threads(),
            },
            "evaluation": {
                "seed": EVAL_SEED,
                "pairs": EVAL_PAIRS,
                "readout": "greedy first answer token",
            }
            if evaluation
            else None,
            "learning_curve": curve,
        }
        (args.out / "training.json").write_text(json.dumps(record, indent=2) + "\n")
        return record

    model.train()
    start = last = time.perf_counter()
    losses: list[float] = []
    step = 0
    for step in range(1, args.steps + 1):
        ids, labels, mask = make_batch(
            tok,
            families,
            (args.min_n, args.max_n),
            presentations,
            rng,
            step,
            args.batch_size,
            device,
        )
        loss = answer_loss(model, ids, mask, labels)
        optim.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optim.step()
        schedule.step()
        losses.append(loss.item())
        if step % args.log_every == 0 or step == args.steps:
            now = time.perf_counter()
            window = losses[-args.log_every :]
            rate = min(args.log_every, len(window)) / max(now - last, 1e-9)
            print(
                f"step {step:>6}  loss {sum(window) / len(window):.4f}  {rate:.1f} steps/s",
                flush=True,
            )
            last = now
        out_of_time = (
            args.max_minutes
            and time.perf_counter() - start > 60 * args.max_minutes
            or step == args.stop_at
        )
        if evaluation and (step % args.eval_every == 0 or step == args.steps or out_of_time):
            accuracy = greedy_accuracy(model, tok, evaluation, device)
            wall = time.perf_counter() - start
            window = losses[-args.eval_every :]
            curve.append(
                {
                    "step": step,
                    "wall_time_s": round(wall, 1),
                    "loss": round(sum(window) / len(window), 4),
                    "accuracy": {k: round(v, 4) for k, v in accuracy.items()},
                }
            )
            mean = sum(accuracy.values()) / len(accuracy)
            print(
                f"eval step {step}: mean accuracy {mean:.3f}  "
                + "  ".join(f"{k} {v:.2f}" for k, v in accuracy.items()),
                flush=True,
            )
            save(step, wall)
        if out_of_time:
            print(
                f"stopping after {step} steps (--max-minutes {args.max_minutes}, "
                f"--stop-at {args.stop_at})",
                flush=True,
            )
            break
    wall = time.perf_counter() - start
    model.eval()
    record = save(step, wall)
    print(f"saved to {args.out} after {wall:.1f}s", flush=True)
    return record


if __name__ == "__main__":
    main()
