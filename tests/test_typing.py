"""The package type-checks cleanly with mypy, configured in pyproject.toml's ``[tool.mypy]``.

The test runs ``python -m mypy`` from the repository root, as CI and a contributor do: the
configuration names ``src/pytest_competence``, the task families (``strategies/``) included.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_mypy_passes() -> None:
    pytest.importorskip("mypy", reason="mypy is in the test extra: pip install -e '.[test]'")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--verbose"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, f"mypy failed:\n{result.stdout}{result.stderr}"
    # The families were checked as the package they install as, not skipped or renamed.
    assert "pytest_competence.strategies.ordering" in result.stderr
