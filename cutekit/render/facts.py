"""What a picture shows, as NumPy arrays computed from the reference algebra (`cutekit.cute`), no drawing.

Every fact comes from calling a cute layout: a layout is a function, and `layout(k)` with an integer k walks
its coordinates column-major (colexicographically), so calling one mode at 0..size-1 lists that mode's values.
A rank-2 layout's value at (row, column) is mode0(row) + mode1(column), the definition of a layout
(offset = sum of coordinate x stride over the modes), so a whole grid costs size(mode0) + size(mode1) calls.

Every function that builds a grid or an array per element first checks its size against `limits.MAX_CELLS`
(`limits.check_cells`), so a layout too large to draw is refused with its size and the limit, at once.
"""
from __future__ import annotations

import numpy

from .. import cute
from ..cute.layout import Basis, ComposedLayout, Coord, Layout
from .limits import check_cells, check_layout


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


def _flat(x) -> tuple:
    return tuple(leaf for part in x for leaf in _flat(part)) if isinstance(x, tuple) else (x,)


def _leaf_indices(layout):
    """[(index array, stride)] per leaf of a Layout's flattened shape, for k = 0 .. size-1: the k-th
    coordinate (colexicographic, as calling the layout at k walks them) in that leaf, and the leaf's stride.
    None when the layout is not a plain Layout of int leaves (then callers call it per k)."""
    if not isinstance(layout, Layout):
        return None
    shapes, strides = _flat(layout.shape), _flat(layout.stride)
    if len(shapes) != len(strides) or not all(type(s) is int and s > 0 for s in shapes):
        return None
    k = numpy.arange(cute.size(layout), dtype=numpy.int64)
    leaves, period = [], 1
    for shape, stride in zip(shapes, strides):
        leaves.append(((k // period) % shape, stride))
        period *= shape
    return leaves


def _flat_basis(stride, rank: int) -> bool:
    """A stride that moves a flat rank-`rank` coordinate: 0 or `k@i` with 0 <= i < rank."""
    if type(stride) is int:
        return stride == 0
    if not isinstance(stride, Basis) or type(stride.scale) is not int:
        return False
    path = stride.mode if isinstance(stride.mode, tuple) else (stride.mode,)
    return len(path) == 1 and type(path[0]) is int and 0 <= path[0] < rank


def mode_values(layout) -> numpy.ndarray:
    """layout(k) for k = 0 .. size-1, as integers: for a Layout with int strides, the sum over its leaves of
    (the k-th coordinate in that leaf) x (its stride), computed with NumPy; otherwise by calling it at each k.

    >>> mode_values(cute.make_layout((2, 3), stride=(3, 1))).tolist()
    [0, 3, 1, 4, 2, 5]
    """
    leaves = _leaf_indices(layout)
    if leaves is not None and all(type(d) is int for _, d in leaves) and \
            sum(abs(d) * (int(c.max(initial=0))) for c, d in leaves) < 2 ** 62:
        values = numpy.zeros(cute.size(layout), dtype=numpy.int64)
        for coordinate, stride in leaves:
            if stride:
                values += coordinate * stride
        return values
    try:
        return numpy.fromiter((layout(k) for k in range(cute.size(layout))), dtype=numpy.int64,
                              count=cute.size(layout))
    except OverflowError:
        raise cute.CuteError(f"layout {layout} gives offsets that do not fit in 64 bits: "
                             "choose smaller strides") from None


def mode_coordinates(layout, rank: int) -> numpy.ndarray:
    """For a layout with basis strides (`1@0`, `4@1`: a piece of an identity tensor), the coordinate each index
    k = 0 .. size-1 gives, as an array of shape (size, rank): component i of the sum of the basis strides
    `scale@i` times the coordinate (computed with NumPy; a layout with int strides gives zeros). Other
    layouts (a nested basis path, a non-zero int stride beside basis strides) are called at each k."""
    leaves = _leaf_indices(layout)
    if leaves is not None and all(d == 0 if type(d) is int else isinstance(d, Basis) and type(d.scale) is int
                                  for _, d in leaves):
        coordinates = numpy.zeros((cute.size(layout), rank), dtype=numpy.int64)
        for coordinate, stride in leaves:
            if isinstance(stride, Basis) and stride.scale:
                path = stride.mode if isinstance(stride.mode, tuple) else (stride.mode,)
                if len(path) == 1 and 0 <= path[0] < rank:      # as Coord.as_tuple reads a flat coordinate
                    coordinates[:, path[0]] += coordinate * stride.scale
        return coordinates
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
    check_layout(layout)
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
    thread_mode, value_mode = tv_modes(tv_layout, tile_shape)
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


def tv_modes(tv_layout, tile_shape):
    """(thread mode, value mode) of a TV layout (a rank-1 one: one value per thread), after checking that its
    M x N tile and its threads x values are within `limits.MAX_CELLS`."""
    rows, columns = tile_shape
    check_cells(rows * columns, f"a {rows}x{columns} tile")
    thread_mode, value_mode = modes(tv_layout)[0], cute.make_layout(1, stride=0)
    if isinstance(tv_layout.shape, tuple) and len(tv_layout.shape) >= 2:
        thread_mode, value_mode = modes(tv_layout)[:2]
    threads, values = cute.size(thread_mode), cute.size(value_mode)
    check_cells(threads * values, f"the TV layout {tv_layout} ({threads} threads x {values} values)",
                unit="(thread, value) pairs", advice="choose fewer threads or values")
    return thread_mode, value_mode


def check_shape(shape) -> int:
    """The number of cells of a shape drawn as a grid (see `shape_extent`), refused above MAX_CELLS."""
    rows, columns = shape_extent(shape)
    return check_cells(rows * columns, f"a {str(shape).replace(' ', '')} shape")


def check_tiled(shape, tiler, zipped) -> int:
    """A tiler's grid, padded to whole tiles (tiles x tile size: more than the shape when the tiler does not
    divide it), refused above MAX_CELLS. `zipped` is zipped_divide of the shape's identity layout by it."""
    tile, rest = (cute.size(mode) for mode in modes(zipped))
    shape_text, tiler_text = str(shape).replace(" ", ""), str(tiler).replace(" ", "")
    return check_cells(tile * rest, f"a {shape_text} shape tiled by {tiler_text} ({rest} tiles of {tile} elements, "
                       "padded to whole tiles)", advice="choose a smaller shape or tiler")


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
    check_shape(shape)
    rank = shape_rank(shape)
    zipped = cute.zipped_divide(identity_layout(shape), tiler)
    check_tiled(shape, tiler, zipped)
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
    check_shape(shape)
    check_cells(cute.size(thr_layout), f"the thread layout {thr_layout}", unit="threads",
                advice="choose fewer threads")
    tiler = tuple(cute.size(mode) for mode in modes(thr_layout))
    rank = shape_rank(shape)
    zipped = cute.zipped_divide(identity_layout(shape), tiler)      # a tuple: CuTeDSL refuses an int tiler
    check_tiled(shape, thr_layout, zipped)
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
    origin, leaves = tensor.iterator, _leaf_indices(tensor.layout)
    if isinstance(origin, tuple) and len(origin) == rank and all(type(i) is int for i in origin) and \
            leaves is not None and all(_flat_basis(d, rank) for _, d in leaves):
        # tensor[k] is its origin moved by layout(k), a sum of flat basis strides: all k at once
        coordinates = numpy.asarray(origin, dtype=numpy.int64) + mode_coordinates(tensor.layout, rank)
    else:
        coordinates = numpy.array([tensor[k] for k in range(cute.size(tensor.layout))], dtype=numpy.int64)
        coordinates = coordinates.reshape(-1, rank)
    row, column, inside = cell_of_coordinate(coordinates, shape)
    return row[inside], column[inside]
