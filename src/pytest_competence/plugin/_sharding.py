"""``--competence-shard=K/N`` in pytest: this shard's competence test × model items kept, the
others deselected, by the engine's deterministic assignment
(:func:`~pytest_competence.engine.shard.assign`)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_competence.engine.shard import Shard, assign, parse_shard

__all__ = ["add_option", "prompt_weight"]


def add_option(group: Any) -> None:
    """``--competence-shard``, in the plugin's option group."""
    group.addoption(
        "--competence-shard",
        type=parse_shard,
        metavar="K/N",
        dest="competence_shard",
        help="Run shard K of N: a deterministic part of the competence test x model items, "
        "balanced by prompt count (other tests run in shard 1); give every shard the same "
        "selection, and join their --competence-json archives with 'competence merge'",
    )


def prompt_weight(item: pytest.Item) -> int | None:
    """The prompts a competence test × model item asks (its declared design, parameters
    applied); ``None`` for any other test, 1 for a declaration its own setup will refuse."""
    marker = item.get_closest_marker("competence")
    params = getattr(getattr(item, "callspec", None), "params", {})
    if marker is None or "competence_model" not in params:
        return None
    from pytest_competence.engine.spec import overridable, spec_from_marker

    names = overridable(marker.args, marker.kwargs)
    try:
        spec = spec_from_marker(
            marker.args, marker.kwargs, {k: v for k, v in params.items() if k in names}
        )
    except Exception:  # the test's own setup reports it, with the test's name
        return 1
    return spec.prompt_count


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep this shard's items; the others are deselected (pytest counts them)."""
    shard: Shard | None = config.getoption("competence_shard", None)
    if shard is None:
        return
    weights: dict[str, int] = {}
    for item in items:
        weight = prompt_weight(item)
        if weight is not None:
            weights[item.nodeid] = weight
    owner = assign(weights, shard.count)
    kept: list[pytest.Item] = []
    deselected: list[pytest.Item] = []
    for item in items:
        (kept if owner.get(item.nodeid, 1) == shard.index else deselected).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


def pytest_report_header(config: pytest.Config) -> str | None:
    shard = config.getoption("competence_shard", None)
    if shard is None:
        return None
    return f"competence shard {shard}: its part of the competence tests x models" + (
        " and every other test" if shard.index == 1 else " (other tests run in shard 1)"
    )
