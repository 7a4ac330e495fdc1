"""The intervention-worlds table of the reports, as data the terminal, Markdown and HTML draw.

Renders ``summary["intervention"]`` (:func:`pytest_competence.strategies.intervention.metrics.intervention_summary`):
the headline rates with their cluster-bootstrap intervals, the same rates per readout with each
readout's validity, and per transition direction. A result without that key renders nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_competence.drawing import number
from pytest_competence.protocol import Table

__all__ = ["intervention_tables"]

_RATES = (
    ("base_accuracy", "base acc"),
    ("target_follow", "target-follow"),
    ("sham_stay", "sham-stay"),
    ("selective_response", "selective"),
    ("full_support", "full support"),
)


def _block(r: Mapping[str, Any]) -> Mapping[str, Any] | None:
    block = r.get("summary", {}).get("intervention")
    return block if block and block.get("clusters") else None


def _with_ci(block: Mapping[str, Any], key: str) -> str:
    triple = block.get("bootstrap", {}).get(key)
    text = number(block["rates"][key])
    if triple and triple[1] is not None:
        text += f" [{triple[1]:.3f}, {triple[2]:.3f}]"
    return text


def _rows(block: Mapping[str, Any]) -> list[list[str]]:
    """Header, then a row per readout, level and transition: the five rates (and validity)."""
    rows = [["", *(label for _, label in _RATES), "validity"]]
    for name, rates in block["by_readout"].items():
        rows.append(
            [f"readout {name}", *(number(rates[k]) for k, _ in _RATES), number(rates["validity"])]
        )
    for name, rates in block.get("by_n", {}).items():
        rows.append([f"n={name}", *(number(rates[k]) for k, _ in _RATES), ""])
    for name, rates in block["by_transition"].items():
        rows.append([name, *(number(rates[k]) for k, _ in _RATES), ""])
    return rows


def _headline(block: Mapping[str, Any]) -> str:
    return f"{block['clusters']} clusters; " + "; ".join(
        f"{label} {_with_ci(block, k)}" for k, label in _RATES
    )


def intervention_tables(r: Mapping[str, Any]) -> list[Table]:
    """The intervention-worlds table of one result as data (``Intervention.tables``): the
    headline with its intervals, then the rates per readout, level and transition."""
    block = _block(r)
    if block is None:
        return []
    rows = _rows(block)
    return [
        Table(
            "Intervention worlds",
            tuple(rows[0]),
            tuple(map(tuple, rows[1:])),
            note=f"{_headline(block)} (95% cluster-bootstrap intervals; rates weighted "
            f"equally across transitions)",
            label="intervention",
        )
    ]
