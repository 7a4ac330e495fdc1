"""Metrics of the intervention-worlds family: does the answer move when it should, and only then?

Computed from an :class:`~pytest_competence.engine.evaluate.Evaluation` alone — each prompt's params
(``cluster``, ``world``, ``mapping``, ``readout``, ``transition``), its gold letter and the parsed
answer — so an archived evaluation gives the same figures as a live one. Letters are decoded back
through the cell's mapping (``"TFU"``: A = TRUE, B = FALSE, C = UNKNOWN) before any comparison.

A *unit* is one (cluster, mapping, readout): the base, target and sham cells asked under the same
letters and the same readout. With ``b``, ``t``, ``s`` the decoded answers and ``y_b``, ``y_t`` the
oracle labels of base and target (the sham's label is ``y_b``):

* **base accuracy** — share of units with ``b = y_b`` (an invalid answer is wrong);
* **target-follow** — among units with ``b = y_b`` (and all three worlds asked): share with
  ``t = y_t`` (the answer moved, and to the right value);
* **sham-stay** — among the same units: share with ``s`` valid and ``s = b``;
* **selective response** (local, paired) — share of *all* units with ``b = y_b``, ``t = y_t`` and
  ``s = b``: the answer moves under the real edit and only then;
* **full support** — share of clusters whose every selected cell (3 worlds × 6 mappings × 2
  readouts = 36 when all are selected) satisfies that contract;
* **validity** — share of cells (any world) with a valid answer, per readout.

Every rate is weighted equally across the six transition directions (TRUE→FALSE, …): the mean of
the per-direction rates over the directions with any support, so no direction dominates by
count. Headline rates pool both readouts; ``by_readout``, ``by_transition`` and ``by_n`` (the
level: the base theory's rule count) repeat them on those units only. Intervals are
percentile intervals of a cluster bootstrap: whole clusters resampled with replacement, all their
cells together (``B`` resamples, seeded).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pytest_competence.protocol import Evaluated

__all__ = ["RATES", "intervention_entries", "intervention_summary", "unit_table"]

#: The headline rates, in report order.
RATES = ("base_accuracy", "target_follow", "sham_stay", "selective_response", "full_support")
_VALUES = {"T": "TRUE", "F": "FALSE", "U": "UNKNOWN"}
_LETTERS = ("A", "B", "C")


def _decode(letter: str | None, mapping: str) -> str | None:
    if letter not in _LETTERS:
        return None
    return _VALUES[mapping[_LETTERS.index(letter)]]


def unit_table(evaluation: Evaluated) -> dict[str, Any]:
    """Per-unit arrays (``cluster``, ``direction``, ``readout`` indices; ``base_ok``, ``target_ok``,
    ``sham_stay``, ``complete``), per-cell validity by readout, and the names behind the indices."""
    directions: list[str] = []
    readouts: list[str] = []
    rows: list[tuple[int, int, int, bool, bool, bool, bool]] = []
    cells_valid: dict[str, list[bool]] = {}
    cluster_direction: list[int] = []
    cluster_level: list[int] = []
    for c, (_, _, row) in enumerate(evaluation.rows()):  # regenerated chunk by chunk
        cluster_level.append(int(row[0].prompt.params["n"]) if row else 0)
        units: dict[tuple[str, str], dict[str, tuple[str | None, str | None]]] = {}
        direction = row[0].prompt.params["transition"] if row else ""
        if direction not in directions:
            directions.append(direction)
        cluster_direction.append(directions.index(direction))
        for o in row:
            p = o.prompt.params
            readout = p["readout"]
            if readout not in readouts:
                readouts.append(readout)
            cells_valid.setdefault(readout, []).append(o.valid)
            units.setdefault((p["mapping"], readout), {})[p["world"]] = (
                _decode(o.parsed.answer, p["mapping"]),
                _decode(o.prompt.gold, p["mapping"]),
            )
        for (_, readout), worlds in units.items():
            b, yb = worlds.get("base", (None, ""))
            t, yt = worlds.get("target", (None, ""))
            s, _ = worlds.get("sham", (None, ""))
            complete = len(worlds) == 3
            rows.append(
                (
                    c,
                    directions.index(direction),
                    readouts.index(readout),
                    "base" in worlds and b == yb,
                    t is not None and t == yt,
                    s is not None and s == b,
                    complete,
                )
            )
    arr = np.array(rows, dtype=np.int64).reshape(-1, 7)
    return {
        "cluster": arr[:, 0],
        "direction": arr[:, 1],
        "readout": arr[:, 2],
        "base_ok": arr[:, 3].astype(bool),
        "target_ok": arr[:, 4].astype(bool),
        "sham_stay": arr[:, 5].astype(bool),
        "complete": arr[:, 6].astype(bool),
        "cluster_direction": np.array(cluster_direction, dtype=np.int64),
        "cluster_level": np.array(cluster_level, dtype=np.int64),
        "directions": directions,
        "readouts": readouts,
        "validity": {r: float(np.mean(v)) for r, v in cells_valid.items()},
        "clusters": len(evaluation),
    }


def _ratios(
    weights: np.ndarray, num: np.ndarray, den: np.ndarray, group: np.ndarray, groups: int
) -> np.ndarray:
    """Equal-weighted mean over groups of Σw·num / Σw·den, per row of ``weights`` (NaN: none)."""
    top = np.zeros((weights.shape[0], groups))
    bottom = np.zeros((weights.shape[0], groups))
    for g in range(groups):
        sel = group == g
        top[:, g] = weights[:, sel] @ (num[sel] & den[sel]).astype(float)
        bottom[:, g] = weights[:, sel] @ den[sel].astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        per = np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1), np.nan)
    counted = (bottom > 0).sum(axis=1)
    total = np.nansum(per, axis=1)
    return np.where(counted > 0, total / np.maximum(counted, 1), np.nan)


def _rates(
    t: Mapping[str, Any], cluster_weights: np.ndarray, units: np.ndarray
) -> dict[str, np.ndarray]:
    """Every rate of :data:`RATES` for each row of ``cluster_weights`` (clusters' multiplicities),
    on the units selected by the boolean mask ``units``."""
    groups = len(t["directions"])
    w = cluster_weights[:, t["cluster"][units]]
    d = t["direction"][units]
    base, target, sham = t["base_ok"][units], t["target_ok"][units], t["sham_stay"][units]
    complete = t["complete"][units]
    everything = np.ones_like(base)
    contract = base & target & sham & complete
    # Full support: a cluster holds when every unit it has holds (and it has all three worlds).
    per_cluster = np.ones(t["clusters"], dtype=bool)
    np.logical_and.at(per_cluster, t["cluster"][units], contract)
    has_units = np.zeros(t["clusters"], dtype=bool)
    has_units[t["cluster"][units]] = True
    return {
        "base_accuracy": _ratios(w, base, everything, d, groups),
        "target_follow": _ratios(w, target, base & complete, d, groups),
        "sham_stay": _ratios(w, sham, base & complete, d, groups),
        "selective_response": _ratios(w, contract, complete, d, groups),
        "full_support": _ratios(
            cluster_weights,
            per_cluster,
            has_units & _all_complete(t, units),
            t["cluster_direction"],
            groups,
        ),
    }


def _all_complete(t: Mapping[str, Any], units: np.ndarray) -> np.ndarray:
    out = np.zeros(t["clusters"], dtype=bool)
    out[t["cluster"][units]] = True
    np.logical_and.at(out, t["cluster"][units], t["complete"][units])
    return out


def _f(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def intervention_summary(
    evaluation: Evaluated, *, bootstrap: int = 2000, seed: int = 0
) -> dict[str, Any]:
    """The intervention metrics (see the module docstring), JSON-able, with cluster-bootstrap
    intervals ``[estimate, low, high]`` (95% percentile) for the headline rates."""
    t = unit_table(evaluation)
    if not t["clusters"] or not len(t["cluster"]):
        return {"clusters": 0}
    one = np.ones((1, t["clusters"]))
    every = np.ones(len(t["cluster"]), dtype=bool)
    headline = {k: _f(v[0]) for k, v in _rates(t, one, every).items()}
    by_readout = {}
    for r, name in enumerate(t["readouts"]):
        rates = {k: _f(v[0]) for k, v in _rates(t, one, t["readout"] == r).items()}
        by_readout[name] = {**rates, "validity": t["validity"][name]}
    by_transition = {}
    for g, name in enumerate(t["directions"]):
        transition_rates = _rates(t, one, t["direction"] == g)
        by_transition[name] = {k: _f(v[0]) for k, v in transition_rates.items()}
    level_of_unit = t["cluster_level"][t["cluster"]]
    by_n = {}
    for n in dict.fromkeys(t["cluster_level"].tolist()):
        by_n[str(n)] = {k: _f(v[0]) for k, v in _rates(t, one, level_of_unit == n).items()}
    out: dict[str, Any] = {
        "clusters": t["clusters"],
        "units": int(len(t["cluster"])),
        "rates": headline,
        "validity": t["validity"],
        "by_readout": by_readout,
        "by_transition": by_transition,
        "by_n": by_n,
    }
    if bootstrap:
        rng = np.random.default_rng([seed, t["clusters"]])
        draws = rng.integers(0, t["clusters"], size=(bootstrap, t["clusters"]))
        weights = np.zeros((bootstrap, t["clusters"]))
        np.add.at(weights, (np.arange(bootstrap)[:, None], draws), 1.0)
        resampled = _rates(t, weights, every)
        out["bootstrap"] = {"B": bootstrap, "seed": seed, "resampled": "clusters"}
        for k in RATES:
            low, high = (
                np.nanpercentile(resampled[k], [2.5, 97.5])
                if not np.isnan(resampled[k]).all()
                else (np.nan, np.nan)
            )
            out["bootstrap"][k] = [headline[k], _f(low), _f(high)]
    return out


def intervention_entries(
    evaluation: Evaluated, *, bootstrap: int = 2000, seed: int = 0
) -> dict[str, Any]:
    """The ``analysis.FAMILY_ANALYSES`` entry: ``{"intervention": intervention_summary(...)}``."""
    return {"intervention": intervention_summary(evaluation, bootstrap=bootstrap, seed=seed)}
