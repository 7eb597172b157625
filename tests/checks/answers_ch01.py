"""Chapter 01 answers: the correct one for each exercise, and wrong ones, each modelling one mistake.

A real file on purpose: the cutedsl-cpu tier moves an answer to CuTeDSL by its source."""
from cutekit import cute


# ---- ch01.layout_from_grid: layout_for(M, N) ----

def layout_for(M, N):
    return cute.make_layout((M, N), stride=(N, 1))


def layout_for_column_major(M, N):
    return cute.make_layout((M, N), stride=(1, M))


def layout_for_swapped_strides(M, N):
    return cute.make_layout((M, N), stride=(1, N))


def layout_for_transposed_shape(M, N):
    return cute.make_layout((N, M), stride=(1, N))


def layout_for_off_by_one_stride(M, N):
    return cute.make_layout((M, N), stride=(N + 1, 1))


def layout_for_worked_example_only(M, N):
    return cute.make_layout((4, 8), stride=(8, 1))


def layout_for_flattened(M, N):
    return cute.make_layout(M * N, stride=1)


def layout_for_returns_a_string(M, N):
    return f"({M},{N}):({N},1)"


# ---- ch01.layout_from_picture: layout_from_picture(grid) ----

def layout_from_picture(grid):
    down = grid[1][0] - grid[0][0]
    across = grid[0][1] - grid[0][0]
    return cute.make_layout((len(grid), len(grid[0])), stride=(down, across))


def picture_swapped_strides(grid):
    return cute.make_layout((len(grid), len(grid[0])), stride=(grid[0][1], grid[1][0]))


def picture_transposed_shape(grid):
    return cute.make_layout((len(grid[0]), len(grid)), stride=(grid[0][1], grid[1][0]))


def picture_assumes_row_major(grid):
    return cute.make_layout((len(grid), len(grid[0])), stride=(len(grid[0]), 1))


def picture_off_by_one_shape(grid):
    return cute.make_layout((len(grid) - 1, len(grid[0])), stride=(grid[1][0], grid[0][1]))


def picture_worked_example_only(grid):
    return cute.make_layout((2, 3), stride=(3, 1))


def picture_steps_from_last_cell(grid):
    return cute.make_layout((len(grid), len(grid[0])), stride=(grid[-1][-1], 1))


# ---- ch01.index_of_coordinate: index_of(shape, stride, coordinate) ----

def _size(shape):
    if isinstance(shape, int):
        return shape
    total = 1
    for mode in shape:
        total *= _size(mode)
    return total


def index_of(shape, stride, coordinate):
    if isinstance(shape, int):
        return coordinate * stride
    if isinstance(coordinate, int):  # unfold a 1-D index column-major: the first mode fastest
        offset = 0
        for mode_shape, mode_stride in zip(shape, stride):
            extent = _size(mode_shape)
            offset += index_of(mode_shape, mode_stride, coordinate % extent)
            coordinate //= extent
        return offset
    return sum(index_of(s, d, c) for s, d, c in zip(shape, stride, coordinate))


def index_of_row_major_unfolding(shape, stride, coordinate):
    if isinstance(shape, int):
        return coordinate * stride
    if isinstance(coordinate, int):
        offset = 0
        for mode_shape, mode_stride in reversed(list(zip(shape, stride))):
            extent = _size(mode_shape)
            offset += index_of_row_major_unfolding(mode_shape, mode_stride, coordinate % extent)
            coordinate //= extent
        return offset
    return sum(index_of_row_major_unfolding(s, d, c) for s, d, c in zip(shape, stride, coordinate))


def index_of_ignores_nesting(shape, stride, coordinate):
    """Treats an inner 1-D index as if it stepped by the nested mode's first stride."""
    if isinstance(coordinate, int):
        return index_of(shape, stride, coordinate)
    total = 0
    for s, d, c in zip(shape, stride, coordinate):
        first_stride = d if isinstance(d, int) else d[0]
        total += c * first_stride if isinstance(c, int) else index_of(s, d, c)
    return total


def index_of_off_by_one(shape, stride, coordinate):
    return index_of(shape, stride, coordinate) + 1


def index_of_reversed_inner_strides(shape, stride, coordinate):
    """Pairs the nested mode's coordinates with its strides in the wrong order."""
    return index_of(shape, (stride[0], stride[1][::-1]), coordinate)


def index_of_uses_shape_as_stride(shape, stride, coordinate):
    """Computes a compact column-major index from the shape, ignoring the strides."""
    return index_of(shape, (1, (_size(shape[0]), _size(shape[0]) * shape[1][0])), coordinate)


def index_of_worked_example_only(shape, stride, coordinate):
    return 19


def index_of_calls_the_layout(shape, stride, coordinate):
    return cute.make_layout(shape, stride=stride)(coordinate)


def index_of_returns_a_float(shape, stride, coordinate):
    return float(index_of(shape, stride, coordinate))


# ---- ch01.coalesce_by_hand: coalesced(shape, stride) ----

def _flat(t):
    return sum((_flat(x) for x in t), ()) if isinstance(t, tuple) else (t,)


def _layout_of(shapes, strides):
    if not shapes:
        return cute.make_layout(1, stride=0)
    if len(shapes) == 1:
        return cute.make_layout(shapes[0], stride=strides[0])
    return cute.make_layout(tuple(shapes), stride=tuple(strides))


def coalesced(shape, stride):
    shapes, strides = [], []
    for extent, step in zip(_flat(shape), _flat(stride)):
        if extent == 1:
            continue  # a size-1 mode adds no offsets
        if shapes and strides[-1] * shapes[-1] == step:
            shapes[-1] *= extent  # this mode continues the previous one
        else:
            shapes.append(extent)
            strides.append(step)
    return _layout_of(shapes, strides)


def coalesced_unchanged(shape, stride):
    return cute.make_layout(shape, stride=stride)


def coalesced_keeps_size_one_modes(shape, stride):
    shapes, strides = [], []
    for extent, step in zip(_flat(shape), _flat(stride)):
        if shapes and shapes[-1] != 1 and extent != 1 and strides[-1] * shapes[-1] == step:
            shapes[-1] *= extent
        else:
            shapes.append(extent)
            strides.append(step)
    return _layout_of(shapes, strides)


def coalesced_row_major_rule(shape, stride):
    shapes, strides = [], []
    for extent, step in zip(_flat(shape), _flat(stride)):
        if extent == 1:
            continue
        if shapes and step * extent == strides[-1]:
            shapes[-1] *= extent
            strides[-1] = step
        else:
            shapes.append(extent)
            strides.append(step)
    return _layout_of(shapes, strides)


def coalesced_keeps_one_mode_as_tuple(shape, stride):
    layout = coalesced(shape, stride)
    if isinstance(layout.shape, int):
        return cute.make_layout((layout.shape,), stride=(layout.stride,))
    return layout


def coalesced_merges_equal_strides(shape, stride):
    shapes, strides = [], []
    for extent, step in zip(_flat(shape), _flat(stride)):
        if extent == 1:
            continue
        if shapes and (strides[-1] * shapes[-1] == step or strides[-1] == step):
            shapes[-1] *= extent
        else:
            shapes.append(extent)
            strides.append(step)
    return _layout_of(shapes, strides)


def coalesced_worked_example_only(shape, stride):
    return cute.make_layout(12, stride=1)


def coalesced_calls_coalesce(shape, stride):
    return cute.coalesce(cute.make_layout(shape, stride=stride))


# ---- ch01.transpose_by_composition: transposer(M, N) ----

def transposer(M, N):
    return cute.make_layout((N, M), stride=(M, 1))


def transposer_returns_a_itself(M, N):
    return cute.make_layout((M, N), stride=(N, 1))


def transposer_returns_the_transpose(M, N):
    return cute.make_layout((N, M), stride=(1, N))


def transposer_swapped_strides(M, N):
    return cute.make_layout((N, M), stride=(1, M))


def transposer_worked_example_only(M, N):
    return cute.make_layout((8, 4), stride=(4, 1))


def transposer_off_by_one_stride(M, N):
    return cute.make_layout((N, M), stride=(M + 1, 1))


def transposer_shape_not_transposed(M, N):
    return cute.make_layout((M, N), stride=(1, M))
