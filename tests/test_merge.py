"""``competence merge``: the shards' archives as one, equal to a single run (issue #50).

A small suite of ``ref:`` models runs once whole and then as N shards (N = 2, 3, and with
``-n 2`` inside each shard); the merge of the shards must equal the single run on every result,
n/a pair, comparison, gate and warning, and its records file byte for byte. Only the records
file's name may differ (each run names its own), so it is the one field left out of the
comparison. The refusals' one-line messages are rows of ``test_bad_inputs_cli.py``; here the
rules behind them, the note on identical duplicates, and the merge's memory, flat in the
number of records.
"""

from __future__ import annotations

import copy
import gzip
import json
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import pytest

from plugin_helpers import SHARD_MODELS as MODELS
from plugin_helpers import SHARD_SUITE as SUITE
from pytest_competence._version import __version__
from pytest_competence.report._merge import MergeError, merge, merge_documents

#: Nothing saved between runs: a case one run saves, the next would replay.
INI = "[pytest]\ncompetence_database = none\n"


def pytest_run(folder: Path, *args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]


def competence(folder: Path, *args: str, status: int = 0) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "-m", "pytest_competence.cli", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == status, done.stdout + done.stderr
    return done


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    """The suite's folder, with the single run's archive ``single.json``."""
    folder = tmp_path_factory.mktemp("suite")
    (folder / "test_suite.py").write_text(textwrap.dedent(SUITE), "utf-8")
    (folder / "pytest.ini").write_text(INI, "utf-8")
    pytest_run(folder, "--competence-model", MODELS, "--competence-json=single.json")
    return folder


def without_paths(document: dict) -> dict:
    """``document`` without the records file's name, the one thing each run names its own."""
    document = copy.deepcopy(document)
    document["records_file"].pop("file")
    for result in document["results"]:
        if "records" in result:
            result["records"].pop("file")
    return document


def records_bytes(folder: Path, document: dict) -> bytes:
    data = (folder / document["records_file"]["file"]).read_bytes()
    return gzip.decompress(data) if document["records_file"]["gzip"] else data


def assert_same_run(folder: Path, single: str, merged: str) -> None:
    """Every result, n/a pair, comparison, gate and warning equal; the records file too (its
    content: a gzip records file of the same records has other bytes and another sha256)."""
    one = json.loads((folder / single).read_text("utf-8"))
    two = json.loads((folder / merged).read_text("utf-8"))
    assert records_bytes(folder, two) == records_bytes(folder, one)
    if one["records_file"]["gzip"] != two["records_file"]["gzip"]:  # other bytes, as asked
        for document in (one, two):
            del document["records_file"]["gzip"], document["records_file"]["sha256"]
    assert without_paths(two) == without_paths(one)
    assert one["records_file"]["count"] > 0 and one["comparisons"] and one["not_applicable"]


@pytest.mark.parametrize(
    ("count", "workers"), [(2, ()), (3, ()), (2, ("-n", "2"))], ids=["2", "3", "2-xdist"]
)
def test_merged_shards_equal_a_single_run(suite, count, workers):
    name = f"s{count}{'x' if workers else ''}"
    shards = [f"{name}-{k}.json" for k in range(1, count + 1)]
    for k, shard in enumerate(shards, 1):
        pytest_run(
            suite, *workers, "--competence-model", MODELS,
            f"--competence-shard={k}/{count}", f"--competence-json={shard}",
        )  # fmt: skip
    done = competence(suite, "merge", "-o", f"{name}.json", *shards)
    assert_same_run(suite, "single.json", f"{name}.json")
    assert f"competence JSON: {name}.json" in done.stdout
    parts = [json.loads((suite / s).read_text("utf-8")) for s in shards]
    held = [r["nodeid"] for p in parts for r in p["results"] + p["not_applicable"]]
    assert len(held) == len(set(held))  # disjoint: every pair, n/a ones too, in one shard
    # A test whose models ran on different shards is compared in the merge, as in one run.
    where = {r["nodeid"]: k for k, p in enumerate(parts) for r in p["results"]}
    split = {
        c["test"]
        for c in json.loads((suite / f"{name}.json").read_text("utf-8"))["comparisons"]
        if len({where[c["test"].replace("*", m)] for m in [c["reference"], *c["models"]]}) > 1
    }
    assert split


def test_the_merge_is_an_archive_like_any_other(suite):
    """competence report recomputes it with no disagreement, trend reads it, and a baseline of
    it gates as the single run's does."""
    shards = [f"b-{k}.json" for k in (1, 2)]
    for k, shard in enumerate(shards, 1):
        pytest_run(
            suite, "--competence-model", MODELS, f"--competence-shard={k}/2",
            f"--competence-json={shard}",
        )  # fmt: skip
    competence(suite, "merge", "-o", "b.json", *shards, "--records", "b.records.jsonl.gz")
    assert_same_run(suite, "single.json", "b.json")  # a gzip records file, the same records
    competence(suite, "report", "b.json")  # exit 0: every figure given back by the records
    competence(suite, "trend", "single.json", "b.json", "--model", "ref:noisy?p=0.2")
    gates = {}
    for baseline in ("single.json", "b.json"):
        out = f"gated-{baseline}"
        pytest_run(
            suite, "--competence-model=ref:noisy?p=0.2", f"--competence-baseline={baseline}",
            f"--competence-json={out}",
        )  # fmt: skip
        document = json.loads((suite / out).read_text("utf-8"))
        gates[baseline] = [r["gate"] for r in document["results"]]
    assert gates["b.json"] == gates["single.json"]
    assert all(g and g["comparisons"] for g in gates["b.json"])


# -- the rules, on documents -----------------------------------------------------------------


@pytest.fixture(scope="module")
def shard_documents(suite) -> list[dict]:
    for k in (1, 2):
        pytest_run(
            suite, "--competence-model", MODELS, f"--competence-shard={k}/2",
            f"--competence-json=u-{k}.json",
        )  # fmt: skip
    return [json.loads((suite / f"u-{k}.json").read_text("utf-8")) for k in (1, 2)]


def test_identical_duplicates_are_kept_once_with_a_note(shard_documents):
    one, two = shard_documents
    merged = merge_documents([one, two, one], ["a.json", "b.json", "c.json"])
    again = merge_documents([one, two], ["a.json", "b.json"])
    assert merged.document == again.document
    assert len(merged.notes) == len(one["results"]) + len(one["not_applicable"])
    assert any("in a.json and c.json, identical: kept once" in n for n in merged.notes)


def test_one_name_two_models(shard_documents):
    one, two = copy.deepcopy(shard_documents)
    for result in two["results"]:
        result["model_identity"] = "0123456789abcdef"
    with pytest.raises(MergeError, match=r"model 'ref:\S+' is two models: .* in b\.json was"):
        merge_documents([one, two], ["a.json", "b.json"])
    names = {r["model"] for r in two["results"]}
    merged = merge_documents([one, two], ["a.json", "b.json"], same_model=names)
    assert len(merged.document["results"]) == len(one["results"]) + len(two["results"])
    unknown = copy.deepcopy(two)  # an identity not known (None) is no conflict
    for result in unknown["results"]:
        result["model_identity"] = None
    merge_documents([one, unknown], ["a.json", "b.json"])


def test_the_same_test_with_another_design(shard_documents):
    one, two = copy.deepcopy(shard_documents)
    tests = {r["test"] for r in one["results"]}
    moved = next(r for r in two["results"] if r["test"] in tests)
    moved["design"]["fingerprint"]["prompts"] = "0" * 32
    with pytest.raises(MergeError, match=r"holds another design than a\.json \(the prompts"):
        merge_documents([one, two], ["a.json", "b.json"])


def test_the_same_pair_with_other_answers(shard_documents):
    one = shard_documents[0]
    other = copy.deepcopy(one)
    other["results"][0]["summary"]["all_correct"] = 0.5
    with pytest.raises(MergeError, match=r"a\.json and b\.json hold different results for it"):
        merge_documents([one, other], ["a.json", "b.json"])


def test_another_version_or_schema(shard_documents):
    one, two = shard_documents
    with pytest.raises(MergeError, match=rf"b\.json was written by pytest-competence 0\.0\.1, "
                       rf"this is {__version__}"):  # fmt: skip
        merge_documents([one, dict(two, plugin_version="0.0.1")], ["a.json", "b.json"])
    with pytest.raises(MergeError, match=r"schema 'pytest-competence/results/1', expected"):
        merge_documents([one, dict(two, schema="pytest-competence/results/1")], ["a", "b"])


def test_other_bootstrap_resamples(shard_documents):
    one, two = copy.deepcopy(shard_documents)
    for result in two["results"]:
        result["summary"]["bootstrap"]["B"] = 50
    for comparison in two["comparisons"]:
        comparison["bootstrap"]["B"] = 50
    with pytest.raises(MergeError, match=r"b\.json was computed with 50 bootstrap resamples"):
        merge_documents([one, two], ["a.json", "b.json"])


# -- memory ----------------------------------------------------------------------------------


def _synthetic(folder: Path, name: str, result: dict, lines: int) -> str:
    """An archive of ``result`` under four node ids, each with ``lines`` records of 300 bytes
    (merge copies them as lines: their fields are never read)."""
    from pytest_competence.report._records_file import pointers, write_records_file

    results = [
        dict(result, nodeid=f"{name}.py::test_{k}[m]", test=f"{name}.py::test_{k}[*]")
        for k in range(4)
    ]
    record = b'{"filler": "' + b"x" * 280 + b'"}\n'
    path = folder / f"{name}.json"
    sha, counts = write_records_file(
        folder / f"{name}.records.jsonl",
        ((r["nodeid"], r["model"], (record for _ in range(lines))) for r in results),
    )
    document = dict(
        pointers(
            {**SAMPLE_TOP, "results": results}, path, folder / f"{name}.records.jsonl", sha, counts
        )  # fmt: skip
    )
    path.write_text(json.dumps(document), "utf-8")
    return str(path)


SAMPLE_TOP = {
    "schema": "pytest-competence/results/2",
    "plugin_version": __version__,
    "models": ["m"],
    "not_applicable": [],
    "comparisons": [],
    "warnings": [],
}


def test_memory_is_flat_in_the_number_of_records(suite, tmp_path):
    """Ten times the records (96 MB of them), the same peak: the records are streamed."""
    result = json.loads((suite / "single.json").read_text("utf-8"))["results"][0]
    result = dict(result, model="m")
    peaks = {}
    for lines in (4_000, 40_000):
        folder = tmp_path / str(lines)
        folder.mkdir()
        paths = [_synthetic(folder, name, result, lines) for name in ("a", "b")]
        tracemalloc.start()
        try:
            merged, records = merge(paths, str(folder / "all.json"))
            peaks[lines] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert merged.document["records_file"]["count"] == 8 * lines
        assert Path(records).stat().st_size > 8 * lines * 300
    assert peaks[40_000] < peaks[4_000] + 2 * 2**20, peaks


@pytest.mark.slow
def test_a_bigger_mix_in_three_shards_under_xdist(tmp_path):
    """Three of the example suites (Horn, ordering, reformulations: parametrized tests, n/a
    pairs, failures minimised) gated against a baseline model, as three shards of two xdist
    workers each, records gzip-compressed: the merge equals the single run."""
    examples = Path(__file__).resolve().parent.parent / "examples"
    for name in ("test_horn", "test_ordering_left_right", "test_reformulations"):
        (tmp_path / f"{name}_suite.py").write_text((examples / f"{name}.py").read_text("utf-8"))
    (tmp_path / "pytest.ini").write_text(INI + "python_files = *_suite.py\n", "utf-8")
    common = (
        "--competence-model=ref:ideal,ref:noisy?p=0.05,ref:horn-if-then",
        "--competence-baseline=ref:ideal",
    )
    pytest_run(tmp_path, *common, "--competence-json=single.json",
               "--competence-records=single.records.jsonl.gz")  # fmt: skip
    shards = [f"shard-{k}.json" for k in (1, 2, 3)]
    for k, shard in enumerate(shards, 1):
        pytest_run(tmp_path, "-n", "2", *common, f"--competence-shard={k}/3",
                   f"--competence-json={shard}")  # fmt: skip
    competence(tmp_path, "merge", "-o", "all.json", *shards, "--records", "all.records.jsonl.gz")
    assert_same_run(tmp_path, "single.json", "all.json")
    document = json.loads((tmp_path / "all.json").read_text("utf-8"))
    assert all(r["gate"] for r in document["results"])
    assert len(document["comparisons"]) == len({r["test"] for r in document["results"]})
