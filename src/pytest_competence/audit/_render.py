"""The audit document (``pytest-competence/audit/1``) and its self-contained HTML page.

``pytest --competence-audit`` writes the document to ``--competence-json`` and the page to
``--competence-html`` (an audit run evaluates no model, so there is no results document to
write there); ``competence audit PATH…`` does the same from the command line. The fields are
described in docs/results-schema.md, section "The audit document".
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from html import escape
from typing import Any

from pytest_competence.engine.files import write_text_atomic

__all__ = ["AUDIT_SCHEMA", "audit_document", "audit_html", "write_audit"]

AUDIT_SCHEMA = "pytest-competence/audit/1"

_STYLE = """body{font-family:system-ui,sans-serif;margin:2em;max-width:72em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.2em .5em;
text-align:left;font-size:.9em}th{background:#f3f3f3}.warn{color:#a40000;font-weight:600}
.ok{color:#1a6b1a}code{font-size:.9em}"""


def audit_document(audits: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The versioned audit document: one entry per audited test, sorted by test id."""
    from pytest_competence._version import __version__

    return {
        "schema": AUDIT_SCHEMA,
        "plugin_version": __version__,
        "audits": [dict(audits[t], test=t) for t in sorted(audits)],
    }


def _table(head: list[str], rows: list[list[str]]) -> str:
    cells = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{cells}</tr>{body}</table>"


def _section(a: Mapping[str, Any]) -> str:
    title = f"<h2><code>{escape(a['test'])}</code></h2><p>{escape(a['family'])}</p>"
    if not a.get("auditable"):
        return title + f"<p>Not audited: {escape(a.get('note', ''))}</p>"
    parts = [title, *_score(a)]
    if a.get("path"):
        parts.append("<h3>Path of supports (declared components, then [candidates])</h3>")
        parts.append(_path(a["path"]))
    parts.append("<h3>Lattice: the declared suite + candidate components</h3>")
    if a.get("lattice_note"):
        parts.append(f"<p>{escape(a['lattice_note'])}</p>")
    parts.append(_lattice(a["lattice"]))
    parts.append("<h3>Leave one out (declared components)</h3>")
    parts.append(_leave_one_out(a["leave_one_out"]))
    for key, what in (
        ("minimum_support", "Minimum identifying supports (cells)"),
        ("minimum_cost_support", "Cheapest identifying supports (prompt characters)"),
    ):
        if a.get(key):
            parts += _supports(a[key], what)
    parts.append(f"<p>{escape(a['mixture_note'])}</p>")
    return "".join(parts)


def _score(a: Mapping[str, Any]) -> list[str]:
    """The mutation score, each surviving policy with the cell that would catch it, and the
    caught policies that still solve some instances throughout."""
    total = len(a["caught"]) + len(a["survivors"])
    parts = [
        f"<p>Mutation score <b>{len(a['caught'])}/{total}</b> "
        f"({a['pairs']} instances per level, {a['prompts']} prompts per policy).</p>",
    ]
    for s in a["survivors"]:
        where = (
            f"a cell that catches it: <code>{escape(s['witness'])}</code> (add "
            f"{escape(', '.join(s['needs']))})"
            if s["witness"]
            else "no candidate cell separates it from ref:ideal"
        )
        parts.append(
            f"<p class=warn>{escape(s['policy'])} passes this suite while it claims "
            f"competence; {where}</p>"
        )
    solved = [
        f"{escape(p)} {100 * share:.0f}%"
        for p, share in a.get("solved", {}).items()
        if p in a["caught"] and share > 0
    ]
    if solved:
        parts.append(f"<p>Caught, but instances each solves throughout: {', '.join(solved)}</p>")
    return parts


def _path(path: list[Mapping[str, Any]]) -> str:
    return _table(
        ["added", "cells", "classes", "classes of several policies"],
        [
            [
                escape(r["added"] if r["declared"] else f"[{r['added']}]"),
                str(r["cells"]),
                str(r["classes"]),
                "<br>".join(escape(" ≡ ".join(c)) for c in r["members"] if len(c) > 1)
                or "<span class=ok>none</span>",
            ]
            for r in path
        ],
    )


def _lattice(lattice: list[Mapping[str, Any]]) -> str:
    return _table(
        ["added", "cells", "classes", "collisions (witness)"],
        [
            [
                escape(", ".join(r["added"]) or "nothing"),
                str(r["cells"]),
                str(r["classes"]),
                "<span class=ok>identified</span>"
                if not r["collisions"]
                else "<br>".join(
                    f"{escape(c['policies'][1])} ≡ {escape(c['policies'][0])} "
                    f"(<code>{escape(str(c['witness']))}</code>)"
                    for c in r["collisions"]
                ),
            ]
            for r in lattice
        ],
    )


def _leave_one_out(rows: list[Mapping[str, Any]]) -> str:
    return _table(
        ["component", "essential", "collisions it prevents"],
        [
            [
                escape(r["component"]),
                "yes" if r["essential"] else "no",
                escape(", ".join(" ≡ ".join(p) for p in r["created"])),
            ]
            for r in rows
        ],
    )


def _supports(m: Mapping[str, Any], what: str) -> list[str]:
    """A minimum support's heading, how it was found, and its first ten optimal sets."""
    label = "exact" if m["exact"] else escape(m["method"] + "; " + m["guarantee"])
    return [
        f"<h3>{what}</h3><p>{m['size']} cells, cost {m['cost']:,.0f}; {label}; "
        f"{m['count']} optimal sets{'' if m['count_complete'] else ' found'}, "
        f"first {min(10, len(m['solutions']))} shown</p>",
        _table(
            ["#", "cells"],
            [
                [str(k + 1), "<br>".join(f"<code>{escape(c)}</code>" for c in sol)]
                for k, sol in enumerate(m["solutions"][:10])
            ],
        ),
    ]


def audit_html(document: Mapping[str, Any]) -> str:
    """One self-contained page (no script, no network) for an audit document."""
    body = "".join(_section(a) for a in document["audits"])
    return (
        f"<!DOCTYPE html><html><head><meta charset=utf-8><title>competence audit</title>"
        f"<style>{_STYLE}</style></head><body><h1>Competence audit</h1><p>Each suite's "
        f"declared design, run against the reference policies (no model called).</p>{body}"
        f"</body></html>"
    )


def write_audit(
    document: Mapping[str, Any], *, json_path: str | None = None, html_path: str | None = None
) -> list[tuple[str, str]]:
    """Write the document and/or the page; returns ``(what, path)`` for each file written."""
    written = []
    if json_path:
        write_text_atomic(json_path, json.dumps(document, indent=1) + "\n")
        written.append(("audit JSON", json_path))
    if html_path:
        write_text_atomic(html_path, audit_html(document))
        written.append(("audit HTML", html_path))
    return written
