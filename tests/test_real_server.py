"""``transformers serve``, an OpenAI-compatible server this project did not write, as a model.

The other HTTP tests talk to ``tests/fake_server.py``, which speaks the API as this project reads
it. Here the tiny random Llama of ``tests/tiny_llama.py`` is served by ``transformers serve`` on
127.0.0.1 and a competence suite runs through the plugin against it, in chat and completions mode
and with ``readout=score``. The model answers nonsense; what is checked is the path: the server
accepts every request, every answer comes back as raw text that parses or is explicitly invalid,
nothing crashes, and a server that cannot score says so.

What ``transformers serve`` does (transformers 5.x): it serves ``/v1/chat/completions`` and
``/v1/completions``; pinned to one checkpoint, it answers only requests naming that checkpoint's
path as the model (others get HTTP 400); it ignores ``logprobs``, ``top_logprobs`` and ``echo``,
so candidate scoring is impossible against it in either mode.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")

from plugin_helpers import read_archive  # noqa: E402
from pytest_competence.strategies import Ordering  # noqa: E402
from tiny_llama import TEMPLATE, build  # noqa: E402

pytestmark = pytest.mark.slow

SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4, 8], pairs=4)
    def test_ordering(competence):
        pass
"""
#: Every wait is bounded: a hung server fails the test in minutes, not hours.
START_TIMEOUT = 120.0
RUN_TIMEOUT = 300.0
BOUNDED = "timeout=30&attempts=2&budget=60"


def _serve_command() -> list[str]:
    """``transformers serve`` through this interpreter, or a skip saying what is missing."""
    if importlib.util.find_spec("transformers.cli.serve") is None:
        pytest.skip(
            f"transformers {transformers.__version__} has no transformers.cli.serve "
            f"(the `transformers serve` of transformers 5)"
        )
    from transformers.utils.import_utils import is_serve_available

    if not is_serve_available() or importlib.util.find_spec("accelerate") is None:
        pytest.skip(
            "`transformers serve` needs its extras (fastapi, uvicorn, openai, pydantic; "
            "accelerate to place the model): pip install 'transformers[serving]'"
        )
    return [sys.executable, "-m", "transformers.cli.transformers", "serve"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Served:
    """A running ``transformers serve`` process: its base URL, checkpoint and request log."""

    def __init__(
        self, proc: subprocess.Popen[bytes], port: int, checkpoint: Path, log: Path
    ) -> None:
        self.proc, self.checkpoint, self.log_path = proc, checkpoint, log
        self.url = f"http://127.0.0.1:{port}/v1"

    def log(self) -> str:
        return self.log_path.read_text("utf-8", errors="replace")

    def spec(self, query: str) -> str:
        # The server answers only requests that name its checkpoint's path as the model.
        return f"openai:{self.checkpoint}@{self.url}?{query}&{BOUNDED}"


def _wait_until_healthy(served: Served) -> None:
    import httpx

    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if served.proc.poll() is not None:
            pytest.fail(
                f"transformers serve exited with {served.proc.returncode}:\n{served.log()[-3000:]}"
            )
        try:
            if httpx.get(served.url.removesuffix("/v1") + "/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(
        f"transformers serve was not healthy within {START_TIMEOUT:g} s:\n{served.log()[-3000:]}"
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The tiny checkpoint served on a free local port for this module; always stopped after."""
    command = _serve_command()
    family = Ordering(vocabulary="front_behind")
    items = family.design(levels=[4, 8], pairs=8, seed=1, presentations=["original", "equivalent"])
    folder = tmp_path_factory.mktemp("served")
    checkpoint = build(folder / "tiny-llama", [p for i in items for p in i.prompts], TEMPLATE)
    port, log = _free_port(), folder / "server.log"
    # Offline: the checkpoint is a local folder, and nothing may reach out (update checks).
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_HUB_DISABLE_UPDATE_CHECK="1",
        HF_HUB_DISABLE_TELEMETRY="1",
    )
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                *command,
                str(checkpoint),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--device",
                "cpu",
                "--log-level",
                "info",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    server = Served(proc, port, checkpoint, log)
    try:
        _wait_until_healthy(server)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


def _run(pytester: pytest.Pytester, served: Served, query: str):
    """The suite through the plugin in a fresh process; its result, output and server log."""
    pytester.makepyfile(test_suite=SUITE)
    seen = len(served.log())
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        f"--competence-model={served.spec(query)}",
        "--competence-json=out.json",
        timeout=RUN_TIMEOUT,
    )
    output = result.stdout.str()
    assert "INTERNALERROR" not in output, output[-5000:]
    return result, output, served.log()[seen:]


@pytest.mark.parametrize(
    ("mode", "endpoint"), [("chat", "/v1/chat/completions"), ("completions", "/v1/completions")]
)
def test_generated_answers_come_back_parsed_or_invalid(pytester, served, mode, endpoint):
    result, output, log = _run(pytester, served, f"mode={mode}&max_tokens=4")
    # A random model breaks the condition; what matters is that the test ran to a verdict.
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 1, output[-5000:]
    assert "errors" not in outcomes and "error" not in outcomes, output[-5000:]
    _, by_result = read_archive(pytester.path / "out.json")
    (records,) = by_result.values()
    assert len(records) == 16  # 2 levels x 4 pairs x 2 presentations
    for record in records:
        assert isinstance(record["raw"], str), record  # an answer, not a transport error
        if record["valid"]:
            assert record["parsed"] in record["answer_space"], record
        else:
            assert record["parsed"] is None and record["reason"], record
    requests = [line for line in log.splitlines() if '"POST /v1/' in line]
    assert requests and all(f'"POST {endpoint} HTTP/1.1" 200' in line for line in requests), log


@pytest.mark.parametrize(
    ("mode", "how"),
    [
        ("chat", "chat mode needs 'logprobs' with 'top_logprobs'"),
        ("completions", "completions mode needs 'echo' with 'logprobs'"),
    ],
)
def test_score_readout_says_the_server_returned_no_logprobs(pytester, served, mode, how):
    result, output, log = _run(pytester, served, f"mode={mode}&readout=score")
    # Whether the plugin shows this as a failure or as an error, the reason must be there.
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output[-5000:]
    assert "the server returned no logprobs, so readout=score cannot rank" in output
    assert how in output and "not retried" in output and "gave up after" not in output
    assert '"POST /v1/' in log and " 200 OK" in log
