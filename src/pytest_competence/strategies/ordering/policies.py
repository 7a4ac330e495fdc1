"""The ordering family's reference policies (CBE paper, arXiv:2610.22894): read an ordering prompt's text.

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

The competent reading (``ref:ideal`` on ordering prompts) answers by reachability. Every
policy reads a prompt in the phrases of the vocabulary its parameters name: a catalog
vocabulary, or the ``phrases`` that a vocabulary outside the catalog adds to them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pytest_competence.policy import UNREADABLE, ModelSpecError, number, reads_prompt
from pytest_competence.protocol import InvalidArgument, Prompt

from .vocabularies import CATALOG, Phrase, Vocabulary, _between

__all__ = ["ORDERING_POLICIES", "OrderingText", "ordering_ideal", "read_ordering", "read_prompt"]


@dataclass(frozen=True)
class OrderingText:
    """What a careful reader takes from an ordering prompt: names, facts ``x ≺ y``, the query."""

    people: int
    names: tuple[str, ...]
    facts: tuple[tuple[str, str], ...]
    literal: tuple[tuple[str, str], ...]  # every premise read as "first argument ≺ second"
    forward_only: bool  # every premise uses the forward statement of the vocabulary
    query: tuple[str, str]  # the question asks whether query[0] ≺ query[1]
    vocabulary: str = ""  # the vocabulary the phrases belong to
    reworded: int = 0  # premises worded other than with the forward statement


@dataclass(frozen=True)
class _Wording:
    """One vocabulary as a reader sees it: premise middles and questions, each with its sign."""

    name: str
    premises: tuple[tuple[str, int], ...]  # (the words between {a} and {b}, +1 | -1)
    questions: tuple[tuple[tuple[str, str, str], int], ...]  # ((before, between, after), sign)
    forward: str  # the forward statement's middle


def _wording(voc: Vocabulary) -> _Wording:
    premises, questions = [], []
    for phrase, sign in ((voc.forward, 1), (voc.converse, -1)):
        premises += [(_between(phrase.statement), sign), (_between(phrase.negation), -sign)]
        head, _, rest = phrase.question.partition("{a}")
        middle, _, tail = rest.partition("{b}")
        questions.append(((head, middle, tail), sign))
    # The longer question first: one may be the other with more words after it, which the
    # other would read as the start of the instruction.
    questions.sort(key=lambda q: -len("".join(q[0])))
    return _Wording(voc.name, tuple(premises), tuple(questions), _between(voc.forward.statement))


@lru_cache(maxsize=1)
def _catalog() -> dict[str, _Wording]:
    return {v.name: _wording(v) for v in CATALOG}


_ROLES = (
    "forward",
    "forward_negated",
    "forward_question",
    "converse",
    "converse_negated",
    "converse_question",
)


def _prompt_wording(params: Mapping[str, Any]) -> _Wording | None:
    """The wording a prompt's parameters name: its own ``phrases`` (a vocabulary outside the
    catalog), else its catalog vocabulary; ``None`` when they name neither."""
    phrases = params.get("phrases")
    if isinstance(phrases, Mapping):
        try:
            return _own_wording(str(params.get("vocabulary")), tuple(phrases[r] for r in _ROLES))
        except (KeyError, TypeError, InvalidArgument):
            return None
    return _catalog().get(params.get("vocabulary"))  # type: ignore[arg-type]


@lru_cache(maxsize=64)
def _own_wording(name: str, templates: tuple[str, ...]) -> _Wording:
    forward, converse = Phrase(*templates[:3]), Phrase(*templates[3:])
    return _wording(Vocabulary(name, "", forward, converse, "", ""))


def _question(
    body: str, pos: int, w: _Wording, names: frozenset[str], window: int
) -> tuple[str, str] | None:
    """The query ``(x, y)``, ``x ≺ y`` asked, of the question at ``pos``, else ``None``."""
    for (head, middle, tail), sign in w.questions:
        if not body.startswith(head, pos):
            continue
        start = pos + len(head)
        limit = start + window + len(middle)
        at = body.find(middle, start, limit)
        # The question is followed by " " and the instruction, or ends the prompt.
        stop = body.find(tail + " ", at + len(middle)) if at >= 0 else -1
        if stop < 0 and at >= 0 and body.endswith(tail):
            stop = len(body) - len(tail)
        if stop < 0:
            continue
        x, y = body[start:at], body[at + len(middle) : stop]
        if x in names and y in names:
            return (x, y) if sign > 0 else (y, x)
    return None


def _read(people: int, names: tuple[str, ...], body: str, w: _Wording) -> OrderingText | None:
    """Read ``body`` (the premises, the question, the instruction) in the wording ``w``: each
    premise is "x MIDDLE y." with ``x`` and ``y`` names of the names line, so the names, not
    spaces, tell where the words begin and end (a middle may hold no spaces at all)."""
    known = frozenset(names)
    window = max(map(len, known))
    find, signs = body.find, dict(w.premises)
    parsed: list[tuple[str, str, int, str]] = []
    starts, pos = [], 0
    while True:  # one premise per round, inlined: 1,024-entity chains have 1,023 of them
        for middle in signs:
            # The words start with a character no name holds (Phrase checks it), so their
            # first place after a name is where that name ends.
            at = find(middle, pos, pos + window + len(middle))
            if at < 0 or body[pos:at] not in known:
                continue
            start = at + len(middle)
            stop = find(".", start)
            if stop > 0 and body[start:stop] in known:
                break
        else:
            break
        parsed.append((body[pos:at], middle, signs[middle], body[start:stop]))
        if not body.startswith(" ", stop + 1):
            return None
        starts.append(pos)
        pos = stop + 2
    query = _question(body, pos, w, known, window)
    if query is None and len(parsed) > 1:  # the question was read as a premise ("… . Right?")
        query = _question(body, starts[-1], w, known, window)
        parsed.pop()
    if query is None or not parsed:
        return None
    facts = tuple((x, y) if sign > 0 else (y, x) for x, _, sign, y in parsed)
    literal = tuple((x, y) for x, _, _, y in parsed)
    reworded = sum(m != w.forward for _, m, _, _ in parsed)
    return OrderingText(people, names, facts, literal, reworded == 0, query, w.name, reworded)


_NAMES, _RULES = "Their names are [", " can be described by the following set of rules: "


def _layouts(text: str) -> Iterator[tuple[int, tuple[str, ...], str]]:
    """``(people, names, body)`` for each way ``text`` splits into the context, its names line
    and the rest: a vocabulary's own context words may hold the markers too. The prompt may
    follow other text (a completions endpoint receives the system prompt first)."""
    begin = text.find(_CONTEXT)
    while begin >= 0:
        yield from _layouts_from(text[begin:])
        begin = text.find(_CONTEXT, begin + 1)


_CONTEXT = "There are "


def _layouts_from(text: str) -> Iterator[tuple[int, tuple[str, ...], str]]:
    count = text.removeprefix(_CONTEXT).partition(" ")[0]
    if not count.isdigit():
        return
    people, at = int(count), text.find(_NAMES)
    while at >= 0:
        close = text.find("]", at)
        names = tuple(s.strip().strip("'\"") for s in text[at + len(_NAMES) : close].split(","))
        if close > 0 and len(names) == people and all(names):
            rules = text.find(_RULES, close)
            while rules >= 0:
                yield people, names, text[rules + len(_RULES) :]
                rules = text.find(_RULES, rules + 1)
        at = text.find(_NAMES, at + 1)


@lru_cache(maxsize=256)  # a zoo of policies reads each prompt in turn (audit, diagnosis)
def _reading_of(text: str, wording: _Wording | None) -> OrderingText | None:
    for people, names, body in _layouts(text):
        for w in (wording,) if wording is not None else _catalog().values():
            found = _read(people, names, body, w)
            if found is not None:
                return found
    return None


def read_ordering(text: str, vocabulary: Vocabulary | str | None = None) -> OrderingText | None:
    """Parse an ordering prompt (App. B.1 format) from its text, in ``vocabulary``'s phrases (a
    :class:`Vocabulary` or a catalog name); without one, in the phrases of the first catalog
    vocabulary that reads it. ``None`` if unreadable."""
    if vocabulary is None:
        return _reading_of(text, None)
    if isinstance(vocabulary, str):
        wording = _catalog().get(vocabulary)
        return None if wording is None else _reading_of(text, wording)
    return _reading_of(text, _wording(vocabulary))


def read_prompt(prompt: Prompt | str) -> OrderingText | None:
    """:func:`read_ordering` in the vocabulary the prompt's parameters name (its own phrases
    for a vocabulary outside the catalog); a bare text, or a prompt whose parameters name
    none, in the catalog's."""
    if isinstance(prompt, str) or not prompt.params:
        return _reading_of(prompt if isinstance(prompt, str) else prompt.text, None)
    wording = _prompt_wording(prompt.params)
    if wording is None and ("phrases" in prompt.params or "vocabulary" in prompt.params):
        return None
    return _reading_of(prompt.text, wording)


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


def _reading(rule: Callable[[OrderingText], str]) -> Callable[[Prompt | str], str]:
    @reads_prompt  # the prompt's parameters say its vocabulary
    def answer(prompt: Prompt | str) -> str:
        t = read_prompt(prompt)
        return UNREADABLE if t is None else rule(t)

    return answer


def _threshold(
    n: str = "", rewrites: str = "1", vocabularies: str = ""
) -> Callable[[Prompt | str], str]:
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


def ordering_ideal(prompt: Prompt | str) -> str | None:
    """The ideal answer to an ordering prompt (or its text), or ``None`` when it is not one."""
    t = read_prompt(prompt)
    return None if t is None else _ideal(t)


#: Policy name → factory: the ordering family's shortcut policies.
ORDERING_POLICIES: dict[str, Callable[..., Callable[[Prompt | str], str]]] = {
    "endpoint": lambda: _reading(_endpoint),
    "forward-reader": lambda: _reading(_forward_reader),
    "names-order": lambda: _reading(_names_order),
    "threshold": _threshold,
}
