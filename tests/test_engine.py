"""Unit tests of the engine: answer parsing, answer maps, profiles, conditions, model specs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_competence import strategies as families
from pytest_competence.engine.conditions import CompetenceFailure, Condition, parse_condition
from pytest_competence.engine.evaluate import evaluate
from pytest_competence.engine.profile import profile
from pytest_competence.models import (
    ModelProtocolError,
    ModelSpecError,
    parse_aliases,
    resolve_model,
)
from pytest_competence.strategies import AnswerMap, InvalidArgument, Ordering, parse_choice


def test_public_names_exist():
    for name in families.__all__:
        assert hasattr(families, name), name
    import pytest_competence

    for name in pytest_competence.__all__:
        assert getattr(pytest_competence, name) is not None


@pytest.mark.parametrize(
    "text, answer",
    [
        ("yes", "yes"),
        ("No.", "no"),
        ("  YES  ", "yes"),
        ("Answer: no", "no"),
        ("Let me think. Answer: yes", "yes"),
        ("I think the answer is yes", "yes"),
        ("yes, although one might say no", "yes"),  # the first word decides
        ("Reasoning... Answer: no\nAnswer: yes", "yes"),  # the last explicit line wins
    ],
)
def test_parse_choice_reads_clear_answers(text, answer):
    assert parse_choice(text, ("yes", "no")).answer == answer


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "empty"),
        ("   ", "empty"),
        ("maybe", "none of"),
        ("it could be yes or no", "ambiguous"),
        ("???", "no word"),
        (None, "NoneType"),
        (42, "int"),
    ],
)
def test_parse_choice_never_guesses(text, reason):
    parsed = parse_choice(text, ("yes", "no"))
    assert parsed.answer is None and not parsed.valid
    assert reason in parsed.reason


@given(st.text())
def test_parse_choice_is_total(text):
    parsed = parse_choice(text, ("yes", "no"))
    assert parsed.answer in (None, "yes", "no")
    assert parsed.valid == (parsed.answer is not None)


def test_answer_maps_compose():
    flip = AnswerMap.swap("yes", "no")
    assert flip("yes") == "no" and flip("no") == "yes" and flip("cannot") == "cannot"
    assert flip.then(flip).preserving
    assert not flip.preserving and AnswerMap().preserving
    abc = AnswerMap((("A", "B"), ("B", "C"), ("C", "A")))
    assert [abc.then(abc)(x) for x in "ABC"] == ["C", "A", "B"]


def test_flipped_query_declares_its_map():
    item = Ordering().design(levels=[4], pairs=4, presentations=["original", "flipped_query"])[0]
    original, flipped = item.prompts
    assert original.answer_map.preserving and not flipped.answer_map.preserving
    assert flipped.gold == flipped.answer_map(original.gold) != original.gold


class Scripted:
    """A model that answers from a function of the prompt, to build known tables."""

    def __init__(self, answer):
        self.name = "scripted"
        self.answer = answer

    def generate(self, prompts):
        return [self.answer(p) for p in prompts]


def _evaluation(answer, levels=(4, 8), pairs=8, presentations=("original", "equivalent")):
    family = Ordering()
    items = family.design(levels=list(levels), pairs=pairs, presentations=list(presentations))
    return evaluate(family, items, Scripted(answer))


@given(st.data())
def test_profile_identities_hold_on_random_answers(data):
    """R + D + U = 1 and mean accuracy = R + U/2 on the jointly parsed support (CBE paper, arXiv:2610.22894 eq. 2)."""
    choices = data.draw(st.lists(st.sampled_from(["yes", "no", "maybe"]), min_size=32, max_size=32))
    answers = iter(choices * 4)
    evaluation = _evaluation(lambda p: next(answers))
    for level in profile(evaluation):
        if level.joint == 0:
            assert level.robust_correct is None and level.invariance is None
            continue
        total = level.robust_correct + level.shared_wrong + level.presentation_dependent
        assert total == pytest.approx(1.0)
        # Recompute mean accuracy on the jointly parsed support directly from the observations.
        rows = [
            evaluation.observations[i]
            for i, it in enumerate(evaluation.items)
            if it.params["n"] == level.level and all(o.valid for o in evaluation.observations[i])
        ]
        mean_acc = sum(o.correct for row in rows for o in row) / (2 * len(rows))
        assert mean_acc == pytest.approx(level.robust_correct + level.presentation_dependent / 2)
        assert abs(mean_acc - 0.5) <= level.invariance / 2 + 1e-12  # Result 1


def test_invalid_answers_count_wrong_and_leave_the_joint_support():
    evaluation = _evaluation(lambda p: "maybe" if p.presentation == "equivalent" else p.gold)
    for level in profile(evaluation):
        assert level.accuracy_by_presentation == {"original": 1.0, "equivalent": 0.0}
        assert level.coverage_by_presentation == {"original": 1.0, "equivalent": 0.0}
        assert level.joint == 0 and level.robust_correct is None
        assert level.all_correct == 0.0
    with pytest.raises(CompetenceFailure, match="INVALID"):
        Condition().check(evaluation, profile(evaluation))


def test_model_errors_are_invalid_observations_not_crashes():
    evaluation = _evaluation(lambda p: RuntimeError("server said 500"))
    obs = evaluation.observations[0][0]
    assert not obs.valid and "RuntimeError: server said 500" in obs.parsed.reason
    assert obs.raw is None


def test_wrong_batch_size_is_a_protocol_error():
    class Short:
        name = "short"

        def generate(self, prompts):
            return ["yes"] * (len(prompts) - 1)

    family = Ordering()
    with pytest.raises(ModelProtocolError, match="returned 7 answers for 8 prompts"):
        evaluate(family, family.design(levels=[4], pairs=4), Short())


def test_thresholds_are_per_level_and_scoped():
    evaluation = _evaluation(lambda p: p.gold if p.params["n"] <= 4 else "yes")
    profiles = profile(evaluation)
    parse_condition("all_correct >= 1 for n <= 4").check(evaluation, profiles)
    with pytest.raises(CompetenceFailure, match=r"n=8: all_correct = 0.5000, required >= 1"):
        parse_condition(["all_correct >= 1"]).check(evaluation, profiles)


@pytest.mark.parametrize(
    "require, match",
    [
        ("accuracy >= lots", "Cannot read require"),
        ("speed >= 0.5", "Unknown metric 'speed'"),
        (0.95, "Expected require='strict'"),
        ([], "Expected require='strict'"),
    ],
)
def test_bad_requirements_name_the_fix(require, match):
    with pytest.raises(InvalidArgument, match=match):
        parse_condition(require)


@pytest.mark.parametrize(
    "spec, match",
    [
        ("", "Expected a model spec"),
        ("qwen", "not an alias"),
        ("nosuch:thing", "Unknown model scheme 'nosuch'"),
        ("ref:nosuch", "Unknown reference policy 'nosuch'"),
        ("ref:threshold", "needs its size"),
        ("ref:threshold?n=abc", "Expected a number for n"),
        ("ref:coin?bogus=1", "does not take parameters"),
        ("py:nomodule_xyz:f", "cannot import module"),
        ("py:os:nonexistent_attr", "has no attribute"),
        ("py:os", "Malformed model spec"),
        ("py:os:sep", "not a callable"),
        # what was meant, where one reading is plain (issue #49)
        ("idael", r"Unknown model 'idael' \(did you mean 'ref:ideal'\?\)"),
        ("ref:idael", r"\(did you mean 'ref:ideal'\?\)"),
        ("mymodel.py:answer", r"\(did you mean 'py:mymodel.py:answer'\?\)"),
        ("json:dumps", r"\(did you mean 'py:json:dumps'\?\)"),
        ("nosuch:thing", r"Unknown model scheme 'nosuch' in 'nosuch:thing'; expected one of"),
        ("http://h:8000/v1", r"'openai:MODEL@http://h:8000/v1'; MODEL is the name the server"),
        ("openai:h:8000/v1", r"'openai:MODEL@http://h:8000/v1', where MODEL is the name"),
    ],
)
def test_bad_model_specs_say_how_to_fix_them(spec, match):
    with pytest.raises(ModelSpecError, match=match):
        resolve_model(spec)


def test_a_model_id_close_to_a_cached_one_is_named(tmp_path, monkeypatch):
    pytest.importorskip("huggingface_hub")
    from pytest_competence.models.hf import locate

    (tmp_path / "hub" / "models--Qwen--Qwen2.5-0.5B-Instruct").mkdir(parents=True)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    spec = "hf:Qwen/Qwen2.5-0.5B-Instrut"
    with pytest.raises(ModelSpecError, match=r"\(did you mean 'hf:Qwen/Qwen2.5-0.5B-Instruct'\?\)"):
        locate(spec[3:], spec)


def test_aliases_resolve_under_the_name_the_user_typed():
    aliases = parse_aliases(["# comment", "good = ref:ideal", "", "lazy=ref:always-yes"])
    assert aliases == {"good": "ref:ideal", "lazy": "ref:always-yes"}
    assert resolve_model("good", aliases).name == "good"
    with pytest.raises(ModelSpecError, match="one alias per line"):
        parse_aliases(["no equals sign here"])


def test_coin_is_repeatable_per_prompt_and_seeded():
    items = Ordering().design(levels=[8], pairs=40)
    prompts = [p for it in items for p in it.prompts]
    a = resolve_model("ref:coin?seed=1").generate(prompts)
    assert a == resolve_model("ref:coin?seed=1").generate(prompts)
    assert a != resolve_model("ref:coin?seed=2").generate(prompts)
    assert set(resolve_model("ref:coin?p=1").generate(prompts)) == {"yes"}


def test_plugin_import_stays_light():
    """The plugin loads in every pytest session: it must not pull in the engine's stack."""
    import subprocess
    import sys

    code = (
        "import sys, pytest_competence, pytest_competence.plugin;"
        "print(sorted(m for m in ('numpy', 'scipy', 'pytest_competence.strategies') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_run_without_competence_tests_loads_no_engine(pytester, workers):
    """With the plugin installed, every pytest run configures it (in xdist's controller and in
    each worker): a run of plain tests, no model named, must not pay for the engine's imports
    (numpy alone is ~0.15 s of start-up)."""
    pytester.makepyfile(
        "import sys\n"
        "import pytest\n"
        "@pytest.mark.parametrize('k', range(4))\n"
        "def test_modules(k):\n"
        "    heavy = ('numpy', 'scipy', 'httpx', 'pytest_competence.engine.spec')\n"
        "    assert [m for m in heavy if m in sys.modules] == []\n"
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly", *workers)
    result.assert_outcomes(passed=4)


def test_passing_verdict_imports_no_scipy(tmp_path):
    """A test right on every prompt needs no p-value: its verdict and profile import no scipy
    (0.3–0.4 s of CPU); the same suite against a model with failures does."""
    import subprocess
    import sys

    (tmp_path / "test_suite.py").write_text(
        "import sys, pytest\n"
        "@pytest.mark.competence(family='ordering', levels=[4, 8], pairs=8)\n"
        "def test_ordering(competence):\n    pass\n"
        "def test_zz_modules():\n"
        "    print('\\nSCIPY', 'scipy' in sys.modules)\n"
    )
    seen = {}
    for model in ("ref:ideal", "ref:coin"):
        command = [sys.executable, *"-m pytest -s -p no:randomly -p no:cacheprovider".split()]
        command += [f"--competence-model={model}", "test_suite.py"]
        out = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
        seen[model] = [out.returncode] + [
            line for line in out.stdout.splitlines() if line.startswith("SCIPY")
        ]
    # exit 0: both tests passed; exit 1: the competence test failed (a coin is not competent)
    assert seen == {"ref:ideal": [0, "SCIPY False"], "ref:coin": [1, "SCIPY True"]}, seen


class ByAttempt:
    """Answers by attempt index: ``plan[k]`` says what attempt k answers (gold, wrong or junk)."""

    name = "by-attempt"

    def __init__(self, plan):
        self.plan = plan
        self.seen = []

    def generate(self, prompts):
        self.seen.extend((p.instance_id, p.presentation, p.attempt) for p in prompts)
        flip = {"yes": "no", "no": "yes"}
        kinds = {"gold": lambda p: p.gold, "wrong": lambda p: flip[p.gold], "junk": lambda p: "hm"}
        return [kinds[self.plan[p.attempt]](p) for p in prompts]


@pytest.mark.parametrize(
    "plan, correct, reason",
    [
        (["gold", "gold", "wrong"], True, ""),
        (["wrong", "gold", "wrong"], False, ""),
        (["gold", "wrong", "junk"], False, "no majority over 3 attempts"),
        (["gold", "gold", "wrong", "wrong"], False, "no majority over 4 attempts"),
    ],
)
def test_attempts_are_majority_voted_and_all_kept(plan, correct, reason):
    """systematicity paper, arXiv:2609.13948, §3.6: right only when the majority of attempts is right; every attempt kept."""
    family = Ordering()
    items = family.design(levels=[4], pairs=4)
    model = ByAttempt(plan)
    ev = evaluate(family, items, model, attempts=len(plan))
    assert len(model.seen) == 4 * 2 * len(plan)  # one batch, every prompt N times
    assert sorted({a for *_, a in model.seen}) == list(range(len(plan)))
    for row in ev.observations:
        for o in row:
            assert o.correct is correct
            assert len(o.attempts) == len(plan)
            assert reason in o.parsed.reason
            assert [p.answer for _, p in o.attempts].count(o.prompt.gold) == plan.count("gold")


def test_attempts_must_be_positive():
    from pytest_competence.engine.spec import spec_from_marker

    with pytest.raises(InvalidArgument, match="attempts=0"):
        spec_from_marker((), {"levels": [4], "pairs": 4, "attempts": 0})


@pytest.mark.parametrize("name", ["ordering", "horn", "reformulations", "intervention", "grammar"])
def test_a_marker_without_presentations_asks_for_the_familys_default(name):
    from pytest_competence.engine.spec import spec_from_marker
    from pytest_competence.strategies import default_presentations, family

    expected = {"ordering": ("original", "equivalent"), "horn": ("original", "equivalent")}.get(
        name, getattr(family(name), "presentations", None)
    )
    spec = spec_from_marker(
        (name,), {"levels": [family(name).levels[0]] if name == "grammar" else [4], "pairs": 12}
    )
    assert spec.presentations == default_presentations(family(name))
    if name == "intervention":
        assert len(spec.presentations) == 36
    else:
        assert spec.presentations == tuple(expected)


def test_rule_induction_sends_each_prompt_five_times_unless_told():
    """systematicity paper, arXiv:2609.13948, §3.6: N = 5 attempts per variation, a pass their strict majority."""
    from pytest_competence.engine.spec import spec_from_marker

    assert spec_from_marker(("programs",), {"levels": [1], "pairs": 2}).attempts == 5
    assert spec_from_marker(("programs",), {"levels": [1], "pairs": 2, "attempts": 1}).attempts == 1
    assert spec_from_marker(("ordering",), {"levels": [4], "pairs": 4}).attempts == 1
