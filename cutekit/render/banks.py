"""Shared-memory banks and bank conflicts, as plain numbers (no drawing), so pictures, widgets, checks and
tests count conflicts the same way.

The hardware fact: shared memory is 32 banks of 4-byte words; word w lives in bank w % 32. One request is
served in as many wavefronts as the busiest bank has *distinct* words to deliver (lanes reading the same
word share it, a broadcast). A request of more than 128 bytes needs ceil(words / 32) wavefronts anyway.

The model of an access used here: each row of a layout drawn as a grid (mode 0 picks the row, every column
of that row is read at once) is one request. So to study a warp reading a column of a row-major tile, pass
the layout whose rows are those columns (e.g. the transpose).
"""
from __future__ import annotations

import numpy

from . import facts

BANKS = 32
WORD_BITS = 32


def words_of(offsets, element_bits: int = 32) -> numpy.ndarray:
    """The 4-byte word that holds each element offset (elements of `element_bits` bits)."""
    return numpy.asarray(offsets, dtype=numpy.int64) * element_bits // WORD_BITS


def banks_of(offsets, element_bits: int = 32) -> numpy.ndarray:
    """The bank of each element offset: its word modulo 32.

    >>> banks_of([0, 1, 32, 33]).tolist(), banks_of([0, 1, 2, 3], element_bits=16).tolist()
    ([0, 1, 0, 1], [0, 0, 1, 1])
    """
    return words_of(offsets, element_bits) % BANKS


def wavefronts(offsets, element_bits: int = 32) -> tuple[int, int]:
    """(wavefronts, fewest possible) for one request reading all `offsets` at once: the most distinct words
    any one bank must deliver, and ceil(distinct words / 32).

    >>> wavefronts(range(32)), wavefronts(range(0, 32 * 32, 32)), wavefronts([0] * 32)
    ((1, 1), (32, 1), (1, 1))
    """
    words = numpy.unique(words_of(list(offsets), element_bits))
    if words.size == 0:
        return 0, 0
    per_bank = numpy.bincount(words % BANKS, minlength=BANKS)
    return int(per_bank.max()), int(-(-words.size // BANKS))


def conflicts_per_access(layout, element_bits: int = 32) -> list[int]:
    """For each row of `layout` (one request, see the module docstring): the wavefronts it needs beyond the
    fewest possible. 0 means conflict-free; 7 means an 8-way conflict."""
    offsets = facts.grid_values(layout)
    return [wavefronts(row, element_bits)[0] - wavefronts(row, element_bits)[1] for row in offsets]


def bank_conflicts(layout, element_bits: int = 32) -> int:
    """The extra wavefronts, summed over every row of `layout` read as one request (Layout or a swizzled
    ComposedLayout). 0 means every access is conflict-free.

    A warp reading one column of a 32x32 float tile stored row-major (rows of the transpose): each of the 32
    rows is a 32-way conflict, 31 extra wavefronts each.

    >>> from cutekit import cute
    >>> bank_conflicts(cute.make_layout((32, 32), stride=(1, 32)))
    992
    >>> bank_conflicts(cute.make_layout((32, 32), stride=(1, 33)))     # padded by one word: none
    0
    """
    return int(sum(conflicts_per_access(layout, element_bits)))
