"""Time the audit's exact minimum-hitting-set search, and show where it stops being exact.

Three parts, each printing figures (nothing asserted; run on demand, not under pytest):

1. The target: a 36-cell support with a dozen policies (half competent-valued, half not, so
   36 cross-estimand pairs), sparse differences so the minimum needs several cells; many seeds.
2. Thousands of cells with the same dozen policies and more: the branch and bound and its node
   count; past ``--max-nodes``, the integer program (still exact; some optimal sets listed).
3. The ordering universe of tests/test_audit.py (the reference policies on a real design).
4. The suite audit (what ``pytest --competence-audit`` runs) of every suite in ``examples/``,
   timed per suite and summed per family.

    python bench/bench_audit.py [--seeds 20] [--max-nodes 200000] [--only-examples]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from _machine import describe

from pytest_competence.audit import Observations, audit, minimum_hitting_sets


def synthetic(cells: int, policies: int, rate: float, seed: int) -> tuple[Observations, dict]:
    """Policies that each deviate from a shared base response in a ``rate`` share of cells."""
    rng = random.Random(seed)
    names = [f"p{k}" for k in range(policies)]
    responses = {p: [int(rng.random() < rate) for _ in range(cells)] for p in names}
    estimand = {p: k % 2 for k, p in enumerate(names)}
    return Observations([f"c{i}" for i in range(cells)], responses), estimand


def timed_search(obs: Observations, estimand: dict, max_nodes: int, costs: dict | None = None):
    sets = [obs.distinguishing(a, b) for a, b in obs.cross_pairs(estimand)]
    start = time.perf_counter()
    result = minimum_hitting_sets(sets, order=obs.cells, costs=costs, max_nodes=max_nodes)
    return time.perf_counter() - start, result, len(sets)


def part_target(seeds: int, max_nodes: int) -> None:
    print("\n1. 36 cells × 12 policies (36 cross-estimand pairs), differences in 15% of cells")
    times, sizes, counts, nodes = [], [], [], []
    for seed in range(seeds):
        obs, estimand = synthetic(36, 12, 0.15, seed)
        costs = {c: float(1 + (i % 3)) for i, c in enumerate(obs.cells)}
        t, r, _ = timed_search(obs, estimand, max_nodes)
        tc, rc, _ = timed_search(obs, estimand, max_nodes, costs)
        assert r.exact and rc.exact
        times.append(t + tc)
        sizes.append(r.size)
        counts.append(r.count)
        nodes.append(r.nodes + rc.nodes)
    print(
        f"   {seeds} seeds, all minimum sets and all minimum-cost sets each: median "
        f"{statistics.median(times) * 1e3:.1f} ms, max {max(times) * 1e3:.1f} ms; minimum "
        f"size {min(sizes)}–{max(sizes)}; optimal sets per case up to {max(counts)}; nodes "
        f"up to {max(nodes)}"
    )


def part_scale(max_nodes: int) -> None:
    print(
        f"\n2. thousands of cells (branch and bound up to {max_nodes:,} nodes, then the "
        f"integer program, then the labelled greedy approximation)"
    )
    for cells, policies, rate in [
        (2000, 12, 0.05),
        (5000, 12, 0.02),
        (10000, 12, 0.01),
        (2000, 24, 0.02),
        (5000, 40, 0.01),
        (10000, 60, 0.005),
    ]:
        obs, estimand = synthetic(cells, policies, rate, 1)
        t, r, rows = timed_search(obs, estimand, max_nodes)
        found = "all" if r.count_complete else "first, not all enumerated"
        what = (
            f"{r.method}: minimum {r.size} cells, {r.count} minimum sets ({found})"
            if r.exact
            else f"{r.method}: {r.size} cells ≥ lower bound {r.lower_bound:g}; {r.guarantee}"
        )
        print(
            f"   {cells:>6} cells × {policies} policies ({rows} pairs, {r.classes} column "
            f"classes): {t:.2f} s, {r.nodes:,} nodes; {what}"
        )


def part_ordering() -> None:
    from pytest_competence.audit._universe import suite_universe
    from pytest_competence.models.reference import reference_policy
    from pytest_competence.strategies import AuditComponent, Ordering

    print(
        "\n3. ordering universe (tests/test_audit.py): 5 candidate components, 7 reference policies"
    )
    names = [
        "ideal",
        "always-yes",
        "endpoint",
        "forward-reader",
        "names-order",
        "threshold?n=8",
        "always-no",
    ]
    start = time.perf_counter()
    universe = suite_universe(
        Ordering(names_line="chain"),
        {n: reference_policy(n, f"ref:{n}") for n in names},
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
    observed = time.perf_counter() - start
    estimand = {n: int(n == "ideal") for n in names}
    start = time.perf_counter()
    result = audit(
        universe.observations, estimand, components=universe.components, costs=universe.costs
    )
    print(
        f"   {universe.prompts} prompts per policy, {len(universe.observations.cells)} cells: "
        f"policies answered in {observed:.2f} s; lattice "
        f"({2 ** len(universe.components.names)} subsets), leave-one-out and "
        f"both minimum searches in {time.perf_counter() - start:.3f} s; minimum "
        f"{result.minimum.size} cells ({result.minimum.count} sets), cheapest "
        f"{result.minimum_cost.cost:,.0f} characters"
    )


def example_specs() -> list[tuple[str, object]]:
    """``(test id, spec)`` for every competence suite in ``examples/`` (parametrizations
    expanded, as pytest collects them)."""
    import importlib.util
    import itertools
    from pathlib import Path

    from pytest_competence.engine.spec import spec_from_marker

    out = []
    for path in sorted((Path(__file__).resolve().parent.parent / "examples").glob("test_*.py")):
        loader = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(module)
        for name, test in vars(module).items():
            marks = getattr(test, "pytestmark", [])
            found = [m for m in marks if m.name == "competence"]
            if not name.startswith("test_") or not found:
                continue
            grids = []
            for m in (m for m in marks if m.name == "parametrize"):
                keys = (
                    [k.strip() for k in m.args[0].split(",")]
                    if isinstance(m.args[0], str)
                    else list(m.args[0])
                )
                grids.append([dict(zip(keys, v if len(keys) > 1 else (v,))) for v in m.args[1]])
            for combo in itertools.product(*grids):
                overrides = {k: v for d in combo for k, v in d.items()}
                label = "-".join(
                    str(v) for d in combo for k, v in d.items() if k != "presentations"
                )
                out.append(
                    (
                        f"{path.name}::{name}" + (f"[{label}]" if label else ""),
                        spec_from_marker(found[0].args, found[0].kwargs, overrides),
                    )
                )
    return out


def part_examples() -> None:
    from pytest_competence.audit._suite import audit_spec

    print("\n4. the suite audit of every example suite (pytest --competence-audit), per family")
    per: dict[str, list[float]] = {}
    scores: dict[str, list[str]] = {}
    for test, spec in example_specs():
        start = time.perf_counter()
        doc = audit_spec(spec)
        took = time.perf_counter() - start
        name = spec.family.name
        per.setdefault(name, []).append(took)
        total = len(doc["caught"]) + len(doc["survivors"])
        scores.setdefault(name, []).append(f"{len(doc['caught'])}/{total}")
    for name, times in per.items():
        print(
            f"   {name:<15} {len(times):>3} suites: {sum(times):6.2f} s in all, max "
            f"{max(times):5.2f} s, median {statistics.median(times):5.2f} s; mutation scores "
            f"{', '.join(sorted(set(scores[name])))}"
        )
    print(f"   all {sum(map(len, per.values()))} suites: {sum(map(sum, per.values())):.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="Cases in part 1 (default 20)")
    parser.add_argument(
        "--max-nodes",
        type=int,
        default=50_000,
        help="Exact search budget (default 50000, the library default)",
    )
    parser.add_argument(
        "--only-examples", action="store_true", help="Run part 4 only (the example suites' audits)"
    )
    args = parser.parse_args()
    print(describe())
    if not args.only_examples:
        part_target(args.seeds, args.max_nodes)
        part_scale(args.max_nodes)
        part_ordering()
    part_examples()


if __name__ == "__main__":
    main()
