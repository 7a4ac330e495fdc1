"""A report past its size limit (issue #47): a main page, and a page per family in a folder
beside it, linked both ways; small runs stay one inert file."""

from __future__ import annotations

import re
from pathlib import Path

from pytest_competence.report import write_outputs
from pytest_competence.report._html import SPLIT_BYTES, render_html, render_pages
from test_matrix import _document
from test_report_html import Page, make_document, make_result


def _ids(page: str) -> set[str]:
    return set(re.findall(r' id="?([\w-]+)', page))


def test_a_small_report_is_one_page():
    document = _document()
    assert render_pages(document, name="r.html") == {"r.html": render_html(document)}
    assert len(render_html(document).encode()) < SPLIT_BYTES


def _trips(pages: dict[str, str], main: str) -> int:
    """Follows every verdict of the main page's matrices to its section and back; returns how
    many it followed."""
    trips = 0
    for row, cells in re.findall(r'<tr id="(m-[\w-]+)">(.*?)(?=<tr|</table>)', pages[main]):
        for href in re.findall(r'<a href="([^"]+)"', cells):
            file, _, anchor = href.partition("#")
            assert file in pages and anchor in _ids(pages[file]), href
            section = pages[file].split(f'id="{anchor}"', 1)[1]
            back = re.search(r'<a class=back href="([^"]+)"', section)[1]
            assert back == f"../{main}#{row}" and row in _ids(pages[main])
            trips += 1
    return trips


def test_past_the_limit_each_family_has_a_page_linked_both_ways():
    document = _document()
    one = len(render_html(document).encode())
    pages = render_pages(document, name="r.html", max_bytes=one - 1)
    assert sorted(pages) == [
        "r-pages/horn.html",
        "r-pages/ordering-comparisons.html",
        "r-pages/ordering.html",
        "r.html",
    ]
    main = pages["r.html"]
    assert 'id="result-' not in main  # the results moved out
    for name, page in pages.items():  # each page whole and inert
        parsed = Page(page)
        assert parsed.errors == [] and parsed.stack == [], name
        assert parsed.count("script") == 0 and "default-src 'none'" in page
    # Every verdict of the main page's matrices leads to a section of a family page, which
    # links back to the row it came from; the contents lead to each family's page and to the
    # comparisons' page.
    assert _trips(pages, "r.html") == len(document["results"])
    assert 'href="r-pages/ordering.html#family-ordering"' in main
    assert 'href="r-pages/ordering-comparisons.html#comparisons"' in main
    assert "id=comparisons" not in main
    assert 'href="../r.html#toc"' in pages["r-pages/horn.html"]


def test_a_family_past_the_limit_takes_several_pages():
    document = _document()
    pages = render_pages(document, name="r.html", max_bytes=1)  # a page per result
    assert "r-pages/ordering-3.html" in pages and "r-pages/ordering-4.html" not in pages
    assert _trips(pages, "r.html") == len(document["results"])
    second = pages["r-pages/ordering-2.html"]
    assert '<a href="ordering.html">1</a> <b>2</b> <a href="ordering-3.html">3</a>' in second


def test_write_outputs_writes_the_pages_and_removes_stale_ones(tmp_path: Path):
    document = _document()
    out = tmp_path / "report.html"
    stale = tmp_path / "report-pages" / "gone.html"
    stale.parent.mkdir()
    stale.write_text("an earlier run's family", "utf-8")
    one = len(render_html(document).encode())
    written = write_outputs(document, html_path=str(out), html_max_bytes=one - 1)
    assert ("HTML", str(out)) in written
    assert any(what == "HTML pages" for what, _ in written)
    assert sorted(p.name for p in (tmp_path / "report-pages").iterdir()) == [
        "horn.html",
        "ordering-comparisons.html",
        "ordering.html",
    ]
    # The same document within the limit: one page again, the folder gone.
    assert write_outputs(document, html_path=str(out)) == [("HTML", str(out))]
    assert not (tmp_path / "report-pages").exists()
    assert out.read_text("utf-8") == render_html(document)


def test_every_page_stays_within_the_limit_its_results_allow():
    results = [
        make_result(f"m{k}", nodeid=f"t.py::test_{k // 3}[m{k}]", levels=(4, 8, 16, 32, 64))
        for k in range(30)
    ]
    document = make_document(results)
    one = len(render_html(document).encode())
    limit = one // 4
    pages = render_pages(document, name="r.html", max_bytes=limit)
    assert len(pages) > 4
    for name, page in pages.items():
        assert len(page.encode()) <= limit, name
