"""The regression gate: no significant loss against a baseline model on the same instances.

A checkpoint fails the gate at a level and presentation only when both hold: McNemar on
all-prompt correctness (candidate against baseline, matched instance by instance; seeds/000
App. B.2) is significant after Holm correction across every level × presentation compared, and
the accuracy drop is larger than the declared margin. Each comparison also carries a paired
bootstrap interval on the accuracy difference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pytest_competence import stats

__all__ = ["BaselineError", "baseline_from_document", "compare_with_baseline", "regression_message"]


class BaselineError(ValueError):
    """The baseline cannot be compared with this test (missing, or other instances)."""


def baseline_from_document(
    path: str | Path, test: str, ids: Sequence[str]
) -> tuple[str, dict[str, np.ndarray]]:
    """The baseline's name and per-presentation correctness for ``test`` from an archived run."""
    from pytest_competence.report import load_document

    document = load_document(path)
    for result in document["results"]:
        if result["test"] != test:
            continue
        if result["instances"]["ids"] != list(ids):
            raise BaselineError(
                f"baseline {path}: {test} ran on other instances (levels, pairs or seed differ); "
                f"archive the baseline with the same design"
            )
        correct = {name: np.frombuffer(bits.encode(), np.uint8) == ord("1")
                   for name, bits in result["instances"]["correct"].items()}
        return result["model"], correct
    raise BaselineError(f"baseline {path} has no result for {test}; run the baseline on this "
                        f"suite with --competence-json to archive one")


def compare_with_baseline(
    correct: np.ndarray, level: np.ndarray, presentations: Sequence[str],
    baseline: Mapping[str, np.ndarray], *, name: str, alpha: float, margin: float,
    bootstrap: int, seed: int,
) -> dict[str, Any]:
    """Per level × presentation: accuracies, Δ with a bootstrap interval, McNemar, Holm, verdict.

    ``correct`` is the candidate's (N × P) correctness, invalid answers wrong; ``baseline`` maps
    each presentation to the baseline's (N,) correctness on the same instances.
    """
    rows = []
    for n in sorted(set(level.tolist())):
        mask = level == n
        for k, presentation in enumerate(presentations):
            if presentation not in baseline:
                continue
            x, y = correct[mask, k], baseline[presentation][mask]
            test = stats.mcnemar_paired(x, y)
            figure = stats.difference_figure(stats.accuracy_figure(x), stats.accuracy_figure(y))
            ci = stats.paired_bootstrap(*figure, B=bootstrap, seed=seed) if bootstrap else None
            rows.append({
                "n": n, "presentation": presentation,
                "candidate": float(x.mean()), "baseline": float(y.mean()),
                "delta": float(x.mean() - y.mean()),
                "interval": None if ci is None else [float(ci.low), float(ci.high)],
                "b": test.b, "c": test.c, "method": test.method, "p_value": test.p_value,
            })
    for row, adjusted in zip(rows, stats.holm([r["p_value"] for r in rows])):
        row["p_holm"] = adjusted
        row["regression"] = row["delta"] < -margin and adjusted < alpha
    return {"baseline": name, "alpha": alpha, "margin": margin, "comparisons": rows,
            "regressions": [r for r in rows if r["regression"]]}


def regression_message(gate: Mapping[str, Any]) -> str:
    """Name every significant regression: level, figure, both values, interval, p-values."""
    lines = [f"Significant regression against baseline {gate['baseline']!r} "
             f"(Holm-adjusted McNemar < α = {gate['alpha']:g} and a drop over the margin "
             f"{gate['margin']:g}):"]
    for r in gate["regressions"]:
        ci = r["interval"]
        shown = "" if ci is None else f", 95% CI [{ci[0]:+.3f}, {ci[1]:+.3f}]"
        lines.append(
            f"  n={r['n']} accuracy[{r['presentation']}]: {r['candidate']:.3f} vs baseline "
            f"{r['baseline']:.3f} (Δ {r['delta']:+.3f}{shown}); McNemar b={r['b']} c={r['c']} "
            f"{r['method']} p={r['p_value']:.3g}, Holm {r['p_holm']:.3g}"
        )
    return "\n".join(lines)
