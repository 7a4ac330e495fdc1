"""Ask a model for whole cases in batches, each distinct prompt once, within a budget.

Minimisation asks about many small variations of one case. :class:`Asker` sends every prompt of a
step — all K+1 presentations, times the attempts — in one ``generate`` call, remembers every
answer for the rest of the run (a prompt is never sent twice, and the design's answers are
remembered before the first step), counts the calls per phase, and refuses a step that the
budget of calls or seconds no longer covers. Re-asking on purpose — to see whether a failure
reproduces — uses fresh attempt numbers, so it is a new prompt to a sampled model and to the memo.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from pytest_competence.engine.evaluate import _observe, ask_model, majority
from pytest_competence.engine.evaluation import Evaluation, InfrastructureError
from pytest_competence.models import Model
from pytest_competence.protocol import Observation, Parsed, Prompt

__all__ = ["Asker", "Budget", "Memo", "verdicts"]

#: How a prompt is remembered. The repeat control is the original prompt sent again on purpose
#: (App. H), so it is remembered apart from the original.
Key = tuple[bool, str, str, int, str]
Memo = dict[Key, tuple[str | None, Parsed]]


@dataclass(frozen=True)
class Budget:
    """The most model calls and seconds a minimisation may spend."""

    calls: float = 100
    seconds: float = 300.0

    @classmethod
    def unlimited(cls) -> Budget:
        return cls(math.inf, math.inf)


def _key(prompt: Prompt) -> Key:
    # The readout too: the same text scored and generated are two different answers.
    return (
        prompt.presentation == "repeat",
        prompt.system,
        prompt.text,
        prompt.attempt,
        prompt.readout,
    )


def verdicts(observations: Sequence[Observation]) -> tuple[tuple[str | None, bool], ...]:
    """Per presentation, the parsed answer (``None`` when invalid) and whether it is right."""
    return tuple((o.parsed.answer, o.correct) for o in observations)


class Asker:
    """Sends cases' prompts to ``model`` in batches and remembers every answer.

    Args:
        model: what answers.
        family: parses the answers (``family.parse``).
        attempts: sends per prompt; with N > 1 each observation is the strict majority of N
            (systematicity paper, arXiv:2609.13948, §3.6), exactly as the design's evaluation counts it.
        budget: calls and seconds; :meth:`ask` refuses a step the budget no longer covers.
        memo: answers shared with other askers (e.g. one per model across a test session).
    """

    def __init__(
        self,
        model: Model,
        family: object,
        *,
        attempts: int = 1,
        budget: Budget | None = None,
        memo: Memo | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.model = model
        self.family = family
        self.attempts = attempts
        self.budget = budget or Budget()
        self.memo: Memo = {} if memo is None else memo
        self.calls: Counter[str] = Counter()
        self.prompts_sent = 0
        self.refused = 0
        self.phase = "start"
        self._clock = clock
        self._started = clock()
        self._fresh = 0

    @property
    def spent(self) -> int:
        """Model calls made so far, over every phase."""
        return sum(self.calls.values())

    @property
    def seconds(self) -> float:
        return self._clock() - self._started

    def exhausted(self, reserve: int = 0) -> bool:
        """Whether one more call would overrun the budget, keeping ``reserve`` calls back."""
        return self.spent + 1 + reserve > self.budget.calls or self.seconds >= self.budget.seconds

    def remember(self, evaluation: Evaluation) -> None:
        """Take the answers of an evaluation, every attempt of it, as already asked.

        Infrastructure errors are not answers: those prompts are asked again when needed.
        """
        for _, _, row in evaluation.rows():  # regenerated chunk by chunk
            for o in row:
                if o.error is not None:
                    continue
                if o.attempts:
                    for k, (raw, parsed) in enumerate(o.attempts):
                        self.memo[_key(replace(o.prompt, attempt=k))] = (raw, parsed)
                else:
                    self.memo[_key(o.prompt)] = (o.raw, o.parsed)

    def fresh(self, times: int = 1) -> int:
        """An attempt offset for asking ``times`` more, never used before by this asker."""
        self._fresh += self.attempts
        offset = self._fresh
        self._fresh += self.attempts * (times - 1)
        return offset

    def again(self, prompts: Sequence[Prompt], times: int) -> list[tuple[Observation, ...]]:
        """``prompts`` asked ``times`` more with fresh attempts, all in one call, budget or not."""
        offset = self.fresh(times)
        groups = [
            [replace(p, attempt=p.attempt + j * self.attempts) for p in prompts]
            for j in range(times)
        ]
        got = self.ask(groups, fresh=offset, force=True)
        assert got is not None
        return got

    def ask(
        self,
        groups: Sequence[Sequence[Prompt]],
        *,
        fresh: int = 0,
        reserve: int = 0,
        force: bool = False,
    ) -> list[tuple[Observation, ...]] | None:
        """Observations for each group of prompts (a case's presentations), in one model call.

        Prompts already answered cost nothing; the rest go to the model together. Returns
        ``None`` — and sends nothing — when they would overrun the budget (minus ``reserve``
        calls), unless ``force``. ``fresh`` offsets the attempt numbers, to ask again.
        """
        sends = [
            [replace(p, attempt=p.attempt + fresh + k) for k in range(self.attempts)]
            for group in groups
            for p in group
        ]
        missing: dict[Key, Prompt] = {}
        for copies in sends:
            for q in copies:
                key = _key(q)
                if key not in self.memo and key not in missing:
                    missing[key] = q
        if missing:
            if not force and self.exhausted(reserve):
                self.refused += 1
                return None
            batch = list(missing.values())
            answers = ask_model(self.model, batch)  # one call per readout, as evaluate() does
            self.calls[self.phase] += 1
            self.prompts_sent += len(batch)
            observed = [
                _observe(self.family, q, answer)  # type: ignore[arg-type]
                for q, answer in zip(batch, answers)
            ]
            errors = [o for o in observed if o.error is not None]
            if errors:  # an outage mid-search: stop, rather than take it for wrong answers
                raise InfrastructureError.of(self.model.name, errors, len(batch))
            for key, o in zip(missing, observed):
                self.memo[key] = (o.raw, o.parsed)
        out: list[tuple[Observation, ...]] = []
        it = iter(sends)
        for group in groups:
            row = []
            for p in group:
                tries = [Observation(q, *self.memo[_key(q)]) for q in next(it)]
                row.append(tries[0] if self.attempts == 1 else majority(p, tries))
            out.append(tuple(row))
        return out
