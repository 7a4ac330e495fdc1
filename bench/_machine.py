"""What a benchmark ran on, printed first by every script in bench/."""

from __future__ import annotations

import platform
from pathlib import Path

import numpy as np


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
    return ", ".join(parts)
