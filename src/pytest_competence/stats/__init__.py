"""Statistics for competence profiles: pure functions over counts and numpy arrays.

Intervals and tests follow seeds/000 §3.2–3.3, App. A, App. B.2 and App. H; systematicity,
majority over attempts and the variance decomposition seeds/002 §3.5–3.6 and App. A; family
consistency seeds/004 §2; the release gate's power, non-inferiority and checkpoint series Miller,
"Adding Error Bars to Evals" (arXiv:2411.00640). Only numpy and scipy are needed, and nothing
here imports pytest.
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
from pytest_competence.stats.bounds import failure_rate_upper_bound, wilson_lower_bound
from pytest_competence.stats.detectable import (
    CellPower,
    GatePower,
    detectable_drop,
    gate_power,
    noninferiority_power,
    pairs_needed,
    regression_power,
)
from pytest_competence.stats.intervals import (
    check_count,
    check_open_unit,
    check_probability,
    two_sided_z,
    wilson_interval,
)
from pytest_competence.stats.noninferiority import (
    EXACT_UP_TO_PAIRS,
    NonInferiority,
    NonInferiorityCell,
    noninferiority_decision,
    noninferiority_p_value,
    paired_difference_interval,
    paired_lower_bound,
    tango_statistic,
)
from pytest_competence.stats.paired import (
    EXACT_UP_TO_DISCORDANT,
    McNemar,
    holm,
    mcnemar,
    mcnemar_paired,
)
from pytest_competence.stats.planner import half_width, minimum_detectable_difference
from pytest_competence.stats.trend import Checkpoint, TrendRow, checkpoint_series

__all__ = [
    "CHUNK",
    "COIN_FLIP_BELOW",
    "EXACT_UP_TO_PAIRS",
    "EXACT_UP_TO_DISCORDANT",
    "ROWS_PER_DISTINCT_ROW",
    "AdditiveFigure",
    "BootstrapInterval",
    "BoundaryReproducibility",
    "CellPower",
    "Checkpoint",
    "GatePower",
    "McNemar",
    "NonInferiority",
    "NonInferiorityCell",
    "TrendRow",
    "Statistic",
    "VarianceDecomposition",
    "accuracy_figure",
    "bootstrap_sums",
    "check_count",
    "check_open_unit",
    "check_probability",
    "boundary_reproducibility",
    "chance_agreement",
    "checkpoint_series",
    "crossing_level",
    "detectable_drop",
    "difference_figure",
    "failure_rate_upper_bound",
    "family_consistency",
    "gate_power",
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
    "noninferiority_decision",
    "noninferiority_p_value",
    "noninferiority_power",
    "paired_bootstrap",
    "paired_difference_interval",
    "paired_lower_bound",
    "pairs_needed",
    "per_transformation_consistency",
    "regression_power",
    "repeat_agreement",
    "robust_correct_figure",
    "systematicity",
    "tango_statistic",
    "two_sided_z",
    "variance_decomposition",
    "wilson_interval",
    "wilson_lower_bound",
]
