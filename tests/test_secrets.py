"""With an API key set, no artifact of a run contains it.

A real pytest run against the fake server, with the key in the environment, a server that echoes
request headers (Authorization included) in its 400 errors, debug logging, every report and the
cache: the key is sent (the server saw it) and then appears in no file and no output. Error
texts are cut to a few hundred characters: the key is planted at every offset around that cut,
in echoed bodies and in exception messages, and no piece of it survives.
"""

from __future__ import annotations

import contextlib
import hashlib
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from pipe_helpers import ask
from plugin_helpers import read_archive
from pytest_competence.models import resolve_model
from pytest_competence.models._transport import Call, ModelCallError
from server_fixtures import fake_server_process, server  # noqa: F401

KEY = "sk-test-NEVER-SHOWN-9f8e7d6c5b4a39281706"
CUT = 300  # characters of an error body kept in the message (models/_transport.py)
#: Every piece of the key long enough to identify it: what a cut could leave behind.
PIECES = [KEY[:k] for k in range(12, len(KEY) + 1)] + [KEY[-k:] for k in range(12, len(KEY))]


def leaked(text: str) -> list[str]:
    return [piece for piece in PIECES if piece in text]


def ask_once(url: str, **kw):
    """One request through the request stream, the key in its Authorization header."""
    calls = [Call("/chat/completions", {"model": "m", "messages": []})]
    [(_, result)] = ask(calls, [url], headers={"Authorization": f"Bearer {KEY}"}, **kw)
    return result


def ask_once_with_pad(server, pad: int) -> str:
    server.control(faults=[{"kind": "400", "share": 1.0, "times": 10**6, "pad": pad}])
    return str(ask_once(server.url))  # no secrets=: the credential header alone is redacted


def test_an_echoed_key_is_redacted_at_every_offset_around_the_cut(server):
    prefix = len("Bearer ")
    # From the whole header well inside the kept text to the key starting right after the cut.
    for pad in range(CUT - prefix - len(KEY) - 2, CUT + 2):
        message = ask_once_with_pad(server, pad)
        assert not leaked(message), (pad, message)
    assert "[redacted]" in ask_once_with_pad(server, 10)


@pytest.mark.parametrize("error", [httpx.ConnectError, httpx.ReadTimeout, RuntimeError])
def test_a_key_in_an_exception_message_is_redacted_at_every_offset(error):
    # httpx errors are the network's (retried, then reported); RuntimeError is a client bug.
    for offset in range(0, CUT + 40, 7):
        message = "x" * offset + KEY + " and Bearer " + KEY

        @contextlib.asynccontextmanager
        async def failing():
            async def send(replica, path, body, timeout):
                raise error(message)

            yield send

        result = ask_once("http://127.0.0.1:9/v1", secrets=[KEY], connect=failing)
        assert isinstance(result, ModelCallError) and "[redacted]" in str(result)
        assert not leaked(str(result)), (offset, str(result))


def test_the_http_model_redacts_its_key_env_value(server, monkeypatch):
    monkeypatch.setenv("COMPETENCE_TEST_KEY", KEY)
    server.control(faults=[{"kind": "400", "share": 1.0, "times": 10**6, "pad": CUT - 20}])
    m = resolve_model(f"openai:ideal@{server.url}?key_env=COMPETENCE_TEST_KEY&attempts=1")
    [answer] = m.generate([_prompt()])
    assert isinstance(answer, ModelCallError) and not leaked(str(answer))


def _prompt():
    from pytest_competence.strategies import Ordering

    [item] = Ordering().design(levels=[4], pairs=4, seed=1, presentations=["original"])[:1]
    return item.prompts[0]


SUITE = """
    import logging
    import pytest

    @pytest.mark.competence(levels=[4, 8], pairs=8)
    def test_suite(competence):
        logging.getLogger("test").debug("model %r", competence.model)
"""


def every_file(root: Path):
    for path in sorted(root.rglob("*")):
        if path.is_file():
            yield path


@pytest.mark.slow
def test_the_api_key_reaches_the_server_and_no_artifact(pytester, server, monkeypatch):
    monkeypatch.setenv("COMPETENCE_TEST_KEY", KEY)
    pytester.makepyfile(test_suite=SUITE)
    pytester.makeini("[pytest]\ncompetence_api_key_env = COMPETENCE_TEST_KEY\n")
    # Half the errors echo the headers as JSON, half put the key across the cut of the message.
    server.control(
        faults=[
            {"kind": "400", "share": 0.15, "times": 10**6},
            {"kind": "400", "share": 0.15, "times": 10**6, "pad": CUT - 20},
        ]
    )
    spec = f"openai:ideal@{server.url}"
    args = [
        "-p",
        "no:cacheprovider",
        "-v",
        "-rA",
        "--log-level=DEBUG",
        "--log-cli-level=DEBUG",
        "--competence-model",
        spec,
        "--competence-json",
        "out.json",
        "--competence-html",
        "out.html",
        "--competence-markdown",
        "out.md",
        "--junitxml",
        "junit.xml",
    ]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *args],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output  # the 400s make invalid answers: the condition fails
    assert "[redacted]" in output  # the echoed header was in an error, and was scrubbed

    sent = hashlib.sha256(f"Bearer {KEY}".encode()).hexdigest()
    assert {e["auth_sha256"] for e in server.log()} == {sent}

    files = list(every_file(pytester.path))
    names = {p.name for p in files}
    assert {
        "out.json",
        "out.records.jsonl",
        "out.html",
        "out.md",
        "junit.xml",
        "cache.sqlite",
    } <= names
    assert not leaked(output)
    for path in files:
        data = path.read_bytes().decode("utf-8", "replace")
        assert not leaked(data), path


LEAKY_MODEL = """
import os

def answer(prompts):
    key = os.environ["COMPETENCE_TEST_KEY"]
    out = []
    for i, _ in enumerate(prompts):
        if i % 3 == 0:
            out.append(RuntimeError("x" * (i * 7 % 310) + "auth failed for " + key))
        elif i % 3 == 1:
            out.append("no, and the key is " + key)  # an answer echoing the key
        else:
            out.append("yes")
    return out
"""


def test_no_report_holds_a_key_a_model_put_in_an_answer_or_exception(pytester, monkeypatch):
    monkeypatch.setenv("COMPETENCE_TEST_KEY", KEY)
    pytester.syspathinsert()
    pytester.makepyfile(leaky_model=LEAKY_MODEL)
    pytester.makepyfile(test_suite=SUITE)
    pytester.makeini("[pytest]\ncompetence_api_key_env = COMPETENCE_TEST_KEY\n")
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "-rA",
        "--competence-model",
        "py:leaky_model:answer",
        "--competence-json",
        "out.json",
        "--competence-html",
        "out.html",
        "--competence-markdown",
        "out.md",
        "--junitxml",
        "junit.xml",
    )
    result.assert_outcomes(errors=1)  # the raised exceptions are infrastructure errors
    output = "\n".join(result.outlines + result.errlines)
    assert "auth failed for [redacted]" in output and not leaked(output)
    _, records = read_archive(pytester.path / "out.json")
    (rows,) = records.values()
    reasons = [r["reason"] or "" for r in rows]
    assert any("auth failed for [redacted]" in r for r in reasons)
    assert any("the key is [redacted]" in (r["raw"] or "") for r in rows)  # answers, whole
    for name in ("out.json", "out.records.jsonl", "out.html", "out.md", "junit.xml"):
        assert not leaked((pytester.path / name).read_text("utf-8")), name


class Echoing:
    """An HTTP-like model (it has a cache identity) whose answers echo the key."""

    name = "echoing"
    cache_identity = "echoing/1"

    def generate(self, prompts):
        return [f"yes, {KEY}" for _ in prompts]


def test_an_answer_echoing_the_key_is_cached_without_it(tmp_path):
    from pytest_competence.engine.cache import CachedModel, ResponseCache

    cache = ResponseCache(tmp_path / "cache.sqlite")
    model = CachedModel(Echoing(), cache, "rw", secrets=[KEY])
    assert model.generate([_prompt()]) == ["yes, [redacted]"]
    assert model.generate([_prompt()]) == ["yes, [redacted]"] and model.hits == 1
    cache.close()
    for path in tmp_path.iterdir():
        assert not leaked(path.read_bytes().decode("utf-8", "replace")), path
