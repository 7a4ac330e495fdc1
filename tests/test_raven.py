"""The symbolic Raven matrices family (systematicity paper, arXiv:2609.13948, §4.2): oracle, uniqueness, isomorphisms, parser."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_competence.strategies import FAMILIES, InvalidArgument, Raven, family
from pytest_competence.strategies.raven import render_grid, system_prompt
from pytest_competence.strategies.raven._rules import (
    RULES,
    answers_over_alignments,
    identifiable,
    solve,
)
from raven_solver import aligned_rules, read_grid
from raven_solver import solve as read_and_solve


def _grid_of(task):  # rows as shown, from the latent task (the query row has two panels)
    return tuple((x[0], x[1], y) for x, y in task.support) + (task.query[0],)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_the_text_alone_determines_every_gold_answer(n: int) -> None:
    """The independent solver reads each prompt, tries every feature correspondence and finds
    exactly one missing panel — the gold — so support rows 1–2 follow the rules it finds."""
    for item in Raven(variations=3).design(levels=[n], pairs=12, seed=5):
        for p in item.prompts:
            assert read_and_solve(read_grid(p.text)) == {tuple(json.loads(p.gold))}, p.text


@pytest.mark.parametrize("n", [1, 2, 3])
def test_each_feature_rule_is_identified_by_rows_one_and_two(n: int) -> None:
    """Read aligned (the original prompt), rows 1–2 admit only the hidden rule per feature —
    except that constant rows are also min/max rows (min(x, x) = x), which the family allows."""
    seen = set()
    for item in Raven(variations=1).design(
        levels=[n], pairs=40, seed=2, presentations=["original"]
    ):
        found = aligned_rules(read_grid(item.prompts[0].text))
        for rule, rules in zip(item.instance.rule, found):
            seen.add(rule)
            if rule == "constant":
                assert "constant" in rules and rules <= {"constant", "minimum", "maximum"}
            else:
                assert rules == {rule}
    assert seen == set(RULES)  # every rule of the set is drawn


def test_the_paper_example_solves_both_ways() -> None:
    """systematicity paper, arXiv:2609.13948, §4.2: the unpermuted task answers (3, 9); its column-permuted variant (9, 3)."""
    plain = "5 2 | 5 4 | 5 6 || 8 7 | 8 9 | 8 1 || 3 5 | 3 7 | ? ?"
    permuted = "2 5 | 5 4 | 6 5 || 7 8 | 8 9 | 1 8 || 5 3 | 3 7 | ? ?"
    assert read_and_solve(read_grid(plain)) == {(3, 9)}
    assert read_and_solve(read_grid(permuted)) == {(9, 3)}
    rows = (((5, 2), (5, 4), (5, 6)), ((8, 7), (8, 9), (8, 1)), ((3, 5), (3, 7)))
    rule = ("constant", "progression+2")
    assert solve(rule, ((0, 1),) * 3, rows) == (3, 9)
    swapped = tuple(
        tuple(panel[::-1] if c != 1 else panel for c, panel in enumerate(r)) for r in rows
    )
    assert solve(rule, ((1, 0), (0, 1), (1, 0)), swapped) == (9, 3)


def test_an_ambiguous_grid_is_detected() -> None:
    """Rows (1,1,1), (2,2,2) fit min and max alike; a query (3, 4) then has two answers."""
    columns = [[(1, 1), (2, 2), (3, 3)], [(1, 1), (2, 2), (3, 4)], [(1, 1), (2, 2), (0, 0)]]
    assert {(3, 3), (3, 4)} <= answers_over_alignments(columns)
    assert not identifiable("minimum", (3, 3, 3), (4, 4, 4))
    assert identifiable("constant", (3, 3, 3), (4, 4, 4))


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 4), index=st.integers(0, 500), seed=st.integers(0, 2**16))
def test_every_variation_is_an_isomorphism(n: int, index: int, seed: int) -> None:
    """``τ(T)``'s interpreter answers are the original's, permuted by column 3's order; its
    panels, unbound, are the original's; reorder only swaps the two support rows."""
    fam = Raven(variations=3)
    task = fam.task(n, index, seed)
    for k in (1, 2, 3):
        moved = fam.variation(task, "permute", k, n=n, index=index, seed=seed)
        binding = moved.context
        assert moved.rule == task.rule
        assert moved.answers == tuple(task.answers[binding[2][s]] for s in range(n))
        for shown, original in zip(_grid_of(moved), _grid_of(task)):
            for c, panel in enumerate(shown):
                assert tuple(panel[binding[c].index(i)] for i in range(n)) == original[c]
        if n > 1:
            assert len(set(binding)) > 1  # the columns disagree: correspondence must be found
        reordered = fam.variation(task, "reorder", k, n=n, index=index, seed=seed)
        assert sorted(reordered.support) == sorted(task.support)
        assert (reordered.query, reordered.answers) == (task.query, task.answers)


def test_render_is_the_paper_format() -> None:
    fam = Raven(variations=1)
    for n in (1, 2, 4):
        for p in fam.design(levels=[n], pairs=3, seed=0)[0].prompts:
            panel = r"\d( \d){%d}" % (n - 1)
            row = rf"{panel} \| {panel} \| {panel}"
            grid = rf"{row} \|\| {row} \|\| {panel} \| {panel} \| \?( \?){{{n - 1}}}"
            assert re.fullmatch(grid, p.text.splitlines()[0]), p.text
            assert "Answer: [" in p.text and f"{n} masked integer(s)" in p.text
            assert p.system == system_prompt(n) and "n_features" not in p.system
            assert f"contains {n} feature(s)" in p.system
    assert render_grid((((1,), (2,), (3,)), ((4,), (5,)))) == "1 | 2 | 3 || 4 | 5 | ?"


def test_the_design_is_deterministic_and_sized() -> None:
    a = Raven(variations=2).design(levels=[2, 3], pairs=4, seed=9)
    b = Raven(variations=2).design(levels=[2, 3], pairs=4, seed=9)
    assert [[(p.text, p.gold) for p in i.prompts] for i in a] == [
        [(p.text, p.gold) for p in i.prompts] for i in b
    ]
    assert [p.presentation for p in a[0].prompts] == [
        "original",
        "reorder:1",
        "reorder:2",
        "permute:1",
        "permute:2",
    ]
    assert all(p.params["queries"] == 1 for i in a for p in i.prompts)
    other = Raven(variations=2).design(levels=[2], pairs=4, seed=10)
    assert [i.prompts[0].text for i in other] != [i.prompts[0].text for i in a[:4]]


def test_gold_round_trips_and_junk_is_invalid() -> None:
    fam = Raven()
    for item in fam.design(levels=[3], pairs=3, seed=1):
        for p in item.prompts:
            assert fam.parse(f"The rules are ... so\nAnswer: {p.gold}").answer == p.gold
            assert fam.parse(p.gold.replace(",", ", ")).answer == p.gold
    for junk, reason in [
        ("Answer: 3 9", "no JSON list"),
        ("Answer: [10, 2]", "not in 0..9"),
        ("Answer: [-1]", "not in 0..9"),
        ('Answer: ["3", 9]', "not an integer"),
        ("Answer: [3.0, 9]", "not an integer"),
        ("Answer: [true]", "integer"),
        ("Answer: [[3, 9]]", "not an integer"),
    ]:
        parsed = fam.parse(junk)
        assert parsed.answer is None and reason in parsed.reason, (junk, parsed)


def test_registered_and_rebuilt_from_options() -> None:
    assert FAMILIES["raven"] is Raven
    fam = Raven(variations=3)
    rebuilt = family("raven", **fam.options())
    assert isinstance(rebuilt, Raven) and rebuilt.options() == {"variations": 3}


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: Raven(variations=0), "variations"),
        (lambda: Raven(variations=True), "variations"),
        (lambda: Raven().design(levels=[5], pairs=2), r"levels\[\]"),
        (lambda: Raven().design(levels=[2], pairs=0), "pairs"),
        (lambda: Raven().design(levels=[2], pairs=1, presentations=["mirror"]), "mirror"),
        (lambda: Raven().task(0, 0, 0), "n=0"),
        (lambda: family("raven", features=2), "features"),
    ],
)
def test_bad_arguments_name_themselves(call, name: str) -> None:
    with pytest.raises(InvalidArgument, match=name):
        call()


def test_the_aligned_reader_shows_a_gap_on_feature_rebinding_only() -> None:
    """``ref:raven-aligned`` solves every original and reorder prompt, some permute variations
    but not all: the systematicity gap (solve-any > solve-all) the permute type exists to show."""
    from pytest_competence.models.reference import reference_policy

    policy = reference_policy("raven-aligned", "ref:raven-aligned")
    fam = Raven(variations=5)
    any_solved = all_solved = 0
    items = fam.design(levels=[2, 3], pairs=15, seed=3)
    for item in items:
        prompts = list(item.prompts)
        passed = [fam.parse(a).answer == p.gold for p, a in zip(prompts, policy.generate(prompts))]
        kinds = [p.params["isomorphism"] for p in prompts]
        assert all(ok for ok, kind in zip(passed, kinds) if kind != "permute")
        permute = [ok for ok, kind in zip(passed, kinds) if kind == "permute"]
        any_solved += any(permute)
        all_solved += all(permute)
    assert all_solved < any_solved <= len(items)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "1 | 2 | 3 || 4 | 5 | 6 || 7 | 8 | 9",
        "1 2 | 3 | 4 || 1 | 2 | 3 || 1 | 2 | ?",
        "a | b | c || 1 | 2 | 3 || 1 | 2 | ?",
    ],
)
def test_the_aligned_reader_says_when_it_cannot_read(text: str) -> None:
    from pytest_competence.strategies.raven.policies import RAVEN_POLICIES, UNREADABLE, read_raven

    assert read_raven(text) is None
    assert RAVEN_POLICIES["raven-aligned"]()(text) == UNREADABLE


def test_the_default_prompt_names_every_rule_exactly() -> None:
    """Fig. 12's list omits distribute-three and the modulus; by default every rule a task can
    use is stated exactly, so the text determines the answer (``verbatim=True`` keeps Fig. 12)."""
    from pytest_competence.strategies.raven import SYSTEM

    phrases = {
        "constant": "Constant: the same integer three times",
        "progression": "+1, +2, -1 or -2 along the row",
        "addition": "Modular addition: the third integer is the sum of the first two",
        "subtraction": "the third integer is the first minus the second",
        "minimum": "maximum/minimum of the first two",
        "maximum": "maximum/minimum",
        "distribute-three": "once in every row and once in every column",
    }
    text = system_prompt(2)
    assert "modulo 10" in text
    for rule in RULES:
        assert phrases[rule.rstrip("+-12") if rule.startswith("progression") else rule] in text
    assert system_prompt(2, verbatim=True) == SYSTEM.replace("n_features", "2")
    assert "Distribution" not in system_prompt(2, verbatim=True)
    fam = family("raven", verbatim=True)
    assert repr(fam) == "Raven(variations=5, verbatim=True)"
    assert fam.options() == {"variations": 5, "verbatim": True}
    prompt = fam.design(levels=[2], pairs=1, seed=4)[0].prompts[0]
    assert prompt.system == system_prompt(2, verbatim=True)
