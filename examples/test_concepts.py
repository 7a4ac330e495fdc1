"""Boolean concept learning (systematicity paper, arXiv:2609.13948, §4.4): is a new object *wudsy*?

Run against any model: ``pytest examples/test_concepts.py --competence-model=SPEC``. The level
is the length of the hidden and/or rule (its number of feature tests). Each task is shown as
drawn, with its examples and new objects reordered, and with its features rebound (a color rule
may become a shape rule, values renamed); a task counts as solved only when every new object is
classified right.
"""

import pytest


@pytest.mark.competence("concepts", levels=[1, 3], pairs=8, variations=5)
def test_feature_rebinding(competence):
    """Original, reordered and rebound tasks for one- and three-test rules, five variations each."""


@pytest.mark.competence(
    "concepts",
    levels=[2, 4],
    pairs=6,
    variations=3,
    queries=4,
    presentations=["original", "rebind"],
)
def test_longer_rules_rebound(competence):
    """Two- and four-test rules, four new objects per task, rebinding variations only."""
