"""The probes in a pytest run: ``--competence-probe`` and ``@pytest.mark.competence_probe`` on a
tiny ``hf:`` model (``tests/tiny_llama.py``, CPU), in every report, under ``-n 2`` too.

The probed run must read exactly the design the test evaluated: its probe block equals
:func:`~pytest_competence.probe.probe_evaluation` run here on the same design, and the
decomposition in the summary (from the evaluation's own candidate scores) equals one computed
from a second ``model.score`` pass. A failing condition still gets its probes; a setting the
model cannot take fails the test with the setting's name; a bound too small is n/a.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from pytest_competence.engine.evaluate import evaluate  # noqa: E402
from pytest_competence.models import resolve_model  # noqa: E402
from pytest_competence.probe import (  # noqa: E402
    PromptRows,
    decompose,
    probe_evaluation,
    score_matrix,
)
from pytest_competence.strategies import Ordering  # noqa: E402
from tiny_llama import build  # noqa: E402

pytestmark = pytest.mark.slow

LEVELS, PAIRS, SEED = [4, 8], 16, 1
SUITE = f"""
import pytest

@pytest.mark.competence(levels={LEVELS}, pairs={PAIRS}, seed={SEED})
@pytest.mark.competence_probe(permutations=10{{extra}})
def test_probed(competence):
    {{body}}
"""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A 3-block random Llama whose tokenizer knows the design's words."""
    items = Ordering().design(
        levels=[2, *LEVELS], pairs=PAIRS, seed=SEED, presentations=["original", "equivalent"]
    )
    folder = build(
        tmp_path_factory.mktemp("tiny-probe"), [p for i in items for p in i.prompts], layers=3
    )
    return f"hf:{folder}?readout=score&device=cpu&batch_size=8"


def _run(pytester, spec, *args, extra="", body="pass"):
    pytester.makepyfile(test_probed=SUITE.format(extra=extra, body=body))
    return pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--competence-cache=off",
        f"--competence-model={spec}",
        "--competence-json=out.json",
        *args,
    )


def _results(pytester):
    return json.loads((pytester.path / "out.json").read_text())["results"]


def test_a_probed_run_reports_the_design_it_evaluated(pytester, tiny):
    body = "report = competence.probes\n    assert report.layers == (0, 1, 2, 3)"
    result = _run(
        pytester, tiny, "-v", "--competence-html=r.html", "--competence-markdown=r.md", body=body
    )
    result.assert_outcomes(failed=1)  # a random model fails the strict condition...
    (r,) = _results(pytester)
    block = r["probes"]  # ...and still gets its probes
    assert block["status"] == "ok" and block["layers"] == [0, 1, 2, 3] and block["unread"] == 0
    assert block["prompts"] == len(LEVELS) * PAIRS * 2 and block["patch"] == "equivalent"
    cells = [(c["presentation"], c["level"]) for c in block["probes"]]
    assert cells == [(p, n) for p in ("original", "equivalent") for n in (*LEVELS, None)]

    model = resolve_model(tiny)
    family = Ordering()
    items = family.design(levels=LEVELS, pairs=PAIRS, seed=SEED)
    again = probe_evaluation(evaluate(family, items, model), model, permutations=10, B=2000)
    ours = again.to_dict()
    for got, want in zip(block["probes"], ours["probes"]):
        assert got["auroc"] == want["auroc"] and got["null_high"] == want["null_high"]
    assert block["patching"] == ours["patching"]

    prompts = [p for item in items for p in item.prompts]
    second = decompose(
        score_matrix(model.score(prompts, ("yes", "no")), ("yes", "no")),
        PromptRows.of(prompts),
        B=0,
    )
    decomposition = r["summary"]["decomposition"]
    assert decomposition["scored"] == decomposition["prompts"] == len(prompts)
    for got, want in zip(decomposition["cells"], second):
        assert (got["presentation"], got["level"]) == (want.presentation, want.level)
        assert got["default"][0] == pytest.approx(want.default.estimate, rel=1e-4, abs=1e-6)
        assert got["signal"][0] == pytest.approx(want.signal.estimate, rel=1e-3, abs=1e-6)
        assert got["accuracy"][0] == want.accuracy.estimate

    result.stdout.fnmatch_lines(
        [
            "*output decomposition (δ: default toward yes, s: signal; from the evaluation's*",
            "*probes (cpu float32, residual layers 0–3, 64 prompts*gold AUROC ≥ 0.9*",
            "*logit lens:*",
        ]
    )
    html = (pytester.path / "r.html").read_text()
    assert html.count('id="result-0-probes"') == 1 and "Gold probe AUROC by layer, n = 4" in html
    assert html.count("<svg") >= 4 + 3  # the profile's four, then one per level and pooled
    charts = html[html.index('id="result-0-probes"') :]
    # Each chart draws a grey null band per presentation (original, equivalent), under its line.
    assert charts.count('fill="#8c8c8c" opacity="0.22"') == 2 * 3
    assert "grey: 95% shuffled-label null" in charts and "residual layer" in charts
    markdown = (pytester.path / "r.md").read_text()
    assert "Output decomposition" in markdown and "| presentation | n | instances |" in markdown


def test_the_option_probes_every_test_under_xdist(pytester, tiny):
    pytester.makepyfile(
        test_two=f"""
        import pytest

        @pytest.mark.competence(levels=[4], pairs={PAIRS}, seed={SEED})
        def test_one(competence):
            pass

        @pytest.mark.competence(levels=[8], pairs={PAIRS}, seed={SEED}, presentations=["original"])
        def test_two(competence):
            pass
        """
    )
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "-n",
        "2",
        "--competence-cache=off",
        f"--competence-model={tiny}",
        "--competence-probe",
        "--competence-json=out.json",
    )
    result.assert_outcomes(failed=2)
    one, two = sorted(_results(pytester), key=lambda r: r["nodeid"])
    assert one["probes"]["status"] == two["probes"]["status"] == "ok"
    assert one["probes"]["settings"]["permutations"] == 100  # the defaults
    assert one["probes"]["patch"] == "equivalent" and one["probes"]["patching"] is not None
    assert two["probes"]["patching"] is None  # no equivalent to patch into: said, not an error
    assert "no 'equivalent' presentation" in two["probes"]["patch_reason"]


def test_a_setting_the_model_cannot_take_fails_the_test_with_its_name(pytester, tiny):
    result = _run(pytester, tiny, "--competence-report-only", extra=", layers=[0, 9]")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*@pytest.mark.competence_probe: layers must be distinct residual indices in 0 … 3*"]
    )
    assert "Traceback" not in result.stdout.str()
    assert _results(pytester)[0]["probes"]["status"] == "error"


def test_a_bound_too_small_is_not_applicable(pytester, tiny):
    _run(pytester, tiny, "--competence-report-only", extra=", max_mib=0.001, layers=[1, 3]")
    block = _results(pytester)[0]["probes"]
    assert block["status"] == "n/a"
    assert (
        "× 2 layers × 32 would take" in block["reason"] and "over max_mib=0.001" in block["reason"]
    )


def test_the_probes_see_the_backends_batches_and_precision(pytester, tiny):
    _run(pytester, tiny.replace("batch_size=8", "batch_size=3"), extra=", precision='float16'")
    block = _results(pytester)[0]["probes"]
    assert block["status"] == "ok" and block["precision"] == "float16"
    assert block["state_mib"] == pytest.approx((64 * 4 * 32 * 2 + 64 * 5 * 2 * 4) / 2**20, abs=1e-3)
    assert np.isfinite([a for c in block["probes"] for a in c["auroc"]]).all()
