"""What every family's ``strategies`` object shares: its family, its repr, seeds, a size range."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from hypothesis import strategies as st

from pytest_competence.protocol import InvalidArgument

__all__ = ["SEEDS", "BoundStrategies", "ordered_range"]

#: Design seeds; they shrink toward 0.
SEEDS = st.integers(0, 2**32 - 1)

F = TypeVar("F")


class BoundStrategies(Generic[F]):
    """Strategies bound to one family configuration (``family.strategies``)."""

    def __init__(self, family: F) -> None:
        self.family = family

    def __repr__(self) -> str:
        return f"{self.family!r}.strategies"


def ordered_range(lo: Any, hi: Any) -> tuple[Any, Any]:
    """``(lo, hi)`` unchanged, or :class:`InvalidArgument` when ``min_n > max_n``."""
    if lo > hi:
        raise InvalidArgument(f"Expected min_n <= max_n, but got min_n={lo}, max_n={hi}")
    return lo, hi
