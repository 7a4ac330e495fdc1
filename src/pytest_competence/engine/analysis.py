"""From an evaluation to every figure the reports show: one JSON-able dict per test × model.

Everything here is recomputed from observations alone, so a live run, an ``-n auto`` run and
``competence report RESULTS.json`` produce the same numbers. Definitions: CBE paper, arXiv:2610.22894, §3.2–3.3,
App. A and App. B.2; with more than two presentations the paired figures (κ, McNemar) compare the
original (the first presentation) with each other one.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from pytest_competence import stats
from pytest_competence.engine.evaluation import Evaluation
from pytest_competence.engine.profile import LevelProfile, profile
from pytest_competence.engine.result import Analysis
from pytest_competence.registry import FAMILIES

__all__ = [
    "BOUNDARY_TAU",
    "FAMILY_ANALYSES",
    "SCHEMA",
    "analyze",
    "decomposition",
    "family_metrics",
    "instance_table",
]

#: /2: the records moved out of the document into a records file it points to (/1 embedded them).
SCHEMA = "pytest-competence/results/2"
BOUNDARY_TAU = 0.85  # the invariance threshold CBE paper, arXiv:2610.22894, App. A examines

#: Family name → an extra analysis of that family's evaluations, in place of the family's own
#: ``metrics`` (``Family.metrics``). Each returns summary entries (e.g.
#: ``{"systematicity": {...}}``) that :func:`analyze` adds to ``summary``; the name is
#: ``evaluation.family.name``, which an archived family (records.ArchivedFamily) also carries.
FAMILY_ANALYSES: dict[str, Callable[..., dict[str, Any]]] = {}


def family_metrics(name: str) -> Callable[..., dict[str, Any]]:
    """The extra analysis of the family called ``name``: :data:`FAMILY_ANALYSES`'s entry, else
    the family's ``metrics`` (none for a family that declares none)."""
    return FAMILY_ANALYSES.get(name) or FAMILIES.hooks(name).metrics


def _f(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and np.isnan(x)) else float(x)


def _bits(flags: np.ndarray) -> str:
    """A boolean vector as a compact string of 0/1, one character per instance."""
    # As bytes: summing an object array of characters copies the growing string every step.
    return np.where(flags, ord("1"), ord("0")).astype(np.uint8).tobytes().decode("ascii")


def instance_table(evaluation: Evaluation) -> dict[str, np.ndarray]:
    """Per-instance arrays: ``correct``, ``valid``, ``yes`` (N × P) and ``level`` (N,)."""
    return {
        "correct": evaluation.array("correct"),
        "valid": evaluation.array("valid"),
        "yes": evaluation.array("answer") == evaluation.answer_code("yes"),
        "level": evaluation.level,
        # κ's chance term q² + (1 − q)² is defined for yes/no answers only (CBE paper, arXiv:2610.22894, §3.2).
        "binary": np.array(evaluation.binary),
    }


def _pair(t: Mapping[str, np.ndarray], rows: np.ndarray, a: int, b: int) -> dict[str, Any]:
    """Paired figures of presentations ``a`` and ``b`` on the instances ``rows``."""
    valid = t["valid"][rows][:, [a, b]].all(axis=1)
    correct = t["correct"][rows]
    ca, cb = correct[:, a], correct[:, b]
    joint = int(valid.sum())
    agree = int((valid & (ca == cb)).sum())
    yes = t["yes"][rows][:, [a, b]][valid]
    yes_rate = float(yes.mean()) if joint else None
    invariance = agree / joint if joint else None
    test = stats.mcnemar_paired(ca, cb)  # all prompts, invalid answers counted wrong (App. B.2)
    return {
        "jointly_parsed": joint,
        "invariance": invariance,
        "strict_invariance": agree / len(rows) if len(rows) else None,
        "yes_rate": yes_rate,
        "kappa": None
        if invariance is None or yes_rate is None or not t["binary"]
        else stats.kappa(invariance, yes_rate),
        "consistency": float((ca & cb).mean()) if len(rows) else None,
        "mcnemar": {
            "b": test.b,
            "c": test.c,
            "statistic": test.statistic,
            "method": test.method,
            "p_value": test.p_value,
        },
    }


def _level(p: LevelProfile, t: Mapping[str, np.ndarray], presentations: Sequence[str]) -> dict:
    rows = np.flatnonzero(t["level"] == p.level)
    correct = t["correct"][rows]
    joint_rows = t["valid"][rows].all(axis=1)
    robust = int((joint_rows & correct.all(axis=1)).sum())
    out = p.as_dict()
    out["robust_correct_ci"] = list(stats.wilson_interval(robust, p.joint)) if p.joint else None
    out["accuracy_ci_by_presentation"] = {
        name: list(stats.wilson_interval(int(correct[:, k].sum()), len(rows)))
        for k, name in enumerate(presentations)
    }
    out["mean_accuracy_joint"] = (  # eq. (2): R + U/2 on the jointly parsed support
        None
        if p.robust_correct is None or p.presentation_dependent is None
        else p.robust_correct + p.presentation_dependent / 2
    )
    out["strict_invariance"] = int(
        (joint_rows & (correct.all(axis=1) | ~correct.any(axis=1))).sum()
    ) / len(rows)
    out["any_correct"] = float(correct.any(axis=1).mean())
    out["fraction_correct"] = float(correct.mean())
    pairs = {presentations[k]: _pair(t, rows, 0, k) for k in range(1, len(presentations))}
    if pairs:
        p_holm = stats.holm([pr["mcnemar"]["p_value"] for pr in pairs.values()])
        for pr, adjusted in zip(pairs.values(), p_holm):
            pr["mcnemar"]["p_holm"] = adjusted
        first = next(iter(pairs.values()))
        out["kappa"] = first["kappa"]
        out["yes_rate"] = first["yes_rate"]
    out["pairs"] = pairs
    return out


def _bootstrap(
    t: Mapping[str, np.ndarray], presentations: Sequence[str], B: int, seed: int
) -> dict[str, list[float | None]]:
    """Paired bootstrap intervals over matched instances, stratified by level (App. B.2)."""
    correct, valid, level = t["correct"], t["valid"], t["level"]
    figures = {"robust_correct": stats.robust_correct_figure(correct, valid)}
    for k, name in enumerate(presentations[1:], start=1):
        figures[f"accuracy_difference[{presentations[0]}-{name}]"] = stats.difference_figure(
            stats.accuracy_figure(correct[:, 0]), stats.accuracy_figure(correct[:, k])
        )
    if len(presentations) > 1:  # ι and κ̄ of the first pair, as in the level table
        figures["invariance"] = stats.invariance_figure(correct[:, :2], valid[:, :2])
    if len(presentations) > 1 and t["binary"]:
        figures["kappa_bar"] = stats.kappa_bar_figure(t["yes"][:, :2], valid[:, :2], level)
    out = {}
    for name, figure in figures.items():
        ci = stats.paired_bootstrap(*figure, strata=level, B=B, seed=seed)
        out[name] = [_f(ci.estimate), _f(ci.low), _f(ci.high)]
    return out


def decomposition(evaluation: Evaluation, bootstrap: int, seed: int) -> dict[str, Any]:
    """The output decomposition of the evaluation's own candidate scores (CBE paper,
    arXiv:2610.22894, App. E.3, Table 11): δ, s, accuracy and yes-rate per presentation ×
    level, bootstrapped by instance (:func:`pytest_competence.probe.decompose_evaluation`)."""
    from pytest_competence.probe import decompose_evaluation

    cells = decompose_evaluation(evaluation, B=bootstrap, seed=seed) or []
    scores = evaluation.scores
    scored = 0 if scores is None else int(np.isfinite(scores).all(axis=-1).sum())
    return {
        "source": "scores",
        "answers": list(evaluation.score_answers),
        "prompts": evaluation.prompt_total,
        "scored": scored,
        "B": bootstrap,
        "seed": seed,
        "cells": [c.to_dict() for c in cells],
    }


def analyze(
    evaluation: Evaluation,
    *,
    bootstrap: int = 2000,
    seed: int = 0,
    profiles: Sequence[LevelProfile] | None = None,
) -> Analysis:
    """Every figure of one evaluation, JSON-able: levels, summary, intervals, tests, instances.

    ``profiles`` are the evaluation's, when the caller has them already (else computed).
    """
    presentations = list(evaluation.presentations)
    t = instance_table(evaluation)
    profiles = profile(evaluation) if profiles is None else profiles
    levels = [_level(p, t, presentations) for p in profiles]
    kappas = [lv.get("kappa") for lv in levels]
    summary: dict[str, Any] = {
        "instances": len(evaluation),
        "kappa_bar": stats.kappa_bar(kappas),
        "accuracy_by_presentation": {
            name: float(t["correct"][:, k].mean()) for k, name in enumerate(presentations)
        },
        "all_correct": float(t["correct"].all(axis=1).mean()) if len(t["level"]) else None,
        "attempts": evaluation.first_attempts or 1,
    }
    if len(presentations) > 1 and len(t["level"]):
        # CRTBench paper, §2: family consistency (base and every reformulation right) and, per
        # transformation, base and that reformulation right.
        summary["family_consistency"] = stats.family_consistency(
            t["correct"][:, 0], t["correct"][:, 1:]
        )
        summary["consistency_by_presentation"] = dict(
            zip(
                presentations[1:],
                stats.per_transformation_consistency(
                    t["correct"][:, 0], t["correct"][:, 1:]
                ).tolist(),
            )
        )
    if len(presentations) > 1 and len(t["level"]):
        summary["mcnemar"] = {
            name: _pair(t, np.arange(len(t["level"])), 0, k)["mcnemar"]
            for k, name in enumerate(presentations[1:], start=1)
        }
        if "repeat" in presentations:
            k = presentations.index("repeat")
            first, again = evaluation.answers(0), evaluation.answers(k)
            repeat = stats.repeat_agreement(first, again)  # App. H
            summary["repeat_agreement"] = repeat
            others = [n for n in presentations[1:] if n != "repeat"]
            if others and repeat is not None:
                pooled = _pair(t, np.arange(len(t["level"])), 0, presentations.index(others[0]))
                if pooled["invariance"] is not None:
                    summary["invariance_minus_repeat"] = pooled["invariance"] - repeat
        inv = [lv["pairs"][presentations[1]]["invariance"] for lv in levels]
        pairs = [lv["pairs"][presentations[1]]["jointly_parsed"] for lv in levels]
        if all(v is not None for v in inv):
            summary["boundary"] = stats.boundary_reproducibility(
                [lv["n"] for lv in levels], inv, pairs, tau=BOUNDARY_TAU, seed=seed
            ).as_dict()
    if bootstrap and len(t["level"]):
        summary["bootstrap"] = {
            "B": bootstrap,
            "seed": seed,
            "stratified_by": "n",
            **_bootstrap(t, presentations, bootstrap, seed),
        }
    if evaluation.scores is not None and len(t["level"]):
        summary["decomposition"] = decomposition(evaluation, bootstrap, seed)
    extra = family_metrics(getattr(evaluation.family, "name", ""))
    if len(t["level"]):
        # An analysis that declares bootstrap= / seed= resamples as the rest of the summary does.
        wanted = inspect.signature(extra).parameters
        options = {k: v for k, v in (("bootstrap", bootstrap), ("seed", seed)) if k in wanted}
        summary.update(extra(evaluation, **options))
    return {
        "model": evaluation.model,
        "family": repr(evaluation.family),
        "family_name": getattr(evaluation.family, "name", ""),
        "level_name": getattr(evaluation.family, "level_name", "n"),
        "presentations": presentations,
        "levels": levels,
        "summary": summary,
        "instances": {
            "ids": list(evaluation.ids),
            "level": t["level"].tolist(),
            "correct": {n: _bits(t["correct"][:, k]) for k, n in enumerate(presentations)},
            "valid": {n: _bits(t["valid"][:, k]) for k, n in enumerate(presentations)},
        },
    }
