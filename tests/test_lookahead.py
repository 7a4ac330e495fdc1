"""One request stream across tests (``pytest_competence.engine.lookahead``): the next test's prompts go
out while this one's tail is answered, within the window, never at an outage, and every figure
is what it is without it.

The suites below shrink a chunk to 16 prompts (``CHUNK_PROMPTS``, patched in the run's conftest)
so that a few dozen prompts make several chunks and the window (``competence_lookahead``) is
smaller than a test. The run's conftest also logs every send of the wire client (time and the
SHA-256 of the body) and when each test's setup began, so a test here can tell which prompts
were sent before the test that owns them started.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fake_server import FakeServer

TESTS = """
import pytest

@pytest.mark.competence(levels=[4, 8], pairs=16, vocabulary="front_behind")
def test_a(competence):
    pass

@pytest.mark.competence(levels=[4, 8], pairs=16, vocabulary="left_right")
def test_b(competence):
    pass

@pytest.mark.competence(levels=[4, 8], pairs=16, vocabulary="older_younger")
def test_c(competence):
    pass
"""

# Small chunks; every send and every setup logged (appended: xdist workers share the files).
CONFTEST = """
import hashlib, json, os, time

import pytest

import pytest_competence.engine.spec
from pytest_competence.models import _wire

pytest_competence.engine.spec.CHUNK_PROMPTS = 16
LOG = os.environ["SEND_LOG"]
_post = _wire.Connection.post


async def post(self, path, body, timeout):
    with open(LOG, "a") as out:
        out.write(json.dumps(["send", time.time(), hashlib.sha256(body).hexdigest()]) + "\\n")
    return await _post(self, path, body, timeout)


_wire.Connection.post = post


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    with open(LOG, "a") as out:
        out.write(json.dumps(["setup", time.time(), item.originalname]) + "\\n")
    if item.originalname == "test_b" and os.environ.get("KILL_AT_B"):
        os.kill(int(os.environ["KILL_AT_B"]), 9)  # the outage, once test_b's prompts are ahead
"""

VOCABULARIES = {"test_a": "front_behind", "test_b": "left_right", "test_c": "older_younger"}


def bodies(url: str) -> dict[str, str]:
    """The SHA-256 of every request body the suite sends, and the test it belongs to."""
    from pytest_competence.engine.spec import spec_from_marker
    from pytest_competence.models import resolve_model

    model = resolve_model(f"openai:m@{url}")
    owner = {}
    for test, vocabulary in VOCABULARIES.items():
        spec = spec_from_marker((), {"levels": [4, 8], "pairs": 16, "vocabulary": vocabulary})
        for item in spec.design():
            for p in item.prompts:
                owner[hashlib.sha256(json.dumps(model.bodies.body(p)).encode()).hexdigest()] = test
    return owner


def sent_before_setup(log: Path, owner: dict[str, str]) -> dict[str, set[str]]:
    """Per test, the distinct prompts sent before its setup began."""
    events = [json.loads(line) for line in log.read_text().splitlines()]
    setup = {name: t for kind, t, name in events if kind == "setup"}
    early: dict[str, set[str]] = {test: set() for test in VOCABULARIES}
    for kind, t, key in events:
        if kind == "send" and t < setup.get(owner[key], float("inf")):
            early[owner[key]].add(key)
    return early


def run(
    tmp: Path,
    url: str,
    *args: str,
    lookahead: int = 32,
    env: dict[str, str] | None = None,
    tests: str = TESTS,
) -> subprocess.CompletedProcess[str]:
    (tmp / "test_suite.py").write_text(tests)
    (tmp / "conftest.py").write_text(CONFTEST)
    (tmp / "pytest.ini").write_text(f"[pytest]\ncompetence_lookahead = {lookahead}\n")
    (tmp / "sends.jsonl").unlink(missing_ok=True)
    environ = {**os.environ, "SEND_LOG": str(tmp / "sends.jsonl"), **(env or {})}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly"]
    command += [f"--competence-model=openai:m@{url}?concurrency=4", *args]
    return subprocess.run(command, cwd=tmp, capture_output=True, text=True, env=environ)


def canonical_json(path: Path) -> str:
    document = json.loads(path.read_text("utf-8"))
    document["records_file"].pop("file")
    for result in document["results"]:
        result["records"].pop("file", None)
    return json.dumps(document, sort_keys=True)


@pytest.fixture(scope="module")
def slow_server():
    server = FakeServer(latency=0.1)
    yield server
    server.close()


def test_the_next_test_is_asked_ahead_within_the_window(tmp_path, slow_server):
    """test_b's first prompts are sent while test_a ends, never more than the window (32)."""
    done = run(tmp_path, slow_server.url, "--competence-report-only")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    early = sent_before_setup(tmp_path / "sends.jsonl", bodies(slow_server.url))
    assert 0 < len(early["test_b"]) <= 32, {k: len(v) for k, v in early.items()}
    assert 0 < len(early["test_c"]) <= 32
    assert not early["test_a"]  # the first test has nothing before it


def test_the_default_window_holds_a_tests_last_two_chunks_and_the_next_tests_first():
    """A test of a full chunk and a small one leaves room, by default, for the next test's first
    chunk at once. With a window of two chunks it waited until this test's first chunk was
    reduced — after this test's last answer whenever the small chunk was answered first — and
    the server idled between the tests (0.06–0.11 s in a 4 s run of the 2,400-prompt example).
    """
    import threading
    from types import SimpleNamespace

    from pytest_competence.engine.spec import CHUNK_PROMPTS
    from pytest_competence.plugin._lookahead import DEFAULT_WINDOW, WINDOW_CHUNKS, Lookahead, Window

    assert DEFAULT_WINDOW == WINDOW_CHUNKS * CHUNK_PROMPTS  # written out there: no numpy import
    defaults = Lookahead(None, DEFAULT_WINDOW)  # type: ignore[arg-type]  # the sizes alone
    window = Window(defaults.size, defaults.characters)
    this = SimpleNamespace(claimed=threading.Event(), held=[0, 0])
    this.claimed.set()
    never = threading.Event()
    # The example's first test: 1,200 prompts in two chunks (ordering prompts of ~1,300 chars).
    assert window.acquire(CHUNK_PROMPTS, 1_379_049, never, this)
    this.held = [CHUNK_PROMPTS, 1_379_049]
    assert window.acquire(176, 998_933, never, this)
    this.held = [CHUNK_PROMPTS + 176, 1_379_049 + 998_933]
    ahead = SimpleNamespace(claimed=threading.Event(), held=[0, 0])
    give_up = threading.Event()
    timer = threading.Timer(2.0, give_up.set)
    timer.start()
    try:
        # Room at once: had it waited, give_up would have ended the wait with False.
        assert window.acquire(CHUNK_PROMPTS, 1_984_703, give_up, ahead)
    finally:
        timer.cancel()
    assert not give_up.is_set()


def test_every_figure_and_record_is_the_same_without_it(tmp_path, slow_server):
    """The JSON report and the records file, byte for byte, with and without asking ahead, and
    under xdist; in the default cache mode, each run with a cache of its own."""
    outputs = {}
    for name, lookahead, extra in (
        ("off", 0, []),
        ("on", 32, []),
        ("xdist", 32, ["-n", "2"]),
    ):
        folder = tmp_path / name
        folder.mkdir()
        done = run(
            folder,
            slow_server.url,
            "--competence-report-only",
            "--competence-json=out.json",
            *extra,
            lookahead=lookahead,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        outputs[name] = (
            canonical_json(folder / "out.json"),
            (folder / "out.records.jsonl").read_bytes(),
        )
    assert outputs["on"] == outputs["off"]
    assert outputs["xdist"] == outputs["off"]


def test_a_design_two_tests_share_is_asked_once(tmp_path, slow_server):
    """The second test of one design and model reuses the first one's evaluation: nothing of it
    is asked ahead while the first is answered, so every prompt is sent exactly once."""
    shared = TESTS.replace(
        "def test_a(competence):",
        "@pytest.mark.parametrize('x', [1, 2])\ndef test_a(competence, x):",
    )
    done = run(tmp_path, slow_server.url, "--competence-report-only", tests=shared)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "4 passed" in done.stdout, done.stdout[-2000:]
    sent = [json.loads(line) for line in (tmp_path / "sends.jsonl").read_text().splitlines()]
    keys = [key for kind, _, key in sent if kind == "send"]
    assert len(keys) == len(set(keys)) == len(bodies(slow_server.url))


def test_a_rerun_from_the_cache_asks_nothing_ahead_or_now(tmp_path, slow_server):
    done = run(tmp_path, slow_server.url, "--competence-report-only")
    assert done.returncode == 0
    done = run(tmp_path, slow_server.url, "--competence-report-only", "--competence-cache=read")
    assert done.returncode == 0, done.stdout[-2000:]
    assert "send" not in (tmp_path / "sends.jsonl").read_text()


@pytest.mark.slow
def test_at_an_outage_nothing_more_is_asked_ahead(tmp_path):
    """The server dies once test_b's first prompts are ahead: test_b and test_c are errors (a
    broken server is not a failing model), test_b had at most the window sent before it began,
    and test_c nothing — its pipeline waits out the outage instead of asking."""
    server = FakeServer(latency=0.3)
    try:
        done = run(
            tmp_path,
            server.url,
            "--competence-report-only",
            env={"KILL_AT_B": str(server.proc.pid)},
        )
        owner = bodies(server.url)
    finally:
        if server.proc.poll() is None:
            os.kill(server.proc.pid, signal.SIGKILL)
        server.close()
    assert "1 passed, 2 errors" in done.stdout, done.stdout[-3000:]
    early = sent_before_setup(tmp_path / "sends.jsonl", owner)
    assert 0 < len(early["test_b"]) <= 32, {k: len(v) for k, v in early.items()}
    assert early["test_c"] == set()
