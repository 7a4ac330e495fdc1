"""The ``@pytest.mark.competence`` declaration, read and validated into a :class:`CompetenceSpec`.

Invalid arguments raise :class:`~pytest_competence.strategies.InvalidArgument` naming the argument
and the fix; the plugin turns that into a collection error without an engine traceback.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_competence.engine.conditions import Condition, parse_condition
from pytest_competence.protocol import (
    FamilyLike,
    InvalidArgument,
    Item,
    construct,
    default_presentations,
    design_chunks,
)
from pytest_competence.registry import DEFAULT_FAMILY, FAMILIES, family_class

__all__ = [
    "CHUNK_CHARACTERS",
    "CHUNK_PROMPTS",
    "DESIGN_KEYS",
    "CompetenceSpec",
    "family_options",
    "overridable",
    "spec_from_marker",
]

#: Marker keywords that shape the design rather than the family.
DESIGN_KEYS = (
    "levels",
    "pairs",
    "seed",
    "presentations",
    "require",
    "attempts",
    "regression_margin",
    "gate",
)

#: Prompts per chunk of a design: asked in one batch, reduced, and dropped before the next.
CHUNK_PROMPTS = 1024
#: Prompt characters per chunk, at most (past the instance that crosses it): at n = 1024 an
#: ordering prompt is ~37,000 characters, so 1,024 of them, and the next chunk generated
#: meanwhile, would hold ~75 MB of text.
CHUNK_CHARACTERS = 8_000_000
_PART = 16  # instances generated at a time while a chunk is filled

_DEFAULTS: dict[str, Any] = {
    "pairs": 200,
    "seed": 1,
    "presentations": None,  # the family's default_presentations
    "require": "strict",
    "attempts": None,  # the family's default_attempts, else 1
    "regression_margin": None,
    "gate": None,
}


def _hashable(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    return value


@dataclass(frozen=True)
class CompetenceSpec:
    """A validated competence declaration: which family, which design, what must hold."""

    family: FamilyLike
    levels: tuple[int, ...]
    pairs: int
    seed: int
    presentations: tuple[str, ...]
    condition: Condition
    key: tuple = field(compare=False, default=())  # identifies the design, for sharing it
    require: object = "strict"  # as declared, so an archive can rebuild the condition
    attempts: int = 1  # sends per prompt; the observation is their majority (systematicity paper, arXiv:2609.13948, §3.6)
    regression_margin: float | None = None  # the gate's margin; None: the ini default
    require_declared: bool = False  # require= on the marker; else competence_require applies
    gate: str | None = None  # the release gate (regression, non-inferiority); None: the ini's

    @property
    def prompt_count(self) -> int:
        """Prompts the design asks: levels × pairs × presentations × attempts."""
        return len(self.levels) * self.pairs * len(self.presentations) * self.attempts

    def check_size(self, limit: int) -> None:
        """Raise :class:`InvalidArgument` when the design asks more than ``limit`` prompts."""
        from pytest_competence.engine.settings import check_prompt_count

        check_prompt_count(
            self.prompt_count,
            limit,
            (
                f"{len(self.levels)} level(s) x pairs={self.pairs} x {len(self.presentations)} "
                f"presentation(s) x attempts={self.attempts}"
            ),
            "competence_max_prompts in the ini file",
        )

    def release_gate(self, gate: str, margin: float) -> tuple[str, float]:
        """The gate and margin this test is gated with, given the ini's ``competence_gate`` and
        ``competence_regression_margin``: the marker's ``gate=`` and ``regression_margin=``
        win. Raises :class:`InvalidArgument` for a non-inferiority gate left at margin 0."""
        chosen = self.gate or gate
        used = self.regression_margin if self.regression_margin is not None else margin
        if chosen == "non-inferiority" and used == 0:
            raise InvalidArgument(
                "gate='non-inferiority' needs a margin above 0 (the accuracy loss a release "
                "may have), but regression_margin= and competence_regression_margin leave it "
                "at 0; at 0 only a candidate significantly better than the baseline passes. "
                "Declare one, e.g. regression_margin=0.02"
            )
        return chosen, used

    def design(self) -> list[Item]:
        """The whole design, in memory (a run asks it chunk by chunk: :meth:`chunks`)."""
        return self.family.design(
            levels=self.levels, pairs=self.pairs, seed=self.seed, presentations=self.presentations
        )

    def chunk_size(self, prompts: int | None = None) -> int:
        """Instances per chunk: about ``prompts`` prompts (default :data:`CHUNK_PROMPTS`),
        presentations × attempts each."""
        prompts = CHUNK_PROMPTS if prompts is None else prompts
        return max(1, prompts // (len(self.presentations) * self.attempts))

    def chunks(self, prompts: int | None = None, first: int | None = None) -> Iterator[list[Item]]:
        """The design in chunks of at most about ``prompts`` prompts (and about
        :data:`CHUNK_CHARACTERS` of prompt text), in design order: their concatenation is
        :meth:`design`, and a design that small is one chunk. With ``first``, the first chunk
        holds about ``first`` prompts at most (sent the sooner: it is generated the sooner).

        The instances come from :func:`~pytest_competence.protocol.design_chunks` (a
        family keyed by level and index generates them one at a time, any other a level at a
        time); chunks run across levels, so a small grid is still asked in one batch.
        """
        size = self.chunk_size(prompts)
        limit = size if first is None else min(size, self.chunk_size(first))
        chunk: list[Item] = []
        characters = 0
        for part in design_chunks(
            self.family,
            levels=self.levels,
            pairs=self.pairs,
            seed=self.seed,
            presentations=self.presentations,
            size=min(size, _PART),
        ):
            for item in part:
                chunk.append(item)
                characters += sum(len(p.text) for p in item.prompts)
                if len(chunk) >= limit or characters >= CHUNK_CHARACTERS:
                    yield chunk
                    chunk, characters, limit = [], 0, size
        if chunk:
            yield chunk


def family_options(name: str) -> tuple[str, ...]:
    """Constructor keywords of the family called ``name`` (what a parameter may override)."""
    return FAMILIES.options(name)


def overridable(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[str, ...]:
    """The test parameters that override a ``competence`` marker with these arguments: the
    design keys and the family's options."""
    family_name = kwargs.get("family", args[0] if args else DEFAULT_FAMILY)
    options = family_options(family_name) if isinstance(family_name, str) else ()
    return DESIGN_KEYS + options


def spec_from_marker(
    args: tuple[Any, ...], kwargs: Mapping[str, Any], overrides: Mapping[str, Any] | None = None
) -> CompetenceSpec:
    """Build a spec from marker arguments; ``overrides`` (from parametrization) win over them."""
    kwargs = dict(kwargs)
    if len(args) > 1:
        raise InvalidArgument(
            f"@pytest.mark.competence takes the family as its only positional argument, but got "
            f"{len(args)} positional arguments; pass the others by keyword (levels=..., pairs=...)"
        )
    if args:
        if "family" in kwargs:
            raise InvalidArgument("family given both positionally and as family=; give it once")
        kwargs["family"] = args[0]
    kwargs.update(overrides or {})
    fam = kwargs.pop("family", DEFAULT_FAMILY)
    declared = "presentations" in kwargs
    require_declared = "require" in kwargs
    design = {k: kwargs.pop(k, _DEFAULTS.get(k)) for k in DESIGN_KEYS}
    if design["levels"] is None:
        raise InvalidArgument(
            "@pytest.mark.competence needs levels=, the grid of sizes, e.g. levels=[4, 8, 16]"
        )
    instance: FamilyLike
    if isinstance(fam, str):
        instance = construct(family_class(fam), kwargs, also=DESIGN_KEYS)
        key_family: Any = (fam, _hashable(kwargs))
    elif isinstance(fam, FamilyLike) and not isinstance(fam, type):
        if kwargs:
            raise InvalidArgument(
                f"Options {sorted(kwargs)} were given beside a family object; configure the "
                f"family object itself (its constructor takes them)"
            )
        instance, key_family = fam, ("object", id(fam))
    else:
        raise InvalidArgument(
            f"Expected family to be a family name ({', '.join(FAMILIES)}) or a family object, "
            f"but got family={fam!r}"
        )
    presentations = design["presentations"]
    if not declared:
        presentations = default_presentations(instance)
    if isinstance(presentations, str):
        presentations = (presentations,)
    if isinstance(presentations, (list, tuple)):
        repeated = sorted({p for p in presentations if presentations.count(p) > 1}, key=str)
        if repeated:
            raise InvalidArgument(
                f"Expected presentations to name each presentation once, but got "
                f"presentations={list(presentations)!r} ({', '.join(map(repr, repeated))} "
                f"repeated); a repeat asks the same prompt twice, use attempts= for repeats"
            )
    check = getattr(instance, "check_design", None)
    if check is not None:
        check(
            levels=design["levels"],
            pairs=design["pairs"],
            seed=design["seed"],
            presentations=presentations,
        )
    attempts = design["attempts"]
    # The systematicity paper, arXiv:2609.13948, §3.6 gives each variation N = 5 attempts; the rest
    # send once.
    if attempts is None:
        attempts = getattr(instance, "default_attempts", 1)
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise InvalidArgument(
            f"Expected attempts to be a positive integer (sends per prompt, majority-voted), "
            f"but got attempts={attempts!r}; the systematicity paper (arXiv:2609.13948) uses attempts=5"
        )
    margin = design["regression_margin"]
    if margin is not None and (
        isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 <= margin < 1
    ):
        raise InvalidArgument(
            f"Expected regression_margin to be an accuracy difference in [0, 1), e.g. 0.02, "
            f"but got regression_margin={margin!r}"
        )
    gate = design["gate"]
    if gate is not None and gate not in ("regression", "non-inferiority"):
        raise InvalidArgument(
            f"Expected gate to be 'regression' or 'non-inferiority', but got gate={gate!r}"
        )
    condition = parse_condition(design["require"])
    levels = tuple(design["levels"])
    presentations = tuple(presentations)
    key = (key_family, levels, design["pairs"], design["seed"], presentations)
    return CompetenceSpec(
        instance,
        levels,
        design["pairs"],
        design["seed"],
        presentations,
        condition,
        key,
        design["require"],
        attempts,
        margin,
        require_declared,
        gate,
    )
