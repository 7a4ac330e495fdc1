"""The Horn-clause family checked against an independent text-level solver (CBE paper, arXiv:2610.22894, App. C).

``tests/horn_solver.py`` reads only the rendered prompt; every property below — the gold answer,
the proof depth, the near-miss structure, what each presentation changed — is recovered from the
*text* and compared with what the generator claims.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from horn_solver import MalformedPrompt, parse, proof_depth, repairs, solve
from pytest_competence.cli import main
from pytest_competence.models.reference import reference_policy
from pytest_competence.strategies import FAMILIES, HORN_PRESENTATIONS, Horn, InvalidArgument, family

ALL = tuple(HORN_PRESENTATIONS)
PRESERVING = tuple(p for p in ALL if p != "negated_query")
FLIP = {"yes": "no", "no": "yes"}

CONFIGS = {
    "rules": (Horn(), [1, 2, 4, 8, 16, 32, 64, 128]),
    "rules-depth3": (Horn(depth=3), [3, 4, 16, 64]),
    "depth": (Horn(vary="depth"), [1, 2, 4, 8, 16, 32]),
    "depth-bare": (Horn(vary="depth", distractors=0), [1, 3, 9]),
    "distractors": (Horn(vary="distractors"), [0, 1, 2, 8, 64]),
    "distractors-depth1": (Horn(vary="distractors", depth=1), [0, 5, 40]),
}


@pytest.fixture(scope="module", params=sorted(CONFIGS))
def design(request):
    fam, levels = CONFIGS[request.param]
    return fam, fam.design(levels=levels, pairs=20, seed=7, presentations=ALL)


def test_registered_by_name():
    assert FAMILIES["horn"] is Horn
    assert repr(family("horn", vary="depth", distractors=2)) == "Horn(vary='depth', distractors=2)"


def test_every_label_rederived_from_the_text(design):
    _, items = design
    for item in items:
        for prompt in item.prompts:
            assert solve(prompt.text) == prompt.gold, (item.id, prompt.presentation)


def test_gold_balanced_per_level(design):
    _, items = design
    counts = Counter((i.params["n"], i.prompts[0].gold) for i in items)
    for (n, gold), count in counts.items():
        assert count == 10, (n, gold)
    assert {g for _, g in counts} == {"yes", "no"}


def test_answer_maps_declared_and_applied(design):
    _, items = design
    for item in items:
        base = item.prompts[0]
        for prompt in item.prompts:
            program = parse(prompt.text)
            if prompt.presentation == "negated_query":
                assert program.negated and prompt.answer_map(base.gold) == prompt.gold
                assert prompt.gold == FLIP[base.gold] and not prompt.answer_map.preserving
            else:
                assert not program.negated and prompt.answer_map.preserving
                assert prompt.gold == base.gold


def test_sizes_are_what_the_params_say(design):
    fam, items = design
    for item in items:
        p, program = item.params, parse(item.prompts[0].text)
        assert len(program.rules) == p["rules"] == p["depth"] + p["distractors"]
        assert (
            p[{"rules": "rules", "depth": "depth", "distractors": "distractors"}[fam.vary]]
            == p["n"]
        )
        if p["cell"] == "positive":
            # Proof depth is exactly the declared depth: no distractor shortens the proof.
            assert proof_depth(program) == p["depth"]


def test_near_misses_keep_a_goal_rule_and_are_one_fact_from_proof(design):
    _, items = design
    for item in items:
        program = parse(item.prompts[0].text)
        assert any(head == program.goal for head, _, _ in program.rules)
        if item.params["cell"] == "near_miss":
            assert proof_depth(program) is None and repairs(program), item.id
            assert 1 <= item.params["severed"] <= item.params["depth"]


def test_renderers_differ_only_in_wording(design):
    _, items = design
    for item in items:
        texts = {p.presentation: parse(p.text) for p in item.prompts}
        a, b = texts["original"], texts["equivalent"]
        assert {k for _, _, k in a.rules} == {"if"} and {k for _, _, k in b.rules} == {"whenever"}
        assert [r[:2] for r in a.rules] == [r[:2] for r in b.rules]  # rule order fixed
        assert a.facts == b.facts and a.goal == b.goal


def test_reshuffle_permutes_and_rename_is_a_bijection(design):
    _, items = design
    for item in items:
        texts = {p.presentation: parse(p.text) for p in item.prompts}
        a, s, r = texts["original"], texts["reshuffle"], texts["rename"]
        assert sorted(a.facts) == sorted(s.facts) and a.goal == s.goal
        assert Counter(x[:2] for x in a.rules) == Counter(x[:2] for x in s.rules)
        to: dict[str, str] = {}
        pairs = list(zip(a.facts, r.facts)) + [(a.goal, r.goal)]
        for (h1, b1, _), (h2, b2, _) in zip(a.rules, r.rules):
            assert len(b1) == len(b2)
            pairs.append((h1, h2))
        for x, y in pairs:
            assert to.setdefault(x, y) == y
        assert len(set(to.values())) == len(to) and not set(to) & set(to.values())
        for (_, b1, _), (_, b2, _) in zip(a.rules, r.rules):
            if all(x in to for x in b1):
                assert {to[x] for x in b1} == set(b2)


def test_same_instances_in_a_fresh_process():
    code = (
        "from pytest_competence.strategies import Horn; import hashlib;"
        "t=''.join(p.text for i in Horn().design(levels=[4,32],pairs=6,seed=3,"
        "presentations=['original','rename']) for p in i.prompts);"
        "print(hashlib.sha256(t.encode()).hexdigest())"
    )
    here = "".join(
        p.text
        for i in Horn().design(
            levels=[4, 32], pairs=6, seed=3, presentations=["original", "rename"]
        )
        for p in i.prompts
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "123", "PATH": ""},
    )
    assert out.stdout.strip() == hashlib.sha256(here.encode()).hexdigest()


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_oracle_agrees_with_solver_on_drawn_instances(data):
    fam = data.draw(st.sampled_from([Horn(), Horn(vary="depth"), Horn(vary="distractors")]))
    z = data.draw(fam.strategies.instances(max_n=24))
    presentation = data.draw(fam.strategies.presentations())
    prompt = fam.prompt(z, presentation)
    assert solve(prompt.text) == prompt.gold == prompt.answer_map(z.gold)


def test_strategy_shrinks_to_the_smallest_positive_program():
    from hypothesis import find

    fam = Horn()
    z = find(fam.strategies.instances(max_n=16), lambda z: z.n >= 3)
    assert (z.n, z.index, z.seed) == (3, 0, 0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"vary": "width"}, "vary to be one of"),
        ({"depth": 0}, "depth to be None or an integer >= 1"),
        ({"vary": "depth", "depth": 3}, "drop depth="),
        ({"distractors": 3}, "fix depth= instead of distractors="),
    ],
)
def test_bad_options_name_the_argument(kwargs, message):
    with pytest.raises(InvalidArgument, match=message):
        Horn(**kwargs)


@pytest.mark.parametrize(
    "design_args, message",
    [
        ({"levels": [0]}, "levels\\[\\]"),
        ({"levels": "4"}, "levels to be a non-empty list"),
        ({"pairs": 3}, "positive even number"),
        ({"presentations": ["sideways"]}, "Unknown presentation 'sideways' for family 'horn'"),
        ({"seed": -1}, "seed to be an integer"),
    ],
)
def test_bad_design_names_the_argument(design_args, message):
    args = {"levels": [4], "pairs": 4, "seed": 1, "presentations": ["original"], **design_args}
    with pytest.raises(InvalidArgument, match=message):
        Horn().design(**args)


def test_solver_rejects_other_text():
    with pytest.raises(MalformedPrompt):
        parse("There are 3 people standing in some order.")


# -- reference policies -----------------------------------------------------------------------


def _accuracy(spec: str, fam: Horn, levels, presentations) -> dict[tuple[int, str], float]:
    items = fam.design(levels=levels, pairs=40, seed=2, presentations=presentations)
    prompts = [p for i in items for p in i.prompts]
    answers = reference_policy(spec.removeprefix("ref:"), spec).generate(prompts)
    hits: dict[tuple[int, str], list[bool]] = {}
    for p, a in zip(prompts, answers):
        hits.setdefault((p.params["n"], p.presentation), []).append(a == p.gold)
    return {k: sum(v) / len(v) for k, v in hits.items()}


def test_ideal_passes_every_presentation():
    acc = _accuracy("ref:ideal", Horn(), [4, 32, 128], ALL)
    assert set(acc.values()) == {1.0}


def test_the_policies_read_a_suite_s_own_instruction_whatever_words_it_holds():
    # The instruction follows the question, and may repeat the words that open one.
    said = "Is it true that it holds? Can it be derived from the facts and rules? Say yes or no."
    for spec in ("ref:ideal", "ref:horn-if-then"):
        expected = _accuracy(spec, Horn(), [4, 32], ALL)
        assert _accuracy(spec, Horn(instruction=said), [4, 32], ALL) == expected, spec


def test_if_then_reader_is_caught_by_the_other_renderer():
    acc = _accuracy("ref:horn-if-then", Horn(), [4, 32], ["original", "equivalent", "rename"])
    assert acc[(4, "original")] == acc[(32, "original")] == acc[(4, "rename")] == 1.0
    assert acc[(4, "equivalent")] == acc[(32, "equivalent")] == 0.5  # every positive missed


def test_goal_rule_shortcut_is_caught_once_distractors_hide_the_cut():
    # With no distractor rule a near miss severed at the goal's own rule shows a dangling atom;
    # with one, the dead-end rule heads the cut atom and the local check cannot see the cut.
    bare = _accuracy("ref:horn-goal-rule", Horn(vary="depth", distractors=0), [1], ["original"])
    assert bare[(1, "original")] == 1.0
    acc = _accuracy("ref:horn-goal-rule", Horn(vary="depth"), [1, 8], ["original"])
    assert acc[(1, "original")] < 0.8 and acc[(8, "original")] < 0.8


def test_dangling_structure_gives_no_shortcut_on_the_default_grid():
    """Counts of idle heads, idle facts and unsupported body atoms are near chance from n = 8."""
    items = Horn().design(levels=[8, 32], pairs=200, seed=5, presentations=["original"])
    for tell in ("idle_head", "unsupported", "idle_fact"):
        right = 0
        for item in items:
            program = parse(item.prompts[0].text)
            used = {a for _, body, _ in program.rules for a in body}
            heads = {h for h, _, _ in program.rules}
            flag = {
                "idle_head": not any(h not in used and h != program.goal for h in heads),
                "unsupported": sum(a not in heads and a not in program.facts for a in used) > 1,
                "idle_fact": sum(f not in used for f in program.facts) > 1,
            }[tell]
            right += ("no" if flag else "yes") == item.prompts[0].gold
        assert abs(right / len(items) - 0.5) < 0.08, tell


def test_bounded_chaining_is_caught_beyond_its_depth():
    acc = _accuracy("ref:horn-bounded?depth=4", Horn(vary="depth"), [4, 5, 16], ["original"])
    assert acc[(4, "original")] == 1.0 and acc[(5, "original")] == acc[(16, "original")] == 0.5


def test_distractors_alone_do_not_trouble_a_depth_bounded_policy():
    acc = _accuracy("ref:horn-bounded?depth=4", Horn(vary="distractors"), [0, 64], ["original"])
    assert set(acc.values()) == {1.0}


# -- CLI ---------------------------------------------------------------------------------------


def test_generate_horn_records_check_from_text(tmp_path):
    out = tmp_path / "horn.jsonl"
    assert (
        main(
            [
                "generate",
                "horn",
                "--per-level",
                "4",
                "--presentations",
                "original,equivalent,negated_query",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    records = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert len(records) == 6 * 4 * 3  # App. C's grid 4 … 128 by default
    assert sorted({r["params"]["n"] for r in records}) == [4, 8, 16, 32, 64, 128]
    for r in records:
        assert r["family"] == "horn" and r["gold"] == solve(r["prompt"])
        assert set(r["meta"]["atoms"]) >= set(parse(r["prompt"]).facts)


def test_generate_horn_depth_sweep(tmp_path):
    out = tmp_path / "horn.jsonl"
    assert (
        main(
            [
                "generate",
                "horn",
                "--vary",
                "depth",
                "--distractor-rules",
                "3",
                "--levels",
                "2,6",
                "--per-level",
                "2",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    records = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert [(r["params"]["depth"], r["params"]["distractors"]) for r in records][::4] == [
        (2, 3),
        (6, 3),
    ]


def test_generate_horn_bad_option_is_a_usage_error(capsys):
    with pytest.raises(SystemExit):
        main(["generate", "horn", "--vary", "depth", "--depth", "3"])
    assert "drop depth=" in capsys.readouterr().err


# -- through the plugin and the report ----------------------------------------------------------

SUITE = """
import pytest

@pytest.mark.competence(family="horn", levels=[2, 8], pairs=10)
def test_renderers(competence):
    pass

@pytest.mark.competence(family="horn", vary="distractors", depth=1, levels=[0, 4], pairs=4,
                        presentations=["original", "negated_query"])
def test_distractors(competence):
    pass
"""


@pytest.mark.slow
def test_marker_catches_the_if_then_reader_and_passes_ideal(pytester: pytest.Pytester):
    pytester.makepyfile(test_h=SUITE)
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--competence-model",
        "ref:ideal,ref:horn-if-then",
        "--competence-html",
        "r.html",
        "--competence-json",
        "r.json",
    )
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_renderers*ref:horn-if-then*",
            "*first failing level: rules=2*",
        ]
    )
    assert (pytester.path / "r.html").stat().st_size > 0


def test_level_zero_charts_on_a_log_axis():
    from pytest_competence.drawing import level_chart

    chart = level_chart("t", [0, 8, 32], [], y_label="acc")  # no distractor rules at n = 0
    assert ">0</text>" in chart and ">8</text>" in chart
