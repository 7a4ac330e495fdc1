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
# load module more than once per process": numpy.fft through scipy.stats, datasets, trl). They
# are imported here, once, before any test.

settings.register_profile(
    "ci", max_examples=60, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", help="Also run tests marked slow (CI does)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow"):
        return
    import pytest

    skip = pytest.mark.skip(reason="slow end-to-end test; run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
