"""``competence trend``: a checkpoint series from archived results documents, no model asked.

Each archive is one checkpoint's ``--competence-json`` document. For every test all of them hold,
each checkpoint is compared with the previous one and, from the third on, with the first
(:func:`~pytest_competence.stats.checkpoint_series`): per level × presentation, McNemar with Holm
across the comparison's cells, Δ with Tango's score interval, and the drop the comparison could
have detected. The paired bits are each result's ``instances`` — ``ids``, ``level`` and
``correct`` (one ``0``/``1`` per instance and presentation, invalid answers ``0``) — matched by
instance id; the records file is not read. Archives of another design (their ``design.fingerprint``
differs) are refused, as the gate refuses them. With ``test="non-inferiority"`` each comparison
is also the non-inferiority gate's decision (one-sided, Holm across its cells, H0: Δ ≤ −margin),
so a suite gated that way has a series of the same test.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pytest_competence._version import __version__
from pytest_competence.report._cells import aligned, markdown_table, p_text

__all__ = ["SCHEMA", "TrendError", "trend_document", "trend_lines", "trend_markdown"]

#: The ``--json`` document's schema.
SCHEMA = "pytest-competence/trend/1"
#: Where the paired bits come from, as the reports say it.
SOURCE = (
    "results[].instances of each archive (ids, level, correct: one 0/1 per instance and "
    "presentation, invalid answers 0), matched by instance id; no model asked"
)


class TrendError(ValueError):
    """The archives cannot make a series; the message names the archive and the fix."""


def _load(path: str) -> dict[str, Any]:
    from pytest_competence.report import load_document

    try:
        return load_document(path)
    except FileNotFoundError:
        raise TrendError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TrendError(f"{path}: cannot read it ({type(exc).__name__}: {exc})") from None
    except ValueError as exc:  # NotAResultsDocument, with the path in its message
        raise TrendError(str(exc)) from None


def _pick(
    path: str, results: Sequence[Mapping[str, Any]], test: str, model: str | None
) -> Mapping[str, Any] | None:
    """The result of ``test`` in one archive: the only one, or ``model``'s."""
    found = [r for r in results if r["test"] == test]
    if model is not None:
        found = [r for r in found if r["model"] == model]
    if len(found) > 1:
        names = ", ".join(sorted(r["model"] for r in found))
        raise TrendError(
            f"{path} holds {len(found)} models for {test} ({names}); choose one with "
            f"--model NAME (once for every archive, or once per archive in order)"
        )
    return found[0] if found else None


def trend_document(
    paths: Sequence[str],
    *,
    models: Sequence[str] = (),
    alpha: float = 0.05,
    margin: float = 0.0,
    confidence: float = 0.95,
    test: Literal["regression", "non-inferiority"] = "regression",
) -> tuple[dict[str, Any], list[str]]:
    """The series of ``paths`` (oldest first) as a JSON-able document, and notes on what was
    left out (tests not in every archive, results that ended in errors).

    ``models`` chooses the model of archives that hold several: none, one for every archive,
    or one per archive in order. ``test``: ``"regression"`` (McNemar) or ``"non-inferiority"``
    (each comparison's non-inferiority decision beside it; needs ``margin`` above 0). Raises
    :class:`TrendError` naming the archive and the fix.
    """
    chosen = _chosen_models(paths, models, margin, test)
    notes: list[str] = []
    usable = _usable(paths, [_load(path) for path in paths], notes)
    blocks = []
    for name in _shared_tests(paths, usable, notes):
        picked = [
            _pick(path, results, name, model)
            for path, results, model in zip(paths, usable, chosen, strict=True)
        ]
        if any(r is None for r in picked):
            absent = [p for p, r in zip(paths, picked, strict=True) if r is None]
            notes.append(f"{name}: no result of the chosen model in {', '.join(absent)}; left out")
            continue
        results = [r for r in picked if r is not None]
        _check_design(name, paths, results)
        rows = _series(
            name, paths, results, alpha=alpha, margin=margin, confidence=confidence, test=test
        )
        blocks.append({"test": name, "models": [r["model"] for r in results], "rows": rows})
    if not blocks:
        raise TrendError(
            "no test has a result of the chosen model in every archive ("
            + "; ".join(notes[-3:])
            + "); check --model against the models each archive holds"
        )
    document = {
        "schema": SCHEMA,
        "plugin_version": __version__,
        "archives": list(paths),
        "test": test,
        "alpha": alpha,
        "margin": margin,
        "power": 0.8,
        "confidence": confidence,
        "source": SOURCE,
        "tests": blocks,
    }
    return document, notes


def _chosen_models(
    paths: Sequence[str], models: Sequence[str], margin: float, test: str
) -> list[str | None]:
    """The model chosen in each archive (``None``: its only one), once the arguments are
    checked — before any archive is read."""
    if test == "non-inferiority" and not margin:
        raise TrendError(
            "--test non-inferiority needs --margin above 0 (the accuracy a checkpoint may lose); "
            "at 0 only a checkpoint significantly better than its reference passes. Give one, "
            "e.g. --margin 0.02"
        )
    if len(paths) < 2:
        raise TrendError(f"give at least two archives, oldest first; got {len(paths)}")
    if len(models) not in (0, 1, len(paths)):
        raise TrendError(
            f"--model given {len(models)} times for {len(paths)} archives; give it once (every "
            f"archive) or once per archive, in the archives' order"
        )
    chosen: list[str | None] = [*models] * len(paths) if len(models) == 1 else [*models]
    return chosen or [None] * len(paths)


def _usable(
    paths: Sequence[str], documents: Sequence[Mapping[str, Any]], notes: list[str]
) -> list[list[Mapping[str, Any]]]:
    """Each archive's results but those that ended in infrastructure errors (noted)."""
    usable = []
    for path, document in zip(paths, documents, strict=True):
        kept = []
        for r in document["results"]:
            if r.get("outcome") == "error":
                notes.append(f"{path}: {r['nodeid']} ended in infrastructure errors; left out")
            else:
                kept.append(r)
        usable.append(kept)
    return usable


def _shared_tests(
    paths: Sequence[str], usable: Sequence[Sequence[Mapping[str, Any]]], notes: list[str]
) -> list[str]:
    """The tests every archive holds, in the first archive's order; the others are noted."""
    tests = [dict.fromkeys(r["test"] for r in results) for results in usable]
    shared = [t for t in tests[0] if all(t in others for others in tests[1:])]
    for name in dict.fromkeys(t for held in tests for t in held):
        if name not in shared:
            missing = [p for p, held in zip(paths, tests, strict=True) if name not in held]
            notes.append(f"{name} is not in every archive (not in {', '.join(missing)}); left out")
    if not shared:
        held = "; ".join(
            f"{p}: {', '.join(list(t)[:3]) or 'no result'}"
            for p, t in zip(paths, tests, strict=True)
        )
        raise TrendError(
            f"the archives share no test ({held}); archive every checkpoint with the same suite"
        )
    return shared


def _check_design(name: str, paths: Sequence[str], results: Sequence[Mapping[str, Any]]) -> None:
    """Refuse a checkpoint archived from another design than the first: its instances cannot
    be matched."""
    from pytest_competence.engine.gate import archived_fingerprint
    from pytest_competence.engine.gate import design_differences as differences

    first = archived_fingerprint(results[0])
    for path, r in zip(paths[1:], results[1:], strict=True):
        differ = differences(archived_fingerprint(r), first, (path, paths[0]))
        if differ:
            raise TrendError(
                f"{path}: {name} was archived from another design than in {paths[0]}, so "
                f"its instances cannot be matched; {'; '.join(differ)}; archive every "
                f"checkpoint with the same design"
            )


def _series(
    name: str,
    paths: Sequence[str],
    results: Sequence[Mapping[str, Any]],
    *,
    alpha: float,
    margin: float,
    confidence: float,
    test: Literal["regression", "non-inferiority"],
) -> list[dict[str, Any]]:
    """One test's comparisons (:func:`~pytest_competence.stats.checkpoint_series`) as rows."""
    from pytest_competence import stats
    from pytest_competence.engine.gate import archived_correct

    series = [
        stats.Checkpoint(
            name=path,
            ids=r["instances"]["ids"],
            level=r["instances"]["level"],
            correct=archived_correct(r),
        )
        for path, r in zip(paths, results, strict=True)
    ]
    try:
        rows = stats.checkpoint_series(
            series, alpha=alpha, margin=margin, confidence=confidence, test=test
        )
    except ValueError as exc:
        raise TrendError(f"{name}: {exc}") from None
    return [dataclasses.asdict(row) for row in rows]


def _comparisons(block: Mapping[str, Any]) -> list[tuple[str, str, str, list[Mapping[str, Any]]]]:
    """``(checkpoint, reference, against, rows)`` per comparison, in series order."""
    out: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for row in block["rows"]:
        out.setdefault((row["checkpoint"], row["reference"], row["against"]), []).append(row)
    return [(*key, rows) for key, rows in out.items()]


def _noninferiority(rows: Sequence[Mapping[str, Any]]) -> bool:
    return bool(rows) and rows[0].get("test") == "non-inferiority"


def _table(rows: Sequence[Mapping[str, Any]], confidence: float) -> list[list[str]]:
    head = ["n", "presentation", "pairs", "accuracy", "reference", "Δ", f"{confidence:.0%} CI"]
    shown = _noninferiority(rows)
    head += ["b", "c", "p (Holm)", "margin at 80% power" if shown else "detectable drop"]
    head += ["lower bound (Holm)", "verdict"] if shown else ["verdict"]
    out = [head]
    for r in rows:
        verdict = "REGRESSION" if r["regression"] else "—"
        if shown:
            verdict = "non-inferior" if r["noninferior"] else "NOT SHOWN"
        out.append(
            [
                str(r["n"]),
                str(r["presentation"]),
                str(r["pairs"]),
                f"{r['candidate']:.3f}",
                f"{r['baseline']:.3f}",
                f"{r['delta']:+.3f}",
                f"[{r['low']:+.3f}, {r['high']:+.3f}]",
                str(r["b"]),
                str(r["c"]),
                p_text(r["p_holm"]),
                f"{r['detectable_drop']:.3f}",
                *([f"{r['lower_holm']:+.3f}"] if shown else []),
                verdict,
            ]
        )
    return out


def _verdict(rows: Sequence[Mapping[str, Any]], margin: float) -> str:
    found = sum(1 for r in rows if r["regression"])
    drop = max(r["detectable_drop"] for r in rows)
    text = f"{found} significant regression(s)" if found else "no significant regression"
    if _noninferiority(rows):
        unproven = sum(1 for r in rows if not r["noninferior"])
        shown = (
            f"not shown non-inferior at {unproven} of {len(rows)} cells"
            if unproven
            else f"non-inferior at all {len(rows)} cells"
        )
        return (
            f"{shown} (margin {margin:g}); {text}; an equally good checkpoint is shown "
            f"within {drop:.3f} at 80% power"
        )
    return f"{text}; detectable drop {drop:.3f} at 80% power" + (
        f" (margin {margin:g})" if margin else ""
    )


def _tests(document: Mapping[str, Any]) -> str:
    if document.get("test") == "non-inferiority":
        return (
            "non-inferiority (one-sided, H0 Δ ≤ −margin) and McNemar, each with Holm per "
            "comparison,"
        )
    return "McNemar with Holm per comparison"


def trend_lines(document: Mapping[str, Any]) -> list[str]:
    """The terminal's table: per test, per comparison, the cells and the verdict."""
    lines = [
        f"competence trend: {len(document['archives'])} checkpoints, "
        f"{len(document['tests'])} test(s); {_tests(document)} at α "
        f"{document['alpha']:g}, Tango {document['confidence']:.0%} intervals",
        f"  paired bits: {document['source']}",
    ]
    for block in document["tests"]:
        lines.append(block["test"])
        for path, model in zip(document["archives"], block["models"], strict=True):
            lines.append(f"  {path}: {model}")
        for checkpoint, reference, against, rows in _comparisons(block):
            lines.append(
                f"  {checkpoint} against {reference} ({against}): "
                + _verdict(rows, document["margin"])
            )
            lines.extend(aligned(_table(rows, document["confidence"]), "    "))
    return lines


def trend_markdown(document: Mapping[str, Any]) -> str:
    """The Markdown summary: per test, per comparison, the verdict and its table."""

    def cell(text: object) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    out = [
        "## Competence trend",
        "",
        f"{len(document['archives'])} checkpoints, oldest first; {_tests(document)} at α "
        f"{document['alpha']:g}; paired bits: {cell(document['source'])}.",
        "",
    ]
    for block in document["tests"]:
        out += [f"### `{cell(block['test'])}`", ""]
        out += [
            f"- `{cell(path)}`: `{cell(model)}`"
            for path, model in zip(document["archives"], block["models"], strict=True)
        ]
        for checkpoint, reference, against, rows in _comparisons(block):
            out += [
                "",
                f"**`{cell(checkpoint)}` against `{cell(reference)}` ({against})**: "
                + _verdict(rows, document["margin"]),
                "",
                *markdown_table(
                    [[cell(c) for c in row] for row in _table(rows, document["confidence"])]
                ),
            ]
        out.append("")
    return "\n".join(out) + "\n"
