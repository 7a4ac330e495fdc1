"""The ordering generator checked against an independent text-level solver (seeds/000 §4.1, App. B.1).

``tests/solver.py`` reads only the rendered prompt and has its own phrase table, transcribed from the
paper's catalog; every property below is recovered from the *text* (names line, premise order,
rewritten premises, the question) and compared with what the generator claims (``Prompt.gold``,
the oracle ``y*(z)``, the view it says it rendered), so a bug in the renderer, a vocabulary whose
phrases are not converses, or a sampler that drifts from App. B.1 shows up as a disagreement.
"""

from __future__ import annotations

import hashlib
import math
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_competence.strategies.names import first_names
from pytest_competence.strategies import (
    CATALOG,
    PRESENTATIONS,
    InvalidArgument,
    Item,
    Ordering,
    OrderingInstance,
    OrderingView,
)

from solver import RELATIONS, MalformedPrompt, Undetermined, chains, parse, solve

ALL_PRESENTATIONS = tuple(PRESENTATIONS)
#: Presentations that keep the gold answer; ``flipped_query`` maps yes↔no (App. B.1, §4.1).
PRESERVING = ("original", "equivalent", "reshuffle", "rewrite", "negated", "repeat")
FLIPPING = ("flipped_query",)
FLIP = {"yes": "no", "no": "yes"}

#: The controls of the brief, each a set of Ordering options on top of the defaults.
CONTROLS: dict[str, dict[str, object]] = {
    "P": {"protocol": "P"},
    "L": {"protocol": "L"},
    "random-names": {"names": "random"},
    "chain-names-line": {"names_line": "chain"},
    "distractors": {"distractors": 0.5},
    "interior-d2": {"distance": 2},
}


@lru_cache(maxsize=None)
def family(vocabulary: str = "front_behind", **options: object) -> Ordering:
    return Ordering(vocabulary=vocabulary, **options)


def fam(vocabulary: str = "front_behind", **options: object) -> Ordering:
    return family(vocabulary, **dict(sorted(options.items())))


# --------------------------------------------------------------------------------------------
# Reading the latent structure back from the text alone
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Latent:
    """What a prompt's text says about its instance, in the generator's chain order ``a_0 … a_{n-1}``.

    ``forward`` is the vocabulary's forward phrase (the one every original premise uses); the latent
    chain is the premise chain read so that each forward premise ``a_i <forward> a_{i+1}`` goes from
    ``a_i`` to ``a_{i+1}``.
    """

    chain: tuple[str, ...]  # the queried chain, a_0 first
    distractors: tuple[str, ...]  # the other chain (empty without distractors), same orientation
    names: tuple[str, ...]  # the names line as written
    links: tuple[object, ...]  # premise order: link index i for (a_i, a_{i+1}), ("d", k) for distractors
    rewritten: frozenset[int]  # chain links worded with the converse phrase or negated
    negated: bool  # whether the rewritten links are negations of the forward phrase
    query: tuple[int, int]  # chain positions of the question's subject and object
    asks_forward: bool  # whether the question uses the forward phrase
    answer: str  # the solver's answer
    sentences: tuple[str, ...]


def forward_phrase(original_text: str) -> str:
    """The forward phrase: in an original presentation every premise uses it, affirmatively."""
    premises = parse(original_text).premises
    phrases = {(p.phrase, p.negated) for p in premises}
    assert len(phrases) == 1, f"original presentation mixes phrases: {phrases}"
    (phrase, negated), = phrases
    assert not negated
    return phrase


def latent(text: str, forward: str) -> Latent:
    parsed = parse(text)
    answer = solve(text)
    sign = _sign_of(forward)
    found = [c if sign == 1 else c[::-1] for c in chains(parsed)]
    q = parsed.question
    main = [c for c in found if q.subject in c]
    assert len(main) == 1 and q.object in main[0], "question entities are not on one chain"
    chain = main[0]
    others = [c for c in found if c is not chain]
    assert len(others) <= 1, f"expected at most one distractor chain, found {len(others)}"
    distractors = others[0] if others else ()
    pos = {name: i for i, name in enumerate(chain)}
    dpos = {name: i for i, name in enumerate(distractors)}
    links: list[object] = []
    rewritten = set()
    negations = set()
    for p in parsed.premises:
        e = p.edge
        before, after = (e.before, e.after) if sign == 1 else (e.after, e.before)
        if before in pos:
            assert pos[after] == pos[before] + 1
            links.append(pos[before])
            if p.phrase != forward or p.negated:
                rewritten.add(pos[before])
                negations.add(p.negated)
        else:
            assert dpos[after] == dpos[before] + 1
            assert p.phrase == forward and not p.negated, "a distractor premise was rewritten"
            links.append(("d", dpos[before]))
    assert len(negations) <= 1, "rewritten premises mix converse and negated wording"
    return Latent(
        chain=chain,
        distractors=distractors,
        names=parsed.names,
        links=tuple(links),
        rewritten=frozenset(rewritten),
        negated=negations == {True},
        query=(pos[q.subject], pos[q.object]),
        asks_forward=q.phrase == forward,
        answer=answer,
        sentences=tuple(p.text for p in parsed.premises),
    )


def _sign_of(phrase: str) -> int:
    for r in RELATIONS:
        if phrase == r.first:
            return r.sign
        if phrase == r.second:
            return -r.sign
    raise KeyError(phrase)


def read(family_: Ordering, z: OrderingInstance, presentation: str) -> Latent:
    forward = forward_phrase(family_.prompt(z, "original").text)
    return latent(family_.prompt(z, presentation).text, forward)


def spearman(x: list[int], y: list[int]) -> float:
    rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    return float(np.corrcoef(rx, ry)[0, 1])


def expected_distractor_links(rho: float, n: int) -> int:
    """``round(ρ(n − 1))``, ties upward (the generator's convention); exact for dyadic ρ."""
    return math.floor(Fraction(rho) * (n - 1) + Fraction(1, 2))


def m_range(n: int) -> range:
    """App. B.1: m uniform on {max(1, ⌊0.2(n−1)⌋), …, n−1}."""
    return range(max(1, math.floor(Fraction(n - 1) / 5)), n)


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
        "spatial line", "vertical", "temporal", "comparative", "rank and social", "nonce",
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
        (lambda t: t.replace("James is in front of Andrew", "Jimbo is in front of Andrew"),
         "not in the names list"),
        (lambda t: t.replace("James is in front of Andrew", "James is near Andrew"), "unknown relation"),
        (lambda t: t.replace("Donna is behind Mark", "Donna is in front of Mark"), "chains|cycle"),
        (lambda t: t.replace("Is Heather in front", "Is Heather north"), "unknown relation|one catalog"),
        (lambda t: t.replace("James is in front of Andrew", "James is north of Andrew"),
         "one catalog relation"),
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
    assert solve(base.replace("Is Heather in front of Michelle?", "Is Heather behind Michelle?")) == "no"
    assert solve(base.replace("Is Heather in front of Michelle?", "Is Michelle behind Heather?")) == "yes"
    assert solve(base.replace("Is Heather in front of Michelle?", "Is Michelle in front of Heather?")) == "no"
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
        solve(text.replace(rule, rule.replace("is morpward of the first", "is vorpward of the first")))


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
        st.fixed_dictionaries({}, optional={"distractors": st.sampled_from([0.0, 0.5]),
                                           "names": st.just("random")}),
        label="options",
    )
    f = fam(voc.name, **options)
    z = data.draw(f.strategies.instances(max_n=48), label="z")
    rewrite, reshuffle, negated = (data.draw(st.booleans(), label=k) for k in ("rw", "rs", "neg"))
    view = data.draw(f.strategies.views(z, rewrite=rewrite, reshuffle=reshuffle, negated=negated),
                     label="view")
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


# --------------------------------------------------------------------------------------------
# Design balance
# --------------------------------------------------------------------------------------------


def test_cells_are_exactly_balanced_at_200_pairs():
    f = fam("front_behind")
    levels = [2, 3, 8, 64]
    items = f.design(levels=levels, pairs=200, seed=1, presentations=["original"])
    assert len(items) == 200 * len(levels)
    for n in levels:
        cells: dict[tuple[str, str], int] = {}
        for item in (i for i in items if i.instance.n == n):
            prompt = item.prompts[0]
            text = prompt.text
            parsed = parse(text)
            forward = forward_phrase(text)
            direction = "forward" if parsed.question.phrase == forward else "converse"
            gold = solve(text)
            assert gold == prompt.gold
            assert prompt.params["cell"] == f"{direction}/{gold}"
            assert prompt.params["n"] == n == parsed.count
            cells[direction, gold] = cells.get((direction, gold), 0) + 1
        assert cells == {
            ("forward", "yes"): 50, ("forward", "no"): 50,
            ("converse", "yes"): 50, ("converse", "no"): 50,
        }, n


@given(n=st.integers(2, 30), seed=st.integers(0, 10**6), voc=st.sampled_from([v.name for v in CATALOG]))
def test_gold_is_balanced_in_every_small_design(n, seed, voc):
    items = fam(voc).design(levels=[n], pairs=8, seed=seed, presentations=["original", "equivalent"])
    golds = [solve(i.prompts[1].text) for i in items]
    assert golds.count("yes") == golds.count("no") == 4


# --------------------------------------------------------------------------------------------
# Names line and premise order carry no information about the chain
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n, count, tolerance", [(8, 800, 0.07), (64, 200, 0.05)])
def test_names_line_and_premise_order_are_uncorrelated_with_the_chain(n, count, tolerance):
    """Mean Spearman correlation ~ 0.

    Under independent uniform shuffles each instance's Spearman ρ has mean 0 and variance
    1/(n − 1), so the mean over ``count`` instances has s.d. 1/sqrt(count·(n − 1)): 0.013 at
    (8, 800) and 0.009 at (64, 200). The tolerances are > 5 s.d. (seeds are fixed, so no flakes).
    """
    f = fam("front_behind")
    stats = {"names": [], "equivalent names": [], "names vs names": [], "premises": []}
    firsts = 0
    for index in range(count):
        z = f.instance(n, index, 2)
        forward = forward_phrase(f.prompt(z, "original").text)
        orig = latent(f.prompt(z, "original").text, forward)
        equi = latent(f.prompt(z, "equivalent").text, forward)
        ranks = list(range(n))
        stats["names"].append(spearman([orig.names.index(a) for a in orig.chain], ranks))
        stats["equivalent names"].append(spearman([equi.names.index(a) for a in equi.chain], ranks))
        stats["names vs names"].append(
            spearman([orig.names.index(a) for a in orig.chain], [equi.names.index(a) for a in orig.chain])
        )
        stats["premises"].append(spearman(list(orig.links), list(range(n - 1))))
        firsts += orig.names[0] == orig.chain[0]
    for key, values in stats.items():
        assert abs(float(np.mean(values))) < tolerance, (key, float(np.mean(values)))
    # and the line starts with a_0 about 1/n of the time (binomial, 6 s.d.), not systematically
    assert firsts / count < 1 / n + 6 * math.sqrt((1 / n) * (1 - 1 / n) / count)


@given(voc=st.sampled_from([v.name for v in CATALOG]), n=st.integers(2, 40),
       index=st.integers(0, 100), seed=st.integers(0, 10**6), rho=st.sampled_from([0.0, 0.5, 1.0]))
def test_chain_names_line_lists_the_chain_in_order(voc, n, index, seed, rho):
    f = fam(voc, names_line="chain", distractors=rho)
    z = f.instance(n, index, seed)
    forward = forward_phrase(f.prompt(z, "original").text)
    for p in ALL_PRESENTATIONS:
        got = latent(f.prompt(z, p).text, forward)
        assert got.names == got.chain + got.distractors
        assert got.chain == z.chain
    # The premise order is the shuffled control's, only the names line differs.
    base = fam(voc, distractors=rho)
    assert read(base, z, "equivalent").links == read(f, z, "equivalent").links


# --------------------------------------------------------------------------------------------
# Protocols P and L (App. B.1, "Equivalent presentation under the two protocols")
# --------------------------------------------------------------------------------------------


@given(voc=st.sampled_from([v.name for v in CATALOG]), n=st.integers(2, 80),
       index=st.integers(0, 1000), seed=st.integers(0, 2**32 - 1))
def test_protocol_L_rewrites_the_last_m_links_and_P_the_same_m(voc, n, index, seed):
    p, l = fam(voc, protocol="P"), fam(voc, protocol="L")
    z = p.instance(n, index, seed)
    assert l.instance(n, index, seed) == z
    tp, tl = read(p, z, "equivalent"), read(l, z, "equivalent")
    m = len(tl.rewritten)
    assert m in m_range(n)
    assert tl.rewritten == frozenset(range(n - 1 - m, n - 1))  # the last m in chain order
    assert len(tp.rewritten) == m
    assert tp.names == tl.names and tp.links == tl.links and tp.query == tl.query
    assert tp.chain == tl.chain
    # The original presentations are shared by construction.
    assert p.prompt(z, "original").text == l.prompt(z, "original").text
    # The generator's own views agree with the text and with each other.
    vp, vl = p.view(z, "equivalent"), l.view(z, "equivalent")
    assert vl.rewritten == tl.rewritten and vp.rewritten == tp.rewritten
    assert (vp.names_order, vp.premise_order) == (vl.names_order, vl.premise_order)
    assert p.rewrite_count(z) == l.rewrite_count(z) == m


@pytest.mark.parametrize("n", [2, 3, 6, 11, 21])
def test_rewrite_count_covers_its_range_and_P_positions_are_uniform(n):
    """Over 400 instances: m takes every value in {max(1, ⌊0.2(n−1)⌋), …, n−1} and nothing else.

    Under P the rewritten links fall in the first half of the chain about half the time. With
    ~400·(n/2) rewrites per level the share's s.d. is ≤ 0.5/sqrt(400) = 0.025 per link-half;
    the bound 0.08 is > 3 s.d. even at n = 3 (and the seeds are fixed).
    """
    p, l = fam(protocol="P"), fam(protocol="L")
    counts = set()
    first_half = total = 0
    middle = (n - 2) / 2  # the middle link index (a half-integer when the link count is even)
    for index in range(400):
        z = p.instance(n, index, 9)
        m = len(read(l, z, "equivalent").rewritten)
        counts.add(m)
        for link in read(p, z, "equivalent").rewritten:
            total += 1
            if link < middle:
                first_half += 1
            elif link == middle:  # the middle link of an odd link count counts half
                first_half += 0.5
    assert counts == set(m_range(n))
    assert abs(first_half / total - 0.5) < 0.08, first_half / total


def test_protocol_L_at_1024_and_the_bernoulli_regime_beyond():
    p, l = fam(protocol="P"), fam(protocol="L")
    for n, index in ((1024, 0), (1024, 5)):
        z = l.instance(n, index, 4)
        tl = read(l, z, "equivalent")
        m = len(tl.rewritten)
        assert m in m_range(n)
        assert tl.rewritten == frozenset(range(n - 1 - m, n - 1))
    for n, index in ((2048, 0), (2048, 1), (2048, 2)):
        z = l.instance(n, index, 4)
        tl, tp = read(l, z, "equivalent"), read(p, z, "equivalent")
        m = len(tl.rewritten)
        # Binomial(2047, 1/2): mean 1023.5, s.d. 22.6; 6 s.d. either side.
        assert abs(m - (n - 1) / 2) < 6 * math.sqrt(n - 1) / 2
        assert len(tp.rewritten) == m
        assert tl.rewritten != frozenset(range(n - 1 - m, n - 1))  # not the last-m rule
        assert tp.rewritten != tl.rewritten  # P redraws the positions
        assert tp.names == tl.names and tp.links == tl.links
        # Each link is rewritten independently: the halves get about the same share.
        low = sum(1 for k in tl.rewritten if k < (n - 1) // 2)
        assert abs(low - m / 2) < 6 * math.sqrt(m) / 2


# --------------------------------------------------------------------------------------------
# Identical latent instances across vocabularies and controls (App. B.1, "Catalog")
# --------------------------------------------------------------------------------------------


@given(n=st.integers(2, 30), index=st.integers(0, 1000), seed=st.integers(0, 2**32 - 1),
       protocol=st.sampled_from(["P", "L"]))
def test_every_vocabulary_renders_the_same_latent_instance(n, index, seed, protocol):
    reference = None
    for voc in CATALOG:
        f = fam(voc.name, protocol=protocol)
        z = f.instance(n, index, seed)
        got = tuple(read(f, z, p) for p in ("original", "equivalent", "negated", "flipped_query"))
        summary = tuple(
            (t.chain, t.names, t.links, t.rewritten, t.negated, t.query, t.asks_forward, t.answer)
            for t in got
        )
        if reference is None:
            reference = summary
        else:
            assert summary == reference, voc.name


def _structure(t: Latent) -> tuple:
    """The text's structure with names replaced by chain positions (distractors by ("d", k))."""
    where = {a: i for i, a in enumerate(t.chain)} | {a: ("d", k) for k, a in enumerate(t.distractors)}
    return tuple(where[a] for a in t.names), t.links, t.rewritten, t.negated, t.query, t.asks_forward, t.answer


@given(n=st.integers(5, 40), index=st.integers(0, 1000), seed=st.integers(0, 2**32 - 1),
       voc=st.sampled_from([v.name for v in CATALOG]), rho=st.sampled_from([0.0, 0.5]))
def test_controls_keep_the_latent_structure(n, index, seed, voc, rho):
    base = fam(voc, distractors=rho)
    z = base.instance(n, index, seed)
    presentations = ("original", "equivalent", "negated", "rewrite")
    ref = [read(base, z, p) for p in presentations]
    # Random-name control: different names (five-letter strings), identical structure.
    rand = fam(voc, names="random", distractors=rho)
    zr = rand.instance(n, index, seed)
    got = [read(rand, zr, p) for p in presentations]
    assert [_structure(t) for t in got] == [_structure(t) for t in ref]
    pool = set(first_names())
    for name in got[0].names:
        assert len(name) == 5 and name.isalpha() and name[0].isupper() and name[1:].islower()
        assert name not in pool
    # Interior query: the same chain, names line and premises, only the question differs.
    inner = fam(voc, distance=2, distractors=rho)
    zi = inner.instance(n, index, seed)
    for p, r in zip(presentations, ref):
        t = read(inner, zi, p)
        assert (t.chain, t.names, t.links, t.rewritten) == (r.chain, r.names, r.links, r.rewritten)
        assert abs(t.query[0] - t.query[1]) == 2
    # Protocol L: same names line and premise order, same m.
    lt = read(fam(voc, protocol="L", distractors=rho), z, "equivalent")
    assert (lt.names, lt.links, len(lt.rewritten)) == (ref[1].names, ref[1].links, len(ref[1].rewritten))


def test_distractor_control_keeps_the_chain_of_the_base_instance():
    for names in ("pool", "random"):
        z0 = Ordering(names=names).instance(8, 1, 3)
        z1 = Ordering(names=names, distractors=0.5).instance(8, 1, 3)
        assert z1.chain == z0.chain and z1.query == z0.query
        assert len(z1.distractors) == 5 and not set(z1.distractors) & set(z0.chain)


@given(n=st.integers(3, 40), index=st.integers(0, 1000), seed=st.integers(0, 2**32 - 1),
       rho=st.sampled_from([0.25, 0.5, 1.0, 2.0]))
def test_distractor_control_keeps_query_and_rewrites(n, index, seed, rho):
    base, dis = fam(), fam(distractors=rho)
    z0, z1 = base.instance(n, index, seed), dis.instance(n, index, seed)
    t0, t1 = read(base, z0, "equivalent"), read(dis, z1, "equivalent")
    assert t1.query == t0.query and t1.rewritten == t0.rewritten and t1.answer == t0.answer


# --------------------------------------------------------------------------------------------
# Distractors
# --------------------------------------------------------------------------------------------


@given(voc=st.sampled_from([v.name for v in CATALOG]), n=st.integers(2, 60),
       index=st.integers(0, 1000), seed=st.integers(0, 2**32 - 1),
       rho=st.sampled_from([0.25, 0.5, 0.75, 1.0, 1.5, 2.0]),
       options=st.fixed_dictionaries({}, optional={"protocol": st.just("L"),
                                                   "names": st.just("random")}))
def test_distractors_are_a_disjoint_chain_in_every_presentation(voc, n, index, seed, rho, options):
    f = fam(voc, distractors=rho, **options)
    z = f.instance(n, index, seed)
    k = expected_distractor_links(rho, n)
    forward = forward_phrase(f.prompt(z, "original").text)
    distractor_sentences = None
    for p in ALL_PRESENTATIONS:
        text = f.prompt(z, p).text
        t = latent(text, forward)
        assert len(t.chain) == n
        assert len(t.distractors) == (k + 1 if k else 0)
        assert not set(t.chain) & set(t.distractors)
        assert parse(text).count == n + len(t.distractors)
        d_links = [x for x in t.links if isinstance(x, tuple)]
        assert len(d_links) == k
        sentences = frozenset(
            s for s, x in zip(t.sentences, t.links) if isinstance(x, tuple)
        )
        if distractor_sentences is None:
            distractor_sentences = sentences
        assert sentences == distractor_sentences, p  # identical wording in every presentation
        # distractors never touch the question
        q = parse(text).question
        assert q.subject in t.chain and q.object in t.chain


# --------------------------------------------------------------------------------------------
# Interior queries
# --------------------------------------------------------------------------------------------


@given(d=st.integers(1, 12), extra=st.integers(0, 30), index=st.integers(0, 1000),
       seed=st.integers(0, 2**32 - 1), voc=st.sampled_from([v.name for v in CATALOG]),
       presentation=st.sampled_from(ALL_PRESENTATIONS))
def test_interior_queries_avoid_endpoints_at_distance_d(d, extra, index, seed, voc, presentation):
    n = d + 3 + extra
    f = fam(voc, distance=d)
    z = f.instance(n, index, seed)
    t = read(f, z, presentation)
    i, j = t.query
    assert {i, j}.isdisjoint({0, n - 1})
    assert abs(i - j) == d
    assert t.answer == f.prompt(z, presentation).gold
    assert z.distance == d and f.prompt(z, "original").params["query"] == f"distance={d}"


# --------------------------------------------------------------------------------------------
# Determinism across processes
# --------------------------------------------------------------------------------------------

_DIGEST_SCRIPT = textwrap.dedent(
    """
    import hashlib
    from pytest_competence.strategies import Ordering, PRESENTATIONS
    h = hashlib.sha256()
    for options in ({}, {"protocol": "L", "vocabulary": "born_before_after"},
                    {"names": "random", "distractors": 0.5, "distance": 1}):
        for item in Ordering(**options).design(levels=[4, 5, 16, 1100], pairs=8, seed=SEED,
                                               presentations=list(PRESENTATIONS)):
            for p in item.prompts:
                h.update(p.text.encode()); h.update(p.gold.encode()); h.update(b"\\0")
    print(h.hexdigest())
    """
)


def _digest_here(seed: int) -> str:
    h = hashlib.sha256()
    for options in ({}, {"protocol": "L", "vocabulary": "born_before_after"},
                    {"names": "random", "distractors": 0.5, "distance": 1}):
        for item in Ordering(**options).design(levels=[4, 5, 16, 1100], pairs=8, seed=seed,
                                               presentations=list(PRESENTATIONS)):
            for p in item.prompts:
                h.update(p.text.encode())
                h.update(p.gold.encode())
                h.update(b"\0")
    return h.hexdigest()


def test_same_seed_same_prompts_in_a_separate_process():
    here = _digest_here(17)
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run(
        [sys.executable, "-c", _DIGEST_SCRIPT.replace("SEED", "17")],
        capture_output=True, text=True, env=env, check=True, timeout=120,
    )
    assert out.stdout.strip() == here
    assert _digest_here(18) != here


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: Ordering().instance(1, 0), r"\bn=1\b"),
        (lambda: Ordering().instance(0, 0), r"\bn=0\b"),
        (lambda: Ordering().design(levels=[1], pairs=4), r"levels\[\]=1"),
        (lambda: Ordering().design(levels=[], pairs=4), r"levels="),
        (lambda: Ordering(vocabulary="sideways"), r"vocabulary='sideways'"),
        (lambda: Ordering().design(levels=[4], pairs=6), r"pairs=6"),
        (lambda: Ordering().design(levels=[4], pairs=0), r"pairs=0"),
        (lambda: Ordering().design(levels=[4], pairs=4, presentations=["sideways"]),
         r"presentation 'sideways'"),
        (lambda: Ordering().prompt(Ordering().instance(4, 0), "bogus"), r"presentation 'bogus'"),
        (lambda: Ordering(distance=5).instance(7, 0), r"\bn=7\b.*distance=5"),
        (lambda: Ordering(distance=5).design(levels=[7], pairs=4), r"levels\[\]=7.*distance=5"),
        (lambda: Ordering(distance=0), r"distance=0"),
        (lambda: Ordering(protocol="Q"), r"protocol='Q'"),
        (lambda: Ordering(names="famous"), r"names='famous'"),
        (lambda: Ordering(names_line="sorted"), r"names_line='sorted'"),
        (lambda: Ordering(distractors=-0.5), r"distractors=-0.5"),
        (lambda: Ordering().instance(2600, 0), r"n=2600"),
        (lambda: Ordering().strategies.instances(max_n=1), r"max_n=1"),
        (lambda: Ordering().strategies.instances(min_n=9, max_n=4), r"min_n"),
    ],
)
def test_bad_input_raises_invalid_argument_naming_it(call, message):
    with pytest.raises(InvalidArgument, match=message):
        call()
    # InvalidArgument is catchable as either built-in error
    assert issubclass(InvalidArgument, TypeError) and issubclass(InvalidArgument, ValueError)


@pytest.mark.parametrize("call", [
    lambda: Ordering().design(levels=[4], pairs=4, seed=-1),
    lambda: Ordering().instance(4, 0, -1),
    lambda: Ordering().instance(4, -1, 1),
])
def test_negative_seed_raises_invalid_argument_naming_it(call):
    with pytest.raises(InvalidArgument, match=r"non-negative integer (seed|index)"):
        call()


# --------------------------------------------------------------------------------------------
# Presentations do what their names say (read from the text)
# --------------------------------------------------------------------------------------------


@given(voc=st.sampled_from([v.name for v in CATALOG]), n=st.integers(2, 40),
       index=st.integers(0, 1000), seed=st.integers(0, 2**32 - 1),
       protocol=st.sampled_from(["P", "L"]))
def test_presentations_change_only_what_they_name(voc, n, index, seed, protocol):
    f = fam(voc, protocol=protocol)
    z = f.instance(n, index, seed)
    texts = {p: f.prompt(z, p).text for p in ALL_PRESENTATIONS}
    t = {p: read(f, z, p) for p in ALL_PRESENTATIONS}
    o = t["original"]
    assert texts["repeat"] == texts["original"]
    assert not o.rewritten
    # reshuffle: new names line and premise order, nothing rewritten
    assert not t["reshuffle"].rewritten
    # rewrite: the original layout, m links reworded
    assert (t["rewrite"].names, t["rewrite"].links) == (o.names, o.links)
    # equivalent = reshuffle + rewrite; negated = equivalent with negations of the forward phrase
    assert (t["equivalent"].names, t["equivalent"].links) == (t["reshuffle"].names, t["reshuffle"].links)
    assert t["equivalent"].rewritten == t["rewrite"].rewritten == t["negated"].rewritten
    assert not t["equivalent"].negated and t["negated"].negated
    assert t["negated"].names == t["equivalent"].names and t["negated"].links == t["equivalent"].links
    # flipped_query: the original with the question's phrase swapped
    assert (t["flipped_query"].names, t["flipped_query"].links) == (o.names, o.links)
    assert t["flipped_query"].query == o.query
    assert t["flipped_query"].asks_forward != o.asks_forward
    for p in ALL_PRESENTATIONS:
        assert t[p].chain == z.chain and t[p].query == z.query
        assert t[p].asks_forward == ((z.direction == "forward") != (p == "flipped_query"))
