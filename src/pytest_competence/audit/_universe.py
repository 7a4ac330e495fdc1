"""Any family's declared suite, widened by the family's audit components, as an audit universe.

A declared suite (levels, presentations, family options, seed) is split into components — one
per declared level (``n=8``) and one per presentation *factor* (``presentation=equivalent``; a
family's ``audit_factors(presentation)`` may split one further, e.g. ``world=…``, ``mapping=…``,
``readout=…``). The family's ``audit_components(levels, presentations)``
(:class:`~pytest_competence.strategies.AuditComponent`) widens it by a level, a presentation, or
an option value (another family configuration).

The universe's designs are the family's own (``pairs`` instances per level, the declared seed),
one per configuration, over every level it can draw and every presentation. A cell is level ×
presentation type (a rule-induction type's ``K`` variations together) × configuration × the
prompt's balanced query cell (``params["cell"]``, where a family has one); it requires its level,
presentation-factor and option components (:meth:`~._components.Components.factorial`). A
policy's response in a cell is the tuple of its *parsed* answers there (invalid: ``None``).
Policies read prompt text, so no model is called; one that reads a whole batch in order (not a
per-prompt :class:`~pytest_competence.models.reference.ReferencePolicy`) answers the declared
cells from a run of the declared design alone, as the suite would ask it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, NamedTuple

from pytest_competence.audit._components import Components
from pytest_competence.audit._core import Observations

_CHUNK = 64  # prompts per round of the zoo (below the reading caches of the reference policies)

__all__ = ["SuiteCell", "Universe", "audit_pairs", "family_variant", "family_zoo", "suite_universe"]


class SuiteCell(NamedTuple):
    """One cell of a suite's audit universe (sorts and prints stably)."""

    n: int
    presentation: str
    variant: str  # "" for the suite's own options, else the option component's options
    cell: str  # the prompt's balanced query cell (params["cell"]), "" where there is none

    def __str__(self) -> str:
        return " ".join(x for x in (f"n={self.n}", self.presentation, self.variant, self.cell) if x)


class Universe(NamedTuple):
    """Observations of a policy zoo over a widened suite, and how its components build it."""

    observations: Observations
    components: Components
    declared: tuple[str, ...]  # the suite's own components, levels first
    candidates: tuple[str, ...]  # the family's audit components, in its order
    costs: dict[Hashable, float]  # characters of prompt text in the cell (≈ 4 per token)
    prompts: int  # per policy
    solved: dict[str, float]  # policy → share of declared instances answered right throughout


def family_zoo(family: str, levels: Sequence[int]) -> dict[str, Any]:
    """The reference policies of a family as models: ``ref:ideal`` and the family's
    ``audit_policies(levels)`` (by default its shortcuts; the ideal and the constant policies
    for a family that declares none)."""
    from pytest_competence.models.reference import reference_policy
    from pytest_competence.registry import FAMILIES

    own = list(FAMILIES.hooks(family).audit_policies(levels))
    specs = ["ref:ideal", *own] if own else ["ref:ideal", "ref:always-yes", "ref:always-no"]
    return {s: reference_policy(s.removeprefix("ref:"), s) for s in specs}


def family_variant(family: Any, options: Mapping[str, Any]) -> Any:
    """``family`` with some options replaced: ``with_options`` where the family has it, else its
    class called with its current options (``options()``, else its attributes named like its
    constructor's keywords) updated by ``options``."""
    if hasattr(family, "with_options"):
        return family.with_options(**options)
    current = (
        family.options()
        if hasattr(family, "options")
        else {
            k: getattr(family, k)
            for k in inspect.signature(type(family)).parameters
            if hasattr(family, k)
        }
    )
    return type(family)(**{**current, **options})


def _drawable(family: Any, n: int, pairs: int, seed: int, presentations: Sequence[str]) -> bool:
    from pytest_competence.protocol import InvalidArgument

    try:
        family.check_design(levels=[n], pairs=pairs, seed=seed, presentations=presentations)
    except InvalidArgument:
        return False
    return True


def audit_pairs(
    family: Any,
    levels: Sequence[int],
    presentations: Sequence[str],
    seed: int,
    want: int,
    most: int,
) -> int:
    """The fewest instances per level, at least ``want`` (and at most ``most``, the suite's),
    that the family's design accepts (e.g. a multiple of its balanced cells)."""
    from pytest_competence.protocol import InvalidArgument

    for pairs in range(min(want, most), most + 1):
        try:
            family.check_design(
                levels=list(levels), pairs=pairs, seed=seed, presentations=list(presentations)
            )
        except InvalidArgument:
            continue
        return pairs
    return most


def _check_candidates(family: Any, candidates: Sequence[Any]) -> None:
    """Raise :class:`InvalidArgument` at the first candidate that is not an audit component."""
    from pytest_competence.protocol import InvalidArgument

    names: set[str] = set()
    for c in candidates:
        kind, name, value = (getattr(c, k, None) for k in ("kind", "name", "value"))
        ok = (
            isinstance(name, str)
            and name
            and name not in names
            and (
                kind == "presentation"
                and isinstance(value, str)
                or kind == "level"
                and isinstance(value, int)
                and not isinstance(value, bool)
                or kind == "option"
                and isinstance(value, Mapping)
                and bool(value)
            )
        )
        if not ok:
            raise InvalidArgument(
                f"Expected {family!r}.audit_components() to return AuditComponent(name, kind, "
                f"value) with distinct names and kind 'level' (an int), 'presentation' (a "
                f"name) or 'option' (a non-empty mapping of options), but got {c!r}"
            )
        names.add(str(name))


def _kind(prompt: Any) -> str:
    return str(prompt.presentation).partition(":")[0]  # "rebind:3" is a rebind variation


def _types(
    family: Any, level: int, pairs: int, seed: int, presentations: Sequence[str]
) -> list[str]:
    """The presentation types a list of presentations (names or patterns) asks for."""
    item = family.design(levels=[level], pairs=pairs, seed=seed, presentations=list(presentations))[
        0
    ]
    return list(dict.fromkeys(_kind(p) for p in item.prompts))


def suite_universe(
    family: Any,
    policies: Mapping[str, Any],
    *,
    levels: Sequence[int],
    presentations: Sequence[str],
    pairs: int,
    seed: int,
    candidates: Sequence[Any] | None = None,
) -> Universe:
    """Run ``policies`` (name → model) over a declared suite widened by ``candidates`` (default:
    the family's ``audit_components(levels, presentations)``); see the module docstring.

    A candidate that is not an audit component, or a presentation the design refuses, raises
    :class:`~pytest_competence.strategies.InvalidArgument` naming it.
    """
    if candidates is None:
        found = getattr(family, "audit_components", None)
        candidates = list(found(list(levels), list(presentations))) if found else []
    _check_candidates(family, candidates)
    factors = getattr(family, "audit_factors", None) or (lambda p: (f"presentation={p}",))
    declared_types = _types(family, levels[0], pairs, seed, presentations)
    bring = _bring(family, candidates, declared_types, factors, levels[0], pairs, seed)
    asked = list(
        dict.fromkeys([*presentations, *(c.value for c in candidates if c.kind == "presentation")])
    )
    level_of = {n: f"n={n}" for n in levels}
    level_of.update(
        {c.value: c.name for c in candidates if c.kind == "level" and c.value not in level_of}
    )
    variants = [(family, "", None)] + [
        (family_variant(family, c.value), " ".join(f"{k}={v}" for k, v in c.value.items()), c.name)
        for c in candidates
        if c.kind == "option"
    ]
    prompts: list[Any] = []
    cells: list[SuiteCell] = []
    parsers: list[Any] = []
    requires: dict[Hashable, frozenset[str]] = {}
    for fam, label, option in variants:
        ok = [n for n in level_of if _drawable(fam, n, pairs, seed, asked)]
        if not ok:
            continue
        for item in fam.design(levels=ok, pairs=pairs, seed=seed, presentations=asked):
            for prompt in item.prompts:
                kind = _kind(prompt)
                n = prompt.params["n"]
                cell = SuiteCell(n, kind, label, str(prompt.params.get("cell", "")))
                if cell not in requires:
                    need = {level_of[n], *(bring[f] for f in factors(kind))}
                    requires[cell] = frozenset(need | ({option} if option else set()))
                prompts.append(prompt)
                cells.append(cell)
                parsers.append(fam.parse)
    declared = _declared(levels, declared_types, factors)
    names = declared + [
        c.name for c in candidates if any(c.name in need for need in requires.values())
    ]
    return _observe(policies, prompts, cells, parsers, requires, declared, names)


def _bring(
    family: Any,
    candidates: Sequence[Any],
    declared_types: Sequence[str],
    factors: Callable[[str], Sequence[str]],
    level: int,
    pairs: int,
    seed: int,
) -> dict[str, str]:
    """Every presentation factor → the component that brings it: a declared one, or a
    candidate."""
    from pytest_competence.protocol import InvalidArgument

    bring: dict[str, str] = {f: f for t in declared_types for f in factors(t)}
    brought: list[tuple[str, list[str]]] = []
    for c in candidates:
        if c.kind == "presentation":
            try:
                types = _types(family, level, pairs, seed, [c.value])
            except InvalidArgument as exc:
                raise InvalidArgument(
                    f"{family!r}.audit_components(): component {c.name!r} "
                    f"asks presentation {c.value!r}, which the family's "
                    f"design refuses: {exc}"
                ) from None
            brought.append((c.name, [f for t in types for f in factors(t)]))
    # A candidate brings the factors all its presentations share ("*/*/score": readout=score);
    # a factor none brings that way goes to the first candidate that asks it.
    for name, found in brought:
        for f in found:
            if found.count(f) == max(found.count(g) for g in found):
                bring.setdefault(f, name)
    for name, found in brought:
        for f in found:
            bring.setdefault(f, name)
    return bring


def _declared(
    levels: Sequence[int], declared_types: Sequence[str], factors: Callable[[str], Sequence[str]]
) -> list[str]:
    """The declared suite's components: its levels, then its factors grouped by kind."""
    found = list(dict.fromkeys(f for t in declared_types for f in factors(t)))
    kinds = dict.fromkeys(f.partition("=")[0] for f in found)  # worlds, then mappings, …
    return [f"n={n}" for n in levels] + [
        f for k in kinds for f in found if f.partition("=")[0] == k
    ]


def _runs(
    needs: list[frozenset[str]], declared: list[str], names: list[str]
) -> list[tuple[list[int], list[int]]]:
    """For a policy that reads a batch in order: ``(asked, kept)`` index lists — the suite with
    one candidate added, kept on that candidate's cells, then the declared suite alone."""
    base = set(declared)
    out = []
    for name in names[len(declared) :]:
        asked = [k for k, need in enumerate(needs) if need <= base | {name}]
        out.append((asked, [k for k in asked if name in needs[k]]))
    alone = [k for k, need in enumerate(needs) if need <= base]
    return [*out, (alone, alone)]


def _observe(
    policies: Mapping[str, Any],
    prompts: list[Any],
    cells: list[SuiteCell],
    parsers: list[Any],
    requires: dict[Hashable, frozenset[str]],
    declared: list[str],
    names: list[str],
) -> Universe:
    from pytest_competence.models.reference import ReferencePolicy

    needs = [requires[c] for c in cells]
    runs = _runs(needs, declared, names)
    declared_at = runs[-1][1]
    groups: dict[Hashable, list[int]] = {}
    for k, c in enumerate(cells):
        groups.setdefault(c, []).append(k)
    order = list(groups)
    instance = [(p.instance_id, c.variant) for p, c in zip(prompts, cells)]
    responses: dict[str, list[tuple[Any, ...]]] = {}
    answers_of: dict[str, list[Any]] = {}
    raws: dict[str, list[Any]] = {name: [] for name in policies}
    for start in range(0, len(prompts), _CHUNK):  # per-prompt policies: one reading each
        chunk = prompts[start : start + _CHUNK]
        for name, model in policies.items():
            if isinstance(model, ReferencePolicy):
                raws[name] += model.generate(chunk)
    for name, model in policies.items():
        if not isinstance(model, ReferencePolicy):  # it reads the batch in order: one call,
            raws[name] = list(model.generate(prompts))  # then one per suite it would see
            for asked, kept in runs:
                again = dict(zip(asked, model.generate([prompts[k] for k in asked])))
                for k in kept:
                    raws[name][k] = again[k]
        raw = raws[name]
        if len(raw) != len(prompts):
            raise ValueError(
                f"Model {name!r} returned {len(raw)} answers for {len(prompts)} "
                f"prompts; a model answers every prompt"
            )
        parsed = [parse(a).answer for parse, a in zip(parsers, raw)]
        answers_of[name] = parsed
        responses[name] = [tuple(parsed[k] for k in groups[c]) for c in order]
    obs = Observations(order, responses)
    costs: dict[Hashable, float] = {
        c: float(sum(len(prompts[k].text) for k in groups[c])) for c in order
    }
    comps = Components.factorial({c: requires[c] for c in order}, names=names)
    return Universe(
        obs,
        comps,
        tuple(declared),
        tuple(names[len(declared) :]),
        costs,
        len(prompts),
        _solved(answers_of, instance, declared_at),
    )


def _solved(
    answers: Mapping[str, list[Any]], instance: Sequence[Hashable], declared_at: list[int]
) -> dict[str, float]:
    """Per policy, the share of the declared instances on which it answers every declared
    prompt as ``ref:ideal`` does (what a threshold on all-correct would see)."""
    ideal = answers.get("ref:ideal")
    if ideal is None or not declared_at:
        return {}
    ids = list(dict.fromkeys(instance[k] for k in declared_at))
    out = {}
    for name, mine in answers.items():
        wrong = {instance[k] for k in declared_at if mine[k] != ideal[k]}
        out[name] = 1 - len(wrong) / len(ids)
    return out
