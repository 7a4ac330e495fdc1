"""No result is lost: every infrastructure error is a result of every report.

A model that raises, breaks the batch contract, cannot be called with a batch, cannot be imported
when its test needs it, or sits behind a dead server: each test × model is an ERROR with its
message, and the JSON archive (``outcome: "error"``), the Markdown summary and the HTML page hold
it — alone or beside a model that answers. An interrupted run keeps what finished.
"""

from __future__ import annotations

import json
import socket

import pytest

from plugin_helpers import ideal_py

SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4, 8], pairs=8)
    def test_x(competence):
        pass

    @pytest.mark.competence(levels=[4], pairs=8)
    def test_y(competence):
        pass
"""

MODELS = ideal_py("""
    def answer(prompts):
        return [_ideal(p) for p in prompts]

    def raises(prompts):
        raise RuntimeError("CUDA out of memory")

    def short(prompts):
        return [_ideal(p) for p in prompts][:-1]

    def not_a_list(prompts):
        return None

    def not_text(prompts):
        return [1 for _ in prompts]
""")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: Each broken model, and words its message must hold.
BROKEN = {
    "raises": "raised RuntimeError: CUDA out of memory",
    "short": "must return exactly one answer (or exception) per prompt",
    "not_a_list": "generate() returned a NoneType",
    "not_text": "the model returned a int, not text",
}


def _run(pytester: pytest.Pytester, *specs: str, args: tuple[str, ...] = ()) -> pytest.RunResult:
    pytester.syspathinsert()
    pytester.makepyfile(models=MODELS, test_s=SUITE)
    return pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--competence-model",
        ",".join(specs),
        "--competence-json=r.json",
        "--competence-markdown=r.md",
        "--competence-html=r.html",
        *args,
    )


def _check_archived(pytester: pytest.Pytester, spec: str, words: str) -> None:
    """``spec``'s two tests are results with ``outcome: "error"`` in every report."""
    document = json.loads((pytester.path / "r.json").read_text("utf-8"))
    mine = [r for r in document["results"] if r["model"] == spec]
    assert sorted(r["test"] for r in mine) == ["test_s.py::test_x[*]", "test_s.py::test_y[*]"]
    for r in mine:
        assert r["outcome"] == "error"
        assert r["errors"]["count"] == r["errors"]["prompts"] > 0
        assert words in r["errors"]["message"]
    records = (pytester.path / "r.records.jsonl").read_text("utf-8").splitlines()
    errored = [json.loads(line) for line in records if f'"model": "{spec}"' in line]
    assert len(errored) == sum(r["errors"]["prompts"] for r in mine)  # every prompt, none lost
    assert all(words in (record["error"] or "") for record in errored)
    markdown = (pytester.path / "r.md").read_text("utf-8")
    html = (pytester.path / "r.html").read_text("utf-8")
    for r in mine:
        assert r["nodeid"] in markdown and r["nodeid"] in html
    for text in (markdown, html):  # the message, and why there is no verdict on the model
        assert text.count("so the condition was not judged") >= len(mine)
        assert words in text


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_a_broken_model_is_archived_as_an_error_alone(pytester: pytest.Pytester, broken: str):
    spec = f"py:models:{broken}"
    result = _run(pytester, spec)
    result.assert_outcomes(errors=2)
    _check_archived(pytester, spec, BROKEN[broken])


def test_broken_models_are_archived_beside_one_that_answers(pytester: pytest.Pytester):
    specs = ["py:models:answer", *(f"py:models:{b}" for b in sorted(BROKEN))]
    result = _run(pytester, *specs)
    result.assert_outcomes(passed=2, errors=2 * len(BROKEN))
    for broken, words in BROKEN.items():
        _check_archived(pytester, f"py:models:{broken}", words)
    document = json.loads((pytester.path / "r.json").read_text("utf-8"))
    assert [r["outcome"] for r in document["results"] if r["model"] == specs[0]] == ["passed"] * 2


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("raise RuntimeError('no GPU here')\n\ndef answer(p):\n    return p\n", "no GPU here"),
        ("import numpyy\n\ndef answer(p):\n    return p\n", "No module named 'numpyy'"),
        (
            "def answer(prompts, temperature):\n    return prompts\n",
            "cannot be called with one list of prompts",
        ),
    ],
    ids=["raises-on-import", "import-fails", "wrong-signature"],
)
def test_a_model_that_cannot_be_loaded_when_needed_is_archived(
    pytester: pytest.Pytester, source: str, words: str
):
    """The default model (``competence_default_model``) is loaded when a test first needs it;
    a module that cannot be, or an object of the wrong signature, is an error of each of its
    tests, with why."""
    pytester.makeini("[pytest]\ncompetence_default_model = py:gpu_only:answer\n")
    pytester.makepyfile(gpu_only=source)
    pytester.syspathinsert()
    pytester.makepyfile(test_s=SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider", "--competence-json=r.json")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines([f"*competence_default_model: *{words}*"])
    document = json.loads((pytester.path / "r.json").read_text("utf-8"))
    assert [r["outcome"] for r in document["results"]] == ["error", "error"]
    assert all(words in r["errors"]["message"] for r in document["results"])


def test_a_dead_server_is_archived_beside_one_that_answers(pytester: pytest.Pytester):
    dead = f"openai:m@http://127.0.0.1:{_closed_port()}/v1"
    result = _run(pytester, "py:models:answer", dead, args=("--competence-cache=off",))
    result.assert_outcomes(passed=2, errors=2)
    _check_archived(pytester, dead, "cannot be reached")


def test_an_interrupted_run_keeps_what_finished(pytester: pytest.Pytester):
    """Ctrl-C during the second test: the first test's result is archived, the run says it was
    interrupted, and nothing blames the model."""
    pytester.syspathinsert()
    pytester.makepyfile(
        models=ideal_py("""
            def answer(prompts):
                if any("8 people" in p for p in prompts):
                    raise KeyboardInterrupt  # what Ctrl-C does in the middle of a call
                return [_ideal(p) for p in prompts]
        """),
        test_s="""
            import pytest

            @pytest.mark.competence(levels=[4], pairs=8)
            def test_a(competence):
                pass

            @pytest.mark.competence(levels=[8], pairs=8)
            def test_b(competence):
                pass
        """,
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--competence-model=py:models:answer", "--competence-json=r.json"
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        ["competence: the run was interrupted; the reports hold the 1 test × model result(s)*"]
    )
    document = json.loads((pytester.path / "r.json").read_text("utf-8"))
    assert [(r["test"], r["outcome"]) for r in document["results"]] == [
        ("test_s.py::test_a[*]", "passed")
    ]


def test_a_run_whose_every_pair_is_not_applicable_is_archived_and_not_green(
    pytester: pytest.Pytester,
):
    """A shortcut of another family reads none of the suite's prompts: every pair is n/a. The
    reports still say so, and a run that evaluated nothing is not green."""
    pytester.makepyfile(test_s=SUITE)
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--competence-model=ref:horn-if-then",
        "--competence-json=r.json",
        "--competence-markdown=r.md",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(
        ["competence: nothing was evaluated: every competence test × model was n/a *"]
    )
    document = json.loads((pytester.path / "r.json").read_text("utf-8"))
    assert document["results"] == [] and len(document["not_applicable"]) == 2
    assert "test_s.py::test_x[ref:horn-if-then]" in (pytester.path / "r.md").read_text("utf-8")
