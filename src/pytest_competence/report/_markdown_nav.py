"""The Markdown summary's ways in, as on the HTML page: the run's counts, the contents and the
matrices whose verdicts link to their results (``#result-N``), each row an anchor
(``#m-FAMILY-K``) its results link back to. Anchors are ``<a id>`` elements, which GitHub keeps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_competence.report._cells import markdown_table
from pytest_competence.report._matrix import Counts, FamilyMatrix, cell

__all__ = ["contents_lines", "matrix_lines"]


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def contents_lines(
    document: Mapping[str, Any],
    counts: Mapping[str, Counts],
    slugs: Mapping[str, str],
    *,
    matrices: bool,
) -> list[str]:
    """The run's counts, per family its counts (linked to its matrix and its results), the
    failures and errors linked one by one (errors first), and the sections."""
    results = document.get("results") or []
    if not results and not document.get("not_applicable"):
        return []
    total = sum(counts.values(), Counts())
    out = [
        f"**{len(results)} result{'' if len(results) == 1 else 's'}: {total.text()}** "
        f"(test × model pairs)",
        "",
    ]
    rows = [["family", "caught", "passed", "errors", "n/a"]]
    for family, c in counts.items():
        slug = slugs[family]
        name = f"[{_cell(family)}](#matrix-{slug})" if matrices else _cell(family)
        group = f"#family-{slug}"
        rows.append(
            [name]
            + [f"[{v}]({group})" if v else "0" for v in (c.caught, c.passed, c.errors)]
            + [str(c.not_applicable)]
        )
    out += [*markdown_table(rows), ""]
    failing = sorted(
        ((i, r) for i, r in enumerate(results) if cell(r) != "pass"),
        key=lambda pair: cell(pair[1]) == "FAIL",
    )
    if failing:
        out += [
            f"<details><summary>Failures and errors first: {total.caught} caught, "
            f"{total.errors} error{'' if total.errors == 1 else 's'}</summary>",
            "",
            *(f"- {cell(r)} [`{_cell(r['nodeid'])}`](#result-{i})" for i, r in failing),
            "",
            "</details>",
            "",
        ]
    sections = [("Which suite catches which model", "matrix", matrices)]
    sections += [("Results", "results", bool(results))]
    sections += [("Model comparisons", "comparisons", bool(document.get("comparisons")))]
    out += [" · ".join(f"[{t}](#{anchor})" for t, anchor, shown in sections if shown), ""]
    return out


def matrix_lines(
    document: Mapping[str, Any], matrices: Sequence[FamilyMatrix], slugs: Mapping[str, str]
) -> list[str]:
    """Which suite catches which model, per family: each verdict a link to its result, each
    row an anchor; the n/a models under each table (all n/a pairs when there is no matrix)."""
    out: list[str] = []
    if matrices:
        out += [
            '<a id="matrix"></a>',
            "",
            "### Which suite catches which model",
            "",
            "FAIL: the suite caught the model; n/a: the model does not read the family's "
            "prompts (skipped, never caught). Each verdict links to its result.",
            "",
        ]
    for m in matrices:
        slug = slugs[m.family]
        rows = [[_cell(c) for c in m.rows[0]]]
        for k, (row, indexes) in enumerate(zip(m.rows[1:], m.results)):
            rows.append(
                [f'<a id="m-{slug}-{k}"></a>{_cell(row[0])}']
                + [
                    _cell(v) if i is None else f"[{_cell(v)}](#result-{i})"
                    for v, i in zip(row[1:], indexes)
                ]
            )
        out += [f'<a id="matrix-{slug}"></a>', "", f"#### {_cell(m.family)}", ""]
        out += [*markdown_table(rows), ""]
        if m.not_applicable:
            out += [
                f"n/a (they do not read {_cell(m.family)} prompts): "
                + ", ".join(f"`{_cell(name)}`" for name in m.not_applicable),
                "",
            ]
    skipped = document.get("not_applicable") or []
    if skipped and not matrices:  # no table to show them in: one model, or nothing evaluated
        out += [
            "n/a (skipped: the model does not read the family's prompts): "
            + ", ".join(f"`{_cell(r['nodeid'])}`" for r in skipped),
            "",
        ]
    return out
