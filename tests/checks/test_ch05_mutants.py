"""Chapter 05 checks: the correct answers pass in strict mode, and every wrong answer below (each named for
the mistake it models) loses points with a hint. Kernel answers are rebuilt from source and run on the
simulator, so the kernel mutants are written out as a real module, one host function per mistake."""


import pytest

from cutekit import cute
from cutekit.checks import check, exercises

from simulated import kernels_on_simulator, solution_code, with_mistakes
from verdicts import assert_right_answer_earns_every_reference_point, assert_wrong_answer_loses_points_with_a_hint, mutant_params, SEEDS


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


# ---- kernels: the row sum (ch05.tiled_copy_row_sum) and the dim-0 host (ch05.sum_dim0) ----

ROW_SUM_KERNEL = solution_code("05_tiled_copy", "@cute.kernel\ndef my_tiled_copy_kernel", 'check("ch05.tiled_copy_row_sum"') \
    .replace("my_tiled_copy_kernel", "row_sum_kernel_NAME").replace("my_sum_rows", "row_sum_NAME")

ROW_SUM_MISTAKES = {
    "no_predicate": ("cute.copy(tiled_copy, tXgX, fragment, pred=inside)", "cute.copy(tiled_copy, tXgX, fragment)"),
    "only_the_first_super_tile": ("cutlass.range(cute.size(gX, mode=[1, 1]))", "cutlass.range(1)"),
    "no_warp_reduction": ("row_total = cute.arch.warp_reduction_sum(", "row_total = ("),
    "stale_fragment_between_steps": ("        fragment.fill(0.0)\n", ""),
    "row_from_the_block_index_only": ("row = row_block * cute.size(gX, mode=[0, 0]) +", "row = row_block +"),
    "writes_rows_past_the_end": ("        if row < shape[0]:\n            mOut[row] = row_total",
                                 "        mOut[row] = row_total"),
}

INNER_SUM_KERNEL = solution_code("05_tiled_copy", "@cute.kernel\ndef inner_sum_kernel", "\n@cute.jit")

SUM_DIM0 = solution_code("05_tiled_copy", "@cute.jit\ndef sum_dim0", 'check("ch05.sum_dim0"').replace("def sum_dim0(", "def sum_dim0_NAME(")

DIM0_MISTAKES = {
    "grid_rounds_down": ("grid=[cute.ceil_div(columns, 128), 1, 1]", "grid=[columns // 128, 1, 1]"),
    "one_block_only": ("grid=[cute.ceil_div(columns, 128), 1, 1]", "grid=[1, 1, 1]"),
    "column_major_view": ("stride=(rows * columns, columns, 1)", "stride=(rows * columns, 1, rows)"),
    "reduces_over_n": ("cute.make_layout((1, rows, columns), stride=(rows * columns, columns, 1))",
                       "cute.make_layout((1, columns, rows), stride=(rows * columns, 1, columns))"),
    "forgets_the_output_view": ("inner_sum_kernel(view, out_view)", "inner_sum_kernel(view, mOut)"),
    "rows_as_outer": ("cute.make_layout((1, rows, columns), stride=(rows * columns, columns, 1))",
                      "cute.make_layout((rows, 1, columns), stride=(columns, columns, 1))"),
}


def _kernel_source() -> str:
    return "\n".join(["import cutlass\nimport cutlass.cute as cute\n", INNER_SUM_KERNEL,
                      with_mistakes(ROW_SUM_KERNEL, ROW_SUM_MISTAKES), with_mistakes(SUM_DIM0, DIM0_MISTAKES)])


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """The kernels, imported from a real file with the simulator as `cutlass`; real cutlass given back."""
    with kernels_on_simulator(_kernel_source(), "ch05_kernels", tmp_path_factory.mktemp("ch05_kernels")) as module:
        yield module


CORRECT = {
    "ch05.tiled_copy_for": tiled_copy_for,
    "ch05.partition_shape": partition_shape,
    "ch05.cache_key": cache_key,
}

MUTANTS = [
    ("ch05.tiled_copy_for", "threads_column_major", copy_threads_column_major),
    ("ch05.tiled_copy_for", "values_column_major", copy_values_column_major),
    ("ch05.tiled_copy_for", "one_value_per_atom", copy_one_value_per_atom),
    ("ch05.tiled_copy_for", "always_128_bits", copy_always_128_bits),
    ("ch05.tiled_copy_for", "swaps_threads_and_values", copy_swaps_threads_and_values),
    ("ch05.tiled_copy_for", "hard_coded_worked_example", copy_hard_coded_worked_example),
    ("ch05.partition_shape", "flat_mode_0", shape_flat_mode_0),
    ("ch05.partition_shape", "swaps_rest_modes", shape_swaps_rest_modes),
    ("ch05.partition_shape", "divides_by_threads_only", shape_divides_by_threads_only),
    ("ch05.partition_shape", "ignores_the_vector", shape_ignores_the_vector),
    ("ch05.partition_shape", "hard_coded_worked_example", shape_hard_coded_worked_example),
    ("ch05.partition_shape", "calls_the_switched_off_constructor", shape_calls_the_switched_off_constructor),
    ("ch05.cache_key", "dtype_only_as_in_the_seed", key_dtype_only),
    ("ch05.cache_key", "whole_shape", key_whole_shape),
    ("ch05.cache_key", "forgets_the_strides", key_forgets_the_strides),
    ("ch05.cache_key", "forgets_the_alignment", key_forgets_the_alignment),
    ("ch05.cache_key", "uses_m_not_n", key_uses_m_not_n),
    ("ch05.cache_key", "object_identity", key_object_identity),
    ("ch05.cache_key", "returns_a_list", key_returns_a_list),
]

KERNEL_SEED = 3     # cases: 4x256 divisible, 7x588 and 5x130 ragged (several super tiles, a masked last one)


def test_every_chapter_05_exercise_has_a_correct_answer_and_five_wrong_ones():
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch05"]
    assert set(ids) == set(CORRECT) | {"ch05.tiled_copy_row_sum", "ch05.sum_dim0"}
    for exercise_id in CORRECT:
        assert sum(1 for mutant in MUTANTS if mutant[0] == exercise_id) >= 5, exercise_id
    assert len(ROW_SUM_MISTAKES) >= 5 and len(DIM0_MISTAKES) >= 5


@pytest.mark.parametrize("exercise_id", sorted(CORRECT))
@pytest.mark.parametrize("seed", SEEDS)
def test_correct_answer_earns_every_reference_point_in_strict_mode(exercise_id, seed, monkeypatch):
    assert_right_answer_earns_every_reference_point(exercise_id, CORRECT[exercise_id], seed, monkeypatch)


@pytest.mark.parametrize("exercise_id,answer", mutant_params(MUTANTS))
def test_wrong_answer_loses_points_with_a_hint_on_every_seed(exercise_id, answer, monkeypatch):
    assert_wrong_answer_loses_points_with_a_hint(exercise_id, answer, SEEDS, monkeypatch)


def test_the_seeds_cache_key_is_told_what_it_confuses(monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    assert "the key needs the dtype, the static N" in str(check("ch05.cache_key", key_dtype_only, seed=0))


def test_a_column_major_thread_layout_is_named_in_the_hint(monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    assert "threads are column-major" in str(check("ch05.tiled_copy_for", copy_threads_column_major, seed=0))


def test_the_correct_row_sum_kernel_passes_on_the_simulator_in_strict_mode(kernels, monkeypatch):
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    assert check("ch05.tiled_copy_row_sum", kernels.row_sum_none, seed=KERNEL_SEED).passed


@pytest.mark.parametrize("mistake", sorted(ROW_SUM_MISTAKES))
def test_a_wrong_row_sum_kernel_loses_points_with_a_hint(kernels, mistake, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    result = check("ch05.tiled_copy_row_sum", getattr(kernels, f"row_sum_{mistake}"), seed=KERNEL_SEED)
    lost = [criterion for criterion in result.criteria if criterion.status == "failed"]
    assert lost and not result.passed, str(result)
    assert all(criterion.hint for criterion in lost)


def test_an_unguarded_row_sum_is_told_to_predicate(kernels, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    assert "cute.copy(..., pred=)" in str(check("ch05.tiled_copy_row_sum", kernels.row_sum_no_predicate,
                                                seed=KERNEL_SEED))


def test_the_correct_dim0_host_passes_on_the_simulator_in_strict_mode(kernels, monkeypatch):
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    assert check("ch05.sum_dim0", kernels.sum_dim0_none, seed=KERNEL_SEED).passed


@pytest.mark.parametrize("mistake", sorted(DIM0_MISTAKES))
def test_a_wrong_dim0_host_loses_points_with_a_hint(kernels, mistake, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    result = check("ch05.sum_dim0", getattr(kernels, f"sum_dim0_{mistake}"), seed=KERNEL_SEED)
    lost = [criterion for criterion in result.criteria if criterion.status == "failed"]
    assert lost and not result.passed, str(result)
    assert all(criterion.hint for criterion in lost)


@pytest.mark.cutedsl
def test_the_correct_row_sum_compiles_to_128_bit_loads_with_real_cutedsl(kernels, monkeypatch):
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference cutedsl-cpu")
    result = check("ch05.tiled_copy_row_sum", kernels.row_sum_none, seed=KERNEL_SEED)
    assert "cutedsl-cpu" in result.tiers and result.earned == result.possible, str(result)


@pytest.mark.cutedsl
def test_real_cutedsl_types_from_dlpack_static_and_a_fake_tensor_with_a_symbolic_m():
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    from cutekit.checks.ch05_tiled_copy import tensor_types_in_cutedsl
    static, dynamic, fake = tensor_types_in_cutedsl(8, 64)
    assert static == "Tensor<0x...@generic o (8,64):(64,1)>"
    assert dynamic == "Tensor<0x...@generic o (?,?):(?{i64},1)>"
    assert fake == "FakeTensor<Float32, (?{div=1}, 64), (64, 1)>"

