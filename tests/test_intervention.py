"""The intervention-worlds family checked against an independent text-level solver.

``tests/iw_solver.py`` reads only the rendered prompt; every label, every transition, every letter
mapping below is recovered from the *text* and compared with what the generator declares.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iw_solver import gold_letter, solve_text
from pytest_competence.cli import main
from pytest_competence.strategies import FAMILIES, IW_PRESENTATIONS, Intervention, InvalidArgument

FAMILY = Intervention()
TRANSITIONS = {
    "TRUE->FALSE",
    "TRUE->UNKNOWN",
    "FALSE->TRUE",
    "FALSE->UNKNOWN",
    "UNKNOWN->TRUE",
    "UNKNOWN->FALSE",
}


@pytest.fixture(scope="module")
def items():
    return FAMILY.design(levels=[4, 9, 16, 33], pairs=24, seed=3)


def test_registered_by_name_and_repr_recovers_the_family():
    assert FAMILIES["intervention"] is Intervention
    assert repr(FAMILY).split("(", 1)[0].lower() == "intervention"


def test_every_label_rederived_from_the_text(items):
    for item in items:
        for p in item.prompts:
            value, options = solve_text(p.text)
            assert value == p.params["label"], (item.id, p.presentation)
            assert gold_letter(p.text) == p.gold, (item.id, p.presentation)
            assert options[p.gold] == value


def test_cells_and_names(items):
    assert len(IW_PRESENTATIONS) == 36
    assert items[0].prompts[0].presentation == "base/TFU/generate"
    for item in items:
        assert tuple(p.presentation for p in item.prompts) == IW_PRESENTATIONS
        for p in item.prompts:
            world, mapping, readout = p.presentation.split("/")
            assert (p.params["world"], p.params["mapping"], p.params["readout"]) == (
                world,
                mapping,
                readout,
            )
            assert p.readout == readout and p.answer_space == ("A", "B", "C")


def test_target_moves_by_the_declared_transition_and_sham_stays(items):
    for item in items:
        labels = {p.params["world"]: solve_text(p.text)[0] for p in item.prompts}
        before, after = item.params["transition"].split("->")
        assert (labels["base"], labels["target"], labels["sham"]) == (before, after, before)
        base = next(p.text for p in item.prompts if p.presentation == "base/TFU/generate")
        for world in ("target", "sham"):
            edited = next(p.text for p in item.prompts if p.presentation == f"{world}/TFU/generate")
            changed = set(base.splitlines()) ^ set(edited.splitlines())
            assert 1 <= len(changed) <= 2, (item.id, world, changed)  # one statement edited


def test_transitions_and_labels_balanced(items):
    per_level = Counter((i.params["n"], i.params["transition"]) for i in items)
    assert {t for _, t in per_level} == TRANSITIONS
    assert set(per_level.values()) == {24 // 6}
    for i, item in enumerate(items):
        assert item.instance.transition == tuple(item.params["transition"].split("->"))
        assert item.instance.index % 6 == list(
            [
                "TRUE->FALSE",
                "TRUE->UNKNOWN",
                "FALSE->TRUE",
                "FALSE->UNKNOWN",
                "UNKNOWN->TRUE",
                "UNKNOWN->FALSE",
            ]
        ).index(item.params["transition"])


def test_rule_count_is_the_level(items):
    for item in items:
        base = item.prompts[0].text
        assert sum(line.startswith("- If ") for line in base.splitlines()) == item.params["n"]


def test_letter_mapping_decodes_and_answer_map_relates_to_base_gold(items):
    for item in items:
        base_gold = item.prompts[0].gold
        for p in item.prompts:
            _, options = solve_text(p.text)
            for k, letter in enumerate("ABC"):  # "TFU": A = TRUE, ...
                assert (
                    options[letter]
                    == {"T": "TRUE", "F": "FALSE", "U": "UNKNOWN"}[p.params["mapping"][k]]
                )
            assert p.answer_map(base_gold) == p.gold, (item.id, p.presentation)


@settings(max_examples=40, deadline=None)
@given(FAMILY.strategies.instances(max_n=40))
def test_any_cluster_is_consistent_and_labelled_right(z):
    for world in ("base", "target", "sham"):
        prompt = FAMILY.prompt(z, f"{world}/UTF/generate")
        assert solve_text(prompt.text)[0] == z.label(world)
    assert z.label("target") != z.label("base") == z.label("sham")


def test_deterministic_from_the_seed():
    a = FAMILY.design(levels=[8], pairs=6, seed=11)
    b = FAMILY.design(levels=[8], pairs=6, seed=11)
    c = FAMILY.design(levels=[8], pairs=6, seed=12)
    text = [[p.text for p in i.prompts] for i in a]
    assert text == [[p.text for p in i.prompts] for i in b]
    assert text != [[p.text for p in i.prompts] for i in c]


def test_presentation_patterns_select_cells():
    items = FAMILY.design(levels=[4], pairs=6, presentations=["*/*/generate", "base/TFU/score"])
    names = [p.presentation for p in items[0].prompts]
    assert len(names) == 19 and "base/TFU/score" in names and "sham/FUT/generate" in names
    assert [
        p.presentation
        for p in FAMILY.design(levels=[4], pairs=6, presentations=FAMILY.default_presentations)[
            0
        ].prompts
    ] == list(IW_PRESENTATIONS)


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"presentations": ["base/XYZ/generate"]}, "MAPPING in TFU"),
        ({"presentations": ["original"]}, "WORLD/MAPPING/READOUT"),
        ({"presentations": []}, "non-empty list"),
        ({"pairs": 8}, "multiple of 6"),
        ({"levels": [3]}, "rule count in [4, 512]"),
        ({"levels": []}, "non-empty list of rule counts"),
    ],
)
def test_bad_design_arguments_are_named(kwargs, needle):
    args = {"levels": [4], "pairs": 6, "seed": 1, "presentations": ["*/*/*"], **kwargs}
    with pytest.raises(InvalidArgument, match=None) as info:
        FAMILY.design(**args)
    assert needle in str(info.value)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("Answer: B", "B"),
        ("I think A.\nAnswer: C", "C"),
        ("b", "B"),
        ("(A)", "A"),
        ("answer: (c)", "C"),
    ],
)
def test_parse_letters(text, want):
    assert FAMILY.parse(text).answer == want


@pytest.mark.parametrize("text", ["A statement is true.", "", "true", None, "Answer: D"])
def test_parse_invalid_is_explicit(text):
    parsed = FAMILY.parse(text)
    assert parsed.answer is None and parsed.reason


@given(st.sampled_from(IW_PRESENTATIONS))
def test_presentation_strategy_names_cells(name):
    assert name in IW_PRESENTATIONS


@settings(max_examples=12, deadline=None)
@given(FAMILY.strategies.instances(min_n=4, max_n=8, transition=4))
def test_strategy_fixes_the_transition(z):
    assert z.transition == ("UNKNOWN", "TRUE") and 4 <= z.n <= 8


@pytest.mark.parametrize("kwargs", [{"min_n": 9, "max_n": 8}, {"max_n": 3}, {"transition": 6}])
def test_strategy_arguments_checked(kwargs):
    with pytest.raises(InvalidArgument):
        FAMILY.strategies.instances(**kwargs)


def test_generate_command_records_rederivable_from_text(tmp_path):
    out = tmp_path / "iw.jsonl"
    assert (
        main(
            [
                "generate",
                "intervention",
                "--levels",
                "4,8",
                "--per-level",
                "6",
                "--presentations",
                "*/*/generate",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2 * 6 * 18
    for row in rows:
        assert gold_letter(row["prompt"]) == row["gold"]
        assert row["params"]["readout"] == "generate" and "semantics" in row["meta"]
