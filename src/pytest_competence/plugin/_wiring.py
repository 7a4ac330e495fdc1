"""How a resolved model is wired into a run: backend settings, the response cache, progress.

:func:`wire` is applied to every model the session resolves. A model with a ``cache_identity``
goes behind the run's :class:`~pytest_competence.engine.cache.CachedModel` (unless
``--competence-cache=off``); a model that answers one by one (``stream``) gets a progress line.
Reference policies and plain Python callables come back untouched.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_competence.engine.cache import ResponseCache
    from pytest_competence.models import Model

__all__ = [
    "CACHE",
    "api_keys",
    "backend_settings",
    "cache_mode",
    "cache_path",
    "dirs_of_test_paths",
    "files_root",
    "ini_cache",
    "wire",
]

#: The run's response cache, opened on first use and closed when the run ends.
CACHE = pytest.StashKey["ResponseCache"]()


def backend_settings(config: pytest.Config) -> dict[str, str]:
    """Run-wide settings handed to model loaders (see ``resolve_model``)."""
    return {
        "api_key_env": str(config.getini("competence_api_key_env")).strip() or "OPENAI_API_KEY",
        "max_response_mib": str(config.getini("competence_max_response_mib")).strip(),
        "rootdir": str(config.rootpath),
        "test_dirs": os.pathsep.join(str(d) for d in dirs_of_test_paths(config)),
    }


def dirs_of_test_paths(config: pytest.Config) -> list[Path]:
    """The folders of the test paths on the command line, each once, those that exist: a
    file's folder, a folder itself (``suite/test_x.py::test_a`` → ``suite``)."""
    found: dict[Path, None] = {}
    for arg in config.args:
        path = Path(os.path.abspath(config.invocation_params.dir / arg.partition("::")[0]))
        if path.is_file():
            path = path.parent
        if path.is_dir():
            found[path] = None
    return list(found)


def files_root(config: pytest.Config) -> Path:
    """The folder the plugin's relative ini paths (the example database, the response cache)
    are taken from: pytest's rootdir, unless pytest had only the working directory to go by —
    no ini file, no ``--rootdir``, no ``setup.py`` — and took the common folder of it and the
    test paths; then the test paths' own common folder, so that a suite run from any working
    directory finds the same files."""
    root = config.rootpath
    ini = config.inipath is not None and config.inipath.is_file()
    if ini or config.getoption("rootdir", None) or (root / "setup.py").is_file():
        return root
    tests = dirs_of_test_paths(config)
    return Path(os.path.commonpath(tests)) if tests else root


def api_keys(config: pytest.Config, *models: object) -> list[str]:
    """The API keys a run knows, to redact: the values of ``competence_api_key_env`` and of
    each model's ``key_env``."""
    from pytest_competence.engine.redaction import run_secrets

    names = [config.getini("competence_api_key_env"), *(getattr(m, "key_env", "") for m in models)]
    return run_secrets(n for n in names if isinstance(n, str))


def cache_mode(config: pytest.Config) -> str:
    """``rw``, ``read``, ``write`` or ``off`` (``--competence-cache``)."""
    return str(config.getoption("competence_cache") or "rw")


def cache_path(config: pytest.Config) -> Path:
    """The cache file: the ``competence_cache_path`` ini option, relative to the rootdir (see
    :func:`files_root`)."""
    path = Path(str(config.getini("competence_cache_path")).strip() or ".competence/cache.sqlite")
    return path if path.is_absolute() else files_root(config) / path


def _cache(config: pytest.Config) -> ResponseCache:
    if CACHE not in config.stash:
        from pytest_competence.engine.cache import ResponseCache

        cache = ResponseCache(cache_path(config))
        config.stash[CACHE] = cache
        config.add_cleanup(cache.close)
    return config.stash[CACHE]


def wire(config: pytest.Config, model: Model) -> Model:
    """``model`` behind the cache and the progress line, where they apply."""
    mode = cache_mode(config)
    # getattr_static: a backend may compute its identity only once its weights are loaded.
    if mode != "off" and inspect.getattr_static(model, "cache_identity", None) is not None:
        from pytest_competence.engine.cache import CachedModel

        model = CachedModel(model, _cache(config), mode, secrets=api_keys(config, model))
    if callable(getattr(model, "stream", None)):
        from pytest_competence.engine.progress import ProgressModel
        from pytest_competence.plugin._terminal import PytestTerminal

        model = ProgressModel(model, PytestTerminal(config))
    return model


def ini_cache() -> tuple[Path, str]:
    """The response cache a pytest run in this directory uses, and where that was read: pytest
    itself finds the rootdir and the ini file (and reads ``PYTEST_ADDOPTS``), then stops before
    configuring or collecting anything."""
    found: dict[str, tuple[Path, str]] = {}

    class _Read:
        @pytest.hookimpl(tryfirst=True)
        def pytest_cmdline_main(self, config: pytest.Config) -> int:
            ini = f"the ini file {config.inipath}" if config.inipath else "no ini file"
            found["cache"] = (cache_path(config), f"competence_cache_path; {ini}")
            return 0

    code = pytest.main(["-p", "no:cacheprovider"], plugins=[_Read()])
    if "cache" not in found:
        raise ValueError(
            f"pytest could not read its configuration here (exit {int(code)}: its message is "
            f"above); fix it, or pass --cache PATH"
        )
    return found["cache"]
