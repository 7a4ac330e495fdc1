"""Models: one small protocol, and the specs that name them on the command line.

A model answers a batch of prompts in one call. Specs are ``SCHEME:REST``:

- ``ref:NAME[?key=value&…]`` — a built-in reference policy (see :mod:`.reference`);
- ``py:MODULE:ATTR`` — a Python callable taking a list of prompt strings and returning a list of
  answer strings, or an object with ``generate(prompts)`` taking :class:`~pytest_competence.strategies.Prompt`
  objects (system prompt included);
- a bare name — an alias from the ``competence_models`` ini option (``qwen = py:my.models:qwen``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pytest_competence.strategies import Prompt

__all__ = ["Model", "ModelSpecError", "parse_aliases", "resolve_model", "SCHEMES"]


@runtime_checkable
class Model(Protocol):
    """Anything that answers prompts: batch in, batch out, one entry per prompt, in order.

    An entry is the raw answer text, or an :class:`Exception` for a prompt that could not be
    answered — recorded as an invalid observation with its reason, never dropped.
    """

    name: str

    def generate(self, prompts: Sequence[Prompt]) -> Sequence[str | BaseException]: ...


class ModelSpecError(ValueError):
    """A ``--competence-model`` spec that cannot be resolved; the message says how to fix it."""


def _reference(rest: str, spec: str) -> Model:
    from .reference import reference_policy

    return reference_policy(rest, spec)


def _python(rest: str, spec: str) -> Model:
    from .python import python_model

    return python_model(rest, spec)


#: Spec schemes and their loaders; each loader imports its backend only when used.
SCHEMES: dict[str, Callable[[str, str], Model]] = {"ref": _reference, "py": _python}


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


def resolve_model(spec: str, aliases: Mapping[str, str] | None = None) -> Model:
    """The model named by ``spec``, following at most one alias."""
    aliases = aliases or {}
    if not isinstance(spec, str) or not spec.strip():
        raise ModelSpecError(f"Expected a model spec such as 'ref:ideal', but got {spec!r}")
    spec = spec.strip()
    target = aliases.get(spec, spec)
    scheme, sep, rest = target.partition(":")
    if not sep:
        known = ", ".join(sorted(aliases)) or "none are configured"
        raise ModelSpecError(
            f"Unknown model {spec!r}: not an alias (aliases: {known}) and not a spec of the form "
            f"SCHEME:REST with a scheme among {', '.join(sorted(SCHEMES))} (e.g. 'ref:ideal'). "
            f"Define aliases in the competence_models ini option"
        )
    loader = SCHEMES.get(scheme)
    if loader is None:
        raise ModelSpecError(
            f"Unknown model scheme {scheme!r} in {target!r}; expected one of "
            f"{', '.join(sorted(SCHEMES))}"
        )
    model = loader(rest, target)
    if spec != target:
        model.name = spec  # results are reported under the alias the user typed
    return model
