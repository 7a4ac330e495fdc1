"""The suite audit of every family: a shortcut that survives a declared suite, and the witness
cell the audit names for it, checked by running both policies on that cell's prompts."""

from __future__ import annotations

import json

import pytest

from pytest_competence.audit._suite import audit_spec, audit_suite, summary_lines
from pytest_competence.audit._universe import (
    family_variant,
    family_zoo,
    suite_universe,
)
from pytest_competence.engine.spec import spec_from_marker
from pytest_competence.models.reference import reference_policy

# (marker args, marker kwargs, a shortcut the declared suite lets pass)
SURVIVING = {
    "ordering": (("ordering",), {"levels": [4, 8], "pairs": 8}, "ref:endpoint"),
    "horn": (
        ("horn",),
        {"levels": [2, 4], "pairs": 8, "presentations": ["original", "reshuffle"]},
        "ref:horn-if-then",
    ),
    "reformulations": (
        ("reformulations",),
        {"levels": [2, 4], "pairs": 9, "presentations": ["original", "passive"]},
        "ref:crt-hedge",
    ),
    "intervention": (
        ("intervention",),
        {"levels": [4], "pairs": 6, "presentations": ["base/*/generate", "sham/*/generate"]},
        "ref:iw-stuck",
    ),
    "raven": (
        ("raven",),
        {"levels": [2], "pairs": 6, "variations": 2, "presentations": ["original", "reorder"]},
        "ref:raven-aligned",
    ),
    "concepts": (
        ("concepts",),
        {"levels": [1, 2], "pairs": 6, "variations": 2, "presentations": ["original", "reorder"]},
        "ref:surface",
    ),
    # One new object per task at level 1 (a one-test rule holds for a third of the objects):
    # every query set of these tasks is "not wudsy", and balanced labels are the witness.
    "concepts-constant": (
        ("concepts",),
        {"levels": [1], "pairs": 3, "queries": 1, "variations": 1},
        "ref:concepts-constant?value=false",
    ),
    "grammar": (
        ("grammar",),
        {"levels": [1], "pairs": 4, "variations": 2, "presentations": ["original", "reorder"]},
        "ref:surface",
    ),
    "programs": (
        ("programs",),
        {"levels": [1, 2], "pairs": 6, "variations": 2, "presentations": ["original", "reorder"]},
        "ref:surface",
    ),
}


def _witness_prompts(spec, cell_text: str, pairs: int):
    """The widened design of the witness cell's configuration at its level, and the indices of
    that cell's prompts in it (rebuilt from the family and its audit components alone)."""
    family = spec.family
    candidates = family.audit_components(list(spec.levels), list(spec.presentations))
    asked = list(
        dict.fromkeys(
            [*spec.presentations, *(c.value for c in candidates if c.kind == "presentation")]
        )
    )
    variants = [(family, "")] + [
        (family_variant(family, c.value), " ".join(f"{k}={v}" for k, v in c.value.items()))
        for c in candidates
        if c.kind == "option"
    ]
    levels = [*spec.levels, *(c.value for c in candidates if c.kind == "level")]
    for fam, label in variants:
        for n in levels:
            try:
                items = fam.design(levels=[n], pairs=pairs, seed=spec.seed, presentations=asked)
            except ValueError:
                continue
            prompts = [p for item in items for p in item.prompts]
            where = [
                k
                for k, p in enumerate(prompts)
                if " ".join(
                    x
                    for x in (
                        f"n={n}",
                        p.presentation.partition(":")[0],
                        label,
                        str(p.params.get("cell", "")),
                    )
                    if x
                )
                == cell_text
            ]
            if where:
                return fam, prompts, where
    raise AssertionError(f"no prompt of the widened design is in cell {cell_text!r}")


@pytest.mark.parametrize("name", list(SURVIVING))
def test_a_surviving_shortcut_gets_a_witness_that_really_separates_it(name):
    args, kwargs, shortcut = SURVIVING[name]
    spec = spec_from_marker(args, kwargs)
    doc = audit_spec(spec)
    survivors = {s["policy"]: s for s in doc["survivors"]}
    assert shortcut in survivors and shortcut not in doc["caught"]
    found = survivors[shortcut]
    declared = set(doc["declared_components"])
    assert found["needs"] and not set(found["needs"]) & declared
    # Independently: both policies, fresh, answer the witness cell's configuration as the
    # widened suite asks it, and differ on that cell's prompts; on the declared design alone
    # they agree everywhere.
    fam, prompts, where = _witness_prompts(spec, found["witness"], doc["pairs"])

    def answers(policy, asked):
        model = reference_policy(policy.removeprefix("ref:"), policy)
        return [fam.parse(a).answer for a in model.generate(asked)]

    ideal, other = answers("ref:ideal", prompts), answers(shortcut, prompts)
    assert any(ideal[k] != other[k] for k in where)
    declared_prompts = [
        p
        for item in spec.family.design(
            levels=list(spec.levels),
            pairs=doc["pairs"],
            seed=spec.seed,
            presentations=list(spec.presentations),
        )
        for p in item.prompts
    ]
    assert answers("ref:ideal", declared_prompts) == answers(shortcut, declared_prompts)
    lines = summary_lines("t", doc)
    assert (
        f"  WARNING {shortcut} passes this suite while it claims competence; a cell that "
        f"catches it: {found['witness']} (add {', '.join(found['needs'])})" in lines
    )


@pytest.mark.parametrize("name", list(SURVIVING))
def test_every_family_has_candidates_and_the_lattice_adds_them(name):
    args, kwargs, _ = SURVIVING[name]
    doc = audit_spec(spec_from_marker(args, kwargs))
    candidates = [c for c in doc["components"] if c not in doc["declared_components"]]
    assert candidates and len(doc["lattice"]) == 2 ** len(candidates)
    full = doc["lattice"][-1]
    assert set(full["added"]) == set(candidates)
    # The path ends on the whole universe: its classes are the lattice's top row's.
    assert doc["path"][-1]["classes"] == full["classes"]
    assert doc["path"][-1]["cells"] == full["cells"]


def test_the_intervention_audit_reports_classes_along_a_path_and_essential_components():
    spec = spec_from_marker(("intervention",), {"levels": [4], "pairs": 6})
    doc = audit_spec(spec)
    assert doc["declared_components"][:4] == ["n=4", "world=base", "world=target", "world=sham"]
    assert {"mapping=TFU", "readout=score"} <= set(doc["declared_components"])
    assert doc["mutation_score"] == 1.0 and doc["identified"]
    # Along the path the collisions only shrink (supports only grow), and the base world alone
    # cannot tell iw-stuck (right on every base) from the ideal solver.
    sizes = [len(step["collisions"]) for step in doc["path"]]
    assert sizes == sorted(sizes, reverse=True)
    base_only = next(s for s in doc["path"] if s["cells"])
    assert "ref:iw-stuck" in {c["policies"][1] for c in base_only["collisions"]}
    loo = {r["component"]: r for r in doc["leave_one_out"]}
    assert ["ref:ideal", "ref:iw-stuck"] in loo["world=target"]["created"]
    assert doc["minimum_support"]["exact"]


def test_the_constant_shortcut_solves_exactly_the_one_label_query_sets():
    spec = spec_from_marker(("concepts",), {"levels": [1, 3], "pairs": 8, "variations": 2})
    doc = audit_spec(spec)
    items = spec.family.design(
        levels=list(spec.levels),
        pairs=doc["pairs"],
        seed=spec.seed,
        presentations=list(spec.presentations),
    )
    for value in (True, False):
        solved = sum(
            all(json.loads(p.gold) == [value] * len(json.loads(p.gold)) for p in item.prompts)
            for item in items
        )
        name = "ref:concepts-constant" + ("" if value else "?value=false")
        assert doc["solved"][name] == pytest.approx(solved / len(items))
        assert (name in doc["caught"]) == (solved < len(items))
    # Balanced query labels, a candidate, give the constant answer no instance at all.
    balanced = audit_suite(
        family_variant(spec.family, {"balanced": True}),
        levels=list(spec.levels),
        presentations=list(spec.presentations),
        most=8,
    )
    assert balanced["solved"]["ref:concepts-constant"] == 0
    assert balanced["solved"]["ref:concepts-constant?value=false"] == 0


def test_a_batch_reading_policy_answers_the_declared_cells_as_the_suite_asks_them():
    """iw-stuck keeps the verdict of the first world of a question it reads: on a suite of
    target cells alone it is right everywhere; the audit's widened design asks the base first,
    where it would be wrong on every target — the declared cells are answered as declared."""
    spec = spec_from_marker(
        ("intervention",), {"levels": [4], "pairs": 6, "presentations": ["target/*/generate"]}
    )
    fam = spec.family
    prompts = [
        p
        for item in fam.design(levels=[4], pairs=6, seed=1, presentations=list(spec.presentations))
        for p in item.prompts
    ]
    stuck = reference_policy("iw-stuck", "ref:iw-stuck")
    ideal = reference_policy("ideal", "ref:ideal")
    assert stuck.generate(prompts) == ideal.generate(prompts)  # alone, the suite cannot catch it
    widened = [
        p
        for item in fam.design(levels=[4], pairs=6, seed=1, presentations=["*/*/*"])
        for p in item.prompts
    ]
    assert stuck.generate(widened) != ideal.generate(widened)
    doc = audit_spec(spec)
    found = {s["policy"]: s for s in doc["survivors"]}["ref:iw-stuck"]
    assert found["witness"] and not set(found["needs"]) & set(doc["declared_components"])
    universe = suite_universe(
        fam,
        family_zoo("intervention", [4]),
        levels=[4],
        presentations=list(spec.presentations),
        pairs=6,
        seed=1,
    )
    assert universe.solved["ref:iw-stuck"] == 1.0


def test_a_family_whose_audit_components_are_unusable_is_told_which_one(pytester):
    pytester.makepyfile(
        test_bad="""
        import pytest
        from pytest_competence.strategies import AuditComponent, Horn

        class Mine(Horn):
            def audit_components(self, levels, presentations):
                return [AuditComponent("upside down", "presentation", "upside_down")]

        class Loose(Horn):
            def audit_components(self, levels, presentations):
                return [("larger", "level", 64)]

        @pytest.mark.competence(family=Mine(), levels=[2], pairs=2)
        def test_mine(competence):
            pass

        @pytest.mark.competence(family=Loose(), levels=[2], pairs=2)
        def test_loose(competence):
            pass
    """
    )
    result = pytester.runpytest("--competence-audit", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*competence audit: Horn(vary='rules').audit_components(): component 'upside down' asks "
            "presentation 'upside_down', which the family's design refuses: Unknown presentation*",
            "*competence audit: Expected Horn(vary='rules').audit_components() to return "
            "AuditComponent(name, kind, value)*but got ('larger', 'level', 64)",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_the_path_classes_are_the_policies_grouped_by_their_responses():
    """Brute force: at each step of the path, group the policies by their responses on the cells
    whose components have all been added so far."""
    spec = spec_from_marker(
        ("intervention",), {"levels": [4], "pairs": 6, "presentations": ["*/TFU/generate"]}
    )
    doc = audit_spec(spec)
    universe = suite_universe(
        spec.family,
        family_zoo("intervention", [4]),
        levels=[4],
        presentations=list(spec.presentations),
        pairs=doc["pairs"],
        seed=1,
    )
    obs, requires = universe.observations, universe.components.requires
    added: set[str] = set()
    for step in doc["path"]:
        added.add(step["added"])
        cells = [k for k, c in enumerate(obs.cells) if requires[c] <= added]
        groups: dict[tuple, list[str]] = {}
        for p in obs.policies:
            groups.setdefault(tuple(obs.responses[p][k] for k in cells), []).append(p)
        assert sorted(map(sorted, groups.values())) == sorted(map(sorted, step["members"]))
        assert step["cells"] == len(cells) and step["classes"] == len(groups)
        ideal = next(g for g in groups.values() if "ref:ideal" in g)
        assert {c["policies"][1] for c in step["collisions"]} == set(ideal) - {"ref:ideal"}


def test_the_diagnosis_of_a_horn_shortcut_names_the_cell_to_add():
    from pytest_competence.audit._diagnose import diagnose
    from pytest_competence.engine.evaluate import evaluate
    from pytest_competence.models import resolve_model
    from pytest_competence.strategies import Horn

    family = Horn()
    items = family.design(levels=[2, 4], pairs=8, seed=1, presentations=["original", "reshuffle"])
    doc = diagnose(evaluate(family, items, resolve_model("ref:horn-if-then")))
    assert (
        "ref:horn-if-then" in doc["indistinguishable"] and "ref:ideal" in doc["indistinguishable"]
    )
    (found,) = [t for t in doc["to_add"] if t["policies"] == ["ref:ideal", "ref:horn-if-then"]]
    assert found["needs"] == ["the other renderer (whenever)"]
    assert "the other renderer (whenever)" in doc["verdict"]
