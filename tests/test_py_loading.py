"""When a ``py:`` model's module is imported, and where its file is found (issue #49).

A module named on ``--competence-model`` (or through an alias) is imported when the run starts,
where the tests run: an import that fails is one line and exit status 4, in-process and under
``-n 2`` alike, and the module is imported once. An xdist controller, which runs no test, does
not import it; ``competence_default_model``, which applies to every session, stays lazy. A
relative file or module is looked for in the rootdir, beside the tests named on the command
line, then on ``sys.path``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plugin_helpers import ideal_py

SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4, 8], pairs=8)
    def test_x(competence):
        pass
"""

#: A model module that notes every import of itself in ``imports.log``: the process (an xdist
#: worker's id, else ``main``) and its pid.
COUNTED = ideal_py(
    """
    import os
    from pathlib import Path

    with open(Path(__file__).with_name("imports.log"), "a") as log:
        log.write(f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')} {os.getpid()}\\n")

    answer = lambda prompts: [_ideal(p) for p in prompts]
    """
)

BROKEN = "import numpyy\n\n\ndef answer(prompts):\n    return []\n"


@pytest.fixture(autouse=True)
def _not_a_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runs below start as no xdist worker, even when this suite runs under ``-n``."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)


def _imports(pytester: pytest.Pytester) -> list[str]:
    log = pytester.path / "imports.log"
    return log.read_text().split() if log.exists() else []


def test_a_named_module_is_imported_once_at_start_up(pytester: pytest.Pytester):
    pytester.makepyfile(counted=COUNTED, test_x=SUITE, test_y=SUITE.replace("test_x", "test_y"))
    result = pytester.runpytest_subprocess("--competence-model=py:counted.py:answer")
    result.assert_outcomes(passed=2)
    assert _imports(pytester)[::2] == ["main"]  # at configure, then reused by both tests


def test_under_xdist_the_workers_import_it_and_the_controller_does_not(
    pytester: pytest.Pytester,
):
    pytester.makepyfile(counted=COUNTED, test_x=SUITE)
    result = pytester.runpytest_subprocess("-n", "2", "--competence-model=py:counted.py:answer")
    result.assert_outcomes(passed=1)
    processes = _imports(pytester)[::2]
    assert sorted(processes) == ["gw0", "gw1"], processes


def test_the_default_model_stays_lazy(pytester: pytest.Pytester):
    """``competence_default_model`` applies to every session: one that runs no competence test
    does not import it."""
    pytester.makeini("[pytest]\ncompetence_default_model = py:counted.py:answer\n")
    pytester.makepyfile(counted=COUNTED, test_plain="def test_plain():\n    pass\n")
    pytester.runpytest_subprocess().assert_outcomes(passed=1)
    assert _imports(pytester) == []


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["in-process", "xdist"])
def test_a_module_that_fails_to_import_stops_the_run_in_one_line(
    pytester: pytest.Pytester, workers: list[str]
):
    """Under ``-n`` the workers import it: the one that goes down with the usage error ends the
    run with that line, not a traceback per worker restarted."""
    pytester.makepyfile(mymodel=BROKEN, test_x=SUITE)
    result = pytester.runpytest_subprocess(*workers, "--competence-model=py:mymodel.py:answer")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.str() + result.stderr.str()
    line = (
        "ERROR: --competence-model: Model spec 'py:mymodel.py:answer': importing 'mymodel.py' "
        f"raised ModuleNotFoundError: No module named 'numpyy' (at {pytester.path / 'mymodel.py'}"
        ":1); install what it imports, or fix the import"
    )
    assert output.count(line) == 1, output
    for noise in ("Traceback", "node down", "crashed worker", "passed", "error"):
        assert noise not in output.replace(line, ""), output


# -- where files and modules are found ---------------------------------------------------------


@pytest.mark.parametrize("spec", ["py:mymodel.py:answer", "py:mymodel:answer"])
def test_a_model_beside_the_tests_is_found_from_another_directory(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, spec: str
):
    """No ini file: pytest's rootdir is the common folder of the working directory and the
    test, which holds neither; the folder of the test named on the command line does."""
    suite, other = pytester.mkdir("suite"), pytester.mkdir("other")
    (suite / "test_x.py").write_text(SUITE.replace("\n    ", "\n"))
    (suite / "mymodel.py").write_text(ideal_py("answer = lambda ps: [_ideal(p) for p in ps]"))
    monkeypatch.chdir(other)
    result = pytester.runpytest_subprocess(str(suite / "test_x.py"), f"--competence-model={spec}")
    result.stdout.fnmatch_lines([f"rootdir: {pytester.path}"])
    result.assert_outcomes(passed=1)


def test_a_missing_file_names_every_place_looked(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
):
    suite, other = pytester.mkdir("suite"), pytester.mkdir("other")
    (suite / "test_x.py").write_text(SUITE.replace("\n    ", "\n"))
    monkeypatch.chdir(other)
    result = pytester.runpytest_subprocess(
        str(suite / "test_x.py"), "--competence-model=py:nosuch.py:answer"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            f"ERROR: --competence-model: Model spec 'py:nosuch.py:answer': no such file "
            f"'nosuch.py' (looked in the rootdir '{pytester.path}', beside the tests in "
            f"'{suite}', the working directory '{other}' and on sys.path)"
        ]
    )


def test_a_missing_module_names_every_place_looked(pytester: pytest.Pytester):
    tests = pytester.mkdir("tests")
    (tests / "test_x.py").write_text(SUITE.replace("\n    ", "\n"))
    result = pytester.runpytest_subprocess("tests", "--competence-model=py:nosuch:answer")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --competence-model: Model spec 'py:nosuch:answer': cannot import module "
            f"'nosuch' (No module named 'nosuch'; looked in the rootdir '{pytester.path}', "
            f"beside the tests in '{Path(tests)}' and on sys.path); check that it is "
            "installed, or give a path to a .py file"
        ]
    )
