"""The OpenAI Batch path: export the uncached requests, run them elsewhere, import, run offline.

The batch runner is :func:`vllm_batch.run_batch`: it reads the exported files as ``vllm run-batch``
reads them and writes output lines the way vLLM's ``BatchRequestOutput.model_dump_json()`` writes
them, answering with the fake server's own responses (logprobs included), so every round trip
ends in an offline run (``--competence-cache=read``) that sends no request and must equal a direct
HTTP run figure for figure. Every exported file is checked against the field sets and URL rules
of vLLM's ``BatchRequestInput`` and of OpenAI's documented input line (:mod:`vllm_batch`).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

import plugin_helpers  # noqa: F401  (the engine, imported before any in-process session)
import pytest_competence.engine.batch  # noqa: F401
import pytest_competence.engine.cache  # noqa: F401
import pytest_competence.engine.export_files  # noqa: F401
import pytest_competence.models.http  # noqa: F401
from fake_server import _response
from server_fixtures import fake_server_process, server  # noqa: F401  (fixtures)
from vllm_batch import check_input_file, output_line, run_batch

SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4, 8], pairs=8)
    def test_x(competence):
        pass

    @pytest.mark.competence(levels=[8], pairs=8, seed=2)
    def test_y(competence):
        pass
"""
NO_CACHEPROVIDER = ("-p", "no:cacheprovider")


def competence(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The ``competence`` command through this interpreter (never the PATH)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest_competence.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _figures(path: Path) -> list[tuple]:
    document = json.loads(path.read_text("utf-8"))
    return [
        (r["test"], r["model"], r["instances"], r["levels"], r["summary"])
        for r in document["results"]
    ]


def _wrong_on_half(url: str, body: dict) -> dict:
    """The fake server's response with the answer flipped on about half the prompts."""
    content = _response(url, body)
    choice = content["choices"][0]
    text = body["messages"][-1]["content"]
    if hashlib.sha256(text.encode()).digest()[0] % 2:
        flipped = {"yes": "no", "no": "yes"}.get(choice["message"]["content"], "yes")
        choice["message"]["content"] = flipped
    return content


def round_trip(
    pytester: pytest.Pytester,
    server,
    specs: list[str],
    *export_args: str,
    runner: str = "vllm",
    served: list[str] | None = None,
    xdist: bool = False,
) -> tuple[list[Path], subprocess.CompletedProcess[str]]:
    """A direct run, an export, the batch run and its import, and an offline run; the offline
    run sent nothing and its figures equal the direct run's. Returns the exported files (every
    part) and the import's output."""
    pytester.makepyfile(test_suite=SUITE)
    models = [f"--competence-model={s}" for s in specs]
    workers = ("-n", "2") if xdist else ()
    pytester.makeini("[pytest]\ncompetence_cache_path = direct.sqlite\n")
    direct = pytester.runpytest(*NO_CACHEPROVIDER, *models, "--competence-json=direct.json")
    direct.assert_outcomes(passed=2 * len(specs))
    server.reset()

    pytester.makeini("[pytest]\ncompetence_cache_path = batch.sqlite\n")
    exported = pytester.runpytest(
        *NO_CACHEPROVIDER,
        *models,
        "--competence-batch-export=requests.jsonl",
        *export_args,
        *workers,
    )
    exported.assert_outcomes(skipped=2 * len(specs))
    assert server.log() == []  # nothing sent
    files = sorted(pytester.path.glob("requests*.jsonl"))
    for path in files:
        check_input_file(path, runner=runner)
    outputs = []
    for k, path in enumerate(files):
        outputs.append(pytester.path / f"results-{k}.jsonl")
        names = served or [json.loads(path.read_text("utf-8").splitlines()[0])["body"]["model"]]
        run_batch([path], outputs[-1], _response, served=names, runner=runner)
    imported = competence("batch", "import", *map(str, outputs), cwd=pytester.path)
    assert imported.returncode == 0, imported.stderr

    final = pytester.runpytest(
        *NO_CACHEPROVIDER, *models, "--competence-cache=read", "--competence-json=batch.json"
    )
    final.assert_outcomes(passed=2 * len(specs))
    assert server.log() == []  # every answer came from the imported results
    assert _figures(pytester.path / "batch.json") == _figures(pytester.path / "direct.json")
    return files, imported


@pytest.mark.slow
def test_the_batch_round_trip_equals_a_direct_run_and_sends_nothing(
    pytester: pytest.Pytester, server
):
    spec = f"openai:ideal@{server.url}"
    (requests,), imported = round_trip(pytester, server, [spec])
    assert requests.name == "requests.jsonl"  # one model: the path as given
    assert len(requests.read_text("utf-8").splitlines()) == 48
    lines = check_input_file(requests, runner="vllm")
    body = lines[0]["body"]
    assert body["model"] == "ideal" and "max_tokens" not in body and "logprobs" not in body
    assert imported.stdout.splitlines() == [
        f"response cache: {pytester.path / 'batch.sqlite'} (competence_cache_path; the ini file "
        f"{pytester.path / 'tox.ini'})",
        "stored 48 answers in the response cache",
        "failed 0 lines (not stored; asked again next run)",
        "matched no exported request: 0 lines",
    ]


@pytest.mark.slow
def test_a_completions_mode_round_trip_equals_a_direct_run(pytester: pytest.Pytester, server):
    """mode=completions exports /v1/completions lines (which vllm run-batch rejects, so another
    runner of the format runs them) and comes back with the figures of a direct run."""
    spec = f"openai:ideal@{server.url}?mode=completions"
    (requests,), imported = round_trip(pytester, server, [spec], runner="openai")
    lines = check_input_file(requests, runner="openai")
    assert len(lines) == 48 and {line["url"] for line in lines} == {"/v1/completions"}
    assert all("prompt" in line["body"] and "messages" not in line["body"] for line in lines)
    assert "stored 48 answers in the response cache" in imported.stdout


@pytest.mark.slow
def test_the_export_says_what_to_run_for_each_file(pytester: pytest.Pytester, server):
    pytester.makepyfile(test_suite=SUITE)
    exported = pytester.runpytest(
        *NO_CACHEPROVIDER,
        f"--competence-model=openai:ideal@{server.url}",
        f"--competence-model=openai:ideal@{server.url}?mode=completions",
        "--competence-batch-export=out/requests.jsonl",
        "-rs",
    )
    assert exported.ret == pytest.ExitCode.USAGE_ERROR  # out/ does not exist
    (pytester.path / "out").mkdir()
    exported = pytester.runpytest(
        *NO_CACHEPROVIDER,
        f"--competence-model=openai:ideal@{server.url}",
        f"--competence-model=openai:ideal@{server.url}?mode=completions",
        "--competence-batch-export=out/requests.jsonl",
        "-rs",
    )
    exported.assert_outcomes(skipped=4)
    chat, completions = "out/requests.ideal.jsonl", "out/requests.ideal-completions.jsonl"
    exported.stdout.fnmatch_lines(
        [
            "competence: 4 competence test(s) awaiting batch results; nothing was sent, the "
            "requests are in 2 file(s):",
            f"  {chat}: 48 requests for model 'ideal' (/v1/chat/completions)",
            f"    vllm run-batch -i {chat} -o out/results.ideal.jsonl --model CHECKPOINT "
            f"--served-model-name ideal   (CHECKPOINT: its path or hub id)",
            f"  {completions}: 48 requests for model 'ideal' (/v1/completions): vllm run-batch "
            f"takes /v1/chat/completions lines only; send this file to the OpenAI Batch API or "
            f"another runner of /v1/completions lines",
            "  then: competence batch import out/results.ideal.jsonl "
            "out/results.ideal-completions.jsonl, and run again with --competence-cache=read "
            "instead of --competence-batch-export",
        ]
    )
    check_input_file(pytester.path / chat, runner="vllm")
    with pytest.raises(AssertionError, match="vLLM rejects the URL"):
        check_input_file(pytester.path / completions, runner="vllm")
    check_input_file(pytester.path / completions, runner="openai")
    # Under --competence-batch-runner=vllm the completions model is refused before anything runs.
    refused = pytester.runpytest(
        *NO_CACHEPROVIDER,
        f"--competence-model=openai:ideal@{server.url}?mode=completions",
        "--competence-batch-export=requests.jsonl",
        "--competence-batch-runner=vllm",
    )
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(
        [
            f"ERROR: --competence-batch-runner=vllm: model "
            f"'openai:ideal@{server.url}?mode=completions' writes /v1/completions lines "
            f"(mode=completions), and vllm run-batch takes /v1/chat/completions lines only; use "
            f"mode=chat*"
        ]
    )
    assert server.log() == []


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["chat", "completions"])
def test_a_score_readout_round_trip_exports_scoring_requests(
    pytester: pytest.Pytester, server, mode
):
    """readout=score exports what scoring needs — never a generated answer — and the import
    reads the logprobs back as the HTTP path reads them: the same figures, offline."""
    spec = f"openai:ideal@{server.url}?readout=score&mode={mode}"
    runner = "vllm" if mode == "chat" else "openai"
    (requests,), _ = round_trip(pytester, server, [spec], runner=runner)
    lines = check_input_file(requests, runner=runner)
    bodies = [line["body"] for line in lines]
    if mode == "chat":
        assert len(lines) == 48  # one line per prompt: the first token's alternatives
        assert all(
            b["max_tokens"] == 1 and b["logprobs"] is True and b["top_logprobs"] == 20
            for b in bodies
        )
    else:
        assert len(lines) == 96  # one line per candidate, echoed
        assert {line["custom_id"][-2:] for line in lines} == {"-0", "-1"}
        assert all(
            b["echo"] is True and b["logprobs"] == 1 and b["max_tokens"] == 1 for b in bodies
        )
        assert {b["prompt"].rsplit(" ", 1)[1] for b in bodies} == {"yes", "no"}
    assert all(b["temperature"] == 0 for b in bodies)
    # The candidates' scores are kept beside each imported answer, as a direct run keeps them
    # (the output decomposition reads them).
    assert _scores(pytester.path / "batch.sqlite") == _scores(pytester.path / "direct.sqlite")
    assert len(_scores(pytester.path / "batch.sqlite")) == 48


def _scores(path: Path) -> dict[str, dict[str, float]]:
    with closing(sqlite3.connect(path)) as db:
        return {key: json.loads(scores) for key, scores in db.execute("SELECT * FROM scores")}


@pytest.mark.slow
def test_two_models_get_a_file_each(pytester: pytest.Pytester, server):
    specs = [f"openai:ideal@{server.url}", f"openai:other@{server.url}?temperature=0"]
    files, imported = round_trip(pytester, server, specs)
    assert [f.name for f in files] == ["requests.ideal.jsonl", "requests.other.jsonl"]
    assert [len(check_input_file(f, runner="vllm")) for f in files] == [48, 48]
    assert "stored 96 answers in the response cache" in imported.stdout
    # One vllm run-batch serving one name answers the other model's lines with its 404.
    run_batch(files, pytester.path / "mixed.jsonl", _response, served=["ideal"])
    mixed = competence(
        "batch", "import", "mixed.jsonl", "--cache", "batch.sqlite", cwd=pytester.path
    )
    assert mixed.stdout.splitlines()[1:3] == [
        "stored 48 answers in the response cache",
        "failed 48 lines (not stored; asked again next run):",
    ]
    assert '  48 × error: {"error": {"message": "The model `other` does not exist."' in (
        mixed.stdout
    )


@pytest.mark.slow
def test_a_split_file_set_round_trips_under_xdist(pytester: pytest.Pytester, server):
    """Parts of at most 10 lines, written by two workers at once: every request once, in some
    part, the candidates of one prompt across parts, and the same figures offline."""
    spec = f"openai:ideal@{server.url}?readout=score&mode=completions"
    files, imported = round_trip(
        pytester,
        server,
        [spec],
        "--competence-batch-max-lines=10",
        "--competence-batch-max-mb=1",
        runner="openai",
        xdist=True,
    )
    assert [f.name for f in files[:3]] == [
        "requests.jsonl",
        "requests.part10.jsonl",  # sorted by name: part10 before part2
        "requests.part2.jsonl",
    ]
    counts = [len(check_input_file(f, runner="openai", max_lines=10)) for f in files]
    assert sum(counts) == 96 and len(files) == 10 and set(counts) == {10, 6}
    ids = [json.loads(line)["custom_id"] for f in files for line in f.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 96
    assert "stored 48 answers in the response cache" in imported.stdout
    assert "waiting" not in imported.stdout  # every candidate's line came in


@pytest.mark.slow
def test_failed_batch_lines_are_not_answers(pytester: pytest.Pytester, server):
    pytester.makepyfile(test_suite=SUITE)
    spec = f"--competence-model=openai:ideal@{server.url}"
    pytester.runpytest(*NO_CACHEPROVIDER, spec, "--competence-batch-export=requests.jsonl")
    requests = pytester.path / "requests.jsonl"
    failing = {json.loads(line)["custom_id"] for line in requests.read_text().splitlines()[:3]}
    run_batch([requests], pytester.path / "results.jsonl", _response, fail=failing.__contains__)
    imported = competence("batch", "import", "results.jsonl", cwd=pytester.path)
    assert imported.stdout.splitlines()[1:] == [
        "stored 45 answers in the response cache",
        "failed 3 lines (not stored; asked again next run):",
        '  3 × error: {"error": {"message": "CUDA out of memory", "type": '
        '"InternalServerError", "param": null, "code": 500}}',
        "matched no exported request: 0 lines",
    ]
    # Offline, the three are not in the cache: said with the count and the fix; nothing sent.
    offline = pytester.runpytest(*NO_CACHEPROVIDER, spec, "--competence-cache=read")
    offline.assert_outcomes(passed=1, errors=1)
    offline.stdout.fnmatch_lines(
        [
            f"*3 of 32 prompts of model 'openai:ideal@{server.url}' are not in the response "
            f"cache, and --competence-cache=read asks the cache only (nothing was sent): export "
            f"them with the same pytest command and --competence-batch-export=requests.jsonl*"
        ]
    )
    assert "start the server" not in offline.stdout.str()
    assert server.log() == []
    # Exporting again writes only the three requests still unanswered.
    again = pytester.runpytest(*NO_CACHEPROVIDER, spec, "--competence-batch-export=requests.jsonl")
    again.assert_outcomes(skipped=2)
    assert len(requests.read_text("utf-8").splitlines()) == 3
    # Without the flag, the run asks the server for exactly those three.
    server.reset()
    pytester.runpytest(*NO_CACHEPROVIDER, spec).assert_outcomes(passed=2)
    assert len(server.log()) == 3


@pytest.mark.slow
def test_offline_minimisation_asks_the_cache_only(pytester: pytest.Pytester, server):
    """A failing model answered from an imported batch: the offline run fails with the design's
    failing case, and minimisation asks the cache alone — it says the cache cannot answer its
    next step, and no request reaches the server."""
    pytester.makepyfile(test_suite=SUITE)
    spec = f"--competence-model=openai:ideal@{server.url}"
    pytester.runpytest(*NO_CACHEPROVIDER, spec, "--competence-batch-export=requests.jsonl")
    run_batch([pytester.path / "requests.jsonl"], pytester.path / "r.jsonl", _wrong_on_half)
    assert competence("batch", "import", "r.jsonl", cwd=pytester.path).returncode == 0
    offline = pytester.runpytest(*NO_CACHEPROVIDER, spec, "--competence-cache=read")
    offline.assert_outcomes(failed=2)
    # The FAILURES section only: with CI set, pytest's short summary repeats each message whole.
    output = offline.stdout.str().split(" short test summary info ", 1)[0]
    assert output.count("minimisation stopped: ") == 2, output
    assert "are not in the response cache, and --competence-cache=read asks the cache only" in (
        output
    )
    assert server.log() == []


def test_batch_import_errors_are_one_line(tmp_path: Path):
    missing = competence("batch", "import", "results.jsonl", cwd=tmp_path)
    assert missing.returncode == 2
    assert (
        f"no response cache at '{tmp_path / '.competence' / 'cache.sqlite'}' "
        f"(competence_cache_path; no ini file)"
    ) in missing.stderr
    from pytest_competence.engine.cache import ResponseCache

    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.mark_exported(["k"], "m")
    cache.close()
    (tmp_path / "results.jsonl").write_text('{"not": "batch"}\n', encoding="utf-8")
    bad = competence("batch", "import", "results.jsonl", "--cache", "c.sqlite", cwd=tmp_path)
    assert bad.returncode == 2
    assert "results.jsonl:1: not an OpenAI Batch output line" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_batch_import_reads_the_ini_as_pytest_does(tmp_path: Path):
    """``competence_cache_path`` from the ini file pytest finds (here one folder up), relative to
    its rootdir; failure reasons each on a line of their own, under the failed count."""
    from pytest_competence.engine.cache import ResponseCache

    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ncompetence_cache_path = "answers/c.sqlite"\n', "utf-8"
    )
    (tmp_path / "answers").mkdir()
    (tmp_path / "suites").mkdir()
    cache = ResponseCache(tmp_path / "answers" / "c.sqlite")
    cache.mark_exported(["a", "b", "c", "d"], "m")
    cache.close()
    lines = [
        output_line("a", body={"choices": [{"index": 0, "message": {"content": "yes"}}]}),
        output_line("b", status=400, error="URL /v1/completions was used."),
        output_line("c", status=400, error="URL /v1/completions was used."),
        output_line("d", body={"choices": [{"message": {"content": None}}]}),
        output_line("stray", body={"choices": [{"message": {"content": "no"}}]}),
    ]
    (tmp_path / "suites" / "r.jsonl").write_text("".join(lines), "utf-8")
    done = competence("batch", "import", "r.jsonl", cwd=tmp_path / "suites")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"response cache: {tmp_path / 'answers' / 'c.sqlite'} (competence_cache_path; the ini "
        f"file {tmp_path / 'pyproject.toml'})",
        "stored 1 answers in the response cache",
        "failed 3 lines (not stored; asked again next run):",
        '  2 × error: "URL /v1/completions was used."',
        "  1 × no answer text (finish_reason=None)",
        "matched no exported request: 1 lines",
    ]


def test_the_batch_path_refuses_what_it_cannot_carry(pytester: pytest.Pytester):
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(
        *NO_CACHEPROVIDER,
        "--competence-model=ref:ideal",
        "--competence-batch-export=requests.jsonl",
    )
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        [
            "*--competence-batch-export needs the response cache and a model "
            "with a cache identity (an openai: model); 'ref:ideal' has none*"
        ]
    )
    result = pytester.runpytest(
        *NO_CACHEPROVIDER,
        "--competence-model=ref:ideal",
        "--competence-batch-export=no/such/dir/requests.jsonl",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --competence-batch-export no/such/dir/requests.jsonl: the directory "
            "no/such/dir does not exist; create it first or write elsewhere"
        ]
    )


def test_a_run_that_exports_nothing_leaves_no_export_file(pytester: pytest.Pytester):
    """A collection error, or a run whose answers are all cached, writes no request: no empty
    file is left to be mistaken for an export (an older export of that name is gone too: each
    run writes a fresh set)."""
    pytester.makepyfile(
        test_suite="""
        import pytest

        @pytest.mark.competence(levels=[4], pairs=8, no_such_option=3)
        def test_x(competence):
            pass
    """
    )
    (pytester.path / "requests.jsonl").write_text("an older export\n", "utf-8")
    spec = "--competence-model=openai:m@http://127.0.0.1:9/v1"
    result = pytester.runpytest(*NO_CACHEPROVIDER, spec, "--competence-batch-export=requests.jsonl")
    assert result.ret == pytest.ExitCode.INTERRUPTED  # the collection error
    assert not (pytester.path / "requests.jsonl").exists()
