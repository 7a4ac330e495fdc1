"""Minimisation through the plugin: the failure message, the example database, xdist, reports.

Every test runs real pytest sessions with ``pytester``, in-process unless isolation matters.
"""

from __future__ import annotations

import json
import re
import sys

import pytest
from tests.test_plugin import assert_no_internals, esc

# Imported before any in-process session (pytester restores sys.modules after each one).
import pytest_competence.minimise._asking  # noqa: F401
import pytest_competence.minimise._casedb  # noqa: F401
import pytest_competence.minimise._shrink  # noqa: F401
import pytest_competence.plugin._falsify  # noqa: F401

SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4, 8, 16, 32], pairs=16)
    def test_grid(competence):
        pass
"""


def minimal_section(output: str) -> list[str]:
    """The lines of the first minimal-case block of a failure message, prompts left out."""
    lines = output.splitlines()
    start = next(
        i for i, line in enumerate(lines) if re.match(r"^  (minimal |smallest )?failing case", line)
    )
    block = []
    for line in lines[start:]:
        if line.startswith(("=", "_")) or not line.startswith("  "):
            break
        if not line.lstrip().startswith("prompt:"):
            block.append(line)
    return block


def test_failure_message_shows_the_minimal_case_and_the_calls_it_cost(pytester: pytest.Pytester):
    pytester.makepyfile(test_x=SUITE)
    result = pytester.runpytest("--competence-model", "ref:threshold?n=11")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "  first failing level: n=16: *",
            "  minimal failing case: n=12, vocabulary=front_behind, cell=forward/yes, 1 of 11 premises "
            "rewritten (the last in chain order), every names line and premise order in chain order, "
            "latent index=0 seed=0",
            "    * model calls (boundary search *, Hypothesis shrinking *, asking again 2); "
            "* prompts, *",
            "    boundary search on n for the failing instance's latent seed: n=12 fails, n=11 passes, "
            "in 4 calls (at most ⌈log₂ 15⌉ = 4)",
            esc("    [original] gold=yes parsed=yes raw='yes' → correct"),
            "      prompt: There are 12 people standing in some order. *",
            esc("    [equivalent] gold=yes parsed=no raw='no' → WRONG"),
            "      prompt: There are 12 people *Helen is behind Bette. Is Hallie in front of Helen?*",
            "    Asked 3 more times with fresh sends, it fails the same way every time. Saved to the "
            "example database .hypothesis/examples; the next run replays it first.",
        ]
    )
    assert_no_internals(result.stdout.str())


def test_a_second_run_replays_the_saved_case_and_checks_only_its_boundary(
    pytester: pytest.Pytester,
):
    pytester.makepyfile(test_x=SUITE)
    args = ("--competence-model", "ref:threshold?n=11", "--competence-json", "out.json")
    pytester.runpytest(*args).assert_outcomes(failed=1)
    first = json.loads((pytester.path / "out.json").read_text())
    result = pytester.runpytest(*args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "  minimal failing case: n=12, vocabulary=front_behind, *",
            "    3 model calls (database replay 1, minimality check 1, asking again 1); 10 prompts, *",
            "    Regression replayed from the example database (saved as minimal on * UTC for this "
            "exact model) and checked minimal for the model just asked: n=11 passes (1 call), so no "
            "shrinking calls were spent. *",
        ]
    )
    second = json.loads((pytester.path / "out.json").read_text())
    before, after = (d["results"][0]["failing_case"]["minimal"] for d in (first, second))
    assert after["status"] == "replayed" and after["shrinking_calls"] == 0
    assert after["calls"] == {"replay": 1, "check": 1, "confirm": 1, "total": 3}
    assert after["case"] == before["case"] and before["status"] == "minimal"
    assert before["replay"] is None and before["model_identity"] == after["model_identity"]
    assert after["replay"]["saved_for"] == "same" and after["replay"]["saved_as_minimal"]
    assert after["replay"]["checked"] == [{"case": "n=11", "failed": False}]
    assert after["replay"]["continued_to"] is None


def failures(result: pytest.RunResult) -> str:
    """The FAILURES section alone: the short summary may repeat a message, depending on the
    terminal width pytest sees."""
    text = result.stdout.str()
    return text.split(" FAILURES ", 1)[-1].split(" short test summary info ", 1)[0]


def test_xdist_workers_minimise_and_share_the_database(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_a=SUITE,
        test_b="""
        import pytest

        @pytest.mark.parametrize("vocabulary", ["left_right", "older_younger"])
        @pytest.mark.competence(levels=[4, 16], pairs=8)
        def test_catalog(competence, vocabulary):
            pass
    """,
    )
    args = (
        "-n",
        "2",
        "-p",
        "no:cacheprovider",
        "--competence-model",
        "ref:threshold?n=9,ref:always-yes",
    )
    first = pytester.runpytest_subprocess(*args)
    first.assert_outcomes(failed=6)
    assert len(re.findall(r"^  minimal failing case: ", failures(first), re.MULTILINE)) == 6
    saved = [p for p in (pytester.path / ".hypothesis" / "examples").rglob("*") if p.is_file()]
    assert saved
    second = pytester.runpytest_subprocess(*args)
    second.assert_outcomes(failed=6)
    assert failures(second).count("no shrinking calls were spent") == 6
    assert_no_internals(second.stdout.str())


def test_minimisation_can_be_turned_off_or_bounded(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.mark.competence_shrink(calls=0)
        @pytest.mark.competence(levels=[4, 512], pairs=4)
        def test_off(competence):
            pass

        @pytest.mark.competence_shrink(calls=4)
        @pytest.mark.competence(levels=[4, 1024], pairs=4)
        def test_bounded(competence):
            pass
    """
    )
    result = pytester.runpytest(
        "--competence-model", "ref:threshold?n=300", "-o", "competence_database=none"
    )
    result.assert_outcomes(failed=2)
    text = result.stdout.str()
    off = text.split("test_off")[1].split("test_bounded")[0]
    assert "minimal failing case" not in off
    result.stdout.fnmatch_lines(
        [
            "  smallest failing case found within the budget (may not be minimal): n=*",
            "    Minimisation stopped at its budget (4 calls, 300 s): this is the smallest failing "
            "case found so far and may not be minimal; *Not saved (no writable example database).",
        ]
    )


def test_minimisation_settings_from_ini(pytester: pytest.Pytester):
    pytester.makeini("""
        [pytest]
        competence_shrink_calls = 0
    """)
    pytester.makepyfile(test_x=SUITE)
    result = pytester.runpytest("--competence-model", "ref:always-yes")
    result.assert_outcomes(failed=1)
    result.stdout.no_fnmatch_line("*minimal failing case*")


@pytest.mark.parametrize(
    "marker, message",
    [
        ("competence_shrink(calls=-1)", "Expected calls to be an integer >= 0, but got calls=-1"),
        (
            "competence_shrink(seconds='soon')",
            "Expected seconds to be a positive number of seconds",
        ),
        ("competence_shrink(attempts=0)", "Expected attempts to be an integer >= 1"),
        (
            "competence_shrink(vocab=False)",
            "unknown arguments ['vocab']; expected some of calls, seconds, attempts, outside",
        ),
        ("competence_shrink(60)", "takes keyword arguments only"),
        ("competence_shrink(outside='no')", "Expected outside=True or False, but got outside='no'"),
        (
            "competence_shrink(vocabulary=False)",
            "vocabulary= is gone: the minimal case keeps the suite's vocabulary",
        ),
    ],
)
def test_bad_shrink_marker_arguments_are_collection_errors(
    pytester: pytest.Pytester, marker, message
):
    pytester.makepyfile(
        test_x=f"""
        import pytest

        @pytest.mark.{marker}
        @pytest.mark.competence(levels=[4], pairs=8)
        def test_x(competence):
            pass
    """
    )
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*test_x.py::test_x: @pytest.mark.competence_shrink: " + esc(message) + "*"]
    )
    assert_no_internals(result.stdout.str())


def test_a_bad_ini_value_is_a_usage_error(pytester: pytest.Pytester):
    pytester.makeini("[pytest]\ncompetence_shrink_seconds = never\n")
    pytester.makepyfile(test_x=SUITE)
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*ini option Expected competence_shrink_seconds to be a positive "
            "number of seconds, but got competence_shrink_seconds='never'*"
        ]
    )


def test_a_failure_that_does_not_reproduce_is_said_in_plain_words(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.mark.competence(levels=[4, 8], pairs=8)
        def test_greedy(competence):
            pass

        @pytest.mark.competence(levels=[4, 8], pairs=8, attempts=3)
        def test_majority(competence):
            pass
    """
    )
    result = pytester.runpytest("--competence-model", "ref:sampled?p=0.5&seed=1")
    result.assert_outcomes(failed=2)
    text = result.stdout.str()
    assert "Flaky" not in text and "Traceback" not in text
    assert_no_internals(text)
    for block in text.split("Competence condition failed")[1:]:
        assert (
            "The failure did not reproduce: asked the same prompts 3 more times" in block
            or "it fails the same way every time" in block
        ), block
    result.stdout.fnmatch_lines(
        [
            "  failing case (did not reproduce): n=*",
            "    The failure did not reproduce: *Its answers change from one send to the next, so this "
            "case is neither minimised nor saved; declare attempts=5 *",
        ]
    )


def test_a_threshold_failure_is_minimised_too(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.mark.competence(levels=[4, 8, 16], pairs=16, require="robust_correct >= 0.95")
        def test_gate(competence):
            pass
    """
    )
    result = pytester.runpytest("--competence-model", "ref:threshold?n=6")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "  first failing level: n=8: robust_correct = 0.0000, required >= 0.95",
            "  minimal failing case: n=7, *",
        ]
    )


def test_reports_carry_the_minimal_case(pytester: pytest.Pytester):
    pytester.makepyfile(test_x=SUITE)
    result = pytester.runpytest(
        "--competence-model",
        "ref:ideal,ref:threshold?n=11",
        "--competence-json",
        "out.json",
        "--competence-markdown",
        "out.md",
        "--competence-html",
        "out.html",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_grid[[]ref:threshold?n=11[]]  FAILED*",
            "    minimal failing case: n=12, vocabulary=front_behind, * (* model calls)",
        ]
    )
    document = json.loads((pytester.path / "out.json").read_text())
    passed, failed = document["results"]
    assert passed["failing_case"] is None
    minimal = failed["failing_case"]["minimal"]
    assert minimal["status"] == "minimal" and minimal["reproduced"] and minimal["complete"]
    assert minimal["params"]["n"] == 12 and minimal["params"]["rewritten"] == 1
    assert [o["presentation"] for o in minimal["observations"]] == ["original", "equivalent"]
    assert [o["correct"] for o in minimal["observations"]] == [True, False]
    assert minimal["calls"]["total"] == sum(v for k, v in minimal["calls"].items() if k != "total")
    assert minimal["boundary"]["n"] == 12 and minimal["saved"]
    markdown = (pytester.path / "out.md").read_text()
    assert "- Minimal failing case (" in markdown and "n=12, vocabulary=front_behind" in markdown
    html = (pytester.path / "out.html").read_text()
    assert "<h3>First failing case of the design</h3>" in html
    assert "<h3>Minimal failing case</h3>" in html and "n=12, vocabulary=front_behind" in html
    # Re-rendering the archive keeps the record: minimisation cannot be recomputed from records.
    out = pytester.run(
        sys.executable,
        "-m",
        "pytest_competence.cli",
        "report",
        "out.json",
        "--markdown",
        "again.md",
    )
    assert out.ret == 0
    assert "n=12, vocabulary=front_behind" in (pytester.path / "again.md").read_text()


def test_a_shared_read_only_database_is_replayed_and_left_alone(pytester: pytest.Pytester):
    pytester.makepyfile(test_x=SUITE)
    model = ("--competence-model", "ref:threshold?n=11")
    pytester.runpytest(*model, "-o", "competence_database=main-db").assert_outcomes(failed=1)
    shared = sorted(p.relative_to(pytester.path) for p in (pytester.path / "main-db").rglob("*"))
    result = pytester.runpytest(
        *model, "-o", "competence_database=pr-db", "-o", "competence_database_shared=main-db"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["    Regression replayed from the example database*"])
    assert (
        sorted(p.relative_to(pytester.path) for p in (pytester.path / "main-db").rglob("*"))
        == shared
    )


# -- issue #24: the suite's declared design space; a model that raises while minimising --------

OUTSIDE_MODEL = """
from pytest_competence.models import resolve_model

THRESHOLD = resolve_model("ref:threshold?n=12")
FLIP = {"yes": "no", "no": "yes"}


class FrontOnly:
    # As ref:threshold?n=12 on front_behind; always wrong on any other vocabulary.
    name = "py:models:front_only"

    def generate(self, prompts):
        out = THRESHOLD.generate(prompts)
        return [
            a if p.params.get("vocabulary") == "front_behind" else FLIP.get(a, a)
            for p, a in zip(prompts, out)
        ]


class Crashes:
    # As ref:threshold?n=12, but it raises on the small cases only minimisation asks.
    name = "py:models:crashes"

    def generate(self, prompts):
        if any(p.params.get("n", 4) < 4 for p in prompts):
            match = None
            return match.groups()
        return THRESHOLD.generate(prompts)


front_only = FrontOnly()
crashes = Crashes()
"""

FRONT_BEHIND = """
    import pytest

    @pytest.mark.competence(levels=[4, 8, 16], pairs=16, vocabulary="front_behind")
    def test_front_behind(competence):
        pass
"""


def test_the_minimal_case_stays_in_the_suites_design_and_a_wider_one_is_a_finding_of_its_own(
    pytester: pytest.Pytester,
):
    """Issue #24 item 2: the suite declares front_behind and the model is right up to n=12 on
    it; the test's minimal case is the suite's (n=13, front_behind). The simpler case in a
    vocabulary the suite never tests is reported apart, saved under its own key, never
    replayed as the test's case; competence_shrink_outside = false turns that search off."""
    pytester.makepyfile(models=OUTSIDE_MODEL, test_x=FRONT_BEHIND)
    pytester.syspathinsert()
    args = ("--competence-model=py:models:front_only", "--competence-json", "out.json")
    result = pytester.runpytest(*args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "  minimal failing case: n=13, vocabulary=front_behind, *",
            "  also fails outside this suite: n=*, vocabulary=ahead_behind, *",
            "    a case this suite's design cannot draw, found in * more call*; not the test's "
            "failing case, and saved to .hypothesis/examples under a key of its own*",
        ]
    )
    minimal = json.loads((pytester.path / "out.json").read_text())["results"][0]["failing_case"][
        "minimal"
    ]
    assert minimal["params"]["n"] == 13 and minimal["params"]["vocabulary"] == "front_behind"
    outside = minimal["outside"]
    assert outside["params"]["vocabulary"] != "front_behind" and outside["saved"]
    assert outside["params"]["n"] < 13
    # The next run replays the suite's own case, not the one outside it.
    again = pytester.runpytest(*args)
    again.assert_outcomes(failed=1)
    again.stdout.fnmatch_lines(["  minimal failing case: n=13, vocabulary=front_behind, *"])
    replayed = json.loads((pytester.path / "out.json").read_text())["results"][0]
    assert replayed["failing_case"]["minimal"]["replay"]["case"]["n"] == 13
    off = pytester.runpytest(*args, "-o", "competence_shrink_outside=false", "-p", "no:randomly")
    off.assert_outcomes(failed=1)
    assert "also fails outside this suite" not in off.stdout.str()
    assert (
        "outside"
        not in json.loads((pytester.path / "out.json").read_text())["results"][0]["failing_case"][
            "minimal"
        ]
    )


def test_a_model_that_raises_while_minimising_is_named_with_where_and_on_what(
    pytester: pytest.Pytester,
):
    """Issue #24 item 3: an exception of the model during minimisation is attributed as in the
    main evaluation: the model, the exception, file:line and the prompt it was asked."""
    pytester.makepyfile(models=OUTSIDE_MODEL, test_x=FRONT_BEHIND)
    pytester.syspathinsert()
    result = pytester.runpytest(
        "--competence-model=py:models:crashes", "-o", "competence_shrink_outside=false"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "  first failing level: n=16: *",
            "  minimisation stopped: model 'py:models:crashes' raised AttributeError: 'NoneType' "
            "object has no attribute 'groups' (at *models.py:*) instead of answering * (the "
            "first: ordering/* [[]original[]] ?There are * people *)",
        ]
    )
    assert "minimisation stopped by an error" not in result.stdout.str()
