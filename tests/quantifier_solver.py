"""An independent, text-level solver for the quantified reformulation prompts (CRTBench paper).

It imports nothing from ``pytest_competence`` and knows no lexicon: a category is a word read
off the sentence ("All cyclists are painters" → ``cyclist``, ``painter``; the singular is the
plural without its final "s", "a painter" / "an archer" without the article), a person is any
other leading word ("Maya is a cyclist"). The label comes from brute force over *explicit* small
domains — every way to give each element a set of categories — rather than the package's
reasoning over Venn cells.

Domain bound. Each sentence here is a universal (true in a model, true in every submodel), an
existential (kept true by keeping one witness) or a fact about a named person (kept by keeping
that person). So a model of the premises plus a question-side constraint has a submodel made of
the named people and one witness per existential: with ``e`` existential premises, domains of at
most ``people + e + 1`` elements (at least one) find every answer there is.

Public API: :func:`parse` (text → :class:`Reading`), :func:`solve` (text → label),
:func:`equivalent` (two sentences hold in the same models).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

__all__ = ["MalformedPrompt", "Reading", "equivalent", "parse", "solve"]

_BE = r"(?:is|are) (not |NOT )?(?:classified as )?"
_ONE = _BE + r"an? (\w+)"
_MANY = _BE + r"(\w+)s"
_FORMS = [  # (pattern, quantifier, subject positive?)
    (re.compile(rf"^all (\w+)s {_MANY}$"), "all", True),
    (re.compile(rf"^no (\w+)s {_MANY}$"), "no", True),
    (re.compile(rf"^some (\w+)s {_MANY}$"), "some", True),
    (re.compile(rf"^not all (\w+)s {_MANY}$"), "not all", True),
    (re.compile(rf"^everyone who {_ONE} {_ONE}$"), "all", False),
    (re.compile(rf"^someone who {_ONE} {_ONE}$"), "some", False),
    (re.compile(rf"^there is no (\w+) who {_ONE}$"), "none", True),
]
_FACT = re.compile(rf"^(\w+) {_ONE}$")


class MalformedPrompt(ValueError):
    """Not a quantified reformulation prompt of the grammar this solver reads."""


@dataclass(frozen=True)
class Reading:
    """Sentences as nested tuples; ``voice`` is "active", "passive" or "mixed".

    Forms: ``("all", S, T)`` ∀x (S → T), ``("some", S, T)`` ∃x (S ∧ T), ``("is", name, T)``,
    ``("not", f)``, where a term is ``(category, positive)``.
    """

    premises: tuple
    question: tuple
    voice: str


def _sentence(s: str, voices: set[str]) -> tuple:
    if s.startswith("it is not the case that "):
        return ("not", _sentence(s[len("it is not the case that ") :], voices))
    voices.add("passive" if "classified as" in s else "active")
    m = _FACT.match(s)
    if m and m[1] not in ("everyone", "someone", "there"):
        return ("is", m[1].lower(), (m[3], m[2] is None))
    for pattern, quant, positive_subject in _FORMS:
        m = pattern.match(s)
        if not m:
            continue
        if positive_subject:
            subject, (neg, pred) = (m[1], True), (m[2], m[3])
        else:
            subject, (neg, pred) = (m[2], m[1] is None), (m[3], m[4])
        term = (pred, neg is None)
        if quant == "no":
            return ("all", subject, (pred, neg is not None))
        if quant == "not all":
            return ("not", ("all", subject, term))
        if quant == "none":
            return ("not", ("some", subject, term))
        return (quant, subject, term)
    raise MalformedPrompt(f"not a sentence: {s!r}")


def _question(q: str, voices: set[str]) -> tuple:
    m = re.match(r"^Is it NOT the case that ((?:it is NOT true that )*)(.*)\?$", q)
    if m:
        inner = _sentence(m[2].replace(" NOT ", " not "), voices)
        for _ in range(1 + m[1].count("it is NOT true that ")):
            inner = ("not", inner)
        return inner
    m = re.match(r"^Is it true that (.*)\?$", q)
    if m:
        return _sentence(m[1], voices)
    m = re.match(r"^Is (\w+) (not )?(classified as )?an? (\w+)\?$", q)
    if not m:
        raise MalformedPrompt(f"not a question: {q!r}")
    voices.add("passive" if m[3] else "active")
    return ("is", m[1].lower(), (m[4], m[2] is None))


def parse(text: str) -> Reading:
    m = re.match(
        r"^Premises: The following statements are about the members of one club\. "
        r"(.*) Question: (.*)$",
        text,
    )
    if not m:
        raise MalformedPrompt(text[:60])
    voices: set[str] = set()
    premises = tuple(
        _sentence(s[0].lower() + s[1:], voices) for s in m[1].removesuffix(".").split(". ")
    )
    question = _question(m[2], voices)
    return Reading(premises, question, voices.pop() if len(voices) == 1 else "mixed")


def _parts(f: tuple, categories: dict, people: dict) -> None:
    if f[0] == "not":
        _parts(f[1], categories, people)
    elif f[0] == "is":
        people.setdefault(f[1], len(people))
        categories.setdefault(f[2][0], len(categories))
    else:
        for term in f[1:]:
            categories.setdefault(term[0], len(categories))


def _value(f: tuple, domain: list[frozenset], who: dict) -> bool:
    def has(element: frozenset, term: tuple) -> bool:
        return (term[0] in element) == term[1]

    op = f[0]
    if op == "not":
        return not _value(f[1], domain, who)
    if op == "is":
        return has(domain[who[f[1]]], f[2])
    if op == "all":
        return all(has(x, f[2]) for x in domain if has(x, f[1]))
    return any(has(x, f[1]) and has(x, f[2]) for x in domain)


def _existential(f: tuple, negated: bool = False) -> bool:
    """Whether ``f`` needs a witness: "some" unnegated, or "all" negated."""
    if f[0] == "not":
        return _existential(f[1], not negated)
    return f[0] != "is" and (f[0] == "some") != negated


def _answers(premises: tuple, question: tuple, existential_import: bool) -> set[bool]:
    categories: dict = {}
    people: dict = {}
    for f in premises + (question,):
        _parts(f, categories, people)
    if existential_import:  # every category named is inhabited: one more existential each
        premises = premises + tuple(("some", (c, True), (c, True)) for c in categories)
    kinds = [
        frozenset(c for c, bit in zip(categories, bits) if bit)
        for bits in itertools.product((False, True), repeat=len(categories))
    ]
    extra = sum(map(_existential, premises)) + 1
    answers = set()
    for named in itertools.product(kinds, repeat=len(people)):
        for size in range(0 if people else 1, extra + 1):
            for anonymous in itertools.combinations_with_replacement(kinds, size):
                domain = list(named) + list(anonymous)
                if all(_value(f, domain, people) for f in premises):
                    answers.add(_value(question, domain, people))
    return answers


def solve(text: str, *, existential_import: bool = False) -> str:
    """The label re-derived from ``text`` (modern reading unless ``existential_import``)."""
    reading = parse(text)
    answers = _answers(reading.premises, reading.question, existential_import)
    if not answers:
        raise MalformedPrompt("premises are inconsistent")
    return "cannot be determined" if len(answers) == 2 else "yes" if answers.pop() else "no"


def equivalent(f: tuple, g: tuple) -> bool:
    """Whether two sentences hold in exactly the same models (each entails the other)."""
    return _answers((f,), g, False) == {True} and _answers((g,), f, False) == {True}
