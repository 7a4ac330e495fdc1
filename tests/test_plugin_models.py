"""Pytester tests of py: models, the test body, and parametrization overriding the marker."""

from __future__ import annotations

import pytest

from plugin_helpers import SIMPLE, assert_no_internals, esc, ideal_py

# -- py: models -----------------------------------------------------------------------------------


def test_py_callable_model(pytester: pytest.Pytester):
    pytester.syspathinsert()
    pytester.makepyfile(
        mymodel=ideal_py("""
        def answer(prompts):
            assert all(isinstance(p, str) for p in prompts)
            return [_ideal(p) for p in prompts]

        def lazy(prompts):
            return ["Answer: yes" for p in prompts]
    """)
    )
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("-v", "--competence-model", "py:mymodel:answer,py:mymodel:lazy")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            esc("test_x.py::test_x[py:mymodel:answer] PASSED*"),
            esc("test_x.py::test_x[py:mymodel:lazy] FAILED*"),
        ]
    )
    result.stdout.fnmatch_lines(
        [
            esc("    [original] gold=no parsed=yes raw='Answer: yes' → WRONG"),
        ]
    )


def test_py_model_from_a_file_path(pytester: pytest.Pytester):
    path = pytester.makepyfile(
        file_model=ideal_py("""
        def answer(prompts):
            return [_ideal(p) for p in prompts]
    """)
    )
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("-v", "--competence-model", f"py:{path}:answer")
    result.assert_outcomes(passed=1)


def test_py_model_with_wrong_number_of_answers(pytester: pytest.Pytester):
    pytester.syspathinsert()
    pytester.makepyfile(
        shortmodel="""
        def answer(prompts):
            return ["yes"] * (len(prompts) - 1)
    """
    )
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest("--competence-model", "py:shortmodel:answer")
    result.assert_outcomes(errors=1)  # a broken model object, not a wrong model
    result.stdout.fnmatch_lines(
        [
            "*model 'py:shortmodel:answer' returned 31 answers for 32 prompts; generate() must "
            "return exactly one answer (or exception) per prompt, in order)",
        ]
    )
    assert_no_internals(result.stdout.str())


def test_py_model_invalid_answers_are_recorded_with_reasons(pytester: pytest.Pytester):
    pytester.syspathinsert()
    pytester.makepyfile(
        weirdmodel=ideal_py("""
        def answer(prompts):
            # Four presentations per instance: presentation k always gets kind k.
            from pytest_competence.models import NoAnswer

            kinds = [lambda p: NoAnswer("only reasoning, no answer"), lambda p: "",
                     lambda p: "maybe", _ideal]
            return [kinds[i % 4](p) for i, p in enumerate(prompts)]
    """)
    )
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.mark.competence(levels=[4], pairs=8,
                                presentations=["original", "equivalent", "reshuffle", "rewrite"])
        def test_x(competence):
            pass
    """
    )
    result = pytester.runpytest("--competence-model", "py:weirdmodel:answer")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "  first failing level: n=4: 8 of 8 instances fail (all-correct 0.0%)",
            "  failing instance ordering/seed=1/n=4/0:",
            esc(
                "    [original] gold=yes parsed=INVALID (only reasoning, no answer) raw=None "
                "→ WRONG"
            ),
            "      prompt: There are 4 people *",
            esc("    [equivalent] gold=yes parsed=INVALID (") + "*" + esc(") raw='' → WRONG"),
            "      prompt: There are 4 people *",
            esc(
                "    [reshuffle] gold=yes parsed=INVALID (none of ['no', 'yes'] in answer) "
                "raw='maybe' → WRONG"
            ),
            "      prompt: There are 4 people *",
            esc("    [rewrite] gold=yes parsed=yes raw='yes' → correct"),
        ]
    )
    # The profile row: invalid answers count wrong; R/D/U are undefined with nothing jointly
    # parsed; coverage is the lowest valid rate over presentations.
    result.stdout.re_match_lines(
        [
            r"^\s+n\s+pairs\s+acc\[original\]\s+acc\[equivalent\]\s+acc\[reshuffle\]\s+acc\[rewrite\]"
            r"\s+R\s+R 95% CI\s+D\s+U\s+κ\s+cover\s+all-ok$",
            r"^\s+4\s+8\s+0\.000\s+0\.000\s+0\.000\s+1\.000(\s+—){5}\s+0\.000\s+0\.000$",
        ]
    )
    assert_no_internals(result.stdout.str())


def test_py_model_partial_coverage(pytester: pytest.Pytester):
    pytester.syspathinsert()
    pytester.makepyfile(
        halfmodel=ideal_py("""
        def answer(prompts):
            return [_ideal(p) if i % 4 else "I am not sure" for i, p in enumerate(prompts)]
    """)
    )
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.mark.competence(levels=[4], pairs=8)
        def test_x(competence):
            cover = competence.profiles[0].coverage_by_presentation
            assert cover == {"original": 0.5, "equivalent": 1.0}
            assert competence.profiles[0].coverage == 0.5
    """
    )
    result = pytester.runpytest("--competence-model", "py:halfmodel:answer")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "Competence condition failed for model 'py:halfmodel:answer' *",
            esc(
                "    [original] gold=yes parsed=INVALID (none of ['no', 'yes'] in answer) "
                "raw='I am not sure' → WRONG"
            ),
        ]
    )
    result.stdout.re_match_lines(
        [
            r"^\s+4\s+8\s+0\.500\s+1\.000\s+1\.000\s+\[0\.510, 1\.000\]\s+0\.000\s+0\.000"
            r"\s+—\s+0\.500\s+0\.500$",
        ]
    )


def test_py_model_object_with_generate_receives_prompt_objects(pytester: pytest.Pytester):
    pytester.syspathinsert()
    record = pytester.path / "seen.txt"
    pytester.makepyfile(
        objmodel=ideal_py(f"""
        RECORD = {str(record)!r}

        class Model:
            def generate(self, prompts):
                with open(RECORD, "w") as f:
                    for p in prompts:
                        f.write(f"{{type(p).__name__}}|{{p.presentation}}|{{p.system}}\\n")
                return [_ideal(p.text) if p.system else "no system prompt" for p in prompts]

        instance = Model()
    """)
    )
    pytester.makepyfile(test_x=SIMPLE)
    result = pytester.runpytest(
        "-v", "--competence-model", "py:objmodel:instance,py:objmodel:Model"
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            esc("test_x.py::test_x[py:objmodel:instance] PASSED*"),
            esc("test_x.py::test_x[py:objmodel:Model] PASSED*"),
        ]
    )
    seen = record.read_text().splitlines()
    assert len(seen) == 2 * 8 * 2  # levels × pairs × presentations, in one batch
    system = "You are a helpful assistant. Answer logical reasoning questions concisely."
    assert set(seen) == {f"Prompt|original|{system}", f"Prompt|equivalent|{system}"}


# -- the test body --------------------------------------------------------------------------------


def test_body_reads_profiles_and_evaluation(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.mark.competence(levels=[4, 8], pairs=8)
        def test_x(competence):
            assert [p.level for p in competence.profiles] == [4, 8]
            assert [p.instances for p in competence.profiles] == [8, 8]
            ev = competence.evaluation
            assert ev.model == "ref:ideal"
            assert ev.presentations == ("original", "equivalent")
            assert len(ev.items) == 16 and len(ev.observations) == 16
            assert all(o.correct for obs in ev.observations for o in obs)
            assert competence.profiles[0].robust_correct == 1.0
            assert competence.spec.levels == (4, 8) and competence.spec.pairs == 8

        @pytest.mark.competence(levels=[4], pairs=8)
        def test_extra_assertion_fails(competence):
            assert competence.profiles[0].all_correct < 1, "extra check in the body"
    """
    )
    result = pytester.runpytest("-v", "--competence-model", "ref:ideal")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            esc("test_x.py::test_x[ref:ideal] PASSED*"),
            esc("test_x.py::test_extra_assertion_fails[ref:ideal] FAILED*"),
            "*AssertionError: extra check in the body*",
        ]
    )
    # The profile computed by the failing body still reaches the summary.
    result.stdout.fnmatch_lines(
        [
            "*competence profiles*",
            esc("test_x.py::test_extra_assertion_fails[ref:ideal]  FAILED  (strict: *)"),
            "    all-correct 1.000  κ̄ 1.000 *",
            "    n  pairs  acc[[]original[]]  acc[[]equivalent[]]  *",
            "    4      8          1.000            1.000  1.000  [[]0.676, 1.000[]]  0.000  0.000"
            "  1.000  1.000   1.000",
        ]
    )


def test_explicit_check(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.mark.competence(levels=[4], pairs=8)
        def test_x(competence):
            competence.check()
            assert competence.checked
            print("AFTER-CHECK", competence.model.name)

        @pytest.mark.competence(levels=[4], pairs=8)
        def test_catch(competence):
            from pytest_competence import CompetenceFailure
            with pytest.raises(CompetenceFailure, match="first failing level: n=4"):
                competence.check()
    """
    )
    result = pytester.runpytest("-v", "-s", "--competence-model", "ref:ideal,ref:always-yes")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            esc("test_x.py::test_x[ref:ideal] AFTER-CHECK ref:ideal") + "*",
            "PASSED*",
            esc("test_x.py::test_x[ref:always-yes] FAILED*"),
            esc("test_x.py::test_catch[ref:ideal] FAILED*"),
            esc("test_x.py::test_catch[ref:always-yes] PASSED*"),
        ]
    )
    # The failing explicit check is reported from the test body, with the full message.
    result.stdout.fnmatch_lines(
        [
            ">       competence.check()",
            "E       pytest_competence.engine.conditions.CompetenceFailure: Competence condition failed for "
            "model 'ref:always-yes' *",
            "E         first failing level: n=4: 4 of 8 instances fail (all-correct 50.0%)",
        ]
    )
    result.stdout.no_fnmatch_line("*AFTER-CHECK ref:always-yes*")


# -- parametrization overrides the marker ---------------------------------------------------------


def test_parametrized_vocabulary_overrides_the_marker(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_x="""
        import pytest

        PHRASE = {"front_behind": ("in front of", "behind"),
                  "left_right": ("to the left of", "to the right of")}

        @pytest.mark.parametrize("vocabulary", ["front_behind", "left_right"])
        @pytest.mark.competence(levels=[4], pairs=8, vocabulary="older_younger")
        def test_x(competence, vocabulary):
            forward, converse = PHRASE[vocabulary]
            original, equivalent = competence.evaluation.items[0].prompts
            assert f" {forward} " in original.text and " older than " not in original.text
            assert f" {converse} " in equivalent.text
            assert original.params["vocabulary"] == vocabulary
            print("PROMPT", vocabulary, original.text)
    """
    )
    result = pytester.runpytest("-v", "-s", "--competence-model", "ref:ideal,ref:always-no")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            esc(
                "test_x.py::test_x[ref:ideal-front_behind] PROMPT front_behind There are 4 people "
                "standing in some order. *Is * in front of *?*"
            ),
            esc(
                "test_x.py::test_x[ref:ideal-left_right] PROMPT left_right There are 4 people "
                "standing in some order. *Is * to the left of *?*"
            ),
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*model 'ref:always-no' on Ordering(vocabulary='front_behind')",
            "*model 'ref:always-no' on Ordering(vocabulary='left_right')",
        ]
    )


def test_parametrized_vocabulary_reaches_a_py_model(pytester: pytest.Pytester):
    pytester.syspathinsert()
    record = pytester.path / "prompts.txt"
    pytester.makepyfile(
        recorder=ideal_py(f"""
        def answer(prompts):
            with open({str(record)!r}, "a") as f:
                f.write(prompts[0] + "\\n")
            return [_ideal(p) for p in prompts]
    """)
    )
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.mark.parametrize("vocabulary", ["front_behind", "left_right"])
        @pytest.mark.competence(levels=[4], pairs=8)
        def test_x(competence, vocabulary):
            pass
    """
    )
    result = pytester.runpytest("--competence-model", "py:recorder:answer")
    result.assert_outcomes(passed=2)
    first, second = record.read_text().splitlines()
    assert " in front of " in first and " to the left of " not in first
    assert " to the left of " in second and " in front of " not in second
    # Same seed and level: the same latent instance, worded in each vocabulary.
    assert first.replace(" in front of ", " to the left of ") == second


def test_parametrized_design_keys_override_the_marker(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.mark.parametrize("seed", [1, 2])
        @pytest.mark.parametrize("presentations", [["original"], ["original", "negated"]])
        @pytest.mark.competence(levels=[4], pairs=8, seed=5)
        def test_x(competence, seed, presentations):
            ev = competence.evaluation
            assert ev.items[0].id == f"ordering/seed={seed}/n=4/0"
            assert ev.presentations == tuple(presentations)
    """
    )
    result = pytester.runpytest("--competence-model", "ref:ideal")
    result.assert_outcomes(passed=4)


def test_parametrized_levels_without_marker_levels(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.mark.parametrize("levels", [[4], [8]])
        @pytest.mark.competence(pairs=8)
        def test_x(competence, levels):
            assert competence.spec.levels == tuple(levels)
    """
    )
    result = pytester.runpytest("--competence-model", "ref:ideal")
    result.assert_outcomes(passed=2)
