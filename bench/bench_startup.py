"""What having the plugin installed costs a pytest session that holds no competence test.

A trivial test file in a temporary folder (outside this repository, whose ``conftest.py``
imports numpy and scipy for its own tests) is collected with ``python -m pytest --collect-only
-q``, with the plugin and with ``-p no:competence``, alternating so that load on the machine hits
both alike. Prints the median wall seconds of each, their difference (target: within 50 ms) and
the modules the plugin adds to the session, with their own import times. Asserts nothing:

    python bench/bench_startup.py [--runs 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _machine import describe

TARGET_S = 0.050
TRIVIAL = "def test_one():\n    assert 1 + 1 == 2\n"


def run(folder: Path, plugin: bool, importtime: bool = False) -> tuple[float, str]:
    """One ``--collect-only`` run with or without the plugin (optionally with -X importtime)."""
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    command = [
        sys.executable,
        *(["-X", "importtime"] if importtime else []),
        "-m",
        "pytest",
        "--collect-only",
        "-q",
        "-p",
        "no:cacheprovider",
        *([] if plugin else ["-p", "no:competence"]),
    ]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=environ)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"pytest failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return seconds, done.stderr


def imported(stderr: str) -> dict[str, int]:
    """Module → its own import time in microseconds, from ``-X importtime`` output."""
    out = {}
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            own, _, name = line[len("import time:") :].split("|")
            if own.strip().isdigit():
                out[name.strip()] = int(own)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="Runs of each (default 10)")
    args = parser.parse_args()
    print(describe())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "test_trivial.py").write_text(TRIVIAL)
        run(folder, True), run(folder, False)  # warm the bytecode caches and the disk
        with_plugin, without = [], []
        for _ in range(max(1, args.runs)):
            with_plugin.append(run(folder, True)[0])
            without.append(run(folder, False)[0])
        added = imported(run(folder, True, importtime=True)[1])
        for name in imported(run(folder, False, importtime=True)[1]):
            added.pop(name, None)
    on, off = statistics.median(with_plugin), statistics.median(without)
    print(f"pytest --collect-only -q on one trivial test, median of {len(with_plugin)} runs each")
    print(f"  plugin installed     {on:7.3f} s")
    print(f"  -p no:competence     {off:7.3f} s")
    print(
        f"  difference           {1000 * (on - off):7.1f} ms (target within "
        f"{1000 * TARGET_S:.0f} ms)"
    )
    heavy = [m for m in ("numpy", "scipy", "httpx", "hypothesis.strategies") if m in added]
    print(
        f"modules the plugin adds: {len(added)}, {sum(added.values()) / 1000:.1f} ms of their "
        f"own import time; heavy ones among them: {', '.join(heavy) or 'none'}"
    )
    for name, micros in sorted(added.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {micros / 1000:6.1f} ms  {name}")


if __name__ == "__main__":
    main()
