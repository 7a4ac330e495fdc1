"""The HTML report: structure, escaping, nulls, determinism, and a real headless browser."""

from __future__ import annotations

import copy
import json
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from browser import dump_dom, find_chromium, picture_spread, screenshot
from pytest_competence.report import write_outputs
from pytest_competence.report._html import render_html

HOSTILE_SCRIPT = "<script>alert(1)</script>"
HOSTILE_IMG = '"><img src=x onerror=alert(1)>'
PLOTS_PER_RESULT = 4


# -- a synthetic results document (docs/results-schema.md), built from per-instance bits ------


def _wilson(k: int, n: int, z: float = 1.959964) -> list[float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [max(0.0, centre - half), min(1.0, centre + half)]


def _level(
    n: int,
    rows: list[tuple[tuple[bool, bool], tuple[bool, bool], tuple[bool, bool]]],
    names: list[str],
) -> dict:
    """Every per-level figure from ``(correct, valid, yes)`` pairs of two presentations."""
    total = len(rows)
    joint = [r for r in rows if all(r[1])]
    j = len(joint)
    robust = sum(all(r[0]) for r in joint)
    shared = sum(not any(r[0]) for r in joint)
    agree = robust + shared
    yes = sum(sum(r[2]) for r in joint) / (2 * j) if j else None
    chance = None if yes is None else yes**2 + (1 - yes) ** 2
    iota = agree / j if j else None
    kappa = None if iota is None or chance == 1 else (iota - chance) / (1 - chance)
    acc = {p: sum(r[0][k] for r in rows) / total for k, p in enumerate(names)}
    b = sum(r[0][0] and not r[0][1] for r in rows)
    c = sum(r[0][1] and not r[0][0] for r in rows)
    mcnemar = {
        "b": b,
        "c": c,
        "statistic": float(abs(b - c)),
        "method": "exact",
        "p_value": 1.0 if b == c else 0.0312,
        "p_holm": 1.0 if b == c else 0.0312,
    }
    return {
        "n": n,
        "instances": total,
        "jointly_parsed": j,
        "robust_correct": robust / j if j else None,
        "shared_wrong": shared / j if j else None,
        "presentation_dependent": (j - agree) / j if j else None,
        "robust_correct_ci": _wilson(robust, j) if j else None,
        "invariance": iota,
        "strict_invariance": agree / total,
        "mean_accuracy_joint": (robust + (j - agree) / 2) / j if j else None,
        "accuracy": sum(acc.values()) / len(acc),
        "accuracy_by_presentation": acc,
        "accuracy_ci_by_presentation": {
            p: _wilson(round(a * total), total) for p, a in acc.items()
        },
        "coverage": min(sum(r[1][k] for r in rows) / total for k in range(2)),
        "coverage_by_presentation": {
            p: sum(r[1][k] for r in rows) / total for k, p in enumerate(names)
        },
        "yes_rate": yes,
        "kappa": kappa,
        "all_correct": sum(all(r[0]) for r in rows) / total,
        "any_correct": sum(any(r[0]) for r in rows) / total,
        "fraction_correct": sum(sum(r[0]) for r in rows) / (2 * total),
        "pairs": {
            names[1]: {
                "jointly_parsed": j,
                "invariance": iota,
                "strict_invariance": agree / total,
                "yes_rate": yes,
                "kappa": kappa,
                "consistency": sum(all(r[0]) for r in rows) / total,
                "mcnemar": mcnemar,
            }
        },
    }


def make_result(
    model: str = "ref:threshold?n=8",
    *,
    levels=(4, 8, 16, 32),
    pairs: int = 20,
    parse_rate: float = 1.0,
    nodeid: str | None = None,
    raw: str = "yes",
    prompt: str = "Amy is in front of Bob. Is Amy first?",
    presentations=("original", "equivalent"),
) -> dict:
    """One ``results[]`` entry whose model degrades with n; ``parse_rate`` 0 parses nothing."""
    names = list(presentations)
    out_levels, bits = [], {"correct": {p: "" for p in names}, "valid": {p: "" for p in names}}
    ids, level_of = [], []
    for n in levels:
        rows = []
        for i in range(pairs):
            right = (i * 7 % pairs) / pairs >= min(0.9, math.log2(n) / 8)  # worse as n grows
            other = right if i % 4 else not right
            valid = (i / pairs) < parse_rate
            rows.append(
                (
                    (right and valid, other and valid),
                    (valid, valid),
                    (i % 2 == 0, (i % 2 == 0) == (right == other)),
                )
            )
            ids.append(f"n{n}-{i}")
            level_of.append(n)
            for k, p in enumerate(names):
                bits["correct"][p] += "01"[rows[-1][0][k]]
                bits["valid"][p] += "01"[valid]
        out_levels.append(_level(n, rows, names))
    kappas = [lv["kappa"] for lv in out_levels if lv["kappa"] is not None]
    kappa_bar = sum(kappas) / len(kappas) if kappas else None
    observation = {
        "answer_map": {"yes": "yes", "no": "no"},
        "prompt": prompt,
        "raw": raw,
        "parsed": None,
        "valid": False,
        "reason": "no yes/no answer",
        "gold": "yes",
        "correct": False,
    }
    nodeid = nodeid or f"examples/test_x.py::test_a[{model}]"
    return {
        "nodeid": nodeid,
        "test": nodeid.replace(f"[{model}]", "[*]"),
        "model": model,
        "family": "Ordering(vocabulary='front_behind', protocol='L')",
        "condition": "strict: C_0 = … = C_K = 1 on every instance at every level",
        "outcome": "failed",
        "presentations": names,
        "design": {"levels": list(levels), "pairs": pairs, "seed": 0, "require": "strict"},
        "levels": out_levels,
        "summary": {
            "instances": len(ids),
            "kappa_bar": kappa_bar,
            "accuracy_by_presentation": {
                p: bits["correct"][p].count("1") / len(ids) for p in names
            },
            "all_correct": sum(lv["all_correct"] for lv in out_levels) / len(out_levels),
            "mcnemar": {
                names[1]: {"b": 3, "c": 9, "statistic": 2.08, "method": "exact", "p_value": 0.146}
            },
            "boundary": {
                "tau": 0.85,
                "crossing": levels[-1],
                "reproducibility": 0.52,
                "coin_flip": True,
            },
            "bootstrap": {
                "B": 2000,
                "seed": 0,
                "stratified_by": "n",
                "robust_correct": [0.5, 0.41, 0.6],
                "invariance": [0.7, 0.62, 0.78],
                "kappa_bar": [
                    kappa_bar,
                    None if kappa_bar is None else kappa_bar - 0.1,
                    None if kappa_bar is None else kappa_bar + 0.1,
                ],
                f"accuracy_difference[{names[0]}-{names[1]}]": [0.02, -0.03, 0.07],
            },
        },
        "failing_case": {
            "condition": "strict",
            "level": levels[0],
            "what": "all_correct 0.65 < 1",
            "also_failing": list(levels[1:]),
            "instance_id": ids[0],
            "observations": [dict(observation, presentation=p) for p in names],
        },
        "instances": {"ids": ids, "level": level_of, **bits},
    }


def make_document(results: list[dict] | None = None, comparisons: list[dict] | None = None) -> dict:
    results = results if results is not None else [make_result("ref:ideal"), make_result()]
    models = list(dict.fromkeys(r["model"] for r in results))
    if comparisons is None and len(models) > 1:
        tests = [
            {
                "model": m,
                "b": 2,
                "c": 11,
                "statistic": 4.92,
                "method": "exact",
                "p_value": 0.0213,
                "p_holm": 0.0213,
            }
            for m in models[1:]
        ]
        comparisons = [
            {
                "test": results[0]["test"],
                "reference": models[0],
                "models": models[1:],
                "mcnemar": [
                    {"presentation": p, "n": scope, "tests": copy.deepcopy(tests)}
                    for p in results[0]["presentations"]
                    for scope in ["all", 4, 8]
                ],
                "accuracy_delta": {
                    m: {p: [-0.2, -0.31, -0.09] for p in results[0]["presentations"]}
                    for m in models[1:]
                },
                "bootstrap": {"B": 2000, "seed": 0, "stratified_by": "n"},
            }
        ]
    return {
        "schema": "pytest-competence/results/1",
        "plugin_version": "0.1.0",
        "models": models,
        "results": sorted(results, key=lambda r: r["nodeid"]),
        "comparisons": comparisons or [],
    }


def hostile_document() -> dict:
    """Every model- or user-derived string carries script or an attribute breakout."""
    result = make_result(
        HOSTILE_SCRIPT,
        nodeid=f"t.py::test[{HOSTILE_IMG}]",
        raw=HOSTILE_SCRIPT + HOSTILE_IMG,
        prompt="</pre>" + HOSTILE_IMG,
        presentations=("original", HOSTILE_IMG),
    )
    result["family"] = f"Ordering(vocabulary='{HOSTILE_SCRIPT}')"
    result["condition"] = HOSTILE_IMG
    result["design"]["require"] = [HOSTILE_SCRIPT]
    return make_document([make_result("ref:ideal", nodeid="t.py::test[ref:ideal]"), result])


# -- reading the page back -----------------------------------------------------------------

VOID = {"meta", "br", "hr", "img", "input", "link", "area", "base", "col", "embed", "source", "wbr"}
#: Elements whose end tag HTML makes optional, and what closes them implicitly (the report's
#: tables leave out ``</td>``, ``</th>`` and ``</tr>``).
IMPLIED = {"td": {"td", "th", "tr"}, "th": {"td", "th", "tr"}, "tr": {"tr"}}


class Page(HTMLParser):
    """Start tags with their attributes, text, and a check that every element closes in order."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        while self.stack and tag in IMPLIED.get(self.stack[-1], ()):
            self.stack.pop()  # a new cell closes the cell before it, a new row the row
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        while tag == "table" and self.stack and self.stack[-1] in IMPLIED:
            self.stack.pop()  # </table> closes its last cell and row
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)

    def count(self, tag: str) -> int:
        return sum(t == tag for t, _ in self.tags)


def _sections(page: str) -> list[str]:
    return page.split('<section id="result-')[1:]


def _svgs(section: str) -> list[str]:
    """The charts of a page or section, in order (the page's shared definitions aside)."""
    return re.findall(r'<svg class="chart".*?</svg>', section, flags=re.S)


def _drawn(page: str, svg: str) -> str:
    """A chart with each ``<use>`` replaced by what it draws from the page's definitions."""
    defs = page.split('<svg class="defs"', 1)[1].split("</defs>", 1)[0]
    pieces = {
        key: body.removesuffix("</g>")
        for key, body in re.findall(r'<g id="(svg-\d+)">(.*?)(?=<g id="svg-\d+">|$)', defs, re.S)
    }
    while "<use " in svg:
        svg = re.sub(r'<use href="#(svg-\d+)"/>', lambda m: pieces[m[1]], svg)
    return svg


def _dots(chart: str) -> list[tuple[float, float]]:
    """The points of a chart's series: each a zero-length, round-capped segment."""
    return [
        (float(x), float(y))
        for d in re.findall(r'<path class="dots" d="([^"]*)"', chart)
        for x, y in re.findall(r"M(-?[\d.]+) (-?[\d.]+)h0", d)
    ]


# -- structure ---------------------------------------------------------------------------------


def test_page_parses_with_one_svg_per_plot_per_result():
    document = make_document()
    page = render_html(document)
    parsed = Page(page)
    assert parsed.errors == [] and parsed.stack == []
    assert page.startswith("<!DOCTYPE html>")
    # Each failing result's plots, and one hidden <svg> of the definitions they share.
    assert parsed.count("svg") == PLOTS_PER_RESULT * len(document["results"]) + 1
    sections = _sections(page)
    assert len(sections) == len(document["results"])
    for section, result in zip(sections, document["results"]):
        assert len(_svgs(section.split("<h3>Per level")[0])) == PLOTS_PER_RESULT
        assert result["nodeid"] in section
    assert "Model comparisons" in page


def test_page_is_self_contained_with_no_script():
    page = render_html(make_document())
    parsed = Page(page)
    assert parsed.count("script") == 0
    assert not {"link", "img", "iframe", "object", "embed"} & {t for t, _ in parsed.tags}
    for tag, attrs in parsed.tags:
        for name in ("src", "href", "xlink:href", "action"):
            value = attrs.get(name) or ""
            assert not re.match(r"\s*(https?:)?//", value), (tag, name, value)
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
    assert not re.search(r"https?://|url\(|@import|@font-face", page)
    csp = [a for t, a in parsed.tags if t == "meta" and a.get("http-equiv")]
    assert csp and "default-src 'none'" in csp[0]["content"]


def test_each_result_shows_its_figures_summary_and_failing_case():
    document = make_document()
    page = render_html(document)
    section = _sections(page)[1]
    text = "".join(Page(section).text)
    for needed in (
        "Per level",
        "Summary",
        "κ̄",
        "McNemar original vs equivalent",
        "Boundary.",
        "coin flip",
        "First failing case of the design",  # not minimised: none is in the document
        "ref:threshold?n=8",
        "Ordering(",
        "levels 4, 8, 16, 32",
        "20 pairs per level",
        "R 95% CI",
    ):
        assert needed in text, needed
    # Both presentations asked the same text here: shown once, named the second time.
    assert section.count("<details><summary>prompt</summary><pre>") == 1
    assert "as for original" in text
    assert "Amy is in front of Bob. Is Amy first?" in text
    comparisons = page.split("<h2>Model comparisons</h2>")[1]
    assert "-0.200 [-0.310, -0.090]" in comparisons and "0.021" in comparisons


def test_x_axis_is_log2_with_ticks_at_each_level():
    page = render_html(
        make_document([make_result(levels=(4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048))])
    )
    profile = _drawn(page, _svgs(page)[0])
    labels = re.findall(r'text-anchor="middle">([^<]+)</text>', profile)
    assert labels[:10] == ["4", "8", "16", "32", "64", "128", "256", "512", "1k", "2k"]
    xs = [x for x, _ in _dots(profile)[:10]]
    gaps = [b - a for a, b in zip(xs, xs[1:])]
    assert max(gaps) - min(gaps) <= 1  # doubling n moves a constant distance: a log₂ axis


def test_undefined_kappa_leaves_a_gap_in_its_line():
    result = make_result()
    for lv in result["levels"][1:2]:
        lv["kappa"] = None
        lv["pairs"]["equivalent"]["kappa"] = None
    page = render_html(make_document([result]))
    kappa_plot = _drawn(page, _svgs(page)[1])
    assert len(_dots(kappa_plot)) == 3
    assert kappa_plot.count("<polyline") == 1  # n=4 alone, then 16–32 joined


# -- hostile strings ---------------------------------------------------------------------------


def test_hostile_strings_are_escaped_everywhere():
    page = render_html(hostile_document())
    assert "<script" not in page.lower()
    assert "<img" not in page.lower()
    assert '"><img' not in page  # no attribute breakout
    parsed = Page(page)
    assert parsed.errors == []
    assert parsed.count("script") == parsed.count("img") == 0
    assert not any(name.startswith("on") for _, attrs in parsed.tags for name in attrs)
    text = "".join(parsed.text)
    for hostile in (HOSTILE_SCRIPT, HOSTILE_IMG):
        assert hostile in text  # shown to the reader as text
    assert f"vocabulary='{HOSTILE_SCRIPT}'" in text  # the family repr
    defs = page.split('<svg class="defs"', 1)[1].split("</svg>", 1)[0]
    assert HOSTILE_IMG in "".join(Page(defs).text)  # a presentation name in the plots' legends
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


# -- nulls, edge cases, determinism -----------------------------------------------------------


def test_nothing_jointly_parsed_renders_dashes():
    result = make_result(parse_rate=0.0)
    result["summary"].update(
        kappa_bar=None,
        mcnemar={},
        boundary={"tau": 0.85, "crossing": None, "reproducibility": None, "coin_flip": False},
    )
    del result["summary"]["bootstrap"]
    page = render_html(make_document([result]))
    parsed = Page(page)
    assert parsed.errors == [] and parsed.count("svg") == PLOTS_PER_RESULT + 1
    text = "".join(parsed.text)
    assert "R and ι undefined" in text and "κₙ undefined at every level" in text
    assert "stays at or above τ = 0.85" in text and "coin flip" not in text
    level_rows = page.split("<h3>Per level</h3>")[1].split("</table>")[0]
    assert level_rows.count("—") >= 4 * 8
    for bad in ("None", "nan", "NaN", "inf"):
        assert not re.search(rf"\b{bad}\b", text), bad


def test_a_single_level_and_no_failing_case():
    result = make_result(levels=(8,))
    result.update(outcome="passed", failing_case=None)
    page = render_html(make_document([result]))
    parsed = Page(page)
    # A result that passed is one line, folded: its profile alone, beside the definitions.
    assert parsed.errors == [] and parsed.count("svg") == 1 + 1
    assert ">8</text>" in _drawn(page, _svgs(page)[0])
    assert '<details id="result-0" class="result"><summary><span class="badge passed">PASS' in page
    assert "First failing case" not in page


def test_report_only_runs_show_the_condition_not_the_outcome():
    """As the terminal does: a report-only test passes, but its badge says the condition failed."""
    caught, holds = make_result(nodeid="t.py::a[m]"), make_result(nodeid="t.py::b[m]")
    caught.update(outcome="passed", report_only=True, condition_met=False)
    holds.update(outcome="passed", report_only=True, condition_met=True)
    page = render_html(make_document([caught, holds]))
    index = page.split("<section id=results>")[1].split("</table>")[0]
    assert index.count("FAIL (report only)") == 1 and index.count(">PASS<") == 1
    assert "2 results: 1 caught, 1 passed, 0 errors, 0 n/a</b>" in page
    assert "report only: a caught pair passes in pytest" in page


def test_empty_comparisons_and_empty_document():
    page = render_html(make_document([make_result()]))
    assert "Model comparisons" not in page
    empty = render_html(make_document([], []))
    assert Page(empty).errors == [] and "0 results" in empty


def test_output_is_deterministic():
    document = make_document()
    first = render_html(document)
    assert render_html(copy.deepcopy(document)) == first
    assert render_html(json.loads(json.dumps(document))) == first


def test_write_outputs_writes_the_page(tmp_path: Path):
    document = make_document()
    out = tmp_path / "report.html"
    assert ("HTML", str(out)) in write_outputs(document, html_path=str(out))
    assert out.read_text("utf-8") == render_html(document)


# -- real documents from the plugin --------------------------------------------------------------

SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4, 8, 16, 32], pairs=24)
    def test_a(competence):
        pass

    @pytest.mark.competence(levels=[8], pairs=12, presentations=["original", "equivalent", "repeat"])
    def test_b(competence):
        pass
"""
HOSTILE_MODEL = f"""
    def answer(prompts):
        return [{HOSTILE_SCRIPT + HOSTILE_IMG!r} for _ in prompts]
"""
MODELS = "ref:ideal,ref:threshold?n=8,ref:coin,py:hostile_model.py:answer"


def _plugin_page(pytester: pytest.Pytester, *args: str, name: str = "out.html") -> tuple[str, dict]:
    pytester.makepyfile(test_a=SUITE, hostile_model=HOSTILE_MODEL)
    page, archive = pytester.path / name, pytester.path / f"{name}.json"
    pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--competence-model",
        MODELS,
        "--competence-json",
        str(archive),
        "--competence-html",
        str(page),
        *args,
    )
    assert page.exists(), "the plugin wrote no HTML report"
    return page.read_text("utf-8"), json.loads(archive.read_text("utf-8"))


def test_plugin_writes_the_report_of_a_real_run(pytester: pytest.Pytester):
    page, document = _plugin_page(pytester)
    assert page == render_html(document)
    parsed = Page(page)
    assert parsed.errors == [] and parsed.count("script") == parsed.count("img") == 0
    # Four plots for each failing result, the profile alone for each that passed, and the
    # page's shared definitions.
    passed = sum(r["outcome"] == "passed" for r in document["results"])
    assert passed and parsed.count("svg") == PLOTS_PER_RESULT * (8 - passed) + passed + 1
    text = "".join(parsed.text)
    for model in MODELS.split(","):
        assert f"test_a[{model}]" in text and f"test_b[{model}]" in text
    assert "Model comparisons" in text
    assert "κₙ (original vs repeat)" in text and "repeat agreement" in text
    assert HOSTILE_SCRIPT + HOSTILE_IMG in text  # the hostile model's raw answer, as text
    assert "R and ι undefined" in text  # none of its answers parses


@pytest.mark.slow
def test_serial_and_xdist_pages_are_byte_identical(pytester: pytest.Pytester):
    # No example database: the second run would replay the first run's minimal cases.
    nodb = ("-o", "competence_database=none")
    serial, _ = _plugin_page(pytester, *nodb, name="serial.html")
    parallel, _ = _plugin_page(pytester, *nodb, "-n", "2", name="parallel.html")
    assert parallel == serial


# -- a real browser ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> str:
    binary = find_chromium()
    if binary is None:
        pytest.skip("no chromium, chromium-browser or google-chrome on PATH")
    return binary


@pytest.mark.slow
@pytest.mark.parametrize("source", ["synthetic", "plugin"])
def test_browser_dom_holds_hostile_answers_as_text_only(
    chromium: str, source: str, request: pytest.FixtureRequest, tmp_path: Path
):
    page = tmp_path / "hostile.html"
    if source == "plugin":  # a py: model whose every answer is hostile, through the plugin
        page.write_text(_plugin_page(request.getfixturevalue("pytester"))[0], "utf-8")
    else:
        page.write_text(render_html(hostile_document()), "utf-8")
    dom = Page(dump_dom(chromium, page))
    tags = {tag for tag, _ in dom.tags}
    assert {"html", "body", "svg", "table", "details"} <= tags  # the page loaded and parsed
    assert not tags & {"script", "img", "iframe", "object", "embed"}
    assert not any(name.startswith("on") for _, attrs in dom.tags for name in attrs)
    text = "".join(dom.text)
    assert HOSTILE_SCRIPT in text and HOSTILE_IMG in text


@pytest.mark.slow
def test_browser_screenshot_is_a_real_picture(chromium: str, tmp_path: Path):
    page = tmp_path / "report.html"
    page.write_text(render_html(make_document()), "utf-8")
    png = screenshot(chromium, page, tmp_path / "report.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 20_000
    width, height, spread, colours = picture_spread(png)
    assert (width, height) == (1280, 2000)
    assert spread > 8  # not one flat colour
    assert colours > 50  # text, plot colours and bands, not a blank page


def test_many_presentations_fold_their_pairwise_tables():
    """36 intervention cells or K variations per type: the per-pair rows fold into <details>,
    the first six presentations' worth stays open as before."""
    result = make_result()
    one = result["summary"]["mcnemar"]["equivalent"]
    result["presentations"] = ["original"] + [f"reorder:{k}" for k in range(1, 9)]
    result["summary"]["mcnemar"] = {f"reorder:{k}": one for k in range(1, 9)}
    page = render_html(make_document([result]))
    assert "<summary><b>Paired figures per level</b>" in page
    assert "accuracy differences and McNemar tests for 8 presentations</summary>" in page
    few = render_html(make_document([make_result()]))
    assert "McNemar tests for" not in few
    # Two presentations: one pair, whose figures are the level's; its McNemar test joins the
    # per-level table instead of a table of its own.
    assert "Paired figures per level" not in few
    levels = few.split("<h3>Per level</h3>")[1].split("</table>")[0]
    assert "<th>b<th>c<th>test<th>p<tr>" in levels
