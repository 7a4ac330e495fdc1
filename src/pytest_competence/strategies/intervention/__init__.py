"""Three-valued intervention worlds: does the answer move when it should, and only then?

A latent instance is a *cluster* (:mod:`._iw_theory`): an open-world theory of signed Horn rules
and facts over pseudoword atoms with a query atom (the *base* world), the base after one *target*
edit that changes the oracle label, and the base after one *sham* edit of the same kind that
keeps it. The oracle is three-valued: TRUE if the theory entails the query, FALSE if it entails its
negation, UNKNOWN otherwise. Instance ``i`` of a level has transition ``TRANSITIONS[i % 6]``, so
the six transitions among TRUE/FALSE/UNKNOWN — and the base and target labels — are balanced.
The level ``n`` is the number of rules in the base theory.

Every world is asked under each of the six mappings of TRUE/FALSE/UNKNOWN onto the letters A/B/C
(``"TFU"`` means A = TRUE, B = FALSE, C = UNKNOWN) and through two readouts: ``generate`` (free text
parsed to a letter) and ``score`` (the letter with the highest log-probability, where the backend
can score). A cluster is one :class:`Item` of up to 3 × 6 × 2 = 36 prompts, named
``WORLD/MAPPING/READOUT`` (``"base/TFU/generate"`` first). ``presentations=`` selects cells by
patterns in which any part may be ``*`` (``["*/*/generate"]``: every world and mapping, generated
answers only); the engine's default presentations select all 36.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING

from pytest_competence.protocol import (
    AnswerMap,
    AuditComponent,
    Family,
    InvalidArgument,
    Item,
    Parsed,
    Prompt,
)

from .._checks import check_levels, check_pairs, check_word
from .._rng import stream_rng
from ._cells import (
    _RENDER,
    INSTRUCTION,
    IW_MAPPINGS,
    IW_PRESENTATIONS,
    IW_READOUTS,
    IW_WORLDS,
    LETTERS,
    MAX_N,
    MIN_N,
    SYSTEM_PROMPT,
    IWInstance,
    letter_of,
    render_theory,
    select_presentations,
    value_of,
)
from ._theory import TRANSITIONS, build_cluster, check_cluster

if TYPE_CHECKING:
    from ._strategies import InterventionStrategies

__all__ = [
    "INSTRUCTION",
    "IW_MAPPINGS",
    "IW_PRESENTATIONS",
    "IW_READOUTS",
    "IW_WORLDS",
    "LETTERS",
    "MAX_N",
    "MIN_N",
    "SYSTEM_PROMPT",
    "IWInstance",
    "Intervention",
    "letter_of",
    "render_theory",
    "select_presentations",
    "value_of",
]


class Intervention(Family):
    """The three-valued intervention-worlds family.

    Args:
        system_prompt, instruction: override the wording (the semantics must stay open-world).
    """

    name = "intervention"
    level_name = "rules"
    answer_space = LETTERS
    shortcuts = ("ref:iw-stuck", "ref:iw-jumpy", "ref:iw-letter?letter=A")

    hooks = {
        "shortcut_policies": ".policies:IW_POLICIES",
        "generate_designs": "._generate:designs",
        "record_meta": "._generate:meta",
        "metrics": ".metrics:intervention_entries",
        "tables": ".report:intervention_tables",
    }

    @classmethod
    def ideal_answer(cls, prompt: Prompt) -> str | None:
        """The competent answer, read from the prompt's text alone (``ref:ideal``)."""
        # Not a hooks entry: iw_ideal reads text, and policies.py stays byte-for-byte as it is,
        # since the batch policies' model_identity hashes that file's source.
        from .policies import iw_ideal

        return iw_ideal(prompt.text)

    default_presentations = IW_PRESENTATIONS  # every cell: 3 worlds × 6 mappings × 2 readouts

    def __init__(
        self, *, system_prompt: str = SYSTEM_PROMPT, instruction: str = INSTRUCTION
    ) -> None:
        for key, value in (("system_prompt", system_prompt), ("instruction", instruction)):
            if not isinstance(value, str):
                raise InvalidArgument(f"Expected {key} to be a string, but got {key}={value!r}")
        self.system_prompt = system_prompt
        self.instruction = instruction

    def __repr__(self) -> str:
        return "Intervention()"

    @staticmethod
    def check_n(n: object, name: str = "n") -> int:
        """``n`` as an int, or :class:`InvalidArgument` naming the allowed range."""
        if isinstance(n, bool) or not isinstance(n, int) or not MIN_N <= n <= MAX_N:
            raise InvalidArgument(
                f"Expected {name} to be an integer rule count in [{MIN_N}, {MAX_N}] (the base "
                f"theory's rules), but got {name}={n!r}; try levels=[4, 8, 16, 32]"
            )
        return n

    def instance(self, n: int, index: int, seed: int = 1) -> IWInstance:
        """Cluster ``index`` of level ``n``: transition ``TRANSITIONS[index % 6]``."""
        n = self.check_n(n)
        check_word("index", index)
        check_word("seed", seed)
        transition = TRANSITIONS[index % 6]
        rng = stream_rng(seed, n, index, _RENDER)
        query, base, target, sham = build_cluster(rng, n, transition)
        z = IWInstance(n, index, seed, query, base, target, sham, transition)
        check_cluster(query, base, z.world("target"), z.world("sham"), transition, z.id)
        return z

    def prompt(self, z: IWInstance, presentation: str) -> Prompt:
        """Cell ``presentation`` (``WORLD/MAPPING/READOUT``) of cluster ``z``."""
        world, mapping, readout = presentation.split("/")
        value = {"base": z.transition[0], "target": z.transition[1], "sham": z.transition[0]}[world]
        # Relation to the base gold (base label under TFU): the world's transition, then the
        # relettering TFU → mapping.
        step = (
            AnswerMap()
            if world != "target"
            else AnswerMap(
                ((letter_of(z.transition[0], "TFU"), letter_of(z.transition[1], "TFU")),)
            )
        )
        reletter = AnswerMap(
            tuple(
                (x, letter_of(value_of(x, "TFU"), mapping))
                for x in LETTERS
                if letter_of(value_of(x, "TFU"), mapping) != x
            )
        )
        return Prompt(
            family=self.name,
            instance_id=z.id,
            presentation=presentation,
            system=self.system_prompt,
            text=render_theory(z.world(world), z.query, mapping, self.instruction),
            gold=letter_of(value, mapping),
            answer_space=self.answer_space,
            answer_map=step.then(reletter),
            readout=readout,
            params={
                "n": z.n,
                "cluster": z.id,
                "world": world,
                "mapping": mapping,
                "readout": readout,
                "transition": f"{z.transition[0]}->{z.transition[1]}",
                "label": value,
                "base_label": z.transition[0],
                "edit": z.target_edit.kind,
            },
        )

    def design(
        self,
        *,
        levels: Sequence[int],
        pairs: int,
        seed: int = 1,
        presentations: Sequence[str] = IW_PRESENTATIONS,
    ) -> list[Item]:
        """``pairs`` clusters per level (each transition ``pairs / 6`` times), selected cells."""
        self.check_design(levels=levels, pairs=pairs, seed=seed, presentations=presentations)
        cells = select_presentations(presentations)
        return [self.item(n, i, seed, cells) for n in levels for i in range(pairs)]

    def item(self, n: int, index: int, seed: int, presentations: Sequence[str]) -> Item:
        """Cluster ``index`` of level ``n`` with the selected cells' prompts, as :meth:`design`
        asks it."""
        z = self.instance(n, index, seed)
        return Item(z, tuple(self.prompt(z, c) for c in select_presentations(presentations)))

    def check_design(
        self, *, levels: object, pairs: object, seed: object, presentations: object
    ) -> None:
        """Raise :class:`InvalidArgument` naming the first argument :meth:`design` cannot use."""
        check_levels(levels, self.check_n, "a non-empty list of rule counts, e.g. [4, 8, 16, 32]")
        check_pairs(
            pairs,
            6,
            "pairs (clusters per level) to be a positive multiple of 6, one "
            "cluster per transition each round",
            60,
        )
        check_word("seed", seed)
        select_presentations(presentations)

    def parse(self, text: object) -> Parsed:
        """A letter A/B/C: the last ``Answer: X`` line, else a reply that is just the letter.

        Stricter than :func:`parse_choice`'s first-word rule, which would read the article "a"
        as option A; anything else is invalid with its reason.
        """
        if not isinstance(text, str):
            return Parsed(None, f"model returned {type(text).__name__}, not text")
        explicit = _ANSWER.findall(text)
        if explicit:
            return Parsed(explicit[-1].upper())
        bare = _BARE.fullmatch(text.strip())
        if bare:
            return Parsed(bare.group(1).upper())
        if not text.strip():
            return Parsed(None, "empty answer")
        return Parsed(None, "no 'Answer: A/B/C' line and not a bare letter")

    @cached_property
    def strategies(self) -> InterventionStrategies:
        from ._strategies import InterventionStrategies

        return InterventionStrategies(self)

    def audit_components(
        self, levels: Sequence[int], presentations: Sequence[str]
    ) -> list[AuditComponent]:
        """The supports an audit can add: each world, letter mapping and readout no declared
        cell uses (as the patterns ``WORLD/*/*``, ``*/MAPPING/*``, ``*/*/READOUT``) and a
        larger base theory."""
        cells = [c.split("/") for c in select_presentations(presentations)]
        out = []
        for axis, (values, label) in enumerate(
            ((IW_WORLDS, "{} world"), (IW_MAPPINGS, "mapping {}"), (IW_READOUTS, "{} readout"))
        ):
            for value in values:
                if all(c[axis] != value for c in cells):
                    pattern = "/".join(value if k == axis else "*" for k in range(3))
                    out.append(AuditComponent(label.format(value), "presentation", pattern))
        larger = 2 * max(levels)
        if larger <= MAX_N:
            out.append(AuditComponent(f"larger n (n={larger})", "level", larger))
        return out

    @staticmethod
    def audit_factors(presentation: str) -> tuple[str, ...]:
        """The components one cell needs in an audit: its world, its mapping and its readout
        (``"target/TUF/score"`` → ``world=target``, ``mapping=TUF``, ``readout=score``)."""
        world, mapping, readout = presentation.split("/")
        return (f"world={world}", f"mapping={mapping}", f"readout={readout}")


_ANSWER = re.compile(r"answer\s*[:：]\s*\**\s*\(?([abc])\b", re.IGNORECASE)
_BARE = re.compile(r"\(?([abcABC])\)?\.?")
