"""What the release-gate tests share: a gated suite and the checkpoints it compares.

``tests/test_release_gate.py`` gates runs of it; ``tests/test_trend.py`` compares archives of it.
"""

from __future__ import annotations

import numpy as np
import pytest

# Equally good noisy solvers (each answer flipped with probability p, fixed by seed and prompt).
GOOD, TWIN, WORSE = "ref:noisy?p=0.05&seed=1", "ref:noisy?p=0.05&seed=2", "ref:noisy?p=0.3&seed=3"

SUITE = """
    import pytest

    @pytest.mark.competence(levels=[8, 16], pairs={pairs}, require="coverage >= 0.99"{extra})
    def test_gate(competence):
        pass
"""


def write_suite(pytester: pytest.Pytester, pairs: int = 200, extra: str = "") -> None:
    pytester.makepyfile(test_suite=SUITE.format(pairs=pairs, extra=extra))


def bits(result: dict, presentation: str) -> np.ndarray:
    return np.frombuffer(result["instances"]["correct"][presentation].encode(), np.uint8) == 49
