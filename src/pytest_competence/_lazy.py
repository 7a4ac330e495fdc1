"""A package's face that hands names on from its modules, each imported when first asked for.

``__getattr__ = lazy_attributes(__name__, {"Name": ".module", …})`` in a package's
``__init__.py`` (PEP 562): importing the package imports none of those modules, so a face can
list the whole API and still cost nothing at start-up.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``names`` maps each name to the module it comes
    from, absolute or relative to ``package``."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module, package), name)

    return __getattr__
