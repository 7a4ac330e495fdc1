"""The ``competence`` command's bad inputs: one clean error each, exit 2, no traceback.

A row is ``python -m pytest_competence.cli`` arguments on prepared files, run in a subprocess.
The pytest entry point's tables are ``test_bad_inputs.py`` and ``test_bad_inputs_options.py``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass, field

import pytest

from plugin_helpers import scripted_document
from pytest_competence.engine.spec import spec_from_marker
from pytest_competence.report import SCHEMA, write_outputs
from pytest_competence.report._records_file import archived_records


@dataclass(frozen=True)
class CliRow:
    id: str
    args: tuple[str, ...]  # {file} is replaced with the path of the prepared file
    expected: str
    exit: int = 2
    file: str = ""  # which prepared file, see prepared()
    extra: tuple[str, ...] = field(default=())
    usage: bool = False  # an argument error: argparse's usage line comes first


def _edited(document: dict, how: str) -> object:
    doc = copy.deepcopy(document)
    result = doc["results"][0]
    if how == "record-null":
        result["records"][0] = None
    elif how == "results-dict":
        doc["results"] = {"test_x": result}
    elif how == "no-gold":
        del result["records"][3]["gold"]
    elif how == "result-null":
        doc["results"][0] = None
    elif how == "figure-edited":
        result["summary"]["all_correct"] = 0.123
    elif how == "records-removed":
        del result["records"][:2]
    return doc


CLI_ROWS = [
    CliRow(
        "generate-pairs-1e9",
        ("generate", "ordering", "--per-level", "1000000000"),
        "the design asks 18,000,000,000 prompts (9 level(s) x pairs=1000000000 x 2 "
        "presentation(s)), over the limit of 2,000,000; use fewer pairs or levels, or raise "
        "--max-prompts",
    ),
    CliRow(
        "generate-max-prompts",
        ("generate", "horn", "--levels", "4", "--per-level", "8", "--max-prompts", "15"),
        "the design asks 16 prompts",
    ),
    CliRow(
        "generate-missing-dir",
        ("generate", "horn", "-o", "missing/x.jsonl"),
        "-o missing/x.jsonl: the directory missing does not exist",
    ),
    CliRow(
        "generate-missing-dir-long-flag",
        ("generate", "horn", "--output", "missing/x.jsonl"),
        "--output missing/x.jsonl: the directory missing does not exist",
    ),
    CliRow(
        "generate-repeated-levels",
        ("generate", "ordering", "--levels", "4,4"),
        "Expected levels to name each size once",
    ),
    CliRow(
        "generate-bad-levels",
        ("generate", "ordering", "--levels", "a,b"),
        "argument --levels: expected comma-separated integers, got 'a,b'",
    ),
    CliRow(
        "generate-unknown-split",
        ("generate", "ordering", "--split", "nope"),
        "Unknown split 'ordering:nope'. Expected one of: ordering:paper-heldin",
    ),
    CliRow(
        "generate-bad-format",
        ("generate", "ordering", "--format", "xml"),
        "argument --format: invalid choice: 'xml'",
    ),
    CliRow(
        "generate-unknown-family",
        ("generate", "nope"),
        "argument FAMILY: unknown family 'nope'; expected one of ordering, horn",
    ),
    CliRow(
        "generate-unknown-option",
        ("generate", "horn", "--option", "hint=True"),
        "family='horn' has no option 'hint'",
    ),
    CliRow(
        "batch-import-no-cache",
        ("batch", "import", "{file}"),
        "/.competence/cache.sqlite' (competence_cache_path; no ini file): export the requests "
        "first with pytest --competence-batch-export, or pass --cache PATH",
        file="jsonl",
    ),
    CliRow(
        "batch-import-cache-missing",
        ("batch", "import", "{file}", "--cache", "nope.sqlite"),
        "batch import: no response cache at 'nope.sqlite' (--cache)",
        file="jsonl",
    ),
    CliRow(
        "plan-zero-pairs", ("plan", "--pairs", "0"), "--pairs must be at least 1, got --pairs 0"
    ),
    CliRow(
        "plan-zero-per-level",
        ("plan", "--per-level", "0"),
        "--per-level must be at least 1, got --per-level 0",
    ),
    CliRow("plan-zero-levels", ("plan", "--level-count", "0"), "a design needs at least one level"),
    CliRow(
        "plan-levels-and-count",
        ("plan", "--levels", "4,8", "--level-count", "2"),
        "argument --level-count: not allowed with argument --levels",
    ),
    CliRow(
        "generate-per-level",
        ("generate", "ordering", "--levels", "4", "--per-level", "30"),
        "but got --per-level 30; try --per-level 28 or --per-level 32",
    ),
    CliRow("report-missing-file", ("report", "nothing.json"), "competence report: "),
    CliRow("report-jsonl", ("report", "{file}"), "not a results document: ", file="jsonl"),
    CliRow(
        "report-record-null",
        ("report", "{file}"),
        "results[0].records[0] is null, expected an object",
        file="record-null",
    ),
    CliRow(
        "report-results-dict",
        ("report", "{file}"),
        "results is dict, expected a list of results",
        file="results-dict",
    ),
    CliRow(
        "report-no-gold",
        ("report", "{file}"),
        "results[0].records[3] has no 'gold'",
        file="no-gold",
    ),
    CliRow("report-result-null", ("report", "{file}"), "results[0] is null", file="result-null"),
    CliRow(
        "report-other-schema", ("report", "{file}"), "schema 'something/else'", file="other-schema"
    ),
    CliRow(
        "report-figure-edited",
        ("report", "{file}"),
        "summary.all_correct: archived 0.123",
        exit=1,
        file="figure-edited",
    ),
    CliRow(
        "report-records-removed",
        ("report", "{file}"),
        "archived figure(s) differ from what the records give",
        exit=1,
        file="records-removed",
    ),
    CliRow(
        "report-missing-dir",
        ("report", "{file}", "--html", "missing/r.html"),
        "--html missing/r.html: the directory missing does not exist",
        file="good",
        usage=True,
    ),
    CliRow("report-good", ("report", "{file}"), "", exit=0, file="good"),
    # -- an archive whose records are in a records file (schema /2)
    CliRow("report-records-good", ("report", "{file}"), "", exit=0, file="v2"),
    CliRow("report-records-gz-good", ("report", "{file}"), "", exit=0, file="v2-gz"),
    CliRow(
        "report-records-missing",
        ("report", "{file}"),
        "missing.records.jsonl is missing: "
        "the document counts 16 records there; keep the records file next to the JSON",
        file="records-missing",
    ),
    CliRow(
        "report-records-truncated",
        ("report", "{file}"),
        "records-truncated.records.jsonl is "
        "not the one this document was written with (sha256 differs: truncated, edited, or "
        "of another run)",
        file="records-truncated",
    ),
    CliRow(
        "report-records-gz-truncated",
        ("report", "{file}"),
        "records-gz-truncated.records.jsonl.gz is not the one this document was written with",
        file="records-gz-truncated",
    ),
    CliRow(
        "report-records-of-another-run",
        ("report", "{file}"),
        "sha256 differs",
        file="records-foreign",
    ),
    CliRow(
        "report-records-cut-and-rehashed",
        ("report", "{file}"),
        "ends after 10 of the 16 records of test_hostile.py::test_x[py:scripted]: truncated",
        file="records-rehashed",
    ),
    CliRow(
        "report-records-no-json",
        ("report", "{file}", "--records", "r.jsonl"),
        "report: --records r.jsonl: the records file belongs to a results document; add "
        "--json PATH",
        file="v2",
        usage=True,
    ),
    # -- competence trend (issue #26): {file:NAME} is the prepared file NAME
    CliRow("trend-one-archive", ("trend", "{file}"), "give at least two archives", file="good"),
    CliRow(
        "trend-missing-file",
        ("trend", "{file}", "nothing.json"),
        "competence trend: nothing.json: no such file",
        file="good",
    ),
    CliRow(
        "trend-not-results",
        ("trend", "{file:good}", "{file:jsonl}"),
        "not a results document: ",
    ),
    CliRow(
        "trend-share-nothing",
        ("trend", "{file:good}", "{file:other-test}"),
        "the archives share no test (",
    ),
    CliRow(
        "trend-other-design",
        ("trend", "{file:good}", "{file:other-seed}"),
        "was archived from another design than in ",
    ),
    CliRow(
        "trend-two-models",
        ("trend", "{file:two-models}", "{file:good}"),
        "holds 2 models for test_hostile.py::test_x[*] (py:other, py:scripted); choose one "
        "with --model NAME",
    ),
    CliRow(
        "trend-model-count",
        ("trend", "{file:good}", "{file:good}", "{file:good}", "--model", "a", "--model", "b"),
        "--model given 2 times for 3 archives",
    ),
    CliRow(
        "trend-bad-alpha",
        ("trend", "{file:good}", "{file:good}", "--alpha", "2"),
        "competence trend: --alpha 2: expected a number in (0, 1), e.g. 0.05",
    ),
    CliRow(
        "trend-unknown-test",
        ("trend", "{file:good}", "{file:good}", "--test", "equivalence"),
        "argument --test: invalid choice: 'equivalence' (choose from 'regression', "
        "'non-inferiority')",
        usage=True,
    ),
    CliRow(
        "trend-non-inferiority-no-margin",
        ("trend", "{file:good}", "{file:good}", "--test", "non-inferiority"),
        "competence trend: --test non-inferiority needs --margin above 0 (the accuracy a "
        "checkpoint may lose); at 0 only a checkpoint significantly better than its reference "
        "passes. Give one, e.g. --margin 0.02",
    ),
    CliRow(
        "trend-markdown-missing-dir",
        ("trend", "{file:good}", "{file:good}", "--markdown", "missing/t.md"),
        "--markdown missing/t.md: the directory missing does not exist",
        usage=True,
    ),
    CliRow(
        "trend-good",
        ("trend", "{file:good}", "{file:two-models}", "--model", "py:scripted"),
        "",
        exit=0,
    ),
    # -- competence merge (issue #50): one line naming the test and the archives
    CliRow(
        "merge-old-schema",
        ("merge", "-o", "m.json", "{file:m-v2}", "{file:good}"),
        "good.json: schema 'pytest-competence/results/1', expected "
        "'pytest-competence/results/2'; rewrite it with this version first: competence report",
    ),
    CliRow(
        "merge-other-version",
        ("merge", "-o", "m.json", "{file:m-v2}", "{file:v2-old}"),
        "v2-old.json was written by pytest-competence 0.0.1",
    ),
    CliRow(
        "merge-other-design",
        ("merge", "-o", "m.json", "{file:m-v2}", "{file:v2-seed}"),
        "test_hostile.py::test_x[*] [py:scripted]: ",
    ),
    CliRow(
        "merge-other-design-named",
        ("merge", "-o", "m.json", "{file:m-v2}", "{file:v2-seed}"),
        "v2-seed.json holds another design than ",
    ),
    CliRow(
        "merge-two-identities",
        ("merge", "-o", "m.json", "{file:v2-identity}", "{file:v2-identity-b}"),
        "model 'py:scripted' is two models: test_hostile.py::test_y[*] [py:scripted] in ",
    ),
    CliRow(
        "merge-other-answers",
        ("merge", "-o", "m.json", "{file:m-v2}", "{file:v2-answers}"),
        "v2-answers.json hold different results for it (one design, other answers)",
    ),
    CliRow(
        "merge-not-results",
        ("merge", "-o", "m.json", "{file:m-v2}", "{file:jsonl}"),
        "not a results document: ",
    ),
    CliRow(
        "merge-missing-archive",
        ("merge", "-o", "m.json", "{file:m-v2}", "nothing.json"),
        "competence merge: nothing.json: No such file or directory",
    ),
    CliRow(
        "merge-records-missing",
        ("merge", "-o", "m.json", "{file:m-v2}", "{file:m-records-missing}"),
        "m-records-missing.json: records file ",
    ),
    CliRow(
        "merge-records-foreign",
        ("merge", "-o", "m.json", "{file:m-v2}", "{file:m-records-foreign}"),
        "is not the one this document was written with",
    ),
    CliRow(
        "merge-output-is-an-archive",
        ("merge", "-o", "{file:m-v2}", "{file:m-v2}", "{file:m-v2-gz}"),
        "m-v2.json is one of the archives merged; write the merge to a new file",
    ),
    CliRow(
        "merge-missing-dir",
        ("merge", "-o", "missing/m.json", "{file:m-v2}"),
        "competence merge: -o missing/m.json: the directory missing does not exist",
    ),
    CliRow(
        "merge-records-is-output",
        ("merge", "-o", "m.json", "--records", "m.json", "{file:m-v2}"),
        "--records m.json: is the -o file itself",
    ),
    CliRow(
        "merge-no-output",
        ("merge", "{file:m-v2}"),
        "the following arguments are required: -o/--output",
        usage=True,
    ),
    CliRow("merge-good", ("merge", "-o", "m.json", "{file:m-v2}", "{file:m-v2-gz}"), "", exit=0),
    CliRow(
        "report-records-missing-dir",
        ("report", "{file}", "--json", "r.json", "--records", "missing/r.jsonl"),
        "--records missing/r.jsonl: the directory missing does not exist",
        file="v2",
        usage=True,
    ),
]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """The files the CLI rows read: a good results document and its damaged copies."""
    folder = tmp_path_factory.mktemp("cli")
    spec = spec_from_marker((), {"levels": [4, 8], "pairs": 4})
    n = sum(len(item.prompts) for item in spec.design())
    document = scripted_document(spec, (["yes", "no", "maybe"] * n)[:n])
    other = scripted_document(spec, (["no", "yes"] * n)[:n])
    files = {"good": document, "other-schema": {"schema": "something/else"}}
    for how in (
        "record-null",
        "results-dict",
        "no-gold",
        "result-null",
        "figure-edited",
        "records-removed",
    ):
        files[how] = _edited(document, how)
    paths = {}
    for name, doc in files.items():
        paths[name] = folder / f"{name}.json"
        paths[name].write_text(json.dumps(doc), "utf-8")
    for name, records, answers in (
        ("v2", "v2.records.jsonl", document),
        ("v2-gz", "v2.records.jsonl.gz", document),
        ("records-missing", "missing.records.jsonl", document),
        ("records-truncated", "records-truncated.records.jsonl", document),
        ("records-gz-truncated", "records-gz-truncated.records.jsonl.gz", document),
        ("records-foreign", "records-foreign.records.jsonl", document),
        ("other", "other.records.jsonl", other),
        ("records-rehashed", "records-rehashed.records.jsonl", document),
    ):
        paths[name] = folder / f"{name}.json"
        write_outputs(
            document,
            json_path=str(paths[name]),
            records_path=str(folder / records),
            records=archived_records(answers, folder),
        )
    (folder / "missing.records.jsonl").unlink()
    (folder / "other.records.jsonl").replace(folder / "records-foreign.records.jsonl")
    for name in ("records-truncated", "records-gz-truncated", "records-rehashed"):
        records = folder / json.loads(paths[name].read_text("utf-8"))["records_file"]["file"]
        data = records.read_bytes()
        records.write_bytes(
            b"".join(data.splitlines(keepends=True)[:10])
            if name == "records-rehashed"
            else data[: len(data) // 2]
        )
    rehashed = json.loads(paths["records-rehashed"].read_text("utf-8"))
    rehashed["records_file"]["sha256"] = hashlib.sha256(
        (folder / "records-rehashed.records.jsonl").read_bytes()
    ).hexdigest()
    paths["records-rehashed"].write_text(json.dumps(rehashed), "utf-8")
    for name, how in (("other-test", "test"), ("other-seed", "seed"), ("two-models", "models")):
        doc = copy.deepcopy(document)
        result = doc["results"][0]
        if how == "test":
            result["test"] = result["test"].replace("test_x", "test_y")
        elif how == "seed":
            result["design"]["seed"] = 7
        else:
            doc["results"].append(dict(result, model="py:other", nodeid="other"))
        paths[name] = folder / f"{name}.json"
        paths[name].write_text(json.dumps(doc), "utf-8")
    # The merge reads this version's archives only: these are the records-file ones above
    # under its schema (scripted_document writes /1's), pointing to the same records files.
    for name in ("v2", "v2-gz", "records-missing", "records-foreign"):
        doc = dict(json.loads(paths[name].read_text("utf-8")), schema=SCHEMA)
        paths[f"m-{name}"] = folder / f"m-{name}.json"
        paths[f"m-{name}"].write_text(json.dumps(doc), "utf-8")
    v2 = json.loads(paths["m-v2"].read_text("utf-8"))
    for name, how in (
        ("v2-old", "version"),
        ("v2-seed", "seed"),
        ("v2-identity", "identity"),
        ("v2-identity-b", "identity-b"),
        ("v2-answers", "answers"),
    ):
        doc = copy.deepcopy(v2)
        result = doc["results"][0]
        if how == "version":
            doc["plugin_version"] = "0.0.1"
        elif how == "seed":
            result["design"]["seed"] = 7
        elif how == "answers":
            result["summary"]["all_correct"] = 0.123
        else:  # the same model name, answered by two models (one per archive)
            result["model_identity"] = "aaaa" if how == "identity" else "bbbb"
            if how == "identity-b":
                result["test"] = result["test"].replace("test_x", "test_y")
                result["nodeid"] = result["nodeid"].replace("test_x", "test_y")
        paths[name] = folder / f"{name}.json"
        paths[name].write_text(json.dumps(doc), "utf-8")
    paths["jsonl"] = folder / "data.jsonl"
    paths["jsonl"].write_text('{"schema": "pytest-competence/dataset/1"}\n{"prompt": "p"}\n')
    return folder, paths


@pytest.mark.parametrize("row", CLI_ROWS, ids=[r.id for r in CLI_ROWS])
def test_cli_input(prepared, row: CliRow):
    folder, paths = prepared
    args = [
        str(paths[a[len("{file:") : -1]])
        if a.startswith("{file:")
        else a.replace("{file}", str(paths.get(row.file, "")))
        for a in row.args
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest_competence.cli", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = done.stdout + done.stderr
    assert done.returncode == row.exit, output
    assert "Traceback" not in output, output
    assert row.expected in done.stderr, done.stderr
    if row.exit == 2 and row.id.startswith(("report", "trend", "merge")) and not row.usage:
        assert len(done.stderr.splitlines()) == 1, done.stderr  # one line, no usage banner
