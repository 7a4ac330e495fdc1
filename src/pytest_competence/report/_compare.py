"""Model-vs-model comparisons on matched instances: McNemar with Holm, bootstrap deltas.

Every model of a test answers the same latent instances (same design seed), so correctness is
paired instance by instance. The first model given (``--competence-model`` order) is the
reference; each other model is compared with it per presentation, pooled over levels and per
level, with Holm correction across the compared models (CBE paper, arXiv:2610.22894, App. B.2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pytest_competence import stats

__all__ = ["compare_models"]


def _bits(text: str) -> np.ndarray:
    return np.frombuffer(text.encode(), dtype=np.uint8) == ord("1")


def _test(x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    t = stats.mcnemar_paired(x, y)
    return {"b": t.b, "c": t.c, "statistic": t.statistic, "method": t.method, "p_value": t.p_value}


def compare_models(
    results: Sequence[Mapping[str, Any]], order: Sequence[str], *, bootstrap: int = 2000
) -> list[dict[str, Any]]:
    """One comparison block per test that ran under two or more models."""
    rank = {name: i for i, name in enumerate(order)}
    by_test: dict[str, list[Mapping[str, Any]]] = {}
    for r in results:
        if r.get("outcome") != "error":  # an outage is no model to compare
            by_test.setdefault(r["test"], []).append(r)
    blocks = []
    for test, group in sorted(by_test.items()):
        group = sorted(group, key=lambda r: (rank.get(r["model"], len(rank)), r["model"]))
        if len(group) < 2:
            continue
        reference, others = group[0], group[1:]
        ids = reference["instances"]["ids"]
        others = [r for r in others if r["instances"]["ids"] == ids]
        level = np.array(reference["instances"]["level"])
        levels = sorted(set(level.tolist()))
        rows = []
        for name in reference["presentations"]:
            ref = _bits(reference["instances"]["correct"][name])
            for scope in ["all", *levels]:
                mask = np.ones(len(level), bool) if scope == "all" else level == scope
                tests = []
                for r in others:
                    other = _bits(r["instances"]["correct"][name])
                    tests.append({"model": r["model"], **_test(other[mask], ref[mask])})
                for t, p in zip(tests, stats.holm([t["p_value"] for t in tests])):
                    t["p_holm"] = p
                rows.append({"presentation": name, "n": scope, "tests": tests})
        deltas = {}
        for r in others:
            per = {}
            for name in reference["presentations"]:
                x = np.column_stack(
                    [
                        _bits(r["instances"]["correct"][name]),
                        _bits(reference["instances"]["correct"][name]),
                        np.ones(len(level)),
                    ]
                ).astype(float)
                ci = stats.paired_bootstrap(
                    x,
                    lambda s: (s[..., 0] - s[..., 1]) / s[..., 2],
                    strata=level,
                    B=bootstrap,
                    seed=0,
                )
                per[name] = [float(ci.estimate), float(ci.low), float(ci.high)]
            deltas[r["model"]] = per
        blocks.append(
            {
                "test": test,
                "reference": reference["model"],
                "models": [r["model"] for r in others],
                "mcnemar": rows,
                "accuracy_delta": deltas,
                "bootstrap": {"B": bootstrap, "seed": 0, "stratified_by": "n"},
            }
        )
    return blocks
