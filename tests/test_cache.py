"""The response cache: keys, modes, several xdist workers, and a run killed with ``kill -9``.

Unit tests drive :class:`CachedModel` around a counting stand-in; the end-to-end tests run real
pytest sessions against the fake OpenAI-compatible server and read its request log to see exactly
what was sent again.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from plugin_helpers import read_archive
from pytest_competence.engine.cache import (
    NOT_IN_CACHE,
    CachedModel,
    NotInCache,
    ResponseCache,
    cache_key,
    count_rows,
)
from pytest_competence.strategies import Ordering
from server_fixtures import fake_server_process, server  # noqa: F401

SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4, 8], pairs={pairs}, seed={seed})
    def test_{name}(competence):
        pass
"""


@pytest.fixture(scope="module")
def prompts():
    family = Ordering(vocabulary="left_right")
    items = family.design(levels=[4], pairs=8, seed=3, presentations=["original", "equivalent"])
    return [p for item in items for p in item.prompts]


class Counting:
    """Answers ``answer:<text length>``; fails the prompts whose index is in ``fail``."""

    cache_identity = "counting-v1"

    def __init__(self, fail=()):
        self.name = "counting"
        self.fail = set(fail)
        self.asked = []

    def generate(self, prompts):
        self.asked.extend(prompts)
        return [
            RuntimeError("down") if p.attempt in self.fail else f"answer:{len(p.text)}"
            for p in prompts
        ]


def test_keys_separate_what_can_change_the_answer(prompts):
    p = prompts[0]
    key = cache_key("m", p)
    assert key == cache_key("m", replace(p, presentation="other", gold="no"))  # not sent
    for changed in (
        cache_key("m2", p),
        cache_key("m", replace(p, system="x")),
        cache_key("m", replace(p, text=p.text + " ")),
        cache_key("m", replace(p, attempt=1)),
    ):
        assert changed != key


def test_answers_are_reused_and_errors_asked_again(tmp_path, prompts):
    cache = ResponseCache(tmp_path / "c.sqlite")
    tries = [replace(prompts[0], attempt=k) for k in range(3)] + list(prompts[1:4])
    first = Counting(fail={1})
    answers = CachedModel(first, cache).generate(tries)
    assert isinstance(answers[1], RuntimeError) and len(first.asked) == 6
    second = Counting()
    again = CachedModel(second, cache).generate(tries)
    assert [p.attempt for p in second.asked] == [1]  # only the failed one
    assert again[0] == answers[0] and again[1] == f"answer:{len(tries[1].text)}"
    third = Counting()
    wrapped = CachedModel(third, cache)
    assert wrapped.generate(tries) == again and third.asked == [] and wrapped.hits == 6
    assert len(cache) == 6
    cache.close()


def test_modes(tmp_path, prompts):
    path = tmp_path / "c.sqlite"
    reader = Counting()
    offline = CachedModel(reader, ResponseCache(path), "read").generate(prompts)
    # read: the cache alone answers; what it lacks is never sent, and never an answer
    assert count_rows(path) == 0 and reader.asked == []
    assert all(isinstance(a, NotInCache) and str(a) == NOT_IN_CACHE for a in offline)
    CachedModel(Counting(), ResponseCache(path), "rw").generate(prompts[:5])
    assert count_rows(path) == 5
    partly = CachedModel(reader, ResponseCache(path), "read").generate(prompts)
    assert reader.asked == [] and [isinstance(a, str) for a in partly] == [True] * 5 + [False] * (
        len(prompts) - 5
    )
    CachedModel(Counting(), ResponseCache(path), "rw").generate(prompts)
    assert count_rows(path) == len(prompts)
    writer = Counting()
    CachedModel(writer, ResponseCache(path), "write").generate(prompts)
    assert len(writer.asked) == len(prompts) and count_rows(path) == len(prompts)
    with pytest.raises(ValueError, match="Expected mode to be one of rw, read, write"):
        CachedModel(Counting(), ResponseCache(path), "off")


class Grouped(Counting):
    """Hands its answers over in lists of ``size`` (as the HTTP backend hands over those that
    arrived together); ``seen`` holds the rows the cache file had when each list was given."""

    def __init__(self, path, size, fail=()):
        super().__init__(fail)
        self.path, self.size, self.seen = path, size, []

    def stream(self, prompts):
        for group in self.stream_groups(prompts):
            yield from group

    def stream_groups(self, prompts):
        answers = self.generate(prompts)
        for start in range(0, len(prompts), self.size):
            self.seen.append(count_rows(self.path))
            yield [(i, answers[i]) for i in range(start, min(start + self.size, len(prompts)))]


def test_answers_that_arrive_together_are_committed_together_before_any_is_seen(tmp_path, prompts):
    path = tmp_path / "c.sqlite"
    model = Grouped(path, size=3, fail={0})
    cache = ResponseCache(path)
    commits = []
    put_many = cache.put_many
    cache.put_many = lambda rows, name: (commits.append(len(rows)), put_many(rows, name))
    wrapped = CachedModel(model, cache)
    tries = [replace(prompts[0], attempt=k) for k in range(7)]
    seen = []
    for i, answer in wrapped.stream(tries):
        seen.append((i, count_rows(path)))
    # One transaction per list, the failed answer (attempt 0) not stored.
    assert commits == [2, 3, 1]
    # Every answer of a list is in the file before the caller sees the first of them.
    assert seen == [(0, 2), (1, 2), (2, 2), (3, 5), (4, 5), (5, 5), (6, 6)]
    assert model.seen == [0, 2, 5]  # and none of the next list is asked before that
    cache.close()


def test_groups_come_only_from_the_class_that_streams(tmp_path, prompts):
    from pytest_competence.models import ModelWrapper, groups_as_they_come

    model = Grouped(tmp_path / "c.sqlite", size=4)
    assert [len(g) for g in groups_as_they_come(model, prompts[:6])] == [4, 2]

    class Upper(Grouped):  # answers differently from its base: its groups are not its base's
        def stream(self, prompts):
            for i, answer in super().stream(prompts):
                yield i, answer.upper()

    got = list(groups_as_they_come(Upper(tmp_path / "c.sqlite", size=4), prompts[:6]))
    assert [len(g) for g in got] == [1] * 6 and got[0][0][1].startswith("ANSWER:")

    class Wrapper(ModelWrapper):  # forwards stream_groups to the model it wraps
        def stream(self, prompts):
            for i, answer in self.model.stream(prompts):
                yield i, f"wrapped {answer}"

    got = list(groups_as_they_come(Wrapper(model), prompts[:6]))
    assert [len(g) for g in got] == [1] * 6 and got[0][0][1].startswith("wrapped ")
    plain = list(groups_as_they_come(Counting(), prompts[:3]))  # generate() only
    assert [[i for i, _ in g] for g in plain] == [[0], [1], [2]]


def test_the_wrapper_passes_through_the_models_attributes(tmp_path):
    inner = Counting()
    wrapped = CachedModel(inner, ResponseCache(tmp_path / "c.sqlite"))
    assert wrapped.fail == set() and wrapped.name == "counting"
    wrapped.name = "alias"
    assert inner.name == "alias"
    with pytest.raises(AttributeError):
        wrapped.no_such_attribute  # noqa: B018


def test_the_cache_folder_ignores_itself(tmp_path, prompts):
    path = tmp_path / ".competence" / "cache.sqlite"
    CachedModel(Counting(), ResponseCache(path)).generate(prompts[:1])
    assert (tmp_path / ".competence" / ".gitignore").read_text().splitlines()[-1] == "*"


def run(pytester, *args, timeout=120):
    """``python -m pytest ARGS`` in the pytester folder, as its own process."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def ok_keys(log):
    return {e["key"] for e in log if e["did"] == "ok"}


def archived(path: Path) -> tuple[dict, dict[str, list[dict]]]:
    """A results document without its records file's name and hash, and its records by node id:
    equal for two runs that measured the same answers."""
    document, records = read_archive(path)
    document = {k: v for k, v in document.items() if k != "records_file"}
    document["results"] = [
        {k: v for k, v in r.items() if k != "records"} for r in document["results"]
    ]
    return document, records


@pytest.mark.slow
def test_a_run_killed_mid_way_resends_only_what_is_missing(pytester, server):
    pytester.makepyfile(test_suite=SUITE.format(pairs=40, name="suite", seed=1))  # 160 prompts
    spec = f"openai:ideal@{server.url}?concurrency=4"
    cache = pytester.path / ".competence" / "cache.sqlite"
    server.control(latency=0.05)
    args = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "--competence-model",
        spec,
        "--competence-json",
        "resumed.json",
    ]
    proc = subprocess.Popen(
        args, cwd=pytester.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 60
    while len(ok_keys(server.log())) < 60 and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    first = ok_keys(server.log())  # logged as they arrive: includes those still in flight
    saved = count_rows(cache)
    assert 50 <= saved < 160 and not (pytester.path / "resumed.json").exists()
    # Lost: at most the requests in flight when it died (concurrency=4) and the answers that
    # had arrived but waited to be handed over together (models._pipe.HAND_OVER) — a few more
    # on a loaded machine. What matters is checked below: only the missing ones are resent.
    assert len(first) - saved <= 2 * 4

    server.reset()
    result = run(pytester, "--competence-model", spec, "--competence-json", "resumed.json")
    assert result.returncode == 0, result.stdout + result.stderr
    resent = [e["key"] for e in server.log()]
    assert len(resent) == len(set(resent)) == 160 - saved  # each missing prompt once, nothing else
    assert len(set(resent) & first) == len(first) - saved  # answered but not yet saved: asked again
    assert count_rows(cache) == 160

    # The same suite, uninterrupted and without a cache, writes the same document.
    server.control()
    server.reset()
    result = run(
        pytester,
        "--competence-model",
        spec,
        "--competence-json",
        "straight.json",
        "--competence-cache=off",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(server.log()) == 160
    assert archived(pytester.path / "resumed.json") == archived(pytester.path / "straight.json")


@pytest.mark.slow
def test_xdist_workers_share_the_cache(pytester, server):
    # Different seeds: the two workers ask for different prompts, at the same time.
    pytester.makepyfile(
        test_a=SUITE.format(pairs=40, name="a", seed=1),
        test_b=SUITE.format(pairs=44, name="b", seed=2),
    )
    spec = f"openai:ideal@{server.url}?concurrency=8"
    server.control(latency=0.005)
    first = run(pytester, "-n", "2", "--competence-model", spec, "--competence-json", "one.json")
    assert first.returncode == 0, first.stdout + first.stderr
    # Every prompt answered once is one row, whichever worker wrote it. (Under heavy load a
    # slow request may be retried, so count answered prompts, not requests.)
    answered = ok_keys(server.log())
    assert (
        count_rows(pytester.path / ".competence" / "cache.sqlite")
        == len(answered)
        == 2 * (40 + 44) * 2
    )
    server.reset()
    second = run(pytester, "-n", "2", "--competence-model", spec, "--competence-json", "two.json")
    assert second.returncode == 0, second.stdout + second.stderr
    assert server.log() == []  # everything from the cache
    one = archived(pytester.path / "one.json")
    assert one == archived(pytester.path / "two.json")
    assert len(one[0]["results"]) == 2


@pytest.mark.slow
def test_cache_off_sends_everything_and_read_only_sends_nothing(pytester, server):
    pytester.makepyfile(test_suite=SUITE.format(pairs=8, name="suite", seed=1))  # 32 prompts
    spec = f"openai:ideal@{server.url}"
    result = run(pytester, "--competence-model", spec, "--competence-cache=off")
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(server.log()) == 32
    cache = pytester.path / ".competence" / "cache.sqlite"
    assert not cache.exists()
    # read: the cache alone answers; an empty one answers nothing, and nothing is sent.
    result = run(pytester, "--competence-model", spec, "--competence-cache=read")
    assert result.returncode == 1, result.stdout + result.stderr
    assert len(server.log()) == 32
    assert (
        f"32 of 32 prompts of model 'openai:ideal@{server.url}' are not in the response cache, "
        f"and --competence-cache=read asks the cache only (nothing was sent): export them with "
        f"the same pytest command and --competence-batch-export=requests.jsonl"
    ) in result.stdout
    assert "start the server" not in result.stdout
    assert count_rows(cache) == 0
    pytester.makeini("[pytest]\ncompetence_cache_path = elsewhere/answers.sqlite\n")
    assert run(pytester, "--competence-model", spec).returncode == 0
    assert count_rows(pytester.path / "elsewhere" / "answers.sqlite") == 32


CACHED_MODELS = """
    import os


    def _log(name, prompts):
        with open(os.environ["COMPETENCE_TEST_CALLS"], "a") as out:
            out.write(f"{name} {len(prompts)}\\n")


    class Ideal:
        cache_identity = "ideal/1"

        def generate(self, prompts):
            _log("ideal", prompts)
            return [_ideal(p.text) for p in prompts]


    class Wrong:
        cache_identity = "wrong/1"

        def generate(self, prompts):
            _log("wrong", prompts)
            return [{"yes": "no", "no": "yes"}[_ideal(p.text)] for p in prompts]
"""


def test_offline_minimisation_and_replay_ask_the_cache_only(pytester, monkeypatch):
    """Under --competence-cache=read the model behind the cache is never called: minimisation
    replays from the cache what an earlier run asked, and a replay it cannot ask offline is a
    warning, not an error."""
    from plugin_helpers import ideal_py

    calls = pytester.path / "calls.log"
    monkeypatch.setenv("COMPETENCE_TEST_CALLS", str(calls))
    pytester.makepyfile(
        models=ideal_py(CACHED_MODELS), test_suite=SUITE.format(pairs=8, name="x", seed=1)
    )

    def run_(model: str, *args: str):
        return pytester.runpytest(
            "-p", "no:cacheprovider", f"--competence-model=py:models:{model}", *args
        )

    def called() -> list[str]:
        return calls.read_text().split() if calls.exists() else []

    run_("Ideal").assert_outcomes(passed=1)  # its design's answers are cached
    first = run_("Wrong")  # fails, minimises, saves the minimal case for the test
    first.assert_outcomes(failed=1)
    assert "minimal failing case" in first.stdout.str()
    before = called()

    # The same minimisation again (no saved case to start from): every step from the cache.
    again = run_("Wrong", "--competence-cache=read", "-o", "competence_database=none")
    again.assert_outcomes(failed=1)
    assert called() == before  # the model behind the cache was never called
    assert "not in the response cache" not in again.stdout.str()
    assert _minimal(again.stdout.str()) == _minimal(first.stdout.str())
    # Starting from the saved case asks prompts no run asked: the cache cannot answer, and says so.
    saved = run_("Wrong", "--competence-cache=read")
    saved.assert_outcomes(failed=1)
    saved.stdout.fnmatch_lines(
        [
            "*minimisation stopped: * of * prompts minimisation asked of model "
            "'py:models:Wrong' are not in the response cache, and --competence-cache=read asks "
            "the cache only (nothing was sent); a batch export holds only the design's prompts, "
            "not these: run with --competence-cache=rw to minimise*"
        ]
    )
    # No advice that loops: an export would write nothing, the design's answers being cached.
    assert "--competence-batch-export" not in saved.stdout.str()
    assert called() == before

    replay = run_("Ideal", "--competence-cache=read", "-W", "always")
    replay.assert_outcomes(passed=1)  # passed: the replay could not be asked offline
    replay.stdout.fnmatch_lines(
        [
            "*CompetenceNotReplayed: saved cases not replayed: * of * prompts the saved cases "
            "asked of model 'py:models:Ideal' are not in the response cache*run with "
            "--competence-cache=rw to replay them*"
        ]
    )
    assert "--competence-batch-export" not in replay.stdout.str()
    assert called() == before


def _minimal(output: str) -> str:
    """The minimal failing case's line of a failure message."""
    return next(line for line in output.splitlines() if "minimal failing case:" in line)


def test_answers_stored_from_several_threads_at_once_are_all_kept(tmp_path):
    """Requests asked ahead store their answers from several threads on one connection: each
    answer and its scores is one transaction, none taken into another's (nor refused)."""
    from concurrent.futures import ThreadPoolExecutor

    cache = ResponseCache(tmp_path / "cache.sqlite")

    def store(k: int) -> None:
        cache.put(f"key-{k}", f"answer-{k}", "m", {"yes": -0.5 * k, "no": -1.0})
        cache.mark_exported([f"line-{k}"], "m", "requests.jsonl")

    try:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(store, range(400)))
        keys = [f"key-{k}" for k in range(400)]
        assert cache.get_many(keys) == {f"key-{k}": f"answer-{k}" for k in range(400)}
        assert cache.scores_of(keys)["key-7"] == {"yes": -3.5, "no": -1.0}
        assert cache.count_exported_to("requests.jsonl") == 400
    finally:
        cache.close()


@pytest.mark.parametrize("ini", [False, True], ids=["no-ini", "ini"])
def test_the_cache_file_does_not_move_with_the_working_directory(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ini: bool
):
    """Without an ini file pytest's rootdir is the common folder of the working directory and
    the test paths; the cache stays in the test paths' folder (issue #49). With one, it stays
    under the ini file's folder."""
    suite = pytester.mkdir("suite")
    (suite / "sub").mkdir()
    if ini:
        pytester.makeini("[pytest]\n")
    (suite / "conftest.py").write_text(
        "from pytest_competence.plugin._wiring import cache_path\n\n\n"
        "def pytest_report_header(config):\n"
        "    return f'cache file: {cache_path(config)}'\n"
    )
    (suite / "test_x.py").write_text("def test_x():\n    pass\n")
    expected = (pytester.path if ini else suite) / ".competence" / "cache.sqlite"
    for where in (pytester.path, suite, suite / "sub"):
        monkeypatch.chdir(where)
        result = pytester.runpytest("-p", "no:cacheprovider", str(suite / "test_x.py"))
        result.stdout.fnmatch_lines([f"cache file: {expected}"])
