"""Models: one small protocol, and the specs that name them on the command line.

A model answers a batch of prompts in one call. Specs are ``SCHEME:REST``:

- ``ref:NAME[?key=value&…]`` — a built-in reference policy (see :mod:`.reference`);
- ``py:MODULE:ATTR`` — a Python callable taking a list of prompt strings and returning a list of
  answer strings, or an object with ``generate(prompts)`` taking :class:`~pytest_competence.strategies.Prompt`
  objects (system prompt included);
- ``openai:MODEL@BASE_URL[,URL…][?key=value&…]`` — an OpenAI-compatible HTTP server (:mod:`.http`);
- ``hf:PATH_OR_ID[?key=value&…]`` — a transformers checkpoint loaded in this process (:mod:`.hf`);
- ``vllm:PATH_OR_ID[?key=value&…]`` — vLLM's offline engine in this process (:mod:`.vllm`);
- a bare name — an alias from the ``competence_models`` ini option (``qwen = py:my.models:qwen``).

Third-party backends register a scheme through the ``pytest_competence.models`` entry-point
group: the entry point's name is the scheme, its object a loader ``(rest, spec, settings)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TYPE_CHECKING, Protocol, runtime_checkable

from pytest_competence.policy import ModelSpecError

if TYPE_CHECKING:
    from pytest_competence.protocol import Prompt

__all__ = [
    "ENTRY_POINT_GROUP",
    "Loader",
    "Model",
    "ModelCallError",
    "ModelProtocolError",
    "ModelSpecError",
    "ModelWrapper",
    "NoAnswer",
    "SCHEMES",
    "ScoringModel",
    "as_they_come",
    "parse_aliases",
    "reads_family",
    "resolve_model",
    "split_specs",
    "where_raised",
]


@runtime_checkable
class Model(Protocol):
    """Anything that answers prompts: batch in, batch out, one entry per prompt, in order.

    An entry is the raw answer text, or an :class:`Exception` for a prompt that could not be
    answered — recorded as an invalid observation with its reason, never dropped.

    A model may also have a ``families`` attribute: the names of the families whose prompts it
    reads (a family's shortcut policy reads that family's only). Without one, or with ``None``,
    it reads every family's; see :func:`reads_family`.
    """

    name: str

    def generate(self, prompts: Sequence[Prompt]) -> Sequence[str | BaseException]: ...


@runtime_checkable
class ScoringModel(Model, Protocol):
    """A model that can also score fixed candidate answers (the "candidate scoring" readout).

    ``score`` returns, per prompt, each candidate's log-probability as the answer to that prompt
    (the sum of its tokens' conditional log-probabilities), or an exception for a prompt that
    could not be scored.
    """

    def score(
        self, prompts: Sequence[Prompt], candidates: Sequence[str]
    ) -> Sequence[Mapping[str, float] | BaseException]: ...


class NoAnswer(Exception):
    """The model was reached and answered, but with nothing to read: an explicit *invalid*
    observation with this reason, like unparseable text (e.g. a reasoning model that spent every
    token before the answer, or scores that tie). Any other exception in a model's batch is an
    *infrastructure error*: a server or model that failed, never a wrong answer."""


class ModelCallError(RuntimeError):
    """A request or call that failed for good (after its retries): an infrastructure error whose
    message says what the server or the network did."""


class ModelProtocolError(RuntimeError):
    """The model broke the batch contract: not one answer per prompt, in order, as text."""


def where_raised(exc: BaseException) -> str:
    """``file:line`` of the innermost frame of ``exc``'s traceback: where a model failed."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return "an unknown place" if tb is None else f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"


class ModelWrapper:
    """Base of models that wrap another (a cache, a progress line): the name and every
    attribute the wrapper lacks — ``score()``, a backend's settings — are the wrapped model's."""

    def __init__(self, model: Model) -> None:
        self.model = model

    @property
    def name(self) -> str:
        return self.model.name

    @name.setter
    def name(self, value: str) -> None:
        self.model.name = value

    def __getattr__(self, attr: str) -> Any:
        # Only reached for attributes this wrapper lacks.
        model = self.__dict__.get("model")
        if model is None:
            raise AttributeError(attr)
        return getattr(model, attr)


def as_they_come(
    model: Model, prompts: Sequence[Prompt]
) -> Iterator[tuple[int, str | BaseException]]:
    """``(index, answer)`` pairs as the model produces them.

    A model with a ``stream(prompts)`` method yields them one by one (in any order), which lets a
    cache commit each answer as it arrives and a progress line move; any other model answers the
    whole batch first. Checking that every index comes exactly once is the caller's job.
    """
    stream = getattr(model, "stream", None)
    if callable(stream):
        yield from stream(prompts)
    else:
        yield from enumerate(model.generate(prompts))


def reads_family(model: Model, family: str) -> bool:
    """Whether ``model`` reads prompts of the family called ``family``.

    A test × model pair where it does not is *not applicable*: the plugin skips it, and the
    reports show it as ``n/a`` — never as a model the suite caught.
    """
    families = getattr(model, "families", None)
    return families is None or family in families


#: ``loader(rest, spec, settings) -> Model``: ``rest`` is the spec after ``scheme:``, ``spec`` the
#: whole spec (for messages and the model's name), ``settings`` run-wide options such as
#: ``api_key_env`` (the ``competence_api_key_env`` ini option) and ``rootdir``.
Loader = Callable[[str, str, Mapping[str, str]], Model]

#: Entry-point group through which other packages add schemes.
ENTRY_POINT_GROUP = "pytest_competence.models"


def _reference(rest: str, spec: str, settings: Mapping[str, str]) -> Model:
    from .reference import reference_policy

    return reference_policy(rest, spec)


def _python(rest: str, spec: str, settings: Mapping[str, str]) -> Model:
    from .python import python_model

    return python_model(rest, spec, settings.get("rootdir"))


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
    "ref": _reference, "py": _python, "openai": _openai, "hf": _hf, "vllm": _vllm,
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
    spec: str, aliases: Mapping[str, str] | None = None, *, settings: Mapping[str, str] | None = None
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
        known = ", ".join(sorted(aliases)) or "none are configured"
        raise ModelSpecError(
            f"Unknown model {spec!r}: not an alias (aliases: {known}) and not a spec of the form "
            f"SCHEME:REST with a scheme among {', '.join(sorted(SCHEMES))} (e.g. 'ref:ideal'). "
            f"Define aliases in the competence_models ini option"
        )
    loader = SCHEMES.get(scheme) or _plugged_in(scheme)
    if loader is None:
        raise ModelSpecError(
            f"Unknown model scheme {scheme!r} in {target!r}; expected one of "
            f"{', '.join(sorted(SCHEMES))}, or a scheme registered in the {ENTRY_POINT_GROUP!r} "
            f"entry-point group"
        )
    model = loader(rest, target, settings or {})
    if spec != target:
        model.name = spec  # results are reported under the alias the user typed
    return model
