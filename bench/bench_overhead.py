"""End-to-end plugin overhead: the paper's base grid against a model that answers instantly.

One competence test over n ∈ {4, 8, …, 1024}, 200 instances per level, original + equivalent —
3,600 prompts — run as a real ``python -m pytest`` process. The model (a ``py:`` object) answers
every prompt with its gold answer and records the seconds spent inside ``generate``; everything
else is the plugin and pytest: design, evaluation, profiles, statistics, reports. A second row
runs the same grid as an ``openai:`` model whose 3,600 answers all come from the response cache
(filled by a warm-up run against the local fake server), the cost of a fully cached rerun.
A CPU row compares the pytest run with the same design through the Python API (``design``,
``evaluate``, ``profile``) in a fresh process. Prints figures, asserts nothing:

    python bench/bench_overhead.py [--repeat 3] [--pairs 200]

``--pairs`` sets the instances per level (200: the paper's grid): pytest's own start-up is a fixed
cost, so the CPU ratio of the pytest run to the Python API falls as the design grows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _machine import describe

TESTS = Path(__file__).resolve().parents[1] / "tests"

SUITE = """
import pytest

@pytest.mark.competence(levels=[4, 8, 16, 32, 64, 128, 256, 512, 1024], pairs=200)
def test_base_grid(competence):
    pass
"""

MODEL = """
import json, os, time

class Instant:
    name = "instant"

    def generate(self, prompts):
        start = time.perf_counter()
        answers = [p.gold for p in prompts]
        with open(os.environ["MODEL_SECONDS"], "a") as out:
            out.write(json.dumps([len(prompts), time.perf_counter() - start]) + "\\n")
        return answers
"""


API = """
import os
from pytest_competence.engine.evaluate import evaluate
from pytest_competence.engine.profile import profile
from pytest_competence.strategies import Ordering
from instant import Instant

os.environ.setdefault("MODEL_SECONDS", os.devnull)
family = Ordering()
items = family.design(levels=[4, 8, 16, 32, 64, 128, 256, 512, 1024], pairs=200, seed=1,
                      presentations=["original", "equivalent"])
profile(evaluate(family, items, Instant()))
"""


def child_cpu(command: list[str], folder: Path, env: dict[str, str] | None = None) -> float:
    """CPU seconds (user + system) of one child process ``command`` run in ``folder``."""
    import resource

    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        command, cwd=folder, capture_output=True, text=True, env={**environ, **(env or {})}
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{command} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cpu_rows(folder: Path, repeat: int) -> str:
    """The CPU of the pytest run against the same design through the Python API, as a line."""
    pytest_command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    plugin_run, api_run, bare = [], [], []
    env = {"MODEL_SECONDS": os.devnull}
    for _ in range(repeat):  # in turns, so that load on a shared machine falls on all alike
        plugin_run.append(
            child_cpu(pytest_command + ["--competence-model", "py:instant.py:Instant"], folder, env)
        )
        api_run.append(child_cpu([sys.executable, "api.py"], folder))
        bare.append(child_cpu(pytest_command + ["-p", "no:competence"], folder / "empty"))
    run, api, start = (statistics.median(x) for x in (plugin_run, api_run, bare))
    return (
        f"CPU, medians of {repeat}: pytest run {run:.2f} s, the same design through the "
        f"Python API (design, evaluate, profile) {api:.2f} s: {run / api:.2f}x (issue 30's "
        f"targets: <= 1.5x on the base grid, <= 1.2x at 36,000 prompts); pytest's own "
        f"start-up (empty test, plugin off) {start:.2f} s, the run "
        f"without it {run - start:.2f} s: {(run - start) / api:.2f}x"
    )


def pytest_run(folder: Path, *args: str, env: dict[str, str] | None = None) -> float:
    """Wall seconds of one ``python -m pytest`` process in ``folder``."""

    # Bytecode caching on, as on a user's machine: without it pytest re-rewrites the asserts of
    # every plugin module (this package's and Hypothesis's) in every run, about 2 s here.
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        env={**environ, **(env or {})},
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"pytest failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="Timed runs per row")
    parser.add_argument(
        "--pairs", type=int, default=200, help="Instances per level, a multiple of 4 (default 200)"
    )
    args = parser.parse_args()
    prompts = 9 * args.pairs * 2
    print(describe())
    sys.path.insert(0, str(TESTS))
    from fake_server import FakeServer

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "instant.py").write_text(MODEL)
        (folder / "empty").mkdir()
        (folder / "empty" / "test_empty.py").write_text("def test_nothing():\n    pass\n")
        (folder / "test_grid.py").write_text(SUITE.replace("pairs=200", f"pairs={args.pairs}"))
        seconds_file = folder / "model_seconds.jsonl"
        env = {"MODEL_SECONDS": str(seconds_file)}
        pytest_run(folder, "--competence-model", "py:instant.py:Instant", env=env)  # warm-up
        startup = [pytest_run(folder / "empty", "-p", "no:competence") for _ in range(args.repeat)]
        reports = [
            "--competence-json",
            "out.json",
            "--competence-html",
            "out.html",
            "--competence-markdown",
            "out.md",
        ]
        for label, extra in (("no report files", []), ("JSON + HTML + Markdown", reports)):
            walls, inside = [], []
            for _ in range(args.repeat):
                seconds_file.unlink(missing_ok=True)
                walls.append(
                    pytest_run(
                        folder, "--competence-model", "py:instant.py:Instant", *extra, env=env
                    )
                )
                calls = [json.loads(line) for line in seconds_file.read_text().splitlines()]
                assert sum(n for n, _ in calls) == prompts, calls
                inside.append(sum(s for _, s in calls))
            rows.append((f"py: instant, {label}", walls, inside))
        (folder / "api.py").write_text(API.replace("pairs=200", f"pairs={args.pairs}"))
        cpu = cpu_rows(folder, args.repeat)
        server = FakeServer()
        try:
            spec = f"openai:cached@{server.url}"
            pytest_run(folder, "--competence-model", spec)  # fills the cache
            server.reset()
            walls = [pytest_run(folder, "--competence-model", spec) for _ in range(args.repeat)]
            assert server.log() == [], "the cached rerun sent requests"
            rows.append((f"openai: all {prompts:,} from the cache", walls, [0.0] * len(walls)))
        finally:
            server.close()

    base = statistics.median(startup)
    print(
        f"grid: 9 levels x {args.pairs} instances x 2 presentations = {prompts:,} prompts, one test"
    )
    print(f"pytest start-up alone (one empty test, plugin off): {base:.2f} s median")
    print(f"{'':36}{'wall s':>8}{'model ms':>10}{'outside':>9}{'plugin s':>10}")
    for label, walls, inside in rows:
        wall, model = statistics.median(walls), statistics.median(inside)
        print(
            f"{label:36}{wall:8.2f}{model * 1e3:10.2f}{(wall - model) / wall:9.2%}"
            f"{wall - model - base:10.2f}"
        )
    print(
        f"(medians of {args.repeat} fresh processes; 'outside' = share of the wall time not "
        f"spent in the model; 'plugin s' = wall - model - start-up)"
    )
    print(cpu)


if __name__ == "__main__":
    main()
