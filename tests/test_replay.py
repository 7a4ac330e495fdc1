"""Saved minimal cases are a regression corpus: a passing design still has to pass them."""

from __future__ import annotations

import json
import re

import pytest

SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4, 16], pairs=8)
    def test_order(competence):
        pass
"""

ONLY_NINE = """
    from pytest_competence.models.reference import POLICIES

    _ideal = POLICIES["ideal"]()

    def answer(prompts):
        # Right everywhere except on chains of exactly 9 people: the design (n = 4, 16) never
        # draws one, the case an earlier run saved (n* = 9) is one.
        flip = {"yes": "no", "no": "yes"}
        return [flip[_ideal(p)] if p.startswith("There are 9 people") else _ideal(p)
                for p in prompts]
"""


def test_a_saved_case_fails_a_checkpoint_whose_design_passes(pytester: pytest.Pytester):
    pytester.makepyfile(test_suite=SUITE)
    pytester.makepyfile(only_nine=ONLY_NINE)
    pytester.syspathinsert()
    first = pytester.runpytest("--competence-model", "ref:threshold?n=8")
    first.assert_outcomes(failed=1)
    first.stdout.fnmatch_lines(["*n=9*"])
    # Without the corpus the new checkpoint passes: its design never draws n = 9.
    clean = pytester.runpytest(
        "--competence-model", "py:only_nine:answer", "-o", "competence_database=none"
    )
    clean.assert_outcomes(passed=1)
    second = pytester.runpytest("--competence-model", "py:only_nine:answer")
    second.assert_outcomes(failed=1)
    second.stdout.fnmatch_lines(
        [
            "*every instance of the design passed, but a case in the example database (saved on "
            "* for ref:threshold?n=8) fails*",
        ]
    )
    # The ideal solver passes the design and the saved case alike.
    pytester.runpytest("--competence-model", "ref:ideal").assert_outcomes(passed=1)


def test_a_case_saved_earlier_in_the_same_run_says_so(pytester: pytest.Pytester):
    """Issue #24: the second model of one run replays what the first saved minutes ago; it
    reads "saved earlier in this run for …", not "by an earlier run"."""
    pytester.makepyfile(test_suite=SUITE)
    pytester.makepyfile(only_nine=ONLY_NINE)
    pytester.syspathinsert()
    result = pytester.runpytest("--competence-model", "ref:threshold?n=8,py:only_nine:answer")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*every instance of the design passed, but a case in the example database (saved "
            "earlier in this run for ref:threshold?n=8) fails*",
        ]
    )
    assert "earlier run" not in result.stdout.str()
    # The next run tells it apart: by then the second model had saved it for itself.
    again = pytester.runpytest("--competence-model", "py:only_nine:answer")
    again.stdout.fnmatch_lines(["*(saved as minimal on * UTC for this exact model) fails*"])
    assert "earlier in this run" not in again.stdout.str()


# -- the same name, another model ----------------------------------------------------------------


def _calls(result: pytest.RunResult) -> int:
    """The model calls the (one) minimal-case block of a run reports (before pytest's short
    summary, which repeats whole messages when the CI variable is set)."""
    text = result.stdout.str().split(" short test summary info ", 1)[0]
    found = re.findall(r"^    (\d+) model calls? \(", text, re.MULTILINE)
    assert len(found) == 1, result.stdout.str()
    return int(found[0])


def _minimal(pytester: pytest.Pytester) -> dict:
    document = json.loads((pytester.path / "out.json").read_text())
    return document["results"][0]["failing_case"]["minimal"]


def _as(pytester: pytest.Pytester, target: str, *args: str) -> pytest.RunResult:
    """Run the suite against ``qwen``, an alias pointing at ``target``."""
    pytester.makeini(f"[pytest]\ncompetence_models =\n    qwen = {target}\n")
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--competence-model",
        "qwen",
        "--competence-json",
        "out.json",
        *args,
    )
    result.assert_outcomes(failed=1)
    return result


def test_a_checkpoint_failing_earlier_under_the_same_name_gets_its_new_minimal_case(
    pytester: pytest.Pytester,
):
    pytester.makepyfile(
        test_suite="""
        import pytest

        @pytest.mark.competence(levels=[4, 512], pairs=4)
        def test_order(competence):
            pass
    """
    )
    _as(pytester, "ref:threshold?n=399").stdout.fnmatch_lines(["  minimal failing case: n=400, *"])
    fresh = _as(pytester, "ref:threshold?n=256", "-o", "competence_database=none")
    fresh.stdout.fnmatch_lines(["  minimal failing case: n=257, *"])
    # The alias now points at a checkpoint wrong from n = 257 on; the database says n = 400.
    second = _as(pytester, "ref:threshold?n=256")
    second.stdout.fnmatch_lines(
        [
            "  minimal failing case: n=257, *",
            "    * model calls (database replay 1, minimality check 1, boundary search *); *",
            "    boundary search on n for the failing instance's latent seed: n=257 fails, "
            "n=256 passes, in * calls (at most ⌈log₂ 398⌉ = 9)",
            "    Replayed from the example database (saved as minimal on * UTC for an earlier model "
            "under the same name): it still fails, but n=399 fails too now, so it is not minimal for "
            "the model just asked; minimisation continued from it to n=257. The smaller case replaces "
            "it in the example database. Asked 3 more times * Saved to the example database *",
        ]
    )
    assert "no shrinking calls" not in second.stdout.str()
    record = _minimal(pytester)
    assert record["status"] == "minimal" and record["source"] == "database"
    assert record["replay"]["continued_to"] == "n=257"
    assert record["replay"]["checked"] == [{"case": "n=399", "failed": True}]
    # Within a fresh minimisation's cost: the replay and the check are the two extra calls.
    assert _calls(second) <= _calls(fresh) + 2
    # The model did not change: one call checks the boundary, and n = 400 is no longer replayed.
    third = _as(pytester, "ref:threshold?n=256")
    third.stdout.fnmatch_lines(
        [
            "  minimal failing case: n=257, *",
            "    3 model calls (database replay 1, minimality check 1, asking again 1); 10 prompts, *",
            "    Regression replayed from the example database (saved as minimal on * UTC for this "
            "exact model) and checked minimal for the model just asked: n=256 passes (1 call), so no "
            "shrinking calls were spent. *",
        ]
    )
    assert _minimal(pytester)["status"] == "replayed"


CHECKPOINT = """
    from pytest_competence.models import resolve_model


    class Checkpoint:
        # Forward chaining for at most DEPTH rounds: wrong on positive programs of depth > DEPTH.
        policy = resolve_model("ref:horn-bounded?depth=%d")

        def generate(self, prompts):
            return self.policy.generate(prompts)
"""


def test_an_edited_py_model_of_a_non_ordering_family_gets_its_new_minimal_level(
    pytester: pytest.Pytester,
):
    pytester.makepyfile(
        test_suite="""
        import pytest

        @pytest.mark.competence(family="horn", vary="depth", levels=[2, 8], pairs=4)
        def test_horn(competence):
            pass
    """
    )
    pytester.syspathinsert()
    model = (
        "-p",
        "no:cacheprovider",
        "--competence-model",
        "py:checkpoint:Checkpoint",
        "--competence-json",
        "out.json",
    )
    pytester.makepyfile(checkpoint=CHECKPOINT % 6)
    pytester.runpytest(*model).stdout.fnmatch_lines(["  minimal failing case: horn n=7, *"])
    # Retrained under the same name: the file changes (and its size, so no stale bytecode).
    pytester.makepyfile(checkpoint=CHECKPOINT % 3 + "    # retrained\n")
    fresh = pytester.runpytest(*model, "-o", "competence_database=none")
    fresh.stdout.fnmatch_lines(["  minimal failing case: horn n=4, *"])
    second = pytester.runpytest(*model)
    second.stdout.fnmatch_lines(
        [
            "  minimal failing case: horn n=4, *latent index=0 seed=0",
            "    boundary search on n for the failing instance's latent seed: n=4 fails, n=3 passes, *",
            "    Replayed from the example database (saved as minimal on * for an earlier model under "
            "the same name): it still fails, but n=6 fails too now, *; minimisation continued from it "
            "to n=4. The smaller case replaces it in the example database. *",
        ]
    )
    assert _calls(second) <= _calls(fresh) + 2
    third = pytester.runpytest(*model)
    third.stdout.fnmatch_lines(
        [
            "    3 model calls (database replay 1, minimality check 1, asking again 1); *",
            "    Regression replayed from the example database (saved as minimal on * for this exact "
            "model) and checked minimal for the model just asked: n=3 passes (1 call)*",
        ]
    )


# -- model identity --------------------------------------------------------------------------------


def test_a_model_identity_names_the_model_behind_the_name(tmp_path):
    from pytest_competence.models import ModelWrapper, resolve_model
    from pytest_competence.models.identity import model_identity

    threshold = model_identity(resolve_model("ref:threshold?n=10"))
    assert threshold == model_identity(resolve_model("ref:threshold?n=10"))
    assert threshold != model_identity(resolve_model("ref:threshold?n=9"))
    # An alias is renamed to what the user typed; its identity is still the target's.
    aliased = resolve_model("qwen", {"qwen": "ref:threshold?n=10"})
    assert aliased.name == "qwen" and model_identity(aliased) == threshold
    assert model_identity(ModelWrapper(aliased)) == threshold  # the cache, the progress line
    # A py: model is its source file: edited under the same spec, it is another model.
    source = tmp_path / "checkpoint.py"
    source.write_text("def answer(prompts):\n    return ['yes'] * len(prompts)\n")
    before = model_identity(resolve_model(f"py:{source}:answer"))
    source.write_text("def answer(prompts):\n    return ['no'] * len(prompts)\n")
    after = model_identity(resolve_model(f"py:{source}:answer"))
    assert None not in (before, after) and before != after
    # An HTTP model is its served model name, endpoint and decoding.
    served = model_identity(resolve_model("openai:qwen@http://localhost:9/v1"))
    assert served == model_identity(resolve_model("openai:qwen@http://localhost:9/v1"))
    assert served != model_identity(
        resolve_model("openai:qwen@http://localhost:9/v1?temperature=1")
    )


def test_a_checkpoint_directory_identity_needs_no_weights(tmp_path):
    from pytest_competence.models.hf import HFModel
    from pytest_competence.models.identity import model_identity

    (tmp_path / "model.safetensors").write_bytes(b"step 1000")
    model = HFModel("hf:ckpt", tmp_path)
    before = model_identity(model)
    (tmp_path / "model.safetensors").write_bytes(b"step 2000 (retrained)")
    assert model_identity(model) != before and model._runner is None


# -- nothing saved anywhere: nothing to replay, nothing built ------------------------------------

BROKEN_SPACE = """
    import pytest
    from pytest_competence.strategies import Ordering

    class BrokenSpace(Ordering):
        def case_space(self, **kw):
            raise RuntimeError("this family's case space is broken")

    @pytest.mark.competence(family=BrokenSpace(), levels=[4], pairs=4)
    def test_order(competence):
        pass
"""


def test_the_replay_builds_no_case_space_when_no_database_holds_a_case(pytester: pytest.Pytester):
    """A first run (no example database on disk, none shared) pays nothing for the replay: the
    case space is not built. Once a database holds anything, the replay reads it and a broken
    case space is an error again; a failing model's minimisation always says so."""
    pytester.makepyfile(test_suite=BROKEN_SPACE)
    pytester.runpytest("--competence-model", "ref:ideal").assert_outcomes(passed=1)
    assert not (pytester.path / ".hypothesis").exists()
    (pytester.path / ".hypothesis" / "examples" / "someone-else").mkdir(parents=True)
    held = pytester.runpytest("--competence-model", "ref:ideal")
    held.assert_outcomes(failed=1)
    held.stdout.fnmatch_lines(["*this family's case space is broken*"])
    failing = pytester.runpytest(
        "--competence-model", "ref:threshold?n=2", "-o", "competence_database=none"
    )
    failing.assert_outcomes(failed=1)
    failing.stdout.fnmatch_lines(
        ["*minimisation stopped by an error: RuntimeError: this family's case space is broken*"]
    )


@pytest.mark.parametrize(
    ("local", "shared", "made", "expected"),
    [
        ("none", [], None, False),
        (".hypothesis/examples", [], None, False),
        (".hypothesis/examples", [], "empty", False),
        (".hypothesis/examples", [], "held", True),
        ("none", ["elsewhere/examples"], None, True),
        ("none", ["github:my-org/my-model"], None, True),
    ],
)
def test_may_hold_cases_reads_the_file_system_alone(tmp_path, local, shared, made, expected):
    from pytest_competence.minimise._casedb import may_hold_cases

    if made is not None:
        (tmp_path / ".hypothesis" / "examples").mkdir(parents=True)
    if made == "held":
        (tmp_path / ".hypothesis" / "examples" / "0123abcd").mkdir()
    assert may_hold_cases(local, shared, tmp_path) is expected


# -- the same suite from another working directory ------------------------------------------------


@pytest.mark.parametrize("second", ["suite", "."], ids=["from-the-suite", "from-its-parent"])
def test_a_suite_without_an_ini_file_replays_its_cases_from_any_working_directory(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, second: str
):
    """No ini file: pytest's rootdir is the common folder of the working directory and the
    test paths, so it moves with the working directory; the example database (and the
    response cache) are then taken from the test paths' own folder, and a case saved by a run
    from one directory is replayed by the same command from another (issue #49)."""
    suite, other = pytester.mkdir("suite"), pytester.mkdir("other")
    (suite / "test_suite.py").write_text(SUITE.replace("\n    ", "\n"))
    out = pytester.path / "out.json"
    args = (
        str(suite / "test_suite.py"),
        "-p",
        "no:cacheprovider",
        "--competence-model=ref:threshold?n=8",
        f"--competence-json={out}",
    )
    monkeypatch.chdir(other)
    first = pytester.runpytest(*args)
    first.stdout.fnmatch_lines([f"rootdir: {pytester.path}"])
    first.assert_outcomes(failed=1)
    assert _minimal(pytester)["source"] == "design"
    assert (suite / ".hypothesis" / "examples").is_dir()
    monkeypatch.chdir(pytester.path / second)
    again = pytester.runpytest(*args)
    again.assert_outcomes(failed=1)
    assert _minimal(pytester)["source"] == "database"
    assert not (pytester.path / ".hypothesis").exists()
