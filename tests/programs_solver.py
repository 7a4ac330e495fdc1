"""An independent reader and interpreter for ``programs`` prompts (systematicity paper, arXiv:2609.13948, §4.3).

It shares no code with ``strategies/programs/_ops.py``: it reads the lists from the rendered
prompt text with its own pattern and runs the hidden program from its plain representation
(``(("swap",), ("remove", 0))``) with its own implementation of each operation. Where the
generator's definition says an operation is undefined, this one raises, so running a drawn
program here also checks that it is total on the lists it meets.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence

__all__ = ["Undefined", "execute", "read_prompt"]

_LIST = r"\[((?:-?\d+(?:, )?)*)\]"
_EXAMPLE = re.compile(rf"^{_LIST} -> {_LIST}$", re.MULTILINE)
_QUERY = re.compile(rf"^{_LIST} -> \?$", re.MULTILINE)


class Undefined(ValueError):
    """A program step met a list it is not defined on."""


def _numbers(body: str) -> list[int]:
    return [int(tok) for tok in body.split(", ")] if body else []


def read_prompt(text: str) -> tuple[list[tuple[list[int], list[int]]], list[list[int]]]:
    """The support pairs and the query inputs, in the order the prompt shows them."""
    support = [(_numbers(a), _numbers(b)) for a, b in _EXAMPLE.findall(text)]
    queries = [_numbers(a) for a in _QUERY.findall(text)]
    return support, queries


def _step(name: str, args: Sequence[int], xs: list[int]) -> list[int]:
    size = len(xs)
    if name == "insert":
        where, value = args
        if not 0 <= where <= size:
            raise Undefined(f"insert at {where} into a list of {size}")
        out = xs.copy()
        out.insert(where, value)
        return out
    if name == "remove":
        (where,) = args
        if not 0 <= where < size:
            raise Undefined(f"remove at {where} from a list of {size}")
        return [x for i, x in enumerate(xs) if i != where]
    if name == "repeat":
        (target,) = args
        if not 1 <= size <= target:
            raise Undefined(f"repeat a list of {size} to length {target}")
        out = []
        while len(out) < target:
            out.extend(xs)
        return out[:target]
    if name == "shift":
        (offset,) = args
        ring = deque(xs)
        ring.rotate(offset)  # deque.rotate(k): k steps to the right, wrapping around
        return list(ring)
    if name == "swap":
        if not args:
            first, second = xs[: size // 2], xs[size // 2 :]
            return second + first
    if name == "tail":
        (count,) = args
        if count < 1:
            raise Undefined(f"tail of {count}")
        return xs[-count:] if count <= size else xs.copy()
    raise Undefined(f"unknown step {name}{tuple(args)}")


def execute(program: Sequence[Sequence[object]], xs: Sequence[int]) -> list[int]:
    """The output of ``program`` (steps ``(name, *args)`` left to right) on ``xs``."""
    out = list(xs)
    for name, *args in program:
        out = _step(str(name), [int(a) for a in args], out)  # type: ignore[call-overload]
    return out
