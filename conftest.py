"""Repository-wide test settings: ``--run-slow`` and the preload torch's tests need.

Nothing heavy is imported here: this file is loaded by every run in the repository, the README's
``pytest examples …`` included (Hypothesis alone costs ~0.16 s). The test suite's Hypothesis
profiles and preloads are in tests/conftest.py.
"""

from __future__ import annotations

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
