"""What a release gate can detect: the same margin, gated on 8 pairs per level and on 600.

Run it against a baseline (two equally good noisy solvers here; in CI, your released checkpoint):

    pytest examples/ci/underpowered_gate.py '--competence-model=ref:noisy?p=0.05&seed=2' \
        '--competence-baseline=ref:noisy?p=0.05&seed=1'

Both tests pass — neither checkpoint regressed — but only the second pass means something. With 8
pairs per level the gate detects (at 80% power) only a drop of about 0.58, a collapse, far over
its margin of 0.05: it is flagged UNDERPOWERED, with the pairs per level that would reach the
margin. With 600 pairs it detects drops of about 0.044 and reaches the margin. Add
``-o competence_underpowered=error`` to make the first an ERROR instead of a note.

The file is not named ``test_*.py``, so ``pytest examples`` leaves it out; name it to run it.
"""

import pytest

# Both tests require coverage only: the noisy solvers are not strictly correct, and what this
# example shows is the gate against the baseline.


@pytest.mark.competence(levels=[8, 16], pairs=8, regression_margin=0.05, require="coverage >= 0.99")
def test_a_gate_of_8_pairs_per_level(competence):
    """Underpowered: it cannot tell a 5-point drop from noise."""


@pytest.mark.competence(
    levels=[8, 16], pairs=600, regression_margin=0.05, require="coverage >= 0.99"
)
def test_a_gate_sized_for_its_margin(competence):
    """600 pairs per level: a 5-point drop is detected at 80% power."""
