"""What the shipped learned model carries inside: decomposition, gold probes, lens, patching.

    python train/probe_learned.py [--vocabularies front_behind,older_younger,left_right]
                                  [--levels 3,4,5,6,8,12] [--pairs 64] [--permutations 100]
                                  [--json probes.json]

The design of ``train/learned_ordering_suite.py`` (64 instances per level, trained sizes 3–6
and larger ones, original and equivalent), read through ``hf:pytest-competence/learned-ordering``
on the CPU with :func:`pytest_competence.probe.probe_model`: per vocabulary, presentation and
level, the scored readout's accuracy and yes-rate with δ and s (CBE paper, arXiv:2610.22894,
Table 11), the gold probe's AUROC at each residual layer with its shuffled-label null band
(App. I, Figure 5), the logit lens's accuracy per layer, original → equivalent patching, and a
positive control: the same probe of the feature the model's size rule answers from (n = 3 or
larger). Prints the tables; ``--json`` keeps every figure.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from pytest_competence.models import resolve_model
from pytest_competence.probe import probe_layers, probe_model
from pytest_competence.strategies import Ordering

MODEL = "hf:pytest-competence/learned-ordering?batch_size=32&device=cpu&readout=score"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocabularies", default="front_behind,older_younger,left_right")
    parser.add_argument("--levels", default="3,4,5,6,8,12")
    parser.add_argument("--pairs", type=int, default=64)
    parser.add_argument("--permutations", type=int, default=100)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)  # a 432k-parameter model: threads only wait for each other
    model = resolve_model(MODEL)
    levels = [int(v) for v in args.levels.split(",")]
    kept = {}
    for vocabulary in args.vocabularies.split(","):
        items = Ordering(vocabulary=vocabulary).design(
            levels=levels, pairs=args.pairs, seed=0, presentations=["original", "equivalent"]
        )
        started = time.perf_counter()
        report = probe_model(model, items, permutations=args.permutations, keep_states=True)
        seconds = time.perf_counter() - started
        print(
            f"\n## {vocabulary}: {report.prompts} prompts, {report.model_layers} blocks "
            f"(residual layers {list(report.layers)}), {report.device} {report.dtype}, "
            f"{seconds:.1f} s; lens gap at the last layer {report.lens_gap:.1e}"
        )
        print_tables(report)
        kept[vocabulary] = report.to_dict()
        kept[vocabulary]["size_control"] = size_control(report, levels[0], args.permutations)
    if args.json:
        args.json.write_text(json.dumps(kept, indent=1))


def print_tables(report) -> None:
    print("\npresentation  n     acc    yes    δ [95%] (logits)               s [95%] (logits)")
    for c in report.decomposition:
        print(
            f"{c.presentation:<12}  {_level(c.level):<4}  {c.accuracy.estimate:.3f}  "
            f"{c.yes_rate.estimate:.3f}  {_interval(c.default)}  {_interval(c.signal)}"
        )
    print("\ngold probe AUROC by layer (null band 95%), first layer ≥ 0.9")
    for cell in report.probes:
        curve = cell.curve
        if curve.reason:
            print(f"{cell.presentation:<12}  {_level(cell.level):<4}  n/a: {curve.reason}")
            continue
        layers = "  ".join(
            f"{a:.2f} [{lo:.2f}, {hi:.2f}]"
            for a, lo, hi in zip(curve.auroc, curve.null_low, curve.null_high)
        )
        print(
            f"{cell.presentation:<12}  {_level(cell.level):<4}  {layers}  "
            f"first: {curve.first_layer if curve.first_layer is not None else '–'}"
        )
    print("\nlogit lens: accuracy by layer")
    for cell in report.lens:
        print(
            f"{cell['presentation']:<12}  {_level(cell['level']):<4}  "
            + "  ".join(f"{v:.3f}" for v in cell["accuracy"])
        )
    patching = report.patching.to_dict()
    print(
        f"\npatching original → equivalent: {patching['pooled']['disagreeing']} disagreeing "
        f"pairs; restored share by layer {patching['pooled']['share']}"
    )
    for part in patching["by_level"]:
        print(f"  n={part['level']}: {part['disagreeing']} pairs, {part['share']}")


def size_control(report, smallest: int, permutations: int) -> dict:
    """A positive control: the same probe, of the feature the size rule answers from
    (``n = smallest`` or larger), on all levels pooled, per presentation."""
    states, rows = report.states, report.states.rows
    out = {}
    print(f"\ncontrol: probe of n = {smallest} (vs larger) by layer, all levels")
    for name in rows.presentations():
        mine = rows.presentation == name
        curve = probe_layers(
            states.states[mine],
            rows.level[mine] == smallest,
            rows.instance[mine],
            layers=states.layers,
            permutations=permutations,
        )
        print(
            f"{name:<12}  "
            + "  ".join(
                f"{a:.2f} [{lo:.2f}, {hi:.2f}]"
                for a, lo, hi in zip(curve.auroc, curve.null_low, curve.null_high)
            )
        )
        out[name] = curve.to_dict()
    return out


def _level(level: int | None) -> str:
    return "all" if level is None else str(level)


def _interval(b) -> str:
    if not np.isfinite(b.estimate):
        return f"{'–':<30}"
    return f"{b.estimate:+.1e} [{b.low:+.1e}, {b.high:+.1e}]"


if __name__ == "__main__":
    main()
