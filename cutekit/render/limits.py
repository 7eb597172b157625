"""How large a picture may be: one limit, `MAX_CELLS`, and one check, `check_cells`, that every picture (and
every explorer, through the pictures and `facts`) calls with the sizes it is about to draw *before* it builds
any grid or array, so a size it cannot draw is refused at once with a message naming the size, what it is the
size of, and the limit, instead of running out of memory or time.

What is counted: the cells of every grid a picture draws (all panels together: divide's three, swizzle's
two, a TiledMMA's A, B and C); a tiler's padded grid (tiles x tile size, when the tiler does not divide
the shape); the index range a layout_inverse picture draws (its cosize); and a TV layout's threads x values
(the (thread, value) pairs placed on the tile).

MAX_CELLS = 65536 (a 256x256 grid). Measured on a 2-core machine shared with other work (load ~2), Python
time for the figure built and encoded as a PNG, at or just under the limit:

    layout 256x256 0.20 s, layout 1x65536 0.13 s, layout_inverse of 65536 indices 0.25 s,
    tv_layout 256x256 (65536 threads x 1 value) 0.20 s, divide 104x208 by (8,16) (three 21632-cell panels)
    0.33 s, local_tile 256x256 in 1x1 tiles 0.21 s, local_partition 256x256 by 65536 threads 0.18 s,
    copy_partition 256x256 with 65536 threads 0.21 s, tiled_copy 128x256 (two panels) 0.29 s,
    swizzle 128x256 (two panels) 0.32 s

so every picture at the limit draws in about a third of a second, well under the ~2 s a learner waits for;
refusing a size costs well under a millisecond. Grids this large are drawn without labels (above
grid.LABEL_LIMIT = 4096 cells), per-element facts are computed with NumPy (`facts.mode_values`), and ticks
stay at most 16 per axis (`grid.tick_step`), which is what keeps the time flat up to the limit
(`python -m benchmarks.bench_render --at-limit` measures them again).
"""
from __future__ import annotations

from .. import cute

MAX_CELLS = 65536


class PictureTooLarge(cute.CuteError):
    """A picture was asked for more than MAX_CELLS cells (or threads x values, or indices). A CuteError (so a
    ValueError), so the explorers show its message in their error line, like any other bad input.
    `count`, `what` and `limit` say what was asked for."""

    def __init__(self, message, *, count, what, limit):
        super().__init__(message)
        self.count, self.what, self.limit = count, what, limit


def check_cells(count: int, what: str, *, unit: str = "cells", advice: str = "choose a smaller shape") -> int:
    r"""Refuse a picture of `count` `unit` (cells, or (thread, value) pairs, ...) when it is more than MAX_CELLS:
    raise PictureTooLarge("{what} has {count} {unit}; pictures draw at most {MAX_CELLS} cells: {advice}").
    Returns `count` when it is within the limit.

    >>> check_cells(32, "a (4,8) layout")
    32
    >>> try:
    ...     check_cells(10 ** 10, "a (100000,100000) layout")
    ... except PictureTooLarge as error:
    ...     print(*str(error).split("; "), sep="\n")
    a (100000,100000) layout has 10000000000 cells
    pictures draw at most 65536 cells: choose a smaller shape
    """
    count = int(count)
    if count > MAX_CELLS:
        raise PictureTooLarge(f"{what} has {count} {unit}; pictures draw at most {MAX_CELLS} cells: {advice}",
                              count=count, what=what, limit=MAX_CELLS)
    return count


def check_layout(layout, what: str | None = None) -> int:
    """check_cells for a layout drawn as a grid (one cell per coordinate): its size."""
    return check_cells(cute.size(layout), f"a {_shape_text(layout.shape)} layout" if what is None else what)


def _shape_text(shape) -> str:
    return str(shape).replace(" ", "")
