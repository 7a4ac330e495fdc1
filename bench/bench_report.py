"""Peak memory of writing the JSON report: the records file streamed, against the old whole copy.

The session's part files are synthetic here (one per result, JSON Lines of records shaped as
``_records._record`` builds them, a prompt of ``--prompt-chars`` characters each). Each figure is
one fresh process that writes the report the way the plugin does at the end of a session:

* ``streamed``: what ``CompetenceSession._write_reports`` does now — the figures document and a
  records file copied line by line from the part files (``--gzip``: compressed on the fly);
* ``whole`` (before): the records of every part file (then one JSON list each) loaded into the
  document, redacted as one copy, and the whole document dumped as one string — what it did
  before the records file.

``--pytest N`` measures a whole run instead: pytest on an ordering test of N prompts (levels
4–64, an instant ``py:`` model answering "yes"), with and without ``--competence-json``, peak RSS
of the pytest process (``ru_maxrss``). The difference is what the report costs.

Peak RSS is the writing process's ``VmHWM`` (reset just before writing, so the imports' own peak
hides nothing), less its RSS before writing. Linux only. Run on demand, not under pytest; it
asserts nothing:

    python bench/bench_report.py [--sizes 10000,100000] [--prompt-chars 1000] [--gzip]
                                 [--streamed-only] [--pytest 100000]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from _machine import describe

RESULTS = 4  # test × model results the records are spread over


def _record(i: int, prompt_chars: int) -> dict[str, Any]:
    """A record with the fields and sizes ``_records._record`` gives an ordering prompt."""
    text = (f"prompt {i}: " + "Alice stands in front of Bob. " * (prompt_chars // 30))[
        :prompt_chars
    ]
    return {
        "instance_id": f"ordering/seed=1/n=64/{i // 2}",
        "params": {
            "n": 64,
            "vocabulary": "front_behind",
            "protocol": "P",
            "query": "endpoints",
            "distractors": 0.0,
            "names": "pool",
            "names_line": "shuffled",
            "cell": "forward/yes",
        },
        "presentation": ("original", "equivalent")[i % 2],
        "readout": "generate",
        "answer_map": {},
        "prompt_sha256": f"{i:064x}",
        "system": "You are a helpful assistant. Answer logical reasoning questions concisely.",
        "prompt": text,
        "raw": "yes" if i % 3 else "no, because " + "x" * 40,
        "parsed": "yes" if i % 3 else "no",
        "valid": True,
        "reason": None,
        "error": None,
        "gold": "yes",
        "correct": bool(i % 3),
        "answer_space": ["yes", "no"],
        "attempts": [],
    }


def make_parts(folder: Path, records: int, prompt_chars: int) -> list[dict[str, Any]]:
    """Part files as the session leaves them, and the results (figures only) that name them."""
    from pytest_competence.engine.files import json_text

    results = []
    per = records // RESULTS
    for k in range(RESULTS):
        name = f"part{k}.jsonl"
        # The part file now (JSON Lines), and as it was before (one JSON list): the same records.
        with (
            open(folder / name, "w", encoding="utf-8") as out,
            open(folder / f"part{k}.json", "w", encoding="utf-8") as old,
        ):
            for i in range(k * per, (k + 1) * per):
                line = json_text(_record(i, prompt_chars))
                out.write(line + "\n")
                old.write(("[" if i == k * per else ",") + line)
            old.write("]")
        results.append(
            {
                "nodeid": f"test_x.py::test_{k}[ref:ideal]",
                "model": "ref:ideal",
                "test": f"test_x.py::test_{k}[*]",
                "records_file": name,
                "summary": {},
                "levels": [],
                "instances": {
                    "ids": [f"ordering/seed=1/n=64/{i}" for i in range(per // 2)],
                    "correct": {"original": "01" * (per // 4)},
                },
            }
        )
    return results


def _status_kb(key: str) -> int:
    match = re.search(key + r":\s+(\d+)", Path("/proc/self/status").read_text())
    assert match is not None, key
    return int(match[1])


def write_report(
    how: str, folder: str, results: list[dict[str, Any]], gzip: bool
) -> tuple[float, float, int]:
    """In this (fresh) process: extra peak RSS in MB, wall seconds, bytes written."""
    from pytest_competence.engine.files import json_text, write_text_atomic
    from pytest_competence.engine.redaction import redact_all
    from pytest_competence.engine.settings import records_name  # noqa: F401  (imported before measuring)
    from pytest_competence.report import write_outputs
    from pytest_competence.report._records_file import part_lines

    parts = Path(folder)
    out = parts / "out"
    out.mkdir(exist_ok=True)
    Path("/proc/self/clear_refs").write_text("5")  # the peak starts again from here
    base = _status_kb("VmRSS")
    start = time.perf_counter()
    document: dict[str, Any] = {
        "schema": "bench",
        "models": ["ref:ideal"],
        "results": [],
        "comparisons": [],
    }
    if how == "whole":  # before: every record in the document, one copy redacted, one string
        for r in results:
            r = dict(r)
            old = parts / Path(r.pop("records_file")).with_suffix(".json")
            r["records"] = json.loads(old.read_text("utf-8"))
            document["results"].append(r)
        document = redact_all(document, ["sk-not-there"])
        write_text_atomic(out / "r.json", json_text(document, indent=1))
    else:
        document["results"] = [{k: v for k, v in r.items() if k != "records_file"} for r in results]
        document = redact_all(document, ["sk-not-there"])
        sources = (
            (r["nodeid"], r["model"], part_lines(parts / r["records_file"])) for r in results
        )
        write_outputs(
            document,
            json_path=str(out / "r.json"),
            records_path=str(out / ("r.records.jsonl.gz" if gzip else "r.records.jsonl")),
            records=sources,
        )
    wall = time.perf_counter() - start
    peak = _status_kb("VmHWM")
    written = sum(p.stat().st_size for p in out.iterdir())
    shutil.rmtree(out)
    return (peak - base) / 1024, wall, written


def in_fresh_process(*args: Any) -> tuple[float, float, int]:
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
        return pool.submit(write_report, *args).result()


PYTEST_LEVELS = [4, 8, 16, 32, 64]


def pytest_run(prompts: int, *extra: str) -> tuple[float, float]:
    """Peak RSS (MB) and wall seconds of a pytest run of ``prompts`` prompts in a fresh folder."""
    pairs = prompts // (len(PYTEST_LEVELS) * 2)
    with tempfile.TemporaryDirectory(prefix="bench-report-") as folder:
        Path(folder, "instant.py").write_text(
            "def answer(prompts):\n    return ['yes'] * len(prompts)\n"
        )
        Path(folder, "test_big.py").write_text(
            f"import pytest\n\n@pytest.mark.competence(levels={PYTEST_LEVELS}, pairs={pairs})\n"
            f"def test_big(competence):\n    pass\n"
        )
        code = (
            "import resource, subprocess, sys; subprocess.run(sys.argv[1:]); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
        )
        start = time.perf_counter()
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                code,
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--competence-model=py:instant:answer",
                "--competence-cache=off",
                "-o",
                "competence_database=none",
                "-o",
                "competence_shrink_calls=0",
                "-o",
                f"competence_max_prompts={max(prompts, 1)}",
                *extra,
            ],
            cwd=folder,
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONPATH=folder),
        )
        wall = time.perf_counter() - start
        return int(done.stdout.split()[-1]) / 1024, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        default="10000,100000",
        help="Records to write, comma-separated (default 10000,100000)",
    )
    parser.add_argument(
        "--prompt-chars", type=int, default=1000, help="Characters of each prompt (default 1000)"
    )
    parser.add_argument("--gzip", action="store_true", help="Compress the records file")
    parser.add_argument(
        "--streamed-only",
        action="store_true",
        help="Skip the whole-document copy (minutes at 100,000 records)",
    )
    parser.add_argument(
        "--pytest",
        type=int,
        default=0,
        metavar="N",
        help="Instead: peak RSS of a pytest run of N prompts with and without --competence-json",
    )
    args = parser.parse_args()
    print(describe())
    if args.pytest:
        bare, bare_wall = pytest_run(args.pytest)
        report, report_wall = pytest_run(args.pytest, "--competence-json=r.json")
        print(
            f"pytest, {args.pytest:,} prompts: peak {bare:.0f} MB ({bare_wall:.1f} s) without "
            f"a report, {report:.0f} MB ({report_wall:.1f} s) with --competence-json: "
            f"{report / bare:.2f}x"
        )
        return
    print(f"{'records':>9} {'how':>9} {'peak MB':>9} {'wall s':>8} {'written MB':>11}")
    peaks: dict[tuple[int, str], float] = {}
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="bench-report-") as folder:
            results = make_parts(Path(folder), size, args.prompt_chars)
            for how in ("streamed",) if args.streamed_only else ("whole", "streamed"):
                peak, wall, written = in_fresh_process(how, folder, results, args.gzip)
                peaks[size, how] = peak
                print(f"{size:>9,} {how:>9} {peak:>9.1f} {wall:>8.2f} {written / 2**20:>11.1f}")
    for size in sorted({s for s, how in peaks if how == "whole"}):
        ratio = peaks[size, "whole"] / max(peaks[size, "streamed"], 0.1)
        print(
            f"{size:,} records: streamed peak {peaks[size, 'streamed']:.1f} MB, "
            f"{ratio:.0f}x below the whole copy ({peaks[size, 'whole']:.1f} MB)"
        )
    sizes = sorted({s for s, _ in peaks})
    if len(sizes) > 1:
        first, last = sizes[0], sizes[-1]
        print(
            f"streamed peak, {last:,} vs {first:,} records: "
            f"{peaks[last, 'streamed'] / max(peaks[first, 'streamed'], 0.1):.2f}x"
        )
        if (last, "whole") in peaks:
            print(
                f"whole copy, {last:,} vs {first:,} records: "
                f"{peaks[last, 'whole'] / max(peaks[first, 'whole'], 0.1):.2f}x"
            )


if __name__ == "__main__":
    main()
