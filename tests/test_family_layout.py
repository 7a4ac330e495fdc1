"""The shape of the house: the layers, one direction of dependency, no circle, one folder per family.

The bottom layer (:data:`BOTTOM`) is the family protocol, the registry, the policy and drawing
helpers, the statistics and the version: it imports nothing above it. The families
(``strategies/``) stand on the bottom layer only; the engine (everything else) stands on it too
and never imports a family: it reaches them through the registry, which names the built-in ones
as ``module:class`` and imports each on first lookup. The scan reads every module's imports from
its source (at module level and inside functions alike; a ``TYPE_CHECKING`` block only informs
the type checker and is left out), so an import added anywhere is seen.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from pytest_competence.strategies import FAMILIES

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
CORE = SRC / "pytest_competence"
STRATEGIES = CORE / "strategies"
REGISTRY = CORE / "registry.py"  # names each built-in family: module and class
PACKAGE = "pytest_competence"
FAMILY_PACKAGE = f"{PACKAGE}.strategies"

#: The bottom layer, and what each of its modules may import of the package (besides itself):
#: the version, the lazy faces' helper, the protocol, the drawing helpers, the statistics, the
#: registry and the policy helpers.
BOTTOM = {
    f"{PACKAGE}._version": set(),
    f"{PACKAGE}._lazy": set(),
    f"{PACKAGE}.protocol": set(),
    f"{PACKAGE}.drawing": set(),
    f"{PACKAGE}.stats": {f"{PACKAGE}._lazy"},  # its face hands names on lazily
    f"{PACKAGE}.registry": {f"{PACKAGE}.protocol"},
    f"{PACKAGE}.policy": {f"{PACKAGE}.protocol", f"{PACKAGE}.registry"},
}

#: Core files that still name a built-in family, and why; the list may only shrink.
REMAINING: dict[str, str] = {}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(CORE.rglob("*.py"))}


def _typing_only(tree: ast.Module) -> set[int]:
    """The ids of the nodes inside ``if TYPE_CHECKING:`` blocks."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skipped


def _imports(module: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that ``module`` imports at run time (a name imported from a
    package counts as its submodule when there is one, else as the package)."""
    tree = ast.parse(path.read_text("utf-8"))
    skipped = _typing_only(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def longest(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        for target in targets:
            hit = longest(target)
            if hit is not None and hit != module:
                found.add(hit)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _layer_of(module: str) -> str | None:
    return next((b for b in BOTTOM if _within(module, b)), None)


def test_the_scan_sees_the_arrows_it_must_forbid() -> None:
    graph = _graph()
    assert f"{PACKAGE}.protocol" in graph[f"{FAMILY_PACKAGE}.horn"]
    assert f"{FAMILY_PACKAGE}.horn._strategies" in graph[f"{FAMILY_PACKAGE}.horn"]  # lazily
    assert f"{PACKAGE}.registry" in graph[f"{PACKAGE}.engine.spec"]
    assert f"{PACKAGE}.engine._test_run" not in graph[PACKAGE]  # TYPE_CHECKING only: none


def test_there_is_no_import_circle() -> None:
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    assert not circles, f"modules that import each other: {circles}"


def test_the_bottom_layer_imports_nothing_above_it() -> None:
    wrong = {}
    for module, targets in _graph().items():
        layer = _layer_of(module)
        if layer is None:
            continue
        allowed = BOTTOM[layer] | {layer}
        above = sorted(t for t in targets if not any(_within(t, a) for a in allowed))
        if above:
            wrong[module] = above
    assert not wrong, f"the bottom layer imports above itself: {wrong}"


def test_families_import_only_the_bottom_layer() -> None:
    wrong = {}
    for module, targets in _graph().items():
        if not _within(module, FAMILY_PACKAGE):
            continue
        above = sorted(
            t for t in targets if not _within(t, FAMILY_PACKAGE) and _layer_of(t) is None
        )
        if above:
            wrong[module] = above
    assert not wrong, f"families import the engine: {wrong}"


def test_no_engine_module_imports_a_family() -> None:
    wrong = {}
    for module, targets in _graph().items():
        if _within(module, FAMILY_PACKAGE):
            continue
        families = sorted(t for t in targets if _within(t, FAMILY_PACKAGE))
        if families:
            wrong[module] = families
    assert not wrong, f"the engine imports families (use the registry): {wrong}"


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
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(getattr(body[0], "value", None), ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
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
                    f"{number}: {line.strip()}"
                )
    return found


def test_the_builtin_families_are_the_folders_of_strategies() -> None:
    folders = {p.parent.name for p in STRATEGIES.glob("*/__init__.py")} - {"_induction"}
    assert folders == set(_builtin())
    for name, cls in _builtin().items():
        assert cls.__module__.startswith(f"{FAMILY_PACKAGE}.{name}")


def test_the_core_names_no_family_outside_the_registry() -> None:
    found = _naming()
    unexpected = {f: lines for f, lines in found.items() if f not in REMAINING}
    assert not unexpected, f"the core names a built-in family: {unexpected}"
    stale = sorted(set(REMAINING) - set(found))
    assert not stale, f"no longer name a family, remove them from REMAINING: {stale}"


def test_every_package_folder_is_installed() -> None:
    if sys.version_info < (3, 11):
        pytest.skip("tomllib is Python 3.11+")
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    assert config["tool"]["setuptools"]["packages"]["find"]["where"] == ["src"]
    setuptools = pytest.importorskip("setuptools", reason="setuptools finds the packages")
    found = set(setuptools.find_packages(where=str(SRC)))
    folders = {_module_name(p) for p in CORE.rglob("__init__.py")}
    assert folders <= found, sorted(folders - found)
