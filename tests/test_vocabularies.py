"""A vocabulary of one's own: checked when it is made.

A :class:`Phrase` or :class:`Vocabulary` whose templates cannot render a readable prompt is
refused at construction, naming the template and what it must look like.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from pytest_competence.protocol import InvalidArgument
from pytest_competence.strategies import Phrase, Vocabulary

# -- checked when made -----------------------------------------------------------------------------

GOOD = ("{a} is before {b}", "{a} is not before {b}", "Is {a} before {b}?")


@pytest.mark.parametrize(
    ("templates", "expected"),
    [
        (
            ("{a}在{b}前面", "{a}不在{b}前面", "{a}在{b}前面吗？"),
            "Expected statement to read '{a} ... {b}' (starting with {a}, ending with {b}, the "
            "relation's words between and no other fields), but got statement='{a}在{b}前面', "
            "which has '前面' after {b}; e.g. statement='{a} is in front of {b}'",
        ),
        (
            ("{a} is before {b}", "Not: {a} before {b}", GOOD[2]),
            "but got negation='Not: {a} before {b}', which has 'Not: ' before {a}",
        ),
        (("{b} is after {a}", *GOOD[1:]), "statement='{b} is after {a}', which holds {b}, {a}"),
        (("{a} is before", *GOOD[1:]), "statement='{a} is before', which holds {a};"),
        (("{a} is {c} {b}", *GOOD[1:]), "hold {a} and {b} and no other braces"),
        (("{a} is {{not}} {b}", *GOOD[1:]), "hold {a} and {b} and no other braces"),
        (("{a} is before {b", *GOOD[1:]), "hold {a} and {b} and no other braces"),
        (("{a} {b}", *GOOD[1:]), "Expected statement to have the relation's words between"),
        (("{a}is before {b}", *GOOD[1:]), "Expected statement to set {a} and {b} apart"),
        ((*GOOD[:2], "Is {b} before {a}?"), "question='Is {b} before {a}?' ({b}, {a})"),
        ((*GOOD[:2], "Is {a} before?"), "question='Is {a} before?' ({a})"),
        ((*GOOD[:2], "{a}{b}?"), "(no words between {a} and {b})"),
        ((*GOOD[:2], "Is {a} before {b}s?"), "Expected question to set {a} and {b} apart"),
        ((*GOOD[:2], 3), "Expected question to be a string template with {a} and {b}, but got "),
    ],
    ids=[
        "after-b",
        "before-a",
        "b-first",
        "no-b",
        "other-field",
        "escaped-brace",
        "unmatched-brace",
        "no-words",
        "touching-name",
        "question-b-first",
        "question-no-b",
        "question-no-words",
        "question-touching-name",
        "not-a-string",
    ],
)
def test_a_phrase_template_is_checked_when_made(templates, expected):
    with pytest.raises(InvalidArgument) as raised:
        Phrase(*templates)
    assert expected in str(raised.value)


def test_a_vocabulary_is_checked_when_made():
    good = Phrase(*GOOD)
    converse = Phrase("{a} is after {b}", "{a} is not after {b}", "Is {a} after {b}?")
    with pytest.raises(InvalidArgument, match=r"forward.statement and converse.statement to diff"):
        Vocabulary("same", "custom", good, good, "in a row", "Their order")
    with pytest.raises(InvalidArgument, match=r"forward.question and converse.question to differ"):
        Vocabulary("q", "custom", good, replace(converse, question=GOOD[2]), "in a row", "Order")
    with pytest.raises(InvalidArgument, match=r"Expected name to be a non-empty string"):
        Vocabulary("", "custom", good, converse, "in a row", "Their order")
    with pytest.raises(InvalidArgument, match=r"Expected converse to be a Phrase"):
        Vocabulary("x", "custom", good, "is after", "in a row", "Their order")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match=r"Expected setting to be a string"):
        Vocabulary("x", "custom", good, converse, None, "Their order")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match=r"statement to read"):  # replace() checks too
        replace(good, statement="{a}在{b}前面")
