"""An independent reader and solver for intervention-world prompts: labels from the text alone.

It shares no code with the generator: it reads the rendered lines with its own patterns, keeps
literals as strings (``"p"`` / ``"~p"``), and saturates the rules by repeated full passes.
"""

from __future__ import annotations

import re

FACT = re.compile(r"^- ([a-z]+) is (true|false)\.$")
RULE = re.compile(r"^- If (.+), then ([a-z]+) is (true|false)\.$")
COND = re.compile(r"^([a-z]+) is (true|false)$")
QUESTION = re.compile(r"^Question: is ([a-z]+) true, false, or unknown\?$")
OPTION = re.compile(r"^([ABC])\) (true|false|unknown)$")


def _lit(atom: str, word: str) -> str:
    return atom if word == "true" else "~" + atom


def solve_text(text: str) -> tuple[str, dict[str, str]]:
    """``(label, options)``: the oracle label of the prompt and its letter → value table."""
    facts, rules, query, options = set(), [], None, {}
    for line in text.splitlines():
        if m := FACT.match(line):
            facts.add(_lit(*m.groups()))
        elif m := RULE.match(line):
            conds = []
            for part in m.group(1).split(" and "):
                c = COND.match(part)
                assert c, f"unreadable condition {part!r}"
                conds.append(_lit(*c.groups()))
            rules.append((conds, _lit(m.group(2), m.group(3))))
        elif m := QUESTION.match(line):
            query = m.group(1)
        elif m := OPTION.match(line):
            options[m.group(1)] = m.group(2).upper()
    assert query is not None and sorted(options) == ["A", "B", "C"], text
    known = set(facts)
    while True:
        new = {head for conds, head in rules if all(c in known for c in conds)} - known
        if not new:
            break
        known |= new
    atoms = {k.lstrip("~") for k in known}
    assert all(not (a in known and "~" + a in known) for a in atoms), "inconsistent theory"
    if query in known:
        return "TRUE", options
    return ("FALSE" if "~" + query in known else "UNKNOWN"), options


def gold_letter(text: str) -> str:
    """The letter of the right option, from the text alone."""
    value, options = solve_text(text)
    return next(letter for letter, v in options.items() if v == value)
