"""The ordering generator checked against an independent text-level solver (CBE paper, arXiv:2610.22894, §4.1, App. B.1).

``tests/solver.py`` reads only the rendered prompt and has its own phrase table, transcribed from the
paper's catalog; every property below is recovered from the *text* (names line, premise order,
rewritten premises, the question) and compared with what the generator claims (``Prompt.gold``,
the oracle ``y*(z)``, the view it says it rendered), so a bug in the renderer, a vocabulary whose
phrases are not converses, or a sampler that drifts from App. B.1 shows up as a disagreement.

The design properties (balance, names lines, protocols, identical instances, distractors, bad
input) are in test_ordering_design.py; the reading helpers in ordering_reader.py.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ordering_reader import (
    ALL_PRESENTATIONS,
    CONTROLS,
    FLIP,
    FLIPPING,
    PRESERVING,
    fam,
    forward_phrase,
    latent,
)
from pytest_competence.strategies import (
    CATALOG,
    Item,
    Ordering,
    OrderingInstance,
    OrderingView,
)
from solver import RELATIONS, MalformedPrompt, Undetermined, parse, solve

# --------------------------------------------------------------------------------------------
# The solver itself: it must reject what it cannot decide and follow the paper's wording
# --------------------------------------------------------------------------------------------

PAPER_EXAMPLE = (
    "There are 8 people standing in some order. Their names are ['Heather', 'Charles', 'Joseph', "
    "'James', 'Andrew', 'Michelle', 'Mark', 'Donna']. Their standing order can be described by the "
    "following set of rules: James is in front of Andrew. Joseph is in front of James. Mark is "
    "behind Donna. Heather is in front of Charles. Donna is in front of Joseph. Andrew is in front "
    "of Michelle. Charles is in front of Mark. Is Heather in front of Michelle? Provide your answer "
    "only as yes or no. Answer:"
)


def test_solver_table_has_the_31_catalog_relations_in_six_families():
    assert len(RELATIONS) == 31
    groups = [r.group for r in RELATIONS]
    assert list(dict.fromkeys(groups)) == [
        "spatial line",
        "vertical",
        "temporal",
        "comparative",
        "rank and social",
        "nonce",
    ]
    assert [groups.count(g) for g in dict.fromkeys(groups)] == [10, 2, 4, 7, 6, 2]


def test_solver_on_the_papers_verbatim_prompt():
    # As printed, "Mark is behind Donna" gives Mark two predecessors (Charles and Donna): the
    # premises are not a chain and Heather vs Michelle is not determined. With the rewritten premise
    # worded as the converse with swapped arguments ("Donna is behind Mark"), it is a chain.
    with pytest.raises(MalformedPrompt, match="chains"):
        solve(PAPER_EXAMPLE)
    fixed = PAPER_EXAMPLE.replace("Mark is behind Donna", "Donna is behind Mark")
    assert solve(fixed) == "yes"
    # The generator renders exactly this text from the corresponding instance and view.
    chain = ("Heather", "Charles", "Mark", "Donna", "Joseph", "James", "Andrew", "Michelle")
    z = OrderingInstance(n=8, index=0, seed=1, chain=chain, query=(0, 7), direction="forward")
    names = ["Heather", "Charles", "Joseph", "James", "Andrew", "Michelle", "Mark", "Donna"]
    order = [5, 4, 2, 0, 3, 6, 1]  # links (a_i, a_{i+1}) in the order the rules list them
    view = OrderingView(tuple(chain.index(x) for x in names), tuple(order), frozenset({2}))
    assert Ordering().render(z, view) == fixed


@pytest.mark.parametrize(
    "mutation, error",
    [
        (lambda t: t.replace("There are 8", "There are 9"), "names line has 8"),
        (lambda t: t.replace("'Donna']", "'Donna', 'Zed']"), "names line has 9"),
        (
            lambda t: t.replace("James is in front of Andrew", "Jimbo is in front of Andrew"),
            "not in the names list",
        ),
        (
            lambda t: t.replace("James is in front of Andrew", "James is near Andrew"),
            "unknown relation",
        ),
        (lambda t: t.replace("Donna is behind Mark", "Donna is in front of Mark"), "chains|cycle"),
        (
            lambda t: t.replace("Is Heather in front", "Is Heather north"),
            "unknown relation|one catalog",
        ),
        (
            lambda t: t.replace("James is in front of Andrew", "James is north of Andrew"),
            "one catalog relation",
        ),
        (lambda t: t.replace(" Answer:", ""), "instruction"),
        (lambda t: t.replace("Andrew is in front of Michelle. ", ""), "chains|no premise"),
    ],
)
def test_solver_rejects_malformed_text(mutation, error):
    fixed = PAPER_EXAMPLE.replace("Mark is behind Donna", "Donna is behind Mark")
    with pytest.raises(MalformedPrompt, match=error):
        solve(mutation(fixed))


def test_solver_reads_converse_negation_and_questions_semantically():
    base = PAPER_EXAMPLE.replace("Mark is behind Donna", "Donna is behind Mark")
    assert (
        solve(base.replace("Is Heather in front of Michelle?", "Is Heather behind Michelle?"))
        == "no"
    )
    assert (
        solve(base.replace("Is Heather in front of Michelle?", "Is Michelle behind Heather?"))
        == "yes"
    )
    assert (
        solve(base.replace("Is Heather in front of Michelle?", "Is Michelle in front of Heather?"))
        == "no"
    )
    negated = base.replace("Donna is behind Mark", "Donna is not in front of Mark")
    assert solve(negated) == "yes"
    # A premise worded with the converse phrase but without swapping the arguments breaks the chain.
    with pytest.raises(MalformedPrompt):
        solve(base.replace("Donna is behind Mark", "Mark is behind Donna"))
    # Two chains: a query across them is undetermined, not guessed.
    with pytest.raises(Undetermined):
        solve(base.replace("Donna is behind Mark. ", ""))
    verbal = (
        "There are 3 people who arrived at different times. Their names are ['Cy', 'Al', 'Bo']. "
        "The order in which they arrived can be described by the following set of rules: "
        "Bo did not arrive earlier than Al. Cy arrived later than Bo. Did Cy arrive earlier than Al? "
        "Provide your answer only as yes or no. Answer:"
    )
    assert solve(verbal) == "no"
    two = (
        "There are 4 people standing in some order. Their names are ['Al', 'Bo', 'Cy', 'Di']. "
        "Their standing order can be described by the following set of rules: Al is ahead of Bo. "
        "Cy is ahead of Di. Is Al ahead of Di? Provide your answer only as yes or no. Answer:"
    )
    with pytest.raises(Undetermined):
        solve(two)


def test_nonce_relations_need_their_converse_rule():
    z = Ordering(vocabulary="vorpward_morpward").instance(4, 2, 1)
    text = Ordering(vocabulary="vorpward_morpward").prompt(z, "equivalent").text
    assert solve(text) == z.gold
    rule = " If one person is vorpward of another, then the other is morpward of the first."
    assert rule in text
    with pytest.raises(MalformedPrompt, match="rule"):
        solve(text.replace(rule, ""))
    with pytest.raises(MalformedPrompt, match="rule"):  # a "rule" that is not the converse
        solve(
            text.replace(rule, rule.replace("is morpward of the first", "is vorpward of the first"))
        )


# --------------------------------------------------------------------------------------------
# The catalog against the paper
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("index", range(len(CATALOG)), ids=[v.name for v in CATALOG])
def test_catalog_phrases_are_the_papers_pairs_in_order(index):
    """Relation ``index`` reads, in the text, as the paper's pair ``index``: forward first."""
    voc = CATALOG[index]
    expected = RELATIONS[index]
    f = fam(voc.name)
    z = f.instance(5, 0, 7)
    original = parse(f.prompt(z, "original").text)
    rewritten = parse(f.prompt(z, "rewrite").text)  # m >= 1 premises use the converse phrase
    assert {p.phrase for p in original.premises} == {expected.first}
    assert {p.phrase for p in rewritten.premises} <= {expected.first, expected.second}
    assert expected.second in {p.phrase for p in rewritten.premises}
    assert original.question.phrase == expected.first  # cell 0 asks with the forward phrase
    assert parse(f.prompt(f.instance(5, 2, 7), "original").text).question.phrase == expected.second
    assert voc.group == expected.group


def test_front_behind_is_the_default_and_byte_identical():
    """App. B.1: the ``pos`` files of the catalog are byte-identical to the base ones."""
    a = Ordering().design(levels=[2, 8, 33], pairs=8, seed=5, presentations=ALL_PRESENTATIONS)
    b = Ordering(vocabulary="front_behind").design(
        levels=[2, 8, 33], pairs=8, seed=5, presentations=ALL_PRESENTATIONS
    )
    assert [p.text for i in a for p in i.prompts] == [p.text for i in b for p in i.prompts]


# --------------------------------------------------------------------------------------------
# Gold answers: every vocabulary, presentation and control
# --------------------------------------------------------------------------------------------


def _check_item(item, presentations=ALL_PRESENTATIONS):
    z = item.instance
    for prompt in item.prompts:
        answer = solve(prompt.text)
        assert answer == prompt.gold, (prompt.presentation, prompt.text)
        if prompt.presentation in PRESERVING:
            assert answer == z.gold
            assert prompt.answer_map.preserving
        else:
            assert prompt.presentation in FLIPPING
            assert answer == FLIP[z.gold]
            assert prompt.answer_map("yes") == "no" and prompt.answer_map("no") == "yes"


@pytest.mark.parametrize("voc", [v.name for v in CATALOG])
def test_solver_agrees_with_gold_for_every_vocabulary_presentation_and_control(voc):
    for control, options in CONTROLS.items():
        f = fam(voc, **options)
        levels = [5, 6, 9] if "distance" in options else [2, 3, 8]
        for item in f.design(levels=levels, pairs=4, seed=11, presentations=ALL_PRESENTATIONS):
            _check_item(item)


CONTROL_OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "protocol": st.sampled_from(["P", "L"]),
        "names": st.sampled_from(["pool", "random"]),
        "names_line": st.sampled_from(["shuffled", "chain"]),
        "distractors": st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0]),
        "distance": st.integers(1, 6),
    },
)


@given(
    voc=Ordering().strategies.vocabularies(),
    options=CONTROL_OPTIONS,
    data=st.data(),
)
def test_solver_agrees_with_gold_on_drawn_instances(voc, options, data):
    f = fam(voc.name, **options)
    z = data.draw(f.strategies.instances(max_n=max(f.min_n, 40)), label="z")
    _check_item(Item(z, tuple(f.prompt(z, p) for p in ALL_PRESENTATIONS)))


@given(
    n=st.integers(2, 60),
    index=st.integers(0, 1000),
    seed=st.integers(0, 2**32 - 1),
    presentation=st.sampled_from(ALL_PRESENTATIONS),
    voc=st.sampled_from([v.name for v in CATALOG]),
)
def test_solver_agrees_with_prompt_gold_plain_integers(n, index, seed, presentation, voc):
    f = fam(voc)
    z = f.instance(n, index, seed)
    prompt = f.prompt(z, presentation)
    assert solve(prompt.text) == prompt.gold
    assert prompt.gold == (FLIP[z.gold] if presentation in FLIPPING else z.gold)
    # The oracle itself: gold is "yes" iff the question's phrase holds along the chain.
    read_back = latent(prompt.text, forward_phrase(f.prompt(z, "original").text))
    i, j = read_back.query
    assert (i, j) == z.query
    assert prompt.gold == ("yes" if (i < j) == read_back.asks_forward else "no")


@pytest.mark.parametrize(
    "voc, n, options",
    [
        ("front_behind", 1024, {}),
        ("behind_front", 1024, {"protocol": "L"}),
        ("arrived_earlier_later", 1024, {"distractors": 0.25, "distance": 300}),
        ("vorpward_morpward", 2048, {}),
        ("shorter_taller", 2048, {"protocol": "L"}),
        ("right_left", 4096, {"names": "random", "distractors": 0.25}),
    ],
)
def test_solver_agrees_with_gold_on_long_chains(voc, n, options):
    f = fam(voc, **options)
    for index in range(4):  # all four cells
        z = f.instance(n, index, 3)
        presentations = ("original", "equivalent", "negated", "flipped_query")
        item = Item(z, tuple(f.prompt(z, p) for p in presentations))
        _check_item(item)
        assert parse(item.prompts[0].text).count == len(z.entities)


# --------------------------------------------------------------------------------------------
# Views from the strategies, rendered directly
# --------------------------------------------------------------------------------------------


@given(data=st.data())
def test_views_from_the_strategy_keep_the_oracle(data):
    voc = data.draw(Ordering().strategies.vocabularies(), label="vocabulary")
    options = data.draw(
        st.fixed_dictionaries(
            {}, optional={"distractors": st.sampled_from([0.0, 0.5]), "names": st.just("random")}
        ),
        label="options",
    )
    f = fam(voc.name, **options)
    z = data.draw(f.strategies.instances(max_n=48), label="z")
    rewrite, reshuffle, negated = (data.draw(st.booleans(), label=k) for k in ("rw", "rs", "neg"))
    view = data.draw(
        f.strategies.views(z, rewrite=rewrite, reshuffle=reshuffle, negated=negated), label="view"
    )
    forward = forward_phrase(f.prompt(z, "original").text)
    text = f.render(z, view)
    assert solve(text) == z.gold == f.gold(z, view)
    # The text shows exactly the view the generator says it rendered.
    got = latent(text, forward)
    assert got.names == tuple(z.entities[k] for k in view.names_order)
    n_links = z.n - 1
    assert got.links == tuple(p if p < n_links else ("d", p - n_links) for p in view.premise_order)
    assert got.rewritten == view.rewritten
    assert got.negated == (view.negated and bool(view.rewritten))
    if not rewrite:
        assert not view.rewritten
    else:
        assert 1 <= len(view.rewritten) <= n_links
    if not reshuffle:
        assert view.names_order == f.view(z, "original").names_order
    # Flipping the query maps the answer yes<->no.
    flipped = replace(view, flip_query=True)
    assert solve(f.render(z, flipped)) == f.gold(z, flipped) == FLIP[z.gold]
