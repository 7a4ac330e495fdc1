"""English for the syllogistic and quantifier categories of reformulations (CRTBench paper, App. A).

Premises are sentences from a fixed grammar over categories of club members
(:data:`._crt_lexicon.NOUNS`) and first names, after one scene sentence (:data:`SCENE`):
"All cyclists are painters.", "No poets are runners.", "Some hikers are not golfers.",
"Everyone who is not a painter is not a cyclist." (a contrapositive), "There is no poet who is
not a runner." (a quantifier rewrite), "Maya is a cyclist.". The passive-voice surface control
says "are classified as painters" for "are painters" throughout. The question, like the
propositional categories' (:mod:`._crt_render`), stacks the paper's negations: "Is Maya a
painter?", "Is Maya not a painter?", "Is it NOT the case that Maya is NOT a painter?", and for
a quantified question "Is it true that all cyclists are painters?", "Is it NOT the case that
all cyclists are painters?", "Is it NOT the case that it is NOT true that all cyclists are
painters?".
"""

from __future__ import annotations

from collections.abc import Sequence

from ._lexicon import Noun
from ._quantifiers import Is, QProblem, Statement, Term

__all__ = ["SCENE", "render_quantified"]

#: The first premise of every prompt: it places the categories in one contingent world.
SCENE = "The following statements are about the members of one club."


class _Words:
    """The nouns and names of one instance, in one voice."""

    def __init__(self, nouns: Sequence[Noun], names: Sequence[str], passive: bool) -> None:
        self.nouns, self.names, self.passive = nouns, names, passive

    def be(self, term: Term, plural: bool, loud: bool = False) -> str:
        """ "are (not) painters" / "is (not) a painter", "classified as" in the passive."""
        noun = self.nouns[term.pred]
        verb = "are" if plural else "is"
        negation = (" NOT" if loud else " not") if term.neg else ""
        passive = " classified as" if self.passive else ""
        return f"{verb}{negation}{passive} {noun.plural if plural else noun.indefinite}"

    def statement(self, s: Statement, loud: bool = False) -> str:
        """The statement as a lower-case clause without a full stop."""
        if isinstance(s, Is):
            return f"{self.names[s.name]} {self.be(s.term, False, loud)}"
        subject = self.nouns[s.subject.pred]
        if not s.neg:
            if s.subject.neg:
                who = "everyone" if s.quant == "all" else "someone"
                return f"{who} who {self.be(s.subject, False)} {self.be(s.predicate, False)}"
            if s.quant == "some":
                return f"some {subject.plural} {self.be(s.predicate, True)}"
            if s.predicate.neg:
                return f"no {subject.plural} {self.be(~s.predicate, True)}"
            return f"all {subject.plural} {self.be(s.predicate, True)}"
        if not s.subject.neg and s.quant == "all" and not s.predicate.neg:
            return f"not all {subject.plural} {self.be(s.predicate, True)}"
        if not s.subject.neg and s.quant == "some":
            return f"there is no {subject.singular} who {self.be(s.predicate, False)}"
        return f"it is not the case that {self.statement(~s)}"

    def question(self, p: QProblem) -> str:
        q, k = p.question, p.negations
        if isinstance(q, Is):
            name = self.names[q.name]
            if k < 2:
                term = ~q.term if k else q.term
                negation = " not" if term.neg else ""
                passive = " classified as" if self.passive else ""
                return f"Is {name}{negation}{passive} {self.nouns[term.pred].indefinite}?"
            inner = self.statement(~q, loud=True)
            return f"Is it NOT the case that {'it is NOT true that ' * (k - 2)}{inner}?"
        if k == 0:
            return f"Is it true that {self.statement(q)}?"
        return f"Is it NOT the case that {'it is NOT true that ' * (k - 1)}{self.statement(q)}?"


def _sentence(text: str) -> str:
    return text[0].upper() + text[1:] + "."


def render_quantified(
    p: QProblem, nouns: Sequence[Noun], names: Sequence[str], order: Sequence[int], passive: bool
) -> str:
    """The user prompt: the scene, the premises in ``order``, then the question."""
    words = _Words(nouns, names, passive)
    premises = " ".join(_sentence(words.statement(p.premises[i])) for i in order)
    return f"Premises: {SCENE} {premises} Question: {words.question(p)}"
