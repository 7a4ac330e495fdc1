"""``pytest --competence-audit`` and ``competence audit``, run as real sessions with pytester."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

# Imported before any in-process session (see tests/test_plugin.py for why).
import pytest_competence.audit._suite
import pytest_competence.engine.spec  # noqa: F401

SUITES = """
import pytest

@pytest.mark.competence(levels=[4, 8], pairs=8)
def test_endpoints(competence):
    pass

@pytest.mark.competence(levels=[8, 16], pairs=8, distance=2)
def test_interior(competence):
    pass

def test_plain():
    pass
"""


def test_audit_names_the_surviving_shortcut_and_a_witness(pytester: pytest.Pytester):
    pytester.makepyfile(test_suites=SUITES)
    result = pytester.runpytest("--competence-audit", "--competence-model=ref:ideal,ref:endpoint")
    # One audit per test whatever the models; the plain test still runs; no model answers.
    result.assert_outcomes(passed=3, deselected=4, warnings=3)
    result.stdout.fnmatch_lines(
        [
            "*= competence audit =*",
            "test_suites.py::test_endpoints[[]*[]]  Ordering(vocabulary='front_behind')  "
            "mutation score 7/9 *",
            "  survive: ref:endpoint, ref:threshold?n=8",
            "  WARNING ref:endpoint passes this suite while it claims competence; a cell that "
            "catches it: n=* distance=2 * (add interior queries (distance=2))",
            "*+ interior queries (distance=2) * collide with ref:ideal: ref:threshold?n=8",
            "*+ larger n (n=16), interior queries (distance=2) * identified",
            "  leave one out: 2 of 4 declared components essential:",
            "    n=8: without it ref:threshold?n=4 pass(es)",
            "    presentation=equivalent: without it ref:forward-reader, ref:threshold?n=4 pass(es)",
            "  minimum identifying support: * cells (exact; * minimum sets), e.g.",
            "test_suites.py::test_interior[[]*[]]  Ordering(vocabulary='front_behind', distance=2)  "
            "mutation score 8/9 *",
            "  survive: ref:threshold?n=16",
            "2 suites audited against the reference policies (no model called); 3 surviving *",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*CompetenceAuditWarning: test_suites.py::test_endpoints[[]*[]]: "
            "the non-competent policy ref:endpoint passes this suite*"
        ]
    )
    assert "survive: ref:endpoint" not in result.stdout.str().split("test_interior[")[1]


def test_audit_writes_the_audit_document_and_page(pytester: pytest.Pytester):
    pytester.makepyfile(test_suites=SUITES)
    result = pytester.runpytest(
        "--competence-audit", "--competence-json=a.json", "--competence-html=a.html"
    )
    result.assert_outcomes(passed=3, deselected=2, warnings=3)
    doc = json.loads((pytester.path / "a.json").read_text("utf-8"))
    assert doc["schema"] == "pytest-competence/audit/1"
    endpoints, interior = doc["audits"]
    assert endpoints["test"] == "test_suites.py::test_endpoints[*]"
    assert [s["policy"] for s in endpoints["survivors"]] == ["ref:endpoint", "ref:threshold?n=8"]
    assert endpoints["minimum_support"]["exact"]
    assert [s["policy"] for s in interior["survivors"]] == ["ref:threshold?n=16"]
    page = (pytester.path / "a.html").read_text("utf-8")
    assert "<script" not in page and "ref:endpoint passes this suite" in page


def test_a_bad_declaration_fails_its_audit_naming_the_argument(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.parametrize("pairs", [6])
        @pytest.mark.competence(levels=[4])
        def test_a(competence, pairs):
            pass
    """
    )
    result = pytester.runpytest("--competence-audit")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines(
        [
            "*@pytest.mark.competence: Expected pairs per level to be a "
            "positive multiple of 4*pairs=6*"
        ]
    )


@pytest.mark.slow
def test_audit_under_xdist_and_from_the_command_line(pytester: pytest.Pytester):
    pytest.importorskip("xdist")
    pytester.makepyfile(test_suites=SUITES)
    result = pytester.runpytest_subprocess("--competence-audit", "-n", "2")
    result.assert_outcomes(passed=3, warnings=3)
    result.stdout.fnmatch_lines(
        ["*= competence audit =*", "  survive: ref:endpoint, *", "2 suites audited *"]
    )
    # Through this interpreter: the `competence` script need not be on PATH.
    cli = pytester.run(
        sys.executable, "-m", "pytest_competence.cli", "audit", "test_suites.py", "--json", "c.json"
    )
    assert cli.ret == 0
    doc = json.loads((pytester.path / "c.json").read_text("utf-8"))
    assert [a["mutation_score"] for a in doc["audits"]] == [7 / 9, 8 / 9]


def test_no_test_that_would_call_a_model_runs_under_the_audit(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_model="""
        def test_uses_the_model(competence_model):
            raise AssertionError("a model was called")

        def test_plain():
            pass
    """
    )
    result = pytester.runpytest("--competence-audit", "--competence-model=ref:ideal,ref:coin")
    result.assert_outcomes(passed=1, deselected=2)
    assert "competence audit" not in result.stdout.str()


@pytest.mark.slow
def test_the_audit_of_every_example_suite_covers_every_family(pytester: pytest.Pytester):
    from pytest_competence.audit._universe import family_zoo
    from pytest_competence.strategies import FAMILIES

    examples = Path(__file__).resolve().parent.parent / "examples"
    for path in sorted(examples.glob("test_*.py")):
        (pytester.path / path.name).write_text(path.read_text("utf-8"), "utf-8")
    result = pytester.runpytest_subprocess(
        "--competence-audit",
        "--competence-json=a.json",
        "-p",
        "no:cacheprovider",
        "-W",
        "ignore::pytest_competence.audit.CompetenceAuditWarning",
    )
    assert result.ret == 0
    out = result.stdout.str()
    assert "not audited" not in out
    doc = json.loads((pytester.path / "a.json").read_text("utf-8"))
    assert {a["family_name"] for a in doc["audits"]} == set(FAMILIES)
    for a in doc["audits"]:
        levels = [int(c[2:]) for c in a["declared_components"] if c.startswith("n=")]
        shortcuts = set(family_zoo(a["family_name"], levels)) - {"ref:ideal"}
        found = set(a["caught"]) | {s["policy"] for s in a["survivors"]}
        assert found == shortcuts and a["mutation_score"] == len(a["caught"]) / len(shortcuts)
        line = f"{a['test']}  {a['family']}  mutation score {len(a['caught'])}/{len(shortcuts)} "
        assert line in out
