"""Streaming: designs in chunks, chunk-by-chunk evaluation into compact arrays, records per chunk."""

from __future__ import annotations

import json

import numpy as np
import pytest

from plugin_helpers import ideal_py, read_archive
from pytest_competence.engine._reduced import NOT_KEPT
from pytest_competence.engine.analysis import analyze
from pytest_competence.engine.evaluate import evaluate, evaluate_chunks
from pytest_competence.engine.evaluation import Reduction
from pytest_competence.engine.files import json_text
from pytest_competence.engine.progress import ProgressModel
from pytest_competence.engine.records import RecordsPart, _record, evaluation_from_records, records
from pytest_competence.engine.redaction import redact_all
from pytest_competence.engine.spec import spec_from_marker
from pytest_competence.models import resolve_model
from pytest_competence.strategies import FAMILIES, Parsed

#: Two levels each family accepts (its own size checks), with pairs a multiple of every
#: family's balanced cells.
_LEVELS = {"ordering": [4, 6], "horn": [4, 8], "reformulations": [1, 2], "intervention": [4, 8]}


def _spec(name: str, pairs: int = 12, **options: object):
    levels = _LEVELS.get(name)
    if levels is None:  # a rule-induction family: its own range of levels
        lo, hi = FAMILIES[name]().levels
        levels = [lo, hi]
    return spec_from_marker((name,), {"levels": levels, "pairs": pairs, **options})


@pytest.mark.parametrize("name", list(FAMILIES))
def test_chunks_concatenate_to_the_whole_design(name: str) -> None:
    spec = _spec(name)
    whole = spec.design()
    per_chunk = 5 * len(spec.presentations) * spec.attempts  # 5 instances: chunks cross levels
    chunks = list(spec.chunks(prompts=per_chunk))
    assert len(chunks) == -(-len(whole) // 5) and all(len(c) <= 5 for c in chunks)
    flat = [item for chunk in chunks for item in chunk]
    assert [i.id for i in flat] == [i.id for i in whole]
    assert [[(p.text, p.gold, p.presentation) for p in i.prompts] for i in flat] == [
        [(p.text, p.gold, p.presentation) for p in i.prompts] for i in whole
    ]
    assert flat == whole  # latent instances too
    assert [len(c) for c in spec.chunks()] == [len(whole)]  # a small design is one batch
    # A small first chunk (the lookahead's, when nothing was asked ahead), then whole ones.
    started = list(spec.chunks(prompts=per_chunk, first=2 * per_chunk // 5))
    assert [len(c) for c in started[:2]] == [2, 5] and all(len(c) <= 5 for c in started)
    assert [item for chunk in started for item in chunk] == whole


def test_a_chunked_evaluation_gives_every_figure_of_one_batch() -> None:
    spec = _spec("ordering", pairs=16)
    model = resolve_model("ref:endpoint")
    whole = evaluate(spec.family, spec.design(), model)
    asked: list[int] = []

    def each(items, rows) -> None:  # noqa: ANN001
        asked.append(len(items))
        assert [len(r) for r in rows] == [len(spec.presentations)] * len(items)

    chunked = evaluate_chunks(spec.family, lambda: spec.chunks(prompts=14), model, each=each)
    assert asked == [7] * (32 // 7) + [32 % 7]
    assert analyze(chunked, bootstrap=50, seed=1) == analyze(whole, bootstrap=50, seed=1)
    for name in ("correct", "valid", "errored", "answer", "gold"):
        assert np.array_equal(chunked.array(name), whole.array(name)), name
    assert chunked.observations == whole.observations  # rows rebuilt from the regenerated design
    assert chunked.items == tuple(spec.design())


class _Answering:
    """A model that notes the thread each chunk of the design was generated in."""

    def __init__(self, model, releases_gil: bool) -> None:  # noqa: ANN001
        self.model, self.name, self.releases_gil = model, model.name, releases_gil

    def generate(self, prompts):  # noqa: ANN001, ANN201
        return self.model.generate(prompts)


@pytest.mark.parametrize("releases_gil", [False, True])
def test_the_next_chunk_is_generated_meanwhile_only_for_a_model_waiting_outside_python(
    releases_gil: bool,
) -> None:
    """Two threads running Python only contend for the interpreter: a model that answers in
    Python gets its chunks generated in turn, in the caller's thread; one that declares
    ``releases_gil`` gets the next chunk generated in a thread while it answers this one."""
    import threading

    spec = _spec("ordering", pairs=16)
    where: list[str] = []

    def chunks():  # noqa: ANN202
        for chunk in spec.chunks(prompts=14):
            where.append(threading.current_thread().name)
            yield chunk

    model = _Answering(resolve_model("ref:endpoint"), releases_gil)
    chunked = evaluate_chunks(spec.family, chunks, model)
    asked = len(spec.design()) // 7 + 1
    assert len(where) >= asked
    in_caller = [name == threading.current_thread().name for name in where[:asked]]
    assert all(in_caller) is (not releases_gil) and any(in_caller) is (not releases_gil)
    whole = evaluate(spec.family, spec.design(), resolve_model("ref:endpoint"))
    assert np.array_equal(chunked.array("correct"), whole.array("correct"))


def test_a_bounded_reduction_drops_raw_text_not_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _spec("ordering", pairs=8)
    items = spec.design()
    model_answers = [f"yes, after thinking it over ({k})" for k in range(len(items) * 2)]

    class Chatty:
        name = "chatty"

        def generate(self, prompts):  # noqa: ANN001, ANN201
            return model_answers[: len(prompts)]

    exact = evaluate(spec.family, items, Chatty())
    rows = [list(row) for row in exact.observations]
    monkeypatch.setattr("pytest_competence.engine.evaluation._RAW_LIMIT", 5)
    bounded = Reduction("chatty", spec.family, (), bounded=True)
    bounded.add(items, rows)
    small = bounded.finish(lambda: ((item, None) for item in items))
    assert (small.array("raw") == NOT_KEPT).sum() == len(model_answers) - 5
    assert analyze(small, bootstrap=0) == analyze(exact, bootstrap=0)
    first_failing = next(iter(small.kept))
    assert small.observed(first_failing) == exact.observations[first_failing]  # kept whole


def test_records_part_is_json_lines_redacted_and_whole_only_once_closed(tmp_path) -> None:
    spec = _spec("ordering", pairs=8)
    evaluation = evaluate(spec.family, spec.design(), resolve_model("ref:always-yes"))
    rows = list(evaluation.observations)
    secret = rows[0][0].prompt.text.split()[3]  # a word of a prompt stands in for an API key
    part = RecordsPart(tmp_path, "test_x.py::test_x[m]", secrets=[secret])
    part.append(rows[:5])
    assert not part.path.exists()  # not under its name until closed
    part.append(rows[5:])
    name = part.close()
    assert name == part.path.name and name.endswith(".jsonl")
    lines = part.path.read_text("utf-8").splitlines()
    assert len(lines) == part.count == sum(map(len, rows))
    expected = [json.loads(json_text(r)) for r in records(evaluation)]
    got = [json.loads(line) for line in lines]
    assert [r["prompt_sha256"] for r in got] == [r["prompt_sha256"] for r in expected]
    assert all(secret not in line for line in lines)
    assert [r["parsed"] for r in got] == [r["parsed"] for r in expected]
    assert [line + "\n" for line in lines] == [
        json_text(redact_all(_record(o), [secret])) + "\n" for row in rows for o in row
    ]


def test_one_progress_line_counts_every_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    class Streaming:
        name = "s"

        def stream(self, prompts):  # noqa: ANN001, ANN201
            for i, p in enumerate(prompts):
                yield i, p.gold

    shown: list[str] = []

    class Terminal:  # the engine's Terminal, shown
        def enabled(self) -> bool:
            return True

        def writer(self):  # noqa: ANN202
            return shown.append, lambda: 200

    model = ProgressModel(Streaming(), Terminal())
    spec = _spec("ordering", pairs=16)
    with model.expect(spec.prompt_count):
        span = model._span
        assert span is not None
        evaluate_chunks(spec.family, lambda: spec.chunks(prompts=8), model)  # 8 batches
        assert span.done == spec.prompt_count == 64
    assert span.total == 64 and model._span is None


def test_a_run_asks_chunk_by_chunk_and_writes_every_record(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        chunkmodel=ideal_py("""
        import json, os

        class Model:
            name = "chunked"

            def generate(self, prompts):
                with open("batches.txt", "a") as out:
                    out.write(f"{len(prompts)}\\n")
                return [_ideal(p) for p in prompts]

        model = Model()
    """)
    )
    pytester.makeconftest("import pytest_competence.engine.spec as s\ns.CHUNK_PROMPTS = 10\n")
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.mark.competence(levels=[4, 8], pairs=12)
        def test_x(competence):
            pass
    """
    )
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--competence-model",
        "py:chunkmodel:model",
        "--competence-json",
        "r.json",
    )
    result.assert_outcomes(passed=1)
    batches = [int(x) for x in (pytester.path / "batches.txt").read_text().split()]
    assert batches == [10] * 4 + [8]  # 5 instances × 2 presentations per chunk; 24 instances
    document, by_node = read_archive(pytester.path / "r.json")
    (r,) = document["results"]
    rows = by_node[r["nodeid"]]
    assert len(rows) == 48 and all(rec["correct"] for rec in rows)
    assert [rec["instance_id"] for rec in rows[::2]] == [
        i.id for i in spec_from_marker(("ordering",), {"levels": [4, 8], "pairs": 12}).design()
    ]
    assert r["summary"]["all_correct"] == 1.0 and r["instances"]["ids"][0] == rows[0]["instance_id"]


def test_parsed_answers_come_back_from_their_codes() -> None:
    spec = _spec("ordering", pairs=4)
    items = spec.design()
    rows = [
        tuple(o for o in row)
        for row in evaluate(spec.family, items, resolve_model("ref:always-yes")).observations
    ]
    reduction = Reduction("m", spec.family, ())
    reduction.add(items, rows)
    ev = reduction.finish(None)
    assert ev.answers(0) == [row[0].parsed.answer for row in rows]
    assert ev.answer_text(ev.array("gold")[0, 0]) == items[0].prompts[0].gold
    with pytest.raises(TypeError, match="keeps no design"):
        next(ev.rows())
    assert Parsed(ev.answers(1)[0]).valid


@pytest.mark.parametrize("name", ["ordering", "intervention", "programs"])
def test_records_read_once_as_a_stream_give_every_figure(name: str) -> None:
    spec = _spec(name, pairs=12)
    live = evaluate(spec.family, spec.design(), resolve_model("ref:always-yes"), spec.attempts)
    rows = [json.loads(json_text(r)) for r in records(live)]
    once = evaluation_from_records(live.model, repr(spec.family), iter(rows))  # one pass
    again = evaluation_from_records(live.model, repr(spec.family), lambda: iter(rows))
    expected = analyze(live, bootstrap=20, seed=3)
    for archived in (once, again):
        got = analyze(archived, bootstrap=20, seed=3)
        assert got["levels"] == expected["levels"] and got["summary"] == expected["summary"]
        assert got["instances"] == expected["instances"]
