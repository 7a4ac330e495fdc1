"""The errors an evaluation ends in when prompts got no answer where one was needed.

An infrastructure error — a server down, a timeout, a response that cannot be read, a model
that raised — is never a wrong answer: the test errors, nothing is minimised or saved as a
regression case. :class:`NotInCacheError` is the one kind a run asks for: under
``--competence-cache=read`` the cache alone answers, and a prompt it lacks was never sent.
Both are importable from :mod:`pytest_competence.engine.evaluation`, where they are documented.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pytest_competence.protocol import Observation

__all__ = ["InfrastructureError", "NotInCacheError"]


class InfrastructureError(RuntimeError):
    """Prompts that ended in infrastructure errors where an answer was needed.

    ``reasons`` counts the errors by reason; ``first`` is the first of them, in design order.
    """

    def __init__(self, model: str, reasons: Counter[str], total: int, first: str) -> None:
        self.model, self.count, self.total = model, sum(reasons.values()), total
        self.reasons = reasons
        super().__init__(
            f"infrastructure errors from model {model!r}: {self.count} of {total} "
            f"prompts got no answer (first: {first})"
        )

    @classmethod
    def of(cls, model: str, errors: Sequence[Observation], total: int) -> InfrastructureError:
        """The error of the errored observations ``errors`` (of ``total`` prompts)."""
        return cls.counted(
            model,
            Counter(o.error for o in errors if o.error is not None),
            total,
            next((o.error for o in errors if o.error is not None), "none"),
        )

    @classmethod
    def counted(
        cls, model: str, reasons: Counter[str], total: int, first: str
    ) -> InfrastructureError:
        """The error of ``reasons``: a :class:`NotInCacheError` when the response cache alone
        was asked and lacked every one of them."""
        from pytest_competence.engine.cache import NOT_IN_CACHE

        kind = NotInCacheError if set(reasons) == {NOT_IN_CACHE} else InfrastructureError
        return kind(model, reasons, total, first)


class NotInCacheError(InfrastructureError):
    """Prompts the response cache holds no answer for, under ``--competence-cache=read``, which
    asks the cache only: nothing was sent. The message gives the count and how to fill the
    cache."""

    def __init__(self, model: str, reasons: Counter[str], total: int, first: str) -> None:
        super().__init__(model, reasons, total, first)
        self.args = (
            f"{self.count} of {total} prompts of model {model!r} are not in the response cache, "
            f"and --competence-cache=read asks the cache only (nothing was sent): export them "
            f"with the same pytest command and --competence-batch-export=requests.jsonl, run "
            f"the batch and 'competence batch import' its results, or run with "
            f"--competence-cache=rw to ask the model",
        )

    def chosen_as_it_goes(self, what: str, fix: str) -> str:
        """The message when the prompts were chosen as the run went — by minimisation, or the
        cases saved by earlier runs — so that no batch export (which holds the design's
        prompts) can answer them: ``what`` asked them, and ``fix`` is what to do instead."""
        return (
            f"{self.count} of {self.total} prompts {what} asked of model {self.model!r} are not "
            f"in the response cache, and --competence-cache=read asks the cache only (nothing "
            f"was sent); a batch export holds only the design's prompts, not these: {fix}"
        )
