"""One folder per family: the core names no built-in family, and every folder is installed.

Each built-in family lives in ``strategies/<name>/`` with its generator, strategies, shortcut
policies, metrics and report tables; the core (``src/pytest_competence/``) reaches them through
the registry (``strategies/__init__.py``: ``FAMILIES``) and the family protocol only. The
files listed in :data:`REMAINING` still name a family, each for the reason given; the list may
only shrink.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from pytest_competence.strategies import FAMILIES

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "src" / "pytest_competence"
STRATEGIES = CORE / "strategies"
REGISTRY = CORE / "registry.py"  # names each built-in family: module and class

#: Core files that still name a built-in family, and why (what is left of issue 17 item 2).
REMAINING: dict[str, str] = {}


def _builtin() -> dict[str, type]:
    return {name: FAMILIES[name] for name in FAMILIES.builtin}


def _pattern() -> re.Pattern[str]:
    names = "|".join(_builtin())
    classes = "|".join(cls.__name__ for cls in _builtin().values())
    # A family's name as a string, its class, or one of its modules.
    return re.compile(rf"""["']({names})["']|\b({classes})\b|strategies\.({names})\b""")


def _docstrings(source: str) -> set[int]:
    """The line numbers of a module's docstrings (examples there are documentation)."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(
                getattr(body[0], "value", None), ast.Constant) and isinstance(
                body[0].value.value, str):
            lines.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    return lines


def _naming() -> dict[str, list[str]]:
    pattern = _pattern()
    found: dict[str, list[str]] = {}
    for path in sorted(CORE.rglob("*.py")):
        if path.is_relative_to(STRATEGIES) or path == REGISTRY:  # the families, the registry
            continue
        source = path.read_text("utf-8")
        documentation = _docstrings(source)
        for number, line in enumerate(source.splitlines(), 1):
            if number not in documentation and pattern.search(line):
                found.setdefault(path.relative_to(CORE).as_posix(), []).append(
                    f"{number}: {line.strip()}")
    return found


def test_the_builtin_families_are_the_folders_of_strategies() -> None:
    folders = {p.parent.name for p in STRATEGIES.glob("*/__init__.py")} - {"_induction"}
    assert folders == set(_builtin())
    for name, cls in _builtin().items():
        assert cls.__module__.startswith(f"pytest_competence.strategies.{name}")


def test_the_core_names_no_family_outside_the_registry() -> None:
    found = _naming()
    unexpected = {f: lines for f, lines in found.items() if f not in REMAINING}
    assert not unexpected, f"the core names a built-in family: {unexpected}"
    stale = sorted(set(REMAINING) - set(found))
    assert not stale, f"no longer name a family, remove them from REMAINING: {stale}"


def test_every_family_folder_is_an_installed_package() -> None:
    if sys.version_info < (3, 11):
        pytest.skip("tomllib is Python 3.11+")
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    packages = set(config["tool"]["setuptools"]["packages"])
    folders = {"pytest_competence.strategies." + p.parent.name
               for p in STRATEGIES.glob("*/__init__.py")}
    assert folders <= packages, sorted(folders - packages)
