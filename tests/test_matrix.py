"""Which suite catches which model: n/a pairs, per-family matrices in every report."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from pytest_competence.models import ModelSpecError, reads_family, resolve_model, split_specs
from pytest_competence.models.reference import POLICIES, READS, SHORTCUTS
from pytest_competence.report._html import render_html
from pytest_competence.report._markdown import render_markdown
from pytest_competence.report._matrix import family_matrices
from pytest_competence.report._terminal import summary_lines
from pytest_competence.strategies import FAMILIES
from test_report_html import make_document, make_result

# -- which families a model reads -----------------------------------------------------------------


def test_every_shortcut_reads_its_own_family_only():
    assert set(READS) <= set(POLICIES)
    assert all(set(families) <= set(FAMILIES) for families in READS.values())
    assert READS["endpoint"] == ("ordering",) and READS["horn-if-then"] == ("horn",)
    assert READS["surface"] == ("programs", "raven", "concepts", "grammar")
    for general in ("ideal", "always-yes", "always-no", "coin"):
        assert reads_family(resolve_model(f"ref:{general}"), "horn")
    assert not reads_family(resolve_model("ref:threshold?n=4"), "horn")
    assert reads_family(resolve_model("ref:iw-letter?letter=B"), "intervention")
    assert not reads_family(resolve_model("ref:iw-stuck"), "ordering")


def test_a_model_without_families_reads_every_family():
    class Plain:
        name = "plain"

        def generate(self, prompts):
            return ["yes" for _ in prompts]

    assert reads_family(Plain(), "horn") and reads_family(Plain(), "anything")


def test_shortcuts_stands_for_every_family_s_shortcut_policies():
    specs = split_specs("ref:ideal,ref:shortcuts")
    assert specs == ["ref:ideal", *SHORTCUTS]
    read = {f for spec in SHORTCUTS for f in resolve_model(spec).families}
    assert read == set(FAMILIES)  # every family has a shortcut among them
    with pytest.raises(ModelSpecError, match="names several policies.*--competence-model"):
        resolve_model("ref:shortcuts")


# -- the matrix -----------------------------------------------------------------------------------


def _na(nodeid: str, model: str, family: str = "horn") -> dict:
    return {
        "nodeid": nodeid,
        "test": nodeid.replace(f"[{model}]", "[*]"),
        "model": model,
        "family": family,
        "reason": f"{model} does not read {family} prompts",
    }


def _document() -> dict:
    ideal = make_result("ref:ideal", nodeid="t.py::test_a[ref:ideal]")
    ideal["outcome"] = "passed"
    caught = make_result("ref:endpoint", nodeid="t.py::test_a[ref:endpoint]")
    broken = make_result("ref:ideal", nodeid="t.py::test_b[ref:ideal]")
    broken["outcome"] = "error"  # an infrastructure error is shown as such, never as caught
    broken["errors"] = {"message": "3 of 3 prompts unanswered: connection refused"}
    horn = dict(
        make_result("ref:ideal", nodeid="h.py::test_h[ref:ideal]"),
        outcome="passed",
        family="Horn(depth=2)",
        family_name="horn",
    )
    document = make_document([ideal, caught, broken, horn])
    document["models"] = ["ref:ideal", "ref:endpoint"]
    document["not_applicable"] = [
        _na("h.py::test_h[ref:endpoint]", "ref:endpoint"),
        _na("t.py::test_b[ref:endpoint]", "ref:endpoint", "ordering"),
    ]
    return document


def test_family_matrices_group_tests_by_family_and_show_each_cell():
    horn, ordering = family_matrices(_document())
    assert horn.family == "horn" and horn.not_applicable == ("ref:endpoint",)
    assert horn.rows == [["test", "ref:ideal"], ["h.py::test_h[*]", "pass"]]
    assert ordering.family == "ordering" and ordering.not_applicable == ()
    assert ordering.rows == [
        ["test", "ref:ideal", "ref:endpoint"],
        ["t.py::test_a[*]", "pass", "FAIL"],
        ["t.py::test_b[*]", "ERROR", "n/a"],
    ]


def test_one_model_has_no_matrix():
    assert family_matrices(make_document([make_result("ref:ideal")])) == []


def test_quiet_terminal_prints_the_matrices_and_points_to_the_details():
    lines = summary_lines(_document(), verbosity=-1)
    assert lines[0] == (
        "t.py::test_b[ref:ideal]  ERROR  3 of 3 prompts unanswered: connection refused"
    )
    lines = lines[1:]
    assert lines[0].startswith("which suite catches which model")
    assert lines[1] == "  horn  (n/a, not reading horn prompts: 1 model)"
    assert lines[4] == "  ordering"
    assert [line.split() for line in lines[5:8]] == [
        ["test", "ref:ideal", "ref:endpoint"],
        ["t.py::test_a[*]", "pass", "FAIL"],
        ["t.py::test_b[*]", "ERROR", "n/a"],
    ]
    assert lines[-1].startswith("each test × model's profile: without -q")
    assert not any("Δacc" in line for line in lines)
    assert any("Δacc" in line for line in summary_lines(_document(), verbosity=1))


def test_html_and_markdown_have_the_matrix():
    page = render_html(_document())
    matrix = page.split("<h2>Which suite catches which model</h2>")[1].split("</section>")[0]
    assert '<h3 id="matrix-horn">horn</h3>' in matrix
    assert '<h3 id="matrix-ordering">ordering</h3>' in matrix
    # Each verdict coloured by its class (issue #24): caught, held, n/a, any other outcome; each
    # leads to its result (issue #47): results 0-3 are h.py::test_h[ref:ideal],
    # t.py::test_a[ref:endpoint], t.py::test_a[ref:ideal], t.py::test_b[ref:ideal].
    for cell in (
        '"absent">n/a',
        '"caught"><a href="#result-1">FAIL</a>',
        '"held"><a href="#result-2">pass</a>',
        '"broke"><a href="#result-3">ERROR</a>',
    ):
        assert f"<td class={cell}" in matrix, cell
    # The contents and the matrix come first, right under the headline counts; the index of
    # results after them.
    assert page.index("<nav id=toc>") < page.index("<section id=matrix>")
    assert page.index("<section id=matrix>") < page.index("<section id=results>")
    assert "n/a (they do not read horn prompts): <code>ref:endpoint</code>" in matrix
    assert "4 results: 1 caught, 2 passed, 1 error, 2 n/a</b>" in page
    text = render_markdown(_document())
    assert "### Which suite catches which model" in text and "#### horn" in text
    # Each verdict links to its result, each row is an anchor its results link back to.
    assert '| <a id="m-ordering-1"></a>t.py::test_b[*] | [ERROR](#result-3) | n/a |' in text
    assert "n/a (they do not read horn prompts): `ref:endpoint`" in text


def test_markdown_has_the_page_s_structure_and_its_links_lead_somewhere():
    text = render_markdown(_document())
    ids = set(re.findall(r'<a id="([\w-]+)"></a>', text))
    hrefs = re.findall(r"\]\(#([\w-]+)\)", text)
    assert hrefs and set(hrefs) <= ids  # no link leads nowhere
    assert {f"result-{i}" for i in range(4)} <= set(hrefs)  # every result reachable
    counts = text.index("**4 results: 1 caught, 2 passed, 1 error, 2 n/a**")
    assert counts < text.index("| [ordering](#matrix-ordering) | [1](#family-ordering) |")
    # Failures and errors first, the error before the caught pair, before the matrix.
    first = text.index("Failures and errors first")
    assert first < text.index("- ERROR [`t.py::test_b[ref:ideal]`](#result-3)")
    assert text.index("(#result-3)", first) < text.index("(#result-1)", first)
    assert first < text.index('<a id="matrix"></a>') < text.index('<a id="results"></a>')
    # Each result links back to its matrix row.
    for i, row in ((1, "m-ordering-0"), (3, "m-ordering-1"), (0, "m-horn-0")):
        section = text.split(f'<a id="result-{i}"></a>', 1)[1]
        assert section.split("\n", 3)[2].endswith(f"[↑ its row](#{row})"), section[:200]


def test_markdown_past_its_limit_leaves_passing_results_out_first_and_says_so():
    document = _document()
    whole = render_markdown(document)
    limit = len(whole.encode()) - 1
    cut = render_markdown(document, max_bytes=limit)
    assert len(cut.encode()) <= limit
    assert "left out to stay within GitHub's" in cut
    assert '<a id="result-1"></a>' in cut and '<a id="result-3"></a>' in cut  # failures kept
    assert "| [ordering](#matrix-ordering)" in cut  # the contents and matrices stay


class _Anchors(HTMLParser):
    """Every element id with the hrefs inside it, and the hrefs of each matrix verdict."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.verdicts: dict[str, str] = {}  # href → the id of the matrix row holding it
        self.backs: dict[str, str] = {}  # a result's id → where its back link leads
        self._row: str | None = None
        self._result: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "id" in a:
            self.ids.add(a["id"])
            if a["id"].startswith("result-") and a["id"][7:].isdigit():
                self._result = a["id"]
        if tag == "tr":
            self._row = a.get("id")
        if tag == "a" and self._row and self._row.startswith("m-"):
            self.verdicts[a["href"]] = self._row
        if tag == "a" and a.get("class") == "back" and self._result:
            self.backs[self._result] = a["href"]


def round_trips(page: str) -> list[tuple[str, str]]:
    """Each matrix verdict's link and the row its result links back to; asserts that both
    ends exist on the page."""
    found = _Anchors()
    found.feed(page)
    trips = []
    for href, row in found.verdicts.items():
        target = href.removeprefix("#")
        assert target in found.ids, f"{href} leads nowhere"
        assert found.backs[target] == f"#{row}", (href, row, found.backs.get(target))
        trips.append((href, row))
    return trips


def test_every_verdict_leads_to_its_result_and_back():
    document = _document()
    trips = round_trips(render_html(document))
    assert len(trips) == len(document["results"])  # every result is in a matrix, once
    assert sorted(href for href, _ in trips) == [f"#result-{i}" for i in range(4)]


def test_the_contents_count_each_family_in_competence_terms():
    page = render_html(_document())
    toc = page.split("<nav id=toc>")[1].split("</nav>")[0]
    rows = toc.split("</table>")[0].split("<tr>")

    def cells(row: str) -> list[str]:
        return [re.sub(r"<[^>]+>", "", c) for c in row.split("<td>")[1:]]

    assert cells(rows[2]) == ["horn", "0", "1", "0", "1"]  # caught, passed, errors, n/a
    assert cells(rows[3]) == ["ordering", "1", "1", "1", "1"]
    # Failures and errors first, linked one by one: the error before the caught pair.
    listed = re.findall(r'<li>.*?<a href="(#result-\d+)">', toc)
    assert listed == ["#result-3", "#result-1"]
    for anchor in ("#matrix", "#results", "#comparisons", "#matrix-horn", "#family-ordering"):
        assert f'href="{anchor}"' in toc, anchor


# -- end to end -----------------------------------------------------------------------------------

SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4, 8], pairs=8)
    def test_order(competence):
        pass

    @pytest.mark.competence(family="horn", levels=[2, 3], pairs=8)
    def test_horn(competence):
        pass
"""

ONLY_HORN = """
    class OnlyHorn:
        families = ("horn",)

        def generate(self, prompts):
            return ["yes" for _ in prompts]

    only_horn = OnlyHorn()
"""


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_policy_of_another_family_is_skipped_as_not_applicable(
    pytester: pytest.Pytester, xdist: list[str]
):
    pytester.makepyfile(test_suite=SUITE, only_horn_model=ONLY_HORN)
    out = pytester.path / "results.json"
    result = pytester.runpytest_subprocess(
        *xdist,
        "-p",
        "no:cacheprovider",
        "-v",
        "-rs",
        "-o",
        "competence_database=none",
        "--competence-json",
        str(out),
        "--competence-model",
        "ref:ideal,ref:endpoint,ref:horn-if-then,py:only_horn_model:only_horn",
    )
    # endpoint is caught on neither suite, horn-if-then on the Horn suite, only-horn on Horn.
    # The n/a pairs are skips that pytest counts apart (issue #47): "N/A" under -v, no line
    # of their own under -rs, "3 n/a" in the final line.
    result.assert_outcomes(passed=2 + 1, failed=2, skipped=0)
    for nodeid in (
        "test_horn[ref:endpoint]",
        "test_order[ref:horn-if-then]",
        "test_order[py:only_horn_model:only_horn]",
    ):
        assert any("N/A" in line and nodeid in line for line in result.outlines), nodeid
    assert not any(line.startswith("SKIPPED") for line in result.outlines)
    result.stdout.fnmatch_lines(["*2 failed, 3 passed, 3 n/a in*"])
    result.stdout.fnmatch_lines(
        [
            "which suite catches which model*",
            "  horn  (n/a, not reading horn prompts: 1 model)",
            "    test  *ref:ideal  ref:horn-if-then  py:only_horn_model:only_horn",
            "    test_suite.py::test_horn[[]*[]]  *pass  *FAIL  *FAIL",
            "  ordering  (n/a, not reading ordering prompts: 2 models)",
            "    test  *ref:ideal  ref:endpoint",
            "    test_suite.py::test_order[[]*[]]  *pass  *pass",
        ]
    )
    document = json.loads(out.read_text("utf-8"))
    assert sorted((r["model"], r["family"]) for r in document["not_applicable"]) == [
        ("py:only_horn_model:only_horn", "ordering"),
        ("ref:endpoint", "horn"),
        ("ref:horn-if-then", "ordering"),
    ]
    assert len(document["results"]) == 5  # a skipped pair is never a result, nor compared
    assert all(
        m in {"ref:ideal", "ref:endpoint"}
        for c in document["comparisons"]
        if c["test"].endswith("test_order[*]")
        for m in [c["reference"], *c["models"]]
    )


def test_the_step_summary_stays_within_github_s_mib_counting_what_is_there(
    tmp_path, monkeypatch: pytest.MonkeyPatch
):
    from pytest_competence.report import write_outputs
    from pytest_competence.report._markdown import STEP_SUMMARY_BYTES

    summary = tmp_path / "summary.md"
    summary.write_text("x" * (STEP_SUMMARY_BYTES - 3000), "utf-8")  # an earlier step's
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    write_outputs(_document())
    assert summary.stat().st_size <= STEP_SUMMARY_BYTES
    assert "left out to stay within GitHub's" in summary.read_text("utf-8")
