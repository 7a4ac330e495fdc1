"""The profile of the shipped learned model (issue #19): trained and held-out vocabularies, sizes
inside (3–6) and beyond its training, original and equivalent presentations, interior queries.

Not collected by the project's own test run (it is not a ``test_*.py`` file); name it to run it:

    pytest train/learned_ordering_suite.py -p no:cacheprovider --competence-report-only \
        --competence-diagnose '--competence-model=hf:pytest-competence/learned-ordering?max_new_tokens=2'

``train/record_profile.py`` runs it and keeps the figures in the checkpoint's ``training.json``;
``tests/test_learned.py`` checks that the shipped checkpoint still gives them.
"""

import pytest

LEVELS = [3, 4, 5, 6, 8, 12]  # trained on 3..6
PAIRS = 64


@pytest.mark.competence(levels=LEVELS, pairs=PAIRS, vocabulary="front_behind")
def test_trained_front_behind(competence):
    """A training vocabulary, endpoint queries, as in training."""


@pytest.mark.competence(levels=LEVELS, pairs=PAIRS, vocabulary="older_younger")
def test_trained_older_younger(competence):
    """The other training vocabulary."""


@pytest.mark.competence(levels=LEVELS, pairs=PAIRS, vocabulary="left_right")
def test_held_out_left_right(competence):
    """A vocabulary it never saw: its words are in the tokenizer, untrained."""


@pytest.mark.competence(levels=[5, 6, 8, 12], pairs=PAIRS, vocabulary="front_behind", distance=2)
def test_interior_front_behind(competence):
    """Interior queries two links apart: never in training; the endpoint shortcut cannot answer."""
