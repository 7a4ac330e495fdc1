"""The report pipeline end to end: JSON archive, re-rendering, xdist equality, CI outputs, hook."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from plugin_helpers import read_archive
from pytest_competence.cli import main as cli_main

SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4, 8, 16], pairs=20, presentations=["original", "equivalent", "repeat"])
    def test_front(competence):
        pass

    @pytest.mark.competence(levels=[6, 12], pairs=8, distance=2, require=["all_correct >= 1"],
                            attempts=3)
    def test_interior(competence):
        pass
"""
MODELS = "ref:ideal,ref:threshold?n=8,ref:endpoint,ref:coin"


def _run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict]:
    pytester.makepyfile(test_suite=SUITE)
    out = pytester.path / "results.json"
    result = pytester.runpytest("--competence-model", MODELS, "--competence-json", str(out), *args)
    return result, json.loads(out.read_text("utf-8"))


def _lines(path: Path) -> list[str]:
    """The records file's lines, gzip or not."""
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8").splitlines()


def test_json_archive_holds_every_prompt_and_figure(pytester: pytest.Pytester):
    result, doc = _run(pytester)
    result.assert_outcomes(passed=3, failed=5)
    assert doc["schema"] == "pytest-competence/results/2"
    assert doc["models"] == MODELS.split(",")
    assert len(doc["results"]) == 8
    records_file = pytester.path / "results.records.jsonl"
    assert doc["records_file"] == {
        "file": "results.records.jsonl",
        "count": len(_lines(records_file)),
        "gzip": False,
        "sha256": hashlib.sha256(records_file.read_bytes()).hexdigest(),
    }
    _, records = read_archive(pytester.path / "results.json")
    front = [r for r in doc["results"] if r["test"].endswith("test_front[*]")]
    assert {r["model"] for r in front} == set(MODELS.split(","))
    for r in front:
        assert r["records"] == {"file": "results.records.jsonl", "count": 3 * 20 * 3}
        assert len(records[r["nodeid"]]) == 3 * 20 * 3
        for rec in records[r["nodeid"]]:
            digest = hashlib.sha256(f"{rec['system']}\x00{rec['prompt']}".encode()).hexdigest()
            assert rec["prompt_sha256"] == digest
            assert rec["correct"] == (rec["valid"] and rec["parsed"] == rec["gold"])
        assert [lv["n"] for lv in r["levels"]] == [4, 8, 16]
        assert r["summary"]["repeat_agreement"] == 1.0  # reference policies are deterministic
        assert r["summary"]["attempts"] == 1 and records[r["nodeid"]][0]["attempts"] == []
    interior = [r for r in doc["results"] if r["test"].endswith("test_interior[*]")]
    for r in interior:
        assert r["design"]["attempts"] == 3
        assert all(len(rec["attempts"]) == 3 for rec in records[r["nodeid"]])
    # The file: each line one record, tagged with its result, the results in document order.
    tags = [(line["nodeid"], line["model"]) for line in map(json.loads, _lines(records_file))]
    assert tags == [
        (r["nodeid"], r["model"]) for r in doc["results"] for _ in range(r["records"]["count"])
    ]
    ideal = next(r for r in front if r["model"] == "ref:ideal")
    assert ideal["outcome"] == "passed" and ideal["failing_case"] is None
    threshold = next(r for r in front if r["model"] == "ref:threshold?n=8")
    assert threshold["failing_case"]["level"] == 16
    assert {o["presentation"] for o in threshold["failing_case"]["observations"]} == {
        "original",
        "equivalent",
        "repeat",
    }
    (block,) = [c for c in doc["comparisons"] if c["test"].endswith("test_front[*]")]
    assert block["reference"] == "ref:ideal" and len(block["models"]) == 3


def _figures(document: dict) -> dict:
    """The document without where its records are (the file's name, and its sha256 when it is
    compressed: the same lines, other bytes)."""
    return {
        **{k: v for k, v in document.items() if k != "records_file"},
        "results": [{k: v for k, v in r.items() if k != "records"} for r in document["results"]],
    }


@pytest.mark.parametrize("records", ["results.records.jsonl", "kept/results.jsonl.gz"])
def test_report_recomputes_the_same_figures_from_the_archive(
    pytester: pytest.Pytester, tmp_path, records
):
    (pytester.path / "kept").mkdir()
    _, doc = _run(pytester, f"--competence-records={records}")
    assert doc["records_file"]["file"] == records and doc["records_file"]["gzip"] == (
        records.endswith(".gz")
    )
    written = _lines(pytester.path / records)
    assert (
        len(written)
        == doc["records_file"]["count"]
        == sum(r["records"]["count"] for r in doc["results"])
    )
    for again in (tmp_path / "again.json", tmp_path / "again.jsonl.gz"):
        md = tmp_path / "summary.md"
        args = ["--records", str(again)] if again.suffix == ".gz" else []
        again = again.with_suffix(".json")
        assert (
            cli_main(
                [
                    "report",
                    str(pytester.path / "results.json"),
                    "--json",
                    str(again),
                    "--markdown",
                    str(md),
                    *args,
                ]
            )
            == 0
        )
        recomputed = json.loads(again.read_text("utf-8"))
        assert _figures(recomputed) == _figures(doc)
        pointer = recomputed["records_file"]
        assert _lines(again.parent / pointer["file"]) == written
        assert [r.get("records", {}).get("count") for r in recomputed["results"]] == [
            r.get("records", {}).get("count") for r in doc["results"]
        ]
        assert "## Competence profiles" in md.read_text("utf-8")


def test_xdist_report_equals_the_serial_report(pytester: pytest.Pytester):
    pytester.makepyfile(test_suite=SUITE)
    serial, parallel = pytester.path / "serial.json", pytester.path / "parallel.json"
    # No example database: the second run would replay the first run's minimal cases.
    nodb = ("-o", "competence_database=none")
    pytester.runpytest_subprocess(
        *nodb, "--competence-model", MODELS, "--competence-json", str(serial)
    )
    result = pytester.runpytest_subprocess(
        *nodb, "-n", "2", "--competence-model", MODELS, "--competence-json", str(parallel)
    )
    result.assert_outcomes(passed=3, failed=5)
    serial_doc, parallel_doc = (json.loads(p.read_text("utf-8")) for p in (serial, parallel))
    assert _figures(parallel_doc) == _figures(serial_doc)
    # One records file, every record of every result exactly once, as in the serial run.
    lines = _lines(pytester.path / "parallel.records.jsonl")
    assert lines == _lines(pytester.path / "serial.records.jsonl")
    assert parallel_doc["records_file"]["sha256"] == serial_doc["records_file"]["sha256"]
    keys = [(r["nodeid"], r["instance_id"], r["presentation"]) for r in map(json.loads, lines)]
    assert (
        len(set(keys))
        == len(keys)
        == sum(
            r["design"]["pairs"] * len(r["design"]["levels"]) * len(r["presentations"])
            for r in parallel_doc["results"]
        )
    )


def test_markdown_goes_to_the_github_step_summary(pytester: pytest.Pytester, monkeypatch):
    summary = pytester.path / "step_summary.md"
    summary.write_text("earlier step\n", "utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    pytester.makepyfile(test_suite=SUITE)
    pytester.runpytest("--competence-model", "ref:ideal,ref:always-yes")
    text = summary.read_text("utf-8")
    assert text.startswith("earlier step\n## Competence profiles")
    assert "test_front[ref:always-yes]" in text and "❌ failed" in text and "✅ pass" in text
    assert "Models against `ref:ideal`" in text


def test_key_figures_are_junit_properties(pytester: pytest.Pytester):
    pytester.makepyfile(test_suite=SUITE)
    pytester.runpytest("--competence-model", "ref:ideal,ref:threshold?n=8", "--junitxml=j.xml")
    root = ET.parse(pytester.path / "j.xml").getroot()
    props = {}
    for case in root.iter("testcase"):
        props[case.get("name")] = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["test_front[ref:threshold?n=8]"]["competence_first_failing_n"] == "16"
    assert props["test_front[ref:ideal]"]["competence_all_correct"] == "1.0"
    assert "competence_kappa_bar" in props["test_front[ref:ideal]"]


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]])
def test_profile_hook_sees_every_result(pytester: pytest.Pytester, xdist):
    pytester.makeconftest("""
        import json

        def pytest_competence_profile(config, result):
            with open("seen.jsonl", "a") as out:
                out.write(json.dumps([result["nodeid"], result["outcome"],
                                      result["summary"]["all_correct"]]) + "\\n")
    """)
    pytester.makepyfile(test_suite=SUITE)
    pytester.runpytest_subprocess(*xdist, "--competence-model", "ref:ideal,ref:always-no")
    seen = [json.loads(line) for line in (pytester.path / "seen.jsonl").read_text().splitlines()]
    assert len(seen) == 4
    assert {(s[0].split("::")[1], s[1]) for s in seen} == {
        ("test_front[ref:ideal]", "passed"),
        ("test_front[ref:always-no]", "failed"),
        ("test_interior[ref:ideal]", "passed"),
        ("test_interior[ref:always-no]", "failed"),
    }


def test_quiet_terminal_summary_is_one_line_per_result(pytester: pytest.Pytester):
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-q", "--competence-model", "ref:ideal")
    result.stdout.fnmatch_lines(
        [
            "*= competence profiles =*",
            "test_suite.py::test_front[[]ref:ideal[]]  PASS  all-correct 1.000  κ̄ *",
            "test_suite.py::test_interior[[]ref:ideal[]]  PASS  all-correct 1.000  κ̄ *",
        ]
    )


def test_quiet_terminal_summary_of_several_models_is_the_matrix(pytester: pytest.Pytester):
    """Under -q a run of several models prints its matrix, one cell per test × model, and says
    where the profiles and comparisons are; the comparisons themselves need -v."""
    pytester.makepyfile(test_suite=SUITE)
    args = ("-p", "no:cacheprovider", "--competence-model", "ref:ideal,ref:always-yes")
    result = pytester.runpytest("-q", *args)
    result.stdout.fnmatch_lines(
        [
            "*= competence profiles =*",
            "which suite catches which model*",
            "  ordering",
            "    test  *ref:ideal  ref:always-yes",
            "    test_suite.py::test_front[[]*[]]  *pass  *FAIL",
            "    test_suite.py::test_interior[[]*[]]  *pass  *FAIL",
            "each test × model's profile: without -q; model comparisons*with -v*",
        ]
    )
    # (pytest's short summary, whole under the CI variable, repeats the failure messages)
    section = result.stdout.str().split("competence profiles")[1].split("short test summary")[0]
    assert "all-correct" not in section and "Δacc" not in section
    verbose = pytester.runpytest("-v", *args)
    verbose.stdout.fnmatch_lines(
        [
            "test_suite.py::test_front[[]ref:always-yes[]]  FAILED  (strict*",
            "which suite catches which model*",
            "test_suite.py::test_front[[]*[]]: models against ref:ideal*",
            "    ref:always-yes [[]original[]]: Δacc *",
        ]
    )


def test_report_refuses_other_files(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": "something/else"}), "utf-8")
    assert cli_main(["report", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("competence report: not a results document: ") and "schema" in err
    assert len(err.splitlines()) == 1


def test_a_markdown_fence_outlasts_any_backticks_in_an_answer():
    """A model's answer holding a fence of its own must not close the report's code block."""
    from pytest_competence.report._markdown import _fenced

    answer = repr("```\nrm -rf /\n``````")
    lines = _fenced([answer])
    fence = lines[0].strip().removesuffix("text")
    assert set(fence) == {"`"} and len(fence) == 7 and lines[-1].strip() == fence
    assert lines[1] == f"  {answer}"
    assert _fenced(["plain"])[0] == "  ```text"


# -- issue #24 item 1: report paths that cannot be written --------------------------------------


#: Root writes through any permission bits, but not into sysfs, which takes no new file from
#: anyone (and is mounted read-only in most containers): the run stays this user's, whatever
#: the interpreter it runs and wherever that lives.
ROOTS_UNWRITABLE_FOLDER = Path("/sys")


def _can_write(folder: Path) -> bool:
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


@pytest.mark.parametrize(
    "option", ["--competence-html", "--competence-json", "--competence-markdown"]
)
def test_a_report_folder_this_user_cannot_write_stops_the_run_at_start(option: str):
    """As a user who cannot write the folder: one line, exit 4, before any test runs. The
    folder is one made read-only, or for root, whom permissions do not stop, a folder of
    sysfs; the run is this user's own, with this interpreter."""
    import os
    import subprocess
    import sys
    import tempfile
    import textwrap

    with tempfile.TemporaryDirectory() as scratch:
        where = Path(scratch)
        (where / "test_suite.py").write_text(textwrap.dedent(SUITE))
        if os.geteuid() != 0:
            folder, target = where / "ro", "ro/r.out"
            folder.mkdir(mode=0o555)
        else:
            folder = ROOTS_UNWRITABLE_FOLDER
            target = str(folder / "r.out")
        if _can_write(folder):
            pytest.skip(f"this user can write in {folder}: there is no folder here to refuse")
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "--competence-model=ref:ideal",
                option,
                target,
            ],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    shown = re.escape(str(Path(target).parent))
    assert re.search(
        rf"^ERROR: {option} {re.escape(target)}: cannot write in {shown} \(.+\)",
        done.stderr,
        re.M,
    ), done.stderr
    assert "Traceback" not in done.stdout + done.stderr and "passed" not in done.stdout


def test_a_report_that_cannot_be_written_at_the_end_is_named_after_the_summary(
    pytester: pytest.Pytester,
):
    """The folder was writable at start and is gone at the end (as a full disk would fail a
    write): every result, failure and profile is still shown, the summary first, then one line
    per report not written; the others are written, and the exit status says so."""
    (pytester.path / "out").mkdir()
    pytester.makepyfile(
        test_suite="""
        import shutil
        import pytest

        @pytest.mark.competence(levels=[4, 8], pairs=8)
        def test_x(competence):
            shutil.rmtree("out", ignore_errors=True)
        """
    )
    result = pytester.runpytest(
        "--competence-model=ref:ideal,ref:threshold?n=4",
        "--competence-html=out/r.html",
        "--competence-markdown=out/r.md",
        "--competence-json=r.json",
    )
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    result.stdout.fnmatch_lines(
        [
            "*FAILURES*",
            "*Competence condition failed for model 'ref:threshold?n=4'*",
            "*competence profiles*",
            "competence JSON: *r.json",
            "competence: Markdown summary (--competence-markdown) not written: out/r.md: No such "
            "file or directory",
            "competence: HTML report (--competence-html) not written: out/r.html: No such file "
            "or directory",
        ]
    )
    assert json.loads((pytester.path / "r.json").read_text())["results"]
    assert "Traceback" not in result.stdout.str()
