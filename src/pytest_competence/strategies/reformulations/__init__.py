"""Controlled reformulation families (CRTBench paper): one base question, logically controlled rewrites.

A latent instance is a formal problem in one of the seven categories of the CRTBench paper, Table 5: five
propositional ones — propositional logic, multi-hop inference, conditional fallacies, nested
negation, De Morgan's laws — over formulas of :mod:`._crt_logic`, rendered from everyday clauses,
and two quantified ones — syllogistic reasoning and quantifier reasoning — over monadic
statements of :mod:`._crt_quantifiers` ("All cyclists are painters", "Maya is a cyclist"),
rendered from categories of club members (:mod:`._crt_lexicon`, :mod:`._crt_qrender`). Its
presentations are the base question and the reformulations of Table 7 that apply to the
category, each a transformation of the *formal* problem whose label the solver recomputes (a
truth table, or the exact finite-domain model checker for quantified problems): contrapositive,
double negation, De Morgan, quantifier rewrite and passive voice (the surface control) preserve
the answer; negation flip and triple negation map Yes↔No, "Cannot be determined" unchanged. A
design whose recomputed label differs from the declared map is a bug and raises.

The level ``n`` is the problem's size: conditionals in the chain (multi-hop: steps beyond the
first), atoms in the negated conjunction (De Morgan), premises in the sorites chain
(syllogistic) or universal premises before the named person (quantifier, :mod:`._crt_syllogisms`).
Gold answers are balanced over the three cells yes / no / cannot be determined (instance ``i`` is
in cell ``i % 3``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from pytest_competence.protocol import AuditComponent, Family, InvalidArgument, Item, Parsed, Prompt

from .._checks import check_levels, check_pairs, check_seed
from ..names import first_names
from ._instances import (
    CATEGORIES,
    MAX_N,
    PROMPTS,
    TRANSFORMATIONS,
    ReformulationInstance,
    _build,
    _solve,
)
from ._lexicon import LEXICON, NOUNS
from ._logic import ANSWERS, Problem
from ._parse import parse_answer
from ._qrender import render_quantified
from ._quantifiers import QProblem
from ._render import render

if TYPE_CHECKING:
    from ._strategies import ReformulationStrategies

__all__ = [
    "CATEGORIES",
    "MAX_N",
    "PROMPTS",
    "TRANSFORMATIONS",
    "ReformulationInstance",
    "Reformulations",
    "catalog",
]


#: System prompts of the CRTBench paper, App. B.
class Reformulations(Family):
    """One category of controlled reformulation families (CRTBench paper).

    Args:
        category: one of :data:`CATEGORIES`.
        prompt: ``"zero_shot"`` or ``"cot"`` (the system prompts of App. B).
    """

    name = "reformulations"
    level_name = "size"
    answer_space = ANSWERS
    shortcuts = ("ref:crt-ignore-negation", "ref:crt-hedge")

    hooks = {
        "shortcut_policies": ".policies:CRT_POLICIES",
        "ideal_answer": ".policies:crt_ideal",
        "generate_options": "._generate:add_options",
        "generate_designs": "._generate:designs",
        "record_meta": "._generate:meta",
    }

    def __init__(self, *, category: str = "propositional_logic", prompt: str = "zero_shot") -> None:
        if category not in CATEGORIES:
            raise InvalidArgument(
                f"Expected category to be one of {', '.join(CATEGORIES)}, but got "
                f"category={category!r} (the seven categories of the CRTBench paper, Table 5)"
            )
        if prompt not in PROMPTS:
            raise InvalidArgument(
                f"Expected prompt='zero_shot' or 'cot', but got prompt={prompt!r}"
            )
        self.category, self.prompt_style = category, prompt

    def __repr__(self) -> str:
        return f"Reformulations(category={self.category!r}, prompt={self.prompt_style!r})"

    @property
    def presentations(self) -> tuple[str, ...]:
        """The presentations that apply to this category, the base question first."""
        return CATEGORIES[self.category][1]

    @property
    def default_presentations(self) -> tuple[str, ...]:
        """A declaration that names no presentations asks for every one that applies."""
        return self.presentations

    def instance(self, n: int, index: int, seed: int = 1) -> ReformulationInstance:
        """Instance ``index`` of level ``n``; its cell (yes / no / undetermined) is ``index % 3``."""
        self._check_n(n)
        cat = list(CATEGORIES).index(self.category)
        rng = np.random.default_rng([seed, n, index, cat])
        problem = _build(self.category, n, index % 3, rng)
        names: tuple[int, ...] = ()
        if isinstance(problem, QProblem):
            entries = tuple(rng.choice(len(NOUNS), size=problem.preds, replace=False).tolist())
            names = tuple(
                rng.choice(len(first_names()), size=problem.names, replace=False).tolist()
            )
        else:
            entries = tuple(rng.choice(len(LEXICON), size=problem.atoms, replace=False).tolist())
        order = tuple(rng.permutation(len(problem.premises)).tolist())
        return ReformulationInstance(problem, entries, order, index % 3, n, index, seed, names)

    def prompts(self, z: ReformulationInstance, presentations: Sequence[str]) -> tuple[Prompt, ...]:
        """Every presentation of ``z``, each label recomputed from its own formulas."""
        problem, cell = z.problem, z.cell
        n, index, seed = z.n, z.index, z.seed
        base = _solve(problem)
        if base != ANSWERS[cell]:
            raise AssertionError(f"cell {cell} of {self.category} solved to {base!r}")
        out = []
        for name in presentations:
            answer_map, transform, passive = TRANSFORMATIONS[name]
            changed = transform(problem)
            gold = _solve(changed)
            if gold != answer_map(base):  # the label is proved, and must match the declaration
                raise AssertionError(f"{name} on {self.category}: {gold!r} != map of {base!r}")
            out.append(
                Prompt(
                    family=self.name,
                    instance_id=f"reformulations/{self.category}/seed={seed}/n={n}/{index}",
                    presentation=name,
                    system=PROMPTS[self.prompt_style],
                    text=_render(changed, z, passive),
                    gold=gold,
                    answer_space=self.answer_space,
                    answer_map=answer_map,
                    params={
                        "n": n,
                        "category": self.category,
                        "cell": ANSWERS[cell],
                        "prompt": self.prompt_style,
                    },
                )
            )
        return tuple(out)

    def design(
        self,
        *,
        levels: Sequence[int],
        pairs: int,
        seed: int = 1,
        presentations: Sequence[str] = ("original", "double_negation"),
    ) -> list[Item]:
        """``pairs`` families per level, balanced over yes / no / cannot be determined."""
        self.check_design(levels=levels, pairs=pairs, seed=seed, presentations=presentations)
        return [self.item(n, i, seed, presentations) for n in levels for i in range(pairs)]

    def item(self, n: int, index: int, seed: int, presentations: Sequence[str]) -> Item:
        """Instance ``index`` of level ``n`` with its prompts, as :meth:`design` asks it."""
        z = self.instance(n, index, seed)
        return Item(z, self.prompts(z, presentations))

    def check_design(
        self, *, levels: object, pairs: object, seed: object, presentations: object
    ) -> None:
        """Raise :class:`InvalidArgument` naming the first argument :meth:`design` cannot use."""
        check_levels(levels, self._check_n, "a non-empty list of sizes, e.g. [1, 2, 4]")
        check_pairs(
            pairs,
            3,
            "pairs per level to be a positive multiple of 3 (yes, no and "
            "cannot be determined, balanced)",
            150,
        )
        check_seed(seed)
        allowed = self.presentations
        if (
            isinstance(presentations, (str, bytes))
            or not isinstance(presentations, Sequence)
            or (not presentations)
            or any(p not in allowed for p in presentations)
        ):
            raise InvalidArgument(
                f"Expected presentations among {', '.join(allowed)} for category="
                f"{self.category!r} (CRTBench paper, Table 7), but got presentations={presentations!r}; "
                f"try presentations={list(allowed)!r}"
            )

    def _check_n(self, n: object, name: str = "n") -> None:
        lo = CATEGORIES[self.category][0]
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not lo <= n <= MAX_N:
            raise InvalidArgument(
                f"Expected {lo} <= {name} <= {MAX_N} for category={self.category!r}, but got "
                f"{name}={n!r}"
            )

    def parse(self, text: object) -> Parsed:
        """CRTBench paper, App. B extraction; UNCLEAR is an explicit invalid answer."""
        return parse_answer(text)

    @cached_property
    def strategies(self) -> ReformulationStrategies:
        from ._strategies import ReformulationStrategies

        return ReformulationStrategies(self)

    def audit_components(
        self, levels: Sequence[int], presentations: Sequence[str]
    ) -> list[AuditComponent]:
        """The supports an audit can add: each transformation of this category the suite does
        not declare (CRTBench paper, Table 7), and a larger problem size (up to ``MAX_N``)."""
        out = [
            AuditComponent(name.replace("_", " "), "presentation", name)
            for name in self.presentations
            if name not in presentations
        ]
        larger = min(2 * max(levels), MAX_N)
        if larger > max(levels):
            out.append(AuditComponent(f"larger n (n={larger})", "level", larger))
        return out


def _render(p: Problem | QProblem, z: ReformulationInstance, passive: bool) -> str:
    if isinstance(p, QProblem):
        names = [first_names()[i] for i in z.names]
        return render_quantified(p, [NOUNS[e] for e in z.entries], names, z.order, passive)
    return render(p, [LEXICON[e] for e in z.entries], z.order, passive)


def catalog() -> list[Reformulations]:
    """One family per built category."""
    return [Reformulations(category=c) for c in CATEGORIES]
