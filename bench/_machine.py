"""What a benchmark ran on, printed first by every script in bench/.

Importing it also lets the processes a benchmark starts cache their bytecode, as users' do: with
``PYTHONDONTWRITEBYTECODE`` set (as on some CI and sandbox images) every ``python -m pytest``
compiles, and assertion-rewrites, every module it imports — pytest's and the plugin's — afresh,
which once doubled the measured start-up (collect-only 2.0 s of CPU against 0.8 s cached).
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

import numpy as np

#: Whether this environment had turned bytecode caching off (said in the header line).
BYTECODE_WAS_OFF = bool(os.environ.pop("PYTHONDONTWRITEBYTECODE", None))


def cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    return platform.processor() or "unknown"


def describe(*extra: str) -> str:
    """``python X, numpy Y, …, cpu Z`` for the header line of a benchmark."""
    parts = [
        f"python {platform.python_version()}",
        f"numpy {np.__version__}",
        *extra,
        f"cpu {cpu_model()}",
    ]
    if BYTECODE_WAS_OFF:
        parts.append("PYTHONDONTWRITEBYTECODE unset for the runs (bytecode cached, as users run)")
    return ", ".join(parts)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far, all its threads (Linux ``/proc``; 0
    elsewhere)."""
    stat = Path(f"/proc/{pid}/stat")
    if not stat.exists():
        return 0.0
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
