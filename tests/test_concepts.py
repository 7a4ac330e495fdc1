"""Boolean concept learning (systematicity paper, arXiv:2609.13948, §4.4) checked against an independent text-level reader.

``tests/concepts_solver.py`` reads only the rendered prompt (and, where the rule itself is needed,
the rule written in the prompt grammar's notation): it re-derives every support label and gold
answer, re-runs the ideal observer with its own enumeration of the grammar, and finds the
feature/value bijection that carries each variation back onto the original task.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from concepts_solver import evaluate, isomorphisms, observe, parse, predict
from pytest_competence.strategies import FAMILIES, Concepts, InvalidArgument, Parsed, family
from pytest_competence.strategies.concepts import MAX_QUERIES, ideal_observer, rebind
from pytest_competence.strategies.concepts._logic import FEATURES, rule_mask

LEVELS = [1, 2, 3, 4, 5]
FAMILY = Concepts()

tasks = st.tuples(st.integers(1, 5), st.integers(0, 10**6), st.integers(0, 2**32 - 1))


@pytest.fixture(scope="module")
def items():
    return FAMILY.design(levels=LEVELS, pairs=10, seed=3)


def test_registered_by_name():
    assert FAMILIES["concepts"] is Concepts
    assert Concepts.name == Concepts.__name__.lower()
    built = family("concepts", queries=4, variations=3)
    assert repr(built) == "Concepts(variations=3, queries=4)"
    assert repr(Concepts(**built.options())) == repr(built)
    assert "presented with 4 new object(s)" in built.system
    assert "does not contain a not() operation" in built.system


def test_every_label_rederived_from_the_text_and_the_rule(items):
    for item in items:
        for prompt in item.prompts:
            params = prompt.params
            shown = FAMILY.shown(
                n=params["n"],
                index=params["index"],
                seed=params["seed"],
                presentation=prompt.presentation,
            )
            rule, concept = FAMILY.expression(shown), parse(prompt.text)
            assert rule.count("is_") == params["n"]
            assert all(evaluate(rule, concept, x) == y for x, y in concept.support), rule
            gold = [evaluate(rule, concept, x) for x in concept.query]
            assert json.dumps(gold, separators=(",", ":")) == prompt.gold, prompt.presentation


def test_ideal_observer_from_the_text_solves_every_task(items):
    """The support singles out one shortest rule, of length n, and it answers the gold."""
    for item in items:
        for prompt in item.prompts:
            if prompt.presentation not in ("original", "rebind:1"):
                continue  # every other variation is checked isomorphic to these below
            n, concept = prompt.params["n"], parse(prompt.text)
            best, tables = observe(concept, n)
            assert best == n and len(tables) == 1, (item.id, prompt.presentation)
            assert json.dumps(predict(concept, tables[0]), separators=(",", ":")) == prompt.gold


def test_package_ideal_observer_agrees(items):
    for item in items:
        task, n = item.instance, item.params["n"]
        assert ideal_observer(task.support, n) == (n, (rule_mask(task.rule),))
        shorter, found = ideal_observer(task.support, n - 1)
        assert shorter == n and found == ()  # nothing shorter fits


def test_every_variation_is_an_isomorphism(items):
    """A bijection of features and values carries the original onto each variation, and the
    variation's gold is the original's permuted by the induced σ (ψ is the identity)."""
    changed = 0
    for item in items:
        original = parse(item.prompts[0].text)
        gold = json.loads(item.prompts[0].gold)
        for prompt in item.prompts[1:]:
            shown = parse(prompt.text)
            sigmas = isomorphisms(original, shown)
            assert sigmas, (item.id, prompt.presentation)
            var_gold = json.loads(prompt.gold)
            for sigma in sigmas:
                assert [var_gold[j] for j in sigma] == gold, (item.id, prompt.presentation)
            if prompt.params["isomorphism"] == "reorder":
                assert shown.features == original.features
                assert sorted(shown.support) == sorted(original.support)
            else:
                changed += shown.features != original.features or sorted(shown.support) != sorted(
                    original.support
                )
    rebinds = sum(p.params["isomorphism"] == "rebind" for i in items for p in i.prompts)
    assert changed >= 0.9 * rebinds


def test_support_is_boundary_pairs_and_queries_are_unseen(items):
    for item in items:
        concept = parse(item.prompts[0].text)
        labels = dict(concept.support)
        assert len(labels) == len(concept.support)  # no object shown twice
        for x, y in concept.support:
            assert any(sum(a != b for a, b in zip(x, z)) == 1 and labels[z] != y for z in labels)
        assert len(set(concept.query)) == len(concept.query) == FAMILY.queries
        assert not set(concept.query) & set(labels)


def test_surface_answers_fail_on_many_rebinds(items):
    """Answering a variation with the original's gold (a surface policy) is often wrong."""
    wrong = Counter()
    for item in items:
        for prompt in item.prompts[1:]:
            wrong[prompt.params["isomorphism"]] += prompt.gold != item.prompts[0].gold
    rebinds = len(items) * FAMILY.variations
    assert wrong["rebind"] >= 0.3 * rebinds and wrong["reorder"] >= 0.3 * rebinds


@settings(max_examples=25, deadline=None)
@given(tasks)
def test_any_task_has_a_unique_shortest_rule(params):
    n, index, seed = params
    task = FAMILY.task(n, index, seed)
    concept = parse(FAMILY.render(task))
    best, tables = observe(concept, n)
    assert best == n and len(tables) == 1
    assert tuple(predict(concept, tables[0])) == task.answers


@settings(max_examples=25, deadline=None)
@given(
    tasks,
    st.permutations(range(3)),
    st.lists(st.permutations(range(3)), min_size=3, max_size=3),
    st.permutations(list(FEATURES)),
)
def test_any_rebinding_preserves_the_answers(params, slots, values, features):
    task = FAMILY.task(*params)
    moved = rebind(task, slots, values, features[:3])
    assert moved.answers == task.answers
    assert [y for _, y in moved.support] == [y for _, y in task.support]
    original, shown = parse(FAMILY.render(task)), parse(FAMILY.render(moved))
    assert tuple(range(len(task.query))) in isomorphisms(original, shown)
    rule = FAMILY.expression(moved)
    assert [evaluate(rule, shown, x) for x in shown.query] == list(moved.answers)


@settings(max_examples=25, deadline=None)
@given(tasks, st.integers(1, 10**6))
def test_vary_keeps_the_answer_multiset(params, stream):
    task = FAMILY.task(*params)
    varied = FAMILY.vary(task, "rebind", np.random.default_rng(stream))
    assert sorted(varied.answers) == sorted(task.answers)
    assert isomorphisms(parse(FAMILY.render(task)), parse(FAMILY.render(varied)))


def test_same_rules_whatever_the_query_count():
    few = Concepts(queries=2)
    for n in LEVELS:
        for index in range(5):
            a, b = FAMILY.task(n, index, 11), few.task(n, index, 11)
            assert (a.rule, a.support, a.context) == (b.rule, b.support, b.context)
            assert len(b.query) == 2


def test_same_prompts_in_a_fresh_process(items):
    code = (
        "import json; from pytest_competence.strategies import Concepts; "
        "print(json.dumps([p.text + p.gold for i in Concepts().design(levels=[1, 2, 3, 4, 5],"
        " pairs=10, seed=3) for p in i.prompts]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "123", "PATH": ""},
    ).stdout
    assert json.loads(out) == [p.text + p.gold for i in items for p in i.prompts]


def test_parser_round_trips_gold_and_rejects_junk(items):
    for prompt in items[0].prompts + items[-1].prompts:
        assert FAMILY.parse(f"Thinking [1, 2]...\nAnswer: {prompt.gold}") == Parsed(prompt.gold)
    assert FAMILY.parse('Answer: ["wudsy", "Not  Wudsy", "TRUE", false]') == Parsed(
        "[true,false,true,false]"
    )
    assert FAMILY.parse("Answer: [True, False]") == Parsed("[true,false]")
    for junk in [
        "Answer: yes",
        "Answer: [1, 0]",
        'Answer: ["maybe"]',
        "Answer: [null]",
        "Answer: [[true]]",
        'Answer: [{"x": true}]',
        "",
    ]:
        parsed = FAMILY.parse(junk)
        assert parsed.answer is None and parsed.reason, junk
    assert FAMILY.parse(None).answer is None


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"queries": 0}, "queries"),
        ({"queries": MAX_QUERIES + 1}, "queries"),
        ({"queries": "6"}, "queries"),
        ({"queries": True}, "queries"),
        ({"queries": 2.0}, "queries"),
        ({"variations": 0}, "variations"),
    ],
)
def test_bad_options_name_the_argument(kwargs, name):
    with pytest.raises(InvalidArgument, match=name):
        Concepts(**kwargs)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"levels": [0]}, "levels"),
        ({"levels": [6]}, "levels"),
        ({"levels": "3"}, "levels"),
        ({"levels": []}, "levels"),
        ({"levels": [True]}, "levels"),
        ({"pairs": 0}, "pairs"),
        ({"presentations": ["shuffle"]}, "shuffle"),
    ],
)
def test_bad_design_arguments_name_the_argument(kwargs, name):
    args = {"levels": [1], "pairs": 2, **kwargs}
    with pytest.raises(InvalidArgument, match=name):
        FAMILY.design(**args)


def test_bad_task_arguments():
    with pytest.raises(InvalidArgument, match="n="):
        FAMILY.task(6, 0, 1)
    with pytest.raises(InvalidArgument, match="recombine"):
        FAMILY.vary(FAMILY.task(1, 0, 1), "recombine", np.random.default_rng(0))


@pytest.mark.parametrize(
    "slots, values, context, name",
    [
        ([0, 0, 1], [[0, 1, 2]] * 3, ["shape", "color", "size"], "slots"),
        ([0, 1, 2], [[0, 1, 2], [2, 2, 0], [0, 1, 2]], ["shape", "color", "size"], "values\\[1\\]"),
        ([0, 1, 2], [[0, 1, 2]] * 3, ["shape", "shape", "size"], "context"),
        ([0, 1, 2], [[0, 1, 2]] * 3, ["shape", "hue", "size"], "context"),
    ],
)
def test_bad_rebinding_names_the_argument(slots, values, context, name):
    with pytest.raises(InvalidArgument, match=name):
        rebind(FAMILY.task(2, 0, 1), slots, values, context)


def test_balanced_query_sets_catch_the_constant_answer():
    """Uniform query draws leave many sets all one label, which "all true"/"all false" solves;
    balanced=True (beyond the paper) draws half of each, and the text still determines every
    label (the independent reader re-derives them)."""
    from pytest_competence.engine.evaluate import evaluate as ask
    from pytest_competence.models import resolve_model

    def solved(fam: Concepts, value: str) -> float:
        design = fam.design(levels=LEVELS, pairs=20, seed=1, presentations=["original"])
        ev = ask(fam, design, resolve_model(f"ref:concepts-constant?value={value}"))
        return sum(row[0].correct for row in ev.observations) / len(design)

    assert solved(Concepts(), "true") + solved(Concepts(), "false") > 0.2
    balanced = Concepts(balanced=True, queries=5)
    assert solved(balanced, "true") == solved(balanced, "false") == 0.0
    assert repr(balanced) == "Concepts(variations=5, queries=5, balanced=True)"
    assert repr(Concepts(**balanced.options())) == repr(balanced)
    for item in balanced.design(levels=LEVELS, pairs=6, seed=2):
        for prompt in item.prompts:
            gold = json.loads(prompt.gold)
            assert sorted([gold.count(True), gold.count(False)]) == [2, 3]
            params = prompt.params
            shown = balanced.shown(
                n=params["n"],
                index=params["index"],
                seed=params["seed"],
                presentation=prompt.presentation,
            )
            rule, concept = balanced.expression(shown), parse(prompt.text)
            assert [evaluate(rule, concept, x) for x in concept.query] == gold
