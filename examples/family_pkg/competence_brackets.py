"""Bracket matching as a pytest-competence family: is a string of brackets balanced?

A task outside the papers, written against the public family protocol only
(``pytest_competence.strategies.Family``) and registered through the
``pytest_competence.families`` entry point (see ``pyproject.toml``). Level ``n`` is the number of
bracket pairs. Even instances are balanced; odd ones are the same kind of string with the
closers of two pairs of different kinds exchanged, so every kind still opens as often as it
closes — the *counting shortcut* (``ref:brackets-count``) calls them balanced, and is right on half
of the design only.

Presentations compose two transforms: ``glyphs`` draws the pairs with other characters (the
answer is preserved) and ``negated`` asks whether the string is *un*balanced (yes and no swap).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_competence.strategies import (
    AnswerMap,
    AuditComponent,
    Family,
    InvalidArgument,
    Item,
    Parsed,
    Prompt,
    Transform,
    compose,
    parse_choice,
    stream_rng,
)

__all__ = ["Brackets", "BracketsInstance", "balanced"]

KINDS = ("()", "[]", "{}")
GLYPHS = {"()": "<>", "[]": "()", "{}": "[]"}  # the same pairs drawn with other characters
GLYPHS_T = Transform("glyphs")  # answer-preserving
NEGATED_T = Transform("negated", AnswerMap.swap("yes", "no"))  # answer-mapping
PRESENTATIONS: dict[str, tuple[Transform, ...]] = {
    "original": (),
    "glyphs": (GLYPHS_T,),
    "negated": (NEGATED_T,),
    "glyphs+negated": (GLYPHS_T, NEGATED_T),
}
MIN_N, MAX_N = 2, 256
SYSTEM = "Answer with one word, yes or no."


@dataclass(frozen=True)
class BracketsInstance:
    """A latent instance: the string over the kinds of :data:`KINDS`, and its coordinates."""

    n: int
    index: int
    seed: int
    text: str


def balanced(text: str, kinds: Sequence[str] = KINDS) -> bool:
    """The oracle: every closer closes the innermost open bracket of its own kind."""
    closer = {pair[1]: pair[0] for pair in kinds}
    stack: list[str] = []
    for ch in text:
        if ch in closer:
            if not stack or stack.pop() != closer[ch]:
                return False
        else:
            stack.append(ch)
    return not stack


def _draw(n: int, index: int, seed: int) -> str:
    """A random balanced string of ``n`` pairs; for odd ``index`` two pairs' closers exchanged."""
    rng = stream_rng(seed, n, index, 0)
    chars: list[str] = []
    stack: list[int] = []
    matched: list[tuple[int, int]] = []
    opened = 0
    while len(chars) < 2 * n:
        if opened < n and (not stack or rng.random() < 0.5):
            stack.append(len(chars))
            chars.append(KINDS[int(rng.integers(len(KINDS)))][0])
            opened += 1
        else:
            start = stack.pop()
            matched.append((start, len(chars)))
            chars.append(next(k[1] for k in KINDS if k[0] == chars[start]))
    if index % 2:
        (a, a_end), (b, b_end) = (matched[i] for i in rng.choice(len(matched), 2, replace=False))
        if chars[a] == chars[b]:  # make the two pairs of different kinds first
            other = next(k for k in KINDS if k[0] != chars[a])
            chars[b], chars[b_end] = other[0], other[1]
        chars[a_end], chars[b_end] = chars[b_end], chars[a_end]
    return "".join(chars)


def _render(text: str, presentation: str) -> str:
    transforms = PRESENTATIONS[presentation]
    kinds = [GLYPHS[k] for k in KINDS] if GLYPHS_T in transforms else list(KINDS)
    table = {c: g for k, glyph in zip(KINDS, kinds) for c, g in zip(k, glyph)}
    word = "unbalanced" if NEGATED_T in transforms else "balanced"
    pairs = ", ".join(f"{k[0]} with {k[1]}" for k in kinds)
    return (
        f"Brackets match in pairs: {pairs}. A string is balanced when every closing bracket "
        f"closes the innermost open bracket of its own kind and none is left open.\n"
        f"String: {' '.join(table[c] for c in text)}\n"
        f"Is this string {word}? Answer yes or no."
    )


def read(text: str) -> tuple[list[str], str, bool] | None:
    """What a reader takes from a prompt: the kinds, the string, whether it asks 'unbalanced'."""
    try:
        pairs = text.split("match in pairs: ", 1)[1].split(". ", 1)[0].split(", ")
        kinds = [p.split(" with ")[0] + p.split(" with ")[1] for p in pairs]
        string = text.split("String: ", 1)[1].split("\n", 1)[0].replace(" ", "")
        negated = "Is this string unbalanced?" in text
    except IndexError:
        return None
    return kinds, string, negated


def _say(flag: bool, negated: bool) -> str:
    return "yes" if flag != negated else "no"


def _count(text: str) -> str:
    """The counting shortcut: balanced when every kind opens as often as it closes."""
    reading = read(text)
    if reading is None:
        return "I cannot read this prompt."
    kinds, string, negated = reading
    return _say(all(string.count(k[0]) == string.count(k[1]) for k in kinds), negated)


class _Strategies:
    """Hypothesis strategies of one :class:`Brackets` configuration."""

    def __init__(self, family: Brackets) -> None:
        self.family = family

    def case_space(
        self,
        *,
        min_n: int = MIN_N,
        max_n: int = 32,
        presentations: Sequence[str] = ("original", "negated"),
        vocabularies: object = None,
    ) -> Any:
        """Cases — level, index, seed — with the prompts the design asks for them."""
        from pytest_competence.strategies import DesignSpace

        return DesignSpace(
            self.family, presentations=presentations, min_n=min_n, max_n=max_n, pairs=2
        )

    def cases(
        self, *, max_n: int = 32, presentations: Sequence[str] = ("original", "negated")
    ) -> Any:
        """Whole cases, shrinking toward the smallest level, index 0 and seed 0."""
        return self.case_space(max_n=max_n, presentations=presentations).strategy()


class Brackets(Family):
    """Is a string of ``n`` bracket pairs balanced? ``pairs`` per level, half of them balanced."""

    name = "brackets"
    answer_space = ("yes", "no")
    default_presentations = ("original", "glyphs", "negated")
    default_levels = (2, 4, 8, 16, 32)
    shortcuts = ("ref:brackets-count",)

    def __repr__(self) -> str:
        return "Brackets()"

    def instance(self, n: int, index: int, seed: int) -> BracketsInstance:
        return BracketsInstance(n, index, seed, _draw(n, index, seed))

    def item(self, n: int, index: int, seed: int, presentations: Sequence[str]) -> Item:
        z = self.instance(n, index, seed)
        gold = "yes" if balanced(z.text) else "no"
        prompts = tuple(
            Prompt(
                family=self.name,
                instance_id=f"brackets/seed={seed}/n={n}/{index}",
                presentation=p,
                system=SYSTEM,
                text=_render(z.text, p),
                gold=compose(PRESENTATIONS[p])(gold),
                answer_space=self.answer_space,
                answer_map=compose(PRESENTATIONS[p]),
                params={"n": n, "index": index, "seed": seed, "balanced": gold == "yes"},
            )
            for p in presentations
        )
        return Item(z, prompts)

    def check_design(
        self, *, levels: object, pairs: object, seed: object, presentations: object
    ) -> None:
        if (
            not isinstance(levels, (list, tuple))
            or not levels
            or not all(isinstance(n, int) and MIN_N <= n <= MAX_N for n in levels)
        ):
            raise InvalidArgument(
                f"Expected levels to be a list of bracket-pair counts in "
                f"[{MIN_N}, {MAX_N}], but got levels={levels!r}"
            )
        if not isinstance(pairs, int) or pairs < 2 or pairs % 2:
            raise InvalidArgument(
                f"Expected pairs to be an even number (half balanced), but "
                f"got pairs={pairs!r}; try pairs=20"
            )
        if not isinstance(seed, int) or not 0 <= seed < 2**32:
            raise InvalidArgument(f"Expected seed in [0, 2**32), but got seed={seed!r}")
        unknown = [p for p in presentations or () if p not in PRESENTATIONS]  # type: ignore[attr-defined]
        if isinstance(presentations, str) or not presentations or unknown:
            raise InvalidArgument(
                f"Expected presentations among {list(PRESENTATIONS)}, but got "
                f"presentations={presentations!r}"
            )

    def design(
        self, *, levels: Sequence[int], pairs: int, seed: int, presentations: Sequence[str]
    ) -> list[Item]:
        self.check_design(levels=levels, pairs=pairs, seed=seed, presentations=presentations)
        return [self.item(n, index, seed, presentations) for n in levels for index in range(pairs)]

    def parse(self, text: str) -> Parsed:
        return parse_choice(text, self.answer_space)

    @property
    def strategies(self) -> _Strategies:
        return _Strategies(self)

    def audit_components(
        self, levels: Sequence[int], presentations: Sequence[str]
    ) -> list[AuditComponent]:
        larger = [AuditComponent(f"n={2 * max(levels)}", "level", 2 * max(levels))]
        return larger + [
            AuditComponent(p, "presentation", p) for p in PRESENTATIONS if p not in presentations
        ]

    @classmethod
    def shortcut_policies(cls) -> Mapping[str, Callable[..., Any]]:
        return {"brackets-count": lambda: _count}

    @classmethod
    def ideal_answer(cls, prompt: Prompt) -> str | None:
        reading = read(prompt.text)
        if reading is None:
            return None
        kinds, string, negated = reading
        return _say(balanced(string, kinds), negated)

    @classmethod
    def record_meta(cls, item: Item) -> dict[str, Any]:
        return {"kinds": list(KINDS), "glyphs": GLYPHS, "oracle": "stack matching"}
