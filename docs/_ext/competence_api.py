"""The Python API reference: ``competence-api`` autodocs every public module of the package
(every module path without an underscored part), and the docstrings are read as written —
their citations linked (:func:`competence_docs.cite`), their Google-style sections parsed,
their short names resolved where exactly one documented object fits.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from competence_docs import _fence, _MarkdownDirective, cite
from docutils import nodes
from sphinx.application import Sphinx


def public_modules(depth: int = 9) -> list[str]:
    """Every public module of the package, ``depth`` levels below it at most."""
    import pkgutil

    import pytest_competence

    found = []
    for module in pkgutil.walk_packages(pytest_competence.__path__, "pytest_competence."):
        parts = module.name.split(".")[1:]
        if len(parts) <= depth and not any(part.startswith("_") for part in parts):
            found.append(module.name)
    return sorted(found)


def _home(obj: Any, modules: list[str]) -> str | None:
    """The public module that documents ``obj``: the deepest listed module it was defined under."""
    defined = getattr(obj, "__module__", None) or ""
    homes = [m for m in modules if defined == m or defined.startswith(m + ".")]
    return max(homes, key=len) if homes else None


def documented_names(name: str, modules: list[str]) -> list[str]:
    """The names of module ``name``'s ``__all__`` that it documents: those defined under it.

    A name it re-exports from another listed module is documented there. A package that hands
    its names on lazily (PEP 562: ``minimise``, ``audit``) gets each name set on it, because
    autodoc lists a module's members with ``dir()``."""
    import importlib

    module = importlib.import_module(name)
    names = []
    for attr in getattr(module, "__all__", ()):
        value = getattr(module, attr)
        setattr(module, attr, value)
        if _home(value, modules) in (None, name):
            names.append(attr)
    return names


class Api(_MarkdownDirective):
    """``automodule`` for every public module, except those named in the content (one a line),
    which have a page of their own. A name a module re-exports from another is documented once,
    where it is defined."""

    has_content = True

    def lines(self) -> Iterator[str]:
        elsewhere = {line.strip() for line in self.content if line.strip()}
        modules = public_modules()
        for name in modules:
            if name in elsewhere:
                continue
            yield f"## `{name}`"
            yield ""
            rst = [f".. automodule:: {name}"]
            members = documented_names(name, modules)
            if members:
                rst += [f"   :members: {', '.join(members)}", "   :imported-members:"]
            # autodoc writes reStructuredText: parsed as such, not as Markdown.
            yield from _fence("eval-rst", "", rst)


def resolve_short_names(
    app: Sphinx, env: Any, node: nodes.Element, contnode: nodes.Element
) -> nodes.Element | None:
    """Resolve a Python reference by its dotted tail, or as a package's re-export, when exactly
    one documented object fits.

    Docstrings name things as their module sees them (``InvalidArgument``, ``Evaluation.rows``),
    while the reference documents each name once, where it is defined."""
    if node.get("refdomain") != "py":
        return None
    target = str(node.get("reftarget", "")).lstrip("~.")
    domain = env.get_domain("py")
    prefix, _, last = target.rpartition(".")
    found = {
        (docname, anchor): name
        for name, _, _, docname, anchor, _ in domain.get_objects()
        if name == target
        or name.endswith("." + target)
        # ``package.name`` for a name its package re-exports, documented in its own module
        or (prefix and name.startswith(prefix + ".") and name.endswith("." + last))
    }
    if len(found) != 1:
        return None
    from sphinx.util.nodes import make_refnode

    ((docname, anchor), name), *_ = found.items()
    return make_refnode(app.builder, node["refdoc"], docname, anchor, contnode, name)


def quiet_docstring_references(app: Sphinx, domain: Any, node: nodes.Element) -> bool | None:
    """Let an unresolved reference in a docstring or an autodoc signature stay literal text.

    Docstrings name things as their module sees them, internals included (``_shrink``,
    ``Budget``, a module's own constants), and the API pages document each public name once;
    what :func:`resolve_short_names` cannot place is shown as code. Every unresolved reference
    on the pages themselves still warns, and ``-W`` fails the build on it."""
    source = str(node.source or "")
    if source and "docstring of" not in source:
        return None  # a page's own reference (autodoc's signatures have no source)
    return True


def _cite_docstring(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    lines[:] = [cite(line, markup="rst") for line in lines]


def _google_sections(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """``Args:`` and ``Returns:`` sections as napoleon reads them, except in the docstrings of
    attributes and properties, which napoleon would read as ``type: description`` (and
    these docstrings are plain sentences)."""
    if what in ("attribute", "data", "property"):
        return
    from sphinx.ext.napoleon import Config
    from sphinx.ext.napoleon.docstring import GoogleDocstring

    config = Config(napoleon_numpy_docstring=False, napoleon_use_rtype=False)
    lines[:] = GoogleDocstring(lines, config, app, what, name, obj, options).lines()


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the API directive and the docstring handling."""
    app.add_directive("competence-api", Api)
    app.connect("autodoc-process-docstring", _cite_docstring)
    app.connect("autodoc-process-docstring", _google_sections)
    app.connect("missing-reference", resolve_short_names)
    app.connect("warn-missing-reference", quiet_docstring_references)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
