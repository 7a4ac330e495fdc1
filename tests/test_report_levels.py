"""Levels named for what they are (issue #47): each family declares what its level counts, the
results carry it, and every report names the level with it — never ``n`` for Horn's distractor
rules."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest

from pytest_competence.registry import FAMILIES
from pytest_competence.strategies import Horn

SUITE = """
    import pytest

    @pytest.mark.competence(family="horn", vary="distractors", depth=2, levels=[0, 8], pairs=8)
    def test_distractors(competence):
        pass
"""
ALWAYS_YES = """
    def answer(prompts):
        return ["yes"] * len(prompts)
"""


def test_every_built_in_family_names_its_level():
    expected = {
        "ordering": "n",
        "reformulations": "size",
        "intervention": "rules",
        "programs": "steps",
        "grammar": "functions",
        "raven": "features",
        "concepts": "length",
    }
    # Other tests may register families of their own meanwhile: the built-in ones are asked.
    assert {name: FAMILIES[name].level_name for name in expected} == expected
    assert [Horn(vary=v).level_name for v in ("rules", "depth", "distractors")] == [
        "rules",
        "depth",
        "distractors",
    ]


class _Headers(HTMLParser):
    """The text of every ``<th>`` and of every SVG axis label."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str]] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "th" or (tag == "text" and ("class", "axis") in attrs):
            self._in = tag

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in:
            self.found.append((self._in, data))


def test_horn_distractor_levels_are_named_distractors_in_every_report(
    pytester: pytest.Pytester,
):
    pytester.makepyfile(test_suite=SUITE, always_yes=ALWAYS_YES)
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--competence-model=py:always_yes:answer",
        "--competence-json=r.json",
        "--competence-html=r.html",
        "--competence-markdown=r.md",
        "-o",
        "competence_database=none",
        "-o",
        "competence_shrink_calls=0",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*first failing level: distractors=0: *"])  # the failure
    (r,) = json.loads((pytester.path / "r.json").read_text("utf-8"))["results"]
    assert r["level_name"] == "distractors"
    assert r["failing_case"]["level"] == 0  # a yes-sayer is wrong on the near misses at once
    result.stdout.fnmatch_lines(["*first failing distractors: 0*"])
    assert "first failing n" not in result.stdout.str()

    page = (pytester.path / "r.html").read_text("utf-8")
    headers = _Headers()
    headers.feed(page)
    assert ("th", "first failing level") in headers.found
    assert ("th", "distractors") in headers.found  # the per-level table's first column
    assert ("th", "n") not in headers.found
    assert ("text", "distractors (log₂ scale)") in headers.found
    assert "distractors = 0" in page and "Level distractors = 0" in page

    markdown = (pytester.path / "r.md").read_text("utf-8")
    assert "| distractors | pairs |" in markdown
    assert "first failing level distractors=0" in markdown
