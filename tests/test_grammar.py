"""The grammar family checked by an independent reader and chart parser (systematicity paper, arXiv:2609.13948, §4.1).

``tests/grammar_solver.py`` reads the support pairs and the queries from the rendered prompt and
the hidden rules from ``Language.plain()``; it re-derives every shown output and every gold
answer by enumerating *all* derivations, so "exactly one derivation" is checked for every input
of every prompt drawn here.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammar_solver import applications, derivations, read_prompt, swap, translate
from pytest_competence.models.reference import reference_policy
from pytest_competence.strategies import FAMILIES, Grammar, InvalidArgument, family
from pytest_competence.strategies import __all__ as public

FAMILY = Grammar(variations=3)
coords = st.fixed_dictionaries(
    {
        "n": st.integers(1, 4),
        "index": st.integers(0, 10_000),
        "seed": st.integers(0, 2**31),
    }
)


def _plain(family: Grammar, prompt) -> dict:
    p = prompt.params
    return family.shown(
        n=p["n"], index=p["index"], seed=p["seed"], presentation=prompt.presentation
    ).rule.plain()


@settings(max_examples=40, deadline=None)
@given(coords, st.sampled_from([(4, 2, 4), (0, 1, 3), (8, 3, 6)]))
def test_reader_rederives_every_output_and_gold_with_one_derivation(c, opts) -> None:
    extra, queries, prims = opts
    fam = Grammar(variations=2, extra_support=extra, queries=queries, primitives=prims)
    task = fam.task(c["n"], c["index"], c["seed"])
    for prompt in fam.prompts(task, fam.presentations, **c):
        plain = _plain(fam, prompt)
        support, query = read_prompt(prompt.text)
        assert len(query) == queries and len(support) >= prims + c["n"] + extra
        for x, y in support:
            assert translate(plain, x) == y, (prompt.presentation, x)
        assert [translate(plain, x) for x in query] == json.loads(prompt.gold)
        assert prompt.params["queries"] == queries


@settings(max_examples=60, deadline=None)
@given(coords, st.data())
def test_any_token_string_has_at_most_one_derivation_and_the_interpreter_agrees(c, data) -> None:
    """Beyond the drawn inputs: strings of the task's words, derivable or not (primitives
    and function words alternate often enough that most are derivable)."""
    language = FAMILY.task(**c).rule
    plain = language.plain()
    prims, funcs = list(plain["primitives"]), [f[0] for f in plain["functions"]]
    size = data.draw(st.integers(0, 4))
    tokens = [data.draw(st.sampled_from(prims))]
    for _ in range(size):
        tokens += data.draw(
            st.sampled_from([[f] for f in funcs] + [[f, p] for f in funcs for p in prims])
        )
    text = " ".join(tokens)
    found = derivations(plain, text)
    assert len(found) <= 1, (text, found)
    if found:
        assert language.translate(text) == found[0]
    else:
        with pytest.raises(ValueError):
            language.translate(text)


@settings(max_examples=40, deadline=None)
@given(coords)
def test_support_is_instructive_and_queries_are_fresh_compositions(c) -> None:
    task = FAMILY.task(**c)
    plain = task.rule.plain()
    support, query = read_prompt(FAMILY.render(task))
    inputs = [x for x, _ in support]
    assert len(set(inputs + query)) == len(inputs) + len(query), "an input repeats"
    assert all(applications(plain, x) >= 2 for x in query)
    # lexical anchors: every primitive alone
    assert {x for x in inputs if len(x.split()) == 1} == set(plain["primitives"])
    colours = set(plain["primitives"].values())
    assert len(colours) == len(plain["primitives"]), "primitives share a colour"
    for k, (word, arity, template) in enumerate(plain["functions"]):
        # template resolver: the function alone on distinct primitives, arity and template read off
        size = 2 if arity == 1 else 3
        resolvers = [
            x.split()
            for x in inputs
            if len(x.split()) == size
            and x.split()[1] == word
            and len(set(x.split()[::2])) == size - 1
        ]
        assert resolvers, f"no resolver for {word!r}"
        for j in range(k + 1, len(plain["functions"])):
            if arity == 1 and plain["functions"][j][1] == 1:
                continue  # two 1-argument functions: no input leaves their order open
            other = swap(plain, k, j)
            assert any(
                word in x.split()
                and plain["functions"][j][0] in x.split()
                and applications(plain, x) == 2
                and derivations(other, x) != [y]
                for x, y in support
            ), f"no precedence proof for {word!r} < {j}"
    assert len(inputs) - len(colours) - len(plain["functions"]) >= FAMILY.extra_support


@settings(max_examples=40, deadline=None)
@given(coords)
def test_substitute_is_an_isomorphism(c) -> None:
    task = FAMILY.task(**c)
    for k in range(1, FAMILY.variations + 1):
        varied = FAMILY.variation(task, "substitute", k, **c)
        old, new = task.rule.plain(), varied.rule.plain()
        # φ and ψ, read positionally from the two plain forms (the renaming keeps positions)
        phi = dict(
            zip(
                list(old["primitives"]) + [f[0] for f in old["functions"]],
                list(new["primitives"]) + [f[0] for f in new["functions"]],
            )
        )
        psi = dict(zip(old["primitives"].values(), new["primitives"].values()))
        assert len(set(phi.values())) == len(phi) and len(set(psi.values())) == len(psi)
        assert set(phi).isdisjoint(phi.values()) and set(psi).isdisjoint(psi.values())
        assert [f[1:] for f in old["functions"]] == [f[1:] for f in new["functions"]]

        def image(text: str, mapping: dict) -> str:
            return " ".join(mapping[t] for t in text.split())

        assert varied.query == tuple(image(x, phi) for x in task.query)
        assert varied.answers == tuple(image(y, psi) for y in task.answers)
        assert varied.support == tuple((image(x, phi), image(y, psi)) for x, y in task.support)
        assert list(varied.answers) == [translate(new, x) for x in varied.query]


@settings(max_examples=40, deadline=None)
@given(coords)
def test_recompose_permutes_query_primitives_and_answers_are_the_interpreters(c) -> None:
    task = FAMILY.task(**c)
    plain = task.rule.plain()
    prims = set(plain["primitives"])
    shown = {x for x, _ in task.support}
    for k in range(1, FAMILY.variations + 1):
        varied = FAMILY.variation(task, "recompose", k, **c)
        assert varied.rule == task.rule and varied.support == task.support
        rho: dict[str, str] = {}
        for before, after in zip(task.query, varied.query):
            a, b = before.split(), after.split()
            assert len(a) == len(b)
            for s, t in zip(a, b):
                if s in prims:
                    assert rho.setdefault(s, t) == t and t in prims
                else:
                    assert s == t, "a function token moved"
        assert len(set(rho.values())) == len(rho), "not a bijection"
        assert list(varied.answers) == [translate(plain, x) for x in varied.query]
        if varied.query != task.query:
            assert shown.isdisjoint(varied.query)


def test_recompose_changes_almost_every_task() -> None:
    changed = [
        FAMILY.variation(t, "recompose", 1, n=n, index=i, seed=3).query != t.query
        for n in (2, 3, 4)
        for i in range(40)
        for t in [FAMILY.task(n, i, 3)]
    ]
    assert sum(changed) >= 0.95 * len(changed)


def test_languages_grow_with_the_level_and_tasks_are_deterministic() -> None:
    for n in (1, 2, 3, 4):
        task = FAMILY.task(n, 5, 9)
        assert len(task.rule.functions) == n
        assert task == Grammar(variations=3).task(n, 5, 9)
    again = Grammar(**FAMILY.options())
    assert [p.text for i in FAMILY.design(levels=[2], pairs=3, seed=2) for p in i.prompts] == [
        p.text for i in again.design(levels=[2], pairs=3, seed=2) for p in i.prompts
    ]


def test_all_template_kinds_occur() -> None:
    """Functions duplicate, reorder and delete, with one and two arguments."""
    seen = set()
    for i in range(300):
        for f in FAMILY.task(4, i, 1).rule.functions:
            t = f.template
            seen.add(
                (
                    f.arity,
                    "delete"
                    if len(set(t)) < f.arity
                    else "duplicate"
                    if len(t) > f.arity
                    else "reorder",
                )
            )
    assert {(1, "duplicate"), (2, "duplicate"), (2, "reorder"), (2, "delete")} <= seen


def test_system_prompt_is_app_c_with_the_query_count() -> None:
    fam = Grammar(queries=3)
    assert fam.system.startswith("Your task is to discover the grammatical rules")
    assert "presented with 3 new input sequence(s)" in fam.system
    assert "n_query" not in fam.system and "Rule A always evaluates before Rule C." in fam.system
    prompt = fam.design(levels=[1], pairs=1)[0].prompts[0]
    assert "JSON list of 3 string(s)" in prompt.text and "Answer:" in prompt.text


@settings(max_examples=30, deadline=None)
@given(coords)
def test_parser_round_trips_gold_and_normalises_whitespace_and_case(c) -> None:
    prompt = FAMILY.prompts(FAMILY.task(**c), ["original"], **c)[0]
    gold = json.loads(prompt.gold)
    assert FAMILY.parse(f"Thinking...\nAnswer: {prompt.gold}").answer == prompt.gold
    messy = json.dumps(["  " + g.lower().replace(" ", "\t ") + " " for g in gold])
    assert FAMILY.parse(f"Answer: {messy}").answer == prompt.gold
    tokens = json.dumps([g.split() for g in gold])
    assert FAMILY.parse(tokens).answer == prompt.gold


@pytest.mark.parametrize(
    "text",
    [
        "RED BLUE",
        "Answer: RED",
        "[1, 2]",
        '["RED", 3]',
        '[["RED", 1]]',
        "[null]",
        '[{"a": "RED"}]',
        None,
    ],
)
def test_parser_rejects_junk_as_invalid(text) -> None:
    parsed = FAMILY.parse(text)
    assert not parsed.valid and parsed.reason


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"variations": 0}, "variations"),
        ({"extra_support": -1}, "extra_support"),
        ({"extra_support": "4"}, "extra_support"),
        ({"queries": 0}, "queries"),
        ({"queries": True}, "queries"),
        ({"primitives": 2}, "primitives"),
        ({"primitives": 99}, "primitives"),
    ],
)
def test_bad_options_raise_naming_the_argument(kwargs, name) -> None:
    with pytest.raises(InvalidArgument, match=name):
        Grammar(**kwargs)


@pytest.mark.parametrize("levels", [[0], [5], ["2"], []])
def test_bad_levels_raise(levels) -> None:
    with pytest.raises(InvalidArgument, match="levels"):
        FAMILY.design(levels=levels, pairs=2)
    with pytest.raises(InvalidArgument, match="presentation"):
        FAMILY.design(levels=[1], pairs=2, presentations=["swap"])


def test_language_that_cannot_have_its_examples_raises_naming_the_options(monkeypatch) -> None:
    import pytest_competence.strategies.grammar as module

    monkeypatch.setattr(module, "build_examples", lambda *a, **k: None)
    with pytest.raises(InvalidArgument, match="extra_support or queries"):
        Grammar().task(1, 0, 0)


def test_registered_and_rebuilt_by_name() -> None:
    assert FAMILIES["grammar"] is Grammar and "Grammar" in public
    assert family("grammar", queries=3).options() == Grammar(queries=3).options()


def test_oracle_solves_every_variation_and_surface_fails_substitution() -> None:
    """ref:oracle answers every prompt; ref:surface (the original task's answers on other
    types) passes reordering and fails every substitution, whose colours are fresh."""
    fam = Grammar(variations=2)
    prompts = [p for item in fam.design(levels=[1, 4], pairs=3, seed=5) for p in item.prompts]
    oracle = reference_policy("oracle", "ref:oracle").generate(prompts)
    surface = reference_policy("surface", "ref:surface").generate(prompts)
    for prompt, right, shallow in zip(prompts, oracle, surface):
        assert fam.parse(right).answer == prompt.gold
        kind = prompt.params["isomorphism"]
        if kind in ("original", "reorder"):
            assert fam.parse(shallow).answer == prompt.gold
        elif kind == "substitute":
            assert fam.parse(shallow).answer != prompt.gold


def test_example_suite_passes_the_oracle_and_fails_the_surface_policy(
    pytester: pytest.Pytester,
) -> None:
    """examples/test_grammar.py end to end: the interpreter passes every variation; the policy
    tied to the original symbols fails the suites with substitution."""
    from plugin_helpers import run_example

    result = run_example(pytester, "test_grammar", "ref:oracle,ref:surface")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        ["*test_grammar?ref:oracle?*PASS*", "*test_grammar?ref:surface?*FAILED*"]
    )
