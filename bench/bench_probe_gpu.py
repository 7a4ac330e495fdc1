"""The layer probes on a GPU in bf16: a ~300M-parameter model, time per 1,000 prompts, and a
planted answer found where it was planted. One command, hard time bound; skips without CUDA.

    python -m pip install -q --no-deps --no-build-isolation -e . && \
        python bench/bench_probe_gpu.py [--prompts 1600] [--budget 360]

Weights cannot be downloaded, so the model is a randomly initialised Llama (24 blocks, width
1,024, 16 heads, MLP 2,816: about 300M parameters with this tokenizer) built from a config
with a word-level tokenizer trained on the prompts (``tests/tiny_llama.py``), saved, and loaded
through ``hf:`` as any checkpoint is — on CUDA in bf16, the backend's own choice. It reads the
answer-position states of an ordering design (n ∈ {4, 8, 16, 32}, 200 pairs per level as in
App. I, original + equivalent) and
prints the time per 1,000 prompts and the peak GPU memory; then, with an answer written into
the residual stream from block 12 on (``tests/planted.py``: originals read out the solver's
answer, equivalents say "yes" with the answer decodable), runs
:func:`~pytest_competence.probe.probe_model` and prints the gold probe's AUROC by layer, the
first layer reaching 0.9 and the share of disagreeing pairs patching restores by layer —
expected: chance before layer 12, 1.0 from it. Each stage checks the clock and the whole run
is killed by an alarm at ``--budget`` seconds; what finished is printed as it finishes.
``--allow-cpu --small`` runs the same code on a 4-block model on the CPU (a dry run).
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

PLANTED_AT = 12
LEVELS = [4, 8, 16, 32]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompts", type=int, default=1600)
    parser.add_argument("--budget", type=float, default=360.0, help="seconds, hard bound")
    parser.add_argument("--permutations", type=int, default=10)
    parser.add_argument("--allow-cpu", action="store_true", help="run without CUDA (dry run)")
    parser.add_argument("--small", action="store_true", help="a 4-block model of width 64")
    args = parser.parse_args()
    started = time.perf_counter()
    signal.signal(signal.SIGALRM, _out_of_time)
    signal.alarm(max(1, int(args.budget)))
    import torch

    if not torch.cuda.is_available() and not args.allow_cpu:
        print(
            f"skipped: no CUDA device (torch {torch.__version__} sees none); this check "
            f"needs an accelerator (--allow-cpu --small runs a dry run on the CPU)"
        )
        return 0
    from _machine import describe

    from planted import Plant, yes_default
    from pytest_competence.models import resolve_model
    from pytest_competence.probe import probe_model, read_answer_states
    from pytest_competence.strategies import Ordering
    from tiny_llama import build

    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    print(describe(f"torch {torch.__version__}", f"device {device}"), flush=True)
    pairs = max(4, round(args.prompts / (2 * len(LEVELS)) / 4) * 4)
    items = Ordering(vocabulary="front_behind").design(
        levels=LEVELS, pairs=pairs, seed=0, presentations=["original", "equivalent"]
    )
    prompts = [p for item in items for p in item.prompts]
    size = (
        dict(layers=4, hidden=64, heads=2, intermediate=128)
        if args.small
        else dict(layers=24, hidden=1024, heads=16, intermediate=2816)
    )
    planted_at = min(PLANTED_AT, size["layers"] // 2)
    with tempfile.TemporaryDirectory() as tmp:
        folder = build(Path(tmp), prompts, **size)
        model = resolve_model(f"hf:{folder}?batch_size=64&readout=score")
        runner = model.runner
        parameters = sum(p.numel() for p in runner.model.parameters())
        print(
            f"model: random Llama, {size['layers']} blocks, width {size['hidden']}, "
            f"{parameters / 1e6:.3g}M parameters, on {runner.device} in {runner.dtype_name}; "
            f"{len(prompts)} prompts (n ∈ {LEVELS}); built in "
            f"{time.perf_counter() - started:.0f} s",
            flush=True,
        )
        read_answer_states(model, prompts[:64])  # warm-up: kernels, allocator
        _sync(torch)
        t0 = time.perf_counter()
        states = read_answer_states(model, prompts, precision="float16")
        _sync(torch)
        read = time.perf_counter() - t0
        memory = (
            torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else float("nan")
        )
        print(
            f"states: {read:.1f} s for {len(prompts)} prompts = {1000 * read / len(prompts):.2f}"
            f" s per 1,000 prompts; {states.states.nbytes / 2**20:.0f} MB of float16 states "
            f"({len(states.layers)} layers × {states.states.shape[2]}); peak GPU memory "
            f"{memory:.1f} GiB; unread {int((~states.ok).sum())}; lens gap "
            f"{states.lens_gap:.2e}",
            flush=True,
        )
        with Plant(model, prompts, planted_at, yes_default(300.0)):
            t0 = time.perf_counter()
            report = probe_model(
                model, items, precision="float16", permutations=args.permutations, B=200
            )
            _sync(torch)
        print(
            f"planted at layer {planted_at}: probe_model {time.perf_counter() - t0:.1f} s "
            f"(states, {args.permutations} permutations, lens, patching)",
            flush=True,
        )
        ok = True
        for cell in report.probes:
            if cell.level is not None:
                continue
            curve = cell.curve
            before, after = curve.auroc[:planted_at], curve.auroc[planted_at:]
            ok &= (
                curve.first_layer == planted_at
                and bool((after > 0.99).all())
                and bool((before < 0.8).all())
            )
            print(
                f"  {cell.presentation}: first layer ≥ 0.9: {curve.first_layer}; AUROC "
                f"before {before.min():.2f}–{before.max():.2f}, from it {after.min():.2f}–"
                f"{after.max():.2f}; null band {curve.null_low.min():.2f}–"
                f"{curve.null_high.max():.2f}"
            )
        hits, total = report.patching.restored()
        shares = [round(h / total, 3) for h in hits.tolist()] if total else []
        ok &= (
            total > 0
            and shares[:planted_at] == [0.0] * planted_at
            and shares[planted_at:] == [1.0] * (len(shares) - planted_at)
        )
        print(f"  patching: {total} disagreeing pairs; restored share by layer {shares}")
        print(
            f"{'as planted' if ok else 'NOT as planted'}; total {time.perf_counter() - started:.0f} s"
        )
        return 0 if ok else 1


def _sync(torch) -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _out_of_time(signum, frame) -> None:
    print("out of time: stopped at the --budget bound", flush=True)
    raise SystemExit(2)


if __name__ == "__main__":
    raise SystemExit(main())
