"""How reproducible is the level at which invariance first falls below a threshold?

CBE paper, arXiv:2610.22894, App. A, "Why the boundary is not reported as a threshold crossing": let n̂*(τ) be the
smallest n at which ι̂_n falls below τ. "A parametric bootstrap (binomial resampling of each ι̂_n
at the observed sample size, B = 4,000)" gives the probability of reproducing the observed
crossing in a fresh dataset; it was 0.39–0.64 for curves that sit near τ at the crossing and
0.87–1.00 for curves that cross steeply. "A curve that happens to sit on the threshold makes the
crossing a coin flip at any sample size", which is why profiles, not crossings, are reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from pytest_competence.stats.intervals import check_count, check_probability

__all__ = [
    "COIN_FLIP_BELOW",
    "BoundaryReproducibility",
    "boundary_reproducibility",
    "crossing_level",
]

#: A crossing reproduced in fewer resamples than this is called a coin flip. CBE paper, arXiv:2610.22894, App. A
#: reports 0.39–0.64 for curves sitting on τ and 0.87–1.00 for steep crossings; 0.75 separates
#: the two groups with room on either side (the paper itself names no cut-off).
COIN_FLIP_BELOW = 0.75


def crossing_level(
    levels: Sequence[int], invariance: Sequence[float | None], tau: float
) -> int | None:
    """n̂*(τ): the smallest level whose invariance is below ``tau``; ``None`` if none is.

    Levels whose invariance is ``None`` (no jointly parsed pair) are skipped (CBE paper, arXiv:2610.22894, App. A).

    Raises:
        ValueError: ``levels`` and ``invariance`` differ in length.
    """
    if len(levels) != len(invariance):
        raise ValueError(
            f"levels and invariance must have one entry per level, got lengths {len(levels)} "
            f"and {len(invariance)}"
        )
    below = [
        n for n, iota in zip(levels, invariance, strict=True) if iota is not None and iota < tau
    ]
    return int(min(below)) if below else None


@dataclass(frozen=True)
class BoundaryReproducibility:
    """The observed crossing and how often binomial resamples reproduce it (CBE paper, arXiv:2610.22894, App. A)."""

    tau: float
    observed_level: int | None  # n̂*(τ); None: invariance never fell below τ
    reproduction_probability: float  # share of resamples whose crossing level equals observed
    crossing_distribution: dict[int | None, float]  # resampled crossing level → share
    pairs: tuple[int, ...]  # pairs per level in the resampled (fresh) datasets
    B: int
    coin_flip: bool  # reproduction_probability < COIN_FLIP_BELOW

    @property
    def summary(self) -> str:
        """One plain-language sentence for a report."""
        if not self.pairs:
            return "No level has jointly parsed pairs, so there is no invariance curve to cross τ."
        where = "never" if self.observed_level is None else f"first at n = {self.observed_level}"
        verdict = (
            "a coin flip: describe the profile's shape, not the crossing"
            if self.coin_flip
            else "stable under resampling"
        )
        return (
            f"Invariance falls below τ = {self.tau:g} {where}; a fresh dataset reproduces this "
            f"in {self.reproduction_probability:.0%} of {self.B:,} binomial resamples — {verdict}."
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form (crossing levels as keys become strings, ``None`` as ``"none"``)."""
        return {
            "tau": self.tau,
            "observed_level": self.observed_level,
            "reproduction_probability": self.reproduction_probability,
            "crossing_distribution": {
                "none" if level is None else str(level): share
                for level, share in self.crossing_distribution.items()
            },
            "pairs": list(self.pairs),
            "B": self.B,
            "coin_flip": self.coin_flip,
            "summary": self.summary,
        }


def boundary_reproducibility(
    levels: Sequence[int],
    invariance: Sequence[float | None],
    pairs: Sequence[int],
    *,
    tau: float = 0.85,
    fresh_pairs: int | Sequence[int] | None = None,
    B: int = 4000,
    seed: int = 0,
) -> BoundaryReproducibility:
    """Parametric bootstrap of the crossing level n̂*(τ) (CBE paper, arXiv:2610.22894, App. A).

    Each replicate draws ι*_n = Bin(m_n, ι̂_n) / m_n independently per level, with m_n the
    observed pairs per level (``pairs``) or, to ask about a fresh dataset of another size (the
    paper's "400–3,200 pairs per n"), ``fresh_pairs``. The reproduction probability is the share
    of replicates whose smallest level with ι*_n < τ equals the observed n̂*(τ) — including "no
    crossing" when none was observed. Levels without jointly parsed pairs (``pairs`` 0,
    invariance ``None``) carry no estimate and are left out. Seeded and deterministic.

    Raises:
        ValueError: lengths differ, levels are not strictly increasing, or a value is out of range.
    """
    if not len(levels) == len(invariance) == len(pairs):
        raise ValueError(
            f"levels, invariance and pairs must have one entry per level, got lengths "
            f"{len(levels)}, {len(invariance)} and {len(pairs)}"
        )
    if any(later <= earlier for earlier, later in pairwise(levels)):
        raise ValueError(f"levels must be strictly increasing, got levels={list(levels)}")
    tau = check_probability(tau, "tau")
    B = check_count(B, "B")
    if B == 0:
        raise ValueError("B must be at least 1, got B=0; the paper uses B=4000")
    seed = check_count(seed, "seed")
    counts = [check_count(m, f"pairs[{i}]") for i, m in enumerate(pairs)]
    if fresh_pairs is None:
        fresh = counts
    elif isinstance(fresh_pairs, Sequence) or np.ndim(fresh_pairs) == 1:
        per_level = list(fresh_pairs)  # type: ignore[arg-type]  # a Sequence or a 1-D array
        if len(per_level) != len(levels):
            raise ValueError(
                f"fresh_pairs must be one int or one per level ({len(levels)}), got "
                f"{len(per_level)} values"
            )
        fresh = [check_count(m, f"fresh_pairs[{i}]") for i, m in enumerate(per_level)]
    else:
        fresh = [check_count(fresh_pairs, "fresh_pairs")] * len(levels)
    kept = [i for i, m in enumerate(counts) if m > 0]
    for i in kept:
        if invariance[i] is None:
            raise ValueError(f"invariance[{i}] is None but pairs[{i}]={counts[i]}; give ι̂ there")
        check_probability(invariance[i], f"invariance[{i}]")
        if fresh[i] == 0:
            raise ValueError(f"fresh_pairs for level {levels[i]} must be at least 1, got 0")
    kept_levels = [int(levels[i]) for i in kept]
    if not kept:  # nothing parsed anywhere: there is no curve to cross τ
        return BoundaryReproducibility(tau, None, float("nan"), {}, (), B, coin_flip=False)
    observed = crossing_level(kept_levels, [invariance[i] for i in kept], tau)
    sizes = np.array([fresh[i] for i in kept], dtype=np.int64)
    rates = np.array([invariance[i] for i in kept], dtype=float)
    rng = np.random.default_rng(seed)
    below = rng.binomial(sizes, rates, size=(B, len(kept))) / np.maximum(sizes, 1) < tau
    first = np.where(below.any(axis=1), below.argmax(axis=1), -1)
    shares = np.bincount(first + 1, minlength=len(kept) + 1) / B  # slot 0: no crossing
    distribution: dict[int | None, float] = {
        (None if slot == 0 else kept_levels[slot - 1]): float(share)
        for slot, share in enumerate(shares)
        if share > 0
    }
    probability = distribution.get(observed, 0.0)
    return BoundaryReproducibility(
        tau=tau,
        observed_level=observed,
        reproduction_probability=probability,
        crossing_distribution=distribution,
        pairs=tuple(int(m) for m in sizes),
        B=B,
        coin_flip=probability < COIN_FLIP_BELOW,
    )
