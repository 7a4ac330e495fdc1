"""The Horn-clause family: goal derivability in a Horn program (CBE paper, arXiv:2610.22894, App. C).

A latent instance is a Horn program over pronounceable pseudoword atoms and a yes/no query
"can the goal be derived?", answered by an exact forward-chaining oracle (``atoms.derive``).
Gold answers are balanced: instance ``i`` is positive when ``i`` is even, a near miss when it is
odd. The level ``n`` is the rule count, as in the paper — or, beyond
it (its stated confound), the proof depth or the number of distractor rules with the other held
fixed (``vary=``).

Presentations are compositions of transforms. The two renderers of App. C.1 — "If a and b, then
c." and "c holds whenever a and b hold." — keep the rule order fixed; ``reshuffle`` reorders facts
and rules, ``rename`` substitutes fresh pseudowords for every atom (a bijection), and
``negated_query`` asks whether the goal *cannot* be derived, which maps yes↔no.

Every random choice is drawn from its own stream keyed by ``(seed, n, index, stream)``, so the
same programs appear on every process, worker and machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from pytest_competence.protocol import (
    AuditComponent,
    Family,
    InvalidArgument,
    Item,
    Parsed,
    Prompt,
    Transform,
    compose,
    parse_choice,
)

from .._checks import (
    check_levels,
    check_pairs,
    check_presentations,
    check_word,
)
from ..atoms import derive
from ._presentations import (
    HORN_PRESENTATIONS,
    INSTRUCTION,
    NEGATE_QUERY,
    RENAME,
    RESHUFFLE,
    SYSTEM_PROMPT,
    VARY,
    WHENEVER,
    render,
    render_rule,
)
from ._programs import HornInstance, Rule, draw_program

if TYPE_CHECKING:
    from ._strategies import HornStrategies

__all__ = [
    "HORN_PRESENTATIONS",
    "INSTRUCTION",
    "NEGATE_QUERY",
    "RENAME",
    "RESHUFFLE",
    "SYSTEM_PROMPT",
    "VARY",
    "WHENEVER",
    "Horn",
    "HornInstance",
    "Rule",
    "derive",
    "render_rule",
]


class Horn(Family):
    """The Horn-clause family, configured once and sampled by seed.

    Args:
        vary: what the level ``n`` counts — ``"rules"`` (the paper: rule count, with proof depth
            ``max(1, n // 2)`` unless ``depth`` fixes it and the rest distractors), ``"depth"``
            (proof depth, with ``distractors`` rules beside it) or ``"distractors"`` (distractor
            rules, beside a proof of ``depth``).
        depth: the proof depth when it is not the level (default: ``n // 2`` for
            ``vary="rules"``, 4 for ``vary="distractors"``).
        distractors: distractor rules when they are not the level (default 8, ``vary="depth"``).
        system_prompt, instruction: override the wording.
    """

    name = "horn"
    answer_space = ("yes", "no")
    shortcuts = ("ref:horn-if-then", "ref:horn-goal-rule", "ref:horn-bounded?depth=4")

    hooks = {
        "shortcut_policies": ".policies:HORN_POLICIES",
        "ideal_answer": ".policies:horn_ideal",
        "generate_options": "._generate:add_options",
        "generate_designs": "._generate:designs",
        "record_meta": "._generate:meta",
    }

    @classmethod
    def audit_policies(cls, levels: Sequence[int]) -> tuple[str, ...]:
        """The shortcuts and the two constant answers."""
        return (*cls.shortcuts, "ref:always-yes", "ref:always-no")

    def __init__(
        self,
        *,
        vary: str = "rules",
        depth: int | None = None,
        distractors: int | None = None,
        system_prompt: str = SYSTEM_PROMPT,
        instruction: str = INSTRUCTION,
    ) -> None:
        if vary not in VARY:
            raise InvalidArgument(
                f"Expected vary to be one of {', '.join(map(repr, VARY))}, but got vary={vary!r}"
            )
        self.vary = vary
        self.level_name = vary  # the level counts rules, the proof depth or distractor rules
        for key, value in (("depth", depth), ("distractors", distractors)):
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, int)
                or value < (1 if key == "depth" else 0)
            ):
                raise InvalidArgument(
                    f"Expected {key} to be None or an integer >= {1 if key == 'depth' else 0}, "
                    f"but got {key}={value!r}"
                )
        if (
            vary == "depth"
            and depth is not None
            or vary == "distractors"
            and distractors is not None
        ):
            raise InvalidArgument(
                f"vary={vary!r} makes the level n the {vary}; drop {vary}= or choose another vary"
            )
        if vary == "rules" and distractors is not None:
            raise InvalidArgument(
                "With vary='rules' the distractors are the rules beyond the proof; fix depth= "
                "instead of distractors=, or use vary='depth'"
            )
        self.depth = depth
        self.distractors = distractors
        self.system_prompt = system_prompt
        self.instruction = instruction

    def __repr__(self) -> str:
        extra = "".join(
            f", {k}={getattr(self, k)!r}"
            for k in ("depth", "distractors")
            if getattr(self, k) is not None
        )
        return f"Horn(vary={self.vary!r}{extra})"

    # -- latent instances ------------------------------------------------------------------------

    @property
    def min_n(self) -> int:
        """Smallest level this configuration can build."""
        if self.vary == "rules":
            return self.depth if self.depth is not None else 1
        return 1 if self.vary == "depth" else 0

    def sizes(self, n: int) -> tuple[int, int]:
        """``(proof depth, distractor rules)`` at level ``n``."""
        if self.vary == "rules":
            depth = self.depth if self.depth is not None else max(1, n // 2)
            return depth, n - depth
        if self.vary == "depth":
            return n, 8 if self.distractors is None else self.distractors
        return (4 if self.depth is None else self.depth), n

    def check_n(self, n: object, name: str = "n") -> int:
        """``n`` if it is a level this configuration can draw, else :class:`InvalidArgument` naming
        ``name``."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise InvalidArgument(f"Expected an integer for {name}, but got {name}={n!r}")
        if n < self.min_n or n > 100_000:
            raise InvalidArgument(
                f"Expected {self.min_n} <= {name} <= 100000 for vary={self.vary!r}"
                f"{f' with depth={self.depth}' if self.depth else ''}, but got {name}={n}"
            )
        return int(n)

    def instance(self, n: int, index: int, seed: int = 1) -> HornInstance:
        """Instance ``index`` of level ``n``: positive (gold yes) when ``index`` is even."""
        n = self.check_n(n)
        check_word("seed", seed)
        check_word("index", index)
        depth, distractors = self.sizes(n)
        return draw_program(n, index, seed, depth=depth, distractors=distractors)

    # -- presentations ---------------------------------------------------------------------------

    def render(self, z: HornInstance, transforms: tuple[Transform, ...]) -> str:
        """The user prompt for ``z`` under a composition of transforms."""
        return render(z, transforms, self.instruction)

    def prompt(self, z: HornInstance, presentation: str) -> Prompt:
        """``z`` rendered by one named presentation, with its gold answer and parameters."""
        transforms = _presentation(presentation)
        answer_map = compose(transforms)
        return Prompt(
            family=self.name,
            instance_id=z.id,
            presentation=presentation,
            system=self.system_prompt,
            text=self.render(z, transforms),
            gold=answer_map(z.gold),
            answer_space=self.answer_space,
            answer_map=answer_map,
            params=self.params(z),
        )

    def params(self, z: HornInstance) -> dict[str, object]:
        """θ of ``z``: the level, what it counts, and the sizes that rendered it."""
        return {
            "n": z.n,
            "vary": self.vary,
            "rules": len(z.rules),
            "depth": z.depth,
            "distractors": z.distractors,
            "cell": "positive" if z.severed is None else "near_miss",
            "severed": z.severed,
        }

    # -- the engine's interface ------------------------------------------------------------------

    def design(
        self,
        *,
        levels: Sequence[int],
        pairs: int,
        seed: int = 1,
        presentations: Sequence[str] = ("original", "equivalent"),
    ) -> list[Item]:
        """``pairs`` instances per level (half positive, half near misses), every presentation."""
        self.check_design(levels=levels, pairs=pairs, seed=seed, presentations=presentations)
        return [self.item(n, i, seed, presentations) for n in levels for i in range(pairs)]

    def item(self, n: int, index: int, seed: int, presentations: Sequence[str]) -> Item:
        """Instance ``index`` of level ``n`` with its prompts, as :meth:`design` asks it."""
        z = self.instance(n, index, seed)
        return Item(z, tuple(self.prompt(z, p) for p in presentations))

    def check_design(
        self, *, levels: object, pairs: object, seed: object, presentations: object
    ) -> None:
        """Raise :class:`InvalidArgument` naming the first argument :meth:`design` cannot use."""
        check_levels(
            levels, self.check_n, "a non-empty list of sizes, e.g. [4, 8, 16, 32, 64, 128]"
        )
        check_pairs(
            pairs,
            2,
            "pairs per level to be a positive even number (half positive "
            "programs, half near misses)",
            200,
        )
        check_word("seed", seed)
        check_presentations(presentations, _presentation)

    def parse(self, text: object) -> Parsed:
        """yes/no from free text; ambiguous or unparseable answers are invalid."""
        return parse_choice(text, self.answer_space)

    @cached_property
    def strategies(self) -> HornStrategies:
        from ._strategies import HornStrategies

        return HornStrategies(self)

    def audit_components(
        self, levels: Sequence[int], presentations: Sequence[str]
    ) -> list[AuditComponent]:
        """The supports an audit can add: a larger level, the other renderer ("… holds
        whenever …") if no declared presentation uses it, deeper proofs where the level does
        not set the depth, and distractor rules where the level does not set them."""
        out = []
        larger = 2 * max(levels)
        if larger <= 100_000:
            out.append(AuditComponent(f"larger level (n={larger})", "level", larger))
        if not any(WHENEVER in _presentation(p) for p in presentations):
            out.append(AuditComponent("the other renderer (whenever)", "presentation", "whenever"))
        if self.vary != "depth":
            deepest = max(self.sizes(n)[0] for n in levels)
            depth = 2 * max(deepest, 4)
            out.append(AuditComponent(f"deeper proofs (depth={depth})", "option", {"depth": depth}))
        if self.vary == "depth":
            most = self.sizes(max(levels))[1]
            out.append(
                AuditComponent(
                    f"more distractor rules (distractors={2 * max(most, 4)})",
                    "option",
                    {"distractors": 2 * max(most, 4)},
                )
            )
        return out


def _presentation(name: object) -> tuple[Transform, ...]:
    try:
        return HORN_PRESENTATIONS[name]  # type: ignore[index]
    except (KeyError, TypeError):
        raise InvalidArgument(
            f"Unknown presentation {name!r} for family 'horn'. Expected one of: "
            f"{', '.join(HORN_PRESENTATIONS)}"
        ) from None
