"""Which suite catches which model: per family, the tests as rows and the models as columns.

A cell is one test × model verdict: ``pass`` (the condition and gates hold), ``FAIL`` (the suite
caught the model), ``n/a`` (the model does not read the family's prompts, so the pair was
skipped: never counted as caught), ``—`` (not in this run), or pytest's outcome in capitals for
anything else (``ERROR``). A model that reads none of a family's suites gets no column in that
family's table; :attr:`FamilyMatrix.not_applicable` names it instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FamilyMatrix",
    "NOT_APPLICABLE",
    "family_matrices",
    "family_of",
    "level_name",
    "level_text",
]

NOT_APPLICABLE = "n/a"


@dataclass(frozen=True)
class FamilyMatrix:
    """One family's table: ``rows`` (header ``["test", *models]`` first) and the models that
    read none of its prompts."""

    family: str
    rows: list[list[str]]
    not_applicable: tuple[str, ...]


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


def _cell(r: Mapping[str, Any]) -> str:
    outcome = r.get("outcome")
    if outcome not in ("passed", "failed"):
        return str(outcome or "?").upper()
    met = r.get("condition_met")
    return "pass" if (outcome == "passed" if met is None else met) else "FAIL"


def family_matrices(document: Mapping[str, Any]) -> list[FamilyMatrix]:
    """The matrices of a results document, one per family in node-id order; none for a run of
    fewer than two models (there is nothing to compare)."""
    results: Sequence[Mapping[str, Any]] = document.get("results") or []
    skipped: Sequence[Mapping[str, Any]] = document.get("not_applicable") or []
    given = document.get("models") or []
    models = list(
        dict.fromkeys(
            [m for m in given if any(r["model"] == m for r in [*results, *skipped])]
            + [r["model"] for r in [*results, *skipped]]
        )
    )
    if len(models) < 2:
        return []
    cells: dict[tuple[str, str], str] = {}
    tests: dict[str, dict[str, None]] = {}  # family → its tests, in node-id order
    pairs = sorted(
        [(r["nodeid"], family_of(r), r["test"], r["model"], _cell(r)) for r in results]
        + [(r["nodeid"], r["family"], r["test"], r["model"], NOT_APPLICABLE) for r in skipped]
    )
    for _, family, test, model, cell in pairs:
        tests.setdefault(family, {})[test] = None
        cells[(test, model)] = cell
    matrices = []
    for family, names in tests.items():
        ran = [
            m
            for m in models
            if any(cells.get((t, m), NOT_APPLICABLE) != NOT_APPLICABLE for t in names)
        ]
        absent = tuple(
            m
            for m in models
            if m not in ran and any(cells.get((t, m)) == NOT_APPLICABLE for t in names)
        )
        rows = [["test", *ran]] + [[t, *(cells.get((t, m), "—") for m in ran)] for t in names]
        matrices.append(FamilyMatrix(family, rows, absent))
    return matrices
