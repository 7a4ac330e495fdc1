"""An evaluation: one design under one model, kept as compact arrays rather than objects.

A design of a million prompts cannot keep a million
:class:`~pytest_competence.protocol.Observation` objects (each holds its
prompt, up to 9 KB of text). :class:`Reduction` takes the observations chunk by chunk and keeps,
per instance, its level and id and, per instance × presentation, the bits the figures need
(correct, valid, infrastructure error) and the parsed answer, the gold answer, the raw answer
and the invalidity reason as small integer codes into interned tables of strings — and, when
answers come from candidate scoring, every candidate's score as float32 (instance ×
presentation × answer), which the output decomposition reads. The raw
answers and reasons are interned only while their tables are small (an instant or a constrained
model answers with a handful of strings; a chatty model with a new string per prompt, which the
records file keeps whole): past that, a code says "not kept".

:class:`Evaluation` reads those arrays back; :meth:`Evaluation.rows` rebuilds whole rows by
regenerating the design chunk by chunk beside them (the family analyses, minimisation and the
diagnosis read prompts and parameters), and keeps a few whole rows as they were observed — the
first failing instance of each level, which a failing case shows with its raw answers.
An evaluation built in memory (:func:`~.evaluate.evaluate`) keeps every string, so its rows
come back exactly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from pytest_competence.engine._infrastructure import InfrastructureError, NotInCacheError
from pytest_competence.engine._reduced import (
    NONE,
    Interned,
    Reduced,
    RowSource,
    ScoreTable,
    cell_scores,
)
from pytest_competence.protocol import FamilyLike, Item, Observation, Parsed

__all__ = ["Evaluation", "InfrastructureError", "NotInCacheError", "Reduction"]

_RAW_LIMIT = 4096  # distinct raw answers (and reasons) interned before they are dropped
_RAW_LENGTH = 512  # longer raw answers are never interned


class Reduction:
    """Observations reduced chunk by chunk into the arrays of an :class:`Evaluation`.

    ``presentations`` name the columns (empty: those of the first row); ``attempts`` is the
    sends per prompt. ``bounded`` interns raw answers and reasons only while their tables are
    small (a run's evaluation, whose records file keeps them whole); else every one is kept, and
    rebuilt rows are exact. Call :meth:`add` per chunk, then :meth:`finish`.
    """

    def __init__(
        self,
        model: str,
        family: FamilyLike,
        presentations: Sequence[str],
        attempts: int = 1,
        *,
        bounded: bool = False,
    ) -> None:
        self.model, self.family = model, family
        self.presentations = tuple(presentations)
        self.attempts = attempts
        self.answers = Interned()
        limits = (_RAW_LIMIT, _RAW_LENGTH) if bounded else (None, None)
        self.raws = Interned(*limits)
        self.reasons = Interned(*limits)
        self.ids: list[str] = []
        self.errors: Counter[str] = Counter()
        self.first_error: str | None = None
        self.kept: dict[int, tuple[Observation, ...]] = {}
        self._failing_levels: set[int] = set()
        self._tried = 0  # the most attempts any observation recorded
        self.binary = True  # the first prompt's answer space has two answers (κ is defined)
        # Prompts sent more than once that came back every time (compared), and of those, the
        # ones whose raw answers differ between sends (varied): a sampling model varies.
        self.compared = self.varied = 0
        self._parts: dict[str, list[np.ndarray]] = {k: [] for k in _ARRAYS}
        self.scores = ScoreTable()

    def add(self, items: Sequence[Item], rows: Sequence[Sequence[Observation]]) -> None:
        """Reduce one chunk: ``rows[i]`` are the observations of ``items[i]``, one per column."""
        if not items:
            return
        width = len(rows[0])
        if not self.ids:
            self.binary = len(items[0].prompts[0].answer_space) == 2
            self.scores.answers = tuple(items[0].prompts[0].answer_space)
        if not self.presentations:
            self.presentations = tuple(o.prompt.presentation for o in rows[0])
        flat = [o for row in rows for o in row]
        shape = (len(rows), width)
        base = len(self.ids)
        parts = self._parts
        parts["level"].append(np.array([item.params.get("n", 0) for item in items], dtype=np.int64))
        parts["correct"].append(np.fromiter((o.correct for o in flat), bool).reshape(shape))
        parts["valid"].append(np.fromiter((o.valid for o in flat), bool).reshape(shape))
        parts["errored"].append(
            np.fromiter((o.error is not None for o in flat), bool).reshape(shape)
        )
        parts["answer"].append(self.answers.codes(o.parsed.answer for o in flat).reshape(shape))
        parts["gold"].append(self.answers.codes(o.prompt.gold for o in flat).reshape(shape))
        parts["raw"].append(self.raws.codes(o.raw for o in flat).reshape(shape))
        parts["reason"].append(self.reasons.codes(o.parsed.reason for o in flat).reshape(shape))
        tried = max((len(o.attempts) for o in flat), default=0)
        self._tried = max(self._tried, tried)
        parts["ntries"].append(
            np.fromiter((len(o.attempts) for o in flat), np.int16).reshape(shape)
        )
        full = [o.attempts + ((None, Parsed(None)),) * (tried - len(o.attempts)) for o in flat]
        tries = (len(rows), width, tried)
        parts["tries"].append(
            self.answers.codes(p.answer for a in full for _, p in a).reshape(tries)
        )
        parts["tries_raw"].append(self.raws.codes(r for a in full for r, _ in a).reshape(tries))
        parts["tries_reason"].append(
            self.reasons.codes(p.reason for a in full for _, p in a).reshape(tries)
        )
        self.scores.add(flat, shape)
        self.ids.extend(item.id for item in items)
        for o in flat:
            raws = {raw for raw, _ in o.attempts}
            if len(o.attempts) > 1 and None not in raws:
                self.compared += 1
                self.varied += len(raws) > 1
            if o.error is not None:
                self.errors[o.error] += 1
                if self.first_error is None:
                    self.first_error = o.error
        for k, (item, row) in enumerate(zip(items, rows)):
            level = item.params.get("n", 0)
            if level not in self._failing_levels and not all(o.correct for o in row):
                self._failing_levels.add(level)
                self.kept[base + k] = tuple(row)

    def finish(
        self,
        source: RowSource | None,
        *,
        calls: int = 1,
        seconds: float = 0.0,
        meta: dict[str, object] | None = None,
    ) -> Evaluation:
        """The evaluation of every chunk added; ``source`` regenerates its rows (see above)."""
        return Evaluation(
            self.model,
            self.family,
            calls=calls,
            seconds=seconds,
            meta=meta,
            reduced=self.reduce(source),
        )

    def reduce(self, source: RowSource | None) -> Reduced:
        """Every chunk added, as the arrays and tables of an evaluation (the chunks are
        dropped); ``source`` regenerates its rows."""
        width = len(self.presentations)
        arrays: dict[str, np.ndarray] = {}
        for name, chunks in self._parts.items():
            if name in _TRIES:
                chunks = [_pad(c, self._tried) for c in chunks]
                empty: tuple[int, ...] = (0, width, self._tried)
            else:
                empty = (0,) if name == "level" else (0, width)
            arrays[name] = (
                np.concatenate(chunks)
                if chunks
                else np.zeros(
                    empty,
                    dtype=np.int64 if name == "level" else bool if name in _BITS else np.int32,
                )
            )
        self._parts = {k: [] for k in _ARRAYS}
        scores = self.scores.array()
        if scores is not None:
            arrays["scores"] = scores
        return Reduced(
            self.presentations,
            self.ids,
            arrays,
            self.answers,
            self.raws,
            self.reasons,
            self.errors,
            self.first_error,
            self.kept,
            self._tried,
            self.binary,
            source,
            (self.compared, self.varied),
            self.scores.answers if scores is not None else (),
        )


_BITS = ("correct", "valid", "errored")
_TRIES = ("tries", "tries_raw", "tries_reason")
_ARRAYS = ("level", *_BITS, "answer", "gold", "raw", "reason", "ntries", *_TRIES)


def _pad(codes: np.ndarray, tried: int) -> np.ndarray:
    """Per-attempt codes padded with :data:`NONE` to ``tried`` attempts."""
    if codes.shape[2] == tried:
        return codes
    out = np.full((*codes.shape[:2], tried), NONE, dtype=np.int32)
    out[:, :, : codes.shape[2]] = codes
    return out


class Evaluation:
    """One design under one model, as compact arrays (see the module docstring).

    ``Evaluation(model, family, items, observations)`` reduces whole rows at once (small designs,
    tests); a run reduces chunk by chunk through a :class:`Reduction`, whose ``finish`` passes
    what it reduced as ``reduced``. The figures read the arrays
    (:meth:`table`, :attr:`level`, :attr:`ids`); :meth:`rows` (and :attr:`items`,
    :attr:`observations`, which hold a whole design in memory) rebuild the rows.
    """

    def __init__(
        self,
        model: str,
        family: FamilyLike,
        items: Sequence[Item] = (),
        observations: Sequence[Sequence[Observation]] = (),
        calls: int = 1,
        seconds: float = 0.0,
        meta: dict[str, object] | None = None,
        *,
        reduced: Reduced | None = None,
    ) -> None:
        if reduced is None:  # whole rows: reduce them here, and keep them to rebuild rows
            reduction = Reduction(model, family, ())
            reduction.add(items, observations)
            rows = list(zip(items, map(tuple, observations)))
            reduced = reduction.reduce(lambda: rows)
        self.model, self.family = model, family
        self.calls, self.seconds, self.meta = calls, seconds, dict(meta or {})
        self.reduced = reduced
        self.presentations: tuple[str, ...] = reduced.presentations
        self.ids: list[str] = reduced.ids
        self.binary = reduced.binary  # two answers (κ is defined)
        self.error_reasons: Counter[str] = reduced.errors  # infrastructure errors by reason
        self.first_error = reduced.first_error
        #: Whole rows as observed, by instance index (the first failing instance of each level).
        self.kept: dict[int, tuple[Observation, ...]] = reduced.kept
        #: The most attempts any observation recorded (0: single sends).
        self.attempts_recorded = reduced.attempts
        #: Prompts sent more than once that came back every time, and how many of those got
        #: raw answers that differ between sends (a greedy server's never do).
        self.attempts_compared, self.attempts_varied = reduced.sampled
        #: The answers whose scores :attr:`scores` holds, in its last axis' order (empty: none).
        self.score_answers: tuple[str, ...] = reduced.score_answers

    # -- the arrays ----------------------------------------------------------------------------

    def __len__(self) -> int:
        """Instances (rows) of the design."""
        return len(self.ids)

    @property
    def level(self) -> np.ndarray:
        """Per instance, its level θ (the ``n`` parameter)."""
        return self.reduced.arrays["level"]

    @property
    def scores(self) -> np.ndarray | None:
        """Instance × presentation × answer, float32: each candidate's log-probability under
        the candidate-scoring readout (:attr:`score_answers` in order; NaN where a prompt got
        no scores, ``-inf`` for a candidate the model scored none); ``None`` when no answer of
        the evaluation came from scoring."""
        return self.reduced.arrays.get("scores")

    def array(self, name: str) -> np.ndarray:
        """The instance × presentation array ``name``: ``correct``, ``valid``, ``errored`` (bits),
        ``answer``, ``gold`` (codes: :meth:`answer_text`), ``tries`` (codes per attempt)."""
        return self.reduced.arrays[name]

    def answer_text(self, code: int) -> str | None:
        """The parsed (or gold) answer behind ``code``; ``None`` for an invalid answer."""
        return self.reduced.answers.text(int(code))

    def answer_code(self, text: str | None) -> int:
        """The code of the answer ``text`` (:data:`NOT_KEPT` when no cell holds it)."""
        if text is None:
            return NONE
        return self.reduced.answers.find(text)

    def answers(self, column: int) -> list[str | None]:
        """The parsed answers of one presentation, instance by instance."""
        table = self.reduced.answers.strings
        return [
            table[c] if c >= 0 else None for c in self.reduced.arrays["answer"][:, column].tolist()
        ]

    @property
    def first_attempts(self) -> int:
        """The most attempts recorded for the first presentation (0: single sends)."""
        ntries = self.reduced.arrays["ntries"]
        return int(ntries[:, 0].max()) if ntries.size else 0

    # -- infrastructure errors -----------------------------------------------------------------

    @property
    def error_count(self) -> int:
        """Observations that are infrastructure errors."""
        return int(self.reduced.arrays["errored"].sum())

    @property
    def prompt_total(self) -> int:
        """Observations (instance × presentation) of the design."""
        return int(self.reduced.arrays["correct"].size)

    def infrastructure_error(self) -> InfrastructureError | None:
        """The infrastructure errors of this evaluation as one exception; ``None`` without any."""
        if not self.error_reasons:
            return None
        return InfrastructureError.counted(
            self.model, self.error_reasons, self.prompt_total, self.first_error or "none"
        )

    # -- whole rows ----------------------------------------------------------------------------

    def row(self, index: int, item: Item) -> tuple[Observation, ...]:
        """The observations of instance ``index`` (whose item is ``item``), from the arrays; raw
        answers and reasons past their tables' limits (see :class:`Reduction`) come back as
        ``None`` and ``""``."""
        kept = self.kept.get(index)
        if kept is not None:
            return kept
        a = self.reduced.arrays
        raws, reasons = self.reduced.raws, self.reduced.reasons
        out = []
        for k, prompt in enumerate(item.prompts):
            reason = reasons.text(int(a["reason"][index, k])) or ""
            parsed = Parsed(self.answer_text(a["answer"][index, k]), reason)
            attempts = tuple(
                (
                    raws.text(int(a["tries_raw"][index, k, t])),
                    Parsed(
                        self.answer_text(a["tries"][index, k, t]),
                        reasons.text(int(a["tries_reason"][index, k, t])) or "",
                    ),
                )
                for t in range(int(a["ntries"][index, k]))
            )
            error = reason if a["errored"][index, k] else None
            raw = raws.text(int(a["raw"][index, k]))
            scores = None
            if self.scores is not None:
                scores = cell_scores(self.scores[index, k], self.score_answers, prompt)
            out.append(Observation(prompt, raw, parsed, attempts, error, scores))
        return tuple(out)

    def observed(self, index: int) -> tuple[Observation, ...]:
        """The observations of instance ``index``: as observed when kept (the first failing
        instance of each level is), else rebuilt (:meth:`rows`)."""
        kept = self.kept.get(index)
        if kept is not None:
            return kept
        return next(self.rows([index]))[2]

    def rows(
        self, indices: Iterable[int] | None = None
    ) -> Iterator[tuple[int, Item, tuple[Observation, ...]]]:
        """``(index, item, observations)`` of every instance (or of ``indices``), in design
        order, regenerating the design chunk by chunk. Raises ``TypeError`` for an evaluation
        whose design cannot be regenerated."""
        if self.reduced.source is None:
            raise TypeError(
                f"the evaluation of {self.family!r} keeps no design to rebuild rows from"
            )
        wanted = None if indices is None else set(indices)
        for index, (item, recorded) in enumerate(self.reduced.source()):
            if wanted is not None:
                if index not in wanted:
                    continue
                wanted.discard(index)
            yield index, item, recorded if recorded is not None else self.row(index, item)
            if wanted is not None and not wanted:
                return

    def chunks(self, prompts: int = 1024) -> Iterator[list[Item]]:
        """The design's items, regenerated in chunks of about ``prompts`` prompts, in design
        order: a second pass over exactly the prompts evaluated (the probes read them so)."""
        if self.reduced.source is None:
            raise TypeError(
                f"the evaluation of {self.family!r} keeps no design to rebuild rows from"
            )
        size = max(1, prompts // max(1, len(self.presentations)))
        chunk: list[Item] = []
        for item, _ in self.reduced.source():
            chunk.append(item)
            if len(chunk) >= size:
                yield chunk
                chunk = []
        if chunk:
            yield chunk

    @property
    def items(self) -> tuple[Item, ...]:
        """Every item of the design (the whole design in memory: for small designs)."""
        return tuple(item for _, item, _ in self.rows())

    @property
    def observations(self) -> tuple[tuple[Observation, ...], ...]:
        """Every row of observations (the whole design in memory: for small designs)."""
        return tuple(row for _, _, row in self.rows())

    def errors(self) -> list[Observation]:
        """The observations that are infrastructure errors, in design order (rebuilds rows)."""
        errored = self.reduced.arrays["errored"].any(axis=1)
        return [
            o
            for _, _, row in self.rows(np.flatnonzero(errored).tolist())
            for o in row
            if o.error is not None
        ]

    def __repr__(self) -> str:
        return (
            f"Evaluation(model={self.model!r}, family={self.family!r}, "
            f"instances={len(self)}, presentations={list(self.presentations)!r})"
        )
