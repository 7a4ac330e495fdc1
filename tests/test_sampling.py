"""The greedy-server warning: attempts at temperature > 0 that never differ are named, once per
model, in the terminal, the JSON, the Markdown and the HTML (see ``report/_warnings.py``).

The fake server answers every prompt the same way whatever the temperature — a server that
decodes greedily — so a suite with ``attempts=3`` at ``temperature=1`` must warn, and the same
suite at temperature 0 (greedy on purpose) or with ``attempts=1`` must not. The real case,
``transformers serve`` against ``hf:`` sampling, is in ``tests/test_real_server.py``.
"""

from __future__ import annotations

import json

import pytest

import plugin_helpers  # noqa: F401  (the engine, imported before any in-process session)
from pytest_competence.report._warnings import document_warnings
from server_fixtures import fake_server_process, server  # noqa: F401  (fixtures)

SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4], pairs=8, attempts=3)
    def test_x(competence):
        pass

    @pytest.mark.competence(levels=[4], pairs=8, seed=2, attempts={attempts})
    def test_y(competence):
        pass
"""


def test_a_server_that_ignores_the_temperature_is_named_once_per_model(
    pytester: pytest.Pytester, server
):
    pytester.makepyfile(test_suite=SUITE.format(attempts=3))
    sampled = f"openai:ideal@{server.url}?temperature=1&seed=7"
    greedy = f"openai:ideal@{server.url}"
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        f"--competence-model={sampled}",
        f"--competence-model={greedy}",
        "--competence-json=out.json",
        "--competence-html=out.html",
        "--competence-markdown=out.md",
    )
    result.assert_outcomes(passed=4)
    message = (
        f"model {sampled!r}: every prompt sent 3 times at temperature 1 came back identical "
        f"each time (32 of 32 prompts, 2 test(s)): the server seems to decode greedily, so each "
        f"majority counts one answer 3 times. Turn sampling on at the server — for `transformers "
        f"serve`, give the checkpoint a generation config that samples (generation_config.json: "
        f'"do_sample": true) — or declare attempts=1'
    )
    lines = [line for line in result.outlines if line.startswith("WARNING: ")]
    assert lines == [f"WARNING: {message}"]  # once, for the model that asked to sample
    document = json.loads((pytester.path / "out.json").read_text("utf-8"))
    assert document["warnings"] == [{"kind": "greedy_server", "model": sampled, "message": message}]
    sampling = {r["model"]: r["sampling"] for r in document["results"] if "test_x" in r["test"]}
    assert sampling == {
        sampled: {"temperature": 1.0, "attempts": 3, "compared": 16, "varied": 0},
        greedy: {"temperature": 0.0, "attempts": 3, "compared": 16, "varied": 0},
    }
    assert f"> ⚠️ **Warning:** {message}" in (pytester.path / "out.md").read_text("utf-8")
    html = (pytester.path / "out.html").read_text("utf-8")
    assert "<h2>Warnings</h2>" in html and "seems to decode greedily" in html
    assert "&quot;do_sample&quot;: true" in html  # escaped like every other string


def test_single_sends_and_greedy_decoding_warn_of_nothing(pytester: pytest.Pytester, server):
    pytester.makepyfile(test_suite=SUITE.format(attempts=1).replace("attempts=3", "attempts=1"))
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        f"--competence-model=openai:ideal@{server.url}?temperature=1",
        "--competence-json=out.json",
    )
    result.assert_outcomes(passed=2)
    assert not [line for line in result.outlines if line.startswith("WARNING: ")]
    assert json.loads((pytester.path / "out.json").read_text("utf-8"))["warnings"] == []


def _result(model: str, **sampling: object) -> dict:
    return {"model": model, "sampling": sampling}


def test_one_test_whose_attempts_varied_clears_its_model():
    varied = _result("a", temperature=0.7, attempts=3, compared=10, varied=1)
    same = _result("a", temperature=0.7, attempts=3, compared=10, varied=0)
    assert document_warnings([same, varied]) == []
    assert [w["model"] for w in document_warnings([same, same])] == ["a"]
    assert "(20 of 20 prompts, 2 test(s))" in document_warnings([same, same])[0]["message"]
    # Nothing to judge: temperature 0 or unknown, one send, nothing compared, an older archive.
    assert (
        document_warnings(
            [
                _result("b", temperature=0.0, attempts=3, compared=10, varied=0),
                _result("c", temperature=None, attempts=3, compared=10, varied=0),
                _result("d", temperature=1.0, attempts=1, compared=0, varied=0),
                _result("e", temperature=1.0, attempts=3, compared=0, varied=0),
                {"model": "f"},
            ]
        )
        == []
    )
