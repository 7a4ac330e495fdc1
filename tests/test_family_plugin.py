"""Families as an extension point: the registry's validation, and a third-party family
(``examples/family_pkg``, bracket matching) installed through its entry point and used by name
in the marker, ``ref:`` policies, minimisation, ``competence generate`` and the reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plugin_helpers import PARITY, install_example_family
from pytest_competence.registry import FamilyRegistry, check_family_class
from pytest_competence.strategies import FAMILIES, Family, InvalidArgument, Ordering

SUITE = """
import pytest

@pytest.mark.competence(family="brackets", levels=[2, 4, 8], pairs=20)
def test_brackets(competence):
    pass
"""


@pytest.fixture
def brackets(pytester: pytest.Pytester) -> Iterator[Path]:
    """The example family installed into this pytester session (and forgotten after)."""
    site = install_example_family(pytester.path)
    pytester.syspathinsert(site)
    FAMILIES.refresh()
    yield site
    FAMILIES.refresh()
    sys.modules.pop("competence_brackets", None)


class _Good(Family):
    name = "good"
    answer_space = ("yes", "no")

    def design(self, *, levels: Any, pairs: Any, seed: Any, presentations: Any) -> list:
        return []

    def parse(self, text: str) -> Any:
        return None


def test_a_valid_family_class_is_accepted_and_inherits_the_defaults() -> None:
    assert check_family_class(_Good, "good") is _Good
    assert _Good().audit_components([4], ["original"]) == []
    assert _Good.shortcut_policies() == {} and _Good.shortcuts == ()


@pytest.mark.parametrize(
    ("value", "name", "message"),
    [
        (_Good(), "good", "to be a family class, but got"),
        (
            type("NoParse", (), {"name": "x", "answer_space": (), "design": lambda s: []}),
            "x",
            "lacks parse",
        ),
        (_Good, "other", "is registered as 'other' but its name is 'good'"),
        (type("BadSpace", (_Good,), {"answer_space": "yes"}), "good", "answer_space"),
        (type("BadShort", (_Good,), {"shortcuts": ("endpoint",)}), "good", "'ref:NAME'"),
        (type("BadDesign", (_Good,), {"design": 3}), "good", "design"),
    ],
)
def test_a_bad_family_class_is_refused_with_what_is_wrong(
    value: object, name: str, message: str
) -> None:
    with pytest.raises(InvalidArgument, match=message.replace("(", r"\(")):
        check_family_class(value, name)


def test_an_entry_point_cannot_take_a_built_in_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import EntryPoint

    from pytest_competence import registry as _registry

    fake = EntryPoint("ordering", "competence_brackets:Brackets", _registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(_registry, "_entry_points", lambda: {"ordering": fake})
    registry = FamilyRegistry({"ordering": Ordering})
    with pytest.raises(InvalidArgument, match="clashes with the built-in family 'ordering'"):
        registry["unknown"]


def test_two_families_cannot_declare_one_policy_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_competence.models import ModelSpecError  # noqa: F401
    from pytest_competence.models.reference import reference_policy

    class Thief(_Good):
        name = "thief"

        @classmethod
        def shortcut_policies(cls) -> dict:
            return {"endpoint": lambda: lambda text: "yes"}

    monkeypatch.setitem(FAMILIES, "thief", Thief)
    with pytest.raises(InvalidArgument, match="'endpoint', which family 'ordering' already"):
        reference_policy("endpoint", "ref:endpoint")


def test_an_installed_family_is_listed_without_being_imported(brackets: Path) -> None:
    assert "brackets" in list(FAMILIES)
    assert "competence_brackets" not in sys.modules  # listed, not imported
    assert FAMILIES["brackets"].__module__ == "competence_brackets"


def test_a_suite_of_the_installed_family_runs_by_name(
    pytester: pytest.Pytester, brackets: Path
) -> None:
    pytester.makepyfile(test_brackets=SUITE)
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--competence-model=ref:ideal,ref:brackets-count",
        "--competence-json=out.json",
        "--competence-markdown=out.md",
    )
    result.assert_outcomes(passed=1, failed=1)
    document = json.loads((pytester.path / "out.json").read_text())
    by_model = {r["model"]: r for r in document["results"]}
    assert by_model["ref:ideal"]["condition_met"] is True
    caught = by_model["ref:brackets-count"]
    assert caught["family_name"] == "brackets" and caught["condition_met"] is False
    # The counting shortcut is right on the balanced half only: the oracle, recomputed here.
    from competence_brackets import Brackets, balanced

    items = Brackets().design(
        levels=[2, 4, 8], pairs=20, seed=1, presentations=list(Brackets.default_presentations)
    )
    share = sum(balanced(item.instance.text) for item in items) / len(items)
    assert caught["summary"]["accuracy_by_presentation"]["original"] == share
    # Minimised to the smallest level the family has.
    minimal = caught["failing_case"]["minimal"]
    assert minimal["params"]["n"] == 2
    assert "brackets" in (pytester.path / "out.md").read_text()


def test_competence_generate_writes_the_installed_family(tmp_path: Path) -> None:
    site = install_example_family(tmp_path)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_competence.cli",
            "generate",
            "brackets",
            "--levels",
            "2,4",
            "--per-level",
            "4",
            "--option",
            "foo=1",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode != 0 and "foo" in done.stderr and "Traceback" not in done.stderr
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_competence.cli",
            "generate",
            "brackets",
            "--levels",
            "2,4",
            "--per-level",
            "4",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(records) == 2 * 4 * 3  # levels x per-level x default presentations
    assert {r["family"] for r in records} == {"brackets"}
    sys.path.insert(0, str(site))
    try:
        from competence_brackets import balanced, read

        for r in records:  # every gold re-derived from the prompt text alone
            kinds, string, negated = read(r["prompt"])
            assert r["gold"] == ("yes" if balanced(string, kinds) != negated else "no")
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("competence_brackets", None)


def test_the_audit_catches_the_installed_family_shortcut(
    pytester: pytest.Pytester, brackets: Path
) -> None:
    pytester.makepyfile(test_brackets=SUITE)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--competence-model=ref:ideal", "--competence-audit"
    )
    # Audited with the family's own shortcut and components: the shortcut is caught (the suite
    # tells it from the ideal reader), and the audit names a support that does.
    result.stdout.fnmatch_lines(
        [
            "*test_brackets*Brackets()*mutation score 1/1*",
            "*caught*ref:brackets-count*",
            "*minimum identifying support*",
            "*0 surviving shortcut(s)*",
        ]
    )
    result.stdout.no_fnmatch_line("*not audited*")


# -- a family as a third party writes it (plugin_helpers.PARITY) -----------------------------


@pytest.fixture
def parity(monkeypatch: pytest.MonkeyPatch) -> type[Family]:
    """The family above, registered in this process for the test."""
    namespace: dict[str, Any] = {"__name__": "my_package"}
    exec(PARITY, namespace)
    monkeypatch.setitem(FAMILIES, "parity", namespace["Parity"])
    return namespace["Parity"]


def test_a_family_without_a_repr_is_named_by_its_class_and_options(parity: type) -> None:
    assert repr(parity()) == "Parity()"
    assert repr(parity(3)) == "Parity(width=3)"
    assert repr(parity(label="x", width=1)) == "Parity(label='x')"
    assert repr(_Good()) == "_Good()"  # no constructor of its own


@pytest.fixture
def forget_families() -> Iterator[None]:
    """Families a conftest of an in-process pytester run registers are forgotten after the
    test: later tests in this process see the built-in families only."""
    before = set(FAMILIES)
    yield
    for name in set(FAMILIES) - before:
        del FAMILIES[name]


@pytest.mark.usefixtures("forget_families")
def test_messages_and_archives_name_the_family_not_an_object(pytester: pytest.Pytester) -> None:
    """The failure, the audit and the design's fingerprint show ``Parity()``: an archive of
    one run is the baseline of the next (an object's address would differ in each process)."""
    pytester.makeconftest(PARITY + '\nFAMILIES["parity"] = Parity\n')
    pytester.makepyfile(
        test_parity="""
        import pytest

        @pytest.mark.competence(family="parity", levels=[4, 8], pairs=8)
        def test_parity(competence):
            pass
        """
    )
    run = ("-p", "no:cacheprovider")
    result = pytester.runpytest(*run, "--competence-model=ref:always-yes")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*Competence condition failed for model 'ref:always-yes' on Parity()"]
    )
    result = pytester.runpytest(*run, "--competence-audit")
    result.stdout.fnmatch_lines(["*test_parity.py::test_parity[[]*[]]  Parity()  mutation score*"])
    pytester.runpytest(*run, "--competence-model=ref:ideal", "--competence-json=base.json")
    result = pytester.runpytest(
        *run, "--competence-model=ref:ideal", "--competence-baseline=base.json"
    )
    result.assert_outcomes(passed=1)
    assert " object at 0x" not in (pytester.path / "base.json").read_text("utf-8")


def test_a_reader_that_raises_is_named_with_the_fix(parity: type) -> None:
    """``Family.ideal_answer`` returns None for a prompt it cannot read; one that raises
    instead is an error naming the family's method, where it raised, the prompt and the fix."""
    from pytest_competence.policy import ideal_answer
    from pytest_competence.protocol import Prompt

    said = (
        r"Parity\.ideal_answer raised IndexError: list index out of range in ideal_answer\(\), "
        r"on {whose} \('nothing to read'\); return None for a prompt it cannot read"
    )
    with pytest.raises(RuntimeError, match=said.format(whose="a prompt's text")):
        ideal_answer("nothing to read")  # offered to every family in turn
    own = Prompt(
        family="parity",
        instance_id="parity/4/0",
        presentation="original",
        system="",
        text="nothing to read",
        gold="yes",
        answer_space=("yes", "no"),
    )
    with pytest.raises(
        RuntimeError, match=said.format(whose="a prompt of its own family 'parity'")
    ):
        ideal_answer(own)
    # A prompt some family reads is answered before the one that raises is asked.
    assert ideal_answer("Bits: 0110\nAn even number of ones?") == "yes"
