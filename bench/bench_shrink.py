"""Cost of minimising a failing case, in batched model calls, on threshold policies.

For each n* spread over 4–1024, the model is ``ref:threshold?n=<n* − 1>``: ideal up to n* − 1
people, wrong from n* on whenever a premise is rewritten — so the smallest failing n is n*,
known by construction. Cases come from the full presentation strategy: n in [4, 1024], the
vocabulary from the catalog, the latent instance, both presentations' names lines and premise
orders, the rewrite count and positions, each drawn by Hypothesis.

1. Hypothesis *generates* cases until the first one fails; its calls are the cost of finding it.
2. :func:`pytest_competence.minimise.minimise` minimises that case: boundary search on n, a
   vocabulary scan, Hypothesis's shrinker, and asking the result again (3 fresh sends, 1 call).
   Then the same from the same case with Hypothesis's shrinker alone, for comparison.
3. The plugin's own path: the paper's grid (n = 4, 8, …, 1024; 8 instances per level) finds the
   failure in one batched call, and its smallest failing instance is minimised as in 2.

Every model call is one batched call; answers are remembered, so no prompt is sent twice.
Run on demand, not under pytest; the target (at most 60 batched calls to the exact minimal n
anywhere in the range) is checked and reported, not asserted:

    python bench/bench_shrink.py [--runs 24] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from _machine import describe
from hypothesis import HealthCheck, Phase, Verbosity, given, settings

from pytest_competence.engine.evaluate import evaluate
from pytest_competence.minimise import Asker, Budget, fails, minimise
from pytest_competence.models import resolve_model
from pytest_competence.strategies import Ordering

LO, HI = 4, 1024
TARGET = 60
FIXED = [4, 5, 9, 33, 100, 129, 257, 500, 513, 777, 1000, 1024]
GRID = [4, 8, 16, 32, 64, 128, 256, 512, 1024]


def first_failure(space, asker: Asker, seed: int):
    """Generate cases with Hypothesis until one fails; that case (asker counts the calls)."""
    found = []

    class Found(Exception):
        pass

    @settings(
        phases=(Phase.generate,),
        max_examples=5000,
        database=None,
        deadline=None,
        verbosity=Verbosity.quiet,
        suppress_health_check=list(HealthCheck),
    )
    @given(space.strategy())
    def search(case):
        observations = asker.ask([space.prompts(case)])[0]
        if fails(observations):
            found.append(case)
            raise Found

    search._hypothesis_internal_use_seed = seed  # type: ignore[attr-defined]
    try:
        search()
    except Found:
        return found[0]
    return None


def one(n_star: int, seed: int) -> dict[str, object]:
    model = resolve_model(f"ref:threshold?n={n_star - 1}")
    space = Ordering().strategies.case_space(min_n=LO, max_n=HI, vocabularies=True)
    finder = Asker(model, space.family, budget=Budget.unlimited())
    start = first_failure(space, finder, seed)
    assert start is not None, f"no failure generated for n*={n_star}"
    row: dict[str, object] = {"n*": n_star, "find": finder.spent, "start_n": start.n}
    family = Ordering()
    items = family.design(levels=GRID, pairs=8, seed=seed)
    design = evaluate(family, items, model)
    failing = sorted(
        (item.instance.n, k)
        for k, (item, row_) in enumerate(zip(items, design.observations))
        if fails(row_)
    )
    design_start = space.from_design(items[failing[0][1]].instance)
    modes = (
        ("full", start, {}),
        ("hyp", start, {"boundary": False, "vocabularies": False}),
        ("design", design_start, {}),
    )
    for label, case, options in modes:
        # A new asker per mode, sharing the remembered answers: the start costs nothing.
        asker = Asker(model, space.family, budget=Budget(1000, 600), memo=dict(finder.memo))
        asker.remember(design)
        t = time.perf_counter()
        m = minimise(space, model, [case], asker=asker, **options)
        assert m is not None and m.reproduced
        row[label] = {
            "calls": m.total_calls,
            "phases": dict(m.calls),
            "n": m.case.n,
            "exact": m.case.n == n_star,
            "seconds": time.perf_counter() - t,
            "prompts": m.prompts,
        }
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--runs",
        type=int,
        default=24,
        help="n* values: 12 fixed ones, the rest drawn uniformly (default 24)",
    )
    parser.add_argument("--seed", type=int, default=0, help="Seed for n* and Hypothesis")
    args = parser.parse_args()
    import hypothesis

    print(describe(f"hypothesis {hypothesis.__version__}"))
    rng = random.Random(args.seed)
    stars = FIXED[: args.runs] + [rng.randint(LO, HI) for _ in range(args.runs - len(FIXED))]
    rows = [one(n, args.seed + i) for i, n in enumerate(stars)]
    head = (
        f"{'n*':>5} {'find':>5} {'start n':>7} | {'full':>4} {'bnd':>4} {'voc':>4} {'hyp':>4}"
        f" {'conf':>4} {'÷find':>6} {'n':>5} {'ok':>3} | {'hyp-only':>8} {'n':>5} {'ok':>3}"
        f" | {'design':>6} {'n':>5} {'ok':>3}"
    )
    print(head)
    for r in rows:
        f, h, d = r["full"], r["hyp"], r["design"]
        p = f["phases"]
        print(
            f"{r['n*']:>5} {r['find']:>5} {r['start_n']:>7} | {f['calls']:>4} "
            f"{p.get('boundary', 0):>4} {p.get('vocabulary', 0):>4} {p.get('shrink', 0):>4} "
            f"{p.get('confirm', 0):>4} {f['calls'] / r['find']:>6.1f} {f['n']:>5} "
            f"{'yes' if f['exact'] else 'NO':>3} | {h['calls']:>8} {h['n']:>5} "
            f"{'yes' if h['exact'] else 'NO':>3} | {d['calls']:>6} {d['n']:>5} "
            f"{'yes' if d['exact'] else 'NO':>3}"
        )
    names = {
        "full": "from a generated failure, boundary + vocabulary + Hypothesis",
        "hyp": "from a generated failure, Hypothesis alone",
        "design": "from the design's failing instance (the plugin's path)",
    }
    for label in ("full", "hyp", "design"):
        calls = [r[label]["calls"] for r in rows]
        exact = sum(r[label]["exact"] for r in rows)
        ratio = [r[label]["calls"] / (1 if label == "design" else r["find"]) for r in rows]
        print(
            f"{names[label]}: batched calls per minimisation max {max(calls)}, median "
            f"{statistics.median(calls):g}, mean {statistics.mean(calls):.1f}; exact minimal n "
            f"in {exact}/{len(rows)}; calls minimising ÷ calls finding: median "
            f"{statistics.median(ratio):.1f}, max {max(ratio):.1f}; "
            f"{statistics.mean(r[label]['seconds'] for r in rows):.2f} s per minimisation"
        )
    finds = [r["find"] for r in rows]
    worst = max(r[m]["calls"] for r in rows for m in ("full", "design"))
    exact = all(r[m]["exact"] for r in rows for m in ("full", "design"))
    print(
        f"finding the first failure by generation: calls median {statistics.median(finds):g}, "
        f"max {max(finds)}; the design finds it in 1 batched call (its ratio is per that call)"
    )
    print(
        f"target: <= {TARGET} batched calls to the exact minimal n: "
        + ("met" if worst <= TARGET and exact else "NOT met")
        + f" (worst {worst})"
    )


if __name__ == "__main__":
    main()
