"""What a model spec that does not resolve was probably meant to be.

A spec's error names the spec the user most likely meant when one reading is plain: a name
close to a known one (``ref:idael`` → ``ref:ideal``, ``opneai:`` → ``openai:``), a ``py:`` spec
written without its scheme (``mymodel.py:answer``), a server's URL given where the model's name
goes. Each function returns the text to add to the message, empty when nothing is plain.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["bare_name", "did_you_mean", "near", "scheme", "served_model"]


def near(word: str, choices: Iterable[str]) -> str | None:
    """The choice closest to ``word``, if any is close (:func:`difflib.get_close_matches`)."""
    found = difflib.get_close_matches(word, list(choices), n=1)
    return found[0] if found else None


def did_you_mean(meant: str | None) -> str:
    """`` (did you mean 'X'?)``, or nothing."""
    return f" (did you mean {meant!r}?)" if meant else ""


def served_model(url: str) -> str:
    """How to find the name an OpenAI-compatible server at ``url`` serves its model under."""
    return f"MODEL is the name the server serves, listed by GET {url.rstrip('/')}/models"


def _module_like(text: str, places: Sequence[str]) -> bool:
    """Whether ``text`` reads as a ``py:`` spec's module: a ``.py`` path, or a dotted name
    whose top-level module is found in ``places`` or on ``sys.path`` (nothing is imported)."""
    if text.endswith(".py"):
        return True
    if not all(part.isidentifier() for part in text.split(".")):
        return False
    from importlib.machinery import PathFinder

    top = text.partition(".")[0]
    return PathFinder.find_spec(top, [*places, *sys.path]) is not None


def scheme(
    name: str, rest: str, target: str, known: Iterable[str], places: Sequence[str] = ()
) -> str:
    """The spec ``target`` (``name:rest``, ``name`` no known scheme) was probably meant as;
    ``places``: where a ``py:`` module is looked for before ``sys.path``."""
    if name.lower() in ("http", "https"):
        return (
            f" (a server's URL goes after the model's name: 'openai:MODEL@{target}'; "
            f"{served_model(target.partition('?')[0])})"
        )
    close = near(name.lower(), known)
    if close is not None:
        return did_you_mean(f"{close}:{rest}")
    if rest.isidentifier() and _module_like(name, places):
        return did_you_mean(f"py:{target}")
    return ""


def bare_name(name: str, aliases: Mapping[str, str], policies: Iterable[str]) -> str:
    """The spec a name with no scheme that is no alias was probably meant as: a close alias, a
    reference policy (``ideal`` → ``ref:ideal``; ``policies``: their names), a ``py:`` file, a
    model id."""
    alias = near(name, aliases)
    if alias is not None:
        return f" (did you mean the alias {alias!r}?)"
    policies = list(policies)
    policy = name if name in policies else near(name, policies)
    if policy is not None:
        return did_you_mean(f"ref:{policy}")
    if name.endswith(".py"):
        return f" (a py: spec names the callable too: 'py:{name}:ATTR')"
    if "/" in name and not name.startswith((".", "/", "~")):
        return (
            f" (did you mean 'hf:{name}', run in this process, or "
            f"'openai:{name}@http://HOST:PORT/v1', served?)"
        )
    return ""
