"""Models: one small protocol, and the specs that name them on the command line.

A model answers a batch of prompts in one call. Specs are ``SCHEME:REST``:

- ``ref:NAME[?key=value&…]`` — a built-in reference policy (see :mod:`.reference`);
- ``py:MODULE:ATTR`` — a Python callable taking a list of prompt strings and returning a list of
  answer strings, or an object with ``generate(prompts)`` taking
  :class:`~pytest_competence.protocol.Prompt` objects (system prompt included);
- ``openai:MODEL@BASE_URL[,URL…][?key=value&…]`` — an OpenAI-compatible HTTP server (:mod:`.http`);
- ``hf:PATH_OR_ID[?key=value&…]`` — a transformers checkpoint loaded in this process (:mod:`.hf`);
- ``vllm:PATH_OR_ID[?key=value&…]`` — vLLM's offline engine in this process (:mod:`.vllm`);
- a bare name — an alias from the ``competence_models`` ini option (``qwen = py:my.models:qwen``).

Third-party backends register a scheme through the ``pytest_competence.models`` entry-point
group: the entry point's name is the scheme, its object a loader ``(rest, spec, settings)``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence

from pytest_competence.policy import ModelSpecError

from ._base import (
    Model,
    ModelCallError,
    ModelProtocolError,
    ModelRaised,
    ModelWrapper,
    NoAnswer,
    ScoringModel,
    Unloadable,
    as_they_come,
    groups_as_they_come,
    overlaps_generation,
    reads_family,
    reads_prompts,
    where_raised,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Loader",
    "Model",
    "ModelCallError",
    "ModelProtocolError",
    "ModelRaised",
    "ModelSpecError",
    "ModelWrapper",
    "NoAnswer",
    "SCHEMES",
    "ScoringModel",
    "Unloadable",
    "as_they_come",
    "groups_as_they_come",
    "overlaps_generation",
    "parse_aliases",
    "reads_family",
    "reads_prompts",
    "resolve_model",
    "split_specs",
    "where_raised",
]


#: ``loader(rest, spec, settings) -> Model``: ``rest`` is the spec after ``scheme:``, ``spec`` the
#: whole spec (for messages and the model's name), ``settings`` run-wide options such as
#: ``api_key_env`` (the ``competence_api_key_env`` ini option), ``rootdir`` and ``test_dirs``
#: (the folders of the test paths on the command line, joined by :data:`os.pathsep`).
Loader = Callable[[str, str, Mapping[str, str]], Model]

#: Entry-point group through which other packages add schemes.
ENTRY_POINT_GROUP = "pytest_competence.models"


def _reference(rest: str, spec: str, settings: Mapping[str, str]) -> Model:
    from .reference import reference_policy

    return reference_policy(rest, spec)


def _python(rest: str, spec: str, settings: Mapping[str, str]) -> Model:
    from .python import python_model

    tests = [p for p in settings.get("test_dirs", "").split(os.pathsep) if p]
    return python_model(rest, spec, settings.get("rootdir"), tests)


def _openai(rest: str, spec: str, settings: Mapping[str, str]) -> Model:
    from .http import openai_model

    return openai_model(rest, spec, settings)


def _hf(rest: str, spec: str, settings: Mapping[str, str]) -> Model:
    from .hf import hf_model

    return hf_model(rest, spec)


def _vllm(rest: str, spec: str, settings: Mapping[str, str]) -> Model:
    from .vllm import vllm_model

    return vllm_model(rest, spec)


#: Spec schemes and their loaders; each loader imports its backend only when used.
SCHEMES: dict[str, Loader] = {
    "ref": _reference,
    "py": _python,
    "openai": _openai,
    "hf": _hf,
    "vllm": _vllm,
}


def _plugged_in(scheme: str) -> Loader | None:
    """The loader another package registered for ``scheme``, if any (imported only now)."""
    from importlib.metadata import entry_points

    for entry in entry_points(group=ENTRY_POINT_GROUP, name=scheme):
        loader = entry.load()
        if not callable(loader):
            raise ModelSpecError(
                f"Entry point {entry.name!r} = {entry.value!r} in group {ENTRY_POINT_GROUP!r} "
                f"is a {type(loader).__name__}, not a loader (rest, spec, settings) -> model"
            )
        return loader
    return None


def _known_schemes() -> list[str]:
    """Every scheme a spec may start with: the built-in ones and those other packages register
    in the :data:`ENTRY_POINT_GROUP` entry-point group (their names only: nothing is loaded)."""
    from importlib.metadata import entry_points

    return sorted({*SCHEMES, *(entry.name for entry in entry_points(group=ENTRY_POINT_GROUP))})


def split_specs(text: str) -> list[str]:
    """Comma-separated specs; a piece starting with ``http://`` or ``https://`` is another base
    URL of the spec before it (``openai:m@http://a/v1,http://b/v1`` is one spec), and
    ``ref:shortcuts`` stands for every family's shortcut policies (``reference.SHORTCUTS``)."""
    specs: list[str] = []
    for piece in text.split(","):
        piece = piece.strip()
        if specs and piece.startswith(("http://", "https://")):
            specs[-1] += "," + piece
        elif piece == "ref:shortcuts":
            from .reference import SHORTCUTS

            specs.extend(SHORTCUTS)
        elif piece:
            specs.append(piece)
    return specs


def parse_aliases(lines: Sequence[str]) -> dict[str, str]:
    """Parse ``name = spec`` lines (the ``competence_models`` ini option) into a mapping."""
    aliases: dict[str, str] = {}
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, spec = line.partition("=")
        name, spec = name.strip(), spec.strip()
        if not sep or not name or not spec or ":" in name:
            raise ModelSpecError(
                f"competence_models: cannot read {line!r}; write one alias per line as "
                f"'name = scheme:rest', e.g. 'qwen = py:my_models:qwen'"
            )
        aliases[name] = spec
    return aliases


def resolve_model(
    spec: str,
    aliases: Mapping[str, str] | None = None,
    *,
    settings: Mapping[str, str] | None = None,
) -> Model:
    """The model named by ``spec``, following at most one alias.

    ``settings`` are run-wide backend options (``api_key_env``: the environment variable holding
    the API key of ``openai:`` models unless the spec names its own).
    """
    aliases = aliases or {}
    if not isinstance(spec, str) or not spec.strip():
        raise ModelSpecError(f"Expected a model spec such as 'ref:ideal', but got {spec!r}")
    spec = spec.strip()
    target = aliases.get(spec, spec)
    scheme, sep, rest = target.partition(":")
    if not sep:
        from . import _suggest
        from .reference import POLICIES

        known = ", ".join(sorted(aliases)) or "none are configured"
        raise ModelSpecError(
            f"Unknown model {spec!r}{_suggest.bare_name(spec, aliases, POLICIES)}: not an alias "
            f"(aliases: {known}) and not a spec of the form SCHEME:REST with a scheme among "
            f"{', '.join(_known_schemes())} (e.g. 'ref:ideal'). Define aliases in the "
            f"competence_models ini option"
        )
    loader = SCHEMES.get(scheme) or _plugged_in(scheme)
    if loader is None:
        from . import _suggest

        schemes, given = _known_schemes(), settings or {}
        places = [given.get("rootdir", ""), *given.get("test_dirs", "").split(os.pathsep)]
        meant = _suggest.scheme(scheme, rest, target, schemes, [p for p in places if p])
        raise ModelSpecError(
            f"Unknown model scheme {scheme!r} in {target!r}{meant}; expected one of "
            f"{', '.join(schemes)}, or a scheme registered in the {ENTRY_POINT_GROUP!r} "
            f"entry-point group"
        )
    model = loader(rest, target, settings or {})
    if spec != target:
        model.name = spec  # results are reported under the alias the user typed
    return model
