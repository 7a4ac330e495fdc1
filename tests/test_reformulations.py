"""Controlled reformulations (CRTBench paper) checked against an independent text-level solver.

``tests/crt_solver.py`` knows no lexicon and no formula types of the package: it reads clauses by
their nouns, parses the sentences with its own expressions and enumerates assignments. Every
label, every declared answer map and every claim about what a transformation changed is checked
on the rendered text.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crt_solver import equivalent, parse, solve
from pytest_competence.cli import main
from pytest_competence.models.reference import reference_policy
from pytest_competence.strategies import CATEGORIES, FAMILIES, InvalidArgument, Reformulations
from pytest_competence.strategies.reformulations import PROMPTS

FLIP = {"yes": "no", "no": "yes", "cannot be determined": "cannot be determined"}
MAPPING = ("negation_flip", "triple_negation")
#: The categories crt_solver reads; the quantified ones are tests/test_reformulations_quantified.py's.
PROPOSITIONAL = [c for c in CATEGORIES if c not in ("syllogistic", "quantifier")]


def _design(category: str, levels=None, pairs: int = 12, seed: int = 3):
    fam = Reformulations(category=category)
    lo = CATEGORIES[category][0]
    return fam, fam.design(
        levels=levels or sorted({lo, lo + 1, 3}),
        pairs=pairs,
        seed=seed,
        presentations=list(fam.presentations),
    )


@pytest.fixture(scope="module", params=PROPOSITIONAL)
def design(request):
    return _design(request.param)


def test_registered_by_name():
    assert FAMILIES["reformulations"] is Reformulations
    assert Reformulations().presentations[0] == "original"


def test_every_label_rederived_from_the_text(design):
    _, items = design
    for item in items:
        for prompt in item.prompts:
            assert solve(prompt.text) == prompt.gold, (item.id, prompt.presentation)


def test_largest_level_rederived_too():
    for category in (
        "propositional_logic",
        "conditional_fallacies",
        "nested_negation",
        "de_morgan",
    ):
        _, items = _design(category, levels=[6], pairs=6)
        for item in items:
            assert all(solve(p.text) == p.gold for p in item.prompts)


def test_gold_balanced_over_three_answers(design):
    _, items = design
    counts = Counter((i.params["n"], i.prompts[0].gold) for i in items)
    assert set(counts.values()) == {4} and len(counts) == 3 * len({i.params["n"] for i in items})


def test_declared_maps_hold_on_the_text(design):
    _, items = design
    for item in items:
        base = item.prompts[0]
        for prompt in item.prompts:
            expected = FLIP[base.gold] if prompt.presentation in MAPPING else base.gold
            assert prompt.gold == expected == prompt.answer_map(base.gold)
            assert prompt.answer_map.preserving == (prompt.presentation not in MAPPING)


def test_each_transformation_changes_only_what_it_declares(design):
    _, items = design
    for item in items:
        readings = {p.presentation: parse(p.text) for p in item.prompts}
        base = readings["original"]
        assert base.voice == "active" and readings["passive"].voice == "passive"
        for name, r in readings.items():
            if name in (
                "original",
                "passive",
                "double_negation",
                "negation_flip",
                "triple_negation",
            ):
                assert r.premises == base.premises, name  # the question alone changes
            else:  # contrapositive, de_morgan: premise by premise, logically equivalent
                assert r.question == base.question and len(r.premises) == len(base.premises)
                assert all(equivalent(a, b) for a, b in zip(base.premises, r.premises)), name
                assert r.premises != base.premises, name  # and actually rewritten
        for name, extra in (("double_negation", 2), ("negation_flip", 1), ("triple_negation", 3)):
            if name in readings:
                q = readings[name].question
                assert equivalent(q, base.question if extra % 2 == 0 else ("not", base.question))


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_drawn_instances_agree_with_the_solver(data):
    fam = Reformulations(category=data.draw(st.sampled_from(PROPOSITIONAL)))
    z = data.draw(fam.strategies.instances(max_n=3))
    presentation = data.draw(fam.strategies.presentations())
    (prompt,) = fam.prompts(z, [presentation])
    assert solve(prompt.text) == prompt.gold == prompt.answer_map(z.gold)


def test_strategy_shrinks_to_the_smallest_yes_instance():
    from hypothesis import find

    fam = Reformulations(category="de_morgan")
    z = find(fam.strategies.instances(), lambda z: z.n >= 3)
    assert (z.n, z.index, z.seed) == (3, 0, 0)


@pytest.mark.parametrize("style", ["zero_shot", "cot"])
def test_system_prompts_of_app_b(style):
    fam = Reformulations(prompt=style)
    prompt = fam.design(levels=[1], pairs=3, presentations=["original"])[0].prompts[0]
    assert prompt.system == PROMPTS[style] and '"Cannot be determined"' in prompt.system


@pytest.mark.parametrize(
    "text, answer",
    [
        ("Answer: Cannot be determined", "cannot be determined"),
        ("Let me think. Answer: Yes\nWait.\nAnswer: No", "no"),
        ("The final answer is **No**.", "no"),
        ("Therefore, yes.", "yes"),
        ("Thus the answer is cannot be determined", "cannot be determined"),
        ("The premises say nothing about it. It cannot be determined.", "cannot be determined"),
        ("Yes, because the chain holds.", "yes"),
        ("Looking at the premises, the rule applies. So no.", "no"),
    ],
)
def test_answer_extraction_of_app_b(text, answer):
    assert Reformulations().parse(text).answer == answer


@pytest.mark.parametrize("text", ["", "Maybe yes, maybe no.", "I am not sure.", None, 3])
def test_unclear_answers_are_invalid_with_a_reason(text):
    parsed = Reformulations().parse(text)
    assert parsed.answer is None and parsed.reason.startswith("UNCLEAR")


@pytest.mark.parametrize(
    "kwargs, message",
    [({"category": "modal_logic"}, "category to be one of"), ({"prompt": "few"}, "prompt=")],
)
def test_bad_options_name_the_argument(kwargs, message):
    with pytest.raises(InvalidArgument, match=message):
        Reformulations(**kwargs)


@pytest.mark.parametrize(
    "category, design_args, message",
    [
        ("de_morgan", {"levels": [1]}, "2 <= levels\\[\\] <= 6"),
        ("multi_hop", {"levels": [7]}, "levels\\[\\] <= 6"),
        ("multi_hop", {"pairs": 4}, "multiple of 3"),
        ("de_morgan", {"presentations": ["original", "contrapositive"]}, "Table 7"),
        ("multi_hop", {"presentations": ["original", "equivalent"]}, "try presentations="),
    ],
)
def test_bad_design_names_the_argument(category, design_args, message):
    args = {"levels": [2], "pairs": 3, "seed": 1, "presentations": ["original"], **design_args}
    with pytest.raises(InvalidArgument, match=message):
        Reformulations(category=category).design(**args)


# -- reference policies -------------------------------------------------------------------------


def _accuracy(spec: str, category: str) -> dict[str, float]:
    fam, items = _design(category, pairs=30, seed=5)
    prompts = [p for i in items for p in i.prompts]
    answers = reference_policy(spec.removeprefix("ref:"), spec).generate(prompts)
    hits: dict[str, list[bool]] = {}
    for p, a in zip(prompts, answers):
        hits.setdefault(p.presentation, []).append(fam.parse(a).answer == p.gold)
    return {k: sum(v) / len(v) for k, v in hits.items()}


@pytest.mark.parametrize("category", list(CATEGORIES))
def test_ideal_passes_every_reformulation(category):
    assert set(_accuracy("ref:ideal", category).values()) == {1.0}


@pytest.mark.parametrize("category", list(CATEGORIES))
def test_hedger_is_caught_by_stacked_negations_only(category):
    acc = _accuracy("ref:crt-hedge", category)
    for name, value in acc.items():
        stacked = name in ("double_negation", "triple_negation") or (
            category == "nested_negation" and name == "negation_flip"
        )
        assert (value < 1.0) == stacked, (name, value)


@pytest.mark.parametrize("category", list(CATEGORIES))
def test_negation_blind_reader_is_caught(category):
    acc = _accuracy("ref:crt-ignore-negation", category)
    assert min(acc.values()) < 0.7
    if "contrapositive" in acc:
        passive = acc.get("passive", 1.0)  # the quantifier category has no passive (Table 7)
        assert acc["contrapositive"] < passive or passive < 1.0


# -- CLI and plugin -----------------------------------------------------------------------------


def test_generate_reformulations_check_from_text(tmp_path):
    out = tmp_path / "crt.jsonl"
    assert (
        main(
            [
                "generate",
                "reformulations",
                "--per-level",
                "3",
                "--category",
                "multi_hop,de_morgan",
                "--levels",
                "2",
                "--prompt",
                "cot",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    records = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert len(records) == 2 * 3 * 5
    for r in records:
        assert r["gold"] == solve(r["prompt"]) and r["system"] == PROMPTS["cot"]
        assert r["answer_map"] == (
            {"yes": "no", "no": "yes"} if r["presentation"] in MAPPING else {}
        )


SUITE = """
import pytest

@pytest.mark.competence(family="reformulations", category="nested_negation", levels=[1, 2],
                        pairs=6, presentations=["original", "double_negation", "triple_negation"])
def test_nested(competence):
    pass
"""


@pytest.mark.slow
def test_marker_catches_the_hedger_and_reports_three_way_answers(pytester: pytest.Pytester):
    pytester.makepyfile(test_r=SUITE)
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--competence-model",
        "ref:ideal,ref:crt-hedge",
        "--competence-html",
        "r.html",
        "--competence-json",
        "r.json",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*test_nested*ref:crt-hedge*", "*first failing level: size=1*"])
    doc = json.loads((pytester.path / "r.json").read_text("utf-8"))
    assert doc and (pytester.path / "r.html").stat().st_size > 0


def test_same_instances_in_a_fresh_process():
    import hashlib
    import subprocess
    import sys

    code = (
        "from pytest_competence.strategies import Reformulations; import hashlib;"
        "f=Reformulations(category='multi_hop');"
        "t=''.join(p.text for i in f.design(levels=[1,3],pairs=6,seed=3,"
        "presentations=f.presentations) for p in i.prompts);"
        "print(hashlib.sha256(t.encode()).hexdigest())"
    )
    fam = Reformulations(category="multi_hop")
    here = "".join(
        p.text
        for i in fam.design(levels=[1, 3], pairs=6, seed=3, presentations=fam.presentations)
        for p in i.prompts
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "77", "PATH": ""},
    )
    assert out.stdout.strip() == hashlib.sha256(here.encode()).hexdigest()
