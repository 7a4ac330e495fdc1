"""The batch file formats of ``vllm run-batch`` and the OpenAI Batch API, mirrored for the tests.

Written from the field sets and rules of vllm-project/vllm, ``vllm/entrypoints/openai/run_batch.py``
(``BatchRequestInput``: ``custom_id``, ``method``, ``url``, ``body``, the body validated by
``url``, only ``/v1/chat/completions`` served for generation; ``BatchResponseData``:
``status_code`` default 200, ``request_id``, ``body`` default null; ``BatchRequestOutput``: ``id``,
``custom_id``, ``response``, ``error``, the last two required and possibly null; one output line per
input line, in input order, ``model_dump_json()`` + newline; the error lines of an engine
``ErrorResponse`` and of ``make_error_request_output``), from the ``ChatCompletionRequest`` field
set of ``vllm/entrypoints/openai/chat_completion/protocol.py``, and from the OpenAI Batch API's
documented input line (``custom_id`` unique within a file, ``method`` POST, one ``url`` and one
``model`` per file, at most 50,000 lines and 200 MB) and its ``/v1/completions`` request (the
``completions.create`` parameters of the openai Python SDK). No vLLM code is copied: vLLM needs
CUDA, so the tests check our files against these rules instead.

The response *bodies* are the OpenAI shape the importer reads (``id``, ``object``, ``created``,
``model``, ``choices``, ``usage``); vLLM's own ``ChatCompletionResponse`` may carry more fields,
which the importer ignores.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "CHAT_FIELDS",
    "COMPLETION_FIELDS",
    "OPENAI_URLS",
    "VLLM_URLS",
    "check_input_file",
    "output_line",
    "run_batch",
]

#: The fields of vLLM's ChatCompletionRequest (OpenAI's, then vLLM's sampling extras and others).
CHAT_FIELDS = frozenset(
    """messages model frequency_penalty logit_bias logprobs top_logprobs max_tokens
    max_completion_tokens n presence_penalty response_format seed stop stream stream_options
    temperature top_p tools tool_choice reasoning_effort include_reasoning parallel_tool_calls
    user use_beam_search top_k min_p repetition_penalty length_penalty stop_token_ids
    include_stop_str_in_output ignore_eos min_tokens skip_special_tokens
    spaces_between_special_tokens truncate_prompt_tokens prompt_logprobs allowed_token_ids
    bad_words echo add_generation_prompt continue_final_message add_special_tokens documents
    chat_template chat_template_kwargs mm_processor_kwargs structured_outputs priority
    request_id logits_processors return_tokens_as_token_ids return_token_ids cache_salt
    kv_transfer_params vllm_xargs""".split()
)
#: The fields of an OpenAI ``/v1/completions`` request.
COMPLETION_FIELDS = frozenset(
    """model prompt best_of echo frequency_penalty logit_bias logprobs max_tokens n
    presence_penalty seed stop stream stream_options suffix temperature top_p user""".split()
)
#: What an OpenAI Batch input line may name as its ``url``.
OPENAI_URLS = frozenset(
    {
        "/v1/chat/completions",
        "/v1/completions",
        "/v1/embeddings",
        "/v1/responses",
        "/v1/moderations",
    }
)
#: The generation endpoint ``vllm run-batch`` serves (besides embeddings, score and rerank).
VLLM_URLS = frozenset({"/v1/chat/completions"})
_INT64 = 2**63


def _check_line(raw: str, where: str) -> dict[str, Any]:
    """One input line as both formats take it; ``AssertionError`` naming what breaks them."""
    line = json.loads(raw)
    assert list(line) == ["custom_id", "method", "url", "body"], f"{where}: fields {list(line)}"
    assert isinstance(line["custom_id"], str) and line["custom_id"], where
    assert line["method"] == "POST", f"{where}: method {line['method']!r}"
    assert line["url"] in OPENAI_URLS, f"{where}: url {line['url']!r}"
    body = line["body"]
    assert isinstance(body, dict) and isinstance(body.get("model"), str), f"{where}: body.model"
    if line["url"] == "/v1/chat/completions":
        fields, needed = CHAT_FIELDS, "messages"
        for m in body["messages"]:
            assert set(m) == {"role", "content"} and m["role"] in ("system", "user"), where
    else:
        fields, needed = COMPLETION_FIELDS, "prompt"
        assert isinstance(body["prompt"], str), where
    assert needed in body, f"{where}: no {needed}"
    unknown = set(body) - fields
    assert not unknown, f"{where}: fields the endpoint does not know: {sorted(unknown)}"
    if "seed" in body:
        assert isinstance(body["seed"], int) and -_INT64 <= body["seed"] < _INT64, where
    if body.get("logprobs") is True:
        assert 0 <= body.get("top_logprobs", 0) <= 20, where
    return line


def check_input_file(
    path: Path,
    *,
    runner: str = "openai",
    max_lines: int = 50_000,
    max_bytes: int = 200 * 10**6,
) -> list[dict[str, Any]]:
    """Every line of a Batch input file, checked as ``runner`` (``openai`` or ``vllm``) takes
    it: fields, URL, body fields, unique ``custom_id``s, one endpoint and one model per file,
    the size limits. Returns the parsed lines."""
    data = path.read_bytes()
    assert len(data) <= max_bytes, f"{path}: {len(data)} bytes"
    lines = [
        _check_line(raw, f"{path}:{k}")
        for k, raw in enumerate(data.decode("utf-8").splitlines(), 1)
        if raw.strip()
    ]
    assert len(lines) <= max_lines, f"{path}: {len(lines)} lines"
    ids = [line["custom_id"] for line in lines]
    assert len(ids) == len(set(ids)), f"{path}: a custom_id repeats"
    assert len({line["url"] for line in lines}) <= 1, f"{path}: several endpoints"
    assert len({line["body"]["model"] for line in lines}) <= 1, f"{path}: several models"
    if runner == "vllm":
        assert all(line["url"] in VLLM_URLS for line in lines), f"{path}: vLLM rejects the URL"
    return lines


def _dump(value: Any) -> str:
    """JSON as pydantic's ``model_dump_json`` writes it: compact, keys in order, UTF-8."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def output_line(
    custom_id: str,
    *,
    status: int = 200,
    body: Any = None,
    error: Any = None,
) -> str:
    """One ``BatchRequestOutput`` line as vLLM writes it (with its newline): a 200 with a body,
    an engine error (``status``, ``body`` null, ``error`` an ``ErrorResponse`` object), or a
    request vLLM could not run (``status`` 400, ``error`` a message string)."""
    request = uuid.uuid4().hex
    value = {
        "id": f"vllm-{uuid.uuid4().hex}",
        "custom_id": custom_id,
        "response": {"status_code": status, "request_id": f"vllm-batch-{request}", "body": body},
        "error": error,
    }
    return _dump(value) + "\n"


def _completion(url: str, body: dict[str, Any], content: dict[str, Any]) -> dict[str, Any]:
    """A response body around ``content`` (``choices`` and what the server read)."""
    return {
        "id": f"{'chatcmpl' if url.endswith('chat/completions') else 'cmpl'}-{uuid.uuid4().hex}",
        "object": content["object"],
        "created": 1_700_000_000,
        "model": body["model"],
        "choices": content["choices"],
        "usage": {"prompt_tokens": 1, "total_tokens": 2, "completion_tokens": 1},
    }


def run_batch(
    requests: Iterable[Path],
    results: Path,
    answer: Callable[[str, dict[str, Any]], dict[str, Any]],
    *,
    served: Iterable[str] | None = None,
    runner: str = "vllm",
    fail: Callable[[str], bool] = lambda custom_id: False,
) -> None:
    """Answer Batch input files the way ``vllm run-batch`` does: one output line per input line,
    in order. ``answer(url, body)`` gives the response's ``object`` and ``choices`` (the fake
    server's); a body whose ``model`` is not ``served`` gets vLLM's 404 ``ErrorResponse``, a URL
    vLLM does not serve (``runner="vllm"``) its 400 line, and ``fail(custom_id)`` an engine
    error (500)."""
    names = None if served is None else set(served)
    out = []
    for path in requests:
        for raw in path.read_text("utf-8").splitlines():
            if not raw.strip():
                continue
            line = json.loads(raw)
            url, body, custom_id = line["url"], line["body"], line["custom_id"]
            if runner == "vllm" and url not in VLLM_URLS:
                message = (
                    f"URL {url} was used. Supported endpoints: /v1/chat/completions, "
                    f"/v1/embeddings, /score, /rerank."
                )
                out.append(output_line(custom_id, status=400, error=message))
            elif names is not None and body["model"] not in names:
                error = {
                    "error": {
                        "message": f"The model `{body['model']}` does not exist.",
                        "type": "NotFoundError",
                        "param": "model",
                        "code": 404,
                    }
                }
                out.append(output_line(custom_id, status=404, error=error))
            elif fail(custom_id):
                error = {
                    "error": {
                        "message": "CUDA out of memory",
                        "type": "InternalServerError",
                        "param": None,
                        "code": 500,
                    }
                }
                out.append(output_line(custom_id, status=500, error=error))
            else:
                body_out = _completion(url, body, answer(url, body))
                out.append(output_line(custom_id, body=body_out))
    results.write_text("".join(out), encoding="utf-8")


def pydantic_models() -> tuple[Any, Any]:
    """``(BatchRequestInput, BatchRequestOutput)`` as pydantic models with vLLM's field sets:
    the input's body validated by its URL (a chat body as ``ChatCompletionRequest``, here
    forbidding fields vLLM does not know, which vLLM itself accepts with a warning; any other URL
    refused, as ``run-batch`` refuses it), the output with vLLM's defaults and required nulls.
    Needs pydantic (``transformers[serving]`` brings it)."""
    from pydantic import BaseModel, ConfigDict, ValidationInfo, create_model, field_validator

    typed: dict[str, Any] = {
        "messages": (list[dict[str, str]], ...),
        "model": (str | None, None),
        "logprobs": (bool, False),
        "top_logprobs": (int, 0),
        "max_tokens": (int | None, None),
        "max_completion_tokens": (int | None, None),
        "temperature": (float | None, None),
        "top_p": (float | None, None),
        "seed": (int | None, None),
        "stop": (str | list[str] | None, None),
        "n": (int, 1),
    }
    fields = {name: typed.get(name, (Any, None)) for name in CHAT_FIELDS}
    chat = create_model(  # type: ignore[call-overload]
        "ChatCompletionRequest", __config__=ConfigDict(extra="forbid"), **fields
    )

    class BatchRequestInput(BaseModel):
        custom_id: str
        method: str
        url: str
        body: Any

        @field_validator("body", mode="plain")
        @classmethod
        def by_url(cls, value: Any, info: ValidationInfo) -> Any:
            url = info.data.get("url")
            if url == "/v1/chat/completions":
                return chat.model_validate(value)
            raise ValueError(
                f"URL {url} was used. Supported endpoints: /v1/chat/completions, "
                f"/v1/embeddings, /score, /rerank."
            )

    class BatchResponseData(BaseModel):
        status_code: int = 200
        request_id: str
        body: Any | None = None

    class BatchRequestOutput(BaseModel):
        id: str
        custom_id: str
        response: BatchResponseData | None
        error: Any | None

    return BatchRequestInput, BatchRequestOutput
