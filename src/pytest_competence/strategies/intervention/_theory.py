"""Open-world theories of signed Horn rules, their three-valued oracle, and intervention clusters.

A *literal* is an atom with a sign: ``("bamoti", True)`` reads "bamoti is true",
``("bamoti", False)`` "bamoti is false". A theory is a list of fact literals and rules
``body₁ ∧ body₂ ∧ … → head`` over literals. Its consequences are the least set of literals closed
under the rules (forward chaining; a negated body literal needs its negation *derived*, never
assumed: the world is open). The oracle is three-valued: TRUE if the query atom is derived,
FALSE if its negation is, UNKNOWN otherwise. Generated theories are consistent by construction —
every derived atom has one sign wherever it heads a rule — and :func:`consequences` asserts it.

A cluster (:func:`build_cluster`) is a base theory with one *target* edit that changes the label
by a declared transition and one *sham* edit of the same kind that touches only distractors:

* the query ``q`` is supported by one proof chain ``L₀ → h₁ → … → m`` (each step may need a side
  fact) and two final rules ``m ∧ P → q^s`` and ``m ∧ ¬P → q^¬s`` around a pivot fact ``P``;
* TRUE↔FALSE: negate the pivot fact (adding or removing statements is monotone, so one of them
  cannot turn an entailed literal into its negation; negating a fact is the one-statement edit);
* TRUE/FALSE → UNKNOWN: remove a fact or a rule of the proof; UNKNOWN → TRUE/FALSE: the base
  lacks one, and the target adds it;
* distractor rules head distractor atoms only (never a proof atom, the pivot or the query), so the
  sham edit — the same kind of edit on a distractor fact or rule — cannot move the label.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..atoms import derive, pseudowords

__all__ = [
    "EDIT_KINDS",
    "LABELS",
    "TRANSITIONS",
    "Edit",
    "Lit",
    "SignedRule",
    "Theory",
    "apply_edit",
    "build_cluster",
    "consequences",
    "label",
]

#: A literal: (atom, sign); sign True reads "is true", False "is false".
Lit = tuple[str, bool]

LABELS = ("TRUE", "FALSE", "UNKNOWN")
#: The six transitions base → target; instance ``i`` of a level gets ``TRANSITIONS[i % 6]``.
TRANSITIONS: tuple[tuple[str, str], ...] = (
    ("TRUE", "FALSE"),
    ("TRUE", "UNKNOWN"),
    ("FALSE", "TRUE"),
    ("FALSE", "UNKNOWN"),
    ("UNKNOWN", "TRUE"),
    ("UNKNOWN", "FALSE"),
)
EDIT_KINDS = ("add_fact", "remove_fact", "negate_fact", "add_rule", "remove_rule")


@dataclass(frozen=True)
class SignedRule:
    """``body[0] ∧ body[1] ∧ … → head`` over signed literals."""

    body: tuple[Lit, ...]
    head: Lit


@dataclass(frozen=True)
class Theory:
    """Facts and rules in the order they are rendered."""

    facts: tuple[Lit, ...]
    rules: tuple[SignedRule, ...]


@dataclass(frozen=True)
class Edit:
    """One statement changed: ``kind`` in :data:`EDIT_KINDS`, the statement, where it goes.

    ``statement`` is the fact or rule added or removed; for ``negate_fact`` the fact before
    negation. ``position`` is the index an added statement is inserted at.
    """

    kind: str
    statement: Lit | SignedRule
    position: int = 0


def consequences(theory: Theory) -> set[Lit]:
    """Every literal the theory entails (least fixpoint); raises if it derives ``p`` and ``¬p``."""
    known = derive(theory.facts, theory.rules)  # a signed literal is an atom to chain
    clash = sorted(a for a, s in known if s and (a, False) in known)
    if clash:
        raise AssertionError(f"inconsistent theory: derives both {clash[0]} and its negation")
    return known


def label(theory: Theory, query: str) -> str:
    """TRUE if ``query`` is entailed, FALSE if its negation is, UNKNOWN otherwise."""
    known = consequences(theory)
    if (query, True) in known:
        return "TRUE"
    return "FALSE" if (query, False) in known else "UNKNOWN"


def apply_edit(theory: Theory, edit: Edit) -> Theory:
    """The theory after ``edit``; removals and negations keep every other statement in place."""
    facts, rules = list(theory.facts), list(theory.rules)
    s = edit.statement
    if edit.kind == "add_fact":
        facts.insert(edit.position, s)  # type: ignore[arg-type]
    elif edit.kind == "remove_fact":
        facts.remove(s)  # type: ignore[arg-type]
    elif edit.kind == "negate_fact":
        atom, sign = s  # type: ignore[misc]
        facts[facts.index(s)] = (atom, not sign)  # type: ignore[arg-type]
    elif edit.kind == "add_rule":
        rules.insert(edit.position, s)  # type: ignore[arg-type]
    elif edit.kind == "remove_rule":
        rules.remove(s)  # type: ignore[arg-type]
    else:
        raise ValueError(f"unknown edit kind {edit.kind!r}; expected one of {EDIT_KINDS}")
    return Theory(tuple(facts), tuple(rules))


def _neg(lit: Lit) -> Lit:
    return (lit[0], not lit[1])


def _sign(rng: np.random.Generator) -> bool:
    return bool(rng.integers(0, 2))


def _proof(
    rng: np.random.Generator, chain: list[str], side_atoms: list[str], sides: list[bool]
) -> tuple[list[Lit], list[Lit], list[SignedRule]]:
    """The proof ``L0`` (a fact) → ``h1`` → … → ``m``, step ``k`` needing a side fact where
    ``sides[k − 1]``: the chain's literals, the proof's facts and its rules."""
    lits = [(a, _sign(rng)) for a in chain]
    side_lits = iter([(a, _sign(rng)) for a in side_atoms])
    facts: list[Lit] = [lits[0]]
    rules: list[SignedRule] = []
    for k in range(1, len(chain)):
        body = [lits[k - 1]]
        if sides[k - 1]:
            side = next(side_lits)
            facts.append(side)
            body.insert(int(rng.integers(0, 2)), side)
        rules.append(SignedRule(tuple(body), lits[k]))
    return lits, facts, rules


def build_cluster(
    rng: np.random.Generator, n: int, transition: tuple[str, str]
) -> tuple[str, Theory, Edit, Edit]:
    """``(query, base, target edit, sham edit)`` with ``n`` rules in the base theory.

    All draws come from ``rng`` in a fixed order, so one seed gives one cluster everywhere.
    """
    before, after = transition
    depth = max(1, n // 4)  # proof chain: depth - 1 chain rules, then the two final rules
    sides = [bool(rng.integers(0, 2)) for _ in range(depth - 1)]
    leaves = max(3, n)  # distractor atoms that only ever appear as facts or in bodies
    derived = max(2, n // 2)  # distractor atoms that head distractor rules
    words = pseudowords(rng, 3 + depth + sum(sides) + leaves + derived)
    query, pivot, chain, words = words[0], words[1], words[2 : 2 + depth], words[2 + depth :]
    side_atoms, words = words[: sum(sides)], words[sum(sides) :]
    leaf_atoms, derived_atoms = words[:leaves], words[leaves:]

    lits, proof_facts, proof_rules = _proof(rng, chain, side_atoms, sides)
    pivot_lit: Lit = (pivot, _sign(rng))
    informed = after if before == "UNKNOWN" else before  # the label the complete proof gives
    s = informed == "TRUE"
    m = lits[-1]
    fires = SignedRule((m, pivot_lit), (query, s))
    other = SignedRule((m, _neg(pivot_lit)), (query, not s))
    complete_facts = proof_facts + [pivot_lit]
    complete_rules = proof_rules + [fires, other]

    # The target edit, on the proof; a missing statement is missing from the base.
    missing: Lit | SignedRule | None = None
    if before != "UNKNOWN" and after != "UNKNOWN":
        target_kind, target_statement = "negate_fact", pivot_lit
    else:
        as_fact = bool(rng.integers(0, 2))
        pool: list = complete_facts if as_fact else proof_rules + [fires]
        target_statement = pool[int(rng.integers(0, len(pool)))]
        if before == "UNKNOWN":
            target_kind, missing = ("add_fact" if as_fact else "add_rule"), target_statement
        else:
            target_kind = "remove_fact" if as_fact else "remove_rule"
    base_facts = [f for f in complete_facts if f != missing]
    base_rules = [r for r in complete_rules if r != missing]

    # Distractors: leaves take either sign as facts; derived atoms keep one sign as heads.
    leaf_lits = [(a, _sign(rng)) for a in leaf_atoms]
    fact_count = int(rng.integers(1, leaves))  # at least one fact, at least one leaf without
    distractor_facts = leaf_lits[:fact_count]
    heads = [(a, _sign(rng)) for a in derived_atoms]
    body_atoms = leaf_atoms + derived_atoms + chain + side_atoms
    seen = set(base_rules)

    def distractor_rule() -> SignedRule:
        while True:
            size = int(rng.integers(1, 3))
            picks = rng.choice(len(body_atoms), size=size, replace=False).tolist()
            body = tuple((body_atoms[i], _sign(rng)) for i in picks)
            rule = SignedRule(body, heads[int(rng.integers(0, len(heads)))])
            if rule not in seen and rule.head[0] not in {a for a, _ in body}:
                seen.add(rule)
                return rule

    distractor_rules = [distractor_rule() for _ in range(n - len(base_rules))]
    facts = base_facts + distractor_facts
    rules = base_rules + distractor_rules
    facts = [facts[i] for i in rng.permutation(len(facts)).tolist()]
    rules = [rules[i] for i in rng.permutation(len(rules)).tolist()]
    base = Theory(tuple(facts), tuple(rules))

    # The sham edit: the same kind of edit, on distractors only.
    pos_f, pos_r = int(rng.integers(0, len(facts) + 1)), int(rng.integers(0, len(rules) + 1))
    if target_kind in ("negate_fact", "remove_fact"):
        sham = Edit(target_kind, distractor_facts[int(rng.integers(0, fact_count))])
    elif target_kind == "add_fact":
        sham = Edit(target_kind, leaf_lits[int(rng.integers(fact_count, leaves))], pos_f)
    elif target_kind == "remove_rule":
        sham = Edit(target_kind, distractor_rules[int(rng.integers(0, len(distractor_rules)))])
    else:
        sham = Edit(target_kind, distractor_rule(), pos_r)
    target = Edit(target_kind, target_statement, pos_f if target_kind == "add_fact" else pos_r)
    return query, base, target, sham


def check_cluster(
    query: str, base: Theory, target: Theory, sham: Theory, transition: Sequence[str], where: str
) -> None:
    """Raise ``AssertionError`` unless the oracle agrees with the construction's transition."""
    got = (label(base, query), label(target, query), label(sham, query))
    want = (transition[0], transition[1], transition[0])
    if got != want:
        raise AssertionError(f"{where}: labels (base, target, sham) = {got}, expected {want}")
