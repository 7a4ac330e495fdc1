"""``competence trend``: a series of archived checkpoints, each compared with the one before and
with the first — the McNemar figures recomputed with statsmodels from the archived bits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gate_helpers import GOOD, TWIN, WORSE, bits, write_suite


def _archive(pytester: pytest.Pytester, model: str, name: str, *more: str) -> Path:
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--competence-model",
        ",".join([model, *more]),
        f"--competence-json={name}",
    )
    assert result.ret in (0, 1), result.stdout.str()
    return pytester.path / name


def _trend(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_competence.cli", "trend", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_trend_compares_each_checkpoint_with_the_previous_and_the_first(
    pytester: pytest.Pytester,
):
    write_suite(pytester, pairs=100)
    for model, name in ((GOOD, "a.json"), (TWIN, "b.json"), (WORSE, "c.json")):
        _archive(pytester, model, name)
    # The series reads only the documents: no records file, no model.
    for records in pytester.path.glob("*.records.jsonl"):
        records.unlink()
    # Instances are matched by id: a reordered archive gives the same series.
    shuffled = json.loads((pytester.path / "b.json").read_text("utf-8"))
    instances = shuffled["results"][0]["instances"]
    order = np.random.default_rng(0).permutation(len(instances["ids"]))
    instances["ids"] = [instances["ids"][i] for i in order]
    instances["level"] = [instances["level"][i] for i in order]
    for field in ("correct", "valid"):
        instances[field] = {
            p: "".join(column[i] for i in order) for p, column in instances[field].items()
        }
    (pytester.path / "b.json").write_text(json.dumps(shuffled), "utf-8")
    done = _trend(
        pytester.path, "a.json", "b.json", "c.json", "--json", "t.json", "--markdown", "t.md"
    )
    # The worse checkpoint regressed: the tables are written, and the exit status says so.
    assert done.returncode == 1, done.stderr
    assert (
        "competence trend: significant regression, test_suite.py::test_gate[*]: c.json "
        "against a.json" in done.stderr
    )
    document = json.loads((pytester.path / "t.json").read_text("utf-8"))
    rows = document["tests"][0]["rows"]
    pairs = {(r["checkpoint"], r["reference"], r["against"]) for r in rows}
    assert pairs == {
        ("b.json", "a.json", "previous"),
        ("c.json", "b.json", "previous"),
        ("c.json", "a.json", "first"),
    }
    archives = {
        name: json.loads((pytester.path / name).read_text("utf-8"))["results"][0]
        for name in ("a.json", "b.json", "c.json")
    }
    level = dict(
        zip(archives["a.json"]["instances"]["ids"], archives["a.json"]["instances"]["level"])
    )

    def by_id(name: str, presentation: str) -> dict[str, bool]:
        r = archives[name]
        return dict(zip(r["instances"]["ids"], bits(r, presentation).tolist(), strict=True))

    from statsmodels.stats.contingency_tables import mcnemar

    for row in rows:
        later, earlier = (
            by_id(row["checkpoint"], row["presentation"]),
            by_id(row["reference"], row["presentation"]),
        )
        ids = [i for i in later if level[i] == row["n"]]
        b = sum(later[i] and not earlier[i] for i in ids)
        c = sum(earlier[i] and not later[i] for i in ids)
        assert (row["b"], row["c"], row["pairs"]) == (b, c, 100)
        exact = b + c <= 25
        table = [[0, b], [c, 0]]
        assert row["p_value"] == pytest.approx(
            mcnemar(table, exact=exact, correction=not exact).pvalue, rel=1e-9
        )
    regressed = {(r["checkpoint"], r["reference"]) for r in rows if r["regression"]}
    assert ("c.json", "b.json") in regressed and ("c.json", "a.json") in regressed
    assert not any(r["regression"] for r in rows if r["checkpoint"] == "b.json")
    # Without the worse checkpoint, nothing regressed: exit 0.
    assert _trend(pytester.path, "a.json", "b.json").returncode == 0
    assert "paired bits: results[].instances" in done.stdout
    assert "c.json against a.json (first): " in done.stdout
    assert "| n | presentation | pairs |" in (pytester.path / "t.md").read_text("utf-8")


def test_trend_writes_its_stderr_lines_after_its_tables(pytester: pytest.Pytester):
    """Both streams into one pipe (``2>&1 | less``, a CI log): the tables stay whole and the
    lines that name the regressions follow them, as they are written."""
    write_suite(pytester, pairs=100)
    _archive(pytester, GOOD, "a.json")
    _archive(pytester, WORSE, "c.json")
    apart = _trend(pytester.path, "a.json", "c.json")
    assert apart.returncode == 1 and apart.stderr.strip(), apart.stderr
    merged = subprocess.run(
        [sys.executable, "-m", "pytest_competence.cli", "trend", "a.json", "c.json"],
        cwd=pytester.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
        # stdout block-buffered, as it is for a pipe in a user's shell
        env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"},
    )
    assert merged.returncode == 1
    assert merged.stdout == apart.stdout + apart.stderr


def test_trend_chooses_the_model_of_an_archive_that_holds_several(pytester: pytest.Pytester):
    write_suite(pytester, pairs=20)
    _archive(pytester, GOOD, "both.json", WORSE)
    _archive(pytester, TWIN, "next.json")
    done = _trend(pytester.path, "both.json", "next.json")
    assert done.returncode == 2
    assert "both.json holds 2 models for test_suite.py::test_gate[*]" in done.stderr
    assert "choose one with --model NAME" in done.stderr
    done = _trend(pytester.path, "both.json", "next.json", "--model", WORSE, "--model", TWIN)
    assert done.returncode == 0, done.stderr
    assert f"  both.json: {WORSE}" in done.stdout and f"  next.json: {TWIN}" in done.stdout
    # One --model for every archive: next.json has no result of it, so nothing is left.
    done = _trend(pytester.path, "both.json", "next.json", "--model", WORSE)
    assert done.returncode == 2 and "no result of the chosen model" in done.stderr


def test_a_non_inferiority_series_is_the_non_inferiority_gates_decision(
    pytester: pytest.Pytester,
):
    """``--test non-inferiority``: each comparison is what the plugin's gate of that name
    decides for the later checkpoint against the earlier one — the same cells, bounds and
    verdicts, read from the archive alone."""
    write_suite(pytester, extra=", gate='non-inferiority', regression_margin=0.1")
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--competence-model",
        f"{GOOD},{TWIN},{WORSE}",
        "--competence-baseline",
        GOOD,
        "--competence-json=gated.json",
    )
    result.assert_outcomes(passed=2, failed=1)  # the worse checkpoint is not non-inferior
    gates = {
        r["model"]: r["gate"]
        for r in json.loads((pytester.path / "gated.json").read_text("utf-8"))["results"]
    }
    for model, status in ((TWIN, 0), (WORSE, 1)):
        done = _trend(
            pytester.path,
            "gated.json",
            "gated.json",
            "--model",
            GOOD,
            "--model",
            model,
            "--test",
            "non-inferiority",
            "--margin",
            "0.1",
            "--json",
            "t.json",
        )
        assert done.returncode == status, done.stderr
        document = json.loads((pytester.path / "t.json").read_text("utf-8"))
        assert document["test"] == "non-inferiority"
        rows = document["tests"][0]["rows"]
        cells = {(c["n"], c["presentation"]): c for c in gates[model]["comparisons"]}
        assert {(r["n"], r["presentation"]) for r in rows} == set(cells)
        for row in rows:
            cell = cells[row["n"], row["presentation"]]
            assert (row["b"], row["c"], row["pairs"]) == (cell["b"], cell["c"], cell["pairs"])
            assert row["lower_holm"] == pytest.approx(cell["lower_holm"], rel=1e-12)
            assert row["noninferior"] is cell["noninferior"]
            assert row["detectable_drop"] == pytest.approx(cell["detectable_drop"], rel=1e-12)
        assert all(r["noninferior"] for r in rows) is gates[model]["passed"]
        said = "competence trend: not shown non-inferior (margin 0.1)"
        assert (said in done.stderr) is (status == 1), done.stderr
        assert ("NOT SHOWN" in done.stdout) is (status == 1)
    # The regression series of the same archives carries no non-inferiority figures.
    done = _trend(pytester.path, "gated.json", "gated.json", "--model", GOOD, "--model", TWIN)
    assert done.returncode == 0, done.stderr
    assert "lower bound (Holm)" not in done.stdout
