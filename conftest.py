"""Repository-wide test settings: Hypothesis profiles for CI and local development.

Select one with ``HYPOTHESIS_PROFILE=dev``; CI (``CI=true``) uses ``ci`` automatically.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# transformers' Llama loads torch's operator registry, which refuses a second load inside a
# pytester run: imported once at collection for sessions holding a test that needs it.
TORCH_TESTS = {
    "test_hf.py",
    "test_learned.py",
    "test_real_server.py",
    "test_train.py",
    "test_training.py",
    "test_trl.py",
}

# Nothing heavy at collection: this file is loaded by every run in the repository, the README's
# `pytest examples …` included. The test suite's own preloads (numpy's and scipy's C extensions,
# the HTTP stack) are in tests/conftest.py, made when a test first uses pytester.
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
