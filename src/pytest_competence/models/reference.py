"""Built-in reference policies: deterministic behaviours that read the rendered prompt text.

Each policy models one way a system can look competent or fail to be; the project's tests show
that the suites catch every non-competent one where they should. Specs are ``ref:NAME`` with
optional ``?key=value&…`` parameters, e.g. ``ref:threshold?n=64``.

=================  ======================================================================
``ideal``          reads every premise correctly and answers by reachability: competent
                   (on Horn prompts forward chaining, on reformulations a truth table).
``always-yes``     answers "yes" to everything.
``always-no``      answers "no" to everything.
``coin``           a seeded coin per prompt text (``seed``, ``p`` = yes-rate); repeatable.
``endpoint``       the source/sink shortcut: answers from the premises incident to the two
                   queried entities only (a queried source is in front of everything);
                   right on endpoint queries, a guess ("yes") on interior ones.
``forward-reader`` reads every premise as if worded with the forward phrase, ignoring
                   converse wording and negation: right on original prompts only.
``names-order``    answers from the order of the names line: right only when that line is
                   in chain order (the App. F.3 artifact).
``noisy``          ideal, but each prompt's answer flipped with probability ``p`` (default
                   0.1), fixed by ``seed`` and the text: two seeds are two equally good
                   models, two rates a better and a worse one (for gating).
``sampled``        ideal, but every send of a prompt is a fresh draw, wrong with
                   probability ``p`` (default 0.5; ``seed``): a sampled model, whose answer
                   to the same prompt can change from one send to the next.
``threshold``      ideal on prompts with at most ``n`` people; beyond that, wrong whenever a
                   premise is worded other than with the forward phrase — correct up to a
                   size, presentation-dependent beyond it. ``rewrites=k`` (default 1): wrong
                   only when at least ``k`` premises are so worded; ``vocabularies=a,b``: wrong
                   only in those catalog vocabularies. The smallest failing case is known:
                   ``n + 1`` people (at least ``k + 1``), ``k`` rewritten premises, the first
                   listed vocabulary in catalog order.
=================  ======================================================================

Per-family policies live beside this module and are merged into :data:`POLICIES`:
``horn-goal-rule``, ``horn-if-then``, ``horn-bounded`` (``reference_horn``);
``crt-ignore-negation``, ``crt-hedge`` (``reference_crt``); ``programs-copy-nearest``
(``reference_programs``); ``raven-aligned`` (``reference_raven``); ``iw-stuck``, ``iw-jumpy``,
``iw-letter`` (``reference_iw``); ``oracle``, ``surface``, ``induction-sampled``
(``reference_induction``: they read the whole prompt, see :func:`reads_prompt`). On
rule-induction prompts (seeds/002) ``ideal`` answers as ``oracle`` does: from the generator's
interpreter, on the task regenerated from the prompt's design coordinates (the generators are
checked separately, by independent solvers in ``tests/``). Every policy can also *score*
candidates (the candidate-scoring readout): all probability on the answer it would generate.

A policy reads the prompts of the families :data:`READS` names for it (its model's
``families``; ``ideal``, the constant and the coin policies read every family's): the plugin skips
it, as n/a, on other families' suites. ``ref:shortcuts`` on ``--competence-model`` stands for
:data:`SHORTCUTS`, every family's shortcut policies.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar
from urllib.parse import parse_qsl

from pytest_competence.strategies import CATALOG, Prompt
from pytest_competence.systematicity import induction_families

from . import ModelSpecError
from .reference_crt import CRT_POLICIES, crt_ideal
from .reference_horn import HORN_POLICIES, horn_ideal
from .reference_induction import INDUCTION_POLICIES, induction_oracle
from .reference_iw import IW_POLICIES, iw_ideal, point_mass
from .reference_programs import PROGRAMS_POLICIES
from .reference_raven import RAVEN_POLICIES

__all__ = ["POLICIES", "READS", "SHORTCUTS", "OrderingText", "ReferencePolicy", "ideal_answer",
           "read_ordering", "reads_prompt", "reference_policy"]

UNREADABLE = "I cannot read this prompt."


@dataclass(frozen=True)
class OrderingText:
    """What a careful reader takes from an ordering prompt: names, facts ``x ≺ y``, the query."""

    people: int
    names: tuple[str, ...]
    facts: tuple[tuple[str, str], ...]
    literal: tuple[tuple[str, str], ...]  # every premise read as "first argument ≺ second"
    forward_only: bool  # every premise uses the forward statement of the vocabulary
    query: tuple[str, str]  # the question asks whether query[0] ≺ query[1]
    vocabulary: str = ""  # the catalog vocabulary the phrases belong to
    reworded: int = 0  # premises worded other than with the forward statement


@lru_cache(maxsize=1)
def _phrase_tables() -> list[tuple[dict[str, int], dict[tuple[str, str], int], str, str]]:
    """Per catalog vocabulary: premise middles → sign, question (head, middle) → sign."""
    tables = []
    for voc in CATALOG:
        premise: dict[str, int] = {}
        question: dict[tuple[str, str], int] = {}
        for phrase, sign in ((voc.forward, 1), (voc.converse, -1)):
            premise[_between(phrase.statement)] = sign
            premise[_between(phrase.negation)] = -sign
            head, rest = phrase.question.split("{a}")
            question[(head.strip(), rest.split("{b}")[0])] = sign
        tables.append((premise, question, _between(voc.forward.statement), voc.name))
    return tables


def _between(template: str) -> str:
    return template.split("{a}")[1].split("{b}")[0]


@lru_cache(maxsize=256)  # a zoo of policies reads each prompt in turn (audit, diagnosis)
def read_ordering(text: str) -> OrderingText | None:
    """Parse an ordering prompt (App. B.1 format) from its text alone; ``None`` if unreadable."""
    try:
        people = int(text.split("There are ", 1)[1].split(" ", 1)[0])
        names_line = text.split("Their names are [", 1)[1].split("]", 1)[0]
        names = tuple(s.strip().strip("'\"") for s in names_line.split(","))
        body = text.split("set of rules: ", 1)[1]
        q_end = body.index("?")
        q_start = body.rindex(". ", 0, q_end) + 2
        sentences = body[: q_start - 2].split(". ")
        q_words = body[q_start:q_end].split(" ")
    except (IndexError, ValueError):
        return None
    parsed = []
    for s in sentences:
        x, _, rest = s.partition(" ")
        mid, _, y = rest.rpartition(" ")
        parsed.append((x, f" {mid} ", y))
    q_key = (q_words[0], f" {' '.join(q_words[2:-1])} ")
    middles = {m for _, m, _ in parsed}
    for premise, question, forward, name in _phrase_tables():
        if q_key in question and middles <= premise.keys():
            facts = tuple((x, y) if premise[m] > 0 else (y, x) for x, m, y in parsed)
            a, b = q_words[1], q_words[-1]
            query = (a, b) if question[q_key] > 0 else (b, a)
            literal = tuple((x, y) for x, _, y in parsed)
            reworded = sum(m != forward for _, m, _ in parsed)
            return OrderingText(people, names, facts, literal, middles == {forward}, query,
                                name, reworded)
    return None


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


class ReferencePolicy:
    """A reference policy as a model: reads each prompt's text and answers it."""

    def __init__(self, name: str, answer: Callable[[Any], str],
                 families: tuple[str, ...] | None = None) -> None:
        # ``answer`` takes the prompt's text, or the whole Prompt when marked by reads_prompt().
        self.name = name
        self.spec = name  # the spec it was built from, kept when an alias renames it
        self._answer = answer
        self.families = families  # the families whose prompts it reads; None: every family's

    def generate(self, prompts: Sequence[Prompt]) -> list[str]:
        whole = getattr(self._answer, "reads_prompt", False)
        return [self._answer(p if whole else p.text) for p in prompts]

    def score(self, prompts: Sequence[Prompt],
              candidates: Sequence[str]) -> list[dict[str, float]]:
        """Candidate scores: log-probability 0 for the answer it generates, ``-inf`` elsewhere."""
        return [point_mass(a, candidates) for a in self.generate(prompts)]

    def __repr__(self) -> str:
        return f"ReferencePolicy({self.name!r})"


def _reading(rule: Callable[[OrderingText], str]) -> Callable[[str], str]:
    def answer(text: str) -> str:
        t = read_ordering(text)
        return UNREADABLE if t is None else rule(t)

    return answer


def _constant(value: str) -> Callable[..., Callable[[str], str]]:
    def make() -> Callable[[str], str]:
        return lambda text: value

    return make


def _uniform(seed: str, text: str) -> float:
    """A uniform number in [0, 1) fixed by ``seed`` and the prompt text: repeatable noise."""
    digest = hashlib.blake2b(f"{seed}:{text}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def _coin(seed: str = "0", p: str = "0.5") -> Callable[[str], str]:
    rate = _number("p", p, 0.0, 1.0)
    return lambda text: _yes(_uniform(seed, text) < rate)


def _noisy(p: str = "0.1", seed: str = "0") -> Callable[[str], str]:
    rate = _number("p", p, 0.0, 1.0)

    def answer(text: str) -> str:
        t = read_ordering(text)
        if t is None:
            return UNREADABLE
        right = _ideal(t)
        return right if _uniform(seed, text) >= rate else ("no" if right == "yes" else "yes")

    return answer


def _threshold(n: str = "", rewrites: str = "1", vocabularies: str = "") -> Callable[[str], str]:
    limit = int(_number("n", n, 2, 10**9))
    least = int(_number("rewrites", rewrites, 1, 10**9))
    names = [v.strip() for v in vocabularies.split(",") if v.strip()]
    known = {v.name for v in CATALOG}
    unknown = [v for v in names if v not in known]
    if unknown:
        raise ModelSpecError(f"Unknown vocabularies {unknown} in vocabularies={vocabularies!r}; "
                             f"expected catalog names such as 'front_behind,left_right'")
    only = set(names)

    def rule(t: OrderingText) -> str:
        right = _ideal(t)
        if t.people <= limit or t.reworded < least or (only and t.vocabulary not in only):
            return right
        return "no" if right == "yes" else "yes"

    return _reading(rule)


def _sampled(p: str = "0.5", seed: str = "0") -> Callable[[str], str]:
    rate = _number("p", p, 0.0, 1.0)
    sends: dict[str, int] = {}

    def answer(text: str) -> str:
        t = read_ordering(text)
        if t is None:
            return UNREADABLE
        right = _ideal(t)
        # A new draw on every send of the same text, as sampling at temperature > 0 gives.
        sends[text] = k = sends.get(text, 0) + 1
        wrong = "no" if right == "yes" else "yes"
        return right if _uniform(f"{seed}:{k}", text) >= rate else wrong

    return answer


def _number(key: str, value: str, lo: float, hi: float) -> float:
    try:
        x = float(value)
    except ValueError:
        raise ModelSpecError(f"Expected a number for {key}, but got {key}={value!r}") from None
    if not lo <= x <= hi:
        raise ModelSpecError(f"Expected {lo:g} <= {key} <= {hi:g}, but got {key}={value}")
    return x


_Answer = TypeVar("_Answer", bound=Callable[..., str])


def reads_prompt(answer: _Answer) -> _Answer:
    """Mark a policy's answer function as taking the whole :class:`Prompt`, not its text.

    Rule-induction policies need the prompt's design coordinates (``params``), which the text
    does not carry; :meth:`ReferencePolicy.generate` passes them the prompt itself.
    """
    answer.reads_prompt = True  # type: ignore[attr-defined]
    return answer


def _whole(factory: Callable[..., Callable[[Prompt], str]]) -> Callable[..., Callable[..., str]]:
    return lambda **params: reads_prompt(factory(**params))


#: Policy name → factory taking the spec's ``key=value`` parameters as strings. A factory makes
#: an answer function (see :class:`ReferencePolicy`) or, for a batch policy, a model.
POLICIES: dict[str, Callable[..., Any]] = {
    "ideal": lambda: _any_family(_reading(_ideal)),
    "always-yes": _constant("yes"),
    "always-no": _constant("no"),
    "coin": _coin,
    "endpoint": lambda: _reading(_endpoint),
    "forward-reader": lambda: _reading(_forward_reader),
    "names-order": lambda: _reading(_names_order),
    "threshold": _threshold,
    "noisy": _noisy,
    "sampled": _sampled,
    **HORN_POLICIES,
    **CRT_POLICIES,
    **IW_POLICIES,
    **PROGRAMS_POLICIES,
    **RAVEN_POLICIES,
    **{name: _whole(factory) for name, factory in INDUCTION_POLICIES.items()},
}


#: The families whose prompts each policy reads (its model's ``families``); a policy not listed
#: — ``ideal``, the constant and coin policies — reads every family's prompts.
READS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("endpoint", "forward-reader", "names-order", "threshold", "noisy", "sampled"),
                    ("ordering",)),
    **dict.fromkeys(HORN_POLICIES, ("horn",)),
    **dict.fromkeys(CRT_POLICIES, ("reformulations",)),
    **dict.fromkeys(IW_POLICIES, ("intervention",)),
    **dict.fromkeys(PROGRAMS_POLICIES, ("programs",)),
    **dict.fromkeys(RAVEN_POLICIES, ("raven",)),
    **dict.fromkeys(INDUCTION_POLICIES, tuple(induction_families())),
    "concepts-constant": ("concepts",),
}

#: What ``--competence-model=ref:shortcuts`` runs: each family's shortcut policies, family by
#: family. Each is skipped (``n/a``) on the suites of families whose prompts it does not read.
SHORTCUTS = (
    "ref:endpoint", "ref:forward-reader", "ref:names-order", "ref:threshold?n=64",
    "ref:horn-if-then", "ref:horn-goal-rule", "ref:horn-bounded?depth=4",
    "ref:crt-ignore-negation", "ref:crt-hedge",
    "ref:iw-stuck", "ref:iw-jumpy", "ref:iw-letter?letter=A",
    "ref:programs-copy-nearest", "ref:raven-aligned", "ref:concepts-constant", "ref:surface",
)


def _any_family(ordering: Callable[[str], str]) -> Callable[[Prompt | str], str]:
    """The ideal policy: Horn by forward chaining, reformulations by truth table, intervention
    worlds by signed forward chaining, rule induction (given the whole prompt) by the family's
    interpreter, else ordering."""

    def answer(prompt: Prompt | str) -> str:
        if isinstance(prompt, Prompt):
            found = induction_oracle(prompt)
            if found is not None:
                return found
            prompt = prompt.text
        return horn_ideal(prompt) or crt_ideal(prompt) or iw_ideal(prompt) or ordering(prompt)

    return reads_prompt(answer)


def ideal_answer(prompt: Prompt) -> str:
    """The ``ideal`` policy's answer to one prompt (the fallback of the per-family policies)."""
    return _any_family(_reading(_ideal))(prompt)


def reference_policy(rest: str, spec: str) -> ReferencePolicy:
    """Build ``ref:NAME[?key=value&…]``; unknown names and parameters list what exists."""
    name, _, query = rest.partition("?")
    factory = POLICIES.get(name)
    if name == "shortcuts":
        raise ModelSpecError(f"{spec!r} names several policies ({', '.join(SHORTCUTS)}); give it "
                             f"to --competence-model, which runs each of them")
    if factory is None:
        raise ModelSpecError(
            f"Unknown reference policy {name!r} in {spec!r}; expected one of "
            f"{', '.join(POLICIES)}"
        )
    params = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
    if name == "threshold" and "n" not in params:
        raise ModelSpecError(f"{spec!r}: the threshold policy needs its size, e.g. 'ref:threshold?n=64'")
    try:
        made = factory(**params)
        if hasattr(made, "generate"):  # a policy that reads a whole batch is a model already
            made.name = spec
        else:
            made = ReferencePolicy(spec, made)
        made.spec = spec  # kept when an alias renames it: part of its identity
        made.families = READS.get(name)
        return made
    except TypeError:
        raise ModelSpecError(
            f"{spec!r}: policy {name!r} does not take parameters {sorted(params)}"
        ) from None
