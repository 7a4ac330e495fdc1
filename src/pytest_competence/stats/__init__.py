"""Statistics for competence profiles: pure functions over counts and numpy arrays.

Intervals and tests follow seeds/000 §3.2–3.3, App. A, App. B.2 and App. H; systematicity,
majority over attempts and the variance decomposition seeds/002 §3.5–3.6 and App. A; family
consistency seeds/004 §2. Only numpy and scipy are needed, and nothing here imports pytest.
"""

from __future__ import annotations

from pytest_competence.stats.agreement import (
    VarianceDecomposition,
    chance_agreement,
    family_consistency,
    kappa,
    kappa_bar,
    majority_vote,
    per_transformation_consistency,
    repeat_agreement,
    systematicity,
    variance_decomposition,
)
from pytest_competence.stats.bootstrap import (
    CHUNK,
    ROWS_PER_DISTINCT_ROW,
    AdditiveFigure,
    BootstrapInterval,
    Statistic,
    accuracy_figure,
    bootstrap_sums,
    difference_figure,
    invariance_figure,
    kappa_bar_figure,
    paired_bootstrap,
    robust_correct_figure,
)
from pytest_competence.stats.boundary import (
    COIN_FLIP_BELOW,
    BoundaryReproducibility,
    boundary_reproducibility,
    crossing_level,
)
from pytest_competence.stats.intervals import (
    check_count,
    check_open_unit,
    check_probability,
    two_sided_z,
    wilson_interval,
)
from pytest_competence.stats.paired import (
    EXACT_UP_TO_DISCORDANT,
    McNemar,
    holm,
    mcnemar,
    mcnemar_paired,
)
from pytest_competence.stats.planner import half_width, minimum_detectable_difference

__all__ = [
    "CHUNK",
    "COIN_FLIP_BELOW",
    "EXACT_UP_TO_DISCORDANT",
    "ROWS_PER_DISTINCT_ROW",
    "AdditiveFigure",
    "BootstrapInterval",
    "BoundaryReproducibility",
    "McNemar",
    "Statistic",
    "VarianceDecomposition",
    "accuracy_figure",
    "bootstrap_sums",
    "check_count",
    "check_open_unit",
    "check_probability",
    "boundary_reproducibility",
    "chance_agreement",
    "crossing_level",
    "difference_figure",
    "family_consistency",
    "half_width",
    "holm",
    "invariance_figure",
    "kappa",
    "kappa_bar",
    "kappa_bar_figure",
    "majority_vote",
    "mcnemar",
    "mcnemar_paired",
    "minimum_detectable_difference",
    "paired_bootstrap",
    "per_transformation_consistency",
    "repeat_agreement",
    "robust_correct_figure",
    "systematicity",
    "two_sided_z",
    "variance_decomposition",
    "wilson_interval",
]
