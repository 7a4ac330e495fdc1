"""Generated artificial languages and their interpreter (systematicity paper, arXiv:2609.13948, §4.1; Lake & Baroni, 2023).

A :class:`Language` has *primitive rules* (a pseudoword means one colour token) and *function
rules* (a pseudoword that rewrites its evaluated arguments by a template that duplicates,
reorders or deletes them). A 1-argument function follows its argument (``x f``), a 2-argument
function stands between its arguments (``x f y``); every argument may be a whole sequence.

Syntax is the textbook stratified precedence grammar, one level per function, loosest first::

    E_k -> E_k f_k E_(k+1)      (f_k takes 2 arguments: left-to-right when chained with itself)
    E_k -> E_k f_k              (f_k takes 1 argument)
    E_k -> E_(k+1)
    E_(m+1) -> primitive

so a tighter function's arguments never contain an unbracketed looser function, a function
chained with itself reduces left to right (``a f b f c`` is ``[a f b] f c``), and every input
the grammar derives has exactly one derivation, hence exactly one translation (the App. C
instructions' "strict priority order"; ``tests/test_grammar.py`` checks it by counting
derivations with an independent chart parser). The interpreter here is a precedence-climbing
parser of that grammar that evaluates while it parses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

__all__ = ["COLOURS", "PSEUDOWORDS", "Function", "Language", "expression", "sample_language"]

#: Input words (never English words, so no prior meaning leaks in); a task draws its
#: primitives and functions from here, and a substitution draws fresh ones.
PSEUDOWORDS: tuple[str, ...] = (
    "dax",
    "wif",
    "lug",
    "zup",
    "fep",
    "kiki",
    "tufa",
    "blicket",
    "gazzer",
    "mup",
    "zot",
    "tiv",
    "blik",
    "wug",
    "snib",
    "plove",
    "vork",
    "dupa",
    "gorp",
    "fim",
    "narl",
    "pilk",
    "quez",
    "rulf",
    "sarn",
    "toma",
    "jeb",
    "kov",
    "lorp",
    "mib",
    "nuv",
    "pex",
    "qot",
    "ruz",
    "sif",
    "tep",
    "vax",
    "wom",
    "yul",
    "zeb",
    "bosp",
    "criv",
    "drel",
    "frab",
    "gliv",
    "jurn",
    "klet",
    "hesk",
)

#: Output tokens: capitalised colour names, one token each.
COLOURS: tuple[str, ...] = (
    "RED",
    "GREEN",
    "BLUE",
    "YELLOW",
    "PURPLE",
    "PINK",
    "ORANGE",
    "BROWN",
    "BLACK",
    "WHITE",
    "GRAY",
    "CYAN",
    "TEAL",
    "GOLD",
    "SILVER",
    "MAROON",
)

# Templates over "x" (the left or only argument) and "y" (the right one). One-argument
# functions duplicate (deleting their only argument would leave nothing); two-argument ones
# reorder, duplicate or delete. Deletion is drawn less often: App. C's instructions speak of
# "duplicating and/or rearranging" only, so it stays the exception the issue still asks for.
_UNARY: tuple[tuple[str, ...], ...] = (("x", "x"), ("x", "x", "x"))
_BINARY: tuple[tuple[str, ...], ...] = (
    ("y", "x"),
    ("x", "y", "x"),
    ("y", "x", "y"),
    ("x", "x", "y"),
    ("x", "y", "y"),
    ("y", "y", "x"),
    ("y", "x", "x"),
    ("x", "y", "x", "y"),
)
_DELETING: tuple[tuple[str, ...], ...] = (("y",), ("x",))
_P_BINARY = 0.6
_P_DELETING = 0.15


@dataclass(frozen=True)
class Function:
    """A function rule: its pseudoword, its arity (1: ``x f``; 2: ``x f y``) and its template."""

    word: str
    arity: int
    template: tuple[str, ...]

    def apply(self, x: tuple[str, ...], y: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The template filled with the evaluated arguments."""
        out: list[str] = []
        for v in self.template:
            out.extend(x if v == "x" else y)
        return tuple(out)


@dataclass(frozen=True)
class Language:
    """A generated language: ``(word, colour)`` primitives and functions, loosest-binding first."""

    primitives: tuple[tuple[str, str], ...]
    functions: tuple[Function, ...]

    @cached_property
    def colour(self) -> dict[str, str]:
        """Primitive word → colour token."""
        return dict(self.primitives)

    @property
    def words(self) -> tuple[str, ...]:
        """Every input word: primitives, then functions (loosest first)."""
        return tuple(w for w, _ in self.primitives) + tuple(f.word for f in self.functions)

    def plain(self) -> dict[str, Any]:
        """The rules as JSON-able plain data (what an independent reader is given)."""
        return {
            "primitives": dict(self.primitives),
            "functions": [[f.word, f.arity, " ".join(f.template)] for f in self.functions],
        }

    @cached_property
    def _rules(self) -> dict[str, tuple[int, Function]]:
        return {f.word: (k, f) for k, f in enumerate(self.functions)}

    def translate(self, text: str) -> str:
        """The one translation of ``text``; ``ValueError`` when the grammar does not derive it."""
        tokens = text.split()
        out, end = self._expression(tokens, 0, 0)
        if end != len(tokens):
            raise ValueError(f"unexpected {tokens[end]!r} at position {end} of {text!r}")
        return " ".join(out)

    def _expression(
        self, tokens: Sequence[str], pos: int, lowest: int
    ) -> tuple[tuple[str, ...], int]:
        # Precedence climbing over the stratified grammar: an E_lowest. A function of level k
        # takes as left argument an E_k, i.e. an expression whose outermost function (``top``)
        # is no looser than k; its right argument is an E_(k+1). Reading left to right and
        # folding into ``left`` is the left-to-right reduction of a function chained with itself.
        if pos >= len(tokens) or tokens[pos] not in self.colour:
            got = tokens[pos] if pos < len(tokens) else "the end"
            raise ValueError(f"expected a primitive at position {pos}, got {got!r}")
        left: tuple[str, ...] = (self.colour[tokens[pos]],)
        pos, top = pos + 1, len(self.functions)
        while pos < len(tokens):
            rule = self._rules.get(tokens[pos])
            if rule is None:
                raise ValueError(f"expected a function at position {pos}, got {tokens[pos]!r}")
            k, f = rule
            if k < lowest:
                break  # the caller's looser function takes it
            if k > top:
                raise ValueError(
                    f"{f.word!r} at position {pos} binds tighter than the "
                    f"function before it, so nothing can be its argument"
                )
            if f.arity == 2:
                right, pos = self._expression(tokens, pos + 1, k + 1)
                left = f.apply(left, right)
            else:
                left, pos = f.apply(left), pos + 1
            top = k
        return left, pos

    def swapped(self, i: int, j: int) -> Language:
        """The same rules with the precedence of functions ``i`` and ``j`` exchanged."""
        functions = list(self.functions)
        functions[i], functions[j] = functions[j], functions[i]
        return Language(self.primitives, tuple(functions))

    def renamed(self, words: dict[str, str], colours: dict[str, str]) -> Language:
        """The same rules under the word map ``words`` and the colour map ``colours``."""
        return Language(
            tuple((words[w], colours[c]) for w, c in self.primitives),
            tuple(Function(words[f.word], f.arity, f.template) for f in self.functions),
        )


def sample_language(rng: np.random.Generator, *, functions: int, primitives: int) -> Language:
    """A random language with ``functions`` function rules in a random precedence order."""
    words = rng.choice(len(PSEUDOWORDS), size=primitives + functions, replace=False)
    colours = rng.choice(len(COLOURS), size=primitives, replace=False)
    prims = tuple((PSEUDOWORDS[w], COLOURS[c]) for w, c in zip(words[:primitives], colours))
    rules = []
    for w in words[primitives:]:
        if rng.random() < _P_BINARY:
            pool = _DELETING if rng.random() < _P_DELETING else _BINARY
            rules.append(Function(PSEUDOWORDS[w], 2, pool[rng.integers(len(pool))]))
        else:
            rules.append(Function(PSEUDOWORDS[w], 1, _UNARY[rng.integers(len(_UNARY))]))
    return Language(prims, tuple(rules))


def expression(
    rng: np.random.Generator, language: Language, applications: int, level: int = 0
) -> list[str]:
    """The tokens of a random ``E_level`` with exactly ``applications`` function applications.

    The root function is drawn among the levels the nonterminal admits; a 2-argument function's
    left argument may reuse its own level (the left-to-right chain), its right one may not.
    """
    m = len(language.functions)
    if applications == 0:
        return [language.primitives[rng.integers(len(language.primitives))][0]]
    k = int(rng.integers(level, m))
    f = language.functions[k]
    if f.arity == 1:
        return expression(rng, language, applications - 1, k) + [f.word]
    rest = applications - 1
    right = 0 if k + 1 == m else int(rng.integers(0, rest + 1))
    return (
        expression(rng, language, rest - right, k)
        + [f.word]
        + expression(rng, language, right, k + 1)
    )
