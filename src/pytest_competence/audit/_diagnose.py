"""Which shortcut did a model learn? Its answers against every reference policy of its family.

The audit asks which policies a *design* can tell apart; the diagnosis asks which of them a
*model* answers like, on the prompts it was actually asked. Every reference policy of the family
answers the same prompts (policies read prompt text: no model call); both sides are read by the
family's parser (an invalid answer is its own answer, ``None``), and:

* **agreement** of the model with each policy, overall and per level × presentation, with a 95%
  Wilson interval over every answer (every attempt of a sampled model);
* **indistinguishable**: the policies whose answer equals the model's on every prompt and
  attempt — the model's class among the policies (:meth:`~._core.Observations.classes`);
* **closest**: the policies' own classes on the design, ranked by agreement; the candidates are the
  indistinguishable policies, else the best class and every class whose interval reaches the
  best's (at least two classes);
* **separations** between the candidate classes: where two of them differ, which one the model
  answers like; for candidates the design cannot separate, the cell to add to the suite that
  would (:func:`~._suite.witness`, from the family's audit components).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_competence.audit._core import Observations
from pytest_competence.audit._universe import family_zoo
from pytest_competence.stats import wilson_interval

__all__ = ["diagnose"]

MODEL = "the model"  # its name among the policies of the class computation
_SEPARATION_PAIRS = 6  # candidate pairs reported, closest first
_CHUNK = 64  # prompts per round of the zoo (below the reading cache of the ordering policies)


def _parser(evaluation: Any) -> Any:
    from pytest_competence.protocol import parse_choice

    def parse(text: str | None, prompt: Any) -> str | None:
        if text is None:
            return None
        try:
            return evaluation.family.parse(text).answer
        except TypeError:  # an archived family: its prompts carry their answer space
            return parse_choice(text, prompt.answer_space).answer

    return parse


def _cell(prompt: Any) -> tuple[Hashable, ...]:
    p = prompt.params
    return (
        p.get("n"),
        prompt.presentation,
        *(f"{k}={p[k]}" for k in ("cell", "vocabulary", "query", "names_line") if k in p),
    )


def _rate(agree: int, total: int) -> dict[str, Any]:
    low, high = wilson_interval(agree, total) if total else (None, None)
    return {
        "agree": agree,
        "total": total,
        "rate": agree / total if total else None,
        "ci": [low, high],
    }


def diagnose(
    evaluation: Any, *, zoo: Mapping[str, Any] | None = None, seed: int = 1, universe_pairs: int = 8
) -> dict[str, Any]:
    """The diagnosis of one evaluation (see the module docstring), as a JSON-able dict.

    ``zoo`` (policy name → model answering ``generate(prompts)``) defaults to
    :func:`family_zoo`; ``seed`` is the design's, for the cells to add.
    """
    family_name = getattr(evaluation.family, "name", "")
    levels = sorted({int(n) for n in evaluation.level.tolist()})
    zoo = dict(zoo) if zoo is not None else family_zoo(family_name, levels)
    answers = _answers(evaluation, zoo)
    overall = {name: answers.agreement(name, range(len(answers.model))) for name in zoo}
    indistinguishable, design_classes = _classes(answers, zoo)
    ranked = sorted(design_classes, key=lambda c: -overall[c[0]]["rate"])
    candidates = _candidates(ranked, overall, indistinguishable)
    to_add = _cells_to_add(
        evaluation, [c for c in candidates if len(c) > 1], levels, seed, universe_pairs
    )
    doc = {
        "model": evaluation.model,
        "family": family_name,
        "policies": list(zoo),
        "prompts": len(answers.model),
        "answers": sum(map(len, answers.model)),
        "agreement": overall,
        "by_level": _by_level(answers, zoo),
        "indistinguishable": indistinguishable,
        "design_classes": [list(c) for c in design_classes],
        "closest": [{"policies": list(c), **overall[c[0]]} for c in ranked],
        "candidates": [list(c) for c in candidates],
        "separations": _separations(answers, candidates),
        "to_add": to_add,
    }
    doc["verdict"] = _verdict(doc)
    return doc


@dataclass
class _Answers:
    """Per prompt, only what the figures need — never the prompt itself."""

    model: list[list[str | None]] = field(default_factory=list)  # one answer per attempt
    places: list[tuple[Any, str]] = field(default_factory=list)  # (n, presentation)
    cells: list[tuple[Hashable, ...]] = field(default_factory=list)
    policy: dict[str, list[str | None]] = field(default_factory=dict)

    def agreement(self, name: str, keep: Sequence[int]) -> dict[str, Any]:
        """How often policy ``name`` answers like the model on the prompts ``keep``."""
        hits = sum(a == self.policy[name][k] for k in keep for a in self.model[k])
        return _rate(hits, sum(len(self.model[k]) for k in keep))


def _answers(evaluation: Any, zoo: Mapping[str, Any]) -> _Answers:
    """The model's answers and every policy's, read by the family's parser.

    The design is regenerated chunk by chunk and every policy answers each chunk (one reading
    each), so no prompt is kept past its chunk.
    """
    parse = _parser(evaluation)
    out = _Answers(policy={name: [] for name in zoo})
    chunk: list[Any] = []

    def answer(prompts: list[Any]) -> None:
        for name, m in zoo.items():
            out.policy[name] += [parse(a, p) for a, p in zip(m.generate(prompts), prompts)]

    for _, _, row in evaluation.rows():
        for o in row:
            out.model.append(
                [parsed.answer for _, parsed in o.attempts] if o.attempts else [o.parsed.answer]
            )
            out.places.append((o.prompt.params.get("n"), o.prompt.presentation))
            out.cells.append(_cell(o.prompt))
            chunk.append(o.prompt)
            if len(chunk) == _CHUNK:
                answer(chunk)
                chunk = []
    if chunk:
        answer(chunk)
    return out


def _by_level(answers: _Answers, zoo: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Agreement per level × presentation, with the best-matching policies of each."""
    groups: dict[tuple[Any, str], list[int]] = {}
    for k, place in enumerate(answers.places):
        groups.setdefault(place, []).append(k)
    by_level = []
    for (n, presentation), keep in groups.items():
        rates = {name: answers.agreement(name, keep)["rate"] for name in zoo}
        top = max(rates.values())
        by_level.append(
            {
                "n": n,
                "presentation": presentation,
                "prompts": len(keep),
                "agreement": rates,
                "best": [p for p, r in rates.items() if r == top],
            }
        )
    return by_level


def _classes(answers: _Answers, zoo: Mapping[str, Any]) -> tuple[list[str], list[tuple[str, ...]]]:
    """The policies indistinguishable from the model, and the policies' classes on the design.

    Equivalence classes over cells: a prompt's response is the set of answers it got.
    """
    where: dict[tuple[Hashable, ...], list[int]] = {}
    for k, cell in enumerate(answers.cells):
        where.setdefault(cell, []).append(k)
    cells = list(where)
    responses: dict[str, list[tuple[tuple[str | None, ...], ...]]] = {
        name: [tuple((given[k],) for k in where[c]) for c in cells]
        for name, given in answers.policy.items()
    }
    responses[MODEL] = [
        tuple(tuple(sorted(set(answers.model[k]), key=str)) for k in where[c]) for c in cells
    ]
    everywhere = (1 << len(cells)) - 1
    mine = next(c for c in Observations(cells, responses).classes(everywhere) if MODEL in c)
    indistinguishable = [p for p in mine if p != MODEL]
    design_classes = Observations(cells, {n: responses[n] for n in zoo}).classes(everywhere)
    return indistinguishable, design_classes


def _candidates(
    ranked: Sequence[tuple[str, ...]],
    overall: Mapping[str, Mapping[str, Any]],
    indistinguishable: Sequence[str],
) -> list[tuple[str, ...]]:
    """The indistinguishable policies' classes, else the best class and every class whose
    interval reaches the best's (at least two classes)."""
    if indistinguishable:
        return [c for c in ranked if c[0] in indistinguishable]
    best_low = overall[ranked[0][0]]["ci"][0]
    candidates = [c for c in ranked if overall[c[0]]["ci"][1] >= best_low][:4]
    return candidates if len(candidates) > 1 else list(ranked[:2])


def _separations(answers: _Answers, candidates: Sequence[tuple[str, ...]]) -> list[dict[str, Any]]:
    """For candidate pairs (closest first), which one the model answers like where they differ."""
    separations = []
    for i, a in enumerate(candidates):
        for b in candidates[i + 1 :]:
            keep = [
                k
                for k in range(len(answers.model))
                if answers.policy[a[0]][k] != answers.policy[b[0]][k]
            ]
            separations.append(
                {
                    "policies": [a[0], b[0]],
                    "prompts": len(keep),
                    "agreement": [answers.agreement(a[0], keep), answers.agreement(b[0], keep)],
                }
            )
    return separations[:_SEPARATION_PAIRS]


def _cells_to_add(
    evaluation: Any, tied: Sequence[Sequence[str]], levels: Sequence[int], seed: int, pairs: int
) -> list[dict[str, Any]]:
    """For policies the design cannot separate, the cheapest cell of the audit's candidate
    components (the family's ``audit_components``) that would."""
    family = evaluation.family
    if not tied or not levels or not hasattr(family, "design"):
        return []
    from pytest_competence.audit._suite import witness
    from pytest_competence.audit._universe import audit_pairs, suite_universe

    names = sorted({p for c in tied for p in c})
    zoo = {k: v for k, v in family_zoo(getattr(family, "name", ""), levels).items() if k in names}
    if len(zoo) < len(names):  # a user's zoo: its policies are not the audit's
        return []
    kinds = list(dict.fromkeys(str(p).partition(":")[0] for p in evaluation.presentations))
    pairs = audit_pairs(family, levels, kinds, seed, pairs, max(pairs, 60))
    universe = suite_universe(
        family, zoo, levels=levels, presentations=kinds, pairs=pairs, seed=seed
    )
    out = []
    for c in tied:
        for i, a in enumerate(c):
            for b in c[i + 1 :]:
                out.append({"policies": [a, b], **witness(universe, a, b, list(universe.declared))})
    return out


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _verdict(doc: Mapping[str, Any]) -> str:
    """One sentence: what the model answers like on this design."""
    best = doc["closest"][0]
    lead = (
        f"answers like {' = '.join(best['policies'])} on {_pct(best['rate'])} of "
        f"{best['total']} answers [{_pct(best['ci'][0])}, {_pct(best['ci'][1])}]"
    )
    if doc["indistinguishable"]:
        text = (
            f"indistinguishable on this design from {', '.join(doc['indistinguishable'])}"
            f" (every answer equal)"
        )
        needs = sorted({n for t in doc["to_add"] for n in t["needs"]})
        return text + (f"; to tell them apart add: {', '.join(needs)}" if needs else "")
    parts = [lead]
    for s in doc["separations"][:1]:
        if s["prompts"]:
            (a, b), (ra, rb) = s["policies"], s["agreement"]
            parts.append(
                f"on the {s['prompts']} prompts where {a} and {b} differ, it answers "
                f"like {a} on {_pct(ra['rate'])} and like {b} on {_pct(rb['rate'])}"
            )
    runs = _level_runs(doc["by_level"])
    if len({label for _, spans in runs for _, _, label in spans}) > 1:
        parts.append(
            "best match per level: "
            + "; ".join(
                f"{presentation} "
                + ", ".join(
                    f"n={lo}" + (f"–{hi}" if hi != lo else "") + f" {label}"
                    for lo, hi, label in spans
                )
                for presentation, spans in runs
            )
        )
    return "; ".join(parts)


def _level_runs(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[tuple[Any, Any, str]]]]:
    """Per presentation, consecutive levels with the same best-matching policies, as
    ``(first n, last n, label)``; a label names the first policy and how many tie with it."""
    out: dict[str, list[tuple[Any, Any, str]]] = {}
    for lv in sorted(
        rows,
        key=lambda r: (
            r["presentation"] != "original",
            str(r["presentation"]),
            r["n"] if isinstance(r["n"], int) else 0,
        ),
    ):
        best = lv["best"]
        label = best[0] + (f" (+{len(best) - 1})" if len(best) > 1 else "")
        spans = out.setdefault(lv["presentation"], [])
        if spans and spans[-1][2] == label:
            spans[-1] = (spans[-1][0], lv["n"], label)
        else:
            spans.append((lv["n"], lv["n"], label))
    return list(out.items())
