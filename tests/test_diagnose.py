"""The diagnosis (``--competence-diagnose``): which reference policy a model answers like.

Known answers first: every policy of the zoo diagnosed against the zoo comes out
indistinguishable from exactly its own class on the design and distinguishable from every other
policy; a mixture (right on some levels, a shortcut on others) is matched level by level; a
sampled policy gets an agreement interval that holds its true rate. Then a real session.
"""

from __future__ import annotations

import json

import pytest

import pytest_competence.audit._diagnose
import pytest_competence.models.reference  # noqa: F401  (imported before in-process sessions)
from pytest_competence.audit._core import Observations
from pytest_competence.audit._diagnose import diagnose
from pytest_competence.audit._universe import family_zoo
from pytest_competence.engine.evaluate import evaluate
from pytest_competence.models import resolve_model
from pytest_competence.strategies import Ordering
from pytest_competence.strategies.ordering.policies import read_ordering

ENDPOINTS = Ordering(vocabulary="front_behind")
INTERIOR = Ordering(vocabulary="front_behind", distance=2)


def _design(family: Ordering, levels: list[int], pairs: int = 8) -> list:
    return family.design(
        levels=levels, pairs=pairs, seed=1, presentations=["original", "equivalent"]
    )


def _zoo_classes(family: Ordering, levels: list[int]) -> list[tuple[str, ...]]:
    """The zoo's classes on the design, computed here from raw answers per prompt."""
    prompts = [p for item in _design(family, levels) for p in item.prompts]
    zoo = family_zoo("ordering", levels)
    obs = Observations(range(len(prompts)), {n: m.generate(prompts) for n, m in zoo.items()})
    return obs.classes((1 << len(prompts)) - 1)


@pytest.mark.parametrize("family", [ENDPOINTS, INTERIOR], ids=["endpoints", "interior"])
def test_each_policy_is_indistinguishable_from_its_class_and_no_other(family):
    levels = [5, 8]
    classes = _zoo_classes(family, levels)
    assert len(classes) > 4  # the design separates most of the zoo
    for cls in classes:
        for name in cls:
            d = diagnose(evaluate(family, _design(family, levels), resolve_model(name)))
            assert d["indistinguishable"] == list(cls), name
            assert d["verdict"].startswith("indistinguishable on this design from " + cls[0])
            for other, entry in d["agreement"].items():
                assert (entry["rate"] == 1.0) == (other in cls), (name, other)


def test_an_endpoint_only_suite_says_which_cell_tells_the_shortcut_from_the_solver():
    d = diagnose(evaluate(ENDPOINTS, _design(ENDPOINTS, [4, 8]), resolve_model("ref:endpoint")))
    assert d["indistinguishable"] == ["ref:ideal", "ref:endpoint", "ref:threshold?n=8"]
    added = {tuple(t["policies"]): t for t in d["to_add"]}
    assert added[("ref:ideal", "ref:endpoint")]["needs"] == ["interior queries (distance=2)"]
    assert "distance=2" in added[("ref:ideal", "ref:endpoint")]["witness"]
    assert added[("ref:ideal", "ref:threshold?n=8")]["needs"] == ["larger n (n=16)"]
    assert d["verdict"].endswith("add: interior queries (distance=2), larger n (n=16)")


class Mixture:
    """Right up to five people; beyond, reads every premise as the forward phrase."""

    name = "mixture"

    def __init__(self) -> None:
        self.ideal = resolve_model("ref:ideal")
        self.shortcut = resolve_model("ref:forward-reader")

    def generate(self, prompts):
        return [
            (self.ideal if read_ordering(p.text).people <= 5 else self.shortcut).generate([p])[0]
            for p in prompts
        ]


def test_a_mixture_is_matched_level_by_level():
    d = diagnose(evaluate(ENDPOINTS, _design(ENDPOINTS, [5, 8], pairs=32), Mixture()))
    assert d["indistinguishable"] == []
    best = {(lv["n"], lv["presentation"]): lv["best"] for lv in d["by_level"]}
    assert {"ref:ideal", "ref:forward-reader"} <= set(best[5, "original"])
    assert {"ref:ideal", "ref:forward-reader"} <= set(best[8, "original"])
    assert "ref:ideal" in best[5, "equivalent"]
    assert "ref:forward-reader" not in best[5, "equivalent"]
    # (Reading converse premises forward leaves the endpoints unconnected: "no", as always-no.)
    assert "ref:forward-reader" in best[8, "equivalent"]
    assert "ref:ideal" not in best[8, "equivalent"]
    assert {"ref:ideal", "ref:forward-reader"} <= {c[0] for c in d["candidates"]}
    pair = {"ref:ideal", "ref:forward-reader"}
    split = next(s for s in d["separations"] if set(s["policies"]) == pair)
    rates = {p: a["rate"] for p, a in zip(split["policies"], split["agreement"])}
    # Where the two differ, the mixture sides with the solver at n = 5, the shortcut at n = 8.
    assert 0 < rates["ref:ideal"] < 1 and rates["ref:ideal"] + rates["ref:forward-reader"] == 1
    assert d["verdict"].endswith("; equivalent n=5 ref:ideal (+3), n=8 ref:forward-reader")


def test_a_sampled_model_gets_agreement_with_an_interval():
    items = _design(ENDPOINTS, [4, 8])
    d = diagnose(evaluate(ENDPOINTS, items, resolve_model("ref:sampled?p=0.2&seed=3"), attempts=5))
    ideal = d["agreement"]["ref:ideal"]
    assert ideal["total"] == 5 * 2 * 2 * 8  # every attempt of every prompt
    assert ideal["ci"][0] < 0.8 < ideal["ci"][1]
    assert d["indistinguishable"] == []
    assert "ref:ideal" in d["closest"][0]["policies"]


SUITE = """
import pytest

@pytest.mark.competence(levels=[4, 8], pairs=8)
def test_endpoints(competence):
    pass
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["in-process", "xdist"])
def test_the_option_reports_the_diagnosis_in_terminal_json_and_html(
    pytester: pytest.Pytester, workers: list[str]
):
    pytester.makepyfile(test_suite=SUITE)
    run = pytester.runpytest_subprocess if workers else pytester.runpytest
    result = run(
        *workers,
        "--competence-model=ref:endpoint,ref:forward-reader",
        "--competence-diagnose",
        "--competence-report-only",
        "--competence-json=r.json",
        "--competence-html=r.html",
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*test_endpoints[[]ref:endpoint[]]*",
            "    diagnosis: indistinguishable on this design from ref:ideal, ref:endpoint, "
            "ref:threshold?n=8 (every answer equal); to tell them apart add: interior queries "
            "(distance=2), larger n (n=16)",
            "*test_endpoints[[]ref:forward-reader[]]*",
            "    diagnosis: indistinguishable on this design from ref:forward-reader (every answer "
            "equal)",
        ]
    )
    doc = json.loads((pytester.path / "r.json").read_text())
    assert [r["diagnosis"]["indistinguishable"][-1] for r in doc["results"]] == [
        "ref:threshold?n=8",
        "ref:forward-reader",
    ]
    assert (
        "Diagnosis: which reference policy it answers like"
        in (pytester.path / "r.html").read_text()
    )


def test_without_the_option_there_is_no_diagnosis(pytester: pytest.Pytester):
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("--competence-model=ref:endpoint", "--competence-json=r.json")
    result.assert_outcomes(passed=1)
    assert "diagnosis:" not in result.stdout.str()
    assert "diagnosis" not in json.loads((pytester.path / "r.json").read_text())["results"][0]


def test_two_models_under_q_print_both_diagnoses(pytester: pytest.Pytester):
    """Issue #24 item 4: under -q the matrix stands in for the per-result lines; each model's
    diagnosis still gets its line."""
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(
        "-q",
        "--competence-model=ref:endpoint,ref:forward-reader",
        "--competence-diagnose",
        "--competence-report-only",
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "which reference policy each model answers like (--competence-diagnose; the tables "
            "without -q):",
            "  test_suite.py::test_endpoints[[]ref:endpoint[]]: indistinguishable on this design "
            "from ref:ideal, ref:endpoint, ref:threshold?n=8 *",
            "  test_suite.py::test_endpoints[[]ref:forward-reader[]]: indistinguishable on this "
            "design from ref:forward-reader *",
        ]
    )
