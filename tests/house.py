"""The shape of the house in figures, read from the code's own syntax (imports at module level
and inside functions; ``TYPE_CHECKING`` blocks aside): ``python tests/house.py`` prints them.

``tests/test_house.py`` holds the figures that are rules: no module over :data:`MAX_LINES`
lines, pytest imported only in the plugin, at most :data:`MAX_TOP` modules directly in the
package. The others (private imports across packages, long functions, the longest import chain)
are printed to be watched.
"""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_family_layout import CORE, PACKAGE, _graph, _modules, _typing_only  # noqa: E402

MAX_LINES = 450
MAX_TOP = 12
PLUGIN = f"{PACKAGE}.plugin"


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text("utf-8"))


def imports_pytest(path: Path) -> bool:
    tree = _tree(path)
    skipped = _typing_only(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] in ("pytest", "_pytest") for a in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in (
            "pytest",
            "_pytest",
        ):
            return True
    return False


def pytest_homes() -> dict[str, list[str]]:
    """The packages whose modules import pytest, and those modules."""
    homes: dict[str, list[str]] = {}
    for name, path in _modules().items():
        if imports_pytest(path):
            home = name if path.name == "__init__.py" else name.rpartition(".")[0]
            homes.setdefault(home, []).append(name)
    return homes


def private_owner(module: str) -> str | None:
    """The package a private module belongs to: the name before its first private part."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_"):
            return ".".join(parts[:i])
    return None


def private_imports_across() -> list[tuple[str, str]]:
    found = []
    for importer, targets in _graph().items():
        for target in sorted(targets):
            owner = private_owner(target)
            if owner and owner != PACKAGE and not (importer + ".").startswith(owner + "."):
                found.append((importer, target))
    return found


def long_definitions(kind: type, limit: int) -> list[tuple[int, str]]:
    found = []
    for name, path in _modules().items():
        for node in ast.walk(_tree(path)):
            if isinstance(node, kind):
                length = node.end_lineno - node.lineno + 1  # type: ignore[attr-defined]
                if length > limit:
                    found.append((length, f"{name}.{node.name}"))  # type: ignore[attr-defined]
    return sorted(found, reverse=True)


def longest_chain() -> list[str]:
    graph = _graph()

    @cache
    def chain(node: str) -> tuple[str, ...]:
        best: tuple[str, ...] = ()
        for nxt in graph[node]:
            candidate = chain(nxt)
            if len(candidate) > len(best):
                best = candidate
        return (node, *best)

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    return list(max((chain(n) for n in graph), key=len))


def module_lines() -> dict[str, int]:
    return {n: len(p.read_text("utf-8").splitlines()) for n, p in _modules().items()}


def main() -> None:
    top = sorted(p.name for p in CORE.glob("*.py"))
    homes = {h: m for h, m in pytest_homes().items()}
    declaring = [
        n
        for n, p in _modules().items()
        if ".addoption(" in p.read_text("utf-8") or ".addini(" in p.read_text("utf-8")
    ]
    chain = longest_chain()
    rows = [
        ("modules directly in pytest_competence/", len(top)),
        ("homes of pytest imports", f"{len(homes)} ({', '.join(sorted(homes))})"),
        ("private imports across packages", len(private_imports_across())),
        ("modules declaring options", len(declaring)),
        ("classes over 250 lines", len(long_definitions(ast.ClassDef, 250))),
        (
            "functions over 80 lines",
            len(long_definitions((ast.FunctionDef, ast.AsyncFunctionDef), 80)),  # type: ignore[arg-type]
        ),
        ("longest runtime import chain, in modules", len(chain)),
        (f"modules over {MAX_LINES} lines", sum(n > MAX_LINES for n in module_lines().values())),
    ]
    for label, value in rows:
        print(f"{label:45} {value}")
    if "-v" in sys.argv:
        print("\nprivate imports across packages:")
        for importer, target in private_imports_across():
            print(f"  {importer} -> {target}")
        print("\nfunctions over 80 lines:")
        for length, name in long_definitions((ast.FunctionDef, ast.AsyncFunctionDef), 80):  # type: ignore[arg-type]
            print(f"  {length:4} {name}")
        print("\nmodules declaring options:", ", ".join(declaring))
        print("\nlongest chain:", " -> ".join(chain))


if __name__ == "__main__":
    main()
