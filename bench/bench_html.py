"""Size and write time of the HTML report (its pages) and of the Markdown summary, at the README
run's size and at a multiple of it (issue #47).

The document is the README's first command's results (``pytest examples --competence-report-only
--competence-model=ref:ideal,ref:shortcuts``, run here into a temporary folder unless
``--document`` names its ``--competence-json``); ``--scales 1,10`` copies its results, its n/a
pairs and its comparisons that many times under new test names (``test_x`` → ``c3_test_x``), so
the matrices, the contents and the index grow with them. Each scale writes the report as the
plugin does (``write_outputs``: the HTML, split into pages past 2,000,000 bytes, and the
Markdown) into a fresh folder and prints the bytes and the seconds of each, per result too. It
asserts nothing:

    python bench/bench_html.py [--document results.json] [--scales 1,10]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _machine import describe

ROOT = Path(__file__).resolve().parent.parent


def readme_document(folder: Path) -> Path:
    """The README's first command's results document, written into ``folder``."""
    out = folder / "readme.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(ROOT / "examples"),
            "-q",
            "-p",
            "no:cacheprovider",
            "--competence-report-only",
            f"--competence-json={out}",
            "--competence-model=ref:ideal,ref:shortcuts",
        ],
        cwd=folder,
        check=True,
        capture_output=True,
    )
    return out


def _renamed(entry: dict[str, Any], copy: int, *keys: str) -> dict[str, Any]:
    return dict(entry, **{k: entry[k].replace("::", f"::c{copy}_", 1) for k in keys})


def scaled(document: dict[str, Any], times: int) -> dict[str, Any]:
    """``document`` with its results, n/a pairs and comparisons ``times`` over."""
    if times == 1:
        return document
    copies = range(times)
    return dict(
        document,
        results=sorted(
            (_renamed(r, c, "nodeid", "test") for c in copies for r in document["results"]),
            key=lambda r: r["nodeid"],
        ),
        not_applicable=sorted(
            (
                _renamed(r, c, "nodeid", "test")
                for c in copies
                for r in document.get("not_applicable") or []
            ),
            key=lambda r: r["nodeid"],
        ),
        comparisons=[
            _renamed(b, c, "test") for c in copies for b in document.get("comparisons") or []
        ],
    )


def measure(document: dict[str, Any], folder: Path) -> dict[str, float]:
    """Write the HTML and the Markdown as the plugin does; their bytes and seconds."""
    from pytest_competence.report import write_outputs

    html, markdown = folder / "competence-report.html", folder / "summary.md"
    start = time.perf_counter()
    write_outputs(document, html_path=str(html))
    html_s = time.perf_counter() - start
    start = time.perf_counter()
    write_outputs(document, markdown_path=str(markdown))
    markdown_s = time.perf_counter() - start
    pages = [html, *sorted((folder / "competence-report-pages").glob("*.html"))]
    sizes = [p.stat().st_size for p in pages if p.exists()]
    return {
        "results": len(document["results"]),
        "main": sizes[0],
        "pages": len(sizes),
        "largest": max(sizes),
        "html": sum(sizes),
        "html_s": html_s,
        "markdown": markdown.stat().st_size,
        "markdown_s": markdown_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--document", help="A --competence-json of the README's first command")
    parser.add_argument("--scales", default="1,10", help="Copies of its results (default 1,10)")
    args = parser.parse_args()
    print(describe())
    from pytest_competence.report import load_document

    with tempfile.TemporaryDirectory(prefix="bench-html-") as folder:
        path = Path(args.document) if args.document else readme_document(Path(folder))
        document = load_document(path)
        rows = []
        for times in (int(s) for s in args.scales.split(",")):
            out = Path(folder) / f"x{times}"
            os.makedirs(out)
            rows.append(measure(scaled(document, times), out))
    print(
        f"{'results':>8} {'pages':>6} {'main page':>12} {'largest':>12} {'all pages':>12} "
        f"{'HTML s':>7} {'Markdown':>12} {'MD s':>6}"
    )
    for r in rows:
        print(
            f"{r['results']:>8,} {r['pages']:>6} {r['main']:>12,} {r['largest']:>12,} "
            f"{r['html']:>12,} {r['html_s']:>7.2f} {r['markdown']:>12,} {r['markdown_s']:>6.2f}"
        )
    for r in rows:
        print(
            f"{r['results']:,} results: HTML {r['html'] / r['results']:,.0f} bytes and "
            f"{1000 * r['html_s'] / r['results']:.1f} ms per result; Markdown "
            f"{r['markdown'] / r['results']:,.0f} bytes and "
            f"{1000 * r['markdown_s'] / r['results']:.2f} ms per result"
        )
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        k = last["results"] / first["results"]
        for key, what in (
            ("html", "HTML bytes"),
            ("html_s", "HTML seconds"),
            ("markdown", "Markdown bytes"),
            ("markdown_s", "Markdown seconds"),
        ):
            print(f"{what}: {last[key] / first[key]:.2f}x for {k:.0f}x the results")


if __name__ == "__main__":
    main()
