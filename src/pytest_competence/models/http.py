"""``openai:MODEL@BASE_URL[,URL…][?key=value&…]``: an OpenAI-compatible server as a model.

Works with vLLM, SGLang, TGI, llama.cpp, Ollama, ``transformers serve`` and hosted APIs. The base
URL is required: prompts and the API key go where it says and nowhere else, so a hosted API is
named in full (``openai:gpt-4o-mini@https://api.openai.com/v1``). With several URLs (replicas of
one model) each request goes to the replica with the fewest requests in flight. The API key is
read at request time from the environment variable ``key_env`` (default: the
``competence_api_key_env`` ini option, else ``OPENAI_API_KEY``) and sent only in the
``Authorization`` header: never in the model's name, repr, cache key or any error message.

The parameters are :data:`PARAMS`. With ``readout=score`` the answer is the most likely of the
prompt's answer space, from logprobs; a server that returns none cannot score, so its answer is
final at once, not retried.
"""

from __future__ import annotations

import json
import os
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from pytest_competence.policy import ModelSpecError
from pytest_competence.protocol import Prompt

from ._base import NoAnswer
from ._bodies import Bodies
from ._limits import DEFAULT_MAX_RESPONSE_MIB, MIB
from ._logprobs import echoed_tokens, first_token_logprobs, read_scores, span_logprob, top_scores
from ._params import Param, choice, number, parse_params, text, whole
from .readout import Answer, Scores, best_candidate, group_by_space, in_order

if TYPE_CHECKING:
    from ._pipe import Pipe
    from ._transport import Call, ModelCallError

T = TypeVar("T")

__all__ = ["PARAMS", "OpenAIModel", "openai_model", "read_scores"]

#: What a spec may set; decoding parameters go into the cache key, the rest do not.
PARAMS = (
    Param("mode", choice("chat", "completions"), "endpoint", "chat"),
    Param("temperature", number(0, 2), "sampling temperature", 0.0),
    Param("top_p", number(0, 1, above=True), "nucleus sampling mass"),
    Param("max_tokens", whole(1), "longest answer in tokens"),
    Param(
        "max_completion_tokens",
        whole(1),
        "longest answer in tokens, sent as max_completion_tokens (chat mode), not max_tokens",
    ),
    Param("seed", whole(0), "sampling seed; attempt k sends seed + k"),
    Param("stop", text, "stop sequence (repeatable)", many=True),
    Param("reasoning_effort", text, "passed through to reasoning models"),
    Param("readout", choice("generate", "score"), "answer by generating or by scoring", "generate"),
    Param("top_logprobs", whole(1, 20), "alternatives read in chat-mode scoring", 20),
    Param("concurrency", whole(1, 4096), "requests in flight", 32),
    Param("timeout", number(0, above=True), "seconds per try", 60.0),
    Param("attempts", whole(1, 100), "tries per prompt", 6),
    Param("budget", number(0, above=True), "seconds per prompt, all tries", 600.0),
    Param("backoff", number(0), "first wait between tries, seconds", 0.5),
    Param(
        "max_response_mib",
        whole(1),
        "largest response body in MiB, on the wire and decoded "
        "(default: the competence_max_response_mib ini option, else 16)",
    ),
    Param("key_env", text, "environment variable holding the API key"),
)


def _url_like(text: str) -> str | None:
    """``text`` as the base URL it looks like (``http://`` added where it was left out:
    ``127.0.0.1:8000/v1``, ``localhost:8000``), or ``None`` when it reads as no URL."""
    text = text.strip()
    if text.startswith(("http://", "https://")):
        return text
    if "://" in text:
        return None
    parts = urlsplit("http://" + text)
    try:
        port = parts.port
    except ValueError:
        return None
    served = port is not None or parts.path.rstrip("/").endswith("/v1")
    return "http://" + text if parts.hostname and served else None


def _base_urls(urls: str, spec: str) -> list[str]:
    found = []
    for url in urls.split(","):
        url = url.strip().rstrip("/")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            from ._suggest import did_you_mean

            raise ModelSpecError(
                f"{spec!r}: expected base URLs such as http://127.0.0.1:8000/v1, but got {url!r}"
                + did_you_mean(_url_like(url))
            )
        if parts.username or parts.password or parts.query or parts.fragment:
            raise ModelSpecError(
                f"{spec!r}: a base URL may not carry credentials, a query or a fragment; put the "
                f"API key in an environment variable and name it with key_env=NAME"
            )
        found.append(url)
    return found


def openai_model(rest: str, spec: str, settings: Mapping[str, str] | None = None) -> OpenAIModel:
    """Build the model of ``openai:MODEL@URL[,URL…][?key=value&…]``."""
    head, _, query = rest.partition("?")
    model, at, urls = head.partition("@")
    if not model.strip():
        raise ModelSpecError(
            f"Malformed model spec {spec!r}; expected 'openai:MODEL@BASE_URL', e.g. "
            f"'openai:qwen@http://127.0.0.1:8000/v1'"
        )
    from ._suggest import served_model

    url, query_part = _url_like(model), f"?{query}" if query else ""
    if url is not None and not at:
        raise ModelSpecError(
            f"{spec!r} names a server but no model; write the model's name before the URL: "
            f"'openai:MODEL@{url}{query_part}', where {served_model(url)}"
        )
    if url is not None and _url_like(urls.split(",")[0]) is None and urls.strip():
        raise ModelSpecError(
            f"{spec!r}: the model's name comes first, then its server's URL: "
            f"'openai:{urls.strip()}@{url}{query_part}'"
        )
    if not at:
        # No hosted default: a spec that forgot its URL must not send prompts and the key away.
        raise ModelSpecError(
            f"{spec!r} names no server; write its base URL out in full: "
            f"'openai:{model.strip()}@http://127.0.0.1:8000/v1' for a local server, "
            f"'openai:{model.strip()}@https://api.openai.com/v1' for OpenAI's API"
        )
    params = parse_params(query, PARAMS, spec)
    if "max_completion_tokens" in params:
        if "max_tokens" in params:
            raise ModelSpecError(
                f"{spec!r}: max_tokens and max_completion_tokens name the same limit; keep one "
                f"(max_completion_tokens, which vLLM and OpenAI prefer, in chat mode)"
            )
        if params["mode"] == "completions":
            raise ModelSpecError(
                f"{spec!r}: max_completion_tokens is a chat-mode field; /completions takes "
                f"max_tokens"
            )
    key_env = params.pop("key_env", None) or (settings or {}).get("api_key_env") or "OPENAI_API_KEY"
    ini = (settings or {}).get("max_response_mib", "").strip()
    if "max_response_mib" not in params and ini:
        try:
            params["max_response_mib"] = whole(1)(ini)
        except ValueError as exc:
            raise ModelSpecError(
                f"{spec!r}: the ini option competence_max_response_mib = {ini}: "
                f"expected {exc} (MiB)"
            ) from None
    return OpenAIModel(spec, model.strip(), _base_urls(urls, spec), key_env=key_env, **params)


class OpenAIModel:
    """A model served over the OpenAI API; see the module docstring for the parameters."""

    def __init__(
        self,
        name: str,
        model: str,
        base_urls: Sequence[str],
        *,
        key_env: str,
        mode: str = "chat",
        readout: str = "generate",
        top_logprobs: int = 20,
        seed: int | None = None,
        concurrency: int = 32,
        timeout: float = 60.0,
        attempts: int = 6,
        budget: float = 600.0,
        backoff: float = 0.5,
        max_response_mib: int = DEFAULT_MAX_RESPONSE_MIB,
        **decoding: Any,
    ) -> None:
        from ._transport import Breaker, RetryPolicy

        self.name = name
        self.model = model
        self.base_urls = list(base_urls)
        self.mode, self.readout, self.top_logprobs, self.seed = mode, readout, top_logprobs, seed
        self.decoding = {k: list(v) if k == "stop" else v for k, v in decoding.items()}
        self.bodies = Bodies(model, mode, self.decoding, seed, top_logprobs)
        self.concurrency, self.timeout, self.key_env = concurrency, timeout, key_env
        self.policy = RetryPolicy(attempts=attempts, budget=budget, backoff=backoff)
        self.breaker = Breaker(len(self.base_urls))  # across batches: a dead server stays dead
        self.max_body = max_response_mib * MIB
        #: Answers come from a server: batches may be asked from several threads at once, and
        #: share the model's connections and its ``concurrency`` (see :mod:`._pipe`).
        self.concurrent_calls = True
        # Batches asked from several threads at once (the lookahead's) open the stream once.
        self._opening = threading.Lock()
        self.releases_gil = True  # it waits on sockets: the next chunk is generated meanwhile
        #: Everything that decides the answers, and nothing else (no key, no tuning knobs).
        self.cache_identity = json.dumps(
            {
                "backend": "openai",
                "model": model,
                "base_urls": sorted(self.base_urls),
                "mode": mode,
                "decoding": self.decoding,
                "seed": seed,
                "readout": readout,
                "top_logprobs": top_logprobs if readout == "score" else None,
            },
            sort_keys=True,
        )

    def __repr__(self) -> str:
        return f"OpenAIModel({self.name!r})"

    # -- requests --------------------------------------------------------------------------------

    @property
    def path(self) -> str:
        """The endpoint under the base URL: ``/chat/completions`` or ``/completions``."""
        return self.bodies.path

    def scores(self, p: Prompt) -> bool:
        """Whether ``p`` is answered by candidate scoring: the spec's ``readout=score``, or a
        prompt whose own readout is ``score``."""
        return self.readout == "score" or p.readout == "score"

    def batch_lines(self, p: Prompt) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """The OpenAI Batch input lines of ``p`` (without their ``custom_id``), each with how
        its response becomes the answer (``None``: the answer text; else what
        :func:`read_scores` needs). The exact bodies :meth:`generate` would send (see
        :mod:`pytest_competence.engine.batch`): one line for a generated answer or a chat-mode score,
        one per candidate for a completions-mode score."""
        url = f"/v1{self.path}"
        if not self.scores(p):
            return [({"method": "POST", "url": url, "body": self.bodies.body(p)}, None)]
        candidates = list(p.answer_space)
        return [
            (
                {"method": "POST", "url": url, "body": body},
                {"candidates": candidates}
                if span is None
                else {"candidates": candidates, "candidate": j, "span": list(span)},
            )
            for j, (body, span) in enumerate(self.bodies.scoring(p, candidates))
        ]

    def _send(
        self, calls: Sequence[Call], parse: Callable[[Any], T]
    ) -> Iterator[tuple[int, T | ModelCallError]]:
        pipe, secrets = self._keyed_pipe()
        return pipe.stream(calls, parse, secrets=secrets)

    def _keyed_pipe(self) -> tuple[Pipe, list[str]]:
        """The request stream for the API key in the environment now, and the key (if any)."""
        key = os.environ.get(self.key_env, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return self._pipe(headers), [key] if key else []

    def _pipe(self, headers: dict[str, str]) -> Pipe:
        """The model's request stream (:mod:`._pipe`), kept across batches: one per API key
        (read at request time, so a key changed between batches is the one sent).

        Under a lock: two threads that each found no stream and opened one would each run
        ``concurrency`` requests at a time, twice the model's limit."""
        with self._opening:
            pipe = self.__dict__.get("_requests")
            if pipe is not None and pipe.headers == headers:
                return pipe
            from ._pipe import Pipe

            if pipe is not None:
                pipe.close()
            pipe = self._requests = Pipe(
                self.base_urls,
                headers,
                concurrency=self.concurrency,
                timeout=self.timeout,
                policy=self.policy,
                breaker=self.breaker,
                max_body=self.max_body,
            )
            weakref.finalize(self, pipe.close)  # a model dropped without close() stops its thread
            return pipe

    def close(self) -> None:
        """Stop the model's request stream and close its connections (a later call opens
        them again)."""
        with self._opening:
            pipe = self.__dict__.pop("_requests", None)
        if pipe is not None:
            pipe.close()

    def _answer_text(self, data: Any) -> str | BaseException:
        first = data["choices"][0]
        content = first["message"].get("content") if self.mode == "chat" else first["text"]
        if content is None:  # e.g. a reasoning model that spent every token before answering
            return NoAnswer(
                f"the response has no answer text (finish_reason={first.get('finish_reason')!r})"
            )
        if not isinstance(content, str):
            raise TypeError(f"answer text is a {type(content).__name__}")
        return content

    # -- the Model protocol ----------------------------------------------------------------------

    def stream(self, prompts: Sequence[Prompt]) -> Iterator[tuple[int, Answer]]:
        """``(index, answer or exception)`` for every prompt, as each response arrives."""
        if self.readout == "score":
            for group_space, indices in group_by_space(prompts).items():
                got = self._score_stream([prompts[i] for i in indices], group_space)
                for j, scores in got:
                    answer = scores if isinstance(scores, BaseException) else best_candidate(scores)
                    yield indices[j], answer
            return
        for group in self.stream_groups(prompts):
            yield from group

    def stream_groups(self, prompts: Sequence[Prompt]) -> Iterator[list[tuple[int, Answer]]]:
        """:meth:`stream`'s pairs in the lists the request stream hands them over in (answers
        that arrived together; see :func:`~._base.groups_as_they_come`); scored, one a list."""
        if self.readout == "score":
            yield from ([pair] for pair in self.stream(prompts))
            return
        from ._transport import Call

        pipe, secrets = self._keyed_pipe()
        calls = [Call(self.path, self.bodies.body(p)) for p in prompts]
        yield from pipe.groups(calls, self._answer_text, secrets=secrets)

    def generate(self, prompts: Sequence[Prompt]) -> list[Answer]:
        return in_order(self.stream(prompts), len(prompts), self.name)

    # -- candidate scoring -------------------------------------------------------------------------

    def score(
        self, prompts: Sequence[Prompt], candidates: Sequence[str]
    ) -> list[Scores | BaseException]:
        """Per prompt, each candidate's log-probability as the answer (see the module docstring)."""
        return in_order(self._score_stream(prompts, candidates), len(prompts), self.name)

    def _score_stream(
        self, prompts: Sequence[Prompt], candidates: Sequence[str]
    ) -> Iterator[tuple[int, Scores | BaseException]]:
        from ._transport import Call

        if self.mode == "chat":
            calls = [Call(self.path, self.bodies.scoring(p, candidates)[0][0]) for p in prompts]
            for i, got in self._send(calls, first_token_logprobs):
                yield i, got if isinstance(got, BaseException) else top_scores(got, candidates)
            return
        # Completions: the server echoes prompt + candidate with the logprob of every token.
        calls, spans = [], []
        for p in prompts:
            for body, span in self.bodies.scoring(p, candidates):
                assert span is not None  # completions mode: every body has its candidate's span
                calls.append(Call(self.path, body))
                spans.append(span)
        pending: dict[int, dict[str, float]] = {}
        failed: dict[int, BaseException] = {}
        left = dict.fromkeys(range(len(prompts)), len(candidates))
        for k, echoed in self._send(calls, echoed_tokens):
            i, which = divmod(k, len(candidates))
            value = echoed if isinstance(echoed, BaseException) else span_logprob(echoed, spans[k])
            if isinstance(value, BaseException):
                failed.setdefault(i, value)
            else:
                pending.setdefault(i, {})[candidates[which]] = value
            left[i] -= 1
            if not left[i]:
                yield i, failed.get(i) or {c: pending[i][c] for c in candidates}
