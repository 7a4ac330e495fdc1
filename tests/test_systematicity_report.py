"""Systematicity in the reports (systematicity paper, arXiv:2609.13948, Fig. 4 bullet charts) and the generic rule-induction
wiring: real sessions of a toy suite (serial, and ``-n 2`` under ``--run-slow``), the archive
round trip, ``competence generate``."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import induction_toy
from induction_toy import Toyshift
from plugin_helpers import profile_section
from pytest_competence.cli import main as cli_main
from pytest_competence.engine.analysis import FAMILY_ANALYSES, analyze
from pytest_competence.engine.evaluate import evaluate
from pytest_competence.models import resolve_model
from pytest_competence.report._cells import family_html as systematicity_html
from pytest_competence.report._cells import tables_lines as systematicity_lines
from pytest_competence.report._cells import tables_markdown as systematicity_markdown
from pytest_competence.strategies import FAMILIES
from pytest_competence.strategies._induction import induction_families
from pytest_competence.strategies._induction.metrics import systematicity_summary

SUITE = """
    import pytest

    @pytest.mark.competence("toyshift", levels=[1, 3], pairs=4, variations=3, attempts=3)
    def test_toy(competence):
        pass
"""


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> type[Toyshift]:
    monkeypatch.setitem(FAMILIES, "toyshift", Toyshift)
    monkeypatch.setitem(FAMILY_ANALYSES, "toyshift", systematicity_summary)
    return Toyshift


def _result(spec: str, attempts: int = 1) -> dict:
    family = Toyshift(variations=3)
    items = family.design(levels=[1, 2], pairs=4, seed=1)
    return analyze(evaluate(family, items, resolve_model(spec), attempts=attempts), bootstrap=50)


def test_nothing_is_rendered_without_the_key() -> None:
    r = {"summary": {"all_correct": 1.0}}
    assert systematicity_html(r) == "" and systematicity_lines(r) == []
    assert systematicity_markdown(r) == []


def test_bullet_charts_mark_the_gap_and_parse_as_svg(toy) -> None:
    html = systematicity_html(_result("ref:surface"))
    charts = re.findall(r"<svg.*?</svg>", html, flags=re.S)
    assert len(charts) == 2  # by isomorphism type, and pooled per level
    for chart in charts:
        ET.fromstring(chart)  # well-formed
    rows = ["original", "reorder", "negate", "relabel", "pooled"]
    assert all(f">{name}</text>" in charts[0] for name in rows)
    assert "gap any − all: relabel" in charts[0]  # the bracket on the row with a gap
    assert "gap any − all: reorder" not in charts[0]
    assert "solve-any" in html and "solve-all" in html and "Variance decomposition" not in html


def test_tables_show_the_variance_decomposition_when_attempts_vary(toy) -> None:
    r = _result("ref:induction-sampled?p=0.6", attempts=5)
    lines = systematicity_lines(r)
    assert (
        lines[0]
        .strip()
        .startswith("systematicity (systematicity paper, arXiv:2609.13948, §3.5; majority over 5")
    )
    assert any(line.split()[:1] == ["pooled"] for line in lines)
    assert any("variance decomposition" in line for line in lines)
    markdown = "\n".join(systematicity_markdown(r))
    assert "| relabel | 8 (" in markdown and "ρ_between" in markdown
    assert (
        "Variance decomposition (systematicity paper, arXiv:2609.13948, App. A)</h3>"
        in systematicity_html(r)
    )


@pytest.mark.parametrize("xdist", [[], pytest.param(["-n", "2"], marks=pytest.mark.slow)])
def test_a_run_reports_systematicity_and_its_archive_recomputes_it(
    pytester: pytest.Pytester, toy, tmp_path: Path, xdist: list[str]
) -> None:
    # The toy family, registered by a conftest on the controller and on every worker.
    pytester.makeconftest(Path(induction_toy.__file__).read_text("utf-8") + "\nregister()\n")
    pytester.makepyfile(test_sysrun=SUITE)
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        *xdist,
        "-o",
        "competence_database=none",
        "--competence-model",
        "ref:oracle,ref:surface",
        "--competence-json",
        "results.json",
        "--competence-html",
        "report.html",
    )
    section = profile_section(result.stdout.str())
    heads = [
        i
        for i, line in enumerate(section)
        if "systematicity (systematicity paper, arXiv:2609.13948, §3.5" in line
    ]
    assert len(heads) == 2, "\n".join(section)
    start = next(i for i, line in enumerate(section) if "test_toy[ref:surface]" in line)
    surface = min(i for i in heads if i > start)
    table = {line.split()[0]: line.split()[1:] for line in section[surface + 2 : surface + 7]}
    assert table["reorder"][-1] == "0.000" and float(table["relabel"][-1]) > 0
    page = (pytester.path / "report.html").read_text("utf-8")
    # One table per result, each id unique on the page (its result's prefix).
    ids = re.findall(r'<h3 id="(result-\d+-systematicity)">', page)
    assert len(ids) == len(set(ids)) == 2
    assert page.count("Systematicity by isomorphism type") >= 2

    document = json.loads((pytester.path / "results.json").read_text("utf-8"))
    again = tmp_path / "again.json"
    assert cli_main(["report", str(pytester.path / "results.json"), "--json", str(again)]) == 0
    recomputed = json.loads(again.read_text("utf-8"))
    for before, after in zip(document["results"], recomputed["results"]):
        assert after["summary"]["systematicity"] == before["summary"]["systematicity"]
    assert {r["summary"]["systematicity"]["attempts"] for r in document["results"]} == {3}


# -- competence generate -----------------------------------------------------------------------


@pytest.mark.parametrize("name", list(induction_families()))
def test_generate_writes_every_variation_of_every_family(name: str, tmp_path: Path) -> None:
    family = induction_families()[name](variations=2)
    lo, hi = family.levels
    out = tmp_path / "out.jsonl"
    assert (
        cli_main(
            [
                "generate",
                name,
                "--levels",
                str(lo),
                "--per-level",
                "2",
                "--variations",
                "2",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    rows = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert len(rows) == 2 * (1 + 2 * len(family.isomorphisms))
    shown = [p for item in family.design(levels=[lo], pairs=2, seed=1) for p in item.prompts]
    assert [(r["prompt"], r["gold"]) for r in rows] == [(p.text, p.gold) for p in shown]
    assert rows[0]["meta"]["isomorphisms"] == ["original", *family.isomorphisms]
    assert all(
        r["params"]["options"] == {"variations": 2} or r["params"]["options"]["variations"] == 2
        for r in rows
    )
    defaults = tmp_path / "defaults.jsonl"
    assert (
        cli_main(
            [
                "generate",
                name,
                "--per-level",
                "1",
                "--variations",
                "1",
                "--presentations",
                "original",
                "-o",
                str(defaults),
            ]
        )
        == 0
    )
    levels = [json.loads(line)["params"]["n"] for line in defaults.read_text().splitlines()]
    assert levels == list(range(lo, hi + 1))  # the family's whole level range by default


def test_generate_refuses_bad_variations(capsys: pytest.CaptureFixture[str]) -> None:
    name = next(iter(induction_families()), None)
    if name is None:
        pytest.skip("no rule-induction family is registered")
    with pytest.raises(SystemExit):
        cli_main(["generate", name, "--variations", "0"])
    assert "variations=0" in capsys.readouterr().err
