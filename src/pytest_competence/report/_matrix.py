"""Which suite catches which model: per family, the tests as rows and the models as columns.

A cell is one test × model verdict: ``pass`` (the condition and gates hold), ``FAIL`` (the suite
caught the model), ``n/a`` (the model does not read the family's prompts, so the pair was
skipped: never counted as caught), ``—`` (not in this run), or pytest's outcome in capitals for
anything else (``ERROR``). A model that reads none of a family's suites gets no column in that
family's table; :attr:`FamilyMatrix.not_applicable` names it instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import astuple, dataclass, field
from typing import Any

__all__ = [
    "Counts",
    "FamilyMatrix",
    "NOT_APPLICABLE",
    "back_anchors",
    "cell",
    "family_counts",
    "family_groups",
    "family_matrices",
    "family_of",
    "family_slugs",
    "level_name",
    "level_text",
]

NOT_APPLICABLE = "n/a"


@dataclass(frozen=True)
class FamilyMatrix:
    """One family's table: ``rows`` (header ``["test", *models]`` first), the models that
    read none of its prompts, and ``results``: per row below the header, per model, the index
    of that cell's result in the document's ``results`` (``None`` for an n/a or absent cell)."""

    family: str
    rows: list[list[str]]
    not_applicable: tuple[str, ...]
    results: list[list[int | None]] = field(default_factory=list)


@dataclass(frozen=True)
class Counts:
    """A family's (or the run's) test × model pairs in competence terms: ``caught`` (the
    condition or a gate failed), ``passed``, ``errors`` (infrastructure errors, or any other
    pytest outcome: no verdict on the model) and ``not_applicable`` (skipped as n/a)."""

    caught: int = 0
    passed: int = 0
    errors: int = 0
    not_applicable: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(*(a + b for a, b in zip(astuple(self), astuple(other))))

    def text(self) -> str:
        """``3 caught, 5 passed, 0 errors, 12 n/a``."""
        return (
            f"{self.caught} caught, {self.passed} passed, {self.errors} "
            f"error{'' if self.errors == 1 else 's'}, {self.not_applicable} n/a"
        )


def family_of(result: Mapping[str, Any]) -> str:
    """The family's name; for results archived before ``family_name``, its repr's class name."""
    return result.get("family_name") or str(result.get("family", "")).partition("(")[0].lower()


def level_name(result: Mapping[str, Any]) -> str:
    """What the result's level counts, as its family names it (``n``, ``depth``,
    ``distractors``, …); ``n`` for results archived before ``level_name``."""
    return str(result.get("level_name") or "n")


def level_text(result: Mapping[str, Any], value: object) -> str:
    """A level of the result, named: ``n = 8``, ``distractors = 0``."""
    return f"{level_name(result)} = {value}"


def cell(r: Mapping[str, Any]) -> str:
    """The result's matrix cell: ``pass``, ``FAIL`` or the outcome in capitals (``ERROR``)."""
    outcome = r.get("outcome")
    if outcome not in ("passed", "failed"):
        return str(outcome or "?").upper()
    met = r.get("condition_met")
    return "pass" if (outcome == "passed" if met is None else met) else "FAIL"


def _models(document: Mapping[str, Any]) -> list[str]:
    """The models of the run: ``models`` first, in their order, then any other result's."""
    results: Sequence[Mapping[str, Any]] = document.get("results") or []
    skipped: Sequence[Mapping[str, Any]] = document.get("not_applicable") or []
    given = document.get("models") or []
    named = [r["model"] for r in [*results, *skipped]]
    return list(dict.fromkeys([m for m in given if m in named] + named))


def family_counts(document: Mapping[str, Any]) -> dict[str, Counts]:
    """Each family's :class:`Counts`, in node-id order of its first test × model."""
    pairs = sorted(
        [(r["nodeid"], family_of(r), cell(r)) for r in document.get("results") or []]
        + [(r["nodeid"], r["family"], NOT_APPLICABLE) for r in document.get("not_applicable") or []]
    )
    counts: dict[str, Counts] = {}
    for _, family, verdict in pairs:
        counts[family] = counts.get(family, Counts()) + Counts(
            caught=verdict == "FAIL",
            passed=verdict == "pass",
            errors=verdict not in ("FAIL", "pass", NOT_APPLICABLE),
            not_applicable=verdict == NOT_APPLICABLE,
        )
    return counts


def family_matrices(document: Mapping[str, Any]) -> list[FamilyMatrix]:
    """The matrices of a results document, one per family in node-id order; none for a run of
    fewer than two models (there is nothing to compare)."""
    results: Sequence[Mapping[str, Any]] = document.get("results") or []
    skipped: Sequence[Mapping[str, Any]] = document.get("not_applicable") or []
    models = _models(document)
    if len(models) < 2:
        return []
    cells: dict[tuple[str, str], tuple[str, int | None]] = {}
    tests: dict[str, dict[str, None]] = {}  # family → its tests, in node-id order
    pairs = sorted(
        [
            (r["nodeid"], family_of(r), r["test"], r["model"], cell(r), i)
            for i, r in enumerate(results)
        ]
        + [(r["nodeid"], r["family"], r["test"], r["model"], NOT_APPLICABLE, -1) for r in skipped]
    )
    for _, family, test, model, verdict, index in pairs:
        tests.setdefault(family, {})[test] = None
        cells[(test, model)] = (verdict, None if index < 0 else index)
    absent = ("—", None)
    matrices = []
    for family, names in tests.items():
        ran = [
            m
            for m in models
            if any(cells.get((t, m), absent)[0] not in (NOT_APPLICABLE, "—") for t in names)
        ]
        missing = tuple(
            m
            for m in models
            if m not in ran and any(cells.get((t, m), absent)[0] == NOT_APPLICABLE for t in names)
        )
        rows = [["test", *ran]] + [[t, *(cells.get((t, m), absent)[0] for m in ran)] for t in names]
        indexes = [[cells.get((t, m), absent)[1] for m in ran] for t in names]
        matrices.append(FamilyMatrix(family, rows, missing, indexes))
    return matrices


def family_slugs(families: Sequence[str]) -> dict[str, str]:
    """Each family's id fragment and page name: its name in ``[a-z0-9_-]``, unique."""
    out: dict[str, str] = {}
    for family in families:
        slug = re.sub(r"[^a-z0-9_-]+", "-", family.lower()).strip("-") or "family"
        while slug in out.values():
            slug += "-"
        out[family] = slug
    return out


def back_anchors(
    document: Mapping[str, Any], matrices: Sequence[FamilyMatrix], slugs: Mapping[str, str]
) -> dict[int, str]:
    """Each result's way back: its row in its family's matrix, else its row in the index."""
    out = {i: f"i-{i}" for i in range(len(document.get("results") or []))}
    for m in matrices:
        for k, row in enumerate(m.results):
            for index in row:
                if index is not None:
                    out[index] = f"m-{slugs[m.family]}-{k}"
    return out


def family_groups(document: Mapping[str, Any]) -> dict[str, list[int]]:
    """Each family's results, errors first, then the caught ones, then those that passed; in
    node-id order within each."""
    order = {"pass": 2, "FAIL": 1}
    groups: dict[str, list[int]] = {}
    results = document.get("results") or []
    for i, r in enumerate(results):
        groups.setdefault(family_of(r), []).append(i)
    return {
        family: sorted(indexes, key=lambda i: order.get(cell(results[i]), 0))
        for family, indexes in groups.items()
    }
