"""Ordering on front/behind, the paper's base study (CBE paper, arXiv:2610.22894, §4.1, §5.1).

Run against any model: ``pytest examples/test_ordering_front_behind.py --competence-model=SPEC``.
"""

import pytest

BASE_GRID = [4, 8, 16, 32, 64, 128, 256, 512, 1024]


@pytest.mark.competence(levels=BASE_GRID, pairs=200, vocabulary="front_behind")
def test_base_grid(competence):
    """C_0 = C_1 = 1 on every endpoint query, original and equivalent, n = 4 … 1024."""


@pytest.mark.competence(levels=[8, 16, 32, 64], pairs=100, vocabulary="front_behind", distance=2)
def test_interior_queries(competence):
    """Queries between interior entities two links apart: the source/sink shortcut cannot answer."""


@pytest.mark.competence(
    levels=[4, 16, 64],
    pairs=100,
    vocabulary="front_behind",
    presentations=["original", "reshuffle", "rewrite", "equivalent", "negated"],
)
def test_presentation_components(competence):
    """Reshuffling and rewriting separately, together, and as negations (CBE paper, arXiv:2610.22894, App. E.2)."""


@pytest.mark.competence(
    levels=BASE_GRID,
    pairs=200,
    vocabulary="front_behind",
    require=["robust_correct >= 0.95 for n <= 128", "coverage >= 0.99"],
)
def test_release_gate(competence):
    """A gate rather than the strict condition: floors on the profile for the sizes we ship."""
