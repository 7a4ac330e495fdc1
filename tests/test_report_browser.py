"""The main job's HTML report as a browser builds it (issue #24): the matrix first, coloured
cells, unique ids.

The README's first command writes the page; headless Chromium parses it and dumps the DOM it
built, which is then read here: the "which suite catches which model" matrix comes before the
per-test list, its verdict cells carry the classes the page's CSS colours, and no two
elements share an id; a screenshot of the page's top shows the cells' colours. Skipped where
no Chromium is installed (CI installs one).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from tests.browser import dump_dom, find_chromium, png_pixels, screenshot

from pytest_competence.report._html import CSS, MATRIX_CLASSES

ROOT = Path(__file__).resolve().parent.parent


class _Dom(HTMLParser):
    """The elements of a dumped DOM, in document order: ``(tag, attributes, text)``."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str], list[str]]] = []
        self._open: list[list[str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        text: list[str] = []
        self.elements.append((tag, {k: v or "" for k, v in attrs}, text))
        if tag == "td":
            self._open.append(text)

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if self._open:
            self._open[-1].append(data)


def _first_command() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    line = next(
        s for s in readme.splitlines() if "pytest examples" in s and "--competence-html" in s
    )
    return shlex.split(re.sub(r"^.*&& \S*python -m pytest ", "", line))


@pytest.mark.slow
def test_the_main_jobs_page_leads_with_a_coloured_matrix_and_unique_ids(tmp_path: Path):
    browser = find_chromium()
    if browser is None:
        pytest.skip("needs a Chromium to build the page's DOM")
    argv = [str(ROOT / a) if (ROOT / a).exists() else a for a in _first_command()]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    page = tmp_path / "competence-report.html"
    dom = _Dom()
    dom.feed(dump_dom(browser, page))
    elements = dom.elements

    ids = [a["id"] for _, a, _ in elements if "id" in a]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    assert not repeated, f"ids used more than once: {repeated}"

    order = [a["id"] for tag, a, _ in elements if tag == "section" and "id" in a]
    assert "matrix" in order and "results" in order
    assert order.index("matrix") < order.index("results") < order.index("result-0")
    assert order[0] == "matrix"  # only the untitled headline section comes before it

    start = next(k for k, (tag, a, _) in enumerate(elements) if a.get("id") == "matrix")
    end = next(k for k, (tag, a, _) in enumerate(elements) if a.get("id") == "results")
    cells = [(a.get("class", ""), "".join(t).strip()) for tag, a, t in elements[start:end]]
    verdicts = [(c, text) for c, text in cells if text in ("FAIL", "pass")]
    assert {text for _, text in verdicts} == {"FAIL", "pass"}  # the job catches and clears
    for classes, text in verdicts:
        assert MATRIX_CLASSES[text] in classes.split(), (text, classes)
    colours = {
        name: bytes.fromhex(re.search(rf"td\.{name}\{{background:#([0-9a-f]{{6}})", CSS)[1])
        for name in (MATRIX_CLASSES["FAIL"], MATRIX_CLASSES["pass"])
    }
    # The first screen of the page shows the matrix's caught and held cells in their colours.
    width, _, rows = png_pixels(
        screenshot(browser, page, tmp_path / "top.png", height=900).read_bytes()
    )
    bpp = len(rows[0]) // width
    seen = {bytes(row[i : i + 3]) for row in rows[::4] for i in range(0, len(row), 4 * bpp)}
    for name, rgb in colours.items():
        assert rgb in seen, f"no {name} cell (#{rgb.hex()}) on the first screen"
