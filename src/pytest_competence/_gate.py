"""The regression gate: no significant loss against a baseline model on the same instances.

A checkpoint fails the gate at a level and presentation only when both hold: McNemar on
all-prompt correctness (candidate against baseline, matched instance by instance; seeds/000
App. B.2) is significant after Holm correction across every level × presentation compared, and
the accuracy drop is larger than the declared margin. Each comparison also carries a paired
bootstrap interval on the accuracy difference.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pytest_competence import stats

__all__ = [
    "BaselineError",
    "DesignDigest",
    "baseline_from_document",
    "check_design",
    "compare_with_baseline",
    "design_fingerprint",
    "load_baseline",
    "regression_message",
]


class BaselineError(ValueError):
    """The baseline cannot be compared with this test (unreadable, or another design)."""


#: Bumped whenever a family's wording changes in a way its repr does not show; part of the
#: fingerprint, so an archive from before such a change is never compared as if equal.
PROMPT_WORDING = 1


def load_baseline(path: str | Path) -> dict[str, Any]:
    """An archived results document to gate against; :class:`BaselineError` says why not.

    Read once, when the run starts: a missing, unreadable, truncated or foreign file stops the
    run before any model is asked.
    """
    from pytest_competence.report import load_document

    fix = (
        "archive one with --competence-json on the released model, or drop "
        "--competence-baseline for this run"
    )
    try:
        document = load_document(path)
    except FileNotFoundError:
        raise BaselineError(f"--competence-baseline: no such file {str(path)!r}; {fix}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(
            f"--competence-baseline: cannot read {str(path)!r} ({type(exc).__name__}: {exc}); {fix}"
        ) from None
    except ValueError as exc:  # json.JSONDecodeError, or another schema
        raise BaselineError(
            f"--competence-baseline: {str(path)!r} is not a complete "
            f"pytest-competence results document ({exc}); {fix}"
        ) from None
    results = document.get("results")
    if not isinstance(results, list) or not all(
        isinstance(r, dict)
        and isinstance(r.get("test"), str)
        and isinstance(r.get("instances"), dict)
        for r in results
    ):
        raise BaselineError(
            f"--competence-baseline: {str(path)!r} holds no per-test results with instances; {fix}"
        )
    return document


class DesignDigest:
    """The hash of a design's prompts, fed chunk by chunk (see :func:`design_fingerprint`)."""

    def __init__(self) -> None:
        self._digest = hashlib.sha256()

    def update(self, items: Iterable[Any]) -> None:
        digest = self._digest
        for item in items:
            for p in item.prompts:
                for part in (item.id, p.presentation, p.system, p.text, p.gold, p.readout):
                    data = str(part).encode("utf-8", "surrogatepass")
                    digest.update(len(data).to_bytes(8, "big"))  # the same bytes, not copied
                    digest.update(data)

    def fingerprint(self, spec: Any) -> dict[str, Any]:
        return {
            "family": repr(spec.family),
            "levels": list(spec.levels),
            "pairs": spec.pairs,
            "seed": spec.seed,
            "presentations": list(spec.presentations),
            "attempts": spec.attempts,
            "wording": PROMPT_WORDING,
            "prompts": self._digest.hexdigest()[:32],
        }


def design_fingerprint(spec: Any, items: Iterable[Any]) -> dict[str, Any]:
    """What decides a design's prompts: family and options, grid, seed, presentations, attempts,
    the wording version, and a hash of every prompt, its gold answer and its presentation."""
    digest = DesignDigest()
    digest.update(items)
    return digest.fingerprint(spec)


def _archived(result: Mapping[str, Any]) -> dict[str, Any]:
    """The fingerprint of an archived result; older archives carry only some of its parts."""
    design = result.get("design") or {}
    if "fingerprint" in design:
        return dict(design["fingerprint"])
    return {
        "family": result.get("family"),
        "levels": design.get("levels"),
        "pairs": design.get("pairs"),
        "seed": design.get("seed"),
        "presentations": list((result.get("instances") or {}).get("correct", {})),
        "attempts": design.get("attempts", 1),
    }


def check_design(
    path: str, document: Mapping[str, Any], test: str, fingerprint: Mapping[str, Any]
) -> None:
    """Raise :class:`BaselineError` naming what differs when ``test`` was archived from another
    design; a test the archive does not hold is left to the gate ("no baseline")."""
    result = next((r for r in document["results"] if r["test"] == test), None)
    if result is None:
        return
    archived = _archived(result)
    differ = [
        f"{key}: archived {archived[key]!r}, now {fingerprint[key]!r}"
        for key in fingerprint
        if key != "prompts" and key in archived and archived[key] != fingerprint[key]
    ]
    if not differ and archived.get("prompts", fingerprint["prompts"]) != fingerprint["prompts"]:
        differ = [
            "the prompts' text differs though the declaration is the same (the family's "
            "wording changed, e.g. another version of pytest-competence or of the family)"
        ]
    if differ:
        raise BaselineError(
            f"baseline {path}: {test} was archived from another design, so its instances cannot "
            f"be matched; " + "; ".join(differ) + ". Archive the baseline again with this design "
            "(or restore the test's old design)"
        )


def baseline_from_document(
    path: str, document: Mapping[str, Any], test: str, ids: Sequence[str]
) -> tuple[str, dict[str, np.ndarray]] | None:
    """The baseline's name and per-presentation correctness for ``test`` from an archived run;
    ``None`` when the archive has no result for ``test`` (e.g. a test added since)."""
    for result in document["results"]:
        if result["test"] != test:
            continue
        if result["instances"]["ids"] != list(ids):
            raise BaselineError(
                f"baseline {path}: {test} ran on other instances (levels, pairs or seed differ); "
                f"archive the baseline with the same design"
            )
        correct = {
            name: np.frombuffer(bits.encode(), np.uint8) == ord("1")
            for name, bits in result["instances"]["correct"].items()
        }
        return result["model"], correct
    return None


def compare_with_baseline(
    correct: np.ndarray,
    level: np.ndarray,
    presentations: Sequence[str],
    baseline: Mapping[str, np.ndarray],
    *,
    name: str,
    alpha: float,
    margin: float,
    bootstrap: int,
    seed: int,
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
            rows.append(
                {
                    "n": n,
                    "presentation": presentation,
                    "candidate": float(x.mean()),
                    "baseline": float(y.mean()),
                    "delta": float(x.mean() - y.mean()),
                    "interval": None if ci is None else [float(ci.low), float(ci.high)],
                    "b": test.b,
                    "c": test.c,
                    "method": test.method,
                    "p_value": test.p_value,
                }
            )
    for row, adjusted in zip(rows, stats.holm([r["p_value"] for r in rows])):
        row["p_holm"] = adjusted
        row["regression"] = row["delta"] < -margin and adjusted < alpha
    return {
        "baseline": name,
        "alpha": alpha,
        "margin": margin,
        "comparisons": rows,
        "regressions": [r for r in rows if r["regression"]],
    }


def regression_message(gate: Mapping[str, Any]) -> str:
    """Name every significant regression: level, figure, both values, interval, p-values."""
    lines = [
        f"Significant regression against baseline {gate['baseline']!r} "
        f"(Holm-adjusted McNemar < α = {gate['alpha']:g} and a drop over the margin "
        f"{gate['margin']:g}):"
    ]
    for r in gate["regressions"]:
        ci = r["interval"]
        shown = "" if ci is None else f", 95% CI [{ci[0]:+.3f}, {ci[1]:+.3f}]"
        lines.append(
            f"  n={r['n']} accuracy[{r['presentation']}]: {r['candidate']:.3f} vs baseline "
            f"{r['baseline']:.3f} (Δ {r['delta']:+.3f}{shown}); McNemar b={r['b']} c={r['c']} "
            f"{r['method']} p={r['p_value']:.3g}, Holm {r['p_holm']:.3g}"
        )
    return "\n".join(lines)
