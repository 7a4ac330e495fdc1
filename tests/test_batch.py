"""The OpenAI Batch path: export the uncached requests, run them elsewhere, import, run offline.

The batch runner here is the test's own: it reads the exported file and writes OpenAI Batch output
lines the way ``vllm run-batch`` does, answering with the same ideal policy as the fake server, so
the final offline run must equal a direct HTTP run figure for figure.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import plugin_helpers  # noqa: F401  (the engine, imported before any in-process session)
import pytest_competence._cache  # noqa: F401
import pytest_competence.batch  # noqa: F401
import pytest_competence.models.http  # noqa: F401
from fake_server import answer_for
from server_fixtures import fake_server_process, server  # noqa: F401  (fixtures)

SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4, 8], pairs=8)
    def test_x(competence):
        pass

    @pytest.mark.competence(levels=[8], pairs=8, seed=2)
    def test_y(competence):
        pass
"""


def run_batch(requests: Path, results: Path, *, fail: int = 0, stray: int = 0) -> None:
    """Answer every request line as a batch runner would; the first ``fail`` lines fail."""
    out = []
    for k, line in enumerate(requests.read_text("utf-8").splitlines()):
        request = json.loads(line)
        assert request["method"] == "POST" and request["url"] == "/v1/chat/completions"
        body = request["body"]
        text = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
        if k < fail:
            response = {"status_code": 500, "request_id": f"r{k}", "body": {"error": "oom"}}
        else:
            message = {"role": "assistant", "content": answer_for(text)}
            response = {
                "status_code": 200,
                "request_id": f"r{k}",
                "body": {
                    "object": "chat.completion",
                    "model": body["model"],
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                },
            }
        out.append(
            {
                "id": f"batch-{k}",
                "custom_id": request["custom_id"],
                "response": response,
                "error": None,
            }
        )
    out += [
        {
            "id": f"stray-{k}",
            "custom_id": f"not-exported-{k}",
            "error": None,
            "response": {
                "status_code": 200,
                "body": {"choices": [{"message": {"content": "yes"}}]},
            },
        }
        for k in range(stray)
    ]
    results.write_text("".join(json.dumps(o) + "\n" for o in out), encoding="utf-8")


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
    return [(r["test"], r["instances"], r["levels"], r["summary"]) for r in document["results"]]


@pytest.mark.slow
def test_the_batch_round_trip_equals_a_direct_run_and_sends_nothing(
    pytester: pytest.Pytester, server
):
    pytester.makepyfile(test_suite=SUITE)
    spec = f"--competence-model=openai:ideal@{server.url}"
    # A direct HTTP run, with a cache of its own.
    pytester.makeini("[pytest]\ncompetence_cache_path = direct.sqlite\n")
    direct = pytester.runpytest("-p", "no:cacheprovider", spec, "--competence-json=direct.json")
    direct.assert_outcomes(passed=2)
    server.reset()

    pytester.makeini("[pytest]\ncompetence_cache_path = batch.sqlite\n")
    exported = pytester.runpytest(
        "-p", "no:cacheprovider", spec, "--competence-batch-export=requests.jsonl", "-rs"
    )
    exported.assert_outcomes(skipped=2)
    exported.stdout.fnmatch_lines(
        [
            "competence: 2 competence test(s) awaiting batch results: run requests.jsonl*",
            "*awaiting batch results: 32 new requests written to requests.jsonl*",
            "*awaiting batch results: 16 new requests written to requests.jsonl*",
        ]
    )
    assert server.log() == []  # nothing sent
    requests = pytester.path / "requests.jsonl"
    assert len(requests.read_text("utf-8").splitlines()) == 48

    run_batch(requests, pytester.path / "results.jsonl", stray=1)
    imported = competence(
        "batch", "import", "results.jsonl", "--cache", "batch.sqlite", cwd=pytester.path
    )
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.splitlines()[:3] == [
        "stored 48 answers in the response cache",
        "failed 0 lines (not stored; asked again next run)",
        "matched no exported request: 1 lines",
    ]

    final = pytester.runpytest(
        "-p", "no:cacheprovider", spec, "--competence-cache=read", "--competence-json=batch.json"
    )
    final.assert_outcomes(passed=2)
    assert server.log() == []  # every answer came from the imported results
    assert _figures(pytester.path / "batch.json") == _figures(pytester.path / "direct.json")


@pytest.mark.slow
def test_failed_batch_lines_are_not_answers(pytester: pytest.Pytester, server):
    pytester.makepyfile(test_suite=SUITE)
    spec = f"--competence-model=openai:ideal@{server.url}"
    pytester.runpytest("-p", "no:cacheprovider", spec, "--competence-batch-export=requests.jsonl")
    run_batch(pytester.path / "requests.jsonl", pytester.path / "results.jsonl", fail=3)
    imported = competence(
        "batch", "import", "results.jsonl", "--cache", ".competence/cache.sqlite", cwd=pytester.path
    )
    assert imported.stdout.splitlines()[:2] == [
        "stored 45 answers in the response cache",
        "failed 3 lines (not stored; asked again next run)",
    ]
    assert "  3 × status 500" in imported.stdout
    # Exporting again writes only the three requests still unanswered.
    again = pytester.runpytest(
        "-p", "no:cacheprovider", spec, "--competence-batch-export=requests.jsonl", "-rs"
    )
    again.assert_outcomes(skipped=2)
    assert len((pytester.path / "requests.jsonl").read_text("utf-8").splitlines()) == 3
    # Without the flag, the run asks the server for exactly those three.
    server.reset()
    pytester.runpytest("-p", "no:cacheprovider", spec).assert_outcomes(passed=2)
    assert len(server.log()) == 3


def test_the_batch_path_refuses_what_it_cannot_carry(pytester: pytest.Pytester):
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
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
        "-p",
        "no:cacheprovider",
        "--competence-model=ref:ideal",
        "--competence-batch-export=no/such/dir/requests.jsonl",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --competence-batch-export: cannot write "
            "'no/such/dir/requests.jsonl' (No such file or directory)*"
        ]
    )


def test_batch_import_errors_are_one_line(tmp_path: Path):
    missing = competence("batch", "import", "results.jsonl", cwd=tmp_path)
    assert missing.returncode == 2
    assert "no response cache at '.competence/cache.sqlite'" in missing.stderr
    from pytest_competence._cache import ResponseCache

    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.mark_exported(["k"], "m")
    cache.close()
    (tmp_path / "results.jsonl").write_text('{"not": "batch"}\n', encoding="utf-8")
    bad = competence("batch", "import", "results.jsonl", "--cache", "c.sqlite", cwd=tmp_path)
    assert bad.returncode == 2
    assert "results.jsonl:1: not an OpenAI Batch output line" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_an_export_writes_each_prompt_once_per_file_without_rereading_it(tmp_path: Path):
    """Exports remember, in the cache, which file holds which key: a second export of the same
    prompts appends nothing; another file, a recreated file, or a file the cache never saw (read
    once) get exactly what they lack."""
    from pytest_competence._cache import CachedModel, ResponseCache
    from pytest_competence.batch import export_requests
    from pytest_competence.models.http import OpenAIModel
    from pytest_competence.strategies import Ordering

    items = Ordering().design(levels=[4], pairs=4, seed=1)
    prompts = [p for item in items for p in item.prompts]
    backend = OpenAIModel("m", "m", ["http://127.0.0.1:9/v1"], key_env="NO_KEY")

    def export(subset: list, path: Path, cache_file: str = "cache.sqlite") -> int:
        model = CachedModel(backend, ResponseCache(tmp_path / cache_file))
        return export_requests(model, subset, path)

    def ids(path: Path) -> list[str]:
        return [json.loads(line)["custom_id"] for line in path.read_text("utf-8").splitlines()]

    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert export(prompts[:5], first) == 5
    assert export(prompts, first) == len(prompts) - 5
    assert export(prompts, first) == 0
    with first.open("a", encoding="utf-8") as out:  # a line no reader could parse:
        out.write("not json\n")
    assert export(prompts, first) == 0  # the export never reads the file it appends to
    first.write_text(
        "".join(line + "\n" for line in first.read_text("utf-8").splitlines()[:-1]),
        encoding="utf-8",
    )
    assert len(ids(first)) == len(set(ids(first))) == len(prompts)
    assert export(prompts, second) == len(prompts)  # another file lacks them all
    first.unlink()
    assert export(prompts[:4], first) == 4  # a new file at the old name starts afresh
    # A file the cache never saw (an older export, a fresh cache): read once, nothing repeated.
    assert export(prompts, first, "other.sqlite") == len(prompts) - 4
    assert export(prompts, first, "other.sqlite") == 0
    assert sorted(ids(first)) == sorted(set(ids(first)))
