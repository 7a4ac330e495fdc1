"""Repository-wide test settings: Hypothesis profiles for CI and local development.

Select one with ``HYPOTHESIS_PROFILE=dev``; CI (``CI=true``) uses ``ci`` automatically.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=60, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))
