"""Minimisation: the known minimal case by construction, its cost in calls, budgets, replay.

Reference policies fail exactly from a known case on (``ref:threshold?n=K&rewrites=k&
vocabularies=…``), so the minimal failing case is known before minimising: n = max(K, k) + 1,
k rewritten premises, the first listed vocabulary in catalog order.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.database import InMemoryExampleDatabase, ReadOnlyDatabase

from pytest_competence.engine.evaluate import evaluate
from pytest_competence.minimise import (
    Asker,
    Budget,
    CaseDatabases,
    CaseStore,
    boundary_search,
    case_key,
    fails,
    minimise,
)
from pytest_competence.models import ModelProtocolError, resolve_model
from pytest_competence.strategies import CATALOG, Ordering
from pytest_competence.strategies.ordering.policies import read_ordering


class Recording:
    """A model that forwards to another and records every batch it is sent."""

    def __init__(self, inner):
        self.inner, self.name, self.batches = inner, inner.name, []

    def generate(self, prompts):
        self.batches.append(list(prompts))
        return self.inner.generate(prompts)


def run(
    spec: str,
    family: Ordering | None = None,
    levels=(4, 16, 64),
    *,
    budget=None,
    store=None,
    attempts: int = 1,
    min_n: int | None = None,
    vocabularies: bool = True,
    distractors: bool = True,
    **options,
):
    """Evaluate a small design, then minimise its smallest failing instance, as the plugin does
    (by default in the family's wider space: every vocabulary, distractors on or off)."""
    family = family or Ordering()
    model = Recording(resolve_model(spec))
    space = family.strategies.case_space(
        min_n=min_n, max_n=max(levels), vocabularies=vocabularies, distractors=distractors
    )
    items = family.design(levels=list(levels), pairs=8, seed=1)
    design = evaluate(family, items, model, attempts)
    failing = sorted(
        (item.instance.n, k)
        for k, (item, row) in enumerate(zip(items, design.observations))
        if fails(row)
    )
    starts = [space.from_design(items[k].instance) for _, k in failing]
    asker = Asker(model, space.family, attempts=attempts, budget=budget or Budget(200, 300))
    asker.remember(design)
    model.batches.clear()  # count what minimisation sends, not the design
    found = minimise(space, model, starts, attempts=attempts, asker=asker, store=store, **options)
    return found, model, space


# -- the minimal case is the one known by construction --------------------------------------------

# These tests draw the known minimum with Hypothesis; minimisation runs Hypothesis inside them.
NESTED = [HealthCheck.nested_given]


@settings(max_examples=6, deadline=None, suppress_health_check=NESTED)
@given(n_star=st.integers(4, 1024))
def test_minimal_n_is_the_threshold_chosen_at_random(n_star):
    found, _, _ = run(f"ref:threshold?n={n_star - 1}", levels=(1024,), min_n=4)
    assert found is not None and found.reproduced and found.complete
    assert found.case.n == n_star
    assert found.total_calls <= 60
    assert found.boundary.calls <= math.ceil(math.log2(1024 - 4 + 1))


def _unambiguous() -> list[str]:
    """Vocabularies no prompt of another vocabulary can be mistaken for (no shared phrases)."""

    def middles(v):
        return {
            p.split("{a}")[1].split("{b}")[0]
            for ph in (v.forward, v.converse)
            for p in (ph.statement, ph.negation)
        }

    return [
        v.name for v in CATALOG if not any(middles(v) & middles(w) for w in CATALOG if w is not v)
    ]


@settings(max_examples=5, deadline=None, suppress_health_check=NESTED)
@given(chosen=st.lists(st.sampled_from(_unambiguous()), min_size=2, max_size=5, unique=True))
def test_reported_vocabulary_is_the_first_failing_one_in_catalog_order(chosen):
    order = [v.name for v in CATALOG]
    chosen = sorted(chosen, key=order.index)
    spec = f"ref:threshold?n=5&vocabularies={','.join(chosen)}"
    found, _, _ = run(spec, Ordering(vocabulary=chosen[-1]), levels=(4, 8, 16))
    assert found is not None and found.complete
    assert (found.case.vocabulary, found.case.n) == (chosen[0], 6)
    assert found.calls.get("vocabulary") == 1  # every earlier vocabulary asked in one call


@settings(max_examples=6, deadline=None, suppress_health_check=NESTED)
@given(limit=st.integers(3, 24), least=st.integers(1, 12))
def test_reported_rewrite_count_is_the_smallest_that_fails(limit, least):
    found, _, space = run(f"ref:threshold?n={limit}&rewrites={least}", levels=(4, 32, 64))
    assert found is not None and found.complete
    assert found.case.n == max(limit, least) + 1
    assert space.describe(found.case)["rewritten"] == least
    equivalent = read_ordering(found.observations[1].prompt.text)
    assert equivalent.reworded == least


def test_layouts_shrink_to_chain_order_and_the_latent_instance_to_zero():
    found, _, space = run("ref:threshold?n=9", levels=(4, 16))
    assert found.case == space.case(10)


def test_distractors_shrink_to_none_when_they_do_not_matter():
    found, _, space = run("ref:forward-reader", Ordering(distractors=0.5), levels=(4, 8))
    assert found.case.distractors is False and found.case.n == 2
    assert "no distractors" in space.summary(found.case)


def test_in_the_suites_space_the_distractors_and_vocabulary_stay():
    """The suite's declared space (issue #24): the case keeps the distractors and the
    vocabulary the suite declares, however much simpler a case without them would be."""
    family = Ordering(vocabulary="left_right", distractors=0.5)
    found, _, space = run(
        "ref:forward-reader", family, levels=(4, 8), vocabularies=False, distractors=False
    )
    assert found.case.distractors is True and found.case.vocabulary == "left_right"
    assert found.case.n == 2 and "distractors ρ=0.5" in space.summary(found.case)


# -- the cost in calls ----------------------------------------------------------------------------


@pytest.mark.parametrize("n_star", [5, 100, 600, 1024])
def test_minimising_within_4_to_1024_costs_calls_logarithmic_in_the_range(n_star):
    found, model, _ = run(f"ref:threshold?n={n_star - 1}", levels=(1024,), min_n=4)
    assert found.case.n == n_star
    log_range = math.log2(1024 - 4 + 1)
    assert found.boundary.calls <= math.ceil(log_range)
    # Not proportional to the range (1,021 sizes): a small multiple of its logarithm.
    assert found.total_calls <= 4 * log_range
    assert len(model.batches) == found.total_calls


def test_no_prompt_is_sent_twice_and_each_case_goes_in_one_call():
    found, model, _ = run("ref:threshold?n=20", levels=(4, 64), attempts=1)
    sent = [(p.system, p.text, p.attempt) for batch in model.batches for p in batch]
    assert len(sent) == len(set(sent)) == found.prompts
    for batch in model.batches[:-1]:  # shrinking steps: the presentations of one case
        assert len({p.instance_id for p in batch}) == 1
    assert len(model.batches[-1]) == 3 * 2  # asking again: 3 fresh sends of both presentations


def test_boundary_search_takes_at_most_log2_of_the_range_calls():
    family = Ordering()
    model = resolve_model("ref:threshold?n=300")
    space = family.strategies.case_space(min_n=4, max_n=1024)
    asker = Asker(model, space.family, budget=Budget.unlimited())
    case = space.from_design(family.instance(1024, 3, seed=5))
    got = asker.ask([space.prompts(case)])[0]
    smallest, obs, found = boundary_search(space, asker, case, got)
    assert smallest.n == found.n == 301 and fails(obs)
    assert (smallest.seed, smallest.index) == (5, 3)
    assert found.calls == len(found.trail) <= found.bound == 10
    assert [n for n, failed in found.trail if failed] and found.complete


# -- budgets --------------------------------------------------------------------------------------


def test_a_spent_call_budget_reports_the_best_case_so_far():
    found, model, _ = run("ref:threshold?n=300", levels=(1024,), budget=Budget(calls=6))
    assert found is not None and found.reproduced
    assert found.exhausted and not found.complete
    assert 300 < found.case.n < 1024 and fails(found.observations)
    assert len(model.batches) == found.total_calls <= 6


def test_a_spent_time_budget_stops_too():
    ticks = iter(range(10**6))
    family = Ordering()
    model = resolve_model("ref:threshold?n=300")
    space = family.strategies.case_space(max_n=1024)
    # Every reading of the clock is one second later: the budget of 5 s ends after a few steps.
    asker = Asker(
        model, space.family, budget=Budget(calls=1000, seconds=5), clock=lambda: float(next(ticks))
    )
    found = minimise(space, model, [space.from_design(family.instance(1024, 0))], asker=asker)
    assert found.exhausted and not found.complete and found.total_calls < 10


# -- stochastic models ----------------------------------------------------------------------------


def test_a_policy_wrong_half_the_time_is_reported_as_not_reproducing():
    outcomes = []
    for seed in range(6):
        found, _, _ = run(f"ref:sampled?p=0.5&seed={seed}", levels=(4, 8))
        assert found is not None
        outcomes.append(found.reproduced)
        if not found.reproduced:
            assert found.shrinking_calls == 0 and not found.saved
            assert found.calls == {"confirm": 1}
    # Three fresh sends must all repeat both verdicts: a coin does that once in 64.
    assert outcomes.count(False) >= 5


def test_with_a_majority_rule_a_sampled_policy_never_crashes_the_minimisation():
    for seed in range(3):
        found, model, _ = run(f"ref:sampled?p=0.5&seed={seed}", levels=(4, 8), attempts=3)
        assert found is not None
        assert all(len(batch) % 3 == 0 for batch in model.batches)  # 3 sends per prompt
        if found.reproduced:
            assert fails(found.observations)


def test_a_minimised_case_that_does_not_come_back_falls_back_to_the_starting_case():
    ideal = resolve_model("ref:ideal")

    class FirstSendWrong:
        """Always wrong on rewritten prompts from 16 people on; below, wrong on a first send only."""

        name = "first-send-wrong"
        seen: set[str] = set()

        def generate(self, prompts):  # noqa: ANN001, ANN202
            out = []
            for p, right in zip(prompts, ideal.generate(prompts)):
                t = read_ordering(p.text)
                first = p.text not in self.seen
                self.seen.add(p.text)
                wrong = t.reworded and (t.people >= 16 or first)
                out.append(("no" if right == "yes" else "yes") if wrong else right)
            return out

    family = Ordering()
    space = family.strategies.case_space(max_n=16)
    model = FirstSendWrong()
    start = space.from_design(family.instance(16, 0))
    found = minimise(space, model, [start], budget=Budget(60))
    assert found.reproduced and found.case == start and not found.complete
    assert found.notes == [
        "the minimised case did not fail again when asked afresh, so the case "
        "shown is the one minimisation started from"
    ]
    assert found.calls["confirm"] == 2 and found.shrinking_calls > 0


def test_a_model_breaking_the_batch_contract_is_an_error_not_a_case():
    class Short:
        name = "short"

        def generate(self, prompts):
            return ["yes"] * (len(prompts) - 1)

    space = Ordering().strategies.case_space(max_n=8)
    with pytest.raises(ModelProtocolError, match="returned 1 answers for 2 prompts"):
        minimise(space, Short(), [space.case(4)])


# -- the example database -------------------------------------------------------------------------


def _store(databases: CaseDatabases, space, model: str) -> CaseStore:
    return CaseStore(databases, case_key("test_x.py::test_x[*]", space), model)


def test_a_second_run_replays_the_minimal_case_and_only_checks_its_boundary():
    databases = CaseDatabases(InMemoryExampleDatabase())
    space = Ordering().strategies.case_space(max_n=64, vocabularies=True)
    first, _, _ = run("ref:threshold?n=9", store=_store(databases, space, "ref:threshold?n=9"))
    assert first.saved and first.complete and first.source == "design"
    second, model, _ = run("ref:threshold?n=9", store=_store(databases, space, "ref:threshold?n=9"))
    assert second.case == first.case and second.proven and second.source == "database"
    assert second.shrinking_calls == 0
    # One call checks the boundary: the same case one size down passes (the vocabulary is the
    # catalog's first, so there is no earlier one to ask with it).
    assert second.calls == {"replay": 1, "check": 1, "confirm": 1} and len(model.batches) == 3
    assert [(c.n, failed) for c, failed in second.replay.checked] == [(9, False)]
    assert second.replay.minimal and not second.saved  # already saved for this model


def _moved(before: int, after: int, databases: CaseDatabases, name: str = "qwen"):
    """Minimise ``ref:threshold?n=before``, then ``…n=after`` under one name: two checkpoints."""
    space = Ordering().strategies.case_space(min_n=4, max_n=1024, vocabularies=True)
    found = []
    for limit in (before, after):
        store = CaseStore(
            databases, case_key("test_x.py::test_x[*]", space), name, identity=f"threshold {limit}"
        )
        found.append(run(f"ref:threshold?n={limit}", levels=(1024,), min_n=4, store=store)[0])
    return (*found, space)


@pytest.mark.parametrize(("before", "after"), [(399, 256), (600, 4), (100, 99)])
def test_a_checkpoint_failing_earlier_under_the_same_name_is_minimised_again(before, after):
    databases = CaseDatabases(InMemoryExampleDatabase())
    first, second, space = _moved(before, after, databases)
    assert first.case.n == before + 1 and first.saved and first.complete
    # The saved case still fails, but so does n - 1: a head start, not the answer.
    assert second.source == "database" and not second.proven
    assert second.replay.saved_for == "earlier" and not second.replay.minimal
    assert [(c.n, failed) for c, failed in second.replay.checked] == [(before, True)]
    assert second.case.n == after + 1 and second.complete and second.reproduced
    # Within a fresh minimisation's cost: bisection below the saved n, plus the check.
    fresh, _, _ = run(f"ref:threshold?n={after}", levels=(1024,), min_n=4)
    assert fresh.case == second.case
    assert second.boundary.calls <= math.ceil(math.log2(before - 4 + 1))
    assert second.total_calls <= fresh.total_calls + 2  # the replay call and the check
    # The smaller case replaces the saved one, as minimal for the new checkpoint.
    saved = CaseStore(
        databases, case_key("test_x.py::test_x[*]", space), "qwen", identity=f"threshold {after}"
    ).load(space)
    assert [(s.case, s.minimal, s.saved_for(f"threshold {after}")) for s in saved] == [
        (second.case, True, "same")
    ]


def test_the_check_asks_earlier_vocabularies_with_the_boundary_in_one_call():
    first_two = sorted(_unambiguous()[:2], key=[v.name for v in CATALOG].index)
    family = Ordering(vocabulary=first_two[1])
    space = family.strategies.case_space(max_n=16, vocabularies=True)
    databases = CaseDatabases(InMemoryExampleDatabase())

    def moved(vocabularies):  # noqa: ANN001, ANN202
        store = CaseStore(databases, case_key("t.py::t[*]", space), "qwen", vocabularies)
        return run(
            f"ref:threshold?n=5&vocabularies={vocabularies}", family, levels=(4, 8, 16), store=store
        )[0]

    first = moved(first_two[1])
    assert (first.case.n, first.case.vocabulary) == (6, first_two[1])
    # The next checkpoint fails in the earlier vocabulary too: the check sees it, in its call.
    second = moved(",".join(first_two))
    checked = [(c.n, c.vocabulary, failed) for c, failed in second.replay.checked]
    assert checked[0] == (5, first_two[1], False)
    assert (6, first_two[0], True) in checked and second.calls["check"] == 1
    assert (second.case.n, second.case.vocabulary) == (6, first_two[0]) and not second.proven


def test_a_replayed_case_the_budget_leaves_unchecked_is_not_called_minimal():
    databases = CaseDatabases(InMemoryExampleDatabase())
    space = Ordering().strategies.case_space(max_n=64, vocabularies=True)
    run("ref:threshold?n=9", store=_store(databases, space, "m"))
    found, _, _ = run(
        "ref:threshold?n=9", store=_store(databases, space, "m"), budget=Budget(calls=2)
    )
    assert found.source == "database" and found.replay.checked is None
    assert not found.proven and not found.complete and found.exhausted
    assert found.calls == {"replay": 1, "confirm": 1}
    # Still saved as minimal: the next run, with a budget, checks it again.
    assert [s.minimal for s in _store(databases, space, "m").load(space)] == [True]


def test_an_unchanged_model_under_a_new_identity_is_checked_and_recorded_for_it():
    databases = CaseDatabases(InMemoryExampleDatabase())
    space = Ordering().strategies.case_space(max_n=64, vocabularies=True)

    def store(identity):  # noqa: ANN001, ANN202
        return CaseStore(databases, case_key("t.py::t[*]", space), "qwen", identity)

    first, _, _ = run("ref:threshold?n=9", store=store("a"))
    same, _, _ = run("ref:threshold?n=9", store=store("a"))
    assert same.proven and same.replay.saved_for == "same" and not same.saved
    assert first.saved and same.replay.saved.saved_at.endswith(" UTC")
    other, _, _ = run("ref:threshold?n=9", store=store("b"))
    assert other.proven and other.replay.saved_for == "earlier" and other.saved
    assert other.shrinking_calls == 0 and other.calls["check"] == 1
    assert [s.identity for s in store("b").load(space)] == ["b"]


def test_a_database_written_before_identities_loads_with_none():
    from hypothesis.database import choices_to_bytes

    local = InMemoryExampleDatabase()
    space = Ordering().strategies.case_space(max_n=64, vocabularies=True)
    store = _store(CaseDatabases(local), space, "m")
    value = choices_to_bytes(space.choices(space.case(10)))
    local.save(store.key, value)  # what earlier versions wrote: the case, and its minimal mark
    local.save(store.minimal_key, value)
    local.save(store.saved_key, b"not json")
    (saved,) = store.load(space)
    assert saved.case == space.case(10) and saved.minimal and saved.identity is None
    assert saved.saved_for("abc") == "name"
    found, _, _ = run("ref:threshold?n=9", store=store)
    assert found.proven and found.replay.saved_for == "name" and found.saved


def test_another_model_replays_the_saved_case_and_keeps_shrinking_from_it():
    databases = CaseDatabases(InMemoryExampleDatabase())
    space = Ordering().strategies.case_space(max_n=64, vocabularies=True)
    run("ref:threshold?n=20", store=_store(databases, space, "a"))
    other, _, _ = run("ref:threshold?n=9", store=_store(databases, space, "b"))
    assert other.source == "database" and not other.proven
    assert other.case.n == 10 and other.shrinking_calls > 0
    # The first model's case is still there for the next checkpoint: a corpus builds up.
    assert len(_store(databases, space, "c").load(space)) == 2


def test_a_saved_case_the_model_now_passes_falls_back_to_the_design():
    databases = CaseDatabases(InMemoryExampleDatabase())
    space = Ordering().strategies.case_space(max_n=64, vocabularies=True)
    run("ref:threshold?n=9", store=_store(databases, space, "a"))
    later, _, _ = run("ref:threshold?n=20", store=_store(databases, space, "a"))
    assert later.source == "design" and later.case.n == 21
    assert later.calls["replay"] == 1


def test_a_read_only_shared_database_is_replayed_but_never_written():
    shared = InMemoryExampleDatabase()
    space = Ordering().strategies.case_space(max_n=64, vocabularies=True)
    run("ref:threshold?n=9", store=_store(CaseDatabases(shared), space, "m"))
    before = dict(shared.data)
    databases = CaseDatabases(None, (ReadOnlyDatabase(shared),))
    found, _, _ = run("ref:threshold?n=9", store=_store(databases, space, "m"))
    assert found.source == "database" and found.proven and not found.saved
    assert shared.data == before


def test_entries_that_no_longer_decode_are_dropped():
    local = InMemoryExampleDatabase()
    space = Ordering().strategies.case_space(max_n=64)
    store = _store(CaseDatabases(local), space, "m")
    local.save(store.key, b"\xff\x00garbage")
    assert store.load(space) == []
    assert list(local.fetch(store.key)) == []


def test_the_key_is_shared_by_models_and_differs_between_tests_and_spaces():
    space = Ordering().strategies.case_space(max_n=64)
    other = Ordering(vocabulary="left_right").strategies.case_space(max_n=64)
    assert case_key("t.py::a[*]", space) == case_key("t.py::a[*]", space)
    assert case_key("t.py::a[*]", space) != case_key("t.py::b[*]", space)
    assert case_key("t.py::a[*]", space) != case_key("t.py::a[*]", other)


# -- the asker ------------------------------------------------------------------------------------


def test_the_design_answers_are_remembered_so_the_start_costs_nothing():
    found, model, _ = run(
        "ref:threshold?n=9", levels=(4, 16), hypothesis=False, boundary=False, vocabularies=False
    )
    assert found.calls == {"confirm": 1} and len(model.batches) == 1


def test_an_asker_refuses_what_the_budget_does_not_cover():
    space = Ordering().strategies.case_space(max_n=16)
    asker = Asker(resolve_model("ref:ideal"), space.family, budget=Budget(calls=1))
    assert asker.ask([space.prompts(space.case(5))]) is not None
    assert asker.ask([space.prompts(space.case(6))]) is None and asker.refused == 1
    assert asker.ask([space.prompts(space.case(5))]) is not None  # remembered: free
    assert asker.ask([space.prompts(space.case(6))], force=True) is not None
    assert asker.spent == 2
