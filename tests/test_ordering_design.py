"""Design properties of the ordering generator, read back from the rendered text (CBE paper, arXiv:2610.22894, App. B.1).

Balanced cells, names lines and premise orders uncorrelated with the chain, Protocols P and L,
identical latent instances across vocabularies and controls, distractors, determinism across
processes, and errors that name the bad argument.
"""

from __future__ import annotations

import hashlib
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ordering_reader import (
    ALL_PRESENTATIONS,
    Latent,
    expected_distractor_links,
    fam,
    forward_phrase,
    latent,
    m_range,
    read,
    spearman,
)
from pytest_competence.strategies import (
    CATALOG,
    PRESENTATIONS,
    InvalidArgument,
    Ordering,
)
from pytest_competence.strategies.names import first_names, untaken
from solver import parse, solve

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
            ("forward", "yes"): 50,
            ("forward", "no"): 50,
            ("converse", "yes"): 50,
            ("converse", "no"): 50,
        }, n


@given(
    n=st.integers(2, 30), seed=st.integers(0, 10**6), voc=st.sampled_from([v.name for v in CATALOG])
)
def test_gold_is_balanced_in_every_small_design(n, seed, voc):
    items = fam(voc).design(
        levels=[n], pairs=8, seed=seed, presentations=["original", "equivalent"]
    )
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
            spearman(
                [orig.names.index(a) for a in orig.chain], [equi.names.index(a) for a in orig.chain]
            )
        )
        stats["premises"].append(spearman(list(orig.links), list(range(n - 1))))
        firsts += orig.names[0] == orig.chain[0]
    for key, values in stats.items():
        assert abs(float(np.mean(values))) < tolerance, (key, float(np.mean(values)))
    # and the line starts with a_0 about 1/n of the time (binomial, 6 s.d.), not systematically
    assert firsts / count < 1 / n + 6 * math.sqrt((1 / n) * (1 - 1 / n) / count)


@given(
    voc=st.sampled_from([v.name for v in CATALOG]),
    n=st.integers(2, 40),
    index=st.integers(0, 100),
    seed=st.integers(0, 10**6),
    rho=st.sampled_from([0.0, 0.5, 1.0]),
)
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


@given(
    voc=st.sampled_from([v.name for v in CATALOG]),
    n=st.integers(2, 80),
    index=st.integers(0, 1000),
    seed=st.integers(0, 2**32 - 1),
)
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


@given(
    n=st.integers(2, 30),
    index=st.integers(0, 1000),
    seed=st.integers(0, 2**32 - 1),
    protocol=st.sampled_from(["P", "L"]),
)
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
    where = {a: i for i, a in enumerate(t.chain)} | {
        a: ("d", k) for k, a in enumerate(t.distractors)
    }
    return (
        tuple(where[a] for a in t.names),
        t.links,
        t.rewritten,
        t.negated,
        t.query,
        t.asks_forward,
        t.answer,
    )


@given(
    n=st.integers(5, 40),
    index=st.integers(0, 1000),
    seed=st.integers(0, 2**32 - 1),
    voc=st.sampled_from([v.name for v in CATALOG]),
    rho=st.sampled_from([0.0, 0.5]),
)
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
    assert (lt.names, lt.links, len(lt.rewritten)) == (
        ref[1].names,
        ref[1].links,
        len(ref[1].rewritten),
    )


def test_distractor_control_keeps_the_chain_of_the_base_instance():
    for names in ("pool", "random"):
        z0 = Ordering(names=names).instance(8, 1, 3)
        z1 = Ordering(names=names, distractors=0.5).instance(8, 1, 3)
        assert z1.chain == z0.chain and z1.query == z0.query
        assert len(z1.distractors) == 5 and not set(z1.distractors) & set(z0.chain)


@given(
    n=st.integers(3, 40),
    index=st.integers(0, 1000),
    seed=st.integers(0, 2**32 - 1),
    rho=st.sampled_from([0.25, 0.5, 1.0, 2.0]),
)
def test_distractor_control_keeps_query_and_rewrites(n, index, seed, rho):
    base, dis = fam(), fam(distractors=rho)
    z0, z1 = base.instance(n, index, seed), dis.instance(n, index, seed)
    t0, t1 = read(base, z0, "equivalent"), read(dis, z1, "equivalent")
    assert t1.query == t0.query and t1.rewritten == t0.rewritten and t1.answer == t0.answer


# --------------------------------------------------------------------------------------------
# Distractors
# --------------------------------------------------------------------------------------------


@given(
    pool=st.integers(1, 80),
    data=st.data(),
)
def test_untaken_indexes_the_pool_without_the_taken_names(pool, data):
    # Distractors are drawn from the pool with the chain's names left out; the family indexes
    # that rest without building it, and must pick exactly what the list would.
    taken = data.draw(st.lists(st.integers(0, pool - 1), unique=True, max_size=pool - 1))
    rest = [i for i in range(pool) if i not in taken]
    positions = data.draw(st.lists(st.integers(0, len(rest) - 1), unique=True, min_size=1))
    assert untaken(np.array(positions), taken).tolist() == [rest[p] for p in positions]


@given(
    voc=st.sampled_from([v.name for v in CATALOG]),
    n=st.integers(2, 60),
    index=st.integers(0, 1000),
    seed=st.integers(0, 2**32 - 1),
    rho=st.sampled_from([0.25, 0.5, 0.75, 1.0, 1.5, 2.0]),
    options=st.fixed_dictionaries(
        {}, optional={"protocol": st.just("L"), "names": st.just("random")}
    ),
)
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
        sentences = frozenset(s for s, x in zip(t.sentences, t.links) if isinstance(x, tuple))
        if distractor_sentences is None:
            distractor_sentences = sentences
        assert sentences == distractor_sentences, p  # identical wording in every presentation
        # distractors never touch the question
        q = parse(text).question
        assert q.subject in t.chain and q.object in t.chain


# --------------------------------------------------------------------------------------------
# Interior queries
# --------------------------------------------------------------------------------------------


@given(
    d=st.integers(1, 12),
    extra=st.integers(0, 30),
    index=st.integers(0, 1000),
    seed=st.integers(0, 2**32 - 1),
    voc=st.sampled_from([v.name for v in CATALOG]),
    presentation=st.sampled_from(ALL_PRESENTATIONS),
)
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
    for options in (
        {},
        {"protocol": "L", "vocabulary": "born_before_after"},
        {"names": "random", "distractors": 0.5, "distance": 1},
    ):
        for item in Ordering(**options).design(
            levels=[4, 5, 16, 1100], pairs=8, seed=seed, presentations=list(PRESENTATIONS)
        ):
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
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
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
        (
            lambda: Ordering().design(levels=[4], pairs=4, presentations=["sideways"]),
            r"presentation 'sideways'",
        ),
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


@pytest.mark.parametrize(
    "call",
    [
        lambda: Ordering().design(levels=[4], pairs=4, seed=-1),
        lambda: Ordering().instance(4, 0, -1),
        lambda: Ordering().instance(4, -1, 1),
    ],
)
def test_negative_seed_raises_invalid_argument_naming_it(call):
    with pytest.raises(InvalidArgument, match=r"non-negative integer (seed|index)"):
        call()


# --------------------------------------------------------------------------------------------
# Presentations do what their names say (read from the text)
# --------------------------------------------------------------------------------------------


@given(
    voc=st.sampled_from([v.name for v in CATALOG]),
    n=st.integers(2, 40),
    index=st.integers(0, 1000),
    seed=st.integers(0, 2**32 - 1),
    protocol=st.sampled_from(["P", "L"]),
)
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
    assert (t["equivalent"].names, t["equivalent"].links) == (
        t["reshuffle"].names,
        t["reshuffle"].links,
    )
    assert t["equivalent"].rewritten == t["rewrite"].rewritten == t["negated"].rewritten
    assert not t["equivalent"].negated and t["negated"].negated
    assert (
        t["negated"].names == t["equivalent"].names and t["negated"].links == t["equivalent"].links
    )
    # flipped_query: the original with the question's phrase swapped
    assert (t["flipped_query"].names, t["flipped_query"].links) == (o.names, o.links)
    assert t["flipped_query"].query == o.query
    assert t["flipped_query"].asks_forward != o.asks_forward
    for p in ALL_PRESENTATIONS:
        assert t[p].chain == z.chain and t[p].query == z.query
        assert t[p].asks_forward == ((z.direction == "forward") != (p == "flipped_query"))
