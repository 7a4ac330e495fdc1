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
so candidate scoring is impossible against it in either mode; and it samples only when the
checkpoint's generation config says ``do_sample`` (a request's ``temperature`` alone decodes
greedily), which the greedy-server warning names.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
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


@contextlib.contextmanager
def _serving(tmp_path_factory, *, sampling: bool = False):
    """The tiny checkpoint (its generation config sampling or not) served on a free local port;
    always stopped after."""
    command = _serve_command()
    family = Ordering(vocabulary="front_behind")
    items = family.design(levels=[4, 8], pairs=8, seed=1, presentations=["original", "equivalent"])
    folder = tmp_path_factory.mktemp("served")
    checkpoint = build(
        folder / "tiny-llama", [p for i in items for p in i.prompts], TEMPLATE, sampling=sampling
    )
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


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The tiny checkpoint served for this module; its generation config does not sample."""
    with _serving(tmp_path_factory) as server:
        yield server


def _run(pytester: pytest.Pytester, served: Served, query: str, suite: str = SUITE):
    """The suite through the plugin in a fresh process; its result, output and server log."""
    pytester.makepyfile(test_suite=suite)
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


SAMPLED = """
    import pytest

    @pytest.mark.competence(levels=[4, 8], pairs=4, attempts=3)
    def test_ordering(competence):
        pass
"""
TEMPERATURE = "temperature=1&seed=7"


def _warnings(pytester: pytest.Pytester, output: str) -> tuple[list[str], list[dict], dict]:
    """The run's warning lines, the document's warnings and the result's sampling record."""
    document = json.loads((pytester.path / "out.json").read_text("utf-8"))
    lines = [line for line in output.splitlines() if line.startswith("WARNING: model ")]
    return lines, document["warnings"], document["results"][0]["sampling"]


def test_a_server_that_ignores_the_temperature_is_named_and_hf_sampling_is_not(
    pytester, served, tmp_path_factory
):
    """``transformers serve`` samples only when the checkpoint's generation config says
    ``do_sample``: at temperature 1 with attempts=3 every prompt's three answers are the same, and
    the run says so once. ``hf:`` at the same temperature samples, and nothing is said; nor after
    the advice is followed, serving a checkpoint whose generation config samples."""
    result, output, _ = _run(pytester, served, f"{TEMPERATURE}&max_tokens=4", SAMPLED)
    assert "errors" not in result.parseoutcomes(), output[-5000:]
    lines, found, sampling = _warnings(pytester, output)
    assert sampling == {"temperature": 1.0, "attempts": 3, "compared": 16, "varied": 0}
    assert len(lines) == 1 and "the server seems to decode greedily" in lines[0], output[-3000:]
    assert '"do_sample": true' in lines[0]
    assert [w["kind"] for w in found] == ["greedy_server"]

    pytester.makepyfile(test_suite=SAMPLED)
    hf = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        f"--competence-model=hf:{served.checkpoint}?{TEMPERATURE}&max_new_tokens=4&device=cpu",
        "--competence-json=out.json",
        timeout=RUN_TIMEOUT,
    )
    lines, found, sampling = _warnings(pytester, hf.stdout.str())
    assert sampling["compared"] == 16 and sampling["varied"] > 0, sampling
    assert lines == [] and found == []

    with _serving(tmp_path_factory, sampling=True) as sampling_server:
        result, output, _ = _run(pytester, sampling_server, f"{TEMPERATURE}&max_tokens=4", SAMPLED)
    lines, found, sampling = _warnings(pytester, output)
    assert sampling["compared"] == 16 and sampling["varied"] > 0, sampling
    assert lines == [] and found == []
