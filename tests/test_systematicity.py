"""Systematicity metrics (systematicity paper, arXiv:2609.13948, §3.5–3.6, App. A) and the rule-induction reference policies.

The metrics are cross-checked against a by-hand numpy computation on hand-built evaluations;
the policies run on the toy family of ``tests/induction_toy.py`` and on every rule-induction
family registered in ``FAMILIES``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from induction_toy import Toyshift
from pytest_competence.engine.analysis import FAMILY_ANALYSES, analyze
from pytest_competence.engine.evaluate import evaluate, majority
from pytest_competence.engine.evaluation import Evaluation
from pytest_competence.engine.records import evaluation_from_records, records
from pytest_competence.models import ModelSpecError, resolve_model
from pytest_competence.protocol import Observation
from pytest_competence.strategies import FAMILIES, Item, Parsed, Prompt
from pytest_competence.strategies._induction import induction_families
from pytest_competence.strategies._induction.metrics import systematicity_summary

GOLD, WRONG = "[1]", "[0]"


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> type[Toyshift]:
    """The toy family registered for this test only (policies and analyses look it up by name)."""
    monkeypatch.setitem(FAMILIES, "toyshift", Toyshift)
    monkeypatch.setitem(FAMILY_ANALYSES, "toyshift", systematicity_summary)
    return Toyshift


# -- hand-built evaluations, checked against numpy by hand ---------------------------------------


def _observation(prompt: Prompt, passes: np.ndarray) -> Observation:
    """N attempts, right where ``passes`` is true; one attempt is kept as is, N > 1 voted."""
    tries = [Observation(prompt, a, Parsed(a)) for a in (GOLD if ok else WRONG for ok in passes)]
    return tries[0] if len(tries) == 1 else majority(prompt, tries)


def _hand_built(
    levels: list[int], original: np.ndarray, attempts: dict[str, np.ndarray]
) -> Evaluation:
    """Tasks with an original prompt (N attempts, ``original[t]``) and K variations per type
    (``attempts[type][t, k]``, N attempts each); gold is always ``[1]``."""
    items, rows = [], []
    for t, n in enumerate(levels):

        def prompt(name: str, kind: str, k: int) -> Prompt:
            return Prompt(
                family="toyshift",
                instance_id=f"toy/{t}",
                presentation=name,
                system="",
                text=f"{t} {name}",
                gold=GOLD,
                answer_space=(),
                params={"n": n, "index": t, "seed": 0, "isomorphism": kind, "variation": k},
            )

        row = [_observation(prompt("original", "original", 0), original[t])]
        for kind, grid in attempts.items():
            # Variations listed out of order: the metrics must sort them by params["variation"].
            for k in reversed(range(grid.shape[1])):
                row.append(_observation(prompt(f"{kind}:{k + 1}", kind, k + 1), grid[t, k]))
        items.append(Item(None, tuple(o.prompt for o in row)))
        rows.append(tuple(row))
    return Evaluation("hand", Toyshift(), tuple(items), tuple(rows))


def _by_hand(solved: np.ndarray) -> dict[str, float]:
    any_, frac, all_ = solved.max(axis=1), solved.mean(axis=1), solved.min(axis=1)
    return {
        "any": any_.mean(),
        "fraction": frac.mean(),
        "all": all_.mean(),
        "gap": any_.mean() - all_.mean(),
    }


def _variance_by_hand(passed: np.ndarray) -> dict[str, float | None]:
    """systematicity paper, arXiv:2609.13948, App. A.2 per task, written out, then averaged where σ²_max > 0."""
    rho = []
    for task in passed.astype(float):
        K, N = task.shape
        p_k = task.mean(axis=1)
        p = task.mean()
        total = sum((pk - p) ** 2 for pk in p_k) / (K - 1)
        within = sum(pk * (1 - pk) / (N - 1) for pk in p_k) / K
        top = K / (K - 1) * p * (1 - p)
        if top > 0:
            rho.append((total / top, within / top, max(0.0, total / top - within / top)))
    if not rho:
        return {"rho_total": None, "rho_within": None, "rho_between": None}
    m = np.mean(rho, axis=0)
    return {"rho_total": m[0], "rho_within": m[1], "rho_between": m[2]}


@st.composite
def designs(draw: st.DrawFn) -> tuple[list[int], np.ndarray, dict[str, np.ndarray]]:
    tasks = draw(st.integers(1, 6))
    K = draw(st.integers(1, 4))
    N = draw(st.sampled_from([1, 2, 3]))
    kinds = draw(
        st.lists(
            st.sampled_from(["reorder", "rebind", "substitute"]),
            min_size=1,
            max_size=3,
            unique=True,
        )
    )
    bits = st.lists(st.booleans(), min_size=tasks * K * N, max_size=tasks * K * N)
    attempts = {k: np.array(draw(bits), dtype=bool).reshape(tasks, K, N) for k in kinds}
    original = np.array(
        draw(st.lists(st.booleans(), min_size=tasks * N, max_size=tasks * N)), dtype=bool
    ).reshape(tasks, N)
    levels = [draw(st.sampled_from([2, 5])) for _ in range(tasks)]
    return levels, original, attempts


def _close(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (
        a is not None and b is not None and math.isclose(a, b, abs_tol=1e-12)
    )


@settings(max_examples=60, deadline=None)
@given(designs())
def test_metrics_match_a_computation_by_hand(design) -> None:
    levels, original, attempts = design
    N = original.shape[1]
    s = systematicity_summary(_hand_built(levels, original, attempts), bootstrap=50)[
        "systematicity"
    ]
    majority_pass = {k: g.sum(axis=2) * 2 > N for k, g in attempts.items()}  # strict majority
    assert s["attempts"] == N
    assert s["original"]["solved"] == pytest.approx((original.sum(axis=1) * 2 > N).mean())
    for kind, solved in majority_pass.items():
        want = _by_hand(solved)
        got = s["types"][kind]
        assert (got["tasks"], got["variations"]) == solved.shape
        assert all(math.isclose(got[k], want[k], abs_tol=1e-12) for k in want)
        assert got["any"] >= got["fraction"] >= got["all"]
        for k in want:
            low, high = got["ci"][k]
            assert low <= high and -1 <= low and high <= 1
    pooled = np.hstack(list(majority_pass.values()))
    assert all(math.isclose(s["pooled"][k], v, abs_tol=1e-12) for k, v in _by_hand(pooled).items())
    for level in s["by_level"]:
        rows = np.array(levels) == level["n"]
        for kind, solved in majority_pass.items():
            want = _by_hand(solved[rows])
            assert all(math.isclose(level["types"][kind][k], want[k], abs_tol=1e-12) for k in want)
            assert "ci" not in level["types"][kind]
    K = next(iter(attempts.values())).shape[1]
    if N >= 2 and K >= 2:
        for kind, grid in attempts.items():
            want = _variance_by_hand(grid)
            assert all(_close(s["variance"][kind][k], v) for k, v in want.items())
        want = _variance_by_hand(np.concatenate(list(attempts.values()), axis=1))
        assert all(_close(s["variance"]["pooled"][k], v) for k, v in want.items())
    else:
        assert "variance" not in s


def test_other_families_get_no_systematicity() -> None:
    from pytest_competence.strategies import Horn

    family = Horn()
    items = family.design(levels=[4], pairs=4, seed=1, presentations=["original", "equivalent"])
    summary = analyze(evaluate(family, items, resolve_model("ref:ideal")), bootstrap=0)["summary"]
    assert "systematicity" not in summary
    assert systematicity_summary(evaluate(family, items, resolve_model("ref:ideal"))) == {}


# -- reference policies ----------------------------------------------------------------------------


def _summary(family, spec: str, *, levels, pairs=4, attempts=1, bootstrap=0) -> dict:
    items = family.design(levels=levels, pairs=pairs, seed=3)
    evaluation = evaluate(family, items, resolve_model(spec), attempts=attempts)
    return analyze(evaluation, bootstrap=bootstrap)["summary"]["systematicity"]


def _every_family() -> list:
    return [pytest.param(cls, id=name) for name, cls in induction_families().items()]


def test_oracle_solves_every_variation_of_the_toy(toy) -> None:
    s = _summary(toy(variations=4), "ref:oracle", levels=[1, 6])
    assert s["original"]["solved"] == 1
    for m in [*s["types"].values(), s["pooled"]]:
        assert (m["any"], m["fraction"], m["all"], m["gap"]) == (1, 1, 1, 0)


@pytest.mark.parametrize("cls", _every_family())
@pytest.mark.parametrize("spec", ["ref:oracle", "ref:ideal"])
def test_oracle_and_ideal_solve_every_family(cls, spec: str) -> None:
    family = cls(variations=2)
    s = _summary(family, spec, levels=[family.levels[0]], pairs=2)
    assert s["original"]["solved"] == 1
    assert set(s["types"]) == set(family.isomorphisms)
    assert all(m["all"] == 1 and m["gap"] == 0 for m in s["types"].values())


def test_surface_policy_shows_a_gap_beyond_reordering(toy) -> None:
    s = _summary(toy(variations=5), "ref:surface", levels=[1, 3], pairs=6)
    reorder = s["types"]["reorder"]
    assert (reorder["any"], reorder["all"], reorder["gap"]) == (1, 1, 0)
    assert s["types"]["negate"]["all"] < 1 and s["types"]["relabel"]["all"] < 1
    assert s["types"]["relabel"]["gap"] > 0  # c = 0 relabellings are solved, others are not
    assert s["pooled"]["gap"] > 0 and s["original"]["solved"] == 1


@pytest.mark.parametrize("cls", _every_family())
def test_surface_policy_is_caught_in_every_family(cls) -> None:
    family = cls(variations=3)
    # The largest level: at the smallest a type can be trivial (one Raven feature to permute).
    s = _summary(family, "ref:surface", levels=[family.levels[1]], pairs=6)
    assert s["types"]["reorder"]["all"] == 1
    others = [m for kind, m in s["types"].items() if kind != "reorder"]
    assert others and min(m["fraction"] for m in others) < 1
    assert s["pooled"]["all"] < 1


def test_sampled_policy_yields_the_variance_decomposition(toy) -> None:
    s = _summary(
        toy(variations=3),
        "ref:induction-sampled?p=0.6&seed=0",
        levels=[1, 3],
        pairs=6,
        attempts=5,
        bootstrap=100,
    )
    assert s["attempts"] == 5
    assert set(s["variance"]) == {"reorder", "negate", "relabel", "pooled"}
    for v in s["variance"].values():
        assert (v["variations"], v["attempts"]) == (9 if v is s["variance"]["pooled"] else 3, 5)
        assert v["tasks_defined"] > 0 and v["rho_within"] > 0 and v["rho_between"] >= 0
    # The oracle never varies: no task has variance to split, so no ρ is defined.
    still = _summary(toy(variations=3), "ref:oracle", levels=[1], attempts=3)
    assert all(
        v["tasks_defined"] == 0 and v["rho_total"] is None for v in still["variance"].values()
    )


def test_sampled_policy_is_keyed_on_text_and_attempt(toy) -> None:
    from dataclasses import replace

    items = toy(variations=5).design(levels=[1, 2, 3], pairs=20, seed=0)
    prompts = [p for item in items for p in item.prompts]
    model = resolve_model("ref:induction-sampled?p=0.6&seed=0")
    first = model.generate(prompts)
    assert model.generate(prompts) == first  # a rerun gives the same answers
    again = model.generate([replace(p, attempt=1) for p in prompts])
    assert again != first
    right = [a == f"Answer: {p.gold}" for a, p in zip(first, prompts)]
    assert all(a == "Answer: []" for a, ok in zip(first, right) if not ok)
    assert 0.5 < np.mean(right) < 0.7  # p = 0.6 over 960 prompts


@pytest.mark.parametrize(
    "spec", ["ref:induction-sampled?p=2", "ref:induction-sampled?q=1", "ref:oracle?p=1"]
)
def test_bad_policy_parameters_are_refused(spec: str) -> None:
    with pytest.raises(ModelSpecError, match="p|q"):
        resolve_model(spec)


def test_other_families_are_answered_as_ideal_answers_them() -> None:
    from pytest_competence.strategies import Horn

    items = Horn().design(levels=[4, 8], pairs=4, seed=1, presentations=["original", "equivalent"])
    prompts = [p for item in items for p in item.prompts]
    ideal = resolve_model("ref:ideal").generate(prompts)
    for spec in ("ref:oracle", "ref:surface", "ref:induction-sampled?p=0"):
        assert resolve_model(spec).generate(prompts) == ideal


# -- archives --------------------------------------------------------------------------------------


def test_archived_records_give_the_same_summary(toy) -> None:
    family = toy(variations=3)
    items = family.design(levels=[1, 4], pairs=5, seed=2)
    live = evaluate(family, items, resolve_model("ref:induction-sampled?p=0.5"), attempts=3)
    rows = json.loads(json.dumps(records(live)))  # through JSON, as the archive holds them
    archived = evaluation_from_records(live.model, repr(family), rows)
    assert archived.family.name == "toyshift"
    want = analyze(live, bootstrap=200, seed=7)["summary"]["systematicity"]
    assert analyze(archived, bootstrap=200, seed=7)["summary"]["systematicity"] == want
