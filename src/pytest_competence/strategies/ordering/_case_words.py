"""An ordering case in words: its θ and layouts as plain data, and as one line for reports."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._cases import CaseSpace, OrderingCase

__all__ = ["describe", "summary"]


def describe(space: CaseSpace, case: OrderingCase) -> dict[str, Any]:
    """θ of ``case`` and how it is laid out, as plain data for reports."""
    family = space.family_of(case)
    z = family.instance(case.n, case.index, case.seed)
    out: dict[str, Any] = dict(family.params(z), latent_index=case.index, latent_seed=case.seed)
    if space.rewrites:
        out["rewritten"] = len(space.rewritten(case, z))
        out["rewrite_positions"] = "last" if case.positions == 0 else "seeded"
    layouts = [("original", case.original)]
    if space.reshuffles:
        layouts.append(("shuffled", case.shuffled))
    for name, (names, premises) in layouts:
        out[f"{name}_layout"] = {
            "names_line": "chain order" if not names or not space.shuffles_names else "shuffled",
            "premise_order": "chain order" if not premises else "shuffled",
        }
    return out


def summary(space: CaseSpace, case: OrderingCase) -> str:
    """:func:`describe` in one line of words."""
    d = describe(space, case)
    parts = [f"n={d['n']}", f"vocabulary={d['vocabulary']}", f"cell={d['cell']}"]
    if d["query"] != "endpoints":
        parts.append(f"query at {d['query']}")
    if space.rewrites:
        where = (
            "the last in chain order" if d["rewrite_positions"] == "last" else "seeded positions"
        )
        parts.append(f"{d['rewritten']} of {case.n - 1} premises rewritten ({where})")
    orders = {v for k, lay in d.items() if k.endswith("_layout") for v in lay.values()}
    parts.append(
        "every names line and premise order in chain order"
        if orders == {"chain order"}
        else "names lines and premise orders " + _layouts_in_words(d)
    )
    if space.has_distractors:
        parts.append(
            f"distractors ρ={d['distractors']:g}" if case.distractors else "no distractors"
        )
    parts.append(f"latent index={case.index} seed={case.seed}")
    return ", ".join(parts)


def _layouts_in_words(d: dict[str, Any]) -> str:
    return "; ".join(
        f"{k.removesuffix('_layout')}: names {lay['names_line']}, premises {lay['premise_order']}"
        for k, lay in d.items()
        if k.endswith("_layout")
    ).join("()")
