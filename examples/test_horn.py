"""Horn-clause inference (CBE paper, arXiv:2610.22894, App. C): goal derivability over pseudoword programs.

Run against any model: ``pytest examples/test_horn.py --competence-model=SPEC``. The first suite
is the paper's adoption example; the others separate what the paper's grid confounds — proof
depth and distractor rules — and add presentations beyond its two renderers.
"""

import pytest

RULES = [4, 8, 16, 32, 64, 128]  # App. C.1: the number of rules


@pytest.mark.competence(family="horn", levels=RULES, pairs=200)
def test_rule_count(competence):
    """Both renderers correct ("If a and b, then c." / "c holds whenever a and b hold.")."""


@pytest.mark.competence(
    family="horn", vary="depth", distractors=8, levels=[1, 2, 4, 8, 16], pairs=100
)
def test_proof_depth(competence):
    """Proof depth as the level, eight distractor rules throughout."""


@pytest.mark.competence(
    family="horn", vary="distractors", depth=2, levels=[0, 8, 32, 128], pairs=100
)
def test_distractor_rules(competence):
    """Distractor rules as the level, a two-step proof throughout."""


@pytest.mark.competence(
    family="horn",
    levels=[4, 16, 64],
    pairs=100,
    presentations=["original", "reshuffle", "rename", "shuffled_renamed", "negated_query"],
)
def test_reorder_rename_negate(competence):
    """Rule and fact reshuffles, atom renaming, and the negated query (which maps yes↔no)."""
