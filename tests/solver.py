"""An independent, text-level solver for ordering prompts (CBE paper, arXiv:2610.22894, §4.1, App. B.1).

It reads nothing but the rendered prompt string and deliberately imports nothing from
``pytest_competence``: the phrase table below is transcribed by hand from the paper's catalog
(App. B.1, "Catalog", 31 relations in six families), worded as the prompts word them. Each phrase
carries a *semantic* direction on its relation's axis (``+1``: the first argument is the more
forward / earlier / higher / greater one; ``-1``: the converse). Because the direction is fixed by
the meaning of the English phrase and not by the package's forward/converse bookkeeping, a
vocabulary whose two phrases are not true converses, a question asked with the wrong phrase, or a
rewritten premise that is not the converse of its original all change the solver's answer.

Semantics. A premise ``X <phrase> Y`` with direction ``+1`` is the edge ``X → Y`` (``X`` precedes
``Y`` on the axis); with ``-1`` it is ``Y → X``. A negated premise ``X <neg phrase> Y`` under a strict
total order over distinct people means ``Y <phrase> X``. The question ``Is X <phrase> Y?`` is
answered by reachability in the edge graph; if neither entity reaches the other the prompt does not
determine the answer and :class:`Undetermined` is raised.

Public API: :func:`parse` (text → :class:`ParsedPrompt`), :func:`solve` (text → ``"yes"``/``"no"``),
:func:`chains` (the premise graph's chains in ``+1`` orientation), :data:`RELATIONS` (the catalog
pairs in paper order) and :data:`PHRASES` (every surface form → :class:`Form`).
"""

from __future__ import annotations

import ast
import re
from collections import deque
from dataclasses import dataclass

__all__ = [
    "INSTRUCTION",
    "PHRASES",
    "RELATIONS",
    "Edge",
    "Form",
    "MalformedPrompt",
    "ParsedPrompt",
    "Premise",
    "Question",
    "Relation",
    "Undetermined",
    "chains",
    "parse",
    "solve",
]

INSTRUCTION = "Provide your answer only as yes or no. Answer:"


class MalformedPrompt(ValueError):
    """The text is not an ordering prompt, or its premises are not a set of chains."""


class Undetermined(MalformedPrompt):
    """The premises do not decide the question (the two entities are incomparable)."""


# --------------------------------------------------------------------------------------------
# The phrase table, by hand from App. B.1 "Catalog".
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Relation:
    """One catalog relation: the paper's (first, second) phrase pair and its family.

    ``first``/``second`` are the phrases as they appear in a premise ("is in front of"); ``sign``
    is the semantic direction of ``first`` (``second`` has ``-sign``); ``rule`` says whether the
    context must state the converse rule (nonce words).
    """

    group: str
    first: str
    second: str
    sign: int
    rule: bool = False


# Each entry: (group, first phrase, second phrase, semantic direction of the first phrase).
# Axis conventions for the direction: front of the line / left / north / east / earlier / higher /
# greater amount / higher rank / closer to the exit / vorpward = +1.
RELATIONS: tuple[Relation, ...] = (
    # spatial line (10)
    Relation("spatial line", "is in front of", "is behind", +1),
    Relation("spatial line", "is ahead of", "is behind", +1),
    Relation("spatial line", "is to the left of", "is to the right of", +1),
    Relation("spatial line", "is to the right of", "is to the left of", -1),
    Relation("spatial line", "is behind", "is in front of", -1),
    Relation("spatial line", "is before", "is after", +1),
    Relation("spatial line", "is north of", "is south of", +1),
    Relation("spatial line", "is east of", "is west of", +1),
    Relation("spatial line", "is closer to the front than", "is closer to the back than", +1),
    Relation("spatial line", "is further forward than", "is further back than", +1),
    # vertical (2)
    Relation("vertical", "is above", "is below", +1),
    Relation("vertical", "is higher up than", "is lower down than", +1),
    # temporal (4)
    Relation("temporal", "arrived earlier than", "arrived later than", +1),
    Relation("temporal", "was born before", "was born after", +1),
    Relation("temporal", "finished earlier than", "finished later than", +1),
    Relation("temporal", "is scheduled before", "is scheduled after", +1),
    # comparative (7)
    Relation("comparative", "is older than", "is younger than", +1),
    Relation("comparative", "is taller than", "is shorter than", +1),
    Relation("comparative", "is shorter than", "is taller than", -1),
    Relation("comparative", "is heavier than", "is lighter than", +1),
    Relation("comparative", "is faster than", "is slower than", +1),
    Relation("comparative", "is stronger than", "is weaker than", +1),
    Relation("comparative", "is richer than", "is poorer than", +1),
    # rank and social (6)
    Relation("rank and social", "is more senior than", "is more junior than", +1),
    Relation("rank and social", "is ranked higher than", "is ranked lower than", +1),
    Relation("rank and social", "is more experienced than", "is less experienced than", +1),
    Relation("rank and social", "is more popular than", "is less popular than", +1),
    Relation("rank and social", "is paid more than", "is paid less than", +1),
    Relation("rank and social", "is closer to the exit than", "is farther from the exit than", +1),
    # nonce (2): the converse rule is stated in the context
    Relation("nonce", "is more zorbic than", "is less zorbic than", +1, rule=True),
    Relation("nonce", "is vorpward of", "is morpward of", +1, rule=True),
)

# Verbal (non-copular) phrases: past-tense statement -> base form used after "did not"/"Did".
_VERBAL = {
    "arrived earlier than": "arrive earlier than",
    "arrived later than": "arrive later than",
    "finished earlier than": "finish earlier than",
    "finished later than": "finish later than",
}


@dataclass(frozen=True)
class Form:
    """One surface form of a phrase: its canonical statement, direction and negation flag."""

    phrase: str  # the canonical (affirmative statement) phrase, e.g. "is in front of"
    sign: int
    negated: bool


def _forms(phrase: str, sign: int) -> dict[str, Form]:
    """Statement, negation and question forms of ``phrase`` (question forms keyed "Q:<lead> <words>")."""
    if phrase in _VERBAL:
        base = _VERBAL[phrase]
        return {
            phrase: Form(phrase, sign, False),
            f"did not {base}": Form(phrase, sign, True),
            f"Q:Did {base}": Form(phrase, sign, False),
        }
    copula, words = phrase.split(" ", 1)
    assert copula in ("is", "was"), phrase
    return {
        phrase: Form(phrase, sign, False),
        f"{copula} not {words}": Form(phrase, sign, True),
        f"Q:{copula.capitalize()} {words}": Form(phrase, sign, False),
    }


def _phrase_table() -> dict[str, Form]:
    table: dict[str, Form] = {}
    for rel in RELATIONS:
        for phrase, sign in ((rel.first, rel.sign), (rel.second, -rel.sign)):
            for key, form in _forms(phrase, sign).items():
                if key in table and table[key] != form:
                    raise AssertionError(f"phrase table conflict on {key!r}")
                table[key] = form
    return table


#: Every surface form -> its meaning. Statement/negation forms are keyed by the words between the
#: two names; question forms by "Q:" + lead word + the words between the names.
PHRASES: dict[str, Form] = _phrase_table()

_STATEMENT_MIDDLES = sorted((k for k in PHRASES if not k.startswith("Q:")), key=len, reverse=True)

# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------

_HEAD = re.compile(r"There are (\d+) people ([^.]*)\. ")
_RULE = re.compile(r"If one person (.+?) another, then the other (.+?) the first\. ")
_NAMES = re.compile(r"Their names are (\[[^\]]*\])\. ")
_RULES_MARK = " can be described by the following set of rules: "
_NAME = re.compile(r"[A-Z][a-z]*")


@dataclass(frozen=True)
class Edge:
    """``before`` precedes ``after`` on the relation's axis (``+1`` orientation)."""

    before: str
    after: str


@dataclass(frozen=True)
class Premise:
    subject: str
    phrase: str  # canonical affirmative phrase, e.g. "is in front of"
    object: str
    sign: int  # semantic direction of ``phrase``
    negated: bool
    text: str  # the sentence, with its final period

    @property
    def edge(self) -> Edge:
        """What the premise asserts, in ``+1`` orientation."""
        # "X p Y" with sign +1: X → Y. Negation of "X p Y" (distinct people, total order): "Y p X".
        forward = (self.sign == 1) != self.negated
        return Edge(self.subject, self.object) if forward else Edge(self.object, self.subject)


@dataclass(frozen=True)
class Question:
    subject: str
    phrase: str
    object: str
    sign: int
    text: str


@dataclass(frozen=True)
class ParsedPrompt:
    count: int
    names: tuple[str, ...]
    premises: tuple[Premise, ...]
    question: Question
    relation: Relation  # the first catalog relation (paper order) whose pair covers every phrase
    rule: tuple[str, str] | None  # the converse rule's two phrases, if the context states one

    @property
    def edges(self) -> tuple[Edge, ...]:
        return tuple(p.edge for p in self.premises)


def _split_sentence(sentence: str, names: set[str]) -> tuple[str, str, str]:
    """``"Amy is in front of Bob"`` -> ``("Amy", "is in front of", "Bob")``."""
    parts = sentence.split(" ")
    if len(parts) < 3:
        raise MalformedPrompt(f"premise {sentence!r} is too short")
    subject, obj, middle = parts[0], parts[-1], " ".join(parts[1:-1])
    for who in (subject, obj):
        if who not in names:
            raise MalformedPrompt(
                f"premise {sentence!r} names {who!r}, who is not in the names list"
            )
    return subject, middle, obj


def parse(text: str) -> ParsedPrompt:
    """Parse one rendered ordering prompt; raise :class:`MalformedPrompt` if it does not fit."""
    if not isinstance(text, str):
        raise MalformedPrompt(f"expected a string, got {type(text).__name__}")
    head = _HEAD.match(text)
    if not head:
        raise MalformedPrompt("prompt does not start with 'There are N people ...'")
    count = int(head.group(1))
    pos = head.end()
    rule = None
    m = _RULE.match(text, pos)
    if m:
        rule = (m.group(1), m.group(2))
        pos = m.end()
    m = _NAMES.match(text, pos)
    if not m:
        raise MalformedPrompt("no 'Their names are [...]' sentence after the opening")
    try:
        names_list = ast.literal_eval(m.group(1))
    except (ValueError, SyntaxError) as exc:
        raise MalformedPrompt(f"names line is not a Python list literal: {exc}") from None
    if not isinstance(names_list, list) or not all(isinstance(x, str) for x in names_list):
        raise MalformedPrompt("names line is not a list of strings")
    names = tuple(names_list)
    if len(set(names)) != len(names):
        raise MalformedPrompt("names line repeats a name")
    if any(not _NAME.fullmatch(x) for x in names):
        raise MalformedPrompt("a name is not a single capitalised word")
    if len(names) != count:
        raise MalformedPrompt(f"'There are {count} people' but the names line has {len(names)}")
    rest = text[m.end() :]
    start = rest.find(_RULES_MARK)
    if start < 0:
        raise MalformedPrompt("no '... can be described by the following set of rules:'")
    if not text.endswith(" " + INSTRUCTION):
        raise MalformedPrompt("prompt does not end with the yes/no instruction")
    body = rest[start + len(_RULES_MARK) : len(rest) - len(INSTRUCTION) - 1]
    if not body.endswith("?"):
        raise MalformedPrompt("no question before the instruction")
    cut = body.rfind(". ")
    premise_text, question_text = (body[: cut + 1], body[cut + 2 :]) if cut >= 0 else ("", body)
    if "?" in premise_text or "." in question_text:
        raise MalformedPrompt("could not separate the premises from the question")
    name_set = set(names)

    premises = []
    for sentence in premise_text[:-1].split(". ") if premise_text else []:
        subject, middle, obj = _split_sentence(sentence, name_set)
        form = PHRASES.get(middle)
        if form is None:
            raise MalformedPrompt(f"premise {sentence!r}: unknown relation phrase {middle!r}")
        if subject == obj:
            raise MalformedPrompt(f"premise {sentence!r} relates a person to themself")
        premises.append(Premise(subject, form.phrase, obj, form.sign, form.negated, sentence + "."))

    lead, _, q = question_text[:-1].partition(" ")
    subject, middle, obj = _split_sentence(q, name_set)
    qform = PHRASES.get(f"Q:{lead} {middle}")
    if qform is None:
        raise MalformedPrompt(f"question {question_text!r}: unknown relation phrase")
    question = Question(subject, qform.phrase, obj, qform.sign, question_text)

    used = {p.phrase for p in premises} | {question.phrase}
    relation = next((r for r in RELATIONS if used <= {r.first, r.second}), None)
    if relation is None:
        raise MalformedPrompt(f"phrases {sorted(used)} do not belong to one catalog relation")
    if relation.rule:
        if rule is None:
            raise MalformedPrompt(
                "a nonce relation is used but the context states no converse rule"
            )
    if rule is not None:
        a, b = (PHRASES.get(r) for r in rule)
        if (
            a is None
            or b is None
            or a.negated
            or b.negated
            or a.sign != -b.sign
            or ({a.phrase, b.phrase} != {relation.first, relation.second})
        ):
            raise MalformedPrompt(
                f"the stated converse rule {rule!r} is not the relation's converse"
            )
    return ParsedPrompt(count, names, tuple(premises), question, relation, rule)


# --------------------------------------------------------------------------------------------
# Graph: consistency and reachability
# --------------------------------------------------------------------------------------------


def chains(parsed: ParsedPrompt) -> list[tuple[str, ...]]:
    """The premise graph as chains in ``+1`` orientation; raise unless it is a disjoint union of paths.

    Also checks that every listed name takes part in some premise and that no premise repeats.
    """
    succ: dict[str, str] = {}
    pred: dict[str, str] = {}
    for e in parsed.edges:
        if e.before in succ or e.after in pred:
            raise MalformedPrompt(f"premises do not form chains at {e.before!r} -> {e.after!r}")
        succ[e.before] = e.after
        pred[e.after] = e.before
    out = []
    seen: set[str] = set()
    for name in parsed.names:
        if name in pred or name in seen:
            continue
        if name not in succ:
            raise MalformedPrompt(f"{name!r} is listed but appears in no premise")
        chain = [name]
        while chain[-1] in succ:
            chain.append(succ[chain[-1]])
        seen.update(chain)
        out.append(tuple(chain))
    if len(seen) != len(parsed.names):
        raise MalformedPrompt("premises contain a cycle")
    return out


def _reaches(edges: tuple[Edge, ...], src: str, dst: str) -> bool:
    adj: dict[str, list[str]] = {}
    for e in edges:
        adj.setdefault(e.before, []).append(e.after)
    todo, seen = deque([src]), {src}
    while todo:
        u = todo.popleft()
        if u == dst:
            return True
        for v in adj.get(u, ()):
            if v not in seen:
                seen.add(v)
                todo.append(v)
    return False


def solve(text: str) -> str:
    """``"yes"`` or ``"no"`` for a rendered prompt; raises :class:`MalformedPrompt` otherwise."""
    parsed = parse(text)
    chains(parsed)  # consistency: chains over the listed names, acyclic, everyone used
    q = parsed.question
    if q.subject == q.object:
        raise MalformedPrompt("the question relates a person to themself")
    x_first = _reaches(parsed.edges, q.subject, q.object)
    y_first = _reaches(parsed.edges, q.object, q.subject)
    if x_first == y_first:
        raise Undetermined(f"premises do not order {q.subject!r} and {q.object!r}")
    # "Is X p Y?" with sign +1 asks whether X precedes Y.
    return "yes" if x_first == (q.sign == 1) else "no"
