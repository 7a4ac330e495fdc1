"""Horn programs: latent instances, pseudoword atoms and the exact oracle (CBE paper, arXiv:2610.22894, App. C.1).

A *positive* program derives its goal through a proof chain of ``depth`` rules
``h_k ← h_{k-1} ∧ s_k…`` (``h_0`` and every side atom ``s_k`` are facts, ``h_depth`` is the goal).
A *negative* program is the same construction with the derivation severed at exactly one body
atom of one proof rule — a missing fact, or a chain rule whose head was renamed away — so a rule
headed by the goal is always kept: the near miss of App. C.1. Where there are distractor rules,
the cut atom then heads the dead-end distractor (whose body needs an atom nothing supports), so
the near miss leaves no atom without a rule or a fact: the same dangling pieces as a positive.

Distractor rules head only distractor atoms, never a proof atom or the goal, so they can neither
repair a severed chain nor shorten a proof: the proof depth is exactly ``depth`` and the gold answer
holds by construction. The oracle below recomputes it by forward chaining anyway, and
:func:`derive` is what the design checks every instance against.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .._rng import stream_rng
from ..atoms import derive, pseudowords

__all__ = ["HornInstance", "Rule", "build_program", "draw_program"]

# One random stream per kind of choice: the program, its order, the reshuffle, the renaming.
_PROGRAM, _ORDER, _SHUFFLED, _RENAMED = range(4)


@dataclass(frozen=True)
class Rule:
    """``head ← body[0] ∧ body[1] ∧ …``: the head holds whenever every body atom holds."""

    head: str
    body: tuple[str, ...]


@dataclass(frozen=True)
class HornInstance:
    """A latent instance ``z``: facts, rules in their fixed order, the goal and its oracle answer.

    ``depth`` is the proof depth of the (possibly severed) chain; ``severed`` is ``None`` for a
    positive program, else the index ``k`` (1-based, from the facts) of the proof rule whose body
    lost its support. ``n`` is the level: rules, proof depth or distractor rules, by ``vary``.
    """

    n: int
    index: int
    seed: int
    facts: tuple[str, ...]
    rules: tuple[Rule, ...]
    goal: str
    depth: int
    distractors: int
    severed: int | None = None

    @cached_property
    def gold(self) -> str:
        """The exact oracle answer ``y*(z)``: is the goal derivable by forward chaining?"""
        return "yes" if self.goal in derive(self.facts, self.rules) else "no"

    @property
    def id(self) -> str:
        return f"horn/seed={self.seed}/n={self.n}/{self.index}"

    @property
    def atoms(self) -> tuple[str, ...]:
        """Every atom, in first-mention order (facts, then rules body-first)."""
        seen = dict.fromkeys(self.facts)
        for rule in self.rules:
            seen.update(dict.fromkeys(rule.body))
            seen[rule.head] = None
        seen[self.goal] = None
        return tuple(seen)


def build_program(
    rng: np.random.Generator, *, depth: int, distractors: int, positive: bool
) -> tuple[list[str], list[Rule], str, int | None]:
    """Facts, rules (proof chain first, then distractors), goal and the severed rule index.

    All draws come from ``rng`` in a fixed order, so one seed gives one program everywhere.
    """
    side_counts = rng.integers(0, 3, size=depth).tolist()  # 0–2 side facts per proof rule
    n_unsupported = max(1, distractors // 4)
    n_distractor_atoms = distractors + n_unsupported + 2
    words = pseudowords(rng, depth + 1 + sum(side_counts) + n_distractor_atoms + 3)
    chain, words = words[: depth + 1], words[depth + 1 :]
    sides = []
    for count in side_counts:
        sides.append(words[:count])
        words = words[count:]
    # spare[0]: an idle fact every program states; spare[1]: the fresh head a severed chain rule
    # derives instead; spare[2]: the idle head of the first distractor rule.
    spare, words = words[:3], words[3:]
    unsupported, pool = words[:n_unsupported], words[n_unsupported:]
    goal = chain[-1]

    facts = [chain[0]] + [s for group in sides for s in group] + [spare[0]]
    proof: list[Rule] = []
    keys = rng.random((depth, 3)).tolist()  # one draw orders every proof body (at most 3 atoms)
    for k in range(1, depth + 1):
        body = [chain[k - 1]] + sides[k - 1]
        order = sorted(range(len(body)), key=keys[k - 1].__getitem__)
        proof.append(Rule(chain[k], tuple(body[i] for i in order)))

    # Distractor rules: bodies over distractor atoms and proof atoms (so a proof atom may feed a
    # dead end), heads over distractor atoms only; some distractor atoms are facts, the
    # ``unsupported`` ones never are and never head a rule. The first is a dead end with an idle
    # head, so a positive program shows the same dangling pieces a near miss does (an idle fact,
    # an idle head, a body atom nothing supports); with two or more, a coin makes the second a
    # decoy rule headed by the goal whose body needs an unsupported atom.
    n_facts = distractors // 3
    facts += pool[:n_facts]
    proof_atoms = chain[:-1] + [s for group in sides for s in group]
    body_pool = pool + unsupported + proof_atoms
    rules_out = list(proof)
    decoy = distractors >= 2 and bool(rng.integers(0, 2))
    dead = unsupported[0]
    # One vectorised draw for every distractor rule: body size, body atoms, head.
    sizes = rng.integers(1, 4, size=distractors).tolist()
    bodies = rng.integers(0, len(body_pool), size=(distractors, 3)).tolist()
    heads = rng.integers(min(n_facts, len(pool) - 1), len(pool), size=distractors).tolist()
    for j in range(distractors):
        picked = [body_pool[i] for i in bodies[j][: sizes[j]]]
        if j == 0:
            picked[0] = dead
            rules_out.append(Rule(spare[2], tuple(dict.fromkeys(picked))))
            continue
        if decoy and j == 1:
            picked[0] = unsupported[bodies[j][0] % len(unsupported)]
            rules_out.append(Rule(goal, tuple(dict.fromkeys(picked))))
            continue
        head = pool[heads[j]]
        body = [a for a in dict.fromkeys(picked) if a != head] or [unsupported[0]]
        rules_out.append(Rule(head, tuple(body)))

    severed: int | None = None
    if not positive:
        severed = int(rng.integers(1, depth + 1))
        rule = proof[severed - 1]
        cut = rule.body[int(rng.integers(0, len(rule.body)))]
        if cut in facts:
            facts.remove(cut)  # a missing fact
        else:
            # The chain atom h_{k-1} is no longer that rule's head: it derives another atom (the
            # dead end's idle head, when there is a dead end to take its place).
            prev = proof[severed - 2]
            rules_out[severed - 2] = Rule(spare[2] if distractors else spare[1], prev.body)
        if distractors:
            # The dead end now heads the cut atom, so it is "supported" by a rule that needs an
            # unsupported atom — as in a positive program, no body atom is left without any rule
            # or fact; only chaining tells the two apart.
            rules_out[depth] = Rule(cut, rules_out[depth].body)
    return facts, rules_out, goal, severed


def draw_program(n: int, index: int, seed: int, *, depth: int, distractors: int) -> HornInstance:
    """Instance ``index`` of level ``n`` (arguments already checked): positive (gold yes) when
    ``index`` is even, its facts and rules in a drawn order, checked against :func:`derive`."""
    facts, rules, goal, severed = build_program(
        stream_rng(seed, n, index, _PROGRAM),
        depth=depth,
        distractors=distractors,
        positive=index % 2 == 0,
    )
    order = stream_rng(seed, n, index, _ORDER)
    facts = [facts[i] for i in order.permutation(len(facts)).tolist()]
    rules = [rules[i] for i in order.permutation(len(rules)).tolist()]
    z = HornInstance(
        n=n,
        index=index,
        seed=seed,
        facts=tuple(facts),
        rules=tuple(rules),
        goal=goal,
        depth=depth,
        distractors=distractors,
        severed=severed,
    )
    if (z.gold == "yes") != (severed is None):  # the oracle must agree with the construction
        raise AssertionError(f"{z.id}: construction and forward chaining disagree")
    return z
