"""Which model answers, beyond its name: a short identity for the cases saved for it.

A model's name is what the user typed (``qwen``, ``ref:threshold?n=64``, ``py:my_models:qwen``);
the model behind a name changes — a checkpoint is replaced behind an HTTP endpoint, an alias is
repointed, a ``py:`` module is edited. :func:`model_identity` names the model itself, where that
is known cheaply:

- a backend that declares ``competence_identity`` (a string): that (the transformers backend: its
  checkpoint files, decoding and readout, without loading the weights);
- a backend with a ``cache_identity`` (HTTP: served model name, base URLs, decoding; vLLM: the
  checkpoint files too): that;
- a reference policy: its spec and this package's version;
- any other Python model (``py:``): its callable's name and the SHA-256 of its source file.

The result is a hash (16 hex digits), or ``None`` when nothing is known. It says which model a
saved case was saved for; it never decides whether a case is minimal — minimisation checks that
against the model it asks (:mod:`pytest_competence.minimise`).
"""

from __future__ import annotations

import hashlib
import inspect
from pathlib import Path
from typing import Any

from ._base import ModelWrapper

__all__ = ["model_identity"]


def model_identity(model: Any) -> str | None:
    """A short hash naming ``model`` itself (not its name), or ``None`` when unknown."""
    while isinstance(model, ModelWrapper):  # the cache and the progress line answer for it
        model = model.model
    described = _describe(model)
    return None if described is None else hashlib.sha256(described.encode()).hexdigest()[:16]


def _describe(model: Any) -> str | None:
    for attr in ("competence_identity", "cache_identity"):
        # getattr_static first: a property that is not there must not be computed at all.
        if inspect.getattr_static(model, attr, None) is not None:
            value = getattr(model, attr)
            if isinstance(value, str):
                return f"{attr} {value}"
    if type(model).__module__.startswith("pytest_competence.models.reference"):
        from pytest_competence._version import __version__

        spec = getattr(model, "spec", None) or model.name
        return f"reference {spec} pytest-competence {__version__}"
    from .python import CallableModel

    code = model.fn if isinstance(model, CallableModel) else type(model)
    try:
        source = inspect.getsourcefile(code)
    except TypeError:  # built in: no source file
        return None
    if source is None or not Path(source).is_file():
        return None
    digest = hashlib.sha256(Path(source).read_bytes()).hexdigest()
    return f"python {getattr(code, '__qualname__', '')} {digest}"
