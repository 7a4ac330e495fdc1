"""An independent reader and interpreter for grammar prompts (tests only).

It shares no code with ``strategies/grammar/``: the inputs and the shown outputs are read from
the rendered prompt text; the rules (which the prompt hides by design) from the language's plain
JSON form, ``Language.plain()``. Translation is a bottom-up chart parse of the stratified
precedence grammar that keeps one output per *derivation*, so it counts derivations as well:
exactly one derivation per input is the proof that the input has exactly one translation.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

_SUPPORT = re.compile(r"^(\S.*?) -> ([A-Z][A-Z ]*)$")
_QUERY = re.compile(r"^(\d+)\. (\S.*?) -> \?$")


def read_prompt(text: str) -> tuple[list[tuple[str, str]], list[str]]:
    """``(support pairs, query inputs)`` as the prompt text shows them."""
    support, queries = [], []
    for line in text.splitlines():
        if m := _QUERY.match(line):
            assert int(m[1]) == len(queries) + 1, f"query numbering broken at {line!r}"
            queries.append(m[2])
        elif m := _SUPPORT.match(line):
            support.append((m[1], m[2]))
    return support, queries


def derivations(plain: dict[str, Any], text: str) -> list[str]:
    """One translation per derivation of ``text`` (several would mean an ambiguous input).

    ``E[k][i][j]`` lists the outputs of each derivation of tokens ``i..j`` from nonterminal
    ``E_k`` (``k = m`` is a bare primitive); spans are filled shortest first.
    """
    colour: dict[str, str] = plain["primitives"]
    rules = [(w, arity, template.split()) for w, arity, template in plain["functions"]]
    tokens = text.split()
    n, m = len(tokens), len(rules)

    @cache
    def chart(k: int, i: int, j: int) -> tuple[tuple[str, ...], ...]:
        if k == m:
            return ((colour[tokens[i]],),) if j == i + 1 and tokens[i] in colour else ()
        word, arity, template = rules[k]
        found = list(chart(k + 1, i, j))  # E_k -> E_(k+1)
        if arity == 1 and tokens[j - 1] == word and j - 1 > i:  # E_k -> E_k f
            for x in chart(k, i, j - 1):
                found.append(_fill(template, x, ()))
        if arity == 2:  # E_k -> E_k f E_(k+1), f at any split point
            for p in range(i + 1, j - 1):
                if tokens[p] == word:
                    for x in chart(k, i, p):
                        for y in chart(k + 1, p + 1, j):
                            found.append(_fill(template, x, y))
        return tuple(found)

    return [" ".join(out) for out in chart(0, 0, n)] if n else []


def _fill(template: list[str], x: tuple[str, ...], y: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for slot in template:
        if slot == "x":
            out += x
        elif slot == "y":
            out += y
        else:
            raise AssertionError(f"unknown template slot {slot!r}")
    return tuple(out)


def translate(plain: dict[str, Any], text: str) -> str:
    """The translation of ``text``, asserting that it has exactly one derivation."""
    found = derivations(plain, text)
    assert len(found) == 1, f"{text!r} has {len(found)} derivations: {found}"
    return found[0]


def applications(plain: dict[str, Any], text: str) -> int:
    """How many function applications ``text`` contains (each function token is one)."""
    words = {w for w, _, _ in plain["functions"]}
    return sum(t in words for t in text.split())


def swap(plain: dict[str, Any], i: int, j: int) -> dict[str, Any]:
    """``plain`` with the precedence of functions ``i`` and ``j`` exchanged."""
    functions = list(plain["functions"])
    functions[i], functions[j] = functions[j], functions[i]
    return {"primitives": plain["primitives"], "functions": functions}
