"""Reference policies: deterministic behaviours that read the rendered prompt, as models.

Each policy models one way a system can look competent or fail to be; the project's tests show
that the suites catch every non-competent one where they should. Specs are ``ref:NAME`` with
optional ``?key=value&…`` parameters, e.g. ``ref:threshold?n=64``. Defined here:

=================  ======================================================================
``ideal``          the competent reader: each prompt answered by ``Family.ideal_answer``.
``always-yes``     answers "yes" to everything (``always-no``: "no").
``coin``           a seeded coin per prompt text (``seed``, ``p`` = yes-rate); repeatable.
``noisy``          ideal, but wrong with probability ``p`` (default 0.1), fixed by ``seed``
                   and the text: two seeds are two equally good models.
``sampled``        ideal, but every send of a prompt is a fresh draw, wrong with
                   probability ``p`` (default 0.5; ``seed``), as a sampled model.
=================  ======================================================================

Every other policy is a family's shortcut policy (``Family.shortcut_policies``), read only on
the families that declare it (:data:`READS`); ``ref:shortcuts`` stands for :data:`SHORTCUTS`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl

from pytest_competence.policy import (
    UNREADABLE,
    ModelSpecError,
    ideal_answer,
    number,
    point_mass,
    reads_prompt,
    uniform,
)
from pytest_competence.protocol import InvalidArgument, Prompt
from pytest_competence.registry import FAMILIES

__all__ = ["POLICIES", "READS", "SHORTCUTS", "ReferencePolicy", "reference_policy"]


class ReferencePolicy:
    """A reference policy as a model: reads each prompt's text and answers it.

    :meth:`reads` tells the plugin which prompts it can parse: an answer function with a
    ``reads`` attribute (prompt → bool) is asked that, any other whether it answers
    :data:`~pytest_competence.policy.UNREADABLE`.
    """

    def __init__(
        self, name: str, answer: Callable[[Any], str], families: tuple[str, ...] | None = None
    ) -> None:
        # ``answer`` takes the prompt's text, or the whole Prompt when marked by reads_prompt().
        self.name = name
        self.spec = name  # the spec it was built from, kept when an alias renames it
        self._answer = answer
        self.families = families  # the families whose prompts it reads; None: every family's

    def generate(self, prompts: Sequence[Prompt]) -> list[str]:
        """The policy's answer to each prompt."""
        whole = getattr(self._answer, "reads_prompt", False)
        return [self._answer(p if whole else p.text) for p in prompts]

    def score(self, prompts: Sequence[Prompt], candidates: Sequence[str]) -> list[dict[str, float]]:
        """Candidate scores: log-probability 0 for the answer it generates, ``-inf`` elsewhere."""
        return [point_mass(a, candidates) for a in self.generate(prompts)]

    def reads(self, prompt: Prompt) -> bool:
        """Whether the policy can read ``prompt`` (a prompt of a configuration its reader does
        not parse: no); asking changes none of its answers."""
        given = prompt if getattr(self._answer, "reads_prompt", False) else prompt.text
        check = getattr(self._answer, "reads", None)
        return bool(check(given)) if check is not None else self._answer(given) != UNREADABLE

    def __repr__(self) -> str:
        return f"ReferencePolicy({self.name!r})"


def _reads_ideal(prompt: Prompt) -> bool:
    """Whether the competent reader reads ``prompt``: what the policies built on it read."""
    return ideal_answer(prompt) != UNREADABLE


def _constant(value: str) -> Callable[..., Callable[[str], str]]:
    def make() -> Callable[[str], str]:
        return lambda text: value

    return make


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _coin(seed: str = "0", p: str = "0.5") -> Callable[[str], str]:
    rate = number("p", p, 0.0, 1.0)
    return lambda text: _yes(uniform(seed, text) < rate)


def _wrong(prompt: Prompt, right: str) -> str:
    """A wrong answer to ``prompt`` whose right answer is ``right``: the first other answer of
    its answer space, worded as ``right`` is (``Answer: X`` or bare); for open answers, none."""
    prefix = "Answer: " if "Answer: " in right else ""
    named = right.rpartition("Answer: ")[2].strip().lower()
    others = [a for a in prompt.answer_space if a.lower() != named]
    return prefix + others[0] if others else UNREADABLE


def _noisy(p: str = "0.1", seed: str = "0") -> Callable[[Prompt], str]:
    rate = number("p", p, 0.0, 1.0)

    @reads_prompt
    def answer(prompt: Prompt) -> str:
        right = ideal_answer(prompt)
        if right == UNREADABLE or uniform(seed, prompt.text) >= rate:
            return right
        return _wrong(prompt, right)

    # Its wrong answer to an open-answer prompt is UNREADABLE: ask the reading, not the answer.
    answer.reads = _reads_ideal  # type: ignore[attr-defined]
    return answer


def _sampled(p: str = "0.5", seed: str = "0") -> Callable[[Prompt], str]:
    rate = number("p", p, 0.0, 1.0)
    sends: dict[str, int] = {}

    @reads_prompt
    def answer(prompt: Prompt) -> str:
        right = ideal_answer(prompt)
        if right == UNREADABLE:
            return right
        # A new draw on every send of the same text, as sampling at temperature > 0 gives.
        sends[prompt.text] = k = sends.get(prompt.text, 0) + 1
        return right if uniform(f"{seed}:{k}", prompt.text) >= rate else _wrong(prompt, right)

    # Asking the answer would count a send and change the next one: ask the reading.
    answer.reads = _reads_ideal  # type: ignore[attr-defined]
    return answer


def _generic() -> dict[str, Callable[..., Any]]:
    return {
        "ideal": lambda: reads_prompt(ideal_answer),
        "always-yes": _constant("yes"),
        "always-no": _constant("no"),
        "coin": _coin,
        "noisy": _noisy,
        "sampled": _sampled,
    }


def _declared() -> tuple[dict[str, Callable[..., Any]], dict[str, tuple[str, ...]]]:
    """Every family's shortcut policies, and the families that declare each."""
    generic = _generic()
    factories: dict[str, Callable[..., Any]] = {}
    reads: dict[str, list[str]] = {}
    for family in FAMILIES:
        for name, factory in FAMILIES.hooks(family).shortcut_policies().items():
            if (
                name in generic
                or name == "shortcuts"
                or (name in factories and factories[name] is not factory)
            ):
                first = (
                    "the family-independent policies"
                    if name in generic or (name == "shortcuts")
                    else f"family {reads[name][0]!r}"
                )
                raise InvalidArgument(
                    f"Family {family!r} declares the reference policy {name!r}, which "
                    f"{first} already define; give the policy a name of its own, e.g. "
                    f"'{family}-{name}'"
                )
            factories[name] = factory
            reads.setdefault(name, []).append(family)
    return factories, {name: tuple(f) for name, f in reads.items()}


class _Live(Mapping[str, Any]):
    """A mapping recomputed from the registered families on every use (families can be
    registered, or entry points installed, after this module is imported)."""

    def __init__(self, build: Callable[[], Mapping[str, Any]]) -> None:
        self._build = build

    def __getitem__(self, key: str) -> Any:
        return self._build()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._build())

    def __len__(self) -> int:
        return len(self._build())


class _Shortcuts(Sequence[str]):
    """Every family's ``shortcuts`` specs, family by family, each once: a spec that several
    families list (a shared policy) comes where the last of them lists it."""

    def _specs(self) -> tuple[str, ...]:
        specs: dict[str, None] = {}
        for family in FAMILIES:
            for spec in FAMILIES.hooks(family).shortcuts:
                specs.pop(spec, None)
                specs[spec] = None
        return tuple(specs)

    def __getitem__(self, index: Any) -> Any:
        return self._specs()[index]

    def __len__(self) -> int:
        return len(self._specs())

    def __repr__(self) -> str:
        return repr(self._specs())


#: Policy name → factory taking the spec's ``key=value`` parameters as strings. A factory makes
#: an answer function (see :class:`ReferencePolicy`) or, for a batch policy, a model.
POLICIES: Mapping[str, Callable[..., Any]] = _Live(lambda: {**_generic(), **_declared()[0]})

#: The families whose prompts each policy reads (its model's ``families``); a policy not listed
#: — the family-independent ones — reads every family's prompts.
READS: Mapping[str, tuple[str, ...]] = _Live(lambda: _declared()[1])

#: What ``--competence-model=ref:shortcuts`` runs: each family's shortcut policies, family by
#: family. Each is skipped (``n/a``) on the suites of families whose prompts it does not read.
SHORTCUTS: Sequence[str] = _Shortcuts()


def reference_policy(rest: str, spec: str) -> ReferencePolicy:
    """Build ``ref:NAME[?key=value&…]``; unknown names and parameters list what exists."""
    name, _, query = rest.partition("?")
    if name == "shortcuts":
        raise ModelSpecError(
            f"{spec!r} names several policies ({', '.join(SHORTCUTS)}); give it "
            f"to --competence-model, which runs each of them"
        )
    generic = _generic()
    factories, reads = ({}, {}) if name in generic else _declared()
    factory = generic.get(name) or factories.get(name)
    if factory is None:
        from ._suggest import near

        close = near(name, POLICIES)
        scheme = spec.partition(":")[0]
        meant = (
            f" (did you mean '{scheme}:{close}{'?' + query if query else ''}'?)" if close else ""
        )
        raise ModelSpecError(
            f"Unknown reference policy {name!r} in {spec!r}{meant}; expected one of "
            f"{', '.join(POLICIES)}"
        )
    params = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
    try:
        made = factory(**params)
        if hasattr(made, "generate"):  # a policy that reads a whole batch is a model already
            made.name = spec
        else:
            made = ReferencePolicy(spec, made)
        made.spec = spec  # kept when an alias renames it: part of its identity
        made.families = reads.get(name)
        return made
    except TypeError:
        raise _unknown_parameters(spec, name, factory, params) from None


def _unknown_parameters(
    spec: str, name: str, factory: Callable[..., Any], given: Mapping[str, str]
) -> ModelSpecError:
    """``factory`` refused ``given``: the parameters it does take, and the nearest."""
    import inspect

    from ._suggest import did_you_mean, near

    takes = [p for p in inspect.signature(factory).parameters if p not in ("args", "kwargs")]
    wrong = sorted(k for k in given if k not in takes) or sorted(given)
    close = near(wrong[0], takes) if takes else None
    return ModelSpecError(
        f"{spec!r}: policy {name!r} does not take parameters {wrong}{did_you_mean(close)}; "
        + (f"it takes {', '.join(takes)}" if takes else "it takes none")
    )
