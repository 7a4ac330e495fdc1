"""Sphinx directives that write the reference from the code, so a new option cannot go undocumented.

- ``competence-pytest-options`` runs the plugin's own ``pytest_addoption`` against a recording
  parser and writes every command-line flag (``std:option`` under the program ``pytest``) and
  every ini option (``std:confval``) with its type, default and help;
- ``competence-scheme`` writes one model scheme's query parameters from its backend's ``Param``
  table (``PARAMS`` of ``models/http.py``, ``hf.py``, ``vllm.py``), or, for ``ref:``, every
  reference policy with the parameters of its factory's signature (``std:scheme-param`` and
  ``std:policy`` objects);
- ``competence-command`` walks the ``competence`` command's argparse parser (each family's
  ``generate`` flags included) and writes its subcommands' options;
- ``competence-prompt`` renders one real prompt of a family, as a model receives it;
- ``competence-markers`` writes the markers' lines of ``pytest --markers`` and every family's
  options (its constructor's parameters), which the ``competence`` marker passes on;
- ``competence-api`` (in :mod:`competence_api`, with the docstring handling) autodocs every public
  module of the package, so a new module is documented when it is added.

Docstrings and help texts cite the source papers by short name and arXiv id (``CBE paper,
arXiv:2610.22894, §4.1``); :func:`cite` links each id (and names a ``seeds/00N`` left by mistake).
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

#: The source papers, by the short form the code's docstrings use.
PAPERS = {
    "000": ("CBE paper", "https://arxiv.org/abs/2610.22894"),
    "001": ("CBE paper", "https://arxiv.org/abs/2610.22894"),
    "002": ("systematicity paper", "https://arxiv.org/abs/2609.13948"),
    "003": ("audit paper", "https://arxiv.org/abs/2608.13326"),
    "004": ("CRTBench paper", None),
}
_SEEDS = re.compile(r"seeds/(00\d)")
_ARXIV = re.compile(r"(?<![\w/\[`])arXiv:(\d{4}\.\d{4,5})(?![\w\]])")

#: Each built-in scheme and the module whose table documents it (``None``: no parameters).
SCHEME_MODULES = {
    "ref": "pytest_competence.models.reference",
    "py": None,
    "openai": "pytest_competence.models.http",
    "hf": "pytest_competence.models.hf",
    "vllm": "pytest_competence.models.vllm",
}


def cite(text: str, *, markup: str = "md") -> str:
    """``text`` with every ``arXiv:ID`` linked, and every ``seeds/00N`` replaced by the
    paper's short name, linked."""

    def paper(match: re.Match[str]) -> str:
        name, url = PAPERS[match[1]]
        if url is None:
            return name
        return f"[{name}]({url})" if markup == "md" else f"`{name} <{url}>`__"

    def arxiv(match: re.Match[str]) -> str:
        url = f"https://arxiv.org/abs/{match[1]}"
        return f"[arXiv:{match[1]}]({url})" if markup == "md" else f"`arXiv:{match[1]} <{url}>`__"

    # The code cites a paper by its short form and arXiv id: the id becomes a link.
    return _ARXIV.sub(arxiv, _SEEDS.sub(paper, text))


class RecordingParser:
    """Stands in for :class:`pytest.Parser`: records what ``pytest_addoption`` registers."""

    def __init__(self) -> None:
        self.options: list[tuple[tuple[str, ...], dict[str, Any]]] = []
        self.ini: list[tuple[str, str, str | None, Any]] = []

    def getgroup(self, name: str, description: str = "", after: str | None = None) -> Any:
        """A group whose ``addoption`` records into this parser."""
        return self

    def addoption(self, *names: str, **attrs: Any) -> None:
        """Record a command-line option."""
        self.options.append((names, attrs))

    def addini(
        self, name: str, help: str, type: str | None = None, default: Any = None, **_: Any
    ) -> None:
        """Record an ini option."""
        self.ini.append((name, help, type, default))


class _RecordingPluginManager:
    """Stands in for pytest's plugin manager: records the plugins ``pytest_addhooks`` registers."""

    def __init__(self) -> None:
        self.plugins: list[Any] = []

    def add_hookspecs(self, module: Any) -> None:
        """Hook specifications register no options."""

    def register(self, plugin: Any, name: str | None = None) -> None:
        """Record a plugin module, whose own ``pytest_addoption`` adds options too."""
        self.plugins.append(plugin)


def registered_options() -> RecordingParser:
    """What the plugin registers, in registration order: its own options, then those of the
    plugins its ``pytest_addhooks`` registers (``--competence-probe``)."""
    from pytest_competence import plugin

    manager = _RecordingPluginManager()
    plugin.pytest_addhooks(manager)  # type: ignore[arg-type]
    parser = RecordingParser()
    for module in (plugin, *manager.plugins):
        if hasattr(module, "pytest_addoption"):
            module.pytest_addoption(parser)
    return parser


def _literal(value: Any) -> str:
    return f"``{value}``" if value not in (None, "") else "none"


def _argument(names: Iterable[str], attrs: dict[str, Any]) -> str:
    """``--flag METAVAR`` (or ``--flag {a,b}``) as Sphinx's ``option`` directive wants it."""
    flag = ", ".join(names)
    action = attrs.get("action")
    if action in ("store_true", "store_false", "count", "help", "version"):
        return flag
    if attrs.get("choices"):
        return f"{flag} {{{','.join(attrs['choices'])}}}"
    metavar = attrs.get("metavar") or attrs.get("dest") or names[-1].lstrip("-")
    return f"{flag} {str(metavar).upper()}"


def _fence(name: str, argument: str, body: Iterable[str], **options: str) -> Iterator[str]:
    yield f"````{{{name}}} {argument}"
    for key, value in options.items():
        yield f":{key}: {value}"
    yield ""
    yield from body
    yield "````"
    yield ""


class _MarkdownDirective(SphinxDirective):
    """A directive that writes MyST Markdown and parses it in place: each subclass's
    ``lines()`` yields the Markdown."""

    lines: Any  # () -> Iterator[str], defined by every subclass

    def run(self) -> list[nodes.Node]:
        container = nodes.container()
        text = StringList(list(self.lines()), source=f"<{self.name}>")
        self.state.nested_parse(text, self.content_offset, container)
        return container.children


class PytestOptions(_MarkdownDirective):
    """Every flag (``:what: flags``) or ini option (``:what: ini``) the plugin registers."""

    option_spec = {"what": lambda arg: directives.choice(arg, ("flags", "ini"))}

    def lines(self) -> Iterator[str]:
        registered = registered_options()
        if self.options.get("what") == "ini":
            for name, help, kind, default in registered.ini:
                shown = (
                    "" if kind in ("linelist", "bool") and default in (None, [], False) else default
                )
                yield from _fence(
                    "confval",
                    name,
                    [cite(help)],
                    type=f"``{kind or 'string'}``",
                    default=_literal(shown if not isinstance(shown, bool) else str(shown).lower()),
                )
            return
        yield from _fence("program", "pytest", [])
        for names, attrs in registered.options:
            body = [cite(attrs.get("help", ""))]
            if attrs.get("default") not in (None, [], False, ""):
                body += ["", f"Default: ``{attrs['default']}``."]
            yield from _fence("option", _argument(names, attrs), body)


def _accepts(read: Any) -> str:
    """What a ``Param`` reader accepts, in the words of its own error message."""
    try:
        read("\x00")
    except ValueError as exc:
        return str(exc)
    return "any text"


def scheme_parameters(scheme: str) -> list[tuple[str, str, Any, str]]:
    """``(name, accepts, default, help)`` for each query parameter of ``scheme``."""
    import importlib

    module_name = SCHEME_MODULES[scheme]
    if module_name is None or scheme == "ref":
        return []
    module = importlib.import_module(module_name)
    return [
        (p.name, _accepts(p.read) + (" (repeatable)" if p.many else ""), p.default, p.help)
        for p in module.PARAMS
    ]


def keyword_parameters(function: Any) -> dict[str, Any]:
    """The parameters a spec's query or a marker's keyword can set, with their defaults."""
    params = inspect.signature(function).parameters.values()
    return {
        p.name: p.default for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }


def policy_parameters() -> dict[str, dict[str, Any]]:
    """Each reference policy's parameters and defaults, from its factory's signature."""
    from pytest_competence.models.reference import POLICIES

    return {name: keyword_parameters(factory) for name, factory in POLICIES.items()}


def _policy_help(name: str) -> str:
    """The first line of the policy's docstring, where its factory has one."""
    from pytest_competence.models.reference import POLICIES

    doc = inspect.getdoc(POLICIES[name]) or ""
    return doc.split("\n\n")[0].replace("\n", " ")


class Scheme(_MarkdownDirective):
    """One model scheme's parameters: ``{competence-scheme} openai``."""

    required_arguments = 1

    def lines(self) -> Iterator[str]:
        from pytest_competence.models import SCHEMES

        scheme = self.arguments[0]
        if scheme not in SCHEMES or scheme not in SCHEME_MODULES:
            raise self.error(
                f"competence-scheme: {scheme!r} is not a documented scheme; the schemes are "
                f"{', '.join(SCHEMES)} (add a new one to SCHEME_MODULES in docs/_ext)"
            )
        if scheme == "ref":
            from pytest_competence.models.reference import READS

            for name, params in policy_parameters().items():
                reads = ", ".join(READS.get(name, ())) or "every family's"
                body = [f"Reads {reads} prompts."]
                if params:
                    body += [
                        "",
                        "Parameters: "
                        + ", ".join(
                            f"`{key}` (default ``{default or 'none'}``)"
                            for key, default in params.items()
                        )
                        + ".",
                    ]
                yield from _fence("policy", f"ref:{name}", body)
                for key, default in params.items():
                    yield from _fence(
                        "scheme-param",
                        f"ref:{name}?{key}",
                        [f"Parameter `{key}` of `ref:{name}`; default ``{default or 'none'}``."],
                    )
            return
        for name, accepts, default, help in scheme_parameters(scheme):
            body = [cite(help) + ".", "", f"Accepts {accepts}; default {_literal(default)}."]
            yield from _fence("scheme-param", f"{scheme}:{name}", body)


def _walk(
    parser: argparse.ArgumentParser, prog: str
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, f"{prog} {name}")


def command_parsers() -> dict[str, argparse.ArgumentParser]:
    """``competence …`` → its parser; each family's ``generate`` parser with its own flags."""
    from pytest_competence.cli import _parser
    from pytest_competence.registry import FAMILIES

    found = dict(_walk(_parser([]), "competence"))
    for family in FAMILIES:
        found.update(
            (prog, parser)
            for prog, parser in _walk(_parser(["generate", family]), "competence")
            if prog == f"competence generate {family}"
        )
    return found


def _actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        a
        for a in parser._actions
        if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
    ]


def _action_argument(action: argparse.Action) -> str:
    if not action.option_strings:
        return str(action.metavar or action.dest).upper()
    attrs = {"metavar": action.metavar, "dest": action.dest, "choices": action.choices}
    if action.nargs == 0:
        attrs["action"] = "store_true"
    return _argument(action.option_strings, attrs)


class Command(_MarkdownDirective):
    """The options of ``competence SUBCOMMAND`` (``{competence-command} generate``), or of every
    subcommand (``{competence-command} *``).

    For ``generate``, the flags every family shares, then each family's own."""

    required_arguments = 1
    final_argument_whitespace = True

    def _options(self, prog: str, parser: argparse.ArgumentParser, skip: set[str]) -> Iterator[str]:
        yield from _fence("program", prog, [])
        for action in _actions(parser):
            if action.dest in skip:
                continue
            body = [cite((action.help or "").replace("%(default)s", str(action.default)))]
            if action.option_strings and action.default not in (None, [], False, "", "-"):
                body += ["", f"Default: ``{action.default}``."]
            yield from _fence("option", _action_argument(action), body)

    def lines(self) -> Iterator[str]:
        if self.arguments[0] == "*":
            yield from self._every_command()
            return
        yield from self._command(self.arguments[0])

    def _every_command(self) -> Iterator[str]:
        """A rubric and the options of each subcommand, in the parser's order, so a new one
        is documented when it is added."""
        for prog, parser in command_parsers().items():
            words = prog.split()[1:]
            has_subcommands = any(
                isinstance(a, argparse._SubParsersAction) for a in parser._actions
            )
            if not words:
                if _actions(parser):  # the command's own flags (--version)
                    yield from self._options(prog, parser, set())
                continue
            if words[:1] == ["generate"]:
                if len(words) > 1:
                    continue  # one family's generate: under generate
            elif has_subcommands:
                continue  # a group of subcommands, documented one by one
            yield from _fence("rubric", prog, [])
            yield from self._command(" ".join(words))

    def _command(self, name: str) -> Iterator[str]:
        parsers = command_parsers()
        prog = f"competence {name}"
        if prog not in parsers:
            raise self.error(f"competence-command: no subcommand {prog!r}")
        parser = parsers[prog]
        if name != "generate":
            if parser.description:
                yield cite(parser.description)
                yield ""
            yield from self._options(prog, parser, set())
            return
        from pytest_competence.registry import FAMILIES

        families = {f: parsers[f"competence generate {f}"] for f in FAMILIES}
        common = set.intersection(*({a.dest for a in _actions(p)} for p in families.values()))
        first = next(iter(families.values()))
        yield "Every family takes these flags:"
        yield ""
        own_first = {a.dest for a in _actions(first)} - common
        yield from self._options("competence generate", first, own_first)
        for family, parser in families.items():
            own = [a for a in _actions(parser) if a.dest not in common]
            if own:
                yield f"`competence generate {family}` also takes:"
                yield ""
                yield from self._options(f"competence generate {family}", parser, common)


class RenderedPrompt(_MarkdownDirective):
    """One real prompt of a family, as the model receives it (``{competence-prompt} ordering``).

    Options: ``:level:`` (default the family's first default level or 4), ``:presentation:``
    (default the original), ``:index:`` (instance, default 0), ``:seed:`` (default 1),
    ``:options:`` (the family's constructor options as JSON) and ``:pairs:`` (default 4)."""

    required_arguments = 1
    option_spec = {
        "level": int,
        "presentation": directives.unchanged,
        "index": int,
        "seed": int,
        "pairs": int,
        "options": directives.unchanged,
    }

    def lines(self) -> Iterator[str]:
        from pytest_competence.registry import FAMILIES

        name = self.arguments[0]
        options = json.loads(self.options.get("options", "{}"))
        family = FAMILIES[name](**options)
        presentation = self.options.get("presentation", family.default_presentations[0])
        level = self.options.get("level", 4)
        items = family.design(
            levels=[level],
            pairs=self.options.get("pairs", 4),
            seed=self.options.get("seed", 1),
            presentations=[presentation],
        )
        prompt = items[self.options.get("index", 0)].prompts[0]
        yield f"`Prompt.system` ({len(prompt.system)} characters):"
        yield ""
        yield "```text"
        yield prompt.system or "(empty)"
        yield "```"
        yield ""
        yield f"`Prompt.text` ({len(prompt.text)} characters):"
        yield ""
        yield "```text"
        yield prompt.text
        yield "```"
        yield ""
        yield (
            f"Its gold answer is `{prompt.gold}`, its answer space "
            f"`{', '.join(prompt.answer_space)}` (`{prompt.instance_id}`, presentation "
            f"`{prompt.presentation}`, θ = `{json.dumps(dict(prompt.params), default=str)}`)."
        )


def family_options() -> dict[str, dict[str, Any]]:
    """Each registered family's options and their defaults, from its constructor's signature."""
    from pytest_competence.registry import FAMILIES

    return {name: keyword_parameters(cls) for name, cls in FAMILIES.items()}


class Markers(_MarkdownDirective):
    """The markers' lines (as ``pytest --markers`` prints them) and each family's options."""

    def lines(self) -> Iterator[str]:
        from pytest_competence.minimise import SHRINK_MARKER_HELP
        from pytest_competence.plugin import MARKER_HELP
        from pytest_competence.registry import DEFAULT_FAMILY

        yield "```text"
        yield "@pytest.mark." + MARKER_HELP.format(family=DEFAULT_FAMILY)
        yield "@pytest.mark." + SHRINK_MARKER_HELP
        yield "```"
        yield ""
        yield "## Family options"
        yield ""
        yield (
            "Every other keyword of the marker is an option of the family, passed to its "
            "constructor; these are the registered families' options and defaults:"
        )
        yield ""
        yield "| family | option | default |"
        yield "|---|---|---|"
        for family, params in family_options().items():
            for name, default in params.items():
                shown = "required" if default is inspect.Parameter.empty else f"`{default!r}`"
                yield f"| {{doc}}`../families/{family}` | `{name}` | {shown} |"


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the directives and the object types they describe."""
    app.add_object_type("scheme-param", "scheme-param", "pair: %s; model spec parameter")
    app.add_object_type("policy", "policy", "pair: %s; reference policy")
    app.add_directive("competence-pytest-options", PytestOptions)
    app.add_directive("competence-scheme", Scheme)
    app.add_directive("competence-command", Command)
    app.add_directive("competence-prompt", RenderedPrompt)
    app.add_directive("competence-markers", Markers)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
