"""Three-valued intervention worlds: does the answer move when it should, and only then?

Run against any model: ``pytest examples/test_intervention.py --competence-model=SPEC``. Each
cluster is a base theory, a target edit that changes the TRUE/FALSE/UNKNOWN label and a sham edit
that keeps it, each asked under the six letter mappings and through both readouts (generated
text and candidate scoring): 36 cells per cluster, all of which must be right.
"""

import pytest


@pytest.mark.competence(family="intervention", levels=[4, 8], pairs=12)
def test_intervention_worlds(competence):
    """All 36 cells of every cluster: base, target and sham × 6 letter mappings × 2 readouts."""


@pytest.mark.competence(
    family="intervention", levels=[4, 8], pairs=12, presentations=["*/*/generate"]
)
def test_generated_answers_only(competence):
    """Generated answers only, for backends that cannot score candidates."""
