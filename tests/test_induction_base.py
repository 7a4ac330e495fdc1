"""The shared half of the rule-induction families: design, variations, answer format, parser."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_competence.strategies import InvalidArgument
from pytest_competence.strategies._induction import RuleInduction, Task, canonical, last_json_list


class Offset(RuleInduction):
    """f(x) = x + n over integers; "negate" maps x ↦ −x on inputs and outputs (an isomorphism)."""

    name = "offset"
    isomorphisms = ("reorder", "negate")
    levels = (1, 5)
    system = "Add."

    def task(self, n: int, index: int, seed: int) -> Task:
        rng = np.random.default_rng([seed, n, index])
        xs = rng.choice(100, size=6, replace=False).tolist()
        return Task(
            n, tuple((x, x + n) for x in xs[:4]), tuple(xs[4:]), tuple(x + n for x in xs[4:])
        )

    def vary(self, task: Task, kind: str, rng: np.random.Generator) -> Task:
        assert kind == "negate"
        return Task(
            -task.rule,
            tuple((-x, -y) for x, y in task.support),
            tuple(-x for x in task.query),
            tuple(-y for y in task.answers),
        )

    def render(self, task: Task) -> str:
        return (
            "\n".join(f"{x} -> {y}" for x, y in task.support)
            + "\n"
            + " ".join(f"{x} -> ?" for x in task.query)
        )

    def element(self, value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{value!r} is not an integer")
        return value


def test_design_expands_each_type_to_its_variations() -> None:
    items = Offset(variations=3).design(levels=[1, 2], pairs=2, seed=4)
    assert len(items) == 4
    names = [p.presentation for p in items[0].prompts]
    assert names == [
        "original",
        "reorder:1",
        "reorder:2",
        "reorder:3",
        "negate:1",
        "negate:2",
        "negate:3",
    ]
    assert {p.instance_id for p in items[0].prompts} == {"offset/seed=4/n=1/0"}


def test_variations_do_not_depend_on_which_types_are_asked() -> None:
    family = Offset(variations=2)
    alone = family.design(levels=[3], pairs=3, seed=1, presentations=["negate"])
    both = family.design(levels=[3], pairs=3, seed=1)
    for a, b in zip(alone, both):
        shown = {p.presentation: p.text for p in b.prompts}
        assert all(shown[p.presentation] == p.text for p in a.prompts)


def test_reorder_permutes_query_answers_with_the_queries() -> None:
    family = Offset(variations=5)
    for item in family.design(levels=[2], pairs=5, seed=2):
        for p in item.prompts:
            task = family.shown(n=2, index=p.params["index"], seed=2, presentation=p.presentation)
            assert json.loads(p.gold) == [x + 2 * (1 if task.rule > 0 else -1) for x in task.query]
            assert family.render(task) == p.text


def test_gold_parses_back_to_itself() -> None:
    family = Offset()
    for item in family.design(levels=[1], pairs=3, seed=0):
        for p in item.prompts:
            assert family.parse(f"Thinking... Answer: {p.gold}").answer == p.gold


@given(st.lists(st.integers(-50, 50), max_size=6), st.text(max_size=20))
def test_the_last_list_is_the_answer(values: list[int], noise: str) -> None:
    noise = noise.replace("[", "(")
    text = f"I first try [0, 0] and then{noise}\nAnswer: {json.dumps(values)}"
    assert last_json_list(text) == values
    assert Offset().parse(text).answer == canonical(values)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no list here", "no JSON list"),
        ("Answer: [1, 'x']", "no JSON list"),  # single quotes are not JSON: nothing parses
        ('Answer: [1, "x"]', "unreadable list entry"),
        (
            "Answer: [True]",
            "unreadable list entry",
        ),  # read as JSON true, then rejected as not an int
    ],
)
def test_junk_is_invalid_with_its_reason(text: str, reason: str) -> None:
    parsed = Offset().parse(text)
    assert parsed.answer is None and reason in parsed.reason


def test_non_text_is_invalid() -> None:
    assert not Offset().parse(None).valid


@pytest.mark.parametrize(
    ("kwargs", "names"),
    [
        ({"levels": [0]}, "levels[]"),
        ({"levels": []}, "levels"),
        ({"pairs": 0}, "pairs"),
        ({"seed": -1}, "seed"),
        ({"presentations": ["mirror"]}, "mirror"),
    ],
)
def test_bad_design_arguments_name_themselves(kwargs: dict, names: str) -> None:
    args = {"levels": [1], "pairs": 1, "seed": 0, **kwargs}
    with pytest.raises(InvalidArgument, match=names.replace("[", r"\[").replace("]", r"\]")):
        Offset().design(**args)


def test_variations_must_be_positive() -> None:
    with pytest.raises(InvalidArgument, match="variations"):
        Offset(variations=0)


def _induction_families() -> list[RuleInduction]:
    from pytest_competence.strategies import FAMILIES

    return [cls() for cls in FAMILIES.values() if issubclass(cls, RuleInduction)]


@pytest.mark.parametrize("family", _induction_families(), ids=lambda f: f.name)
def test_strategies_draw_tasks_whose_answers_parse_back(family: RuleInduction) -> None:
    from hypothesis import settings

    @settings(max_examples=15, deadline=None)
    @given(family.strategies.tasks(presentation=family.strategies.presentations()))
    def check(task: Task) -> None:
        gold = canonical([family.element(a) for a in task.answers])
        assert family.parse(f"Answer: {gold}").answer == gold
        assert family.render(task)  # every drawn presentation renders

    check()


@pytest.mark.parametrize("family", _induction_families(), ids=lambda f: f.name)
def test_strategies_shrink_toward_the_smallest_level_and_the_original(
    family: RuleInduction,
) -> None:
    from hypothesis import find, settings

    lo, hi = family.levels
    task = find(family.strategies.tasks(), lambda t: True, settings=settings(database=None))
    assert task == family.task(lo, 0, 0)
    name = find(family.strategies.presentations(), lambda p: True, settings=settings(database=None))
    assert name == "original"
    with pytest.raises(InvalidArgument, match="max_n"):
        family.strategies.tasks(max_n=hi + 1).example()
