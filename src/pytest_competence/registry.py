"""The families known by name: the built-in ones and those other packages register.

A package adds a family through the ``pytest_competence.families`` entry-point group::

    [project.entry-points."pytest_competence.families"]
    brackets = "competence_brackets:Brackets"

The entry point's name is the family's name (the marker's ``family=``, ``competence generate``,
the reports); its object is the family class, a subclass of
:class:`~pytest_competence.protocol.Family`. The built-in families are named the same way, by
module and class (:data:`BUILTIN`), so nothing here imports a family: each is imported when its
own name is first looked up (or every family is listed), and validated then, with errors that
name what is wrong. Installing a family costs a pytest session nothing it does not use, and
this module imports the protocol only when a family is first looked up: the plugin reads
:data:`DEFAULT_FAMILY` at start-up.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_competence.protocol import Family

__all__ = [
    "BUILTIN",
    "DEFAULT_FAMILY",
    "ENTRY_POINT_GROUP",
    "FAMILIES",
    "FamilyRegistry",
    "check_family_class",
    "family",
    "family_class",
]

#: The entry-point group through which other packages register families.
ENTRY_POINT_GROUP = "pytest_competence.families"

#: The families this package ships, by name: ``module:class``, imported on first lookup.
BUILTIN = {
    "ordering": "pytest_competence.strategies.ordering:Ordering",
    "horn": "pytest_competence.strategies.horn:Horn",
    "reformulations": "pytest_competence.strategies.reformulations:Reformulations",
    "intervention": "pytest_competence.strategies.intervention:Intervention",
    "programs": "pytest_competence.strategies.programs:Programs",
    "raven": "pytest_competence.strategies.raven:Raven",
    "concepts": "pytest_competence.strategies.concepts:Concepts",
    "grammar": "pytest_competence.strategies.grammar:Grammar",
}

#: The family of a ``@pytest.mark.competence`` declaration that names none.
DEFAULT_FAMILY = "ordering"


def check_family_class(cls: object, name: str, origin: str = "") -> type[Family]:
    """Return ``cls`` if it can be registered as the family ``name``, else raise
    :class:`InvalidArgument` saying what is missing or wrong and where it came from."""
    from pytest_competence.protocol import REQUIRED, Family, InvalidArgument

    where = f" ({origin})" if origin else ""
    if not isinstance(cls, type):
        raise InvalidArgument(
            f"Expected family {name!r}{where} to be a family class, but got {cls!r} "
            f"(type={type(cls).__name__}); register the class itself, e.g. "
            f"'{name} = my_package:MyFamily'"
        )
    abstract: frozenset[str] = getattr(cls, "__abstractmethods__", frozenset())
    missing = [k for k in REQUIRED if not hasattr(cls, k) or k in abstract]
    if missing:
        raise InvalidArgument(
            f"Family class {cls.__qualname__}{where} lacks {', '.join(missing)}; a family "
            f"needs {', '.join(REQUIRED)} (see pytest_competence.strategies.Family)"
        )
    if not issubclass(cls, Family):
        raise InvalidArgument(
            f"Family class {cls.__qualname__}{where} does not subclass "
            f"pytest_competence.strategies.Family; subclass it, which gives the optional hooks "
            f"their defaults"
        )
    declared = cls.name
    if declared != name:
        raise InvalidArgument(
            f"Family class {cls.__qualname__}{where} is registered as {name!r} but its name is "
            f"{declared!r}; the two must agree, set name = {name!r} on the class"
        )
    for method in (
        "design",
        "parse",
        "audit_policies",
        "shortcut_policies",
        "ideal_answer",
        "metrics",
        "tables",
        "figures",
        "record_meta",
        "audit_components",
    ):
        if not callable(getattr(cls, method)):
            raise InvalidArgument(
                f"Expected {cls.__qualname__}.{method}{where} to be a method, but got "
                f"{getattr(cls, method)!r}"
            )
    answers = cls.answer_space
    if (
        not isinstance(answers, (tuple, property))
        or isinstance(answers, tuple)
        and not all(isinstance(a, str) for a in answers)
    ):
        raise InvalidArgument(
            f"Expected {cls.__qualname__}.answer_space{where} to be a tuple of answer strings "
            f"(() for open answers), but got {answers!r}"
        )
    for key, kind in (("shortcuts", str), ("default_levels", int)):
        value = getattr(cls, key)
        if not isinstance(value, tuple) or not all(isinstance(v, kind) for v in value):
            raise InvalidArgument(
                f"Expected {cls.__qualname__}.{key}{where} to be a tuple of {kind.__name__}, "
                f"but got {value!r}"
            )
    bad = [s for s in cls.shortcuts if not s.startswith("ref:")]
    if bad:
        raise InvalidArgument(
            f"Expected {cls.__qualname__}.shortcuts{where} to hold reference specs such as "
            f"'ref:NAME', but got {bad[0]!r}"
        )
    return cls


def _entry_points() -> dict[str, Any]:
    from importlib.metadata import entry_points

    return {entry.name: entry for entry in entry_points(group=ENTRY_POINT_GROUP)}


def _load(name: str, where: str) -> type[Family]:
    """The built-in family ``name`` from ``where`` (``module:class``), validated."""
    module, _, attribute = where.partition(":")
    return check_family_class(getattr(importlib.import_module(module), attribute), name, "built-in")


class FamilyRegistry(MutableMapping[str, "type[Family]"]):
    """Family classes by name: the built-in ones first, then the entry points' in name order.

    ``builtin`` maps each built-in name to its class or to ``module:class``. Iterating gives
    names without importing anything; looking a name up imports and validates that family once.
    Assigning registers a class in this process (validated the same way).
    """

    def __init__(self, builtin: Mapping[str, type | str]) -> None:
        self._classes: dict[str, type[Family] | str] = {
            name: where if isinstance(where, str) else check_family_class(where, name, "built-in")
            for name, where in builtin.items()
        }
        self._builtin = tuple(builtin)
        self._plugins: dict[str, Any] | None = None  # entry points not yet loaded
        self._from_entry_points: set[str] = set()

    def _pending(self, refresh: bool = False) -> dict[str, Any]:
        from pytest_competence.protocol import InvalidArgument

        if self._plugins is None or refresh:
            found = _entry_points()
            self._plugins = {k: v for k, v in found.items() if k not in self._classes}
            clash = sorted(set(self._builtin) & set(found))
            if clash:
                entry = found[clash[0]]
                raise InvalidArgument(
                    f"Entry point {entry.name!r} = {entry.value!r} in group "
                    f"{ENTRY_POINT_GROUP!r} clashes with the built-in family {clash[0]!r}; "
                    f"register the family under another name"
                )
        return self._plugins

    def __getitem__(self, name: str) -> type[Family]:
        found = self._classes.get(name) if isinstance(name, str) else None
        if isinstance(found, str):
            self._classes[name] = found = _load(name, found)
        if found is not None:
            return found
        if not isinstance(name, str):
            raise KeyError(name)
        pending = self._pending()
        if name not in pending:
            pending = self._pending(refresh=True)  # a package installed since (sys.path grew)
        entry = pending.get(name)
        if entry is None:
            raise KeyError(name)
        origin = f"entry point {entry.name} = {entry.value}"
        from pytest_competence.protocol import InvalidArgument

        try:
            loaded = entry.load()
        except Exception as exc:
            raise InvalidArgument(
                f"Family {name!r}: cannot load {origin}: {type(exc).__name__}: {exc}"
            ) from None
        cls = check_family_class(loaded, name, origin)
        self._classes[name] = cls
        self._from_entry_points.add(name)
        del pending[name]
        return cls

    def __setitem__(self, name: str, cls: type[Family]) -> None:
        self._classes[name] = check_family_class(cls, name)

    def __delitem__(self, name: str) -> None:
        del self._classes[name]

    def __iter__(self) -> Iterator[str]:
        yield from list(self._classes)
        yield from sorted(set(self._pending()) - set(self._classes))

    def __len__(self) -> int:
        return len(list(iter(self)))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in set(self)

    @property
    def builtin(self) -> tuple[str, ...]:
        """The names of the families this package ships."""
        return tuple(n for n in self._classes if n in self._builtin)

    def refresh(self) -> None:
        """Forget the entry points read and loaded so far (after a package was installed or
        removed in this process); built-in and assigned families stay."""
        for name in self._from_entry_points:
            self._classes.pop(name, None)
        self._from_entry_points.clear()
        self._plugins = None

    def options(self, name: str) -> tuple[str, ...]:
        """Constructor keywords of the family called ``name``, ``()`` if there is none."""
        from pytest_competence.protocol import InvalidArgument

        try:
            cls = self[name]
        except (KeyError, InvalidArgument):
            return ()
        return tuple(p for p in inspect.signature(cls).parameters if p != "self")

    def hooks(self, name: str) -> type[Family]:
        """The class whose optional hooks serve the family called ``name``: the registered
        class, else :class:`~pytest_competence.protocol.Family` itself, every hook's default
        (a family object no registry knows, e.g. one rebuilt from an archive)."""
        from pytest_competence.protocol import Family

        found = self.get(name)
        return Family if found is None else found


#: Family classes by name, as markers, ``competence generate``, reports and ``ref:`` policies
#: refer to them: the built-in ones, then those registered in the ``pytest_competence.families``
#: entry-point group (each imported when first looked up).
FAMILIES = FamilyRegistry(BUILTIN)


def family_class(name: str) -> type[Family]:
    """The class of the family called ``name``; an unknown name is an :class:`InvalidArgument`
    that lists the families there are."""
    from pytest_competence.protocol import InvalidArgument

    try:
        return FAMILIES[name]
    except (KeyError, TypeError):
        raise InvalidArgument(
            f"Unknown family={name!r}. Expected one of: {', '.join(FAMILIES)} (or a family "
            f"registered in the {ENTRY_POINT_GROUP!r} entry-point group)"
        ) from None


def family(name: str, **options: object) -> Family:
    """Construct the family called ``name`` with ``options``; unknown names list what exists,
    unknown options the family's own (:func:`~pytest_competence.protocol.construct`)."""
    from pytest_competence.protocol import construct

    return construct(family_class(name), options)
