"""Whatever a model answers, every report is written, parses, and keeps the answer recoverable.

Hypothesis draws the answers — any text (lone surrogates, NUL and control characters included),
a 1 MB string, markup, objects that are not text, exceptions — and the report builders run on
them directly (no pytest run per example): the JSON document (``json.loads`` gives back what the
records promise), the HTML page (parses as XML-ish text with no live ``<script``), the Markdown
summary, and the response cache (the exact text comes back). One end-to-end run adds JUnit XML
and the terminal.
"""

from __future__ import annotations

import gzip
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plugin_helpers import read_archive, scripted_document
from pytest_competence.engine.cache import ResponseCache
from pytest_competence.engine.files import atomic_writer, utf8_safe, write_text_atomic
from pytest_competence.engine.records import SHOWN_CHARACTERS, shown
from pytest_competence.engine.spec import spec_from_marker
from pytest_competence.report import recompute, write_outputs
from pytest_competence.report._records_file import archived_records

SPEC = spec_from_marker((), {"levels": [4], "pairs": 4})
PROMPTS = [p for item in SPEC.design() for p in item.prompts]
MEGABYTE = "yes " + "\ud800\x00<script>alert(1)</script>" * (2**20 // 32)

#: Text UTF-8 can and cannot hold: every code point, surrogates and controls included.
any_text = st.text(
    st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()), max_size=40
)
hostile = st.sampled_from(
    [
        "\ud800",
        "\udfff yes",
        "\x00",
        "yes\x00",
        "\x1b[31mno",
        "</pre><script>alert(1)</script>",
        "]]><!--",
        "```\n| a | b |",
        MEGABYTE,
        "Answer: yes" * 300,
    ]
)
not_text = st.sampled_from(
    [
        None,
        42,
        b"yes",
        {"answer": "yes"},
        ["no"],
        RuntimeError("boom <script>alert(1)</script> \ud800"),
        ValueError("x" * 5000),
    ]
)
answers = st.lists(
    st.one_of(any_text, hostile, not_text), min_size=len(PROMPTS), max_size=len(PROMPTS)
)


def figures(document: dict) -> list[dict]:
    return [
        {k: v for k, v in r.items() if k not in ("records", "failing_case")}
        for r in document["results"]
    ]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(given=answers)
def test_every_report_is_written_and_parses(tmp_path_factory, given):
    out = tmp_path_factory.mktemp("out")
    document = scripted_document(SPEC, given)
    paths = {
        "json_path": out / "r.json",
        "html_path": out / "r.html",
        "markdown_path": out / "r.md",
        "records_path": out / "r.records.jsonl.gz",
    }
    write_outputs(
        document, **{k: str(v) for k, v in paths.items()}, records=archived_records(document, out)
    )
    for path in paths.values():  # valid UTF-8, whatever the answers held
        data = path.read_bytes()
        (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8")
    archived, records = read_archive(paths["json_path"])
    (rows,) = records.values()
    for record, answer in zip(rows, given, strict=True):
        if isinstance(answer, str):
            assert record["raw"] == answer  # whole, surrogates and NULs included
        else:
            assert record["raw"] is None and record["valid"] is False
    # What a person reads is cut: the failing case the reports and messages show.
    case = archived["results"][0]["failing_case"] or {"observations": []}
    whole = {(r["instance_id"], r["presentation"]): r for r in rows}
    for o in case["observations"]:
        record = whole[case["instance_id"], o["presentation"]]
        assert o["raw"] == utf8_safe(shown(record["raw"]))
        assert o["reason"] == utf8_safe(shown(record["reason"]))
    # competence report recomputes the same figures from the records file.
    assert figures(recompute(archived, bootstrap=0, folder=out)) == figures(archived)
    page = paths["html_path"].read_text("utf-8")
    assert not re.search(r"<script", page, re.IGNORECASE)
    assert not re.search(r"<(iframe|object|embed)\b|\son\w+\s*=", page, re.IGNORECASE)


@settings(max_examples=25, deadline=None)
@given(text=st.one_of(any_text, hostile))
def test_the_cache_gives_back_the_exact_answer(tmp_path_factory, text):
    cache = ResponseCache(tmp_path_factory.mktemp("cache") / "cache.sqlite")
    try:
        cache.put("k", text, "m")
        assert cache.get_many(["k"]) == {"k": text}
    finally:
        cache.close()


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("old", "utf-8")
    with pytest.raises(RuntimeError):
        with atomic_writer(path) as out:
            out.write("half of the new")
            raise RuntimeError("killed mid-write")
    assert path.read_text("utf-8") == "old" and list(tmp_path.iterdir()) == [path]
    write_text_atomic(path, "new \ud800")
    assert path.read_text("utf-8") == "new \\ud800"  # what UTF-8 cannot hold, escaped
    assert list(tmp_path.iterdir()) == [path]


def test_a_long_answer_is_cut_with_a_marker_and_short_ones_are_not():
    assert shown("y" * SHOWN_CHARACTERS) == "y" * SHOWN_CHARACTERS
    assert shown("y" * (SHOWN_CHARACTERS + 5)) == (
        "y" * SHOWN_CHARACTERS + "… [5 more characters cut]"
    )
    assert shown(None) is None


HOSTILE_MODEL = """
ANSWERS = ["\\ud800", "yes\\x00", "</pre><script>alert(1)</script>", "]]>", "y" * 10**6]

def answer(prompts):
    return [ANSWERS[i % len(ANSWERS)] for i, _ in enumerate(prompts)]
"""


@pytest.mark.slow
def test_a_run_with_hostile_answers_writes_every_report(pytester: pytest.Pytester):
    pytester.syspathinsert()
    pytester.makepyfile(hostile_model=HOSTILE_MODEL)
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.mark.competence(levels=[4, 8], pairs=8)
        def test_x(competence):
            pass

        @pytest.mark.competence(levels=[4], pairs=8)
        def test_y(competence):
            pass
    """
    )
    pytester.makeini("[pytest]\ncompetence_shrink_calls = 0\n")
    # Under xdist: a worker's results travel through execnet, which takes UTF-8 strings only.
    result = pytester.runpytest_subprocess(
        "-n",
        "2",
        "--competence-model",
        "py:hostile_model:answer",
        "--competence-json",
        "r.json",
        "--competence-html",
        "r.html",
        "--competence-markdown",
        "r.md",
        "--junitxml",
        "j.xml",
    )
    result.assert_outcomes(failed=2)
    output = "\n".join(result.outlines + result.errlines)
    assert "Traceback" not in output and "UnicodeEncodeError" not in output
    document, records = read_archive(pytester.path / "r.json")
    raws = [r["raw"] for rows in records.values() for r in rows]
    assert "\ud800" in raws and "yes\x00" in raws and "y" * 10**6 in raws  # whole, in records
    shown_raws = [
        o["raw"] for result in document["results"] for o in result["failing_case"]["observations"]
    ]
    assert all(len(r) <= SHOWN_CHARACTERS + 40 for r in shown_raws)  # cut where people read
    assert Path(pytester.path / "r.json").stat().st_size < 200_000
    for name in ("r.md", "r.html", "j.xml"):  # no whole megabyte answer in any rendering
        assert "y" * (SHOWN_CHARACTERS + 1) not in (pytester.path / name).read_text("utf-8")
    ET.parse(pytester.path / "j.xml")
    assert "<script" not in (pytester.path / "r.html").read_text("utf-8")
    (pytester.path / "r.md").read_text("utf-8")
