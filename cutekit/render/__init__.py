"""cutekit.render: pictures of CuTe layouts, drawn live from the reference algebra (`cutekit.cute`).

Every function returns a matplotlib `Figure` (object API, no pyplot state) and shows nothing; a notebook
displays it as the cell's value, and `fig.savefig("x.png")` / `fig.savefig("x.svg")` saves it.

    layout(layout)                              offsets on a grid, hierarchical modes grouped by thicker lines
    layout_inverse(layout)                      which coordinate holds each index
    tv_layout(tv_layout, tiler_mn, highlight=t) a TV layout as print_latex draws it: T{t} V{v} per cell
    divide(layout, tiler, tile=k)               source coloured by tile | logical_divide | zipped_divide
    local_tile(shape, tiler, coord)             which block owns each element; block `coord` outlined
    local_partition(shape, thr_layout, index)   which thread owns each element; thread `index` highlighted
    tiled_copy(tiled_copy)                      source and destination TV layouts side by side
    tiled_mma(tiled_mma, highlight=t)           A, B, C with thread and value labels, as print_latex(TiledMMA)
    ldmatrix(num_matrices, transpose, lane=l)   row addresses from lanes, elements to register halves
    swizzle(swizzle, layout, element_bits)      shared-memory banks before/after, with the conflict counts
    bank_conflicts(layout, element_bits)        the conflict count itself (an int; see cutekit.render.banks)

Sizes: every picture draws at most `MAX_CELLS` cells (all its panels together; also a TV layout's threads x
values, a tiler's padded grid, an inverse's index range) and refuses more, before building anything, with
`PictureTooLarge` (a CuteError, so a ValueError) whose message names the size, what it is the size of, and the
limit (see cutekit.render.limits, which also gives the measured draw times at the limit).

Legibility: labelled cells are drawn at least `grid.MIN_CELL_PIXELS` (16 px) wide with labels of at least
`grid.MIN_LABEL_POINTS` (5.5 pt) at `grid.LEGIBLE_DPI` (90, the explorers' PNG): a TV layout too wide for that is
wrapped into bands of columns (a 4x128 tile as four 4x32 bands), a swizzle's two panels too wide side by side are
stacked. tests/render/test_legibility.py holds this for every picture the course notebooks draw.

A widget redrawing the same picture with another highlight passes `figure=` (only colours, outlines and
titles are repainted) and shows `frames.png_frame(figure)` (only those artists are drawn again).

Depends on cutekit.cute only (arrows: widgets -> render -> cute). Inside, no module imports the package or
another in a circle (tests/test_architecture.py): limits, then facts and banks, grid and frames, then pictures.
"""
from . import banks, facts, frames, grid, limits
from .frames import png_bytes
from .limits import MAX_CELLS, PictureTooLarge
from .pictures import (bank_conflicts, copy_partition, divide, layout, layout_inverse, ldmatrix, local_partition,
                       local_tile, swizzle, tiled_copy, tiled_mma, tv_layout)

__all__ = ["layout", "layout_inverse", "tv_layout", "divide", "local_tile", "local_partition", "tiled_copy",
           "copy_partition", "tiled_mma", "ldmatrix", "swizzle", "bank_conflicts", "banks", "facts", "frames", "grid",
           "limits", "MAX_CELLS", "PictureTooLarge", "png_bytes"]

