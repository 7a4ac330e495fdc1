"""``py:MODULE:ATTR`` — a Python callable or object as a model."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_competence.strategies import Prompt

from . import Model, ModelSpecError

__all__ = ["CallableModel", "python_model"]


class CallableModel:
    """Wraps ``fn(list[str]) -> list[str]``: the callable sees the user prompt texts only."""

    def __init__(self, fn: Any, name: str) -> None:
        self.fn = fn
        self.name = name

    def generate(self, prompts: Sequence[Prompt]) -> Sequence[str | BaseException]:
        return self.fn([p.text for p in prompts])


def _import(module: str, spec: str) -> Any:
    if module.endswith(".py"):
        path = Path(module)
        if not path.is_file():
            raise ModelSpecError(f"Model spec {spec!r}: no such file {module!r}")
        name = f"_competence_model_{path.stem}"
        loader_spec = importlib.util.spec_from_file_location(name, path)
        assert loader_spec is not None and loader_spec.loader is not None
        mod = importlib.util.module_from_spec(loader_spec)
        sys.modules[name] = mod
        loader_spec.loader.exec_module(mod)
        return mod
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ModelSpecError(
            f"Model spec {spec!r}: cannot import module {module!r} ({exc}); check that it is "
            f"installed or on sys.path, or give a path to a .py file"
        ) from None


def python_model(rest: str, spec: str) -> Model:
    """Load ``MODULE:ATTR``. An object with ``generate`` receives Prompt objects; a class is
    instantiated with no arguments; any other callable receives a list of prompt strings."""
    module, sep, attr = rest.rpartition(":")
    if not sep or not module or not attr:
        raise ModelSpecError(
            f"Malformed model spec {spec!r}; expected 'py:MODULE:ATTR', e.g. 'py:my_models:answer'"
        )
    mod = _import(module, spec)
    try:
        obj = getattr(mod, attr)
    except AttributeError:
        raise ModelSpecError(f"Model spec {spec!r}: module {module!r} has no attribute {attr!r}") from None
    if isinstance(obj, type):
        obj = obj()
    if callable(getattr(obj, "generate", None)):
        if not isinstance(getattr(obj, "name", None), str):
            try:
                obj.name = spec
            except AttributeError:
                pass
        return obj
    if not callable(obj):
        raise ModelSpecError(
            f"Model spec {spec!r}: {attr!r} is a {type(obj).__name__}, not a callable taking a "
            f"list of prompts"
        )
    return CallableModel(obj, spec)
