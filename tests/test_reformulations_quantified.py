"""Syllogistic and quantifier reformulations (CRTBench paper) checked against an independent solver.

``tests/quantifier_solver.py`` knows no lexicon and none of the package's formula types: it reads
categories off the sentences and brute-forces explicit small domains, where the package reasons
over Venn cells. Every label (under both readings of existential import), every declared answer
map and every claim about what a transformation changed is checked on the rendered text.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_competence.cli import main
from pytest_competence.protocol import IDENTITY
from pytest_competence.strategies import CATEGORIES, InvalidArgument, Reformulations
from pytest_competence.strategies import reformulations as crt
from pytest_competence.strategies.reformulations._lexicon import NOUNS
from pytest_competence.strategies.reformulations._qrender import render_quantified
from pytest_competence.strategies.reformulations._quantifiers import (
    Is,
    QProblem,
    Quantified,
    Term,
    solve_quantified,
)
from quantifier_solver import MalformedPrompt, equivalent, parse, solve

QUANTIFIED = ("syllogistic", "quantifier")
FLIP = {"yes": "no", "no": "yes", "cannot be determined": "cannot be determined"}
REWRITES = ("contrapositive", "quantifier_rewrite")


def _design(category: str, levels=None, pairs: int = 12, seed: int = 3):
    fam = Reformulations(category=category)
    lo = CATEGORIES[category][0]
    return fam.design(
        levels=levels or [lo, lo + 1, 4],
        pairs=pairs,
        seed=seed,
        presentations=list(fam.presentations),
    )


@pytest.fixture(scope="module", params=QUANTIFIED)
def items(request):
    return _design(request.param)


def test_categories_and_transformations_of_table_7():
    assert CATEGORIES["syllogistic"][1] == (
        "original",
        "contrapositive",
        "double_negation",
        "negation_flip",
        "passive",
    )
    assert set(CATEGORIES["quantifier"][1]) == {
        "original",
        "contrapositive",
        "double_negation",
        "negation_flip",
        "quantifier_rewrite",
    }


def test_every_label_rederived_from_the_text(items):
    for item in items:
        for prompt in item.prompts:
            assert solve(prompt.text) == prompt.gold, (item.id, prompt.presentation, prompt.text)


@pytest.mark.parametrize("category", QUANTIFIED)
def test_labels_do_not_hinge_on_existential_import(category):
    for item in _design(category, levels=[2], pairs=9):
        for prompt in item.prompts:
            assert solve(prompt.text, existential_import=True) == prompt.gold, prompt.text


def test_largest_level_rederived_too():
    for item in _design("syllogistic", levels=[6], pairs=6):
        assert all(solve(p.text) == p.gold for p in item.prompts)


def test_gold_balanced_over_three_answers(items):
    counts = Counter((i.params["n"], i.prompts[0].gold) for i in items)
    assert set(counts.values()) == {4} and len(counts) == 3 * len({i.params["n"] for i in items})


def test_declared_maps_hold_on_the_text(items):
    for item in items:
        base = item.prompts[0]
        for prompt in item.prompts:
            flips = prompt.presentation == "negation_flip"
            assert prompt.gold == (FLIP[base.gold] if flips else base.gold)
            assert prompt.gold == prompt.answer_map(base.gold)
            assert prompt.answer_map.preserving == (not flips)


def test_each_transformation_changes_only_what_it_declares(items):
    for item in items:
        readings = {p.presentation: parse(p.text) for p in item.prompts}
        base = readings["original"]
        assert base.voice == "active"
        if "passive" in readings:
            assert readings["passive"].voice == "passive"
        for name, r in readings.items():
            if name in REWRITES:  # premise by premise, logically equivalent, and rewritten
                assert r.question == base.question and len(r.premises) == len(base.premises)
                assert all(equivalent(a, b) for a, b in zip(base.premises, r.premises)), name
                assert r.premises != base.premises, name
            else:
                assert r.premises == base.premises, name  # the question alone changes
        for name, extra in (("double_negation", 2), ("negation_flip", 1)):
            q = readings[name].question
            assert equivalent(q, base.question if extra % 2 == 0 else ("not", base.question))
            assert q != base.question


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_drawn_instances_agree_with_the_solver(data):
    fam = Reformulations(category=data.draw(st.sampled_from(QUANTIFIED)))
    z = data.draw(fam.strategies.instances(max_n=3))
    (prompt,) = fam.prompts(z, [data.draw(fam.strategies.presentations())])
    assert solve(prompt.text) == prompt.gold == prompt.answer_map(z.gold)


# -- the model checker against brute force on arbitrary problems ------------------------------

_terms = st.builds(Term, st.integers(0, 2), st.booleans())
_statements = st.one_of(
    st.builds(Quantified, st.sampled_from(["all", "some"]), _terms, _terms, st.booleans()),
    st.builds(Is, st.integers(0, 1), _terms),
)


@settings(max_examples=150, deadline=None)
@given(
    premises=st.lists(_statements, min_size=1, max_size=4),
    question=_statements,
    negations=st.integers(0, 3),
    existential_import=st.booleans(),
)
def test_venn_cell_checker_agrees_with_explicit_domains(
    premises, question, negations, existential_import
):
    """Any problem over 3 categories and 2 people, consistent or not, in the family's grammar."""
    p = QProblem(tuple(premises), question, negations, 3, 2)
    text = render_quantified(p, NOUNS[:3], ["Maya", "Omar"], range(len(premises)), False)
    try:
        expected = solve(text, existential_import=existential_import)
    except MalformedPrompt:  # inconsistent premises
        with pytest.raises(ValueError, match="inconsistent"):
            solve_quantified(p, existential_import=existential_import)
        return
    assert solve_quantified(p, existential_import=existential_import) == expected


def _text(premises: str, question: str) -> str:
    return (
        f"Premises: The following statements are about the members of one club. {premises} "
        f"Question: {question}"
    )


@pytest.mark.parametrize(
    "premises, question, modern, everyday",
    [
        (
            "All poets are runners. All runners are hikers.",
            "Is it true that all poets are hikers?",
            "yes",
            "yes",
        ),
        (
            "All poets are runners.",
            "Is it true that all runners are poets?",
            "cannot be determined",
            "cannot be determined",
        ),
        ("Some poets are runners.", "Is it true that some runners are poets?", "yes", "yes"),
        ("No poets are runners.", "Is it true that some runners are poets?", "no", "no"),
        # subalternation is valid only with existential import
        (
            "All poets are runners.",
            "Is it true that some poets are runners?",
            "cannot be determined",
            "yes",
        ),
        ("All poets are runners. Maya is not a runner.", "Is Maya a poet?", "no", "no"),
        (
            "There is no poet who is not a runner. Maya is a poet.",
            "Is it NOT the case that Maya is NOT a runner?",
            "yes",
            "yes",
        ),
    ],
)
def test_textbook_inferences(premises, question, modern, everyday):
    text = _text(premises, question)
    assert solve(text) == modern and solve(text, existential_import=True) == everyday


def test_a_label_that_hinges_on_existential_import_is_refused():
    subalternation = QProblem(
        (Quantified("all", Term(0), Term(1)),), Quantified("some", Term(0), Term(1)), 0, 2, 0
    )
    with pytest.raises(AssertionError, match="existential import"):
        crt._solve(subalternation)


def test_a_transformation_that_breaks_its_declaration_raises(monkeypatch):
    from dataclasses import replace

    def negate_question(p):  # answer-reversing, declared below as answer-preserving
        return replace(p, negations=p.negations + 1)

    monkeypatch.setitem(
        crt.TRANSFORMATIONS, "quantifier_rewrite", (IDENTITY, negate_question, False)
    )
    fam = Reformulations(category="quantifier")
    with pytest.raises(AssertionError, match="quantifier_rewrite on quantifier"):
        fam.design(levels=[2], pairs=30, presentations=["original", "quantifier_rewrite"])


@pytest.mark.parametrize(
    "category, design_args, message",
    [
        ("syllogistic", {"levels": [1]}, "2 <= levels\\[\\] <= 6"),
        ("quantifier", {"levels": [7]}, "levels\\[\\] <= 6"),
        ("quantifier", {"presentations": ["original", "passive"]}, "Table 7"),
        ("syllogistic", {"presentations": ["quantifier_rewrite"]}, "try presentations="),
    ],
)
def test_bad_design_names_the_argument(category, design_args, message):
    args = {"levels": [2], "pairs": 3, "seed": 1, "presentations": ["original"], **design_args}
    with pytest.raises(InvalidArgument, match=message):
        Reformulations(category=category).design(**args)


def test_generate_checks_from_text(tmp_path):
    out = tmp_path / "crt.jsonl"
    assert (
        main(
            [
                "generate",
                "reformulations",
                "--per-level",
                "3",
                "--category",
                "syllogistic,quantifier",
                "--levels",
                "2",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    records = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert len(records) == 2 * 3 * 5
    for r in records:
        assert r["gold"] == solve(r["prompt"])
        assert r["answer_map"] == (
            {"yes": "no", "no": "yes"} if r["presentation"] == "negation_flip" else {}
        )


@pytest.mark.parametrize(
    "text",
    [
        _text("All poets are runners.", "Is it true that all poets are runners?").replace(
            "one", "a"
        ),
        _text("All poets are tall.", "Is it true that all poets are runners?"),
        _text("All poets are runners.", "Are poets runners?"),
    ],
)
def test_reference_reader_refuses_what_the_family_does_not_write(text):
    from pytest_competence.strategies.reformulations.policies import crt_ideal
    from pytest_competence.strategies.reformulations.policies_quantified import read_quantified

    assert read_quantified(text) is None and crt_ideal(text) is None


def test_reference_reader_reads_what_the_family_writes():
    from pytest_competence.strategies.reformulations.policies import crt_ideal

    text = _text("All poets are runners. Maya is not a runner.", "Is Maya a poet?")
    assert crt_ideal(text) == "Answer: No"
