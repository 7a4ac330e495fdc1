"""The test suite's Hypothesis profiles and preloads; the preloads are made once, before the first
test that uses ``pytester``.

pytester restores ``sys.modules`` after each in-process run, so a module first imported inside one
is imported afresh by the next test — and numpy's C extensions refuse a second load ("cannot load
module more than once per process": numpy.fft through scipy.stats, datasets, trl), as does torch's
operator registry (see the root conftest). So they are imported before the first pytester run,
never at collection: a run of the examples, or of tests that need none of them, pays nothing.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

# The bad-input tables' shared check asserts as a test does: rewritten for pytest's messages.
pytest.register_assert_rewrite("bad_inputs")

# Hypothesis profiles for CI and local development: select one with ``HYPOTHESIS_PROFILE=dev``;
# CI (``CI=true``) uses ``ci`` automatically. Here, not in the root conftest, so that a run of the
# examples does not import Hypothesis.
settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

_loaded = False


def _load_the_http_stack() -> None:
    """httpx maps httpcore's exceptions through a table built on first use: if httpcore's modules
    were imported afresh inside a pytester run while httpx's stayed, a refused connection would
    surface as an unmapped httpcore error. One refused request loads every module the async
    client needs."""
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


def preload() -> None:
    """numpy's and scipy's C extensions and the HTTP stack, once per process."""
    global _loaded
    if _loaded:
        return
    import numpy.fft  # noqa: F401
    import numpy.linalg  # noqa: F401
    import scipy.stats  # noqa: F401

    _loaded = True
    _load_the_http_stack()


@pytest.fixture(autouse=True)
def _preloaded_before_pytester(request: pytest.FixtureRequest) -> None:
    """Autouse, so it runs before the ``pytester`` fixture takes its ``sys.modules`` snapshot."""
    if "pytester" in request.fixturenames:
        preload()
