"""Rule-induction tasks and their isomorphic variations (systematicity paper, arXiv:2609.13948, §3.3–3.6).

A task is ``T = (f, S, Q)``: a hidden rule ``f``, a support set ``S = ((x_i, f(x_i)))`` and a query
set ``Q = (x'_j)``; a learner *solves* it only if it predicts ``f(x'_j)`` for every query
(systematicity paper, arXiv:2609.13948, §3.4). An isomorphic variation applies ``τ = (π, σ, φ, ψ)`` to the *latent* task —
support and query permutations and bijections of the input and output spaces — never string
edits on the rendered prompt, so the transformed task's answers are its own interpreter's.

:class:`RuleInduction` is the engine-facing half every rule-induction family shares: the design
(one :class:`~pytest_competence.protocol.Item` per task; its prompts are the original task and, per isomorphism
type, ``K`` sampled variations named ``"TYPE:k"``), the answer format (a JSON list, one entry per
query) and its parser. A family supplies the latent half: :meth:`~RuleInduction.task` draws a
task with its interpreter's answers, :meth:`~RuleInduction.vary` applies one isomorphism type,
:meth:`~RuleInduction.render` writes the prompt and :meth:`~RuleInduction.element` reads one
answer entry back. Example reordering (``π`` and ``σ`` alone) is the same for every family and
lives here.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from pytest_competence.protocol import AuditComponent, Family, InvalidArgument, Item, Parsed, Prompt

from .._checks import (
    check_levels,
    check_pairs,
    check_presentations,
    check_seed,
)
from .._rng import stream_rng
from ._tasks import REORDER, Inductive, Task, canonical, induction_families, last_json_list

if TYPE_CHECKING:
    from ._strategies import InductionStrategies

__all__ = [
    "REORDER",
    "Inductive",
    "RuleInduction",
    "Task",
    "canonical",
    "induction_families",
    "last_json_list",
]

_STREAM = 1000  # variation streams start here, clear of the streams a family's task() draws


class RuleInduction(Family, Inductive):
    """Base of the rule-induction families of the systematicity paper, arXiv:2609.13948, §4: design, answer format, parser.

    Args:
        variations: ``K``, the isomorphic variations sampled per isomorphism type and task
            (systematicity paper, arXiv:2609.13948, §5 uses ``K = 5``).

    Subclasses set :attr:`name`, :attr:`isomorphisms` (the types besides ``"reorder"``),
    :attr:`levels` (the smallest and largest level) and :attr:`system`, and implement
    :meth:`task`, :meth:`vary`, :meth:`render` and :meth:`element`.
    """

    name: str = ""
    answer_space: tuple[str, ...] = ()  # open answers: a list, compared as a whole
    isomorphisms: tuple[str, ...] = (REORDER,)
    levels: tuple[int, int] = (1, 1)
    system: str = ""

    #: Sends per prompt when a declaration names none: systematicity paper, arXiv:2609.13948, §3.6 gives each variation
    #: N = 5 attempts and counts it passed by their strict majority.
    default_attempts = 5

    shortcuts: ClassVar[tuple[str, ...]] = ("ref:surface",)
    #: The reference policies every rule-induction family declares (reading the whole prompt).
    induction_policies: ClassVar[tuple[str, ...]] = ("oracle", "surface", "induction-sampled")

    @classmethod
    def shortcut_policies(cls) -> Mapping[str, Any]:
        """``oracle``, ``surface`` and ``induction-sampled`` (systematicity paper, arXiv:2609.13948), and the family's own."""
        from .policies import WHOLE_PROMPT_POLICIES

        return {k: WHOLE_PROMPT_POLICIES[k] for k in cls.induction_policies}

    hooks = {
        "ideal_answer": ".policies:induction_oracle",
        "metrics": ".metrics:systematicity_summary",
        "tables": ".report:systematicity_tables",
        "figures": ".report:systematicity_figures",
        "generate_options": "._generate:add_options",
        "generate_designs": "._generate:designs",
        "record_meta": "._generate:meta",
    }

    def __init__(self, *, variations: int = 5) -> None:
        if isinstance(variations, bool) or not isinstance(variations, int) or variations < 1:
            raise InvalidArgument(
                f"Expected variations to be a positive integer (isomorphic variations per type "
                f"and task), but got variations={variations!r}; the systematicity paper (arXiv:2609.13948) uses variations=5"
            )
        self.variations = variations

    # -- the latent half, per family ---------------------------------------------------------

    @abstractmethod
    def task(self, n: int, index: int, seed: int) -> Task:
        """Task ``index`` of level ``n``, with its interpreter's answers."""

    @abstractmethod
    def vary(self, task: Task, kind: str, rng: np.random.Generator) -> Task:
        """``τ(task)`` for one isomorphism type other than ``"reorder"``, answers recomputed."""

    @abstractmethod
    def render(self, task: Task) -> str:
        """The prompt text of ``task`` (the system prompt is :attr:`system`)."""

    @abstractmethod
    def element(self, value: object) -> object:
        """One parsed answer entry in canonical form; raise ``ValueError`` when it is not one."""

    def options(self) -> dict[str, Any]:
        """The constructor keywords that rebuild this family (recorded with every prompt)."""
        return {"variations": self.variations}

    # -- shared ----------------------------------------------------------------------------------

    @property
    def presentations(self) -> tuple[str, ...]:
        """The original task, then every isomorphism type (each expands to ``K`` variations)."""
        return ("original",) + self.isomorphisms

    @property
    def default_presentations(self) -> tuple[str, ...]:
        """A declaration that names no presentations asks for all of them."""
        return self.presentations

    def reorder(self, task: Task, rng: np.random.Generator) -> Task:
        """``τ = (π, σ, id, id)``: the support and the query presented in new orders."""
        pi = rng.permutation(len(task.support))
        sigma = rng.permutation(len(task.query))
        return replace(
            task,
            support=tuple(task.support[i] for i in pi),
            query=tuple(task.query[j] for j in sigma),
            answers=tuple(task.answers[j] for j in sigma),
        )

    def variation(self, task: Task, kind: str, k: int, *, n: int, index: int, seed: int) -> Task:
        """Variation ``k`` (1-based) of type ``kind`` of task ``index``: the same on every run."""
        stream = _STREAM + 100 * self.isomorphisms.index(kind) + k
        rng = stream_rng(seed, n, index, stream)
        return self.reorder(task, rng) if kind == REORDER else self.vary(task, kind, rng)

    def shown(self, *, n: int, index: int, seed: int, presentation: str) -> Task:
        """The latent task one prompt showed, rebuilt from its design coordinates (its params)."""
        task = self.task(n, index, seed)
        if presentation == "original":
            return task
        kind, _, k = presentation.partition(":")
        return self.variation(task, kind, int(k), n=n, index=index, seed=seed)

    def expand(self, presentations: Sequence[str]) -> list[tuple[str, str, int]]:
        """``(presentation name, type, k)`` for each prompt the declared presentations ask for."""
        out = []
        for name in presentations:
            if name == "original":
                out.append(("original", "original", 0))
            else:
                out.extend((f"{name}:{k}", name, k) for k in range(1, self.variations + 1))
        return out

    def prompts(
        self, task: Task, presentations: Sequence[str], *, n: int, index: int, seed: int
    ) -> tuple[Prompt, ...]:
        """The prompts of one task: each declared presentation, variations expanded."""
        out = []
        for name, kind, k in self.expand(presentations):
            shown = (
                task
                if kind == "original"
                else self.variation(task, kind, k, n=n, index=index, seed=seed)
            )
            out.append(
                Prompt(
                    family=self.name,
                    instance_id=f"{self.name}/seed={seed}/n={n}/{index}",
                    presentation=name,
                    system=self.system,
                    text=self.render(shown),
                    gold=canonical([self.element(a) for a in shown.answers]),
                    answer_space=(),
                    params={
                        "n": n,
                        "index": index,
                        "seed": seed,
                        "isomorphism": kind,
                        "variation": k,
                        "queries": len(shown.query),
                        "options": self.options(),
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
        presentations: Sequence[str] | None = None,
    ) -> list[Item]:
        """``pairs`` tasks per level, each with every declared presentation's prompts."""
        presentations = self.presentations if presentations is None else presentations
        self.check_design(levels=levels, pairs=pairs, seed=seed, presentations=presentations)
        return [self.item(n, index, seed, presentations) for n in levels for index in range(pairs)]

    def item(self, n: int, index: int, seed: int, presentations: Sequence[str]) -> Item:
        """Task ``index`` of level ``n`` with its prompts, as :meth:`design` asks it."""
        task = self.task(n, index, seed)
        return Item(task, self.prompts(task, presentations, n=n, index=index, seed=seed))

    def check_design(
        self, *, levels: object, pairs: object, seed: object, presentations: object
    ) -> None:
        """Raise :class:`InvalidArgument` naming the first argument :meth:`design` cannot use."""
        lo, hi = self.levels
        check_levels(
            levels, self.check_level, f"a non-empty list of levels in [{lo}, {hi}] for {self.name}"
        )
        check_pairs(pairs, 1, "pairs (tasks per level) to be a positive integer", 20)
        check_seed(seed)
        check_presentations(presentations, self._presentation)

    def _presentation(self, name: object) -> None:
        if name not in self.presentations:
            raise InvalidArgument(
                f"Unknown presentation {name!r} for {self.name}; expected some of "
                f"{list(self.presentations)!r} (each isomorphism type stands for its "
                f"{self.variations} variations)"
            )

    def check_level(self, n: object, name: str = "n") -> None:
        """Raise :class:`InvalidArgument` unless ``n`` is a level this family draws."""
        lo, hi = self.levels
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not lo <= n <= hi:
            raise InvalidArgument(
                f"Expected {lo} <= {name} <= {hi} for {self.name}, but got {name}={n!r}"
            )

    def parse(self, text: object) -> Parsed:
        """The last JSON list in the answer, each entry in canonical form, else *invalid*."""
        if not isinstance(text, str):
            return Parsed(None, f"model returned {type(text).__name__}, not text")
        found = last_json_list(text)
        if found is None:
            return Parsed(None, "no JSON list in answer")
        try:
            return Parsed(canonical([self.element(v) for v in found]))
        except (TypeError, ValueError) as exc:
            return Parsed(None, f"unreadable list entry: {exc}")

    @cached_property
    def strategies(self) -> InductionStrategies:  # Hypothesis is imported on use
        """Hypothesis strategies for this family's tasks and presentations."""
        from ._strategies import InductionStrategies

        return InductionStrategies(self)

    def audit_components(
        self, levels: Sequence[int], presentations: Sequence[str]
    ) -> list[AuditComponent]:
        """The supports an audit can add: each isomorphism type the suite does not declare
        (with its ``K`` variations) and the next larger level, if the family draws it."""
        out = [
            AuditComponent(f"{kind} variations", "presentation", kind)
            for kind in self.presentations
            if kind not in presentations
        ]
        larger = max(levels) + 1
        if larger <= self.levels[1]:
            out.append(AuditComponent(f"larger level (n={larger})", "level", larger))
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}(variations={self.variations})"
