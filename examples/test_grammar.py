"""Grammar-based instruction learning (systematicity paper, arXiv:2609.13948, §4.1): are a generated language's rules applied
systematically?

Run against any model: ``pytest examples/test_grammar.py --competence-model=SPEC``. Each task is a
new artificial language (pseudowords for colours, function words that duplicate, reorder or
delete their arguments under a precedence order); the model translates compositions it has not
seen. Every task is shown as drawn, reordered, with fresh symbols (substitute) and with its
queries' primitives permuted (recompose); the condition asks for every variation to be solved.
"""

import pytest

FUNCTIONS = [1, 3]  # function rules in the language: the level


@pytest.mark.competence(family="grammar", levels=FUNCTIONS, pairs=8, variations=3)
def test_grammar(competence):
    """All isomorphism types, three variations each, one- and three-function languages."""


@pytest.mark.competence(
    family="grammar",
    extra_support=8,
    levels=[2, 4],
    pairs=6,
    variations=3,
    presentations=["original", "substitute", "recompose"],
)
def test_grammar_more_examples(competence):
    """App. B Fig. 8's 8 extra support examples instead of 4; symbol-level variations only."""
