"""Symbolic Raven matrices (systematicity paper, arXiv:2609.13948, §4.2): one hidden rule per panel feature, modulo 10.

Run against any model: ``pytest examples/test_raven.py --competence-model=SPEC``. The level is
``F``, the number of features per panel: 2 is the paper's default, 3 its harder setting. Every
task is shown as drawn, with its two support rows reordered, and with column-specific feature
permutations (feature rebinding), ``K`` variations of each; a task counts as solved only when
the whole missing panel is right.
"""

import pytest


@pytest.mark.competence("raven", levels=[2, 3], pairs=8, variations=5)
def test_feature_rebinding(competence):
    """Original, reordered support rows and column-permuted features at F = 2 and F = 3."""


@pytest.mark.competence(
    "raven", levels=[1, 2, 3, 4], pairs=6, variations=3, presentations=["original", "permute"]
)
def test_features_scale(competence):
    """F = 1..4, the original against three column-permuted variations each."""
