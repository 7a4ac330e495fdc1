"""The identifiability audit: hand-built policy classes, brute force, and the ordering zoo."""

from __future__ import annotations

import random
from itertools import combinations

import pytest

from pytest_competence.audit import (
    Components,
    Observations,
    audit,
    lattice,
    leave_one_out,
    minimum_hitting_sets,
    observe,
    observe_models,
)
from pytest_competence.audit._universe import suite_universe
from pytest_competence.models.reference import reference_policy
from pytest_competence.strategies import AuditComponent, Ordering

# -- a policy class whose answers are known by construction -------------------------------------

CELLS = ["a", "b", "c", "d"]


def _differs_at(where: set[str]):
    return lambda cell: int(cell not in where)


POLICIES = {
    "competent": lambda cell: 1,
    "misses-c": _differs_at({"c"}),
    "misses-d": _differs_at({"d"}),
    "misses-cd": _differs_at({"c", "d"}),
    "also-misses-c": _differs_at({"c"}),  # equivalent to misses-c everywhere: same estimand
}
ESTIMAND = {"competent": 1, "misses-c": 0, "misses-d": 0, "misses-cd": 0, "also-misses-c": 0}


def test_a_support_with_a_collision_is_unidentified_with_a_correct_witness():
    obs = observe(POLICIES, CELLS)
    result = audit(obs, ESTIMAND, support=["a", "b"])
    assert not result.identified
    found = {(c.first, c.second): c.witness for c in result.collisions}
    assert found == {
        ("competent", "misses-c"): "c",
        ("competent", "misses-d"): "d",
        ("competent", "misses-cd"): "c",
        ("competent", "also-misses-c"): "c",
    }
    for c in result.collisions:  # the witness really separates the pair, outside the support
        assert POLICIES[c.first](c.witness) != POLICIES[c.second](c.witness)
    assert result.classes == (tuple(POLICIES),)


def test_adding_the_separating_cells_identifies_and_classes_are_exact():
    obs = observe(POLICIES, CELLS)
    assert audit(obs, ESTIMAND, support=["a", "c"]).collisions[0].second == "misses-d"
    full = audit(obs, ESTIMAND, support=CELLS)
    assert full.identified
    assert full.classes == (
        ("competent",),
        ("misses-c", "also-misses-c"),
        ("misses-d",),
        ("misses-cd",),
    )
    # Same-estimand equivalence is no collision, but a mixture cannot apportion weight there.
    assert "{misses-c, also-misses-c}" in full.mixture_note
    assert "identified only up to its equivalence class" in full.mixture_note


def test_a_pair_that_agrees_everywhere_has_no_witness_and_no_identifying_support():
    obs = observe({"x": lambda c: 0, "y": lambda c: 0}, CELLS)
    result = audit(obs, {"x": 1, "y": 0})
    assert result.collisions[0].witness is None
    assert not result.minimum.feasible and result.minimum.uncoverable == (0,)


def test_lattice_and_leave_one_out_flag_exactly_the_essential_components():
    obs = observe(POLICIES, CELLS)
    comps = Components.union({"C": ["c"], "D": ["d"], "B": ["b"]}, base=["a"])
    rows = {r.components: r for r in lattice(obs, ESTIMAND, comps)}
    assert len(rows) == 8
    assert not rows[()].identified and rows[()].cells == 1
    assert [(c.second, c.witness) for c in rows[("C",)].collisions] == [("misses-d", "d")]
    assert [(c.second, c.witness) for c in rows[("D",)].collisions] == [
        ("misses-c", "c"),
        ("also-misses-c", "c"),
    ]
    assert rows[("C", "D")].identified and rows[("C", "D", "B")].identified
    assert not rows[("C", "B")].identified
    loo = {r.component: r for r in leave_one_out(obs, ESTIMAND, comps)}
    assert {k for k, r in loo.items() if r.essential} == {"C", "D"}
    assert [(c.first, c.second) for c in loo["D"].created] == [("competent", "misses-d")]
    # A second component bringing the same cell makes neither of the two essential.
    twice = Components.union({"C": ["c"], "C2": ["c"], "D": ["d"]}, base=["a"])
    assert {r.component for r in leave_one_out(obs, ESTIMAND, twice) if r.essential} == {"D"}


def test_factorial_components_need_every_factor_of_a_cell():
    comps = Components.factorial({"x": [], "y": ["big"], "z": ["big", "reworded"]})
    assert comps.support([]) == {"x"}
    assert comps.support(["big"]) == {"x", "y"}
    assert comps.support(["reworded"]) == {"x"}
    assert comps.support(["big", "reworded"]) == {"x", "y", "z"}
    with pytest.raises(ValueError, match="Unknown component 'nope'"):
        comps.support(["nope"])


def test_the_lattice_refuses_to_explode_past_its_limit():
    obs = observe(POLICIES, CELLS)
    comps = Components.union({f"k{i}": ["a"] for i in range(5)})
    with pytest.raises(ValueError, match="pass limit=5"):
        lattice(obs, ESTIMAND, comps, limit=4)
    result = audit(obs, ESTIMAND, components=comps, lattice_limit=4)
    assert result.lattice is None and "lattice left out" in result.lattice_note
    assert len(result.leave_one_out) == 5


def test_minimum_supports_of_the_hand_built_class():
    result = audit(observe(POLICIES, CELLS), ESTIMAND, costs={"c": 3.0})
    assert result.minimum.exact and result.minimum.solutions == (("c", "d"),)
    assert result.minimum.count == 1 and result.minimum.size == 2
    assert result.minimum_cost.cost == 4.0


# -- minimum hitting sets against brute force ---------------------------------------------------


def _brute(sets, cells, costs=None):
    costs = costs or {}
    best, found = None, []
    for size in range(len(cells) + 1):
        for subset in combinations(cells, size):
            chosen = set(subset)
            if all(chosen & set(s) for s in sets):
                cost = sum(costs.get(c, 1.0) for c in subset)
                if best is None or cost < best - 1e-9:
                    best, found = cost, [subset]
                elif abs(cost - best) <= 1e-9:
                    found.append(subset)
    return best, {frozenset(s) for s in found}


@pytest.mark.parametrize("case", range(150))
def test_minimum_hitting_sets_match_brute_force(case):
    rng = random.Random(case)
    cells = [f"c{i}" for i in range(rng.randint(3, 10))]
    sets = [rng.sample(cells, rng.randint(1, min(4, len(cells)))) for _ in range(rng.randint(1, 9))]
    costs = {c: float(rng.choice([1, 2, 3, 5])) for c in cells} if case % 2 else None
    best, expected = _brute(sets, cells, costs)
    got = minimum_hitting_sets(sets, order=cells, costs=costs, max_solutions=10_000)
    assert got.exact
    assert got.cost == pytest.approx(best)
    assert got.count == len(expected)
    assert {frozenset(s) for s in got.solutions} == expected


def test_past_the_node_budget_an_integer_program_then_a_labelled_approximation():
    rng = random.Random(7)
    cells = list(range(40))
    sets = [rng.sample(cells, 6) for _ in range(60)]
    exact = minimum_hitting_sets(sets, order=cells, max_solutions=10_000)
    assert exact.exact and exact.count_complete and exact.count == 70
    # Past the branch-and-bound budget: the same optimum, proven by the integer program, and
    # some of the optimal sets (said to be incomplete).
    milp = minimum_hitting_sets(sets, order=cells, max_nodes=1, max_solutions=3)
    assert milp.exact and milp.method.startswith("exact (integer program")
    assert milp.cost == exact.cost and not milp.count_complete
    assert {frozenset(s) for s in milp.solutions} <= {frozenset(s) for s in exact.solutions}
    # Past the integer program's time too: the labelled approximation with its bounds.
    approx = minimum_hitting_sets(sets, order=cells, max_nodes=1, milp_seconds=1e-6)
    assert not approx.exact and approx.method.startswith("approximation")
    assert "within a factor H(" in approx.guarantee
    (cover,) = approx.solutions
    assert all(set(cover) & set(s) for s in sets)
    assert approx.lower_bound <= exact.cost <= approx.cost


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match=r"costs\['a'\]=0"):
        minimum_hitting_sets([["a"]], costs={"a": 0})
    with pytest.raises(ValueError, match="max_solutions"):
        minimum_hitting_sets([["a"]], max_solutions=0)
    obs = observe(POLICIES, CELLS)
    with pytest.raises(ValueError, match="estimand= has no value for policy 'misses-d'"):
        audit(obs, {"competent": 1, "misses-c": 0})
    with pytest.raises(ValueError, match="Cell 'z' of the support"):
        audit(obs, ESTIMAND, support=["z"])
    with pytest.raises(ValueError, match="one response per cell"):
        Observations(["a"], {"p": [1, 2]})


def test_models_run_over_a_design_respond_per_cell():
    class Echo:
        def __init__(self, flip: bool) -> None:
            self.flip = flip

        def generate(self, prompts):
            return [("no" if self.flip and p[0] == "b" else "yes") for p in prompts]

    obs = observe_models(
        {"good": Echo(False), "bad": Echo(True)}, ["a1", "b1", "a2", "b2"], cell_of=lambda p: p[0]
    )
    assert obs.cells == ("a", "b")
    assert obs.responses["bad"] == (("yes", "yes"), ("no", "no"))
    assert audit(obs, {"good": 1, "bad": 0}, support=["a"]).collisions[0].witness == "b"


# -- the ordering family and the reference policies ---------------------------------------------

SHORTCUTS = ["endpoint", "forward-reader", "names-order", "threshold?n=8"]


@pytest.fixture(scope="module")
def ordering():
    names = ["ideal", "always-yes", *SHORTCUTS]
    models = {n: reference_policy(n, f"ref:{n}") for n in names}
    universe = suite_universe(
        Ordering(names_line="chain"),
        models,
        levels=[8],
        presentations=["original"],
        pairs=8,
        seed=1,
        candidates=[
            AuditComponent("larger n", "level", 32),
            AuditComponent("converse rewording", "presentation", "equivalent"),
            AuditComponent("interior queries", "option", {"distance": 2}),
            AuditComponent("second vocabulary", "option", {"vocabulary": "left_right"}),
            AuditComponent("shuffled names line", "option", {"names_line": "shuffled"}),
        ],
    )
    estimand = {n: int(n == "ideal") for n in names}
    # The declared level and presentation are always observed: only the candidates are named.
    declared = set(universe.declared)
    comps = Components.factorial(
        {c: need - declared for c, need in universe.components.requires.items()},
        names=list(universe.candidates),
    )
    return (
        universe,
        estimand,
        audit(universe.observations, estimand, components=comps, costs=universe.costs),
    )


def test_endpoint_only_support_does_not_separate_the_endpoint_shortcut(ordering):
    _, _, result = ordering
    rows = {r.components: r for r in result.lattice}
    base = {(c.first, c.second): c for c in rows[()].collisions}
    assert set(base) == {("ideal", s) for s in SHORTCUTS}
    witness = base[("ideal", "endpoint")].witness
    assert witness.variant == "distance=2" and witness.cell.endswith("/no")
    interior = {c.second for c in rows[("interior queries",)].collisions}
    assert "endpoint" not in interior and "forward-reader" in interior


def test_each_shortcut_needs_its_component(ordering):
    _, _, result = ordering
    rows = {frozenset(r.components): r for r in result.lattice}
    survivors = {k: {c.second for c in r.collisions} for k, r in rows.items()}
    assert "forward-reader" not in survivors[frozenset({"converse rewording"})]
    assert "names-order" not in survivors[frozenset({"shuffled names line"})]
    # The threshold policy reads forward-worded prompts right at any size: it needs both.
    assert "threshold?n=8" in survivors[frozenset({"larger n"})]
    assert "threshold?n=8" not in survivors[frozenset({"larger n", "converse rewording"})]
    loo = {r.component: {c.second for c in r.created} for r in result.leave_one_out}
    assert loo == {
        "larger n": {"threshold?n=8"},
        "converse rewording": {"forward-reader", "threshold?n=8"},
        "interior queries": {"endpoint"},
        "second vocabulary": set(),
        "shuffled names line": {"names-order"},
    }


def test_ordering_minimum_supports_are_exact_and_hit_every_pair(ordering):
    universe, estimand, result = ordering
    obs = universe.observations
    sets = [set(obs.distinguishing("ideal", p)) for p in obs.policies if p != "ideal"]
    # Brute force over every support of one and of two cells (8,256 of them): the minimum is
    # two cells, and exactly the listed pairs identify.
    assert not [c for c in obs.cells if all(c in s for s in sets)]
    pairs = {frozenset(p) for p in combinations(obs.cells, 2) if all(s & set(p) for s in sets)}
    assert result.minimum.exact and result.minimum.size == 2
    assert result.minimum.count == len(pairs) > 0
    assert {frozenset(s) for s in result.minimum.solutions} <= pairs
    cost = min(sum(universe.costs[c] for c in p) for p in pairs)
    assert result.minimum_cost.cost == pytest.approx(cost)
    for solution in result.minimum_cost.solutions:
        assert audit(obs, estimand, support=solution).identified


@pytest.mark.parametrize("case", range(40))
def test_identified_exactly_when_the_support_hits_every_distinguishing_set(case):
    rng = random.Random(1000 + case)
    cells = [f"c{i}" for i in range(rng.randint(2, 8))]
    names = [f"p{k}" for k in range(rng.randint(2, 6))]
    obs = Observations(cells, {p: [rng.randint(0, 2) for _ in cells] for p in names})
    estimand = {p: rng.randint(0, 1) for p in names}
    comps = Components.union(
        {f"k{i}": rng.sample(cells, rng.randint(1, min(3, len(cells)))) for i in range(4)}
    )
    sets = [set(obs.distinguishing(a, b)) for a, b in obs.cross_pairs(estimand)]
    rows = lattice(obs, estimand, comps)
    for row in rows:
        support = comps.support(row.components)
        assert row.identified == all(s & support for s in sets)
        for c in row.collisions:
            assert c.witness is None or c.witness not in support
    full = {r.components: r for r in rows}[comps.names]
    for r in leave_one_out(obs, estimand, comps):
        without = {x.components: x for x in rows}[tuple(n for n in comps.names if n != r.component)]
        assert r.essential == bool(
            {(c.first, c.second) for c in without.collisions}
            - {(c.first, c.second) for c in full.collisions}
        )
    result = audit(obs, estimand, components=comps)
    for solution in result.minimum.solutions:
        assert audit(obs, estimand, support=solution).identified


@pytest.mark.slow
def test_the_example_endpoint_suite_lets_the_endpoint_shortcut_pass_and_interior_queries_catch_it():
    import importlib.util
    from pathlib import Path

    from pytest_competence.audit._suite import audit_spec
    from pytest_competence.engine.spec import spec_from_marker

    path = Path(__file__).resolve().parent.parent / "examples" / "test_ordering_front_behind.py"
    loader = importlib.util.spec_from_file_location("example_front_behind", path)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)

    def audited(test):
        (mark,) = [m for m in test.pytestmark if m.name == "competence"]
        return audit_spec(spec_from_marker(mark.args, mark.kwargs))

    base = audited(module.test_base_grid)
    endpoint = [s for s in base["survivors"] if s["policy"] == "ref:endpoint"]
    assert endpoint and endpoint[0]["needs"] == ["interior queries (distance=2)"]
    assert "distance=2" in endpoint[0]["witness"]
    rows = {tuple(r["added"]): r for r in base["lattice"]}
    collide = {c["policies"][1] for c in rows[("interior queries (distance=2)",)]["collisions"]}
    assert "ref:endpoint" not in collide
    interior = audited(module.test_interior_queries)
    assert "ref:endpoint" in interior["caught"]


def test_no_family_says_not_audited():
    from pytest_competence.audit._suite import audit_spec, summary_lines
    from pytest_competence.engine.spec import spec_from_marker

    doc = audit_spec(spec_from_marker(("horn",), {"levels": [2, 4], "pairs": 8}))
    assert doc["auditable"] is True and doc["caught"]
    lines = summary_lines("t", doc)
    total = len(doc["caught"]) + len(doc["survivors"])
    assert lines[0].startswith(
        f"t  Horn(vary='rules')  mutation score {len(doc['caught'])}/{total} "
    )
    assert not any("not audited" in line for line in lines)
