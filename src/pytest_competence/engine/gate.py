"""The release gate: a candidate against a baseline model on the same instances.

Two gates, chosen by ``competence_gate`` or the marker's ``gate=``:

- **regression** (the default): a checkpoint fails at a level and presentation only when both
  hold: McNemar on all-prompt correctness (candidate against baseline, matched instance by
  instance; CBE paper, arXiv:2610.22894, App. B.2) is significant after Holm correction across every level ×
  presentation compared, and the accuracy drop is larger than the declared margin. Absence of
  evidence passes.
- **non-inferiority**: a checkpoint passes only when, at every level × presentation, the
  one-sided lower confidence bound of the paired accuracy difference (candidate − baseline)
  lies above −margin, Holm across the cells (:func:`~pytest_competence.stats.noninferiority_decision`):
  the release must show that it lost no more than the margin.

Each comparison also carries a paired bootstrap interval on the accuracy difference, and each
cell and the gate as a whole the drop it could have detected (:func:`gate_power_summary`). The
gate reads only the design's per-instance correctness: minimisation and the replay of saved
cases ask the model separately and never enter it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from pytest_competence import stats

if TYPE_CHECKING:
    from pytest_competence.stats import GateTest

__all__ = [
    "PROMPT_WORDING",
    "BaselineError",
    "DesignDigest",
    "UnderpoweredGate",
    "archived_correct",
    "archived_fingerprint",
    "baseline_from_document",
    "check_design",
    "compare_with_baseline",
    "design_differences",
    "design_fingerprint",
    "gate_message",
    "gate_passed",
    "gate_power_summary",
    "load_baseline",
    "regression_message",
    "underpowered_message",
]


class BaselineError(ValueError):
    """The baseline cannot be compared with this test (unreadable, or another design)."""


class UnderpoweredGate(BaselineError):
    """With ``competence_underpowered = error``: the gate cannot detect a drop as small as its
    margin. Raised at setup, like a baseline of another design: the test's ERROR, never a
    verdict on the model."""


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


def archived_fingerprint(result: Mapping[str, Any]) -> dict[str, Any]:
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


def design_differences(
    archived: Mapping[str, Any],
    fingerprint: Mapping[str, Any],
    labels: tuple[str, str] = ("archived", "now"),
) -> list[str]:
    """What differs between two fingerprints, one phrase each naming them by ``labels`` (parts
    only one of them holds are not compared); empty when the designs are the same."""
    then, now = labels
    differ = [
        f"{key}: {then} {archived[key]!r}, {now} {fingerprint[key]!r}"
        for key in fingerprint
        if key != "prompts" and key in archived and archived[key] != fingerprint[key]
    ]
    prompts = fingerprint.get("prompts")
    if not differ and archived.get("prompts", prompts) != prompts:
        differ = [
            "the prompts' text differs though the declaration is the same (the family's "
            "wording changed, e.g. another version of pytest-competence or of the family)"
        ]
    return differ


def check_design(
    path: str, document: Mapping[str, Any], test: str, fingerprint: Mapping[str, Any]
) -> None:
    """Raise :class:`BaselineError` naming what differs when ``test`` was archived from another
    design; a test the archive does not hold is left to the gate ("no baseline")."""
    result = next((r for r in document["results"] if r["test"] == test), None)
    if result is None:
        return
    differ = design_differences(archived_fingerprint(result), fingerprint)
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
        return result["model"], archived_correct(result)
    return None


def archived_correct(result: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """An archived result's per-instance correctness, per presentation, from
    ``instances.correct`` (a ``0``/``1`` character per instance; invalid answers are ``0``)."""
    return {
        name: np.frombuffer(bits.encode(), np.uint8) == ord("1")
        for name, bits in result["instances"]["correct"].items()
    }


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
    test: str = "regression",
) -> dict[str, Any]:
    """Per level × presentation: accuracies, Δ with a bootstrap interval, the gate's test with
    Holm across the cells, each cell's detectable drop, and the verdict.

    ``correct`` is the candidate's (N × P) correctness, invalid answers wrong; ``baseline`` maps
    each presentation to the baseline's (N,) correctness on the same instances. ``test`` is
    ``"regression"`` (McNemar, two-sided ``alpha``; a cell regresses when Holm's p is below
    ``alpha`` and the drop exceeds ``margin``) or ``"non-inferiority"`` (the one-sided lower
    bound of candidate − baseline above −``margin`` at every cell, Holm at one-sided ``alpha``:
    :func:`~pytest_competence.stats.noninferiority_decision`). Both carry ``power``
    (:func:`gate_power_summary`).
    """
    rows = []
    for n in sorted(set(level.tolist())):
        mask = level == n
        for k, presentation in enumerate(presentations):
            if presentation not in baseline:
                continue
            x, y = correct[mask, k], baseline[presentation][mask]
            mcnemar = stats.mcnemar_paired(x, y)
            figure = stats.difference_figure(stats.accuracy_figure(x), stats.accuracy_figure(y))
            ci = stats.paired_bootstrap(*figure, B=bootstrap, seed=seed) if bootstrap else None
            rows.append(
                {
                    "n": n,
                    "presentation": presentation,
                    "pairs": int(x.size),
                    "candidate": float(x.mean()),
                    "baseline": float(y.mean()),
                    "delta": float(x.mean() - y.mean()),
                    "interval": None if ci is None else [float(ci.low), float(ci.high)],
                    "b": mcnemar.b,
                    "c": mcnemar.c,
                    "method": mcnemar.method,
                    "p_value": mcnemar.p_value,
                }
            )
    if test not in ("regression", "non-inferiority"):
        raise ValueError(f"test must be 'regression' or 'non-inferiority', got test={test!r}")
    gate: dict[str, Any] = {
        "baseline": name,
        "test": test,
        "alpha": alpha,
        "margin": margin,
        "comparisons": rows,
    }
    if not rows:  # nothing in common: no verdict to give (the caller says why)
        gate.update(regressions=[], passed=True, power=None)
        return gate
    cells = [(r["b"], r["c"], r["pairs"]) for r in rows]
    if test == "non-inferiority":
        decision = stats.noninferiority_decision(cells, margin=margin, alpha=alpha)
        for row, cell in zip(rows, decision.cells, strict=True):
            row.update(
                method=cell.method,
                p_value=cell.p_value,
                p_holm=cell.p_holm,
                lower=cell.lower,
                alpha_holm=cell.alpha_holm,
                lower_holm=cell.lower_holm,
                noninferior=cell.noninferior,
            )
        gate["unproven"] = [r for r in rows if not r["noninferior"]]
        gate["passed"] = decision.passed
    else:
        for row, adjusted in zip(rows, stats.holm([r["p_value"] for r in rows]), strict=True):
            row["p_holm"] = adjusted
            row["regression"] = row["delta"] < -margin and adjusted < alpha
        gate["regressions"] = [r for r in rows if r["regression"]]
        gate["passed"] = not gate["regressions"]
    gate["power"] = gate_power_summary(
        rows, alpha=alpha, margin=margin, test=cast("GateTest", test)
    )
    return gate


def gate_power_summary(
    rows: list[dict[str, Any]], *, alpha: float, margin: float, test: GateTest
) -> dict[str, Any]:
    """What the gate could have detected, at 80% power and the α Holm leaves each of its m
    cells (α/m, :func:`~pytest_competence.stats.gate_power`); each row gets its
    ``detectable_drop``, ``discordance`` and ``pairs_needed``.

    The regression gate's detectable drop is the true drop its McNemar tests flag with 80%
    power; the non-inferiority gate's the smallest margin a candidate exactly as good as the
    baseline passes with 80% power. ``underpowered`` when the worst cell's exceeds a declared
    margin: a margin of 0 declares none, so it shows the drop and never flags.
    """
    power = stats.gate_power(
        [(r["b"], r["c"], r["pairs"]) for r in rows], alpha=alpha, margin=margin, test=test
    )
    undecidable = []
    for row, cell in zip(rows, power.cells, strict=True):
        row["discordance"] = cell.discordance
        row["detectable_drop"] = cell.detectable_drop
        row["pairs_needed"] = cell.pairs_needed
        if cell.smallest_p >= cell.alpha:
            undecidable.append({"n": row["n"], "presentation": row["presentation"]})
    worst = rows[power.worst]
    return {
        "power": power.power,
        "alpha_per_cell": power.alpha_per_cell,
        "cells": len(rows),
        "detectable_drop": power.detectable_drop,
        "worst": {"n": worst["n"], "presentation": worst["presentation"]},
        "underpowered": margin > 0 and power.underpowered,
        "pairs_needed": power.pairs_needed,
        # Cells whose most telling table is not significant at α/m: a regression gate there
        # can never flag, a non-inferiority gate never pass a candidate no better than the
        # baseline, whatever the answers.
        "undecidable": undecidable,
    }


def gate_passed(gate: Mapping[str, Any]) -> bool:
    """Whether the gate passed; archives written before ``passed`` hold only regressions."""
    if "passed" in gate:
        return bool(gate["passed"])
    return not gate.get("regressions")


def gate_message(gate: Mapping[str, Any]) -> str:
    """Why the gate failed: every regressed cell, or every cell not shown non-inferior."""
    if gate.get("test") == "non-inferiority":
        return _noninferiority_message(gate)
    return regression_message(gate)


def _noninferiority_message(gate: Mapping[str, Any]) -> str:
    lines = [
        f"Non-inferiority against baseline {gate['baseline']!r} not shown (every level × "
        f"presentation needs a one-sided lower bound of candidate − baseline above "
        f"−{gate['margin']:g}, Holm at α = {gate['alpha']:g}):"
    ]
    for r in gate["unproven"]:
        lines.append(
            f"  n={r['n']} accuracy[{r['presentation']}]: {r['candidate']:.3f} vs baseline "
            f"{r['baseline']:.3f} (Δ {r['delta']:+.3f}, b={r['b']} c={r['c']}); lower bound "
            f"{r['lower_holm']:+.3f} at {1 - r['alpha_holm']:.2%}, not above "
            f"{-gate['margin']:+.3f}; {r['method']} p={r['p_value']:.3g}, Holm {r['p_holm']:.3g}"
        )
    return "\n".join(lines)


def underpowered_message(gate: Mapping[str, Any]) -> str:
    """One paragraph: the gate cannot detect its margin, by how much, and the pairs it needs."""
    power = gate["power"]
    worst = power["worst"]
    what = (
        "detects drops of"
        if gate.get("test", "regression") == "regression"
        else "passes a candidate as good as the baseline only for margins of"
    )
    return (
        f"the gate against baseline {gate['baseline']!r} is underpowered: it {what} "
        f"{power['detectable_drop']:.3f} or more at {power['power']:.0%} power (worst at "
        f"n={worst['n']} [{worst['presentation']}], α/{power['cells']} = "
        f"{power['alpha_per_cell']:.3g} per cell), over its margin of {gate['margin']:g}; "
        f"{power['pairs_needed']:,} pairs per level would reach the margin at the discordance "
        f"observed"
    )


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
