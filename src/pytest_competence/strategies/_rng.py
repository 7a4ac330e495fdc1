"""Per-instance random streams: every random choice of a design keyed by its instance.

:func:`stream_rng` is ``np.random.default_rng([seed, n, index, stream])`` bit for bit, made cheap
for the consecutive instances a design asks for by deriving numpy's SeedSequence hash for a block
of them at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.random.bit_generator import ISeedSequence

__all__ = ["stream_rng"]


def stream_rng(seed: int, n: int, index: int, stream: int) -> np.random.Generator:
    """The generator of one kind of random choice for instance ``index`` of level ``n``.

    Keying every choice by ``(seed, n, index, stream)`` keeps instances identical across
    processes, xdist workers and options that draw other streams. The generator is
    ``np.random.default_rng([seed, n, index, stream])``, bit for bit; a design asks for the same
    stream of many consecutive instances, so from the second instance of a block of
    :data:`_BLOCK` on, the seeds of the whole block come from :func:`_block_seeds` (numpy's
    SeedSequence hash, vectorised) instead of one SeedSequence per generator: about 5 µs a
    call instead of 20. (Its ``bit_generator.seed_seq`` then holds the seed it hands PCG64, not
    a spawnable SeedSequence; nothing here spawns.)
    """
    key = (seed, n, index, stream)
    # SeedSequence splits each int of a list into 32-bit words in Python; it takes a uint32
    # array of the same words as is. Anything but ints in [0, 2**32) keeps the list, which numpy
    # splits (or rejects) exactly as it always has. (Spelled out: a generator expression here
    # cost a fifth of the call.)
    if not (
        isinstance(seed, int)
        and isinstance(n, int)
        and isinstance(index, int)
        and isinstance(stream, int)
        and 0 <= min(key)
        and max(key) < 2**32
    ):
        return np.random.default_rng(list(key))
    block = (seed, n, stream, index // _BLOCK)
    seeds = _BLOCKS.get(block, ())  # () never asked, None asked once
    if seeds is None:  # the second instance of the block asked: derive the whole block
        seeds = _BLOCKS[block] = _block_seeds(seed, n, stream, block[3] * _BLOCK)
    if not isinstance(seeds, np.ndarray):  # one-off lookups (Hypothesis, shrinking) stay as cheap
        if len(_BLOCKS) >= _BLOCKS_KEPT:
            _BLOCKS.clear()
        _BLOCKS[block] = None
        return np.random.default_rng(np.array(key, dtype=np.uint32))
    # numpy's stubs name SeedSequence; PCG64 takes any ISeedSequence.
    fixed: Any = _PCG64Seed(seeds[index % _BLOCK])
    return np.random.Generator(np.random.PCG64(fixed))


_BLOCK = 256  # consecutive indices whose seeds are derived together
_BLOCKS_KEPT = 1024  # blocks remembered (~8 MB at most), forgotten all at once past that
#: ``(seed, n, stream, index // _BLOCK)`` → None once touched, then the block's PCG64 seeds.
_BLOCKS: dict[tuple[int, int, int, int], np.ndarray | None] = {}

# numpy's SeedSequence (numpy/random/bit_generator.pyx, stable by numpy's stream-compatibility
# policy): hashmix's multiplier after k calls, for its mixing (A) and output (B) stages.
_M32 = 0xFFFFFFFF


def _powers(init: int, mult: int, count: int) -> tuple[int, ...]:
    out = [init]
    for _ in range(count):
        out.append(out[-1] * mult & _M32)
    return tuple(out)


_A = _powers(0x43B0D7E5, 0x931E8875, 16)
_B = _powers(0x8B51F9DD, 0x58F38DED, 8)


def _hashmix(value: Any, k: int) -> Any:
    """SeedSequence's ``hashmix`` as its ``k``-th call (ints or uint32 arrays)."""
    value = (value ^ _A[k]) * _A[k + 1] & _M32
    return value ^ value >> 16


def _mix(x: Any, y: Any) -> Any:
    result = (0xCA01F9DD * x - 0x4973F715 * y) & _M32
    return result ^ result >> 16


def _block_seeds(seed: int, n: int, stream: int, start: int) -> np.ndarray:
    """``SeedSequence([seed, n, i, stream]).generate_state(4, uint64)`` for the ``_BLOCK``
    indices ``i`` from ``start``: the four uint64 words PCG64 seeds itself with, one row each.

    SeedSequence hashes each entropy word into a pool of four, then mixes every pool word into
    every other, source by source; only the index varies here, so the words before it mixes in
    are plain ints and the rest one uint64 array op each (values kept below 2**32).
    """
    index = np.arange(start, start + _BLOCK, dtype=np.uint64) & _M32
    m0, m1, m3 = _hashmix(seed, 0), _hashmix(n, 1), _hashmix(stream, 3)
    # Source 0, then 1 (plain ints but for the index's word m2), then 2 and 3 (arrays).
    m1, m2, m3 = (
        _mix(m1, _hashmix(m0, 4)),
        _mix(_hashmix(index, 2), _hashmix(m0, 5)),
        _mix(m3, _hashmix(m0, 6)),
    )
    m0, m2, m3 = _mix(m0, _hashmix(m1, 7)), _mix(m2, _hashmix(m1, 8)), _mix(m3, _hashmix(m1, 9))
    m0, m1, m3 = _mix(m0, _hashmix(m2, 10)), _mix(m1, _hashmix(m2, 11)), _mix(m3, _hashmix(m2, 12))
    m0, m1, m2 = _mix(m0, _hashmix(m3, 13)), _mix(m1, _hashmix(m3, 14)), _mix(m2, _hashmix(m3, 15))
    pool = (m0, m1, m2, m3)
    words = []
    for i in range(8):  # generate_state(4, uint64): eight 32-bit words cycling over the pool
        word = (pool[i % 4] ^ _B[i]) * _B[i + 1] & _M32
        words.append(word ^ word >> 16)
    out = np.empty((_BLOCK, 4), dtype=np.uint64)
    for j in range(4):  # little-endian pairs of words, as numpy views them
        out[:, j] = words[2 * j] | words[2 * j + 1] << np.uint64(32)
    return out


class _PCG64Seed(ISeedSequence):
    """The state ``PCG64`` asks its seed sequence for, derived ahead by :func:`_block_seeds`."""

    __slots__ = ("words",)

    def __init__(self, words: np.ndarray) -> None:
        self.words = words

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> np.ndarray:
        if n_words != 4 or np.dtype(dtype) != np.uint64:
            raise ValueError("derived for PCG64 only: 4 words of uint64")
        return self.words
