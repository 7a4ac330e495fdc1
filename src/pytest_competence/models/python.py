"""``py:MODULE:ATTR`` — a Python callable or object as a model."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_competence.policy import ModelSpecError
from pytest_competence.protocol import Prompt

from ._base import Model, where_raised

__all__ = ["CallableModel", "python_model"]


class CallableModel:
    """Wraps ``fn(list[str]) -> list[str]``: the callable sees the user prompt texts only."""

    def __init__(self, fn: Any, name: str) -> None:
        self.fn = fn
        self.name = name

    def generate(self, prompts: Sequence[Prompt]) -> Sequence[str | BaseException]:
        """One answer per prompt: the callable's, checked."""
        return self.fn([p.text for p in prompts])


def _import(module: str, spec: str, root: Path | None) -> Any:
    """The module of a ``py:`` spec: a ``.py`` file (relative to the rootdir, else the working
    directory) or a dotted name (importable from the rootdir, then ``sys.path``)."""
    try:
        if module.endswith(".py"):
            path = Path(module)
            if root is not None and not path.is_absolute() and (root / path).is_file():
                path = root / path
            if not path.is_file():
                where = f" (looked in {str(root)!r} and the working directory)" if root else ""
                raise ModelSpecError(f"Model spec {spec!r}: no such file {module!r}{where}")
            name = f"_competence_model_{path.stem}"
            loader_spec = importlib.util.spec_from_file_location(name, path)
            assert loader_spec is not None and loader_spec.loader is not None
            mod = importlib.util.module_from_spec(loader_spec)
            sys.modules[name] = mod
            try:
                loader_spec.loader.exec_module(mod)
            except BaseException:
                del sys.modules[name]
                raise
            return mod
        if root is not None and str(root) not in sys.path:
            # As `pythonpath = .` would: a module beside the rootdir's ini file is importable
            # from any working directory and under plain `pytest`.
            sys.path.insert(0, str(root))
        return importlib.import_module(module)
    except ModelSpecError:
        raise
    except ImportError as exc:
        raise ModelSpecError(
            f"Model spec {spec!r}: cannot import module {module!r} ({exc}); check that it is "
            f"installed, in the rootdir or on sys.path, or give a path to a .py file"
        ) from None
    except SyntaxError as exc:
        raise ModelSpecError(
            f"Model spec {spec!r}: {exc.filename}:{exc.lineno}: SyntaxError: "
            f"{exc.msg}; fix the module"
        ) from None
    except Exception as exc:
        raise ModelSpecError(
            f"Model spec {spec!r}: importing {module!r} raised "
            f"{type(exc).__name__}: {exc} (at {where_raised(exc)})"
        ) from None


def python_model(rest: str, spec: str, root: str | Path | None = None) -> Model:
    """Load ``MODULE:ATTR``. An object with ``generate`` receives Prompt objects; a class is
    instantiated with no arguments; any other callable receives a list of prompt strings.

    ``root`` (the rootdir) is where a relative ``.py`` path or a module name is looked up first.
    """
    module, sep, attr = rest.rpartition(":")
    if not sep or not module or not attr:
        raise ModelSpecError(
            f"Malformed model spec {spec!r}; expected 'py:MODULE:ATTR', e.g. 'py:my_models:answer'"
        )
    mod = _import(module, spec, Path(root) if root else None)
    try:
        obj = getattr(mod, attr)
    except AttributeError:
        raise ModelSpecError(
            f"Model spec {spec!r}: module {module!r} has no attribute {attr!r}"
        ) from None
    if isinstance(obj, type):
        try:
            obj = obj()
        except TypeError as exc:
            raise ModelSpecError(
                f"Model spec {spec!r}: class {attr!r} cannot be built without arguments ({exc}); "
                f"point the spec at an instance or a function that returns one"
            ) from None
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
