"""Reference policies for the Horn-clause family (CBE paper, arXiv:2610.22894, App. C): they read the prompt text.

=====================  ==================================================================
``ideal``              (shared with ordering) forward chaining over every fact and rule in
                       either renderer: competent.
``horn-goal-rule``     the local shortcut: "yes" iff some rule headed by the goal has every
                       body atom stated as a fact or as some rule's head — right on
                       positives; on near misses only where no distractor rule hides the
                       cut (with any distractor rule, the cut atom heads a dead end).
``horn-if-then``       understands only "If …, then …." rules and ignores the "… holds
                       whenever …" renderer: right on the original, "no" on every
                       positive in the other renderer.
``horn-bounded``       forward chaining for at most ``depth`` rounds (default 4), then
                       "no": right while proofs are shallow, wrong on deeper positives.
=====================  ==================================================================

Every policy answers a negated query ("Is it true that g cannot be derived …?") with the
opposite of its derivability verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pytest_competence.policy import UNREADABLE, number
from pytest_competence.protocol import Prompt

__all__ = ["HORN_POLICIES", "HornText", "horn_ideal", "read_horn"]

_NEGATED = "Is it true that "
_POSITIVE = "Can "


@dataclass(frozen=True)
class HornText:
    """What a reader takes from a Horn prompt: facts, rules (head, body, renderer), the query."""

    facts: tuple[str, ...]
    rules: tuple[tuple[str, tuple[str, ...], str], ...]  # (head, body, "if" | "whenever")
    goal: str
    negated: bool


def _atoms(conjunction: str) -> tuple[str, ...]:
    head, _, last = conjunction.rpartition(" and ")
    return (
        tuple(a.strip() for a in head.split(",") if a.strip()) + (last.strip(),)
        if head
        else ((conjunction.strip(),))
    )


def read_horn(text: str) -> HornText | None:
    """Parse a Horn prompt from its text alone; ``None`` when it is not one."""
    try:
        facts_part = text.split("Facts: ", 1)[1].split(" Rules: ", 1)[0]
        rules_part = text.split(" Rules: ", 1)[1]
    except IndexError:
        return None
    # The question is the first sentence after the rules that opens as one: the instruction
    # after it is the suite's own wording, and may hold the same words.
    found = [
        (at, marker)
        for marker in (_NEGATED, _POSITIVE)
        if (at := f" {rules_part}".find(f" {marker}")) >= 0
    ]
    if not found:
        return None
    at, marker = min(found)
    negated = marker == _NEGATED
    rules_part, question = rules_part[:at].rstrip(), rules_part[at + len(marker) :]
    goal = question.split(" ", 1)[0]
    facts = tuple(s.removesuffix(" is true") for s in facts_part.rstrip(".").split(". ") if s)
    rules = []
    for sentence in rules_part.rstrip(".").split(". ") if rules_part else ():
        if sentence.startswith("If ") and ", then " in sentence:
            body, _, head = sentence[3:].rpartition(", then ")
            rules.append((head, _atoms(body), "if"))
        elif " holds whenever " in sentence:
            head, _, body = sentence.partition(" holds whenever ")
            body = body.removesuffix(" holds").removesuffix(" hold")
            rules.append((head, _atoms(body), "whenever"))
        else:
            return None
    return HornText(facts, tuple(rules), goal, negated)


def _chain(
    facts: Sequence[str],
    rules: Sequence[tuple[str, tuple[str, ...], str]],
    rounds: int | None = None,
) -> set[str]:
    """Round-by-round forward chaining, at most ``rounds`` rounds (``None``: to the fixpoint)."""
    known = set(facts)
    done = 0
    while rounds is None or done < rounds:
        new = {h for h, body, _ in rules if h not in known and all(a in known for a in body)}
        if not new:
            break
        known |= new
        done += 1
    return known


def _say(t: HornText, derivable: bool) -> str:
    return "yes" if derivable != t.negated else "no"


def _ideal(t: HornText) -> str:
    return _say(t, t.goal in _chain(t.facts, t.rules))


def _goal_rule(t: HornText) -> str:
    supported = set(t.facts) | {h for h, _, _ in t.rules}
    return _say(t, any(h == t.goal and all(a in supported for a in body) for h, body, _ in t.rules))


def _if_then(t: HornText) -> str:
    return _say(t, t.goal in _chain(t.facts, [r for r in t.rules if r[2] == "if"]))


def _reading(rule: Callable[[HornText], str]) -> Callable[[str], str]:
    def answer(text: str) -> str:
        t = read_horn(text)
        return UNREADABLE if t is None else rule(t)

    return answer


def horn_ideal(prompt: Prompt | str) -> str | None:
    """The ideal answer to a Horn prompt (or its text), or ``None`` when it is not one."""
    text = prompt if isinstance(prompt, str) else prompt.text
    t = read_horn(text)
    return None if t is None else _ideal(t)


def _bounded(depth: str = "4") -> Callable[[str], str]:
    limit = int(number("depth", depth, 0, 10**9))
    return _reading(lambda t: _say(t, t.goal in _chain(t.facts, t.rules, limit)))


#: Policy name → factory, merged into :data:`pytest_competence.models.reference.POLICIES`.
HORN_POLICIES: dict[str, Callable[..., Callable[[str], str]]] = {
    "horn-goal-rule": lambda: _reading(_goal_rule),
    "horn-if-then": lambda: _reading(_if_then),
    "horn-bounded": _bounded,
}
