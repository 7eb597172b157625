"""What a picture shows, as NumPy arrays computed from the reference algebra (`cutekit.cute`), no drawing.

Every fact comes from calling a cute layout: a layout is a function, and `layout(k)` with an integer k walks
its coordinates column-major (colexicographically), so calling one mode at 0..size-1 lists that mode's values.
A rank-2 layout's value at (row, column) is mode0(row) + mode1(column), the definition of a layout
(offset = sum of coordinate x stride over the modes), so a whole grid costs size(mode0) + size(mode1) calls.
"""
from __future__ import annotations

import numpy

from .. import cute
from ..cute.layout import Basis, ComposedLayout, Coord, Layout


def as_layout(value) -> Layout:
    """A Layout from a Layout, a shape (int or tuple: compact column-major) or a tensor (its layout)."""
    if isinstance(value, (Layout, ComposedLayout)):
        return value
    if hasattr(value, "layout") and hasattr(value, "with_layout"):
        return value.layout
    return cute.make_layout(value)


def modes(layout) -> list:
    """The top-level modes of a layout, each as a layout (a rank-1 layout is its own only mode)."""
    if not isinstance(layout.shape, tuple):
        return [layout]
    return [cute.get(layout, mode=[i]) for i in range(len(layout.shape))]


def _has_basis_strides(layout) -> bool:
    return any(isinstance(d, Basis) for d in cute.flatten(layout.stride)) if isinstance(layout.stride, tuple) \
        else isinstance(layout.stride, Basis)


def mode_values(layout) -> numpy.ndarray:
    """layout(k) for k = 0 .. size-1, as integers.

    >>> mode_values(cute.make_layout((2, 3), stride=(3, 1))).tolist()
    [0, 3, 1, 4, 2, 5]
    """
    return numpy.fromiter((layout(k) for k in range(cute.size(layout))), dtype=numpy.int64,
                          count=cute.size(layout))


def mode_coordinates(layout, rank: int) -> numpy.ndarray:
    """For a layout with basis strides (`1@0`, `4@1`: a piece of an identity tensor), the coordinate each index
    k = 0 .. size-1 gives, as an array of shape (size, rank)."""
    rows = []
    for k in range(cute.size(layout)):
        value = layout(k)
        rows.append(Coord.of(value).as_tuple(rank) if not isinstance(value, int) else (0,) * rank)
    return numpy.array(rows, dtype=numpy.int64).reshape(-1, rank)


def row_and_column_modes(layout):
    """(row layout, column layout): mode 0 and mode 1 of a rank-2 layout; a rank-1 layout is one row (the row
    mode is the trivial 1:0); modes 1.. of a deeper-rank layout are grouped into the column mode."""
    layout = as_layout(layout)
    if not isinstance(layout.shape, tuple) or len(layout.shape) == 1:
        single = modes(layout)[0]
        return cute.make_layout(1, stride=0), single
    if len(layout.shape) > 2:
        layout = cute.group_modes(layout, 1, len(layout.shape))
    return tuple(modes(layout))


def grid_values(layout) -> numpy.ndarray:
    """The value at every (row, column) of a layout drawn as a grid (see `row_and_column_modes`), shape
    (rows, columns). A ComposedLayout (a swizzled layout) applies its inner function to offset + outer value.

    >>> grid_values(cute.make_layout((2, 3), stride=(3, 1))).tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    if isinstance(layout, ComposedLayout):
        outer = grid_values(layout.outer) + layout.offset
        if isinstance(layout.inner, cute.Swizzle):
            return layout.inner(outer)       # a swizzle is bit arithmetic, so it applies to the whole array
        return numpy.vectorize(lambda value: layout.inner(int(value)), otypes=[numpy.int64])(outer)
    row_mode, column_mode = row_and_column_modes(layout)
    if _has_basis_strides(layout):
        raise cute.CuteError(f"layout {layout} has basis strides (an identity tensor's): its values are "
                             "coordinates, not offsets; draw a layout with integer strides")
    return mode_values(row_mode)[:, None] + mode_values(column_mode)[None, :]


def mode_shapes(layout):
    """(row shape, column shape) of a layout drawn as a grid: the int-tuples that set its group lines."""
    if isinstance(layout, ComposedLayout):
        return mode_shapes(layout.outer)
    row_mode, column_mode = row_and_column_modes(layout)
    return row_mode.shape, column_mode.shape


def tile_size(tiler) -> tuple:
    """(M, N) of a tiler given as an int, a Layout, or a tuple of ints / Layouts; a 1-D tile is one row."""
    if isinstance(tiler, tuple):
        sizes = tuple(cute.size(t) for t in tiler)
    else:
        sizes = (cute.size(tiler),)
    if len(sizes) == 1:
        return 1, sizes[0]
    if len(sizes) != 2:
        raise cute.CuteError(f"a tile to draw must be 1-D or 2-D, got {len(sizes)} modes: {tiler}")
    return sizes


def tv_cells(tv_layout, tile_shape):
    """Which (thread, value) lands on each cell of an M x N tile, from a (thread, value) -> column-major
    tile index layout. Returns (thread, value) arrays of shape (M, N), -1 where no (thread, value) lands.
    Where several land on one cell (a stride-0 broadcast), the lowest thread (then value) is shown, as
    CUTLASS's print_latex overwrites in reverse."""
    rows, columns = tile_shape
    thread_mode, value_mode = modes(tv_layout)[0], cute.make_layout(1, stride=0)
    if isinstance(tv_layout.shape, tuple) and len(tv_layout.shape) >= 2:
        thread_mode, value_mode = modes(tv_layout)[:2]
    index = mode_values(thread_mode)[:, None] + mode_values(value_mode)[None, :]
    if index.max(initial=0) >= rows * columns:
        raise cute.CuteError(f"TV layout {tv_layout} reaches index {int(index.max())}, outside the "
                             f"{rows}x{columns} tile")
    threads = numpy.broadcast_to(numpy.arange(index.shape[0])[:, None], index.shape)
    values = numpy.broadcast_to(numpy.arange(index.shape[1])[None, :], index.shape)
    thread_of = numpy.full(rows * columns, -1, dtype=numpy.int64)
    value_of = numpy.full(rows * columns, -1, dtype=numpy.int64)
    # NumPy keeps the last write to a repeated index, so writing in reverse order keeps the first (t, v)
    order = slice(None, None, -1)
    thread_of[index.ravel()[order]] = threads.ravel()[order]
    value_of[index.ravel()[order]] = values.ravel()[order]
    # the tile index is column-major: index = m + n * M
    return thread_of.reshape(columns, rows).T, value_of.reshape(columns, rows).T


def identity_layout(shape) -> Layout:
    """The layout of an identity tensor over `shape` with each mode flattened (a nested mode such as (4,8)
    becomes 32): its values are (row, column) coordinates of the drawn grid (basis strides). Dividing it
    gives the same functions of each mode's index as dividing `make_identity_tensor(shape)`, whose nested
    coordinates a grid cannot use directly."""
    flat = tuple(cute.size(mode) for mode in shape) if isinstance(shape, tuple) else shape
    return cute.make_identity_tensor(flat).layout


def coordinates_of(layout, rank: int) -> numpy.ndarray:
    """The coordinate at every (row, column) of a basis-stride layout drawn as a grid: shape (rows, cols, rank)."""
    row_mode, column_mode = row_and_column_modes(layout)
    return mode_coordinates(row_mode, rank)[:, None, :] + mode_coordinates(column_mode, rank)[None, :, :]


def shape_rank(shape) -> int:
    return len(shape) if isinstance(shape, tuple) else 1


def shape_extent(shape) -> tuple:
    """(rows, columns) of a shape drawn as a grid: mode 0 and the product of the others; a 1-D shape is a row."""
    if not isinstance(shape, tuple) or len(shape) == 1:
        return 1, cute.size(shape)
    return cute.size(shape[0]), cute.size(shape[1:]) if len(shape) > 2 else cute.size(shape[1])


def cell_of_coordinate(coordinates: numpy.ndarray, shape):
    """(row, column) arrays for coordinates of a (rank-1 or rank-2) shape, and a mask of those inside it."""
    rows, columns = shape_extent(shape)
    if coordinates.shape[-1] == 1:
        row, column = numpy.zeros_like(coordinates[..., 0]), coordinates[..., 0]
    else:
        row, column = coordinates[..., 0], coordinates[..., 1]
    inside = (row < rows) & (column < columns)
    return row, column, inside


def tile_owner(shape, tiler):
    """Which tile of zipped_divide(shape, tiler) holds each element: (owner (rows, cols) array of tile indices,
    rest shape). The tile index is the rest mode's column-major index, as `zipped_divide(...)[(None, k)]`."""
    rank = shape_rank(shape)
    zipped = cute.zipped_divide(identity_layout(shape), tiler)
    tile_mode, rest_mode = modes(zipped)
    tile_coordinates = mode_coordinates(tile_mode, rank)
    rest_coordinates = mode_coordinates(rest_mode, rank)
    coordinates = tile_coordinates[:, None, :] + rest_coordinates[None, :, :]   # (tile element, tile, rank)
    row, column, inside = cell_of_coordinate(coordinates, shape)
    owner = numpy.full(shape_extent(shape), -1, dtype=numpy.int64)
    tiles = numpy.broadcast_to(numpy.arange(coordinates.shape[1])[None, :], inside.shape)
    owner[row[inside], column[inside]] = tiles[inside]
    return owner, rest_mode.shape


def thread_owner(shape, thr_layout):
    """Which thread of `thr_layout` owns each element under local_partition (an outer partition): the element
    at position s (column-major) of every thr_layout-shaped tile belongs to thread thr_layout(s).
    Returns an array of thread indices of shape (rows, columns)."""
    thr_layout = as_layout(thr_layout)
    tiler = tuple(cute.size(mode) for mode in modes(thr_layout))
    rank = shape_rank(shape)
    zipped = cute.zipped_divide(identity_layout(shape), tiler if len(tiler) > 1 else tiler[0])
    tile_mode, rest_mode = modes(zipped)
    coordinates = mode_coordinates(tile_mode, rank)[:, None, :] + mode_coordinates(rest_mode, rank)[None, :, :]
    row, column, inside = cell_of_coordinate(coordinates, shape)
    thread_at_position = mode_values(thr_layout)
    threads = numpy.broadcast_to(thread_at_position[:, None], inside.shape)
    owner = numpy.full(shape_extent(shape), -1, dtype=numpy.int64)
    owner[row[inside], column[inside]] = threads[inside]
    return owner


def tensor_cells(tensor, shape) -> tuple:
    """(rows, columns) arrays of the cells an identity-tensor piece covers (inside `shape`)."""
    rank = shape_rank(shape)
    coordinates = numpy.array([tensor[k] for k in range(cute.size(tensor.layout))], dtype=numpy.int64)
    coordinates = coordinates.reshape(-1, rank)
    row, column, inside = cell_of_coordinate(coordinates, shape)
    return row[inside], column[inside]
