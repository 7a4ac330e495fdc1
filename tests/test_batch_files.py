"""The files an export writes, as the engines that run them read them — no pytest run, no server.

Export lines are checked against the field sets and URL rules of vLLM's ``BatchRequestInput`` and
of OpenAI's documented input line (:mod:`vllm_batch`, which mirrors vLLM's pydantic models), the
runner's output lines against ``BatchRequestOutput.model_dump_json()``; a file holds each prompt
once and no line past its byte cap. The round trips through pytest are in ``tests/test_batch.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vllm_batch import check_input_file, output_line, pydantic_models


def test_a_line_over_the_byte_cap_is_refused_before_anything_is_written(tmp_path: Path):
    from pytest_competence.engine.batch import BatchError, export_requests
    from pytest_competence.engine.cache import CachedModel, ResponseCache
    from pytest_competence.engine.export_files import Target
    from pytest_competence.models.http import OpenAIModel
    from pytest_competence.strategies import Ordering

    prompts = [p for item in Ordering().design(levels=[4], pairs=4, seed=1) for p in item.prompts]
    model = CachedModel(
        OpenAIModel("m", "m", ["http://127.0.0.1:9/v1"], key_env="NO_KEY"),
        ResponseCache(tmp_path / "c.sqlite"),
    )
    target = Target(tmp_path / "r.jsonl", max_bytes=100)
    with pytest.raises(
        BatchError, match="a request line of .* bytes does not fit in a file of 100"
    ):
        export_requests(model, prompts, target)
    assert (tmp_path / "r.jsonl").read_text() == ""


def test_output_lines_are_byte_for_byte_what_pydantic_writes():
    """The runner's lines — a success, an engine ErrorResponse, a request vLLM refused — are
    exactly ``BatchRequestOutput.model_dump_json()`` of the mirrored models; chat input lines
    validate as vLLM's ``BatchRequestInput``, completions lines do not."""
    pytest.importorskip("pydantic")
    BatchRequestInput, BatchRequestOutput = pydantic_models()
    error = {
        "error": {
            "message": "The model `x` does not exist.",
            "type": "NotFoundError",
            "param": "model",
            "code": 404,
        }
    }
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "ja ö"},
                "logprobs": {"content": [{"token": "ja", "logprob": -0.25, "top_logprobs": []}]},
                "finish_reason": "stop",
            }
        ],
    }
    for line in (
        output_line("k1", body=body),
        output_line("k2", status=404, error=error),
        output_line("k3", status=400, error="URL /v1/completions was used."),
    ):
        assert BatchRequestOutput.model_validate_json(line).model_dump_json() + "\n" == line
        assert '"error":null' in line or '"body":null' in line
    chat = {
        "custom_id": "a",
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {
            "model": "m",
            "messages": [{"role": "user", "content": "hi"}],
            "max_completion_tokens": 4,
            "seed": 3,
        },
    }
    BatchRequestInput.model_validate_json(json.dumps(chat))
    for wrong in (
        {**chat, "url": "/v1/completions"},
        {**chat, "body": {**chat["body"], "max_new_tokens": 4}},
    ):
        with pytest.raises(ValueError):
            BatchRequestInput.model_validate_json(json.dumps(wrong))


def test_exported_lines_validate_as_vllm_batch_inputs(tmp_path: Path):
    """Every line an export writes for a chat model — generated, scored, with
    max_completion_tokens — is a valid vLLM BatchRequestInput."""
    pytest.importorskip("pydantic")
    from pytest_competence.engine.batch import export_requests
    from pytest_competence.engine.cache import CachedModel, ResponseCache
    from pytest_competence.models import resolve_model
    from pytest_competence.strategies import Ordering

    BatchRequestInput, _ = pydantic_models()
    prompts = [p for item in Ordering().design(levels=[4], pairs=4, seed=1) for p in item.prompts]
    for k, query in enumerate(
        ["max_tokens=8&seed=3&stop=x", "max_completion_tokens=8&temperature=1", "readout=score"]
    ):
        backend = resolve_model(f"openai:m@http://127.0.0.1:9/v1?{query}")
        path = tmp_path / f"r{k}.jsonl"
        export_requests(CachedModel(backend, ResponseCache(tmp_path / "c.sqlite")), prompts, path)
        lines = check_input_file(path, runner="vllm")
        for line in path.read_text().splitlines():
            BatchRequestInput.model_validate_json(line)
        if "max_completion_tokens" in query:
            assert {b["body"]["max_completion_tokens"] for b in lines} == {8}
            assert not any("max_tokens" in b["body"] for b in lines)


def test_prompts_scored_by_their_own_readout_export_scoring_requests(tmp_path: Path):
    """The model's readout is generate, but a prompt's own readout is score (as the intervention
    family's score cells are): that prompt exports a scoring request; the cap goes under
    max_completion_tokens when the spec sends that field."""
    from dataclasses import replace

    from pytest_competence.engine.batch import export_requests
    from pytest_competence.engine.cache import CachedModel, ResponseCache
    from pytest_competence.models import resolve_model
    from pytest_competence.strategies import Ordering

    prompts = [p for item in Ordering().design(levels=[4], pairs=4, seed=1) for p in item.prompts]
    mixed = [replace(p, readout="score") if k % 2 else p for k, p in enumerate(prompts)]
    backend = resolve_model("openai:m@http://127.0.0.1:9/v1?max_completion_tokens=8")
    path = tmp_path / "r.jsonl"
    export_requests(CachedModel(backend, ResponseCache(tmp_path / "c.sqlite")), mixed, path)
    bodies = [b["body"] for b in check_input_file(path, runner="vllm")]
    assert [b.get("logprobs", False) for b in bodies] == [bool(k % 2) for k in range(len(mixed))]
    assert [b["max_completion_tokens"] for b in bodies] == [
        1 if k % 2 else 8 for k in range(len(mixed))
    ]


def test_an_export_writes_each_prompt_once_per_file_without_rereading_it(tmp_path: Path):
    """Exports remember, in the cache, which file holds which key: a second export of the same
    prompts appends nothing; another file, a recreated file, or a file the cache never saw (read
    once) get exactly what they lack."""
    from pytest_competence.engine.batch import export_requests
    from pytest_competence.engine.cache import CachedModel, ResponseCache
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
