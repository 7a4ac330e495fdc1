"""Everyday wording for the reformulation family (CRTBench paper): clauses and categories of people.

:data:`LEXICON` holds transitive clauses for the propositional categories, each entry
``(agent, base verb, third person, past participle, patient)``; every noun occurs in one entry
only and is a single word after "the", so each atom of an instance is identified by its two nouns
in either voice, and no clause contains a connective ("and", "or", "not", "if").

:data:`NOUNS` holds categories for the syllogistic and quantifier categories: hobbies and trades
of the members of one club ("cyclists", "painters"), chosen so that any inclusion or exclusion
between two of them is contingently possible — world knowledge neither confirms nor contradicts
"All cyclists are painters", which keeps belief bias (an answer from plausibility, not from the
premises) out of the labels. Each is one word with a regular plural (singular + "s").
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LEXICON", "NOUNS", "Clause", "Noun"]


@dataclass(frozen=True)
class Clause:
    """One atom's wording: "the storm floods the road" / "the road is flooded by the storm"."""

    agent: str
    base: str
    third: str
    participle: str
    patient: str

    def active(self, neg: bool = False, loud: bool = False) -> str:
        if not neg:
            return f"the {self.agent} {self.third} the {self.patient}"
        return f"the {self.agent} does {'NOT' if loud else 'not'} {self.base} the {self.patient}"

    def passive(self, neg: bool = False, loud: bool = False) -> str:
        middle = f" {'NOT' if loud else 'not'}" if neg else ""
        return f"the {self.patient} is{middle} {self.participle} by the {self.agent}"

    def ask(self, passive: bool, neg: bool) -> str:
        """The direct question: "Does the storm (not) flood the road?" / "Is the road (not) …?"."""
        if passive:
            return f"Is the {self.patient}{' not' if neg else ''} {self.participle} by the {self.agent}?"
        return f"Does the {self.agent}{' not' if neg else ''} {self.base} the {self.patient}?"


LEXICON: tuple[Clause, ...] = tuple(
    Clause(*row.split())
    for row in (
        "storm flood floods flooded road",
        "sun warm warms warmed garden",
        "alarm wake wakes woken guard",
        "chef cook cooks cooked soup",
        "wind close closes closed gate",
        "teacher praise praises praised student",
        "dog chase chases chased cat",
        "gardener water waters watered rose",
        "mechanic repair repairs repaired truck",
        "baker sell sells sold bread",
        "pilot land lands landed plane",
        "nurse call calls called doctor",
        "judge fine fines fined driver",
        "painter paint paints painted fence",
        "river erode erodes eroded bank",
        "heater dry dries dried towel",
        "farmer plow plows plowed field",
        "coach train trains trained team",
        "tide fill fills filled pond",
        "clerk stamp stamps stamped letter",
        "lamp light lights lit hallway",
        "boy kick kicks kicked ball",
        "owl hunt hunts hunted mouse",
        "frost kill kills killed seedling",
        "crowd cheer cheers cheered singer",
        "editor print prints printed article",
        "beekeeper smoke smokes smoked hive",
        "sailor tie ties tied rope",
    )
)


@dataclass(frozen=True)
class Noun:
    """A category of club members: "a cyclist" / "cyclists"."""

    singular: str

    @property
    def plural(self) -> str:
        return self.singular + "s"

    @property
    def indefinite(self) -> str:
        return ("an " if self.singular[0] in "aeiou" else "a ") + self.singular


NOUNS: tuple[Noun, ...] = tuple(
    Noun(word)
    for word in (
        "cyclist painter gardener violinist swimmer poet beekeeper photographer runner dancer singer "
        "drummer knitter hiker climber sailor golfer skier archer angler astronomer potter juggler "
        "surfer rower"
    ).split()
)
