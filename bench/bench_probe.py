"""Memory and time of the layer probes: answer-position states for 10k prompts, and the fits.

Each size × precision runs in a fresh child process against ``hf:`` on the CPU (one torch
thread): it streams an ordering design (n ∈ {4, 8}, original + equivalent) chunk by chunk
(``design_chunks``, 512 instances a chunk) into a :class:`~pytest_competence.probe.StateReader`
with ``total`` given, so the arrays are allocated once, then fits the gold probes per
presentation × level (:func:`~pytest_competence.probe.probe_cells`). It prints the kept arrays'
size, the process's peak RSS after the model's first batch (the baseline), after reading and
after the fits, the reading time per 1,000 prompts and the fitting time. The bound it checks:
reading adds the arrays (``N × |layers| × d`` × 4 or 2 bytes, plus ``N × (|layers| + 1) × K × 4``
for lens and logits) and no more than a batch's worth besides. Asserts nothing:

    python bench/bench_probe.py [--sizes 1000,10000] [--model hf:…] [--permutations 20]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from _machine import describe

MODEL = "hf:pytest-competence/learned-ordering?batch_size=32&device=cpu&readout=score"

CHILD = r"""
import json, resource, sys, time
import torch
torch.set_num_threads(1)
from pytest_competence.models import resolve_model
from pytest_competence.probe import StateReader, probe_cells
from pytest_competence.strategies import Ordering
from pytest_competence.protocol import design_chunks

spec, total, precision, permutations = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
family = Ordering(vocabulary="front_behind")
pairs = max(4, round(total / 16) * 4)  # a multiple of the 4 balanced cells
total = pairs * 4  # two levels, two presentations
model = resolve_model(spec)
warm = next(design_chunks(family, levels=[4], pairs=4, seed=99, presentations=["original"]))
StateReader(model).add([p for item in warm for p in item.prompts])  # load and run once
base = peak()
reader = StateReader(model, precision=precision, total=total)
started = time.perf_counter()
for chunk in design_chunks(family, levels=[4, 8], pairs=pairs, seed=0,
                           presentations=["original", "equivalent"], size=512):
    reader.add([p for item in chunk for p in item.prompts])
states = reader.finish()
read = time.perf_counter() - started
after_read = peak()
started = time.perf_counter()
cells = probe_cells(states.states, states.rows, ok=states.ok, permutations=permutations)
fit = time.perf_counter() - started
print(json.dumps({"prompts": len(states.rows), "layers": len(states.layers),
                  "d": states.states.shape[2], "nbytes": states.nbytes,
                  "base": base, "after_read": after_read, "after_fit": peak(),
                  "read_s": read, "fit_s": fit, "cells": len(cells),
                  "unread": int((~states.ok).sum())}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--precisions", default="float32,float16")
    parser.add_argument("--permutations", type=int, default=20)
    args = parser.parse_args()
    import torch

    print(describe(f"torch {torch.__version__}"))
    print(
        f"model {args.model}; ordering front_behind, n ∈ {{4, 8}}, original + equivalent; "
        f"probes with {args.permutations} permutations, 5 folds"
    )
    print(
        f"{'prompts':>8} {'precision':>9} {'arrays MB':>10} {'base MB':>8} {'read MB':>8} "
        f"{'+read':>7} {'fit MB':>7} {'read s/1k':>10} {'fit s':>7}"
    )
    for size in (int(v) for v in args.sizes.split(",")):
        for precision in args.precisions.split(","):
            done = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    CHILD,
                    args.model,
                    str(size),
                    precision,
                    str(args.permutations),
                ],
                capture_output=True,
                text=True,
            )
            if done.returncode != 0:
                raise SystemExit(done.stderr[-3000:])
            r = json.loads(done.stdout.strip().splitlines()[-1])
            print(
                f"{r['prompts']:>8,} {precision:>9} {r['nbytes'] / 2**20:10.1f} "
                f"{r['base']:8.0f} {r['after_read']:8.0f} "
                f"{r['after_read'] - r['base']:7.1f} {r['after_fit']:7.0f} "
                f"{1000 * r['read_s'] / r['prompts']:10.2f} {r['fit_s']:7.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
