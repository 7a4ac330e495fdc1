"""Shared helpers of the plugin's pytester tests (tests/test_plugin*.py)."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest_competence.engine.analysis  # noqa: F401

# Import the engine here, before any in-process session: pytester restores ``sys.modules`` after
# each in-process run, so anything first imported inside one (numpy included) would be imported
# afresh by the next.
import pytest_competence.engine.conditions  # noqa: F401
import pytest_competence.engine.evaluate  # noqa: F401
import pytest_competence.engine.profile  # noqa: F401
import pytest_competence.engine.spec  # noqa: F401
import pytest_competence.models.python  # noqa: F401
import pytest_competence.models.reference  # noqa: F401
import pytest_competence.report  # noqa: F401
import pytest_competence.report._compare  # noqa: F401
import pytest_competence.report._terminal  # noqa: F401
import pytest_competence.stats  # noqa: F401

INTERNALS = re.compile(
    r"(Traceback|During handling of the above exception"
    r"|pytest_competence[/\\]"
    r"|\b(plugin|spec|conditions|evaluate|profile|ordering|_core|reference|python)\.py:\d+)"
)


def esc(text: str) -> str:
    """Escape ``[`` and ``]`` for ``fnmatch_lines`` (test ids and presentations use brackets)."""
    return re.sub(r"[\[\]]", lambda m: f"[{m.group(0)}]", text)


def assert_no_internals(output: str) -> None:
    found = INTERNALS.search(output)
    assert found is None, f"engine internals in the output: {found.group(0)!r}\n{output}"


def profile_section(output: str) -> list[str]:
    """The non-blank lines of the ``competence profiles`` terminal section, up to the run's
    counts line (``competence: N caught, …``) that ends it."""
    lines = output.splitlines()
    starts = [i for i, line in enumerate(lines) if re.match(r"^=+ competence profiles =+$", line)]
    assert len(starts) == 1, output
    section = []
    for line in lines[starts[0] + 1 :]:
        if line.startswith("=") or re.match(
            r"^(\d+ (passed|failed|error)|competence: \d+ caught)", line
        ):
            break
        if line.strip():
            section.append(line)
    return section


SIMPLE = """
    import pytest

    @pytest.mark.competence(levels=[4, 8], pairs=8)
    def test_x(competence):
        pass
"""

# An ideal answerer as a py: model, reusing the reference policy's reader on the prompt text.
IDEAL_PY = """
    from pytest_competence.models.reference import POLICIES

    _ideal = POLICIES["ideal"]()
"""


def ideal_py(body: str) -> str:
    """A model module: the ideal reader ``_ideal(text)`` followed by ``body``."""
    return textwrap.dedent(IDEAL_PY) + textwrap.dedent(body)


def run_example(pytester, example: str, models: str, *args: str):  # noqa: ANN001, ANN201
    """Run ``examples/<example>.py`` in ``pytester`` (renamed, so it cannot collide with this
    project's own test modules) against the comma-separated ``models``; the run's result."""
    from pathlib import Path

    suite = Path(__file__).resolve().parent.parent / "examples" / f"{example}.py"
    pytester.makepyfile(**{f"{example}_suite": suite.read_text()})
    return pytester.runpytest("-p", "no:cacheprovider", "--competence-model", models, *args)


class Scripted:
    """A model that gives the answers it was made with, in order (``py:scripted``)."""

    name = "py:scripted"

    def __init__(self, given: list[object]) -> None:
        self.given = given

    def generate(self, prompts):
        return list(self.given)


def scripted_document(spec, given: list[object]) -> dict:
    """The results document of a model that gave ``given`` (in order) on ``spec``'s design,
    without a pytest run: figures as the plugin builds them, the records embedded in the result
    as archives of schema /1 held them (``write_outputs(..., records=archived_records(doc, "."))``
    moves them to a records file)."""
    from pytest_competence.engine.analysis import analyze
    from pytest_competence.engine.evaluate import evaluate
    from pytest_competence.engine.failure import failing_case
    from pytest_competence.engine.profile import profile
    from pytest_competence.engine.records import records
    from pytest_competence.report import READABLE_SCHEMAS, build_document

    evaluation = evaluate(spec.family, spec.design(), Scripted(given), 1)
    result = analyze(evaluation, bootstrap=0, seed=spec.seed)
    result.update(
        test="test_hostile.py::test_x[*]",
        nodeid="test_hostile.py::test_x[py:scripted]",
        outcome="failed",
        condition=str(spec.condition),
        condition_met=False,
        report_only=False,
        gate=None,
        design={
            "levels": list(spec.levels),
            "pairs": spec.pairs,
            "seed": spec.seed,
            "require": spec.require,
            "gates": [],
            "attempts": 1,
        },
        failing_case=failing_case(spec.condition, evaluation, profile(evaluation)),
        bounds=spec.condition.bounds(profile(evaluation)),  # as the plugin's result has them
        records=records(evaluation),
    )
    document = build_document([json.loads(json.dumps(result))], models=["py:scripted"], bootstrap=0)
    return dict(document, schema=READABLE_SCHEMAS[0])


def read_archive(path) -> tuple[dict, dict[str, list[dict]]]:
    """A results document and its records by node id, read back as ``competence report`` reads
    them (from the records file, or embedded in an older archive)."""
    from pytest_competence.report import load_document
    from pytest_competence.report._records_file import read_records

    document = load_document(path)
    records = {
        result["nodeid"]: list(rows)
        for result, rows in read_records(document, Path(path).parent)
        if rows is not None
    }
    return document, records


#: A family as a third party writes it (the write-a-family how-to's shape), not registered: no
#: ``__repr__`` of its own, options kept as attributes of their names, and an ``ideal_answer``
#: that raises (IndexError) on text without its "Bits: " line.
PARITY = """
from pytest_competence.strategies import FAMILIES, Family, Item, Prompt, parse_choice, stream_rng


class Parity(Family):
    name, answer_space = "parity", ("yes", "no")
    default_presentations = ("original",)

    def __init__(self, width=1, *, label="bits"):
        self.width, self.label = width, label

    def design(self, *, levels, pairs, seed, presentations):
        items = []
        for n in levels:
            for i in range(pairs):
                bits = "".join(map(str, stream_rng(seed, n, i, 0).integers(0, 2, n)))
                gold = "yes" if bits.count("1") % 2 == 0 else "no"
                prompts = tuple(
                    Prompt(family=self.name, instance_id=f"parity/{n}/{i}", presentation=p,
                           system="", text=f"Bits: {bits}\\nAn even number of ones?",
                           gold=gold, params={"n": n}, answer_space=self.answer_space)
                    for p in presentations
                )
                items.append(Item(bits, prompts))
        return items

    def parse(self, text):
        return parse_choice(text, self.answer_space)

    @classmethod
    def ideal_answer(cls, prompt):  # IndexError on text without "Bits: "
        bits = prompt.text.split("Bits: ")[1].split("\\n")[0]
        return "yes" if bits.count("1") % 2 == 0 else "no"
"""


def install_example_family(path: Any) -> Any:
    """Install ``examples/family_pkg`` (the bracket-matching family) under ``path/site`` as pip
    would: its module and a ``*.dist-info`` with its entry points. Put the folder on
    ``sys.path`` (``pytester.syspathinsert``) or ``PYTHONPATH`` to use it; the folder."""
    import re
    import shutil
    from pathlib import Path

    package = Path(__file__).resolve().parent.parent / "examples" / "family_pkg"
    site = Path(path) / "site"
    info = site / "competence_brackets-0.1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    shutil.copy(package / "competence_brackets.py", site)
    toml = (package / "pyproject.toml").read_text()
    section = re.search(r'\[project\.entry-points\."(.+?)"\]\n(.*?)(?:\n\n|\Z)', toml, re.S)
    assert section is not None
    entries = section[2].replace('"', "").strip()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: competence-brackets\nVersion: 0.1.0\n"
    )
    (info / "entry_points.txt").write_text(f"[{section[1]}]\n{entries}\n")
    return site


#: The shard and merge tests' suite: two families, a parametrized design, a plain test, and a
#: model (ref:horn-if-then) that reads no ordering prompts (n/a there).
SHARD_SUITE = """
    import pytest

    @pytest.mark.competence(family="horn", levels=[4, 8], pairs=8)
    def test_horn(competence):
        pass

    @pytest.mark.competence(family="ordering", levels=[4, 8, 16], pairs=12)
    def test_ordering(competence):
        pass

    @pytest.mark.parametrize("pairs", [4, 20])
    @pytest.mark.competence(family="horn", levels=[4], pairs=8)
    def test_pairs(competence, pairs):
        pass

    def test_plain():
        pass
"""
SHARD_MODELS = "ref:ideal,ref:noisy?p=0.2,ref:horn-if-then"
