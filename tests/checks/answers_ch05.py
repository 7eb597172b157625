"""Chapter 05's answers for the checks' tests: the right ones, and wrong ones named for the mistake each
models (a learner's usual confusion about copy atoms, thread and value layouts, partition shapes and compile
cache keys)."""
from cutekit import cute


# ---- ch05.tiled_copy_for ----

def _atom(dtype, bits):
    return cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), dtype, num_bits_per_copy=bits)


def tiled_copy_for(thread_shape, value_shape, dtype):
    return cute.make_tiled_copy_tv(_atom(dtype, value_shape[1] * dtype.width),
                                   cute.make_ordered_layout(thread_shape, order=(1, 0)),
                                   cute.make_ordered_layout(value_shape, order=(1, 0)))


def copy_threads_column_major(thread_shape, value_shape, dtype):
    return cute.make_tiled_copy_tv(_atom(dtype, value_shape[1] * dtype.width), cute.make_layout(thread_shape),
                                   cute.make_ordered_layout(value_shape, order=(1, 0)))


def copy_values_column_major(thread_shape, value_shape, dtype):
    return cute.make_tiled_copy_tv(_atom(dtype, value_shape[1] * dtype.width),
                                   cute.make_ordered_layout(thread_shape, order=(1, 0)), cute.make_layout(value_shape))


def copy_one_value_per_atom(thread_shape, value_shape, dtype):
    return cute.make_tiled_copy_tv(_atom(dtype, dtype.width), cute.make_ordered_layout(thread_shape, order=(1, 0)),
                                   cute.make_ordered_layout(value_shape, order=(1, 0)))


def copy_always_128_bits(thread_shape, value_shape, dtype):
    return cute.make_tiled_copy_tv(_atom(dtype, 128), cute.make_ordered_layout(thread_shape, order=(1, 0)),
                                   cute.make_ordered_layout(value_shape, order=(1, 0)))


def copy_swaps_threads_and_values(thread_shape, value_shape, dtype):
    return cute.make_tiled_copy_tv(_atom(dtype, value_shape[1] * dtype.width),
                                   cute.make_ordered_layout(value_shape, order=(1, 0)),
                                   cute.make_ordered_layout(thread_shape, order=(1, 0)))


def copy_hard_coded_worked_example(thread_shape, value_shape, dtype):
    return tiled_copy_for((4, 32), (1, 4), cute.Float32)


# ---- ch05.partition_shape ----

def partition_shape(thread_shape, value_shape, vector, tile_shape):
    values = value_shape[0] * value_shape[1]
    return ((vector, values // vector), tile_shape[0] // (thread_shape[0] * value_shape[0]),
            tile_shape[1] // (thread_shape[1] * value_shape[1]))


def shape_flat_mode_0(thread_shape, value_shape, vector, tile_shape):
    (_, *rest) = partition_shape(thread_shape, value_shape, vector, tile_shape)
    return (value_shape[0] * value_shape[1], *rest)


def shape_swaps_rest_modes(thread_shape, value_shape, vector, tile_shape):
    mode0, down, across = partition_shape(thread_shape, value_shape, vector, tile_shape)
    return (mode0, across, down)


def shape_divides_by_threads_only(thread_shape, value_shape, vector, tile_shape):
    mode0 = partition_shape(thread_shape, value_shape, vector, tile_shape)[0]
    return (mode0, tile_shape[0] // thread_shape[0], tile_shape[1] // thread_shape[1])


def shape_ignores_the_vector(thread_shape, value_shape, vector, tile_shape):
    return partition_shape(thread_shape, value_shape, 1, tile_shape)


def shape_hard_coded_worked_example(thread_shape, value_shape, vector, tile_shape):
    return ((4, 1), 1, 4)


def shape_calls_the_switched_off_constructor(thread_shape, value_shape, vector, tile_shape):
    return tiled_copy_for(thread_shape, value_shape, cute.Float32).get_slice(0).partition_S(
        cute.make_identity_tensor(tile_shape)).shape


# ---- ch05.cache_key ----

def cache_key(x):
    return (x.dtype, x.shape[1], x.stride(), x.data_ptr() % 16 == 0)


def key_dtype_only(x):
    return f"reduce_sum_{x.dtype}"


def key_whole_shape(x):
    return (x.dtype, tuple(x.shape), x.stride(), x.data_ptr() % 16 == 0)


def key_forgets_the_strides(x):
    return (x.dtype, x.shape[1])


def key_forgets_the_alignment(x):
    return (x.dtype, x.shape[1], x.stride())


def key_uses_m_not_n(x):
    return (x.dtype, x.shape[0], x.stride(), x.data_ptr() % 16 == 0)


def key_object_identity(x):
    return id(x)


def key_returns_a_list(x):
    return [x.dtype, x.shape[1], x.stride(), x.data_ptr() % 16 == 0]


# ---- ch05.capstone_softmax ----
# Whole kernels, as source (the mutant test writes them to a module imported on the simulator, NAME replaced by
# each mistake's name; the model answer is the chapter's own, read from solutions/05_tiled_copy.py).

# A learner's softmax in the style of version 2: a warp per row (row = 4 * block + warp, the row's rows past M
# skipped as a whole warp), the row cut into tiles of 32 * vector with zipped_divide, lane t's vector taken
# through composition with a (32, vector) TV layout, a vector read only where elem_less says it exists; three
# passes over the row (max, sum, output), the output written with autovec_copy under the same test.
LEARNER_SOFTMAX = '''
@cute.kernel
def learner_softmax_kernel_NAME(mX: cute.Tensor, mY: cute.Tensor, tv_layout: cute.Layout):
    lane = cute.arch.lane_idx()
    warp = cute.arch.warp_idx()
    block, _, _ = cute.arch.block_idx()
    row = block * 4 + warp
    if row < cute.size(mX, mode=[0]):
        x_row = mX[row, None]
        y_row = mY[row, None]
        width = cute.size(tv_layout)
        x_tiles = cute.zipped_divide(x_row, (width,))
        y_tiles = cute.zipped_divide(y_row, (width,))
        c_tiles = cute.zipped_divide(cute.make_identity_tensor(x_row.shape), (width,))
        fragment = cute.make_rmem_tensor(cute.make_layout(cute.size(tv_layout, mode=[1])), cutlass.Float32)
        biggest = -cutlass.Float32.inf
        for k in cutlass.range(cute.size(x_tiles, mode=[1])):
            coordinate = cute.composition(c_tiles[(None, k)], tv_layout)[lane, None][0]
            if cute.elem_less(coordinate, x_row.shape):
                cute.autovec_copy(cute.composition(x_tiles[(None, k)], tv_layout)[lane, None], fragment)
                biggest = fragment.load().reduce(cute.ReductionOp.MAX, biggest, 0)
        row_max = cute.arch.warp_reduction_max(biggest)
        total = cutlass.Float32(0.0)
        for k in cutlass.range(cute.size(x_tiles, mode=[1])):
            coordinate = cute.composition(c_tiles[(None, k)], tv_layout)[lane, None][0]
            if cute.elem_less(coordinate, x_row.shape):
                cute.autovec_copy(cute.composition(x_tiles[(None, k)], tv_layout)[lane, None], fragment)
                exponentials = cute.math.exp(fragment.load() - row_max)
                total = total + exponentials.reduce(cute.ReductionOp.ADD, cutlass.Float32(0.0), 0)
        row_sum = cute.arch.warp_reduction_sum(total)
        for k in cutlass.range(cute.size(x_tiles, mode=[1])):
            coordinate = cute.composition(c_tiles[(None, k)], tv_layout)[lane, None][0]
            if cute.elem_less(coordinate, x_row.shape):
                cute.autovec_copy(cute.composition(x_tiles[(None, k)], tv_layout)[lane, None], fragment)
                fragment.store(cute.math.exp(fragment.load() - row_max) / row_sum)
                cute.autovec_copy(fragment, cute.composition(y_tiles[(None, k)], tv_layout)[lane, None])


@cute.jit
def learner_softmax_rows_NAME(mX: cute.Tensor, mY: cute.Tensor, vector: cutlass.Constexpr):
    tv_layout = cute.make_layout((32, vector), stride=(vector, 1))
    learner_softmax_kernel_NAME(mX, mY, tv_layout).launch(
        grid=[cute.ceil_div(cute.size(mX, mode=[0]), 4), 1, 1], block=[128, 1, 1])
'''

# Right and slow: one thread walks a whole row, three times, one float per load (the lanes of a warp read 32
# rows N floats apart). It earns the simulator's points and loses the PTX criterion's.
ROW_PER_THREAD_SOFTMAX = '''
@cute.kernel
def row_per_thread_kernel(mX: cute.Tensor, mY: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    row = bidx * 128 + tidx
    if row < cute.size(mX, mode=[0]):
        biggest = -cutlass.Float32.inf
        for n in cutlass.range(cute.size(mX, mode=[1])):
            biggest = cute.arch.fmax(biggest, mX[row, n])
        total = cutlass.Float32(0.0)
        for n in cutlass.range(cute.size(mX, mode=[1])):
            total = total + cute.math.exp(mX[row, n] - biggest)
        for n in cutlass.range(cute.size(mX, mode=[1])):
            mY[row, n] = cute.math.exp(mX[row, n] - biggest) / total


@cute.jit
def row_per_thread_softmax_rows(mX: cute.Tensor, mY: cute.Tensor, vector: cutlass.Constexpr):
    row_per_thread_kernel(mX, mY).launch(grid=[cute.ceil_div(cute.size(mX, mode=[0]), 128), 1, 1],
                                         block=[128, 1, 1])
'''


# ---- ch05.sum_dim0 ----
# Right and slow: version 4's one thread per column, one float per load. It earns the simulator's points and loses
# the PTX criterion's (no ld.global.v4).
COLUMN_PER_THREAD_SUM = '''
@cute.kernel
def column_per_thread_kernel(mX: cute.Tensor, mOut: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    n = bidx * 128 + tidx
    if n < cute.size(mX, mode=[1]):
        total = cutlass.Float32(0.0)
        for m in cutlass.range(cute.size(mX, mode=[0])):
            total = total + mX[m, n]
        mOut[n] = total


@cute.jit
def column_per_thread_sum_dim0(mX: cute.Tensor, mOut: cute.Tensor):
    column_per_thread_kernel(mX, mOut).launch(grid=[cute.ceil_div(cute.size(mX, mode=[1]), 128), 1, 1],
                                              block=[128, 1, 1])
'''
