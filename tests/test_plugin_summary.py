"""Pytester tests of the terminal summary, xdist equality and reproducibility across sessions."""

from __future__ import annotations

import re

import pytest

from plugin_helpers import profile_section

# -- the terminal summary -------------------------------------------------------------------------


@pytest.mark.parametrize("verbosity", [[], ["-q"], ["-v"]])
def test_profiles_section_has_a_row_per_level(pytester: pytest.Pytester, verbosity):
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.mark.competence(levels=[4, 8, 16], pairs=8)
        def test_x(competence):
            pass
    """
    )
    result = pytester.runpytest(*verbosity, "--competence-model", "ref:ideal,ref:threshold?n=8")
    result.assert_outcomes(passed=1, failed=1)
    section = profile_section(result.stdout.str())
    if "-q" in verbosity:  # the matrix, a cell per test × model; one model: a line each
        assert section[0].startswith("which suite catches which model")
        assert section[1] == "  ordering"
        assert section[3].split() == ["test_x.py::test_x[*]", "pass", "FAIL"]
        alone = pytester.runpytest("-q", "--competence-model", "ref:threshold?n=8")
        (line,) = profile_section(alone.stdout.str())
        assert line.startswith("test_x.py::test_x[ref:threshold?n=8]  FAILED  all-correct 0.667")
        assert line.endswith("first failing n: 16")
        return
    headers = [i for i, line in enumerate(section) if line.split()[:2] == ["n", "pairs"]]
    assert section[headers[0]].split() == [
        "n",
        "pairs",
        "acc[original]",
        "acc[equivalent]",
        "R",
        "R",
        "95%",
        "CI",
        "D",
        "U",
        "κ",
        "cover",
        "all-ok",
    ]
    ideal, threshold = headers
    assert section[ideal - 2] == (
        "test_x.py::test_x[ref:ideal]  PASS  "
        "(strict: C_0 = … = C_K = 1 on every instance at every level)"
    )
    assert [row.split()[0] for row in section[ideal + 1 : ideal + 4]] == ["4", "8", "16"]
    assert section[threshold + 3].split() == [
        "16",
        "8",
        "1.000",
        "0.000",
        "0.000",
        "[0.000,",
        "0.324]",
        "0.000",
        "1.000",
        "-1.000",
        "1.000",
        "0.000",
    ]


def test_no_profiles_section_without_competence_tests(pytester: pytest.Pytester):
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*competence profiles*")


# -- xdist and reproducibility --------------------------------------------------------------------

XDIST_SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4, 8], pairs=8)
    def test_endpoints(competence):
        pass

    @pytest.mark.competence(levels=[5, 8], pairs=8, distance=2, vocabulary="left_right")
    def test_interior(competence):
        pass

    @pytest.mark.parametrize("vocabulary", ["taller_shorter", "vorpward_morpward"])
    @pytest.mark.competence(levels=[4, 8, 16], pairs=8, require="robust_correct >= 0.9 for n <= 8")
    def test_gate(competence, vocabulary):
        pass

    def test_plain():
        pass
"""
XDIST_MODELS = "ref:ideal,ref:endpoint,ref:threshold?n=5,ref:always-yes,ref:coin?seed=2"


def test_xdist_matches_serial_run(pytester: pytest.Pytester):
    pytester.makepyfile(test_suite=XDIST_SUITE)
    # No example database: the second run would replay the first run's minimal cases.
    args = (
        "-p",
        "no:cacheprovider",
        "-o",
        "competence_database=none",
        "-rA",
        "-v",
        "--competence-model",
        XDIST_MODELS,
    )
    serial = pytester.runpytest_subprocess(*args)
    parallel = pytester.runpytest_subprocess("-n", "2", *args)
    # ideal passes all four competence tests, endpoint all but the interior one, the rest none.
    serial.assert_outcomes(passed=1 + 4 + 3, failed=1 + 4 * 3)
    parallel.assert_outcomes(passed=1 + 4 + 3, failed=1 + 4 * 3)
    parallel.stdout.fnmatch_lines(["*2 workers [[]21 items[]]*"])

    def verdicts(result: pytest.RunResult) -> list[str]:
        return sorted(line for line in result.stdout.lines if re.match(r"^(PASSED|FAILED) ", line))

    assert len(verdicts(serial)) == 21
    assert verdicts(serial) == verdicts(parallel)
    serial_section = profile_section(serial.stdout.str())
    parallel_section = profile_section(parallel.stdout.str())
    # One table per test × model (20), one comparison block per test (4) with a line per other
    # model and presentation.
    assert sum(line.split()[:2] == ["n", "pairs"] for line in serial_section) == 20
    assert sum("models against ref:ideal" in line for line in serial_section) == 4
    assert sum("Δacc" in line for line in serial_section) == 4 * 4 * 2
    assert serial_section == parallel_section  # both list the tests by node id


RECORDER = """
    import hashlib
    import os

    from pytest_competence.models.reference import POLICIES

    _ideal = POLICIES["ideal"]()

    class Recorder:
        def generate(self, prompts):
            digest = hashlib.sha256()
            for p in prompts:
                digest.update(f"{p.instance_id}|{p.presentation}|{p.system}|{p.text}|{p.gold}\\n"
                              .encode())
            with open(os.environ["COMPETENCE_RECORD"], "a") as f:
                f.write(f"{len(prompts)} {digest.hexdigest()}\\n")
            return [_ideal(p.text) for p in prompts]
"""


def test_same_seed_gives_identical_prompts_across_sessions(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
):
    pytester.makepyfile(recorder=RECORDER)
    pytester.makepyfile(
        test_suite="""
        import pytest

        @pytest.mark.competence(levels=[4, 8], pairs=8)
        def test_default(competence):
            pass

        @pytest.mark.competence(levels=[5, 8], pairs=8, distance=2, names="random",
                                distractors=0.5,
                                presentations=["original", "equivalent", "negated"])
        def test_controls(competence):
            pass

        @pytest.mark.competence(levels=[4, 8], pairs=8, seed=2)
        def test_other_seed(competence):
            pass
    """
    )

    def record(name: str, *extra: str) -> list[str]:
        path = pytester.path / name
        monkeypatch.setenv("COMPETENCE_RECORD", str(path))
        result = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "--competence-model", "py:recorder:Recorder", *extra
        )
        result.assert_outcomes(passed=3)
        return path.read_text().splitlines()

    first = record("first.txt")
    second = record("second.txt")
    assert len(first) == 3
    assert first == second
    assert len(set(first)) == 3  # a different design (or seed) gives different prompts
    assert sorted(record("parallel.txt", "-n", "2")) == sorted(first)
