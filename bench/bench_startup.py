"""What having the plugin installed costs a pytest session that holds no competence test.

A trivial test file in a temporary folder (outside this repository: its ``conftest.py`` and
settings stay out) is collected with ``python -m pytest --collect-only -q``, with the plugin and
with ``-p no:competence``, alternating so that load on the machine hits both alike. Prints the
median wall and CPU seconds of each, their differences (target: wall within 50 ms; the CPU
difference moves less with the machine's load) and the modules the plugin adds to the session,
with their own import times. Asserts nothing:

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


def run(folder: Path, plugin: bool, importtime: bool = False) -> tuple[float, float, str]:
    """One ``--collect-only`` run with or without the plugin (optionally with -X importtime):
    wall seconds, CPU seconds (user + system) and its stderr."""
    import resource

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
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=environ)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"pytest failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu, done.stderr


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
            with_plugin.append(run(folder, True)[:2])
            without.append(run(folder, False)[:2])
        added = imported(run(folder, True, importtime=True)[2])
        for name in imported(run(folder, False, importtime=True)[2]):
            added.pop(name, None)
    on, off = ([statistics.median(x) for x in zip(*runs)] for runs in (with_plugin, without))
    print(f"pytest --collect-only -q on one trivial test, median of {len(with_plugin)} runs each")
    print("                         wall s   CPU s")
    print(f"  plugin installed     {on[0]:7.3f} {on[1]:7.3f}")
    print(f"  -p no:competence     {off[0]:7.3f} {off[1]:7.3f}")
    print(
        f"  difference, ms       {1000 * (on[0] - off[0]):7.1f} {1000 * (on[1] - off[1]):7.1f} "
        f"(target: wall within {1000 * TARGET_S:.0f} ms; CPU is the steadier on a loaded machine)"
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
