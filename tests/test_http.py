"""The OpenAI-compatible HTTP backend against a real local server that misbehaves on demand.

The server (``tests/fake_server.py``) is a separate process on 127.0.0.1 that answers with the
ideal reference policy and can inject latency, 429 with Retry-After, 408/500/503, timeouts,
dropped connections and malformed bodies. Every test checks the two promises of the backend:
each prompt is answered or recorded with the reason it failed, and nothing is lost or duplicated.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from urllib.parse import parse_qsl, urlencode

import pytest

from fake_server import answer_for, logprob_of_answer
from pytest_competence.models import ModelSpecError, resolve_model, split_specs
from pytest_competence.models._transport import ModelCallError
from pytest_competence.strategies import Ordering
from server_fixtures import fake_server_process, server  # noqa: F401

KEY = "sk-test-NEVER-SHOWN-0123456789abcdef"


@pytest.fixture(scope="module")
def prompts():
    family = Ordering(vocabulary="front_behind")
    items = family.design(levels=[4, 8], pairs=20, seed=1, presentations=["original", "equivalent"])
    return [p for item in items for p in item.prompts]


def model(server, query: str = "", urls=None):
    """The server as a model: short waits between tries, ``query`` on top."""
    params = {"backoff": "0.01", "timeout": "10", **dict(parse_qsl(query))}
    return resolve_model(f"openai:ideal@{','.join(urls or [server.url])}?{urlencode(params)}")


def expected(prompts):
    return [answer_for(p.text) for p in prompts]


def by_key(log):
    groups = defaultdict(list)
    for entry in log:
        groups[entry["key"]].append(entry)
    return groups


def test_every_prompt_is_answered_once_in_order(server, prompts):
    answers = model(server).generate(prompts)
    assert answers == expected(prompts)
    assert {a for a in answers} == {"yes", "no"}
    log = server.log()
    assert len(log) == len(prompts) and len(by_key(log)) == len(prompts)
    assert all(e["did"] == "ok" and e["path"] == "/v1/chat/completions" for e in log)


def test_completions_mode_sends_the_system_prompt_before_the_text(server, prompts):
    answers = model(server, "mode=completions").generate(prompts[:8])
    assert answers == expected(prompts[:8])
    assert {e["path"] for e in server.log()} == {"/v1/completions"}


@pytest.mark.parametrize("kind", ["429", "408", "500", "503", "drop", "malformed", "timeout"])
def test_transient_faults_are_retried_and_change_nothing(server, prompts, kind):
    times = 1 if kind == "timeout" else 2  # each timed-out try costs the client 2.5 s
    server.control(
        faults=[{"kind": kind, "share": 0.5, "times": times, "retry_after": "0", "sleep": 8}]
    )
    # Only the timeout fault needs a short client timeout (the server then sleeps 8 s).
    answers = model(server, "timeout=2.5" if kind == "timeout" else "").generate(prompts)
    assert answers == expected(prompts)  # equal to a fault-free run
    groups = by_key(server.log())
    assert len(groups) == len(prompts)
    faulted = [g for g in groups.values() if g[0]["did"] != "ok"]
    assert 0.3 * len(prompts) < len(faulted) < 0.7 * len(prompts)
    for entries in groups.values():
        dids = [e["did"] for e in entries]
        # Answered exactly once, after exactly the injected faults: no duplicate, no extra send.
        assert dids.count("ok") == 1 and dids[-1] == "ok"
        assert len(dids) in (1, times + 1)


def test_a_mix_of_every_fault_still_answers_everything(server, prompts):
    kinds = ["429", "408", "500", "503", "drop", "malformed", "timeout"]
    server.control(
        faults=[
            {"kind": k, "share": 0.12, "times": 1, "retry_after": "0", "sleep": 8} for k in kinds
        ]
    )
    answers = model(server, "timeout=2.5&concurrency=16").generate(prompts)
    assert answers == expected(prompts)
    did = Counter(e["did"] for e in server.log())
    assert did["ok"] == len(prompts) and set(did) == {"ok", *kinds}


def test_lasting_faults_become_errors_after_the_allowed_attempts(server, prompts):
    server.control(faults=[{"kind": "500", "share": 0.3, "times": 10**6}])
    answers = model(server, "attempts=3").generate(prompts)
    assert len(answers) == len(prompts)
    failed = [a for a in answers if isinstance(a, BaseException)]
    assert 0.15 * len(prompts) < len(failed) < 0.45 * len(prompts)
    for answer, p in zip(answers, prompts):
        if isinstance(answer, ModelCallError):
            assert "gave up after 3 attempts" in str(answer) and "HTTP 500" in str(answer)
        else:
            assert answer == answer_for(p.text)
    sends = Counter(len(entries) for entries in by_key(server.log()).values())
    assert sends == {1: len(prompts) - len(failed), 3: len(failed)}


def test_client_errors_are_not_retried(server, prompts):
    server.control(faults=[{"kind": "400", "share": 0.25, "times": 10**6}])
    answers = model(server).generate(prompts)
    errors = [a for a in answers if isinstance(a, BaseException)]
    assert errors and all("HTTP 400" in str(e) and "not retried" in str(e) for e in errors)
    assert all(len(entries) == 1 for entries in by_key(server.log()).values())


def test_an_answer_with_no_text_is_recorded_with_its_finish_reason(server, prompts):
    server.control(faults=[{"kind": "notext", "share": 1.0, "times": 10**6}])
    answers = model(server).generate(prompts[:3])
    assert all("no answer text (finish_reason='length')" in str(a) for a in answers)


def test_retry_after_is_honoured(server, prompts):
    server.control(faults=[{"kind": "429", "share": 1.0, "times": 1, "retry_after": "1"}])
    assert model(server).generate(prompts[:4]) == expected(prompts[:4])
    for entries in by_key(server.log()).values():
        assert [e["did"] for e in entries] == ["429", "ok"]
        assert entries[1]["t"] - entries[0]["t"] >= 0.95


def test_the_time_budget_bounds_retries(server, prompts):
    server.control(faults=[{"kind": "503", "share": 1.0, "times": 10**6, "retry_after": "5"}])
    answers = model(server, "attempts=50&budget=2").generate(prompts[:2])
    assert all("would pass the 2 s budget" in str(a) for a in answers)
    assert all(len(e) == 1 for e in by_key(server.log()).values())  # 5 s > budget: no retry


def test_concurrency_is_bounded_and_connections_are_reused(server, prompts):
    server.control(latency=0.05)
    assert model(server, "concurrency=4&timeout=60").generate(prompts) == expected(prompts)
    log = server.log()
    assert len(log) == len(prompts)
    assert 2 <= max(e["inflight"] for e in log) <= 4  # overlapping, never more than 4
    assert len({e["client_port"] for e in log}) <= 4  # 80 requests over at most 4 connections


def test_batches_asked_at_once_from_two_threads_share_one_stream(server, prompts, monkeypatch):
    """The lookahead asks a design's first chunks from two threads at once: a fresh model must
    open one request stream for both, or each brings its own ``concurrency`` workers."""
    import threading
    import time

    from pytest_competence.models import _pipe

    opened = []

    class SlowToOpen(_pipe.Pipe):  # widens the moment both threads find no stream yet
        def __init__(self, *args, **kwargs):
            opened.append(self)
            time.sleep(0.3)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(_pipe, "Pipe", SlowToOpen)
    server.control(latency=0.05)
    fresh = model(server, "concurrency=4&timeout=60")
    halves = [prompts[: len(prompts) // 2], prompts[len(prompts) // 2 :]]
    answers: list = [None, None]
    start = threading.Barrier(2)

    def ask(k):
        start.wait()
        answers[k] = fresh.generate(halves[k])

    threads = [threading.Thread(target=ask, args=(k,)) for k in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    fresh.close()
    assert answers == [expected(half) for half in halves]
    assert len(opened) == 1
    log = server.log()
    assert len(log) == len(prompts)
    assert max(e["inflight"] for e in log) <= 4  # the model's concurrency, not twice it
    assert len({e["client_port"] for e in log}) <= 4


def test_requests_are_balanced_over_replicas(server, prompts):
    server.control(latency=0.01)
    spec = "openai:ideal@" + ",".join(server.urls)
    assert split_specs(f"ref:ideal,{spec},ref:always-no") == ["ref:ideal", spec, "ref:always-no"]
    assert resolve_model(spec + "?concurrency=8").generate(prompts) == expected(prompts)
    ports = Counter(e["port"] for e in server.log())
    assert set(ports) == set(server.ports)
    assert min(ports.values()) >= 0.3 * len(prompts)


def test_a_retry_goes_to_another_replica(server, prompts):
    server.control(faults=[{"kind": "503", "share": 1.0, "times": 1}])
    model(server, urls=server.urls).generate(prompts[:10])
    for entries in by_key(server.log()).values():
        assert entries[0]["port"] != entries[1]["port"]


def test_a_reader_that_stops_early_cancels_what_is_in_flight(server, prompts):
    import time

    server.control(latency=2.0)
    stream = model(server, "concurrency=2").stream(prompts)
    first = next(stream)  # after ~2 s; the next requests are already on their way
    start = time.monotonic()
    stream.close()  # e.g. the test was interrupted
    assert time.monotonic() - start < 1.0  # the requests in flight are cancelled, not awaited
    assert first[1] == answer_for(prompts[first[0]].text)
    assert len(server.log()) <= 4


def test_answers_that_arrive_together_are_handed_over_together(server, prompts):
    # The stream's lists (a cache commits each at once): every index once, with its own answer;
    # answers of requests in flight together arrive within one hand-over (models._pipe.HAND_OVER).
    server.control(latency=0.05)
    groups = list(model(server, "concurrency=8").stream_groups(prompts))
    pairs = [pair for group in groups for pair in group]
    assert sorted(i for i, _ in pairs) == list(range(len(prompts)))
    assert all(answer == answer_for(prompts[i].text) for i, answer in pairs)
    assert len(groups) < len(pairs) and all(groups)
    scored = model(server, "readout=score").stream_groups(prompts[:3])  # one score call each
    assert [len(g) for g in scored] == [1, 1, 1]


def test_a_proxy_named_by_the_environment_carries_the_requests(server, prompts, monkeypatch):
    # The second port stands in for the proxy: it receives absolute URLs and answers them.
    for name in ("HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{server.ports[1]}")
    assert model(server).generate(prompts[:6]) == expected(prompts[:6])
    log = server.log()
    assert len(log) == 6 and {e["port"] for e in log} == {server.ports[1]}
    assert {e["path"] for e in log} == {f"{server.url}/chat/completions"}


def test_seed_is_offset_by_the_attempt(server, prompts):
    from dataclasses import replace

    tries = [replace(prompts[0], attempt=k) for k in range(3)]
    model(server, "seed=7&temperature=0.7").generate(tries)
    assert sorted(e["seed"] for e in server.log()) == [7, 8, 9]


def test_candidate_scoring_reads_logprobs(server, prompts):
    few = prompts[:6]
    chat = model(server).score(few, ["yes", "no"])
    completions = model(server, "mode=completions").score(few, ["yes", "no"])
    for p, c, t in zip(few, chat, completions):
        right = answer_for(p.text)
        wrong = "no" if right == "yes" else "yes"
        for scores, seen in ((c, p.text), (t, f"{p.system}\n\n{p.text}")):
            lp = logprob_of_answer(seen)
            assert scores[right] == pytest.approx(lp)
            assert scores[wrong] == pytest.approx(math.log1p(-math.exp(lp)))
    for mode in ("chat", "completions"):
        assert model(server, f"readout=score&mode={mode}").generate(few) == expected(few)


def test_score_readout_without_logprobs_is_an_error_entry(server, prompts):
    server.control(faults=[{"kind": "notext", "share": 1.0, "times": 10**6}])
    answers = model(server, "readout=score&attempts=2").generate(prompts[:2])
    assert all(isinstance(a, ModelCallError) for a in answers)


@pytest.mark.parametrize(
    ("mode", "how"),
    [
        (
            "chat",
            "chat mode needs 'logprobs' with 'top_logprobs'; vLLM returns up to --max-logprobs",
        ),
        ("completions", "completions mode needs 'echo' with 'logprobs'"),
    ],
)
def test_a_server_without_logprobs_cannot_score_and_is_asked_once(server, prompts, mode, how):
    server.control(faults=[{"kind": "nologprobs", "share": 1.0, "times": 10**6}])
    answers = model(server, f"readout=score&mode={mode}").generate(prompts[:3])
    assert all(isinstance(a, ModelCallError) for a in answers)
    for a in answers:
        assert str(a).startswith(
            "the server returned no logprobs, so readout=score cannot rank the answer space"
        )
        assert how in str(a) and "or use readout=generate" in str(a)
        assert f"(from {server.url}/" in str(a) and str(a).endswith("; not retried)")
    # Not retried: each request was sent once (completions mode: one per candidate).
    assert all(len(entries) == 1 for entries in by_key(server.log()).values())
    assert len(server.log()) == 3 * (1 if mode == "chat" else 2)


def test_asking_ahead_holds_only_the_batches_being_read(server, prompts):
    """A token that asks a whole design ahead (one per test: :mod:`pytest_competence.engine.lookahead`)
    keeps a batch only while its answers are read: it once kept every chunk's requests until the
    test ended, and a 50k-prompt test peaked at 191 MB instead of 113 MB."""
    from pytest_competence.models._pipe import Ahead, asking_ahead

    m, token = model(server, "concurrency=4"), Ahead()
    for chunk in (prompts[:10], prompts[10:25], prompts[25:]):
        with asking_ahead(token):
            answers = m.generate(chunk)
        assert answers == expected(chunk) and len(token) == 0
    with asking_ahead(token):
        stream = m.stream(prompts[:10])
        next(stream)
        assert len(token) == 1  # being read: the token can still drop it
        stream.close()
    assert len(token) == 0
    m.close()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("openai:", "expected 'openai:MODEL@BASE_URL'"),
        # No hosted default: prompts and the key go only where the spec says.
        (
            "openai:gpt-4o-mini",
            "'openai:gpt-4o-mini' names no server; write its base URL out in full: "
            "'openai:gpt-4o-mini@http://127.0.0.1:8000/v1' for a local server, "
            "'openai:gpt-4o-mini@https://api.openai.com/v1' for OpenAI's API",
        ),
        ("openai:m?temperature=0", "names no server"),
        ("openai:m@", "expected base URLs such as http://127.0.0.1:8000/v1, but got ''"),
        ("openai:m@ftp://x", "expected base URLs such as http://127.0.0.1:8000/v1"),
        ("openai:m@http://user:pw@host/v1", "may not carry credentials"),
        (
            "openai:m@http://h/v1?temperature=hot",
            "expected temperature to be a number >= 0 and <= 2, but got temperature='hot'",
        ),
        ("openai:m@http://h/v1?concurrency=0", "expected concurrency to be an integer >= 1"),
        ("openai:m@http://h/v1?mode=edit", "expected mode to be one of chat, completions"),
        (
            "openai:m@http://h/v1?tempreature=0",
            "unknown parameter 'tempreature' (did you mean 'temperature'?); expected one of",
        ),
        ("openai:m@http://h/v1?seed=1&seed=2", "parameter 'seed' is given twice"),
    ],
)
def test_bad_specs_say_what_to_fix(spec, message):
    with pytest.raises(ModelSpecError, match=None) as info:
        resolve_model(spec)
    assert message in str(info.value)


def test_spec_defaults_and_key_env():
    m = resolve_model("openai:gpt-4o-mini@https://api.openai.com/v1")
    assert m.base_urls == ["https://api.openai.com/v1"] and m.key_env == "OPENAI_API_KEY"
    m = resolve_model("openai:m@http://h:1/v1/", settings={"api_key_env": "MY_KEY"})
    assert m.base_urls == ["http://h:1/v1"] and m.key_env == "MY_KEY"
    m = resolve_model(
        "openai:m@http://h:1/v1?key_env=OTHER&stop=a&stop=b", settings={"api_key_env": "MY_KEY"}
    )
    assert m.key_env == "OTHER" and m.decoding["stop"] == ["a", "b"]
    # Tuning knobs do not change the answers, so they stay out of the cache identity.
    a = resolve_model("openai:m@http://h:1/v1?concurrency=2&timeout=9")
    b = resolve_model("openai:m@http://h:1/v1")
    c = resolve_model("openai:m@http://h:1/v1?temperature=0.5")
    assert a.cache_identity == b.cache_identity != c.cache_identity


def test_the_key_is_sent_but_never_shown(server, prompts, monkeypatch):
    monkeypatch.setenv("COMPETENCE_TEST_KEY", KEY)
    server.control(faults=[{"kind": "400", "share": 0.5, "times": 10**6}])
    m = model(server, "key_env=COMPETENCE_TEST_KEY")
    answers = m.generate(prompts[:10])
    sent = hashlib.sha256(f"Bearer {KEY}".encode()).hexdigest()
    assert {e["auth_sha256"] for e in server.log()} == {sent}
    errors = [a for a in answers if isinstance(a, BaseException)]
    assert errors and all("[redacted]" in str(e) for e in errors)  # the server echoed it
    for text in [repr(m), m.name, m.cache_identity, str(vars(m)), *map(repr, errors)]:
        assert KEY not in text


def test_entry_point_backends_are_found(tmp_path, monkeypatch):
    (tmp_path / "const_backend.py").write_text(
        "class Const:\n"
        "    def __init__(self, answer, name):\n"
        "        self.answer, self.name = answer, name\n"
        "    def generate(self, prompts):\n"
        "        return [self.answer for _ in prompts]\n"
        "def load(rest, spec, settings):\n"
        "    return Const(rest, spec)\n"
    )
    info = tmp_path / "const_backend-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: const-backend\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[pytest_competence.models]\nconst = const_backend:load\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    m = resolve_model("const:maybe")
    assert m.name == "const:maybe" and m.generate([None, None]) == ["maybe", "maybe"]


def test_plugin_import_does_not_load_backends():
    import subprocess
    import sys

    # The training helpers (rewards, training rows) are as light as the plugin: no trl, no datasets.
    code = (
        "import sys, pytest_competence.plugin, pytest_competence.models,"
        " pytest_competence.training.rewards, pytest_competence.training;"
        "print(sorted(m for m in ('httpx', 'torch', 'transformers', 'vllm', 'sqlite3', 'trl',"
        " 'datasets') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--ports", "0"], "--ports is how many replicas to start"),
        (["--ports", "100000"], "1 to 64, got 100000"),
        (["--port", "34051"], "unrecognized arguments: --port 34051"),  # no prefix of --ports
    ],
)
def test_the_fake_server_refuses_a_replica_count_it_should_not_start(argv, message):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).with_name("fake_server.py")
    done = subprocess.run(
        [sys.executable, str(script), *argv], capture_output=True, text=True, timeout=60, input=""
    )
    assert done.returncode == 2 and message in done.stderr
