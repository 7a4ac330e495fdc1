"""The candidate scores an evaluation keeps, and the output decomposition read from them.

Every backend with ``readout=score`` answers with :class:`~pytest_competence.models.readout.Scored`
text; the evaluation keeps each candidate's score as one float32 instance × presentation ×
answer array, through the response cache and the records file, so δ and s (CBE paper,
arXiv:2610.22894, App. E.3) come from the evaluation itself. Checked here against a second
``model.score`` pass, an independent computation on synthetic logits, a rerun from the cache and
a recomputation from the records; and the plugin's n/a path for models without internals.
"""

from __future__ import annotations

import hashlib
import json
import math
from urllib.parse import urlencode

import numpy as np
import pytest

from pytest_competence.engine.analysis import analyze
from pytest_competence.engine.cache import CachedModel, ResponseCache
from pytest_competence.engine.evaluate import evaluate, evaluate_chunks
from pytest_competence.engine.records import evaluation_from_records, records
from pytest_competence.models import resolve_model
from pytest_competence.models.readout import ReadoutError, Scored, best_candidate
from pytest_competence.probe import PromptRows, decompose, decompose_evaluation, score_matrix
from pytest_competence.strategies import Ordering
from server_fixtures import fake_server_process, server  # noqa: F401

DEFAULT, SIGNAL = 0.7, 0.4  # the synthetic model's δ and s, in logits


@pytest.fixture(scope="module")
def items():
    return Ordering().design(
        levels=[4, 6], pairs=40, seed=5, presentations=["original", "equivalent"]
    )


class Synthetic:
    """A scoring model with a known default and signal: m = δ + s·(±1 by gold) + noise, the
    noise a fixed function of the prompt text (so two passes agree)."""

    name = "synthetic"

    def score(self, prompts, candidates):
        out = []
        for p in prompts:
            digest = hashlib.sha256(p.text.encode()).digest()
            noise = int.from_bytes(digest[:4], "big") / 2**32 - 0.5
            margin = DEFAULT + (SIGNAL if p.gold == "yes" else -SIGNAL) + noise
            out.append({candidates[0]: margin / 2, candidates[1]: -margin / 2})
        return out

    def generate(self, prompts):
        return [best_candidate(s) for s in self.score(prompts, ("yes", "no"))]


def _independent(items, model):
    """δ and s per presentation, pooled, computed directly from a second score pass."""
    out = {}
    for k, name in enumerate(("original", "equivalent")):
        prompts = [item.prompts[k] for item in items]
        scores = model.score(prompts, ("yes", "no"))
        margins = np.array([s["yes"] - s["no"] for s in scores])
        gold = np.array([p.gold == "yes" for p in prompts])
        mu_yes, mu_no = margins[gold].mean(), margins[~gold].mean()
        out[name] = ((mu_yes + mu_no) / 2, (mu_yes - mu_no) / 2)
    return out


def test_scores_are_kept_as_one_compact_array(items):
    live = []
    evaluation = evaluate_chunks(
        Ordering(), lambda: [items], Synthetic(), each=lambda _, rows: live.extend(rows)
    )
    assert evaluation.score_answers == ("yes", "no")
    assert evaluation.scores.dtype == np.float32 and evaluation.scores.shape == (80, 2, 2)
    again = Synthetic().score([items[3].prompts[1]], ("yes", "no"))[0]
    assert evaluation.scores[3, 1].tolist() == pytest.approx([again["yes"], again["no"]])
    observed = live[3][1]
    assert observed.scores == (again["yes"], again["no"])
    assert type(observed.raw) is str  # the text alone: the scores are on the observation


def test_decomposition_from_the_evaluation_equals_a_second_score_pass(items):
    model = Synthetic()
    cells = {
        (c.presentation, c.level): c
        for c in decompose_evaluation(evaluate(Ordering(), items, model))
    }
    for name, (default, signal) in _independent(items, model).items():
        assert cells[name, None].default.estimate == pytest.approx(default, abs=1e-5)
        assert cells[name, None].signal.estimate == pytest.approx(signal, abs=1e-5)
        # the planted figures, within the noise: intervals by instance cover them
        assert cells[name, None].default.low < DEFAULT < cells[name, None].default.high
        assert cells[name, None].signal.low < SIGNAL < cells[name, None].signal.high
    prompts = [p for item in items for p in item.prompts]
    second = decompose(
        score_matrix(model.score(prompts, ("yes", "no")), ("yes", "no")), PromptRows.of(prompts)
    )
    for c in second:
        assert cells[c.presentation, c.level].default.estimate == pytest.approx(
            c.default.estimate, abs=1e-5
        )
        assert cells[c.presentation, c.level].accuracy.estimate == c.accuracy.estimate


def test_a_generating_model_has_no_scores_and_no_decomposition(items):
    evaluation = evaluate(Ordering(), items, resolve_model("ref:ideal"))
    assert evaluation.scores is None and decompose_evaluation(evaluation) is None
    assert "decomposition" not in analyze(evaluation, bootstrap=0)["summary"]


def test_a_tie_keeps_its_scores_and_a_missing_candidate_is_minus_infinity(items):
    tie = best_candidate({"yes": -0.5, "no": -0.5})
    assert isinstance(tie, ReadoutError) and tie.scores == {"yes": -0.5, "no": -0.5}
    unseen = best_candidate({"yes": -0.1, "no": -math.inf})
    assert isinstance(unseen, Scored) and unseen == "yes"

    class Ties:
        name = "ties"

        def generate(self, prompts):
            return [tie if k % 2 else unseen for k, _ in enumerate(prompts)]

    evaluation = evaluate(Ordering(), items[:4], Ties())
    assert evaluation.scores[0, 1].tolist() == [-0.5, -0.5]  # the tie: invalid, scored
    assert evaluation.scores[0, 0].tolist() == [np.float32(-0.1), -math.inf]
    assert not evaluation.array("valid")[0, 1]
    for c in decompose_evaluation(evaluation, B=0):  # -inf margins are no margins
        assert c.scored == (0 if c.presentation == "original" else c.prompts)


def test_scores_survive_records_and_a_reordered_answer_space(items):
    from dataclasses import replace

    flipped = [
        replace(
            item, prompts=(item.prompts[0], replace(item.prompts[1], answer_space=("no", "yes")))
        )
        for item in items[:6]
    ]
    evaluation = evaluate(Ordering(), flipped, Synthetic())
    direct = Synthetic().score([item.prompts[1] for item in flipped], ("yes", "no"))
    assert evaluation.scores[:, 1, 0].tolist() == pytest.approx([s["yes"] for s in direct])
    rebuilt = evaluation_from_records("synthetic", repr(Ordering()), records(evaluation))
    assert np.array_equal(rebuilt.scores, evaluation.scores)
    assert records(evaluation)[1]["scores"] == pytest.approx(
        {"no": direct[0]["no"], "yes": direct[0]["yes"]}
    )


def test_the_response_cache_keeps_the_scores(items, tmp_path):
    class Spy(Synthetic):
        cache_identity = "spy"
        calls = 0

        def generate(self, prompts):
            Spy.calls += len(prompts)
            return super().generate(prompts)

    cache = ResponseCache(tmp_path / "cache.sqlite")
    first = evaluate(Ordering(), items[:10], CachedModel(Spy(), cache))
    asked = Spy.calls
    again = evaluate(Ordering(), items[:10], CachedModel(Spy(), cache))
    assert Spy.calls == asked  # every answer from the cache
    assert np.array_equal(first.scores, again.scores)
    cache.close()


def test_openai_logprobs_give_the_decomposition_from_the_evaluation(server, items):
    query = urlencode({"readout": "score", "backoff": "0.01", "timeout": "10"})
    model = resolve_model(f"openai:ideal@{server.url}?{query}")
    evaluation = evaluate(Ordering(), items[:20], model)
    assert evaluation.scores is not None and np.isfinite(evaluation.scores).all()
    prompts = [p for item in items[:20] for p in item.prompts]
    second = score_matrix(model.score(prompts, ("yes", "no")), ("yes", "no"))
    assert np.allclose(evaluation.scores.reshape(-1, 2), second, atol=1e-6)
    summary = analyze(evaluation, bootstrap=200)["summary"]
    cells = summary["decomposition"]["cells"]
    assert summary["decomposition"]["scored"] == 40 and cells[0]["accuracy"][0] == 1.0
    json.dumps(summary["decomposition"])


@pytest.mark.parametrize("spec", ["ref:ideal", "py:models_here:answer"])
def test_models_without_internals_are_not_applicable_in_a_probed_run(pytester, spec):
    pytester.makepyfile(
        models_here="def answer(prompts):\n    return ['yes' for _ in prompts]\n",
        test_x="""
        import pytest

        @pytest.mark.competence(levels=[4], pairs=8)
        @pytest.mark.competence_probe(permutations=5)
        def test_x(competence):
            pass
        """,
    )
    pytester.syspathinsert()
    result = pytester.runpytest(
        "-p", "no:cacheprovider", f"--competence-model={spec}", "--competence-json=out.json"
    )
    assert result.ret in (0, 1)
    block = json.loads((pytester.path / "out.json").read_text())["results"][0]["probes"]
    assert block["status"] == "n/a" and "has no in-process internals" in block["reason"]
    assert block["settings"]["permutations"] == 5
    result.stdout.fnmatch_lines(["*probes: n/a — model*has no in-process internals*"])


def test_the_probe_marker_needs_a_competence_test(pytester):
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.mark.competence_probe()
        def test_x():
            pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*competence_probe probes a competence test's model*"])
    assert result.ret == pytest.ExitCode.INTERRUPTED


def test_a_three_answer_space_scored_per_prompt_gets_the_analogue():
    from pytest_competence.strategies.intervention import Intervention

    family = Intervention()
    design = family.design(levels=[4], pairs=12, seed=5)

    class GoldFirst:  # the gold letter at 0, the others at -3: s = 3, every δ_a = 0
        name = "gold-first"

        def generate(self, prompts):
            return [f"Answer: {p.gold}" for p in prompts]

        def score(self, prompts, candidates):
            return [{c: 0.0 if c == p.gold else -3.0 for c in candidates} for p in prompts]

    evaluation = evaluate(family, design, GoldFirst())
    readouts = [p.readout for p in design[0].prompts]
    scored = np.isfinite(evaluation.scores).all(axis=-1)
    assert scored.any(axis=0).tolist() == [r == "score" for r in readouts]  # generated: none
    cells = [c for c in decompose_evaluation(evaluation, B=0) if c.scored]
    assert cells and all(c.signal.estimate == pytest.approx(3.0) for c in cells)
    for c in cells:
        present = [a for a, n in c.gold_counts.items() if n]
        expected = {a: (3 - 1.5 * (len(present) - 1)) / len(present) for a in present}
        for a, want in expected.items():
            assert c.defaults[a].estimate == pytest.approx(want)


def test_an_http_model_is_not_applicable_and_still_decomposed(pytester, server):
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.mark.competence(levels=[4], pairs=8)
        def test_x(competence):
            pass
        """
    )
    query = urlencode({"readout": "score", "backoff": "0.01", "timeout": "10"})
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "-v",
        "--competence-cache=off",
        f"--competence-model=openai:ideal@{server.url}?{query}",
        "--competence-probe",
        "--competence-json=out.json",
    )
    result.assert_outcomes(passed=1)
    (r,) = json.loads((pytester.path / "out.json").read_text())["results"]
    assert r["probes"]["status"] == "n/a" and "has no in-process internals" in r["probes"]["reason"]
    cells = r["summary"]["decomposition"]["cells"]
    assert [c["accuracy"][0] for c in cells] == [1.0, 1.0]  # the server answers right
    assert all(c["signal"][0] > 0 for c in cells)  # its margins follow the gold
    result.stdout.fnmatch_lines(
        [
            "*output decomposition (δ: default toward yes, s: signal; from the evaluation's*",
            "*original *4 *8/8 *1.000 ?1.000, 1.000?*",
            "*probes: n/a — model 'openai:ideal@*' has no in-process internals*",
        ]
    )
