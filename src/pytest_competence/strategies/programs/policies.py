"""Reference policies for program induction over integer sequences (systematicity paper, arXiv:2609.13948, §4.3).

=========================  ==============================================================
``programs-copy-nearest``  the copying shortcut: for each query, the output of the support
                           example whose input length is nearest the query's (the first
                           shown on a tie). It would solve a task whose support held a
                           same-length example of a length-determined rule; the disjoint
                           length pools of the ``programs`` family are there to catch it.
=========================  ==============================================================

The policy reads the prompt text alone (the ``Examples:`` and ``Queries:`` blocks).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from pytest_competence.policy import UNREADABLE

__all__ = ["PROGRAMS_POLICIES", "ProgramsText", "read_programs"]


@dataclass(frozen=True)
class ProgramsText:
    """What a reader takes from a programs prompt: the support pairs and the query inputs."""

    support: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]
    query: tuple[tuple[int, ...], ...]


def _ints(field: str) -> tuple[int, ...]:
    value = json.loads(field)
    if not isinstance(value, list) or not all(type(v) is int for v in value):
        raise ValueError(field)
    return tuple(value)


def read_programs(text: str) -> ProgramsText | None:
    """Parse a programs prompt (``[x] -> [y]`` examples, ``[x] -> ?`` queries); else ``None``."""
    if "Examples:\n" not in text or "\nQueries:\n" not in text:
        return None
    examples, _, rest = text.split("Examples:\n", 1)[1].partition("\nQueries:\n")
    try:
        support = []
        for line in filter(None, examples.splitlines()):
            x, _, y = line.partition(" -> ")
            support.append((_ints(x), _ints(y)))
        query = [
            _ints(line[: -len(" -> ?")]) for line in rest.splitlines() if line.endswith(" -> ?")
        ]
    except ValueError:
        return None
    if not support or not query:
        return None
    return ProgramsText(tuple(support), tuple(query))


def _copy_nearest(t: ProgramsText) -> str:
    outputs = [min(t.support, key=lambda pair: abs(len(pair[0]) - len(q)))[1] for q in t.query]
    return "Answer: " + json.dumps([list(y) for y in outputs], separators=(",", ":"))


def _reading(rule: Callable[[ProgramsText], str]) -> Callable[[str], str]:
    def answer(text: str) -> str:
        t = read_programs(text)
        return UNREADABLE if t is None else rule(t)

    return answer


#: Policy name → factory; merged into ``reference.POLICIES``.
PROGRAMS_POLICIES: dict[str, Callable[..., Callable[[str], str]]] = {
    "programs-copy-nearest": lambda: _reading(_copy_nearest),
}
