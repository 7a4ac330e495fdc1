"""Controlled reformulations (CRTBench paper): the base question and every reformulation correct.

Run against any model: ``pytest examples/test_reformulations.py --competence-model=SPEC``. One
test per built category, each with every transformation CRTBench paper, Table 7 applies to it; the
all-correct rate is the paper's family consistency, and the per-pair consistency of the report
is its per-transformation consistency.
"""

import pytest

from pytest_competence.strategies import CATEGORIES, Reformulations


@pytest.mark.parametrize(
    ("category", "presentations"),
    [(c, Reformulations(category=c).presentations) for c in CATEGORIES],
    ids=list(CATEGORIES),
)
@pytest.mark.competence(family="reformulations", levels=[2, 4], pairs=60)
def test_category(competence, category, presentations):
    """Every reformulation that applies to the category, at two problem sizes."""


@pytest.mark.competence(
    family=Reformulations(category="nested_negation", prompt="cot"),
    levels=[1, 2, 3],
    pairs=60,
    presentations=["original", "double_negation", "negation_flip", "triple_negation"],
)
def test_nested_negation_chain_of_thought(competence):
    """Stacked negations under the chain-of-thought system prompt of the CRTBench paper, App. B."""
