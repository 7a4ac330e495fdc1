"""The public API is what each public module's ``__all__`` says, checked both ways.

A module is public when no part of its dotted name starts with an underscore; the others are
the package's insides (``_session``, ``report._html``, ``minimise._shrink``, …), free to change.
Every public module declares ``__all__``; every name listed exists (lazily handed-on names
included) and is listed once; every public name the module itself defines is listed (a name
that is not API takes an underscore); every class and function listed has a docstring. As
Hypothesis's ``_check_exports`` does for ``hypothesis.strategies``.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
CORE = SRC / "pytest_competence"


def _public_modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(CORE.rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if not any(part.startswith("_") for part in parts):
            out.append((".".join(parts), path))
    return out


MODULES = _public_modules()


def _defined(path: Path) -> list[str]:
    """The public names the module binds at its top level (type variables aside)."""
    names: list[str] = []
    for node in ast.parse(path.read_text("utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            if isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") in (
                "TypeVar",
                "ParamSpec",
            ):
                continue
            for target in node.targets:
                elements = target.elts if isinstance(target, ast.Tuple) else [target]
                names += [e.id for e in elements if isinstance(e, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return [n for n in names if not n.startswith("_")]


def test_the_public_modules_are_the_api_the_readme_documents() -> None:
    names = {name for name, _ in MODULES}
    for documented in (
        "pytest_competence",
        "pytest_competence.protocol",
        "pytest_competence.strategies",
        "pytest_competence.registry",
        "pytest_competence.policy",
        "pytest_competence.given",
        "pytest_competence.audit",
        "pytest_competence.report",
        "pytest_competence.training",
        "pytest_competence.training.rewards",
    ):
        assert documented in names
    assert "pytest_competence.plugin._session" not in names


@pytest.mark.parametrize(("name", "path"), MODULES, ids=[name for name, _ in MODULES])
def test_all_lists_the_public_names_both_ways(name: str, path: Path) -> None:
    module = importlib.import_module(name)
    listed = getattr(module, "__all__", None)
    assert listed is not None, f"{name} declares no __all__"
    assert len(listed) == len(set(listed)), f"{name}.__all__ repeats a name"
    missing = [n for n in listed if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what the module lacks: {missing}"
    unlisted = [n for n in _defined(path) if n not in listed]
    assert not unlisted, (
        f"{name} defines public names missing from __all__ (list them, or "
        f"give them an underscore): {unlisted}"
    )


@pytest.mark.parametrize(("name", "path"), MODULES, ids=[name for name, _ in MODULES])
def test_every_public_name_has_a_docstring(name: str, path: Path) -> None:
    module = importlib.import_module(name)
    undocumented = []
    for attribute in module.__all__:
        value = getattr(module, attribute)
        if inspect.isclass(value):
            documented = bool(value.__dict__.get("__doc__"))
        elif inspect.isfunction(value):
            documented = bool(value.__doc__)
        else:
            continue  # constants are documented by the comment above them
        if not documented:
            undocumented.append(attribute)
    assert not undocumented, f"{name}: no docstring on {undocumented}"
