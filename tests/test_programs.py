"""The ``programs`` family (systematicity paper, arXiv:2609.13948, §4.3): oracle, length pools, isomorphisms, parser, policy."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from programs_solver import Undefined, execute, read_prompt
from pytest_competence.models.reference import reference_policy
from pytest_competence.strategies import FAMILIES, InvalidArgument, Programs, family
from pytest_competence.strategies.programs import HINT, SUBSTITUTE
from pytest_competence.strategies.programs._ops import (
    DIGITS,
    OPERATIONS,
    draw_program,
    run,
    substitute,
)

levels = st.integers(1, 5)
indices = st.integers(0, 10_000)
seeds = st.integers(0, 2**31)


def _psi(mapping: tuple[int, ...], xs: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(mapping[x] for x in xs)


def test_the_paper_episode() -> None:
    """Seeds/002 §4.3's sample episode: swap the halves, then remove the first element."""
    program = (("swap",), ("remove", 0))
    episode = [
        ([1, 2, 3, 4], [4, 1, 2]),
        ([1, 8, 3], [3, 1]),
        ([8, 9, 1, 2, 4], [2, 4, 8, 9]),
        ([0, 1], [0]),
        ([3, 3, 4, 5, 5, 6], [5, 6, 3, 3, 4]),
        ([2], []),
        ([7, 3, 1, 5, 2], [5, 2, 7, 3]),
    ]
    for xs, ys in episode:
        assert run(program, xs) == ys
        assert execute(program, xs) == ys


@given(levels, indices, seeds, st.sampled_from([(6, 3), (2, 1), (9, 5)]))
def test_reader_rederives_every_shown_output_and_gold(
    n: int, index: int, seed: int, sizes: tuple[int, int]
) -> None:
    fam = Programs(variations=2, support=sizes[0], queries=sizes[1])
    task = fam.task(n, index, seed)
    for prompt in fam.prompts(task, fam.presentations, n=n, index=index, seed=seed):
        shown = fam.shown(n=n, index=index, seed=seed, presentation=prompt.presentation)
        support, queries = read_prompt(prompt.text)
        assert len(support) == sizes[0] and len(queries) == sizes[1]
        for xs, ys in support:
            assert execute(shown.rule, xs) == ys
        assert any(xs != ys for xs, ys in support)  # never the identity on what is shown
        assert json.loads(prompt.gold) == [execute(shown.rule, q) for q in queries]


@given(levels, st.integers(0, 2**31))
def test_drawn_programs_are_total_on_every_input_length(n: int, seed: int) -> None:
    program = draw_program(n, 2, 10, np.random.default_rng(seed))
    assert len(program) == n and {step[0] for step in program} <= set(OPERATIONS)
    for length in range(2, 11):
        try:
            out = execute(program, list(range(length)))
        except Undefined as exc:  # pragma: no cover - the failure message is the point
            pytest.fail(f"{program} undefined on a list of {length}: {exc}")
        assert out, "a drawn program never empties a list"


@given(levels, indices, seeds)
def test_length_pools_are_disjoint_and_surround_the_queries(n: int, index: int, seed: int) -> None:
    fam = Programs(variations=1)
    prompt = fam.prompts(fam.task(n, index, seed), ["original"], n=n, index=index, seed=seed)[0]
    support, queries = read_prompt(prompt.text)
    shown = {len(x) for x, _ in support}
    asked = {len(q) for q in queries}
    assert not shown & asked
    assert min(shown) < min(asked) and max(shown) > max(asked)
    assert all(s < min(asked) or s > max(asked) for s in shown)  # none between query lengths
    context = fam.task(n, index, seed).context
    pools = [set(context.short), set(context.query), set(context.long)]
    assert not (pools[0] & pools[1] or pools[1] & pools[2] or pools[0] & pools[2])
    assert max(pools[0]) < min(pools[1]) and max(pools[1]) < min(pools[2])
    assert asked <= pools[1] and shown <= pools[0] | pools[2]


@given(levels, indices, seeds, st.integers(1, 5))
def test_every_substitution_is_an_isomorphism(n: int, index: int, seed: int, k: int) -> None:
    fam = Programs(variations=5)
    task = fam.task(n, index, seed)
    varied = fam.variation(task, SUBSTITUTE, k, n=n, index=index, seed=seed)
    psi = varied.context.substitution
    assert sorted(psi) == list(range(DIGITS)) and psi != tuple(range(DIGITS))
    assert varied.query == tuple(_psi(psi, q) for q in task.query)  # σ = id
    assert varied.answers == tuple(_psi(psi, a) for a in task.answers)
    assert varied.support == tuple((_psi(psi, x), _psi(psi, y)) for x, y in task.support)
    # Only inserted values move; positions, lengths and offsets stay.
    for before, after in zip(task.rule, varied.rule):
        if before[0] == "insert":
            assert after == ("insert", before[1], psi[before[2]])
        else:
            assert after == before


@given(
    levels,
    st.integers(0, 2**31),
    st.permutations(range(DIGITS)),
    st.lists(st.integers(0, DIGITS - 1), min_size=2, max_size=10),
)
def test_substituted_program_computes_psi_f_psi_inverse(
    n: int, seed: int, psi: list[int], xs: list[int]
) -> None:
    program = draw_program(n, 2, 10, np.random.default_rng(seed))
    assert execute(substitute(program, psi), [psi[x] for x in xs]) == [
        psi[y] for y in execute(program, xs)
    ]


@given(levels, indices, seeds, st.integers(1, 3))
def test_reorder_permutes_the_answers_with_the_queries(
    n: int, index: int, seed: int, k: int
) -> None:
    fam = Programs(variations=3)
    task = fam.task(n, index, seed)
    varied = fam.variation(task, "reorder", k, n=n, index=index, seed=seed)
    assert sorted(varied.support) == sorted(task.support)
    answer_of = dict(zip(task.query, task.answers))
    assert sorted(varied.query) == sorted(task.query)
    assert varied.answers == tuple(answer_of[q] for q in varied.query)


def test_design_is_deterministic_and_variations_differ() -> None:
    one = Programs(variations=3).design(levels=[1, 5], pairs=4, seed=7)
    two = Programs(variations=3).design(levels=[1, 5], pairs=4, seed=7)
    assert [p.text for i in one for p in i.prompts] == [p.text for i in two for p in i.prompts]
    for item in one:
        texts = [p.text for p in item.prompts if p.presentation.startswith(SUBSTITUTE)]
        assert len(set(texts)) == len(texts)


def test_prompt_states_the_answer_format_and_the_hint() -> None:
    plain, hinted = Programs(), Programs(hint=True, support=4, queries=2)
    assert HINT not in plain.system and plain.system.endswith("corresponding output lists.")
    assert "6 examples" in plain.system and "3 new input list(s)" in plain.system
    assert hinted.system.endswith(HINT) and "4 examples" in hinted.system
    assert all(f"- {op}: " in HINT for op in OPERATIONS)
    prompt = hinted.design(levels=[2], pairs=1, seed=0)[0].prompts[0]
    assert "JSON list of lists" in prompt.text and "Answer:" in prompt.text
    assert prompt.system == hinted.system
    assert Programs(**hinted.options()).options() == hinted.options()
    assert FAMILIES["programs"] is Programs and family("programs", hint=True).hint


def test_parser_round_trips_gold_and_rejects_junk() -> None:
    fam = Programs(variations=1)
    for item in fam.design(levels=[1, 3, 5], pairs=3, seed=2):
        for p in item.prompts:
            assert fam.parse(f"I think... [[0]] no.\nAnswer: {p.gold}").answer == p.gold
            spaced = json.dumps(json.loads(p.gold))  # spaces, as models write lists
            assert fam.parse(spaced).answer == p.gold
    for junk in [
        "no list here",
        "[1, 2, 3]",
        '[[1, "a"]]',
        "[[1.5]]",
        "[[true]]",
        "[[1], 2]",
        "Answer: [[1, 2",
    ]:
        parsed = fam.parse(junk)
        assert not parsed.valid and parsed.reason, junk
    assert not fam.parse(None).valid
    assert fam.parse("[]").answer == "[]"  # valid, and wrong for every task (queries >= 1)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"support": 1}, "support"),
        ({"support": "6"}, "support"),
        ({"queries": 0}, "queries"),
        ({"queries": True}, "queries"),
        ({"hint": "yes"}, "hint"),
        ({"variations": 0}, "variations"),
    ],
)
def test_bad_options_name_the_argument(kwargs: dict, name: str) -> None:
    with pytest.raises(InvalidArgument, match=f"{name}="):
        Programs(**kwargs)


def test_bad_design_arguments_name_the_argument() -> None:
    fam = Programs()
    with pytest.raises(InvalidArgument, match="levels"):
        fam.design(levels=[6], pairs=1)
    with pytest.raises(InvalidArgument, match="pairs"):
        fam.design(levels=[1], pairs=0)
    with pytest.raises(InvalidArgument, match="presentation"):
        fam.design(levels=[1], pairs=1, presentations=["shift"])
    with pytest.raises(InvalidArgument, match="kind="):
        fam.vary(fam.task(1, 0, 0), "rotate", np.random.default_rng(0))
    with pytest.raises(InvalidArgument, match="has no option .digits.; its options are"):
        family("programs", digits=5)


def test_copy_nearest_is_caught_by_the_length_pools() -> None:
    """The copying shortcut answers each query with the nearest-length support output; no
    support example shares a query's length, so it never copies an analogous example."""
    fam = Programs(variations=1)
    policy = reference_policy("programs-copy-nearest", "ref:programs-copy-nearest")
    solved = tasks = 0
    for item in fam.design(levels=[1, 2, 3, 4, 5], pairs=40, seed=11):
        original = item.prompts[0]
        support, queries = read_prompt(original.text)
        for q in queries:  # the nearest example is always of another length
            assert min(abs(len(x) - len(q)) for x, _ in support) >= 1
        answer = policy.generate([original])[0]
        assert fam.parse(answer).valid
        solved += fam.parse(answer).answer == original.gold
        tasks += 1
    assert solved <= 0.02 * tasks


def _analogy(support: list[tuple[list[int], list[int]]], query: list[int]) -> list[int]:
    """The positional-analogy shortcut systematicity paper, arXiv:2609.13948, §4.3 guards against: learn, from the support
    examples of the query's own length, which input position (or constant) each output position
    copies, and apply that map; with no same-length example, copy the nearest-length output."""
    same = [(x, y) for x, y in support if len(x) == len(query)]
    if not same:
        return min(support, key=lambda pair: abs(len(pair[0]) - len(query)))[1]
    out = []
    for j in range(len(same[0][1])):
        sources = [i for i in range(len(query)) if all(x[i] == y[j] for x, y in same)]
        out.append(query[sources[0]] if sources else same[0][1][j])
    return out


def test_without_the_length_pools_a_positional_analogy_would_solve_the_tasks() -> None:
    """What the pools prevent: given three examples at each query length, the analogy solves
    most tasks; shown only the drawn support (other lengths), it solves next to none."""
    fam = Programs(variations=1)
    rng = np.random.default_rng(0)
    with_pools = without = 0
    items = fam.design(levels=[1, 2, 3, 4, 5], pairs=30, seed=3)
    for item in items:
        support, queries = read_prompt(item.prompts[0].text)
        rule, gold = item.instance.rule, json.loads(item.prompts[0].gold)
        with_pools += [_analogy(support, q) for q in queries] == gold
        extra = [rng.integers(0, DIGITS, len(q)).tolist() for q in queries for _ in range(3)]
        leaked = support + [(x, execute(rule, x)) for x in extra]
        without += [_analogy(leaked, q) for q in queries] == gold
    assert with_pools <= 0.02 * len(items) and without >= 0.8 * len(items), (with_pools, without)


def test_example_suite_passes_the_oracle_and_fails_the_copier(pytester: pytest.Pytester) -> None:
    """examples/test_programs.py end to end: the interpreter passes, nearest-copying fails."""
    from plugin_helpers import run_example

    result = run_example(pytester, "test_programs", "ref:oracle,ref:programs-copy-nearest")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*::test_programs?ref:oracle?  PASS*",
            "*::test_programs?ref:programs-copy-nearest?  FAIL*",
        ]
    )
