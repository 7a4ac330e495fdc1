"""Ordering on left/right: the same latent instances as front/behind, another vocabulary."""

import pytest


@pytest.mark.competence(levels=[4, 8, 16, 32, 64, 128], pairs=100, vocabulary="left_right")
def test_left_right(competence):
    """C_0 = C_1 = 1 with 'is to the left of' / 'is to the right of'."""


@pytest.mark.competence(
    levels=[4, 8, 16, 32, 64, 128],
    pairs=100,
    vocabulary="left_right",
    protocol="L",
    distractors=0.5,
)
def test_left_right_with_distractors(competence):
    """Protocol L rewrites, plus distractor premises over disjoint entities (ρ = 0.5)."""
