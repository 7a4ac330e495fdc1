"""Peak memory of a competence run as the design grows: does anything scale with the prompts?

One competence test on ordering at the paper's base grid (n ∈ {4, 8, …, 1024}, original +
equivalent), the pairs per level set for about 10k, 100k and (with ``--million``) 1M prompts, run
as a real ``python -m pytest`` process against a ``py:`` model that answers "yes" instantly
(with ``--scored``, through candidate scoring: each answer carries its candidates' scores, which
the evaluation keeps as a float32 array and decomposes into δ and s). For each size it prints
the child's peak RSS and CPU seconds, with no report file and with ``--competence-json`` (and
``--competence-html`` with ``--html``), then the 100k / 10k ratios (the issue's targets: RSS ≤
1.5, CPU ≤ 11). Asserts nothing:

    python bench/bench_memory.py [--million] [--html] [--scored] [--levels 4,8,16,32,64]
                                 [--sizes N,M] [--no-report-only] [--server]

``--server`` asks the local fake server (``tests/fake_server.py``, a process of its own, no
latency) instead, as ``openai:ideal@URL``, over the request stream: the prompts are split over
two tests, so while the first is evaluated the second's design is asked ahead
(``competence_lookahead``) — what the stream holds in flight is in the figure. The server's own
memory and CPU are not counted.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from _machine import describe

BASE_GRID = (4, 8, 16, 32, 64, 128, 256, 512, 1024)

MODEL = """
class Instant:
    name = "instant"

    def generate(self, prompts):
        return ["yes"] * len(prompts)
"""

#: The same instant model answering through candidate scoring: the scores vary with the prompt.
SCORED_MODEL = """
from pytest_competence.models.readout import best_candidate


class Instant:
    name = "instant"

    def generate(self, prompts):
        return [
            best_candidate({"yes": -(len(p.text) % 7) / 10, "no": -0.35}) for p in prompts
        ]
"""

SUITE = """
import pytest

@pytest.mark.competence(levels={levels}, pairs={pairs}, require="accuracy >= 0")
def test_sweep(competence):
    pass
"""

#: Against a server: the same prompts over two tests, so the second is asked ahead.
SERVER_SUITE = """
import pytest

@pytest.mark.competence(levels={levels}, pairs={pairs}, seed=1, require="accuracy >= 0")
def test_first(competence):
    pass

@pytest.mark.competence(levels={levels}, pairs={pairs}, seed=2, require="accuracy >= 0")
def test_second(competence):
    pass
"""

# The child's own peak RSS and CPU: a wrapper whose only child is the pytest process.
_WRAPPER = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])\n"
    "print(done.returncode, u.ru_maxrss, u.ru_utime + u.ru_stime)\n"
)


def pairs_for(prompts: int, levels: int, presentations: int = 2) -> int:
    """Pairs per level (a multiple of ordering's 4 balanced cells) for about ``prompts``."""
    return max(4, round(prompts / (levels * presentations) / 4) * 4)


def measure(
    folder: Path,
    levels: tuple[int, ...],
    pairs: int,
    *args: str,
    scored: bool = False,
    server: str | None = None,
) -> tuple[float, float]:
    """Peak RSS (MB) and CPU seconds of ``python -m pytest`` over one sweep test in ``folder``
    (``scored``: the model answers through candidate scoring; ``server``: the fake server's
    URL, asked over two tests of ``pairs`` each)."""
    (folder / "instant.py").write_text(SCORED_MODEL if scored else MODEL)
    if server is None:
        (folder / "test_sweep.py").write_text(SUITE.format(levels=list(levels), pairs=pairs))
        model = "py:instant.py:Instant"
    else:
        (folder / "test_sweep.py").write_text(SERVER_SUITE.format(levels=list(levels), pairs=pairs))
        model = f"openai:ideal@{server}?concurrency=64"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "--competence-model",
        model,
        "--competence-cache",
        "off",
        "-o",
        "competence_database=none",
        *args,
    ]
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *command], cwd=folder, capture_output=True, text=True
    )
    code, rss_kb, cpu = done.stdout.split()
    if code != "0":
        raise SystemExit(f"pytest failed ({code}):\n{done.stderr}")
    return int(rss_kb) / 1024, float(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--million", action="store_true", help="Also run 1M prompts")
    parser.add_argument("--html", action="store_true", help="Add --competence-html to the JSON run")
    parser.add_argument(
        "--levels",
        default=",".join(map(str, BASE_GRID)),
        help="Comma-separated levels (default: the base grid)",
    )
    parser.add_argument(
        "--sizes",
        default="10000,100000",
        help="Comma-separated prompt counts (default: 10000,100000)",
    )
    parser.add_argument(
        "--no-report-only", action="store_true", help="Skip the runs that write a JSON report"
    )
    parser.add_argument(
        "--scored", action="store_true", help="Answer through candidate scoring (score arrays)"
    )
    parser.add_argument(
        "--server", action="store_true", help="Ask the local fake server over the request stream"
    )
    args = parser.parse_args()
    if args.server and args.scored:
        parser.error("--server answers by generation; leave out --scored")
    server = None
    if args.server:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        from fake_server import FakeServer

        server = FakeServer()
    try:
        run(args, None if server is None else server.url)
    finally:
        if server is not None:
            server.close()


def run(args: argparse.Namespace, server: str | None) -> None:
    """Every size, with and without a report, then the ratios."""
    levels = tuple(int(n) for n in args.levels.split(","))
    print(describe())
    sizes = [int(x) for x in args.sizes.split(",")] + ([1_000_000] if args.million else [])
    report = ["--competence-json", "out.json"] + (
        ["--competence-html", "out.html"] if args.html else []
    )
    rows: dict[tuple[str, int], tuple[float, float]] = {}
    how = "scoring (readout=score)" if args.scored else "generating"
    who = "instant py: model" if server is None else "fake server, two tests, asked ahead"
    print(f"ordering, levels {list(levels)}, original + equivalent, {who}, {how}")
    print(f"{'prompts':>10} {'reports':>14} {'peak RSS MB':>12} {'CPU s':>8}")
    for size in sizes:
        tests = 1 if server is None else 2
        pairs = pairs_for(size, tests * len(levels))
        prompts = tests * pairs * len(levels) * 2
        runs = [("none", [])] + (
            [] if args.no_report_only else [("json" + ("+html" if args.html else ""), report)]
        )
        for label, extra in runs:
            with tempfile.TemporaryDirectory() as tmp:
                rss, cpu = measure(
                    Path(tmp), levels, pairs, *extra, scored=args.scored, server=server
                )
            rows[label, size] = (rss, cpu)
            print(f"{prompts:>10,} {label:>14} {rss:12.0f} {cpu:8.1f}", flush=True)
    for label in dict.fromkeys(k for k, _ in rows):
        if (label, 10_000) not in rows or (label, 100_000) not in rows:
            continue
        (r10, c10), (r100, c100) = rows[label, 10_000], rows[label, 100_000]
        print(f"100k / 10k, reports {label}: RSS x{r100 / r10:.2f}, CPU x{c100 / c10:.2f}")


if __name__ == "__main__":
    main()
