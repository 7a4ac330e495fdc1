"""The ordering family's reference policies (CBE paper, arXiv:2610.22894): read an ordering prompt's text alone.

================== ======================================================================
``endpoint``       the source/sink shortcut: answers from the premises incident to the two
                   queried entities only (a queried source is in front of everything);
                   right on endpoint queries, a guess ("yes") on interior ones.
``forward-reader`` reads every premise as if worded with the forward phrase, ignoring
                   converse wording and negation: right on original prompts only.
``names-order``    answers from the order of the names line: right only when that line is
                   in chain order (the App. F.3 artifact).
``threshold``      ideal on prompts with at most ``n`` people; beyond that, wrong whenever a
                   premise is worded other than with the forward phrase — correct up to a
                   size, presentation-dependent beyond it. ``rewrites=k`` (default 1): wrong
                   only when at least ``k`` premises are so worded; ``vocabularies=a,b``: wrong
                   only in those catalog vocabularies. The smallest failing case is known:
                   ``n + 1`` people (at least ``k + 1``), ``k`` rewritten premises, the first
                   listed vocabulary in catalog order.
================== ======================================================================

The competent reading (``ref:ideal`` on ordering prompts) answers by reachability.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from pytest_competence.policy import UNREADABLE, ModelSpecError, number

from .vocabularies import CATALOG

__all__ = ["ORDERING_POLICIES", "OrderingText", "ordering_ideal", "read_ordering"]


@dataclass(frozen=True)
class OrderingText:
    """What a careful reader takes from an ordering prompt: names, facts ``x ≺ y``, the query."""

    people: int
    names: tuple[str, ...]
    facts: tuple[tuple[str, str], ...]
    literal: tuple[tuple[str, str], ...]  # every premise read as "first argument ≺ second"
    forward_only: bool  # every premise uses the forward statement of the vocabulary
    query: tuple[str, str]  # the question asks whether query[0] ≺ query[1]
    vocabulary: str = ""  # the catalog vocabulary the phrases belong to
    reworded: int = 0  # premises worded other than with the forward statement


@lru_cache(maxsize=1)
def _phrase_tables() -> list[tuple[dict[str, int], dict[tuple[str, str], int], str, str]]:
    """Per catalog vocabulary: premise middles → sign, question (head, middle) → sign."""
    tables = []
    for voc in CATALOG:
        premise: dict[str, int] = {}
        question: dict[tuple[str, str], int] = {}
        for phrase, sign in ((voc.forward, 1), (voc.converse, -1)):
            premise[_between(phrase.statement)] = sign
            premise[_between(phrase.negation)] = -sign
            head, rest = phrase.question.split("{a}")
            question[(head.strip(), rest.split("{b}")[0])] = sign
        tables.append((premise, question, _between(voc.forward.statement), voc.name))
    return tables


def _between(template: str) -> str:
    return template.split("{a}")[1].split("{b}")[0]


@lru_cache(maxsize=256)  # a zoo of policies reads each prompt in turn (audit, diagnosis)
def read_ordering(text: str) -> OrderingText | None:
    """Parse an ordering prompt (App. B.1 format) from its text alone; ``None`` if unreadable."""
    try:
        people = int(text.split("There are ", 1)[1].split(" ", 1)[0])
        names_line = text.split("Their names are [", 1)[1].split("]", 1)[0]
        names = tuple(s.strip().strip("'\"") for s in names_line.split(","))
        body = text.split("set of rules: ", 1)[1]
        q_end = body.index("?")
        q_start = body.rindex(". ", 0, q_end) + 2
        sentences = body[: q_start - 2].split(". ")
        q_words = body[q_start:q_end].split(" ")
    except (IndexError, ValueError):
        return None
    parsed = []
    for s in sentences:
        x, _, rest = s.partition(" ")
        mid, _, y = rest.rpartition(" ")
        parsed.append((x, f" {mid} ", y))
    q_key = (q_words[0], f" {' '.join(q_words[2:-1])} ")
    middles = {m for _, m, _ in parsed}
    for premise, question, forward, name in _phrase_tables():
        if q_key in question and middles <= premise.keys():
            facts = tuple((x, y) if premise[m] > 0 else (y, x) for x, m, y in parsed)
            a, b = q_words[1], q_words[-1]
            query = (a, b) if question[q_key] > 0 else (b, a)
            literal = tuple((x, y) for x, _, y in parsed)
            reworded = sum(m != forward for _, m, _ in parsed)
            return OrderingText(
                people, names, facts, literal, middles == {forward}, query, name, reworded
            )
    return None


def _reaches(facts: Sequence[tuple[str, str]], start: str, goal: str) -> bool:
    edges: dict[str, list[str]] = {}
    for x, y in facts:
        edges.setdefault(x, []).append(y)
    seen, todo = {start}, deque([start])
    while todo:
        node = todo.popleft()
        if node == goal:
            return True
        for nxt in edges.get(node, ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


@lru_cache(maxsize=256)  # the ideal, noisy and every threshold policy ask it of one reading
def _ideal(t: OrderingText) -> str:
    return _yes(_reaches(t.facts, *t.query))


def _endpoint(t: OrderingText) -> str:
    x, y = t.query
    has_in = {b for _, b in t.facts if b in (x, y)}
    has_out = {a for a, _ in t.facts if a in (x, y)}
    if x not in has_in:
        return "yes"  # x is a source: in front of everything
    if x not in has_out:
        return "no"
    if y not in has_out:
        return "yes"
    if y not in has_in:
        return "no"
    return "yes"  # no incident premise decides: the shortcut's default


def _forward_reader(t: OrderingText) -> str:
    return _yes(_reaches(t.literal, *t.query))


def _names_order(t: OrderingText) -> str:
    x, y = t.query
    return _yes(t.names.index(x) < t.names.index(y))


def _reading(rule: Callable[[OrderingText], str]) -> Callable[[str], str]:
    def answer(text: str) -> str:
        t = read_ordering(text)
        return UNREADABLE if t is None else rule(t)

    return answer


def _threshold(n: str = "", rewrites: str = "1", vocabularies: str = "") -> Callable[[str], str]:
    if not n:
        raise ModelSpecError("the threshold policy needs its size, e.g. 'ref:threshold?n=64'")
    limit = int(number("n", n, 2, 10**9))
    least = int(number("rewrites", rewrites, 1, 10**9))
    names = [v.strip() for v in vocabularies.split(",") if v.strip()]
    known = {v.name for v in CATALOG}
    unknown = [v for v in names if v not in known]
    if unknown:
        raise ModelSpecError(
            f"Unknown vocabularies {unknown} in vocabularies={vocabularies!r}; "
            f"expected catalog names such as 'front_behind,left_right'"
        )
    only = set(names)

    def rule(t: OrderingText) -> str:
        right = _ideal(t)
        if t.people <= limit or t.reworded < least or (only and t.vocabulary not in only):
            return right
        return "no" if right == "yes" else "yes"

    return _reading(rule)


def ordering_ideal(text: str) -> str | None:
    """The ideal answer to an ordering prompt, or ``None`` when ``text`` is not one."""
    t = read_ordering(text)
    return None if t is None else _ideal(t)


#: Policy name → factory: the ordering family's shortcut policies.
ORDERING_POLICIES: dict[str, Callable[..., Callable[[str], str]]] = {
    "endpoint": lambda: _reading(_endpoint),
    "forward-reader": lambda: _reading(_forward_reader),
    "names-order": lambda: _reading(_names_order),
    "threshold": _threshold,
}
