"""The version of pytest-competence, in a module of its own so that nothing imports the package's
face to read it (pyproject.toml takes it from here)."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
