"""The records file on its own: lines tagged without parsing, read back exactly, memory flat."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_competence.engine.files import json_text, write_json_atomic
from pytest_competence.report._archive import RECORD_FIELDS
from pytest_competence.report._records_file import (
    RecordsFileError,
    pointers,
    read_records,
    write_records_file,
)

#: JSON values a record's fields may hold, text of every code point (lone surrogates included).
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(st.characters(exclude_categories=())),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
records = st.lists(
    st.fixed_dictionaries(
        {name: values for name in RECORD_FIELDS if name not in ("answer_map", "attempts")}
        | {"answer_map": st.just({}), "attempts": st.just([])}
    ),
    max_size=4,
)


def _document(results: list[tuple[str, list[dict]]]) -> dict:
    return {"results": [{"nodeid": nodeid, "model": "m"} for nodeid, _ in results]}


@settings(max_examples=30, deadline=None)
@given(
    results=st.lists(
        st.tuples(st.text(min_size=1, max_size=8), records), max_size=3, unique_by=lambda r: r[0]
    ),
    compressed=st.booleans(),
)
def test_records_come_back_exactly_result_by_result(tmp_path_factory, results, compressed):
    folder = tmp_path_factory.mktemp("records")
    path = folder / ("r.records.jsonl.gz" if compressed else "r.records.jsonl")
    sources = [(nodeid, "m", (json_text(r).encode() for r in rows)) for nodeid, rows in results]
    sha256, counts = write_records_file(path, sources)
    document = pointers(_document(results), folder / "r.json", path, sha256, counts)
    assert document["records_file"]["file"] == path.name
    read = [(result["nodeid"], list(rows or [])) for result, rows in read_records(document, folder)]
    # json.loads(json_text(...)) is what the records were: the round trip through the file.
    assert read == [(nodeid, json.loads(json_text(rows))) for nodeid, rows in results]


@settings(max_examples=50, deadline=None)
@given(value=values, indent=st.sampled_from([None, 1]))
def test_the_document_is_written_piece_by_piece_as_json_text_writes_it(
    tmp_path_factory, value, indent
):
    path = tmp_path_factory.mktemp("doc") / "r.json"
    write_json_atomic(path, {"results": [value]}, indent=indent)
    assert path.read_text("utf-8") == json_text({"results": [value]}, indent=indent)


def test_an_empty_record_is_tagged_too(tmp_path):
    path = tmp_path / "r.jsonl"
    sha256, counts = write_records_file(path, [("a", "m", [b"{}\n", b' { "x" : 1 }\n'])])
    assert path.read_text().splitlines() == [
        '{"nodeid": "a", "model": "m"}',
        '{"nodeid": "a", "model": "m", "x" : 1 }',
    ]
    assert counts == {"a": 2}


def test_a_line_that_is_not_an_object_is_refused_and_nothing_written(tmp_path):
    path = tmp_path / "r.jsonl"
    with pytest.raises(ValueError, match="records of a: line 2 is not a JSON object"):
        write_records_file(path, [("a", "m", [b"{}\n", b"[1]\n"])])
    assert list(tmp_path.iterdir()) == []


def test_gzip_is_the_same_lines_and_the_same_bytes_each_time(tmp_path):
    rows = [
        json_text({"i": i, "text": "Alice stands in front of Bob. " * 20}).encode()
        for i in range(200)
    ]
    plain, _ = write_records_file(tmp_path / "r.jsonl", [("a", "m", rows)])
    first, _ = write_records_file(tmp_path / "r.jsonl.gz", [("a", "m", rows)])
    second, _ = write_records_file(tmp_path / "again.jsonl.gz", [("a", "m", rows)])
    assert first == second != plain  # no time stamp, no file name in the gzip header
    assert (
        gzip.decompress((tmp_path / "r.jsonl.gz").read_bytes())
        == (tmp_path / "r.jsonl").read_bytes()
    )
    assert (tmp_path / "r.jsonl.gz").stat().st_size < (tmp_path / "r.jsonl").stat().st_size / 5


def test_a_record_of_another_result_is_a_mismatch(tmp_path):
    path = tmp_path / "r.jsonl"
    sha256, counts = write_records_file(path, [("a", "m", [b'{"x": 1}'] * 2)])
    # The document says the two records are b's: the file is another document's.
    document = pointers(_document([("b", [])]), tmp_path / "r.json", path, sha256, {"b": 2})
    with pytest.raises(RecordsFileError, match="line 1 is not a record of b"):
        for _, rows in read_records(document, tmp_path):
            list(rows or [])


#: Writes the report of the part files in argv[1] and prints the MB its peak RSS rose above the
#: RSS before (the kernel's peak reset first: imports' own peak does not hide the write's).
WRITE = textwrap.dedent("""
    import re, sys
    from pathlib import Path
    from pytest_competence.report import write_outputs
    from pytest_competence.report._records_file import part_lines
    import pytest_competence.engine.settings

    def status(key):
        return int(re.search(key + r":\\s+(\\d+)", Path("/proc/self/status").read_text())[1])

    parts, results = Path(sys.argv[1]), int(sys.argv[2])
    document = {"schema": "x", "results": [{"nodeid": f"t{k}", "model": "m"}
                                           for k in range(results)]}
    Path("/proc/self/clear_refs").write_text("5")
    before = status("VmRSS")
    write_outputs(document, json_path=str(parts / "r.json"),
                  records=((f"t{k}", "m", part_lines(parts / f"{k}.jsonl"))
                           for k in range(results)))
    print((status("VmHWM") - before) / 1024)
""")


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_writing_the_records_file_takes_no_memory_per_record(tmp_path):
    """Ten times the records (20 MB of part files against 200 MB) add no memory: the peak of
    writing the report stays within a few MB whatever the size (the whole-document copy this
    replaced grew by ~1 GB at 100,000 records; bench/bench_report.py)."""
    line = json_text({"prompt": "Alice stands in front of Bob. " * 33, "raw": "yes"}) + "\n"
    peaks = []
    for records in (20_000, 200_000):
        folder = tmp_path / str(records)
        folder.mkdir()
        for k in range(4):
            (folder / f"{k}.jsonl").write_text(line * (records // 4), "utf-8")
        done = subprocess.run(
            [sys.executable, "-c", WRITE, str(folder), "4"],
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        peaks.append(float(done.stdout))
        assert len((folder / "r.records.jsonl").read_bytes().splitlines()) == records
    assert peaks[1] < 16 and peaks[1] - peaks[0] < 8, peaks


def test_an_archive_of_schema_1_is_rewritten_with_a_records_file(tmp_path):
    from plugin_helpers import read_archive, scripted_document
    from pytest_competence.cli import main as cli_main
    from pytest_competence.engine.spec import spec_from_marker

    spec = spec_from_marker((), {"levels": [4, 8], "pairs": 4})
    n = sum(len(item.prompts) for item in spec.design())
    old = scripted_document(spec, (["yes", "no", "\ud800 maybe"] * n)[:n])
    assert old["schema"] == "pytest-competence/results/1"
    (tmp_path / "old.json").write_text(json_text(old), "utf-8")
    assert (
        cli_main(
            [
                "report",
                str(tmp_path / "old.json"),
                "--json",
                str(tmp_path / "new.json"),
                "--records",
                str(tmp_path / "new.jsonl.gz"),
            ]
        )
        == 0
    )
    new, records = read_archive(tmp_path / "new.json")
    assert new["schema"] == "pytest-competence/results/2"
    assert new["records_file"]["file"] == "new.jsonl.gz" and new["records_file"]["count"] == n
    (result,) = old["results"]
    assert records == {result["nodeid"]: result["records"]}
    assert [{k: v for k, v in r.items() if k != "records"} for r in new["results"]] == [
        {k: v for k, v in r.items() if k != "records"} for r in old["results"]
    ]
