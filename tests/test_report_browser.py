"""The main job's HTML report as a browser builds it (issues #24, #47): the contents and the
matrix first, coloured cells that lead to their results and back, unique ids, under 2 MB.

The README's first command writes the page; headless Chromium parses it and dumps the DOM it
built, which is then read here: the table of contents and the "which suite catches which model"
matrix come before the per-test list, its verdict cells carry the classes the page's CSS
colours, and no two elements share an id; a screenshot of the page's top shows the cells'
colours. Then a person's path through it, clicked with the mouse over the DevTools protocol
(:class:`tests.browser.Tab`): a FAIL cell of the matrix to its result, the result's link back
to its row. Skipped where no Chromium is installed (CI installs one).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from tests.browser import Tab, dump_dom, find_chromium, picture_spread, png_pixels, screenshot

from pytest_competence.report._html import CSS, MATRIX_CLASSES, SPLIT_BYTES, render_pages

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
    assert page.stat().st_size <= SPLIT_BYTES  # one page, within 2,000,000 bytes (issue #47)
    assert not (tmp_path / "competence-report-pages").exists()
    dom = _Dom()
    dom.feed(dump_dom(browser, page))
    elements = dom.elements

    ids = [a["id"] for _, a, _ in elements if "id" in a]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    assert not repeated, f"ids used more than once: {repeated}"

    order = [a["id"] for tag, a, _ in elements if tag in ("section", "nav") and "id" in a]
    assert "matrix" in order and "results" in order
    assert order.index("matrix") < order.index("results")
    assert order[:2] == ["toc", "matrix"]  # only the untitled headline section comes first
    # The contents lead to every family's matrix, the results and the comparisons.
    toc = next(k for k, (tag, a, _) in enumerate(elements) if a.get("id") == "toc")
    matrix = next(k for k, (tag, a, _) in enumerate(elements) if a.get("id") == "matrix")
    hrefs = {a.get("href") for tag, a, _ in elements[toc:matrix] if tag == "a"}
    families = {a["id"] for _, a, _ in elements if a.get("id", "").startswith("matrix-")}
    assert families and {f"#{f}" for f in families} | {"#results", "#comparisons"} <= hrefs

    start = next(k for k, (tag, a, _) in enumerate(elements) if a.get("id") == "matrix")
    end = next(k for k, (tag, a, _) in enumerate(elements) if a.get("id") == "results")
    cells = [(a.get("class", ""), "".join(t).strip()) for tag, a, t in elements[start:end]]
    verdicts = [(c, text) for c, text in cells if text in ("FAIL", "pass")]
    assert {text for _, text in verdicts} == {"FAIL", "pass"}  # the job catches and clears
    # Every verdict cell leads into the page.
    ids = set(ids)
    links = [a["href"] for tag, a, _ in elements[start:end] if tag == "a"]
    assert len(links) == len(verdicts) and all(h[1:] in ids for h in links)
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
    _click_through(browser, {"competence-report.html": page}, "competence-report.html")


def _click_through(browser: str, pages: dict[str, Path], main: str) -> None:
    """Click a FAIL cell of the matrix, land on its result (on this page or a family's),
    click its link back, land on the row the click started from; screenshots of the top and of
    the failing result are real pictures."""
    with Tab(browser, width=1280, height=900) as tab:
        tab.open(pages[main])
        top = tab.screenshot()
        cell = "table.matrix td.caught a"
        href = tab.evaluate(f"document.querySelector('{cell}').getAttribute('href')")
        row = tab.evaluate(f"document.querySelector('{cell}').closest('tr').id")
        assert isinstance(href, str) and isinstance(row, str) and row.startswith("m-")
        tab.click(cell)
        target = href.partition("#")[2]
        assert tab.evaluate("location.hash") == f"#{target}"
        assert tab.evaluate("location.pathname").endswith(href.partition("#")[0] or main)
        # The result's section sits at the top of the window and is marked as the target.
        where = f"document.getElementById('{target}')"
        assert 0 <= tab.evaluate(f"{where}.getBoundingClientRect().top") < 40
        assert tab.evaluate(f"{where}.matches(':target')") is True
        assert tab.evaluate(f"{where}.querySelector('.badge').textContent").startswith("FAIL")
        failing = tab.screenshot()
        tab.click(f"[id='{target}'] a.back")
        assert tab.evaluate("location.hash") == f"#{row}"
        assert tab.evaluate("location.pathname").endswith(main)
        assert tab.evaluate(f"document.getElementById('{row}').matches(':target')") is True
        assert tab.evaluate(f"document.getElementById('{row}').getBoundingClientRect().top") > -1
    for png in (top, failing):
        _, _, spread, colours = picture_spread(png)
        assert spread > 8 and colours > 20


@pytest.mark.slow
def test_split_pages_lead_from_the_matrix_to_a_family_page_and_back(tmp_path: Path):
    """Past its limit the report is pages: the click goes to a family's page and comes back."""
    browser = find_chromium()
    if browser is None:
        pytest.skip("needs a Chromium to click through the pages")
    from test_matrix import _document

    document = _document()
    pages = render_pages(document, name="r.html", max_bytes=1)
    paths = {}
    for name, text in pages.items():
        paths[name] = tmp_path / name
        paths[name].parent.mkdir(parents=True, exist_ok=True)
        paths[name].write_text(text, "utf-8")
    _click_through(browser, paths, "r.html")
