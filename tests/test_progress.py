"""The progress line: what it says, when it shows, and that pytest's output survives it.

Unit tests drive :class:`Progress` with a fake clock and a fake terminal; the end-to-end tests run
pytest in a pseudo-terminal against the slow fake server and read what a person would see.
"""

from __future__ import annotations

import os
import re
import sys
from types import SimpleNamespace

import pytest

from pytest_competence.engine.progress import LABEL, Progress, label
from pytest_competence.plugin._terminal import progress_enabled
from server_fixtures import fake_server_process, server  # noqa: F401


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def make(total=1000, room=120, **kw):
    clock, written = Clock(), []
    bar = Progress("openai:m", total, written.append, lambda: room, clock=clock, **kw)
    return bar, clock, written


def test_nothing_shows_for_a_quick_evaluation():
    bar, clock, written = make(total=10)
    for _ in range(10):
        clock.now += 0.05
        bar.advance()
    bar.close()
    assert written == []


def test_done_rate_and_eta_after_a_second():
    bar, clock, written = make()
    clock.now += 0.1
    bar.advance(100)  # a burst of cached answers, before the rate is measured
    for _ in range(40):
        clock.now += 0.05  # then 20 answers per second
        bar.advance()
    line = written[-1]
    # Drawn at most every 0.2 s: the last line may be an answer or two behind.
    assert re.match(r"  competence openai:m: 1(39|40)/1,000  20/s  ETA 0:43\x1b\[K", line), line
    assert line.endswith("\x1b[K" + "\b" * (len(line) - len("\x1b[K") - line.count("\b")))
    bar.close()
    assert written[-1] == "\x1b[K"


def test_redraws_are_throttled():
    bar, clock, written = make(every=0.2)
    clock.now += 1.0
    for _ in range(100):
        clock.now += 0.01
        bar.advance()
    assert 4 <= len(written) <= 6


def test_the_line_fits_the_room_left_or_stays_away():
    """Short of room, the name goes first, then the end of the line; with under 20 columns
    nothing is drawn."""
    bar, clock, written = make(room=40)
    clock.now += 0.6
    bar.advance()
    clock.now += 1.0
    bar.advance()
    drawn = written[-1].split("\x1b[K")[0]
    assert drawn == "  competence: 2/1,000  1.0/s  ETA 16:38", drawn  # the figures, not the name
    bar, clock, written = make(room=30)
    clock.now += 0.6
    bar.advance()
    clock.now += 1.0
    bar.advance()
    drawn = written[-1].split("\x1b[K")[0]
    assert len(drawn) <= 30 - 3 + 2 and drawn.endswith("...")
    bar, clock, written = make(room=15)
    clock.now += 2.0
    bar.advance()
    assert written == []


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("openai:qwen@http://127.0.0.1:8000/v1", "openai:qwen@…"),
        ("openai:Qwen/Qwen2.5-7B-Instruct@http://gpu-node-17:8000/v1", "openai:Qwen/Qwen2.5…"),
        ("py:mymodel.py:answer", "py:mymodel.py:answer"),
    ],
)
def test_a_long_model_name_is_cut_so_the_figures_fit(name, shown):
    """A server's address never pushes the rate and the time left off an 80-column line."""
    assert label(name) == shown and len(shown) <= LABEL
    clock, written = Clock(), []
    room = 80 - len("tests/test_suite.py .")
    bar = Progress(name, 100_000, written.append, lambda: room, clock=clock)
    clock.now += 0.6
    bar.advance(1000)
    clock.now += 1.0
    bar.advance(1000)
    drawn = written[-1].split("\x1b[K")[0]
    assert drawn.endswith(": 2,000/100,000  1,000/s  ETA 1:38"), drawn  # every figure, whole
    assert drawn in (f"  competence {shown}: 2,000/100,000  1,000/s  ETA 1:38",) or (
        len(f"  competence {shown}: 2,000/100,000  1,000/s  ETA 1:38") > room - 3
    )


def fake_config(verbose=0, tty=True, markup=True, worker=False, old_pytest=False):
    reporter = SimpleNamespace(isatty=tty if old_pytest else (lambda: tty), hasmarkup=markup)
    config = SimpleNamespace(
        getoption=lambda name: verbose,
        pluginmanager=SimpleNamespace(get_plugin=lambda name: reporter),
    )
    if worker:
        config.workerinput = {"workerid": "gw0"}
    return config


@pytest.mark.parametrize(
    ("settings", "shown"),
    [
        ({}, True),
        ({"old_pytest": True}, True),
        ({"verbose": 1}, True),
        ({"verbose": -1}, False),
        ({"tty": False}, False),
        ({"markup": False}, False),
        ({"worker": True}, False),
    ],
)
def test_progress_shows_only_on_a_terminal_not_quiet_not_on_workers(settings, shown):
    assert progress_enabled(fake_config(**settings)) is shown


SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4], pairs=40)
    def test_slow(competence):
        pass
"""


def run_in_terminal(pytester, *args):
    """Run pytest with its output on a pseudo-terminal; return everything it wrote."""
    import pty
    import subprocess

    main, child = pty.openpty()
    env = dict(os.environ, COLUMNS="160", LINES="40", TERM="xterm")
    env.pop("NO_COLOR", None)
    env.pop("PY_COLORS", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=pytester.path,
        stdin=child,
        stdout=child,
        stderr=child,
        env=env,
    )
    os.close(child)
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(main)
    return b"".join(chunks).decode("utf-8", "replace")


def screen(raw: str) -> str:
    """What the terminal shows at the end: backspaces step back, ESC[K clears, colours go."""
    lines, line, col = [], [], 0
    raw = re.sub(r"\x1b\[[0-9;]*m", "", raw)
    i = 0
    while i < len(raw):
        if raw.startswith("\x1b[K", i):
            del line[col:]
            i += 3
            continue
        ch = raw[i]
        if ch == "\n":
            lines.append("".join(line))
            line, col = [], 0
        elif ch == "\r":
            col = 0
        elif ch == "\b":
            col = max(0, col - 1)
        else:
            line[col : col + 1] = [ch]
            col += 1
        i += 1
    lines.append("".join(line))
    return "\n".join(lines)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a POSIX pseudo-terminal")
def test_progress_shows_on_a_terminal_and_leaves_the_output_intact(pytester, server):
    pytester.makepyfile(test_suite=SUITE)  # 80 prompts, 2 at a time, 40 ms each: ~1.6 s
    server.control(latency=0.04)
    spec = f"openai:ideal@{server.url}?concurrency=2"
    raw = run_in_terminal(pytester, "--competence-model", spec, "--competence-cache=off")
    assert re.search(r"competence openai:ideal@\S+: \d+/80  [\d.]+/s  ETA \d:\d\d", raw), raw
    shown = screen(raw)
    assert "competence openai" not in shown  # erased when the evaluation ended
    assert re.search(r"^test_suite\.py \.\s+\[100%\]$", shown, re.M), shown
    assert "1 passed" in shown

    server.reset()
    quiet = run_in_terminal(pytester, "-q", "--competence-model", spec, "--competence-cache=off")
    assert "competence openai" not in quiet and "1 passed" in quiet
    assert len(server.log()) == 80


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a POSIX pseudo-terminal")
def test_a_model_without_a_stream_shows_progress_batch_by_batch(pytester):
    """A py: model answers whole batches: the line moves with each batch it answers."""
    pytester.makepyfile(
        slow="""
        import time

        def answer(prompts):
            time.sleep(0.6)
            return ["yes" for _ in prompts]
    """,
        test_suite="""
        import pytest

        @pytest.mark.competence(levels=[4, 8, 16, 32, 64, 128], pairs=400)
        def test_slow(competence):
            pass
    """,
    )
    raw = run_in_terminal(
        pytester, "--competence-model=py:slow.py:answer", "-o", "competence_shrink_calls=0"
    )
    # 4,800 prompts in chunks of about a thousand, 0.6 s each: drawn after the first second.
    assert re.search(r"competence py:slow\.py:answer: [\d,]+/4,800", raw), raw
    assert "competence py:slow" not in screen(raw)  # erased when the evaluation ended
