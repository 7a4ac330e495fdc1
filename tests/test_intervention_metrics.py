"""Intervention-world metrics, reference policies, the per-prompt readout and its cache keys.

Expected metric values are computed here independently, by a plain loop over clusters and units,
and compared with :mod:`pytest_competence.strategies.intervention.metrics` on hand-built evaluations.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import numpy as np
import pytest

from pytest_competence.engine.analysis import analyze
from pytest_competence.engine.cache import CachedModel, ResponseCache, cache_key
from pytest_competence.engine.evaluate import evaluate
from pytest_competence.engine.evaluation import Evaluation
from pytest_competence.engine.records import evaluation_from_records, records
from pytest_competence.models.reference import reference_policy
from pytest_competence.protocol import Observation
from pytest_competence.report._cells import family_html as intervention_html
from pytest_competence.report._cells import tables_lines as intervention_lines
from pytest_competence.report._cells import tables_markdown as intervention_markdown
from pytest_competence.strategies import IW_PRESENTATIONS, Intervention, Parsed
from pytest_competence.strategies.intervention.metrics import RATES, intervention_summary

FAMILY = Intervention()
DECODE = {"T": "TRUE", "F": "FALSE", "U": "UNKNOWN"}


@pytest.fixture(scope="module")
def items():
    return FAMILY.design(levels=[4, 8], pairs=12, seed=5)


def _with_answers(items, answer) -> Evaluation:
    """An evaluation whose parsed answer for each prompt is ``answer(item_index, prompt)``."""
    rows = []
    for k, item in enumerate(items):
        rows.append(
            tuple(
                Observation(p, "x", Parsed(answer(k, p), "" if answer(k, p) else "bad"))
                for p in item.prompts
            )
        )
    return Evaluation("hand", FAMILY, tuple(items), tuple(rows))


def _expected(items, answer) -> dict[str, float]:
    """The five rates by their definitions, one direction at a time, then averaged."""
    per_dir: dict[str, dict[str, list[float]]] = {}
    for k, item in enumerate(items):
        direction = item.params["transition"]
        bucket = per_dir.setdefault(direction, {r: [0, 0] for r in RATES})
        cluster_ok = True
        for mapping in sorted({p.params["mapping"] for p in item.prompts}):
            for readout in ("generate", "score"):
                cell = {
                    p.params["world"]: p
                    for p in item.prompts
                    if p.params["mapping"] == mapping and p.params["readout"] == readout
                }
                dec = {
                    w: (DECODE[mapping["ABC".index(a)]] if (a := answer(k, p)) else None)
                    for w, p in cell.items()
                }
                b_ok = dec["base"] == cell["base"].params["label"]
                t_ok = dec["target"] == cell["target"].params["label"]
                s_ok = dec["sham"] is not None and dec["sham"] == dec["base"]
                bucket["base_accuracy"][0] += b_ok
                bucket["base_accuracy"][1] += 1
                if b_ok:
                    bucket["target_follow"][0] += t_ok
                    bucket["target_follow"][1] += 1
                    bucket["sham_stay"][0] += s_ok
                    bucket["sham_stay"][1] += 1
                bucket["selective_response"][0] += b_ok and t_ok and s_ok
                bucket["selective_response"][1] += 1
                cluster_ok &= b_ok and t_ok and s_ok
        bucket["full_support"][0] += cluster_ok
        bucket["full_support"][1] += 1
    out = {}
    for rate in RATES:
        values = [b[rate][0] / b[rate][1] for b in per_dir.values() if b[rate][1]]
        out[rate] = sum(values) / len(values) if values else None
    return out


def _noisy_answers(seed: int):
    def answer(k: int, p) -> str | None:
        u = np.random.default_rng([seed, k, IW_PRESENTATIONS.index(p.presentation)]).random()
        if u < 0.1:
            return None
        if u < 0.25:
            return "ABC"[int(u * 1000) % 3]
        return p.gold

    return answer


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rates_match_their_definitions(items, seed):
    answer = _noisy_answers(seed)
    got = intervention_summary(_with_answers(items, answer), bootstrap=0)
    want = _expected(items, answer)
    for rate in RATES:
        assert got["rates"][rate] == pytest.approx(want[rate]), rate


def test_one_wrong_target_cell_in_one_direction(items):
    first = items[0]  # transition TRUE->FALSE

    def answer(k, p):
        if k == 0 and p.presentation == "target/TFU/generate":
            return "C"  # UNKNOWN instead of FALSE
        return p.gold

    got = intervention_summary(_with_answers(items, answer), bootstrap=0)
    clusters = sum(i.params["transition"] == first.params["transition"] for i in items)  # 4
    units = clusters * 12
    assert got["rates"]["target_follow"] == pytest.approx(((units - 1) / units + 5) / 6)
    assert got["rates"]["full_support"] == pytest.approx(((clusters - 1) / clusters + 5) / 6)
    assert got["rates"]["base_accuracy"] == 1.0 and got["rates"]["sham_stay"] == 1.0
    assert got["by_readout"]["score"]["target_follow"] == 1.0
    assert got["by_n"]["8"]["target_follow"] == 1.0  # cluster 0 is at n = 4
    assert got["by_n"]["4"]["target_follow"] == pytest.approx(
        ((units / 2 - 1) / (units / 2) + 5) / 6
    )


def test_bootstrap_resamples_whole_clusters_seeded(items):
    ev = _with_answers(items, _noisy_answers(4))
    a = intervention_summary(ev, bootstrap=300, seed=3)["bootstrap"]
    b = intervention_summary(ev, bootstrap=300, seed=3)["bootstrap"]
    assert a == b and a["B"] == 300
    for rate in RATES:
        est, low, high = a[rate]
        assert low <= est <= high
    assert analyze(ev, bootstrap=50)["summary"]["intervention"]["bootstrap"]["B"] == 50


@pytest.mark.parametrize(
    ("spec", "fails"),
    [
        ("ref:ideal", set()),
        ("ref:iw-stuck", {"target_follow", "selective_response", "full_support"}),
        ("ref:iw-jumpy", {"sham_stay", "selective_response", "full_support"}),
        ("ref:iw-letter", {"base_accuracy", "target_follow", "selective_response", "full_support"}),
    ],
)
def test_reference_policies_caught_by_their_metric(items, spec, fails):
    summary = analyze(
        evaluate(FAMILY, items, reference_policy(spec.split(":", 1)[1], spec)), bootstrap=0
    )["summary"]["intervention"]
    assert summary["validity"] == {"generate": 1.0, "score": 1.0}  # both readouts answered
    for rate in RATES:
        if rate in fails:
            assert summary["rates"][rate] < 0.5, (spec, rate)
        else:
            assert summary["rates"][rate] == 1.0, (spec, rate)


def test_the_policies_read_a_suite_s_own_instruction_whatever_lines_it_holds():
    # The instruction follows the options; lines like the prompt's own are the suite's words.
    instruction = (
        "Question: is zzz true, false, or unknown?\n- If a is true, then b is true.\nA) false\n"
        'Reply as "Answer: X".'
    )
    family = Intervention(instruction=instruction)
    items = family.design(levels=[4, 8], pairs=12, seed=5)
    for spec in ("ref:ideal", "ref:iw-stuck"):
        expected = analyze(
            evaluate(FAMILY, FAMILY.design(levels=[4, 8], pairs=12, seed=5), _policy(spec)),
            bootstrap=0,
        )["summary"]["intervention"]["rates"]
        got = analyze(evaluate(family, items, _policy(spec)), bootstrap=0)["summary"]
        assert got["intervention"]["rates"] == expected, spec


def _policy(spec: str):
    return reference_policy(spec.split(":", 1)[1], spec)


class Recording:
    """Answers right from the prompt's gold; records every call by readout."""

    def __init__(self, scoring: bool) -> None:
        self.name = "rec"
        self.calls: list[tuple[str, list[str]]] = []
        if scoring:
            self.score = self._score

    def generate(self, prompts):
        self.calls.append(("generate", [p.readout for p in prompts]))
        return [f"Answer: {p.gold}" for p in prompts]

    def _score(self, prompts, candidates):
        self.calls.append(("score", [p.readout for p in prompts]))
        return [{c: (0.0 if c == p.gold else -3.0) for c in candidates} for p in prompts]


def test_readouts_routed_one_batched_call_each(items):
    model = Recording(scoring=True)
    ev = evaluate(FAMILY, items, model)
    assert [kind for kind, _ in model.calls] == ["generate", "score"]
    for kind, readouts in model.calls:
        assert set(readouts) == {kind} and len(readouts) == len(items) * 18
    assert all(o.correct for row in ev.observations for o in row)


def test_generate_only_model_gets_explicit_invalid_score_cells(items):
    model = Recording(scoring=False)
    ev = evaluate(FAMILY, items, model)
    assert [kind for kind, _ in model.calls] == ["generate"]
    score_cells = [o for row in ev.observations for o in row if o.prompt.readout == "score"]
    assert len(score_cells) == len(items) * 18
    assert all(not o.valid and "cannot score" in o.parsed.reason for o in score_cells)
    summary = analyze(ev, bootstrap=0)["summary"]["intervention"]
    assert summary["validity"] == {"generate": 1.0, "score": 0.0}
    assert summary["by_readout"]["generate"]["selective_response"] == 1.0
    assert summary["by_readout"]["score"]["selective_response"] == 0.0


def test_cache_key_unchanged_for_generate_and_distinct_for_score(items):
    p = items[0].prompts[0]
    digest = hashlib.sha256()
    for part in ("id", p.system, p.text, "0"):
        data = part.encode()
        digest.update(len(data).to_bytes(8, "big") + data)
    assert p.readout == "generate" and cache_key("id", p) == digest.hexdigest()
    assert cache_key("id", replace(p, readout="score")) != cache_key("id", p)


def test_scored_answers_go_through_the_cache(items, tmp_path):
    model = Recording(scoring=True)
    model.cache_identity = "rec-v1"
    cache = ResponseCache(tmp_path / "c.sqlite")
    first = evaluate(FAMILY, items, CachedModel(model, cache))
    model.calls.clear()
    second = evaluate(FAMILY, items, CachedModel(model, cache))
    assert model.calls == []  # every generated and every scored answer came from the cache
    assert [o.parsed for row in first.observations for o in row] == [
        o.parsed for row in second.observations for o in row
    ]
    cache.close()


def test_records_round_trip_keeps_readout_and_metrics(items):
    ev = _with_answers(items, _noisy_answers(7))
    rows = json.loads(json.dumps(records(ev)))
    back = evaluation_from_records("hand", repr(FAMILY), rows)
    assert back.family.name == "intervention"
    assert [p.readout for i in back.items for p in i.prompts] == [
        p.readout for i in items for p in i.prompts
    ]
    assert intervention_summary(back, bootstrap=0) == intervention_summary(ev, bootstrap=0)
    for row in rows:
        del row["readout"]  # an archive written before the field existed
    old = evaluation_from_records("hand", repr(FAMILY), rows)
    assert {p.readout for i in old.items for p in i.prompts} == {"generate"}


def test_report_sections(items):
    result = analyze(
        evaluate(FAMILY, items, reference_policy("iw-stuck", "ref:iw-stuck")), bootstrap=100
    )
    lines = intervention_lines(result)
    assert lines[0].startswith("    intervention: 24 clusters; base acc 1.000")
    assert any("readout score" in line for line in lines)
    assert any(line.strip().startswith("TRUE->FALSE") for line in lines)
    assert "| readout generate |" in "\n".join(intervention_markdown(result))
    assert "Intervention worlds</h3>" in intervention_html(result)
    bare = {"summary": {}}
    assert intervention_lines(bare) == [] and intervention_markdown(bare) == []
    assert intervention_html(bare) == ""


def test_letter_policy_parameter(items):
    from pytest_competence.models import ModelSpecError

    model = reference_policy("iw-letter?letter=B", "ref:iw-letter?letter=B")
    assert model.name == "ref:iw-letter?letter=B"
    assert set(model.generate(items[0].prompts)) == {"Answer: B"}
    assert model.score(items[0].prompts[:1], ["A", "B", "C"])[0]["B"] == 0.0
    with pytest.raises(ModelSpecError, match="letter"):
        reference_policy("iw-letter?letter=D", "ref:iw-letter?letter=D")
