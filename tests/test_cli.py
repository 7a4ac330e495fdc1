"""``competence generate``: JSON Lines an independent checker can verify from the text alone."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

import pytest

from pytest_competence.cli import main
from solver import solve


def _generate(tmp_path, *args):
    out = tmp_path / "out.jsonl"
    assert main(["generate", "ordering", *args, "-o", str(out)]) == 0
    return [json.loads(line) for line in out.read_text("utf-8").splitlines()]


def test_records_carry_everything_a_checker_needs(tmp_path):
    records = _generate(
        tmp_path,
        "--levels",
        "4,8",
        "--per-level",
        "8",
        "--presentations",
        "original,equivalent,negated,flipped_query",
    )
    assert len(records) == 2 * 8 * 4
    for r in records:
        assert r["schema"] == "pytest-competence/dataset/1"
        assert r["family"] == "ordering" and r["answer_space"] == ["yes", "no"]
        assert r["system"].startswith("You are a helpful assistant.")
        assert r["gold"] == solve(r["prompt"])  # recomputed from the prompt text alone
        assert set(r["meta"]["entities"]) <= set(
            r["prompt"].replace("'", " ").replace(".", " ").split()
        )
        mapped = r["presentation"] == "flipped_query"
        assert r["answer_map"] == ({"yes": "no", "no": "yes"} if mapped else {})
    ids = {r["instance_id"] for r in records}
    assert len(ids) == 16


def test_whole_catalog_and_controls(tmp_path):
    records = _generate(
        tmp_path,
        "--levels",
        "6",
        "--per-level",
        "4",
        "--vocabulary",
        "all",
        "--protocol",
        "L",
        "--names",
        "random",
        "--distractors",
        "0.5",
        "--distance",
        "2",
    )
    assert len({r["params"]["vocabulary"] for r in records}) == 31
    for r in records:
        assert r["gold"] == solve(r["prompt"])
        assert r["params"]["protocol"] == "L" and r["params"]["query"] == "distance=2"


def test_same_seed_same_bytes_in_separate_processes(tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "pytest_competence.cli",
        "generate",
        "ordering",
        "--levels",
        "4,16",
        "--per-level",
        "8",
    ]
    first = subprocess.run(cmd, capture_output=True, check=True).stdout
    second = subprocess.run(cmd, capture_output=True, check=True).stdout
    assert first == second and first.count(b"\n") == 32


@pytest.mark.parametrize(
    "args, message",
    [
        (["--levels", "1"], "levels[] >= 2"),
        (["--per-level", "6"], "multiple of 4"),
        (["--vocabulary", "sideways"], "Unknown vocabulary='sideways'"),
        (["--presentations", "original,bogus"], "Unknown presentation 'bogus'"),
        (["--levels", "4", "--distance", "3"], "need n >= distance + 3"),
        (["--levels", "4,x"], "comma-separated integers"),
    ],
)
def test_bad_arguments_are_usage_errors(capsys, args, message):
    with pytest.raises(SystemExit) as exc:
        main(["generate", "ordering", *args])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_plan_reproduces_the_sample_size_figures_of_the_paper(capsys):
    """CBE paper, arXiv:2610.22894, App. A "Sample sizes": ±6.9 at 0.5 and ±4.9 at 0.85 per level of 200 pairs,
    ±2.3 over 1,800 pairs, up to ±14 per 50-instance cell, ≈3.7 points detectable at 80%."""
    assert main(["plan"]) == 0
    out = capsys.readouterr().out
    assert "at 0.5: ±6.9 points per level, ±2.3 pooled, ±13.9 per cell" in out
    assert "at 0.85: ±4.9 points per level" in out
    assert "with discordance 0.32: 3.7 points" in out


@pytest.mark.parametrize("flag", ["--pairs", "--per-level"])
def test_plan_rejects_empty_designs_naming_the_flag_as_typed(capsys, flag):
    with pytest.raises(SystemExit):
        main(["plan", flag, "0"])
    assert f"plan: {flag} must be at least 1, got {flag} 0" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["-o", "--output"])
def test_generate_names_the_output_flag_as_typed(capsys, flag):
    with pytest.raises(SystemExit):
        main(["generate", "horn", flag, "missing/x.jsonl"])
    assert f"error: {flag} missing/x.jsonl: the directory missing does not exist" in (
        capsys.readouterr().err
    )


def test_version(capsys):
    from pytest_competence._version import __version__

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"competence {__version__}\n"


def _every_parser() -> dict[str, argparse.ArgumentParser]:
    """``competence …`` → its parser, each family's ``generate`` with its own flags."""
    from pytest_competence.cli import _parser
    from pytest_competence.registry import FAMILIES

    def walk(parser: argparse.ArgumentParser, prog: str):
        yield prog, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, f"{prog} {name}")

    found = dict(walk(_parser([]), "competence"))
    for family in FAMILIES:
        found.update(walk(_parser(["generate", family]), "competence"))
    return found


def test_every_help_is_plain_text():
    """``-h`` is read in a terminal: no reStructuredText (``literal``, :role:`target`), which
    the module docstrings use for the API reference."""
    parsers = _every_parser()
    assert "competence generate horn" in parsers and "competence batch import" in parsers
    for prog, parser in parsers.items():
        shown = parser.format_help()
        markup = re.findall(r"``|:[a-z]+:`|`[^`\s]+`_", shown)
        assert not markup, f"{prog} -h shows {markup}:\n{shown}"


def test_plan_takes_the_grid_as_generate_does(capsys):
    """--levels is a comma-separated grid, as in competence generate (issue #24); --level-count
    gives just the number, and --per-level is generate's name for the pairs."""
    main(["plan", "--levels", "4,8,16", "--per-level", "200"])
    grid = capsys.readouterr().out
    main(["plan", "--level-count", "3", "--pairs", "200"])
    count = capsys.readouterr().out
    assert grid.startswith("design: 3 levels (4, 8, 16) x 200 pairs = 600 pairs")
    assert count.startswith("design: 3 levels x 200 pairs = 600 pairs")
    assert grid.splitlines()[1:] == count.splitlines()[1:]  # only the count matters


def test_family_options_reach_the_constructor(tmp_path):
    """--option KEY=VALUE: a literal (True, 8) or text, passed to the family as a keyword."""
    out = tmp_path / "programs.jsonl"
    main(
        [
            "generate",
            "programs",
            "--levels",
            "1",
            "--per-level",
            "2",
            "--variations",
            "1",
            "--option",
            "hint=True",
            "--option",
            "queries=2",
            "-o",
            str(out),
        ]
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["params"]["options"]["hint"] for r in rows} == {True}
    assert {len(json.loads(r["gold"])) for r in rows} == {2}
    plain = tmp_path / "plain.jsonl"
    main(
        [
            "generate",
            "programs",
            "--levels",
            "1",
            "--per-level",
            "2",
            "--variations",
            "1",
            "-o",
            str(plain),
        ]
    )
    assert [json.loads(line)["system"] for line in plain.read_text().splitlines()] != [
        r["system"] for r in rows
    ]  # the hint lists the operations


@pytest.mark.parametrize(
    ("family", "option", "message"),
    [
        ("programs", "hnt=1", "has no option 'hnt' (did you mean hint=?)"),
        ("horn", "hint=True", "family='horn' has no option 'hint'"),
        ("ordering", "hint=True", "family='ordering' has no option 'hint'"),
        ("grammar", "nonsense", "expected KEY=VALUE"),
    ],
)
def test_family_options_that_cannot_apply_are_usage_errors(capsys, family, option, message):
    with pytest.raises(SystemExit) as exc:
        main(["generate", family, "--levels", "1", "--option", option])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_two_families_may_give_one_flag_each_its_own_meaning(tmp_path, monkeypatch):
    """Each family's flags live in its own subcommand: a family's --depth is not Horn's."""
    from pytest_competence.protocol import construct
    from pytest_competence.strategies import FAMILIES, Horn

    class Deep(Horn):  # another package's family, with a --depth of its own
        name = "deep"

        @classmethod
        def generate_options(cls, parser):
            parser.add_argument("--depth", choices=["shallow", "deep"], default="shallow")

        @classmethod
        def generate_designs(cls, args):
            family = construct(cls, {"vary": "depth", "depth": None})
            levels = [2] if args.depth == "shallow" else [5]
            yield family, dict(levels=levels, pairs=args.pairs, presentations=["original"])

    monkeypatch.setitem(FAMILIES, "deep", Deep)
    deep, horn = tmp_path / "deep.jsonl", tmp_path / "horn.jsonl"
    assert main(["generate", "deep", "--depth", "deep", "--per-level", "2", "-o", str(deep)]) == 0
    assert {json.loads(line)["params"]["depth"] for line in deep.read_text().splitlines()} == {5}
    assert (
        main(
            [
                "generate",
                "horn",
                "--depth",
                "3",
                "--levels",
                "8",
                "--per-level",
                "2",
                "-o",
                str(horn),
            ]
        )
        == 0
    )
    assert {json.loads(line)["params"]["depth"] for line in horn.read_text().splitlines()} == {3}
    with pytest.raises(SystemExit):  # Horn's --depth takes a number, not the other's word
        main(["generate", "horn", "--depth", "deep"])


def test_generate_into_a_reader_that_stops_early_is_quiet(tmp_path):
    """Issue #24: `competence generate … | head` ends quietly with the SIGPIPE status a shell
    tool has, no BrokenPipeError traceback."""
    import subprocess
    import sys

    generate = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest_competence.cli",
            "generate",
            "ordering",
            "--levels",
            "4,8,16,32,64",
            "--per-level",
            "400",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    assert generate.stdout is not None and generate.stdout.readline().startswith(b"{")
    generate.stdout.close()  # as head does after its lines
    _, err = generate.communicate(timeout=120)
    assert generate.returncode == 141, err.decode()
    assert b"Traceback" not in err and b"BrokenPipeError" not in err, err.decode()
