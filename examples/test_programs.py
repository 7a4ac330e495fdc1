"""Program induction over integer sequences (systematicity paper, arXiv:2609.13948, §4.3): is the rule applied systematically?

Run against any model: ``pytest examples/test_programs.py --competence-model=SPEC``. Each task is
shown as drawn, with its examples and queries reordered, and under digit substitutions; the
condition asks for every variation of every task to be solved.
"""

import pytest

STEPS = [1, 3]  # operations composed in the hidden program


@pytest.mark.competence(family="programs", levels=STEPS, pairs=8, variations=3)
def test_programs(competence):
    """Reordering and substitution, three variations each, one- and three-step programs."""


@pytest.mark.competence(
    family="programs",
    hint=True,
    levels=[2, 4],
    pairs=6,
    variations=3,
    presentations=["original", "substitute"],
)
def test_programs_with_hint(competence):
    """App. C Fig. 13's hint lists the six operations; substitution variations only."""
