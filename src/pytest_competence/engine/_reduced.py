"""What an evaluation keeps of its observations: strings as small integer codes, and the arrays.

:class:`Interned` maps strings to codes (``None`` is :data:`NONE`; a string past a bounded
table's limit is :data:`NOT_KEPT`); :class:`Reduced` holds the per-instance and
per-instance × presentation arrays a :class:`~pytest_competence.engine.evaluation.Reduction` made of
its chunks, with the tables their codes index and the rows it kept whole; a
:data:`RowSource` regenerates the design's rows beside them (:func:`design_rows`).
:class:`ScoreTable` keeps the candidate-scoring readout's scores as one float32 array.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from pytest_competence.protocol import Item, Observation, Prompt

__all__ = [
    "NONE",
    "NOT_KEPT",
    "Interned",
    "Reduced",
    "RowSource",
    "ScoreTable",
    "cell_scores",
    "design_rows",
]

NONE = -1  # the code of None: an invalid answer, a missing raw answer
NOT_KEPT = -2  # a string past its table's limit: the records file has it, the arrays do not


class Interned:
    """Strings as small integer codes (``None`` is :data:`NONE`); with ``limit``, strings past
    that many distinct ones (or longer than ``length``) get :data:`NOT_KEPT`."""

    def __init__(self, limit: int | None = None, length: int | None = None) -> None:
        self.strings: list[str] = []
        self._codes: dict[str, int] = {}
        self.limit, self.length = limit, length

    def code(self, text: str | None) -> int:
        """The code of ``text``, interning it if the table has room."""
        if text is None:
            return NONE
        code = self._codes.get(text)
        if code is not None:
            return code
        if (self.limit is not None and len(self.strings) >= self.limit) or (
            self.length is not None and len(text) > self.length
        ):
            return NOT_KEPT
        self._codes[text] = len(self.strings)
        self.strings.append(text)
        return len(self.strings) - 1

    def text(self, code: int) -> str | None:
        """The string behind ``code`` (``None`` for :data:`NONE` and :data:`NOT_KEPT`)."""
        return self.strings[code] if code >= 0 else None

    def find(self, text: str) -> int:
        """The code of ``text`` if it was interned, else :data:`NOT_KEPT` (nothing is added)."""
        return self._codes.get(text, NOT_KEPT)

    def codes(self, texts: Iterable[str | None]) -> np.ndarray:
        """The codes of ``texts`` as an int32 array."""
        return np.fromiter((self.code(t) for t in texts), dtype=np.int32)


#: What :meth:`~pytest_competence.engine.evaluation.Evaluation.rows` regenerates rows from: items
#: alone (the observations come back from the arrays) or items with the observations an
#: archive recorded.
RowSource = Callable[[], Iterable[tuple[Item, "tuple[Observation, ...] | None"]]]


@dataclass(frozen=True)
class Reduced:
    """What a :class:`~pytest_competence.engine.evaluation.Reduction` made of its chunks: the arrays
    of an :class:`~pytest_competence.engine.evaluation.Evaluation`, the interned tables their codes
    index, and the whole rows kept as observed."""

    presentations: tuple[str, ...]
    ids: list[str]
    arrays: dict[str, np.ndarray]
    answers: Interned
    raws: Interned
    reasons: Interned
    errors: Counter[str]
    first_error: str | None
    kept: dict[int, tuple[Observation, ...]]
    attempts: int
    binary: bool
    source: RowSource | None
    sampled: tuple[int, int] = (0, 0)  # prompts sent more than once: compared, and varied
    score_answers: tuple[str, ...] = ()  # the last axis of arrays["scores"], when there is one


def design_rows(chunks: Callable[[], Iterable[Sequence[Item]]]) -> RowSource:
    """A :data:`RowSource` that regenerates a design's items from its chunks."""

    def rows() -> Iterator[tuple[Item, None]]:
        for chunk in chunks():
            for item in chunk:
                yield item, None

    return rows


class ScoreTable:
    """The observations' candidate scores (:attr:`~pytest_competence.protocol.Observation.scores`)
    chunk by chunk, as one float32 array (instances, presentations, answers) at the end.

    ``answers`` name the last axis (the first prompt's answer space); a prompt whose answer space
    is the same answers in another order is reordered, one of other answers (or without scores)
    is a NaN row. A chunk without any scores costs nothing until one with scores arrives, and
    an evaluation without any gets no array.
    """

    def __init__(self) -> None:
        self.answers: tuple[str, ...] = ()
        self._parts: list[tuple[tuple[int, int], np.ndarray | None]] = []

    def add(self, flat: Sequence[Observation], shape: tuple[int, int]) -> None:
        """One chunk's observations, row-major over ``shape`` (instances, presentations)."""
        if all(o.scores is None for o in flat):
            self._parts.append((shape, None))
            return
        columns = self.answers
        missing = (math.nan,) * len(columns)
        rows = []
        for o in flat:
            space = tuple(o.prompt.answer_space)
            if o.scores is None or len(o.scores) != len(space) or set(space) != set(columns):
                rows.append(missing)
            elif space == columns:
                rows.append(o.scores)
            else:
                by = dict(zip(space, o.scores))
                rows.append(tuple(by[a] for a in columns))
        self._parts.append((shape, np.array(rows, np.float32).reshape(*shape, len(columns))))

    def array(self) -> np.ndarray | None:
        """Every chunk's scores (the chunks are dropped); ``None`` when none had any."""
        parts, self._parts = self._parts, []
        if all(scores is None for _, scores in parts):
            return None
        K = len(self.answers)
        return np.concatenate(
            [
                np.full((*shape, K), np.nan, np.float32) if scores is None else scores
                for shape, scores in parts
            ]
        )


def cell_scores(
    values: np.ndarray, answers: Sequence[str], prompt: Prompt
) -> tuple[float, ...] | None:
    """One cell's scores (``values`` over ``answers``) in ``prompt``'s answer-space order;
    ``None`` when the cell has none."""
    if np.isnan(values).all() or set(prompt.answer_space) != set(answers):
        return None
    by = dict(zip(answers, values.tolist()))
    return tuple(by[a] for a in prompt.answer_space)
