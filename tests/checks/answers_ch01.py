"""Chapter 01 answers: the correct one for each exercise, and wrong ones, each modelling one mistake.

A real file on purpose: the cutedsl-cpu tier moves an answer to CuTeDSL by its source."""
from cutekit import cute


# ---- ch01.layout_from_grid: layout_for(M, N, B), a batch of B row-major M x N matrices ----

def layout_for(M, N, B):
    return cute.make_layout((M, N, B), stride=(N, 1, M * N))


def layout_for_by_order(M, N, B):
    """The same layout named by its order: n fastest, then m, then b."""
    return cute.make_ordered_layout((M, N, B), order=(1, 0, 2))


def layout_for_column_major(M, N, B):
    return cute.make_layout((M, N, B), stride=(1, M, M * N))


def layout_for_swapped_strides(M, N, B):
    return cute.make_layout((M, N, B), stride=(1, N, M * N))


def layout_for_batch_first(M, N, B):
    """numpy's habit: the batch index first in the shape."""
    return cute.make_layout((B, M, N), stride=(M * N, N, 1))


def layout_for_interleaved_batch(M, N, B):
    """The order read backwards: b fastest, so the matrices interleave element by element."""
    return cute.make_ordered_layout((M, N, B), order=(2, 1, 0))


def layout_for_batch_stride_one_row(M, N, B):
    return cute.make_layout((M, N, B), stride=(N, 1, N))


def layout_for_padded_rows(M, N, B):
    return cute.make_layout((M, N, B), stride=(N + 1, 1, M * N))


def layout_for_drops_the_batch(M, N, B):
    """The worked cell's row-major matrix again, without the batch mode."""
    return cute.make_layout((M, N), stride=(N, 1))


def layout_for_returns_a_string(M, N, B):
    return f"({M},{N},{B}):({N},1,{M * N})"


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


def picture_assumes_column_major(grid):
    return cute.make_layout((len(grid), len(grid[0])))


def picture_off_by_one_shape(grid):
    return cute.make_layout((len(grid) - 1, len(grid[0])), stride=(grid[1][0], grid[0][1]))


def picture_worked_example_only(grid):
    """The picture drawn above the exercise, whatever the grid."""
    return cute.make_layout((3, 5), stride=(7, 2))


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


def index_of_with_cute_size(shape, stride, coordinate):
    """The notebook's answer: cute.size stays on while index_of is checked."""
    if isinstance(shape, int):
        return coordinate * stride
    if isinstance(coordinate, int):
        offset = 0
        for mode_shape, mode_stride in zip(shape, stride):
            extent = cute.size(mode_shape)
            offset += index_of_with_cute_size(mode_shape, mode_stride, coordinate % extent)
            coordinate //= extent
        return offset
    return sum(index_of_with_cute_size(s, d, c) for s, d, c in zip(shape, stride, coordinate))


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
    """Treats a flat coordinate's entry for a nested mode as if it stepped by the mode's first stride."""
    if isinstance(coordinate, int):
        return index_of(shape, stride, coordinate)
    total = 0
    for s, d, c in zip(shape, stride, coordinate):
        first_stride = d if isinstance(d, int) else d[0]
        total += c * first_stride if isinstance(c, int) else index_of(s, d, c)
    return total


def index_of_flat_entry_row_major(shape, stride, coordinate):
    """Unfolds a flat coordinate's entry inside its nested mode row-major (the last inner mode fastest)."""
    if isinstance(coordinate, int):
        return index_of(shape, stride, coordinate)
    total = 0
    for s, d, c in zip(shape, stride, coordinate):
        if isinstance(c, int) and isinstance(s, tuple):
            total += (c // s[1]) * d[0] + (c % s[1]) * d[1]
        else:
            total += index_of(s, d, c)
    return total


def index_of_off_by_one(shape, stride, coordinate):
    return index_of(shape, stride, coordinate) + 1


def index_of_reversed_inner_strides(shape, stride, coordinate):
    """Pairs the nested mode's coordinates with its strides in the wrong order."""
    return index_of(shape, tuple(d[::-1] if isinstance(d, tuple) else d for d in stride), coordinate)


def index_of_uses_shape_as_stride(shape, stride, coordinate):
    """Computes the compact column-major index from the shape alone, ignoring the strides."""
    flat = []

    def strides_of(mode):  # compact column-major strides with the shape's nesting
        if isinstance(mode, int):
            flat.append(mode)
            return _size(flat[:-1]) if len(flat) > 1 else 1
        return tuple(strides_of(m) for m in mode)
    return index_of(shape, strides_of(shape), coordinate)


def index_of_assumes_second_mode_nests(shape, stride, coordinate):
    """Written for the worked example's structure (rows, (inner, outer)): breaks when the first mode nests."""
    rows, (inner, outer) = shape
    row_stride, (inner_stride, outer_stride) = stride
    if isinstance(coordinate, int):
        m, rest = coordinate % rows, coordinate // rows
        return m * row_stride + (rest % inner) * inner_stride + (rest // inner) * outer_stride
    m, c = coordinate
    if isinstance(c, int):
        c = (c % inner, c // inner)
    return m * row_stride + c[0] * inner_stride + c[1] * outer_stride


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


def coalesced_with_cute_flatten(shape, stride):
    """The notebook's answer, with cute.flatten."""
    shapes, strides = [], []
    for extent, step in zip(cute.flatten(shape), cute.flatten(stride)):
        if extent == 1:
            continue
        if shapes and strides[-1] * shapes[-1] == step:
            shapes[-1] *= extent
        else:
            shapes.append(extent)
            strides.append(step)
    if not shapes:
        return cute.make_layout(1, stride=0)
    if len(shapes) == 1:
        return cute.make_layout(shapes[0], stride=strides[0])
    return cute.make_layout(tuple(shapes), stride=tuple(strides))


def coalesced_with_nothing_left_unhandled(shape, stride):
    """The notebook's answer before step 6 said what is left when every mode has size 1."""
    shapes, strides = [], []
    for extent, step in zip(cute.flatten(shape), cute.flatten(stride)):
        if extent == 1:
            continue
        if shapes and strides[-1] * shapes[-1] == step:
            shapes[-1] *= extent
        else:
            shapes.append(extent)
            strides.append(step)
    if len(shapes) == 1:
        return cute.make_layout(shapes[0], stride=strides[0])
    return cute.make_layout(tuple(shapes), stride=tuple(strides))


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


def coalesced_drops_ones_after_merging(shape, stride):
    """Merges only modes that were neighbours in the original, then drops the size-1 modes."""
    shapes, strides = [], []
    for extent, step in zip(_flat(shape), _flat(stride)):
        if shapes and shapes[-1] != 1 and strides[-1] * shapes[-1] == step:
            shapes[-1] *= extent
        else:
            shapes.append(extent)
            strides.append(step)
    kept = [(s, d) for s, d in zip(shapes, strides) if s != 1]
    return _layout_of([s for s, _ in kept], [d for _, d in kept])


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


def coalesced_does_not_flatten(shape, stride):
    """Applies the rules to the top-level modes only, leaving nested modes as they are."""
    shapes, strides = [], []
    for extent, step in zip(shape, stride):
        if extent == 1:
            continue
        if shapes and isinstance(step, int) and isinstance(shapes[-1], int) and strides[-1] * shapes[-1] == step:
            shapes[-1] *= extent
        else:
            shapes.append(extent)
            strides.append(step)
    return _layout_of(shapes, strides)


def coalesced_worked_example_only(shape, stride):
    return cute.make_layout(12, stride=1)


def coalesced_calls_coalesce(shape, stride):
    return cute.coalesce(cute.make_layout(shape, stride=stride))


# ---- ch01.transpose_by_composition: transposer(M, N, B), A = (M,N,B):(N,1,M*N) ----

def transposer(M, N, B):
    return cute.make_layout((N, M, B), stride=(M, 1, M * N))


def transposer_returns_the_view(M, N, B):
    """The view itself (A's offsets), which as X is a compact layout of the swapped shape: a reshape."""
    return cute.make_layout((N, M, B), stride=(1, N, M * N))


def transposer_shape_swapped_only(M, N, B):
    """Only the shape swapped, the strides left to the default: compact column-major over (N, M, B)."""
    return cute.make_layout((N, M, B))


def transposer_drops_the_batch(M, N, B):
    """The worked cell's 2-D transposer, without the batch mode."""
    return cute.make_layout((N, M), stride=(M, 1))


def transposer_unfolds_a_row_major(M, N, B):
    """X gives A's index of (m, n, b) counted row-major over A's shape (b fastest)."""
    return cute.make_layout((N, M, B), stride=(B, N * B, 1))


def transposer_batch_stride_one_column(M, N, B):
    return cute.make_layout((N, M, B), stride=(M, 1, M))


def transposer_swapped_strides(M, N, B):
    return cute.make_layout((N, M, B), stride=(1, M, M * N))


def transposer_shape_not_transposed(M, N, B):
    return cute.make_layout((M, N, B), stride=(1, M, M * N))


def transposer_worked_example_only(M, N, B):
    """Step 7's transposer for the 4 x 8 matrix, whatever M, N and B are."""
    return cute.make_layout((8, 4), stride=(4, 1))


def _slip(build, name: str, doc: str = "", **switches):
    """A learner's function made of `build` with some of its switches thrown: one row of a mistake table (the
    algebra exercises' right answers and their slips share one builder each)."""
    def answer(*arguments):
        return build(*arguments, **switches)
    answer.__name__ = answer.__qualname__ = name
    answer.__doc__ = doc or None
    return answer


# ---- ch01.compose_by_hand: composed(A, B), or None where CuTe refuses ----

def _flat_pairs(layout):
    if isinstance(layout.shape, tuple):
        return list(zip(cute.flatten(layout.shape), cute.flatten(layout.stride)))
    return [(layout.shape, layout.stride)]


def _composed(A, B, *, coalesce_a=True, stride_check=True, shape_check=True, bounded=False):
    a_modes = _flat_pairs(cute.coalesce(A) if coalesce_a else A)

    def one_mode(s, d):                                    # rule 1: every d-th element of A's 1-D view, s of them
        shape, stride = [], []
        for k, (n, e) in enumerate(a_modes):
            if k == len(a_modes) - 1:                      # A's last mode never runs out
                if bounded and d * (s - 1) >= n:
                    return None
                shape.append(s)
                stride.append(d * e)
                break
            if d >= n:                                     # skipped whole
                if d % n and stride_check:
                    return None                            # stride divisibility broken
                d //= n
                continue
            take = min(-(-n // d), s)
            if s % take and shape_check:
                return None                                # shape divisibility broken
            shape.append(take)
            stride.append(d * e)
            s, d = s // take, 1
            if s <= 1:
                break
        return (shape[0], stride[0]) if len(shape) == 1 else (tuple(shape), tuple(stride))

    parts = [one_mode(s, d) for s, d in _flat_pairs(B)]   # rule 2: each mode of B on its own
    if None in parts:
        return None
    if len(parts) == 1:
        return cute.make_layout(parts[0][0], stride=parts[0][1])
    return cute.make_layout(tuple(p[0] for p in parts), stride=tuple(p[1] for p in parts))


composed = _slip(_composed, "composed")


def composed_roles_swapped(A, B):
    """B read through A: composition(B, A) by the same rules."""
    return _composed(B, A)


def composed_strides_multiplied(A, B):
    """Each mode of B keeps its size and takes its stride times A's stride of the same mode."""
    a, b = _flat_pairs(A), _flat_pairs(B)
    shapes = tuple(s for s, _ in b)
    strides = tuple(d * a[min(k, len(a) - 1)][1] for k, (_, d) in enumerate(b))
    return cute.make_layout(shapes[0], stride=strides[0]) if len(b) == 1 else cute.make_layout(shapes, stride=strides)


composed_without_shape_divisibility = _slip(_composed, "composed_without_shape_divisibility", shape_check=False)
composed_without_stride_divisibility = _slip(_composed, "composed_without_stride_divisibility", stride_check=False)
composed_without_coalescing_a = _slip(_composed, "composed_without_coalescing_a", coalesce_a=False)
composed_stops_at_the_end_of_a = _slip(_composed, "composed_stops_at_the_end_of_a",
                                       "Refuses a B that reads past A's last element.", bounded=True)


def composed_worked_example_only(A, B):
    return cute.make_layout((2, 2), stride=(16, 1))


def composed_calls_the_switched_off_composition(A, B):
    return cute.composition(A, B)


# ---- ch01.complement_by_hand: complement_of(shape, stride, n) ----

def _complement_of(shape, stride, n, *, sort=True, gaps=True, between=True, gap_step=None, drop_ones=True,
                   round_up=True, block_from_cosize=False):
    modes = [(s, d) for s, d in zip(_flat(shape), _flat(stride)) if not drop_ones or (s != 1 and d != 0)]
    if sort:
        modes.sort(key=lambda mode: mode[1])
    shapes, strides, reached = [], [], 1
    for k, (s, d) in enumerate(modes):       # the gap before each mode, in stride order, then the mode's block
        if gaps and (between or k == 0):
            shapes.append(d // reached)
            strides.append(gap_step or reached)
        reached = s * d
    if block_from_cosize:
        reached = cute.cosize(cute.make_layout(shape, stride=stride))
    shapes.append(-(-n // reached) if round_up else n // reached)
    strides.append(reached)
    return cute.coalesce(cute.make_layout(tuple(shapes), stride=tuple(strides)))


complement_of = _slip(_complement_of, "complement_of")
complement_rest_rounded_down = _slip(_complement_of, "complement_rest_rounded_down", round_up=False)
complement_block_from_cosize = _slip(_complement_of, "complement_block_from_cosize", block_from_cosize=True)
complement_modes_not_sorted = _slip(_complement_of, "complement_modes_not_sorted", sort=False)
complement_gaps_not_filled = _slip(_complement_of, "complement_gaps_not_filled", gaps=False)
complement_only_the_first_gap = _slip(_complement_of, "complement_only_the_first_gap",
                                      "A's modes taken as contiguous: the gap before the first, none between them.",
                                      between=False)
complement_gap_steps_by_one = _slip(_complement_of, "complement_gap_steps_by_one", gap_step=1)
complement_size_one_modes_kept = _slip(_complement_of, "complement_size_one_modes_kept", drop_ones=False)


def complement_worked_example_only(shape, stride, n):
    return cute.make_layout((2, 3), stride=(1, 8))


def complement_calls_the_switched_off_complement(shape, stride, n):
    return cute.complement(cute.make_layout(shape, stride=stride), n)


# ---- ch01.right_inverse_by_hand: right_inverse_of(shape, stride) ----

def _right_inverse_of(shape, stride, *, sort=True, stop=True, index_steps=True):
    modes = _flat_pairs(cute.coalesce(cute.make_layout(shape, stride=stride)))
    before, running = [], 1
    for size, _ in modes:                    # where each mode steps in A's 1-D index
        before.append(running)
        running *= size
    order = sorted(range(len(modes)), key=lambda i: modes[i][1]) if sort else range(len(modes))
    shapes, strides, reached = [1], [0], 1
    for i in order:
        size, step = modes[i]
        if step != reached and stop:
            break                            # offset `reached` is not A's: R ends here
        shapes.append(size)
        strides.append(before[i] if index_steps else step)
        reached = size * step
    return cute.coalesce(cute.make_layout(tuple(shapes), stride=tuple(strides)))


right_inverse_of = _slip(_right_inverse_of, "right_inverse_of")
right_inverse_offsets_not_indices = _slip(_right_inverse_of, "right_inverse_offsets_not_indices", index_steps=False)
right_inverse_modes_not_sorted = _slip(_right_inverse_of, "right_inverse_modes_not_sorted", sort=False)
right_inverse_runs_past_the_hole = _slip(_right_inverse_of, "right_inverse_runs_past_the_hole", stop=False)


def right_inverse_worked_example_only(shape, stride):
    return cute.make_layout((8, 4), stride=(4, 1))


def right_inverse_calls_the_switched_off_right_inverse(shape, stride):
    return cute.right_inverse(cute.make_layout(shape, stride=stride))


def in_cutedsl(cute, function, *arguments):
    """Runs in the CuTeDSL worker: one of ch01's `*_in_cutedsl` functions, by name."""
    from cutekit.checks import ch01_layouts
    return getattr(ch01_layouts, function)(cute, *arguments)
