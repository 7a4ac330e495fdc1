"""``py:MODULE:ATTR`` — a Python callable or object as a model.

A spec is checked twice. When the run starts, :func:`check_python_spec` finds the module and
reads its source — without running it, since importing a user's model may load weights for
seconds and a pytest session that runs no competence test must not pay for that — so a missing
file, an unknown module, a syntax error, an attribute the module does not define (the message
lists those it does, and the nearest), a value that is plainly not callable and a class whose
``__init__`` needs arguments are usage errors before any test runs. :func:`python_model`
imports the module when a competence test first needs the model and checks the object itself.
"""

from __future__ import annotations

import ast
import difflib
import importlib
import importlib.util
import sys
import types
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pytest_competence.policy import ModelSpecError
from pytest_competence.protocol import Prompt

from ._base import Model, where_raised

__all__ = ["CallableModel", "check_python_spec", "python_model"]


class CallableModel:
    """Wraps ``fn(list[str]) -> list[str]``: the callable sees the user prompt texts only."""

    def __init__(self, fn: Any, name: str) -> None:
        self.fn = fn
        self.name = name

    def generate(self, prompts: Sequence[Prompt]) -> Sequence[str | BaseException]:
        """One answer per prompt: the callable's, checked."""
        return self.fn([p.text for p in prompts])


def _file(module: str, spec: str, root: Path | None) -> Path:
    """The ``.py`` file of a spec: relative to the rootdir, else the working directory."""
    path = Path(module)
    if root is not None and not path.is_absolute() and (root / path).is_file():
        path = root / path
    if not path.is_file():
        where = f" (looked in {str(root)!r} and the working directory)" if root else ""
        raise ModelSpecError(f"Model spec {spec!r}: no such file {module!r}{where}")
    return path


def _searchable(root: Path | None) -> None:
    if root is not None and str(root) not in sys.path:
        # As `pythonpath = .` would: a module beside the rootdir's ini file is importable
        # from any working directory and under plain `pytest`.
        sys.path.insert(0, str(root))


def _cannot_import(spec: str, module: str, exc: BaseException) -> ModelSpecError:
    return ModelSpecError(
        f"Model spec {spec!r}: cannot import module {module!r} ({exc}); check that it is "
        f"installed, in the rootdir or on sys.path, or give a path to a .py file"
    )


def _syntax_error(spec: str, exc: SyntaxError) -> ModelSpecError:
    return ModelSpecError(
        f"Model spec {spec!r}: {exc.filename}:{exc.lineno}: SyntaxError: {exc.msg}; fix the module"
    )


def _import(module: str, spec: str, root: Path | None) -> Any:
    """The module of a ``py:`` spec: a ``.py`` file (relative to the rootdir, else the working
    directory) or a dotted name (importable from the rootdir, then ``sys.path``)."""
    try:
        if module.endswith(".py"):
            path = _file(module, spec, root)
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
        _searchable(root)
        return importlib.import_module(module)
    except ModelSpecError:
        raise
    except ImportError as exc:
        raise _cannot_import(spec, module, exc) from None
    except SyntaxError as exc:
        raise _syntax_error(spec, exc) from None
    except Exception as exc:
        raise ModelSpecError(
            f"Model spec {spec!r}: importing {module!r} raised "
            f"{type(exc).__name__}: {exc} (at {where_raised(exc)})"
        ) from None


def _parts(rest: str, spec: str) -> tuple[str, str]:
    module, sep, attr = rest.rpartition(":")
    if not sep or not module or not attr:
        raise ModelSpecError(
            f"Malformed model spec {spec!r}; expected 'py:MODULE:ATTR', e.g. 'py:my_models:answer'"
        )
    return module, attr


_SHOWN = 12  # names listed when an attribute is not found


def _no_attribute(spec: str, module: str, attr: str, names: Iterable[str]) -> ModelSpecError:
    """The module defines no ``attr``: the nearest name, and the public ones it defines
    (``names``: what may be a model first)."""
    names = list(dict.fromkeys(names))
    public = [n for n in names if not n.startswith("_")]
    near = difflib.get_close_matches(attr, names, n=1)
    shown = ", ".join(public[:_SHOWN]) + (
        f" (and {len(public) - _SHOWN} more)" if len(public) > _SHOWN else ""
    )
    return ModelSpecError(
        f"Model spec {spec!r}: module {module!r} has no attribute {attr!r}"
        + (f" (did you mean {near[0]!r}?)" if near else "")
        + (f"; it defines {shown}" if public else "; it defines no public names")
    )


def _not_callable(spec: str, attr: str, kind: str) -> ModelSpecError:
    article = "an" if kind[:1] in "aeiou" else "a"
    return ModelSpecError(
        f"Model spec {spec!r}: {attr!r} is {article} {kind}, not a callable taking a list of "
        f"prompts"
    )


def _needs_arguments(spec: str, attr: str, why: str) -> ModelSpecError:
    return ModelSpecError(
        f"Model spec {spec!r}: class {attr!r} cannot be built without arguments ({why}); "
        f"point the spec at an instance or a function that returns one"
    )


def python_model(rest: str, spec: str, root: str | Path | None = None) -> Model:
    """Load ``MODULE:ATTR``. An object with ``generate`` receives Prompt objects; a class is
    instantiated with no arguments; any other callable receives a list of prompt strings.

    ``root`` (the rootdir) is where a relative ``.py`` path or a module name is looked up first.
    """
    module, attr = _parts(rest, spec)
    mod = _import(module, spec, Path(root) if root else None)
    try:
        obj = getattr(mod, attr)
    except AttributeError:
        callables = [n for n, v in vars(mod).items() if callable(v)]
        others = [n for n, v in vars(mod).items() if not isinstance(v, types.ModuleType)]
        raise _no_attribute(spec, module, attr, [*callables, *others]) from None
    if isinstance(obj, type):
        try:
            obj = obj()
        except TypeError as exc:
            raise _needs_arguments(spec, attr, str(exc)) from None
    if callable(getattr(obj, "generate", None)):
        if not isinstance(getattr(obj, "name", None), str):
            try:
                obj.name = spec
            except AttributeError:
                pass
        return obj
    if not callable(obj):
        raise _not_callable(spec, attr, type(obj).__name__)
    return CallableModel(obj, spec)


def check_python_spec(rest: str, spec: str, root: str | Path | None = None) -> None:
    """Check ``MODULE:ATTR`` without running the module: :class:`ModelSpecError` for a
    malformed spec, a file or module that cannot be found, a syntax error, an attribute no
    statement of the module binds (listing those it binds), a value that is a literal (a
    number, a string, a list…) and a class whose own ``__init__`` needs arguments.

    The module is found as importing it would find it (a dotted name's parent packages are
    imported to search them) and its source parsed with :mod:`ast`. What the source cannot
    settle — a module that binds names dynamically (``from x import *``, a module
    ``__getattr__``, ``globals()``), an extension module, a value built by a call — is left to
    :func:`python_model` when the model is first needed.
    """
    module, attr = _parts(rest, spec)
    where = Path(root) if root else None
    path = _file(module, spec, where) if module.endswith(".py") else _located(module, spec, where)
    if path is None:
        return
    try:
        source = path.read_bytes()
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise _syntax_error(spec, exc) from None
    except (OSError, ValueError):
        return  # unreadable here; importing it will say why
    found = _bindings(tree)
    if attr not in found.values:
        if not found.dynamic:
            raise _no_attribute(spec, module, attr, found.callables_first())
        return
    node = found.values[attr]
    if isinstance(node, ast.ClassDef):
        needs = _required_init(node)
        if needs:
            raise _needs_arguments(spec, attr, f"its __init__ needs {', '.join(needs)}")
    kind = _literal_kind(node)
    if kind is not None:
        raise _not_callable(spec, attr, kind)


def _located(module: str, spec: str, root: Path | None) -> Path | None:
    """The source file of a dotted module name, found as an import would; ``None`` when it has
    no Python source to read (an extension, a namespace package)."""
    _searchable(root)
    try:
        found = importlib.util.find_spec(module)
    except ImportError as exc:  # a parent package that is missing
        raise _cannot_import(spec, module, exc) from None
    except SyntaxError as exc:
        raise _syntax_error(spec, exc) from None
    except Exception as exc:  # a parent package raised while it was imported
        raise ModelSpecError(
            f"Model spec {spec!r}: importing the package of {module!r} raised "
            f"{type(exc).__name__}: {exc} (at {where_raised(exc)})"
        ) from None
    if found is None:
        raise _cannot_import(spec, module, ModuleNotFoundError(f"no module named {module!r}"))
    origin = found.origin
    if origin is None or not origin.endswith(".py") or not Path(origin).is_file():
        return None
    return Path(origin)


#: Module-level calls that can bind names no statement shows.
_DYNAMIC_CALLS = frozenset({"globals", "vars", "setattr", "exec"})


class _Bindings:
    """What a module's top level binds, read from its source (see :func:`_bindings`)."""

    def __init__(self) -> None:
        #: name → the value of its one plain top-level binding (a def, a class, ``x = …``),
        #: or ``None`` when that is not known (bound twice, in a branch, by a loop, …)
        self.values: dict[str, ast.AST | None] = {}
        self.defined: dict[str, None] = {}  # bound by the module itself, not imported
        self.dynamic = False  # it may bind names no statement shows

    def callables_first(self) -> list[str]:
        """The names the module defines, those bound by ``def`` or ``class`` first."""
        defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
        first = [n for n in self.defined if isinstance(self.values.get(n), defs)]
        return [*first, *(n for n in self.defined if n not in first)]

    def bind(self, name: str, value: ast.AST | None, *, imported: bool = False) -> None:
        self.values[name] = value if name not in self.values else None
        if not imported:
            self.defined[name] = None


#: Headers of compound statements: what they evaluate or bind before their bodies.
_HEADERS = ("test", "iter", "target", "items", "subject")


def _bindings(tree: ast.Module) -> _Bindings:
    """Every name the module's top level may bind (branches, loops and ``try`` included, and
    names a function declares ``global``), without running it."""
    found = _Bindings()

    def names_in(node: ast.AST, value: ast.AST | None) -> None:
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
                found.bind(inner.id, value)
            elif isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name):
                found.dynamic |= inner.func.id in _DYNAMIC_CALLS

    def walk(statements: Iterable[ast.AST], top: bool) -> None:
        for stmt in statements:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.bind(stmt.name, stmt if top else None)
                found.dynamic |= stmt.name == "__getattr__"
                for inner in ast.walk(stmt):  # a function may bind a module name: `global x`
                    if isinstance(inner, ast.Global):
                        for name in inner.names:
                            found.bind(name, None)
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for alias in stmt.names:
                    if alias.name == "*":
                        found.dynamic = True
                    else:
                        found.bind(alias.asname or alias.name.split(".")[0], None, imported=True)
            elif any(
                isinstance(getattr(stmt, f, None), list) for f in ("body", "handlers", "cases")
            ):
                for header in _HEADERS:
                    part = getattr(stmt, header, None)
                    for node in part if isinstance(part, list) else [part]:
                        if isinstance(node, ast.AST):
                            names_in(node, None)
                for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                    walk(getattr(stmt, field, None) or [], False)
            elif isinstance(stmt, (ast.ExceptHandler, ast.match_case)):
                if isinstance(stmt, ast.ExceptHandler) and stmt.name:
                    found.bind(stmt.name, None)
                walk(stmt.body, False)
            else:
                plain = (
                    top
                    and isinstance(stmt, (ast.Assign, ast.AnnAssign))
                    and all(isinstance(t, ast.Name) for t in _targets(stmt))
                )
                names_in(stmt, stmt.value if plain else None)  # type: ignore[attr-defined]

    walk(tree.body, True)
    return found


def _targets(stmt: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return list(stmt.targets) if isinstance(stmt, ast.Assign) else [stmt.target]


_LITERALS: dict[type, str] = {
    ast.JoinedStr: "str",
    ast.List: "list",
    ast.ListComp: "list",
    ast.Tuple: "tuple",
    ast.Dict: "dict",
    ast.DictComp: "dict",
    ast.Set: "set",
    ast.SetComp: "set",
    ast.GeneratorExp: "generator",
}


def _literal_kind(node: ast.AST | None) -> str | None:
    """The type of a value written as a literal (``3``, ``"x"``, ``[...]``); ``None`` for
    anything that may be callable."""
    if isinstance(node, ast.Constant):
        return type(node.value).__name__
    return _LITERALS.get(type(node))


def _required_init(node: ast.ClassDef) -> list[str]:
    """The arguments the class's own ``__init__`` requires (none when it has no own
    ``__init__``, or a decorator may change how it is built)."""
    if node.decorator_list:
        return []
    init = next(
        (s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
    )
    if init is None:
        return []
    args = init.args
    positional = [*args.posonlyargs, *args.args][1:]  # past self
    required = positional[: len(positional) - len(args.defaults)]
    required += [a for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
    return [a.arg for a in required]
