"""Repository-wide test settings: Hypothesis profiles for CI and local development.

Select one with ``HYPOTHESIS_PROFILE=dev``; CI (``CI=true``) uses ``ci`` automatically.
"""

from __future__ import annotations

import os

import numpy.fft  # noqa: F401
import numpy.linalg  # noqa: F401
import scipy.stats  # noqa: F401
from hypothesis import HealthCheck, settings

# pytester restores sys.modules after each in-process run, so a module first imported inside one
# is imported afresh by the next test — and numpy's C extensions refuse a second load ("cannot
# load module more than once per process": numpy.fft through scipy.stats, datasets, trl), as
# does torch's operator registry (torch.distributed, through transformers' Llama, see
# pytest_collection_modifyitems). They are imported here, once, before any test.
TORCH_TESTS = {
    "test_hf.py",
    "test_learned.py",
    "test_real_server.py",
    "test_train.py",
    "test_training.py",
    "test_trl.py",
}


def _load_the_http_stack() -> None:
    """httpx maps httpcore's exceptions through a table built on first use: if httpcore's modules
    were imported afresh inside a pytester run while httpx's stayed, a refused connection would
    surface as an unmapped httpcore error. One refused request loads every module the async
    client needs, here, before any test."""
    import asyncio
    import socket

    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    async def refused() -> None:
        async with httpx.AsyncClient() as client:
            try:
                await client.post(f"http://127.0.0.1:{port}/", json={}, timeout=2)
            except httpx.HTTPError:
                pass

    asyncio.run(refused())


_load_the_http_stack()

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", help="Also run tests marked slow (CI does)")


def pytest_collection_modifyitems(config, items):
    if any(item.path.name in TORCH_TESTS for item in items):
        try:  # a few seconds: only for sessions that hold a test needing it
            from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM  # noqa: F401
        except ImportError:  # the optional backends are not installed: their tests skip
            pass
    if config.getoption("--run-slow"):
        return
    import pytest

    skip = pytest.mark.skip(reason="slow end-to-end test; run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
