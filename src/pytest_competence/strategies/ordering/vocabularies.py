"""The 31 relation vocabularies of the ordering catalog, in six families (CBE paper, arXiv:2610.22894, App. B.1, "Catalog").

Every vocabulary renders the same latent order: the *forward* phrase states ``a_i ≺ a_{i+1}`` as
``forward(a_i, a_{i+1})``, the *converse* phrase states the same fact with the arguments swapped,
``converse(a_{i+1}, a_i)``. The catalog order below is the paper's, so "the first vocabulary" is
``front_behind`` (the paper's ``pos`` relation).

The paper gives the full prompt only for ``pos``; the context sentence of the other vocabularies
("There are 8 people born at different times ...") is ours, written to the same pattern.

A vocabulary of one's own is a :class:`Vocabulary` of two :class:`Phrase` objects, each checked
when it is made: a premise template reads ``"{a} … {b}"`` (nothing before ``{a}`` or after
``{b}``, words between), a question holds ``{a}`` then ``{b}`` once each, and the four premise
templates differ, so that every prompt says which entity comes first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytest_competence.protocol import InvalidArgument

__all__ = ["CATALOG", "GROUPS", "Phrase", "Vocabulary", "vocabulary"]


@dataclass(frozen=True)
class Phrase:
    """One direction of a relation: a premise, its negation and a question, with ``{a}``/``{b}``.

    ``statement`` and ``negation`` read ``"{a} … {b}"``: the two names end the premise's words
    on both sides (``"{a} is in front of {b}"``, ``"{a}先于{b}"``); ``question`` holds ``{a}``
    then ``{b}``, with any words around them (``"Is {a} in front of {b}?"``). Anything else
    is an :class:`InvalidArgument` naming the template.
    """

    statement: str
    negation: str
    question: str

    def __post_init__(self) -> None:
        __tracebackhide__ = True  # a bad template is the caller's line, not this one
        for field in ("statement", "negation"):
            _check_premise(field, getattr(self, field))
        _check_question(self.question)

    def state(self, a: str, b: str) -> str:
        """The premise "a R b"."""
        return self.statement.format(a=a, b=b)

    def deny(self, a: str, b: str) -> str:
        """The negated premise "a is not R b"."""
        return self.negation.format(a=a, b=b)

    def ask(self, a: str, b: str) -> str:
        """The question "is a R b?"."""
        return self.question.format(a=a, b=b)


_EXAMPLE = {
    "statement": "{a} is in front of {b}",
    "negation": "{a} is not in front of {b}",
    "question": "Is {a} in front of {b}?",
}


def _fields(name: str, template: object) -> list[str]:
    """The replacement fields of ``template``, in order: each ``a`` or ``b``. Any other brace
    (another field, an escaped ``{{``, an unmatched one) is an :class:`InvalidArgument`."""
    __tracebackhide__ = True
    if not isinstance(template, str):
        raise InvalidArgument(
            f"Expected {name} to be a string template with {{a}} and {{b}}, but got "
            f"{name}={template!r} (type={type(template).__name__})"
        )
    if not set(template.replace("{a}", "").replace("{b}", "")).isdisjoint("{}"):
        raise InvalidArgument(
            f"Expected {name} to hold {{a}} and {{b}} and no other braces, but got "
            f"{name}={template!r}"
        )
    return re.findall(r"\{([ab])\}", template)


def _between(template: str) -> str:
    """The words between ``{a}`` and ``{b}`` of a (checked) premise template: ``" is in front of "``."""
    return template[len("{a}") : -len("{b}")]


def _check_premise(name: str, template: object) -> None:
    """A premise template reads ``"{a} … {b}"``, else :class:`InvalidArgument`."""
    __tracebackhide__ = True
    fields = _fields(name, template)
    assert isinstance(template, str)
    middle = template.removeprefix("{a}").removesuffix("{b}")
    if fields != ["a", "b"] or not template.startswith("{a}") or not template.endswith("{b}"):
        found = "holds " + (", ".join(f"{{{f}}}" for f in fields) or "neither")
        if fields == ["a", "b"]:
            found = (
                f"has {template.partition('{a}')[0]!r} before {{a}}"
                if not template.startswith("{a}")
                else f"has {template.rpartition('{b}')[2]!r} after {{b}}"
            )
        raise InvalidArgument(
            f"Expected {name} to read '{{a}} ... {{b}}' (starting with {{a}}, ending with {{b}}, "
            f"the relation's words between and no other fields), but got {name}={template!r}, "
            f"which {found}; e.g. {name}={_EXAMPLE[name]!r}"
        )
    if not middle.strip():
        raise InvalidArgument(
            f"Expected {name} to have the relation's words between {{a}} and {{b}}, but got "
            f"{name}={template!r}; e.g. {name}={_EXAMPLE[name]!r}"
        )
    _apart(name, template, (middle[0], middle[-1]))


def _apart(name: str, template: str, touching: tuple[str, ...]) -> None:
    """The characters next to ``{a}`` and ``{b}`` must set a name apart from the words: the
    names are ASCII letters, so a letter or digit there would run into them."""
    __tracebackhide__ = True
    if any(c.isascii() and c.isalnum() for c in touching):
        raise InvalidArgument(
            f"Expected {name} to set {{a}} and {{b}} apart from its words (a space or a "
            f"character other than an ASCII letter or digit next to each), but got "
            f"{name}={template!r}; e.g. {name}={_EXAMPLE[name]!r}"
        )


def _check_question(template: object) -> None:
    """A question template holds ``{a}`` then ``{b}``, else :class:`InvalidArgument`."""
    __tracebackhide__ = True
    fields = _fields("question", template)
    assert isinstance(template, str)
    head, _, rest = template.partition("{a}")
    middle, _, tail = rest.partition("{b}")
    if fields != ["a", "b"] or not middle.strip():
        shown = ", ".join(f"{{{f}}}" for f in fields) or "neither"
        if fields == ["a", "b"]:
            shown = "no words between {a} and {b}"
        raise InvalidArgument(
            f"Expected question to hold {{a}} and then {{b}}, once each, with the relation's "
            f"words between (and any words around them), but got question={template!r} "
            f"({shown}); e.g. question={_EXAMPLE['question']!r}"
        )
    _apart("question", template, (head[-1:], middle[0], middle[-1], tail[:1]))


def _be(words: str, verb: str = "is") -> Phrase:
    """A copular phrase: ``{a} is in front of {b}``."""
    return Phrase(
        f"{{a}} {verb} {words} {{b}}",
        f"{{a}} {verb} not {words} {{b}}",
        f"{verb.capitalize()} {{a}} {words} {{b}}?",
    )


def _do(past: str, base: str) -> Phrase:
    """A verbal phrase: ``{a} arrived earlier than {b}`` / ``Did {a} arrive earlier than {b}?``."""
    return Phrase(f"{{a}} {past} {{b}}", f"{{a}} did not {base} {{b}}", f"Did {{a}} {base} {{b}}?")


@dataclass(frozen=True)
class Vocabulary:
    """A named relation with its forward and converse phrases and the context that introduces it.

    ``setting`` completes "There are {n} people ..."; ``order`` names the order in "... can be
    described by the following set of rules:"; ``rule`` (nonce relations only) states the converse
    rule in the context, as the paper does for its invented words.
    """

    name: str
    group: str
    forward: Phrase
    converse: Phrase
    setting: str
    order: str
    rule: str = ""

    def __post_init__(self) -> None:
        __tracebackhide__ = True  # a bad field is the caller's line, not this one
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidArgument(
                f"Expected name to be a non-empty string (reports and parameters show it), but "
                f"got name={self.name!r}"
            )
        for field in ("group", "setting", "order", "rule"):
            value = getattr(self, field)
            if not isinstance(value, str):
                raise InvalidArgument(
                    f"Expected {field} to be a string, but got {field}={value!r} "
                    f"(type={type(value).__name__})"
                )
        for field in ("forward", "converse"):
            value = getattr(self, field)
            if not isinstance(value, Phrase):
                raise InvalidArgument(
                    f"Expected {field} to be a Phrase(statement, negation, question), but got "
                    f"{field}={value!r}"
                )
        premises = {
            "forward.statement": self.forward.statement,
            "forward.negation": self.forward.negation,
            "converse.statement": self.converse.statement,
            "converse.negation": self.converse.negation,
        }
        questions = {
            "forward.question": self.forward.question,
            "converse.question": self.converse.question,
        }
        for group in (premises, questions):
            seen: dict[str, str] = {}
            for field, template in group.items():
                if template in seen:
                    raise InvalidArgument(
                        f"Expected {seen[template]} and {field} to differ, but both are "
                        f"{template!r}: a reader could not tell from the prompt which entity "
                        f"comes first"
                    )
                seen[template] = field

    @property
    def phrases(self) -> dict[str, str]:
        """The six templates by role: what a reader needs beside a prompt's text to read it."""
        return {
            "forward": self.forward.statement,
            "converse": self.converse.statement,
            "forward_negated": self.forward.negation,
            "converse_negated": self.converse.negation,
            "forward_question": self.forward.question,
            "converse_question": self.converse.question,
        }

    @property
    def in_catalog(self) -> bool:
        """Whether this is the catalog's vocabulary of its name (every field the same)."""
        return _BY_NAME.get(self.name) == self

    def context(self, n: int, names_line: str) -> str:
        """The context sentence that opens a prompt of ``n`` entities."""
        rule = f" {self.rule}" if self.rule else ""
        return (
            f"There are {n} people {self.setting}.{rule} Their names are {names_line}. "
            f"{self.order} can be described by the following set of rules:"
        )


_LINE = ("standing in some order", "Their standing order")


def _v(
    name: str, group: str, fwd: Phrase, conv: Phrase, setting: tuple[str, str], rule: str = ""
) -> Vocabulary:
    return Vocabulary(name, group, fwd, conv, setting[0], setting[1], rule)


CATALOG: tuple[Vocabulary, ...] = (
    # spatial line
    _v("front_behind", "spatial line", _be("in front of"), _be("behind"), _LINE),
    _v("ahead_behind", "spatial line", _be("ahead of"), _be("behind"), _LINE),
    _v("left_right", "spatial line", _be("to the left of"), _be("to the right of"), _LINE),
    _v("right_left", "spatial line", _be("to the right of"), _be("to the left of"), _LINE),
    _v("behind_front", "spatial line", _be("behind"), _be("in front of"), _LINE),
    _v("before_after", "spatial line", _be("before"), _be("after"), _LINE),
    _v("north_south", "spatial line", _be("north of"), _be("south of"), _LINE),
    _v("east_west", "spatial line", _be("east of"), _be("west of"), _LINE),
    _v(
        "closer_front_back",
        "spatial line",
        _be("closer to the front than"),
        _be("closer to the back than"),
        _LINE,
    ),
    _v(
        "further_forward_back",
        "spatial line",
        _be("further forward than"),
        _be("further back than"),
        _LINE,
    ),
    # vertical
    _v(
        "above_below",
        "vertical",
        _be("above"),
        _be("below"),
        ("positioned at different heights", "Their arrangement"),
    ),
    _v(
        "higher_lower",
        "vertical",
        _be("higher up than"),
        _be("lower down than"),
        ("positioned at different heights", "Their arrangement"),
    ),
    # temporal
    _v(
        "arrived_earlier_later",
        "temporal",
        _do("arrived earlier than", "arrive earlier than"),
        _do("arrived later than", "arrive later than"),
        ("who arrived at different times", "The order in which they arrived"),
    ),
    _v(
        "born_before_after",
        "temporal",
        _be("born before", "was"),
        _be("born after", "was"),
        ("born at different times", "The order of their births"),
    ),
    _v(
        "finished_earlier_later",
        "temporal",
        _do("finished earlier than", "finish earlier than"),
        _do("finished later than", "finish later than"),
        ("who finished a race at different times", "The order in which they finished"),
    ),
    _v(
        "scheduled_before_after",
        "temporal",
        _be("scheduled before"),
        _be("scheduled after"),
        ("scheduled at different times", "Their schedule"),
    ),
    # comparative
    _v(
        "older_younger",
        "comparative",
        _be("older than"),
        _be("younger than"),
        ("of different ages", "Their ages"),
    ),
    _v(
        "taller_shorter",
        "comparative",
        _be("taller than"),
        _be("shorter than"),
        ("of different heights", "Their heights"),
    ),
    _v(
        "shorter_taller",
        "comparative",
        _be("shorter than"),
        _be("taller than"),
        ("of different heights", "Their heights"),
    ),
    _v(
        "heavier_lighter",
        "comparative",
        _be("heavier than"),
        _be("lighter than"),
        ("of different weights", "Their weights"),
    ),
    _v(
        "faster_slower",
        "comparative",
        _be("faster than"),
        _be("slower than"),
        ("who run at different speeds", "Their speeds"),
    ),
    _v(
        "stronger_weaker",
        "comparative",
        _be("stronger than"),
        _be("weaker than"),
        ("of different strengths", "Their strengths"),
    ),
    _v(
        "richer_poorer",
        "comparative",
        _be("richer than"),
        _be("poorer than"),
        ("of different wealth", "Their wealth"),
    ),
    # rank and social
    _v(
        "more_less_senior",
        "rank and social",
        _be("more senior than"),
        _be("more junior than"),
        ("of different seniority", "Their seniority"),
    ),
    _v(
        "ranked_higher_lower",
        "rank and social",
        _be("ranked higher than"),
        _be("ranked lower than"),
        ("ranked in some order", "Their ranking"),
    ),
    _v(
        "more_less_experienced",
        "rank and social",
        _be("more experienced than"),
        _be("less experienced than"),
        ("with different amounts of experience", "Their experience"),
    ),
    _v(
        "more_less_popular",
        "rank and social",
        _be("more popular than"),
        _be("less popular than"),
        ("of different popularity", "Their popularity"),
    ),
    _v(
        "paid_more_less",
        "rank and social",
        _be("paid more than"),
        _be("paid less than"),
        ("paid different amounts", "Their pay"),
    ),
    _v(
        "closer_farther_exit",
        "rank and social",
        _be("closer to the exit than"),
        _be("farther from the exit than"),
        ("at different distances from the exit", "Their distances from the exit"),
    ),
    # nonce: the converse rule is stated in the context
    _v(
        "more_less_zorbic",
        "nonce",
        _be("more zorbic than"),
        _be("less zorbic than"),
        ("who differ in how zorbic they are", "How zorbic they are"),
        rule="If one person is more zorbic than another, then the other is less zorbic than the first.",
    ),
    _v(
        "vorpward_morpward",
        "nonce",
        _be("vorpward of"),
        _be("morpward of"),
        _LINE,
        rule="If one person is vorpward of another, then the other is morpward of the first.",
    ),
)

GROUPS: tuple[str, ...] = tuple(dict.fromkeys(v.group for v in CATALOG))

_BY_NAME = {v.name: v for v in CATALOG}


def vocabulary(name: str) -> Vocabulary:
    """The catalog entry called ``name``; an unknown name is an :class:`InvalidArgument`."""
    if isinstance(name, Vocabulary):
        return name
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise InvalidArgument(
            f"Unknown vocabulary={name!r}. Expected one of the {len(CATALOG)} catalog names: "
            + ", ".join(_BY_NAME)
        ) from None
