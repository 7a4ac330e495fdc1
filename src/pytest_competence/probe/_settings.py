"""The probes' settings as a competence test declares them, checked before any model runs.

``@pytest.mark.competence_probe(...)`` takes the keywords of :func:`~._run.probe_design`:
``layers``, ``precision``, ``patch``, ``patch_layers``, ``max_mib`` and the probe's own
(:data:`~._layers.DEFAULTS`: ``folds``, ``l2``, ``permutations``, ``threshold``,
``confidence``, ``seed``). :func:`probe_settings` reads them into a :class:`ProbeSettings` or
raises :class:`~pytest_competence.protocol.InvalidArgument` naming the argument and the fix;
what only the model can tell (a layer past its last block) is checked when it is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_competence.protocol import InvalidArgument

from ._layers import DEFAULTS, check_arguments
from ._reading import PRECISIONS

__all__ = ["DEFAULT_MAX_MIB", "ProbeSettings", "probe_settings"]

#: The most the answer-position states of one test may take unless ``max_mib`` says otherwise:
#: 10k prompts × 33 layers × 1,536 floats (a 1.5B model) in float32, about 2 GiB.
DEFAULT_MAX_MIB = 2048.0

_KEYS = ("layers", "precision", "patch", "patch_layers", "max_mib", *DEFAULTS)


@dataclass(frozen=True)
class ProbeSettings:
    """What a test's probes read and fit (see the module docstring). ``patch_declared`` says
    whether ``patch`` was given: the default ``"equivalent"`` is left out, with a reason, on a
    design without that presentation, a declared one is an error."""

    layers: tuple[int, ...] | None = None
    precision: str = "float32"
    patch: str | None = "equivalent"
    patch_declared: bool = False
    patch_layers: tuple[int, ...] | None = None
    max_mib: float = DEFAULT_MAX_MIB
    probe: dict[str, Any] = field(default_factory=lambda: dict(DEFAULTS))

    def options(self) -> dict[str, Any]:
        """Keywords of :func:`~._run.probe_design` (``patch`` and ``B`` aside)."""
        return {
            "layers": self.layers,
            "precision": self.precision,
            "patch_layers": self.patch_layers,
            "max_mib": self.max_mib,
            **self.probe,
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values, for the report."""
        return {
            "layers": None if self.layers is None else list(self.layers),
            "precision": self.precision,
            "patch": self.patch,
            "patch_layers": None if self.patch_layers is None else list(self.patch_layers),
            "max_mib": self.max_mib,
            **self.probe,
        }


def probe_settings(
    args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None
) -> ProbeSettings:
    """The settings of a ``competence_probe`` marker's arguments (none: the defaults)."""
    kwargs = dict(kwargs or {})
    if args:
        raise InvalidArgument(
            f"takes keywords only ({', '.join(_KEYS)}), got {len(args)} positional "
            f"argument(s); e.g. competence_probe(layers=[0, 4, 8], permutations=20)"
        )
    unknown = sorted(set(kwargs) - set(_KEYS))
    if unknown:
        raise InvalidArgument(
            f"unknown argument(s) {', '.join(unknown)}; it takes {', '.join(_KEYS)}"
        )
    probe = {**DEFAULTS, **{k: kwargs[k] for k in DEFAULTS if k in kwargs}}
    try:
        check_arguments(**probe)
    except ValueError as exc:
        raise InvalidArgument(str(exc)) from None
    precision = kwargs.get("precision", "float32")
    if precision not in PRECISIONS:
        raise InvalidArgument(
            f"precision must be one of {', '.join(PRECISIONS)}, got precision={precision!r}; "
            f"float16 halves the states' memory"
        )
    patch = kwargs.get("patch", "equivalent")
    if patch is not None and (not isinstance(patch, str) or not patch):
        raise InvalidArgument(
            f"patch must name the presentation the original is patched into, or be None, "
            f"got patch={patch!r}; e.g. patch='equivalent'"
        )
    max_mib = kwargs.get("max_mib", DEFAULT_MAX_MIB)
    if isinstance(max_mib, bool) or not isinstance(max_mib, (int, float)) or not max_mib > 0:
        raise InvalidArgument(
            f"max_mib must be a positive number of MiB, got max_mib={max_mib!r}; e.g. "
            f"max_mib={DEFAULT_MAX_MIB:g}"
        )
    return ProbeSettings(
        _layers(kwargs.get("layers"), "layers"),
        precision,
        patch,
        "patch" in kwargs,
        _layers(kwargs.get("patch_layers"), "patch_layers"),
        float(max_mib),
        probe,
    )


def _layers(value: object, name: str) -> tuple[int, ...] | None:
    if value is None:
        return None
    chosen = tuple(value) if isinstance(value, (list, tuple, range)) else None
    if (
        not chosen
        or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in chosen)
        or len(set(chosen)) != len(chosen)
    ):
        raise InvalidArgument(
            f"{name} must be distinct residual indices ≥ 0 (0: the embeddings, L: the last "
            f"block's output), or None for all, got {name}={value!r}; e.g. {name}=[0, 2, 4]"
        )
    return chosen
