"""``py:MODULE:ATTR`` — a Python callable or object as a model.

:func:`check_python_spec` finds the module and reads its source without running it: a missing
file, an unknown module, a syntax error, an attribute the module does not define (the message
lists those it does, and the nearest), a value that is plainly not callable and a class whose
``__init__`` needs arguments. :func:`python_model` imports the module and checks the object
itself; an import that raises is said with its exception and the line of the user's code. The
plugin imports the modules named on ``--competence-model`` when the run starts and only checks
the others (see :mod:`pytest_competence.plugin._start`).

A relative file or module is looked for in the rootdir, then beside the tests named on the
command line, then (files) in the working directory, then on ``sys.path``; an error names
every place looked.
"""

from __future__ import annotations

import ast
import difflib
import importlib
import importlib.util
import inspect
import os
import sys
import traceback
import types
from collections.abc import Iterable, Sequence
from importlib.machinery import PathFinder
from pathlib import Path
from typing import Any

from pytest_competence.policy import ModelSpecError
from pytest_competence.protocol import Prompt

from ._base import Model

__all__ = ["CallableModel", "check_python_spec", "python_model"]


class CallableModel:
    """Wraps ``fn(list[str]) -> list[str]``: the callable sees the user prompt texts only."""

    def __init__(self, fn: Any, name: str) -> None:
        self.fn = fn
        self.name = name

    def generate(self, prompts: Sequence[Prompt]) -> Sequence[str | BaseException]:
        """One answer per prompt: the callable's, checked."""
        return self.fn([p.text for p in prompts])


def _places(root: Path | None, beside: Sequence[Path]) -> list[Path]:
    """Where a relative ``py:`` file or module is looked for first: the rootdir, then the
    folders of the test paths given on the command line."""
    return list(dict.fromkeys(p for p in (root, *beside) if p is not None))


def _looked(root: Path | None, beside: Sequence[Path], *, cwd: bool) -> str:
    """Every place a file or module was looked for, in order, for an error message."""
    places = [f"the rootdir {str(root)!r}"] if root is not None else []
    tests = [repr(str(d)) for d in _places(None, beside) if d != root]
    if tests:
        places.append(f"beside the tests in {', '.join(tests)}")
    if cwd and Path.cwd() not in _places(root, beside):
        places.append(f"the working directory {os.getcwd()!r}")
    return f"looked in {', '.join(places)} and on sys.path" if places else "looked on sys.path"


def _file(module: str, spec: str, root: Path | None, beside: Sequence[Path] = ()) -> Path:
    """The ``.py`` file of a spec: absolute, or found in the rootdir, beside the tests, in
    the working directory, then on ``sys.path``."""
    path = Path(module)
    if path.is_absolute():
        if path.is_file():
            return path
        raise ModelSpecError(f"Model spec {spec!r}: no such file {module!r}")
    for place in [*_places(root, beside), Path.cwd(), *(Path(p or ".") for p in sys.path)]:
        if (place / path).is_file():
            return place / path
    raise ModelSpecError(
        f"Model spec {spec!r}: no such file {module!r} ({_looked(root, beside, cwd=True)})"
    )


def _searchable(module: str, root: Path | None, beside: Sequence[Path] = ()) -> None:
    """Make ``module`` importable from where it is found first: the rootdir, as
    `pythonpath = .` would (a module beside the rootdir's ini file is importable from any
    working directory and under plain `pytest`), else the first test folder that holds it."""
    places = _places(root, beside)
    top = module.partition(".")[0]
    holder = next((p for p in places if PathFinder.find_spec(top, [str(p)]) is not None), root)
    for place in dict.fromkeys(p for p in (root, holder) if p is not None):
        if str(place) not in sys.path:
            sys.path.insert(0, str(place))


def _cannot_import(
    spec: str, module: str, exc: BaseException, root: Path | None, beside: Sequence[Path]
) -> ModelSpecError:
    return ModelSpecError(
        f"Model spec {spec!r}: cannot import module {module!r} ({exc}; "
        f"{_looked(root, beside, cwd=False)}); check that it is installed, or give a path to "
        f"a .py file"
    )


def _syntax_error(spec: str, exc: SyntaxError) -> ModelSpecError:
    return ModelSpecError(
        f"Model spec {spec!r}: {exc.filename}:{exc.lineno}: SyntaxError: {exc.msg}; fix the module"
    )


def _site(exc: BaseException) -> str:
    """Where an exception raised while a module was imported comes from: the outermost line of
    the user's code on its way (``file:line``), and the line that raised it when that is
    another; the import machinery's and this package's frames left out."""
    skipped = ("<", str(Path(__file__).parents[1]), str(Path(importlib.__file__).parent))
    frames = [
        f"{frame.f_code.co_filename}:{line}"
        for frame, line in traceback.walk_tb(exc.__traceback__)
        if not frame.f_code.co_filename.startswith(skipped)
    ]
    if not frames:
        return "an unknown place"
    return frames[0] if len(frames) == 1 else f"{frames[0]}, raised at {frames[-1]}"


def _failed(
    spec: str, module: str, exc: Exception, root: Path | None, beside: Sequence[Path]
) -> ModelSpecError:
    """The error of an import of ``module`` that raised ``exc``: the module (or a package
    above it) was not found, or its code raised, said with the exception and its line."""
    if isinstance(exc, SyntaxError):
        return _syntax_error(spec, exc)
    name = getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None
    if name is not None and not module.endswith(".py") and f"{module}.".startswith(f"{name}."):
        return _cannot_import(spec, module, exc, root, beside)
    fix = "; install what it imports, or fix the import" if isinstance(exc, ImportError) else ""
    return ModelSpecError(
        f"Model spec {spec!r}: importing {module!r} raised {type(exc).__name__}: {exc} "
        f"(at {_site(exc)}){fix}"
    )


def _import(module: str, spec: str, root: Path | None, beside: Sequence[Path] = ()) -> Any:
    """The module of a ``py:`` spec: a ``.py`` file or a dotted name, found as :func:`_file`
    and :func:`_searchable` say."""
    try:
        if module.endswith(".py"):
            path = _file(module, spec, root, beside)
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
        _searchable(module, root, beside)
        return importlib.import_module(module)
    except ModelSpecError:
        raise
    except Exception as exc:
        raise _failed(spec, module, exc, root, beside) from None


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


def _check_batch_call(spec: str, what: str, fn: Any) -> None:
    """:class:`ModelSpecError` when ``fn`` cannot be called with one batch of prompts."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin or C callable: nothing to read
        return
    try:
        signature.bind([])
    except TypeError as exc:
        raise ModelSpecError(
            f"Model spec {spec!r}: {what}{signature} cannot be called with one list of prompts "
            f"({exc}); a py: model is called with the batch as its one argument: give the "
            f"others defaults"
        ) from None


def _needs_arguments(spec: str, attr: str, why: str) -> ModelSpecError:
    return ModelSpecError(
        f"Model spec {spec!r}: class {attr!r} cannot be built without arguments ({why}); "
        f"point the spec at an instance or a function that returns one"
    )


def python_model(
    rest: str, spec: str, root: str | Path | None = None, beside: Sequence[str | Path] = ()
) -> Model:
    """Load ``MODULE:ATTR``. An object with ``generate`` receives Prompt objects; a class is
    instantiated with no arguments; any other callable receives a list of prompt strings.

    ``root`` (the rootdir) is where a relative ``.py`` path or a module name is looked up first,
    then ``beside`` (the folders of the test paths on the command line), then ``sys.path``.
    """
    module, attr = _parts(rest, spec)
    mod = _import(module, spec, Path(root) if root else None, [Path(p) for p in beside])
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
        _check_batch_call(spec, f"{attr}.generate", obj.generate)
        if not isinstance(getattr(obj, "name", None), str):
            try:
                obj.name = spec
            except AttributeError:
                pass
        return obj
    if not callable(obj):
        raise _not_callable(spec, attr, type(obj).__name__)
    _check_batch_call(spec, attr, obj)
    return CallableModel(obj, spec)


def check_python_spec(
    rest: str, spec: str, root: str | Path | None = None, beside: Sequence[str | Path] = ()
) -> None:
    """Check ``MODULE:ATTR`` without running the module: :class:`ModelSpecError` for a
    malformed spec, a file or module that cannot be found, a syntax error, an attribute no
    statement of the module binds (listing those it binds), a value that is a literal (a
    number, a string, a list…) and a class whose own ``__init__`` needs arguments.

    The module is found as importing it would find it (a dotted name's parent packages are
    imported to search them) and its source parsed with :mod:`ast`. What the source cannot
    settle — a module that binds names dynamically (``from x import *``, a module
    ``__getattr__``, ``globals()``), an extension module, a value built by a call — is left to
    :func:`python_model` when the model is first needed. Files and modules are looked for
    where :func:`python_model` looks.
    """
    module, attr = _parts(rest, spec)
    where, tests = Path(root) if root else None, [Path(p) for p in beside]
    path = (
        _file(module, spec, where, tests)
        if module.endswith(".py")
        else _located(module, spec, where, tests)
    )
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


def _located(module: str, spec: str, root: Path | None, beside: Sequence[Path]) -> Path | None:
    """The source file of a dotted module name, found as an import would; ``None`` when it has
    no Python source to read (an extension, a namespace package)."""
    _searchable(module, root, beside)
    try:
        found = importlib.util.find_spec(module)
    except Exception as exc:  # a parent package that is missing, or raised while imported
        raise _failed(spec, module, exc, root, beside) from None
    if found is None:
        missing = ModuleNotFoundError(f"No module named {module!r}", name=module)
        raise _cannot_import(spec, module, missing, root, beside)
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
