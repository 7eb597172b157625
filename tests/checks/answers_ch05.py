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
