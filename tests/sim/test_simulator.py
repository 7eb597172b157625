"""The CPU simulator runs CuTeDSL kernels unchanged: the course's kernels give NumPy's answers, and the
bugs a GPU hides (a missing barrier, an off-by-one guard, a conflicting layout) are caught by name."""
import importlib
import re

import numpy
import pytest
import torch

from cutekit.sim import DeadlockError, OutOfBoundsError, RaceError, last_launch, wavefronts

rng = numpy.random.default_rng(7)


def floats(*shape):
    return rng.standard_normal(shape).astype(numpy.float32)


# ------------------------------------------------------------------------------------ course kernels

@pytest.mark.parametrize("shape", [(256, 256), (100, 36), (3, 1000), (17, 5)])
def test_the_tiled_copy_add_matches_numpy_for_any_shape(sim, shape):
    from cutlass.cute.runtime import from_dlpack
    elementwise_add = importlib.import_module("benchmarks.kernels.elementwise_add")
    a, b = floats(*shape), floats(*shape)
    c = numpy.zeros_like(a)
    vector = 4 if shape[1] % 4 == 0 else 1
    elementwise_add.add(from_dlpack(a, assumed_align=16), from_dlpack(b, assumed_align=16), from_dlpack(c, assumed_align=16), vector, 4)
    numpy.testing.assert_array_equal(c, a + b)


def test_torch_cpu_tensors_are_shared_so_the_kernel_writes_into_them(sim):
    from cutlass.cute.runtime import from_dlpack
    elementwise_add = importlib.import_module("benchmarks.kernels.elementwise_add")
    a, b = torch.randn(64, 128, dtype=torch.float16), torch.randn(64, 128, dtype=torch.float16)
    c = torch.zeros_like(a)
    elementwise_add.add(from_dlpack(a, assumed_align=16), from_dlpack(b, assumed_align=16), from_dlpack(c, assumed_align=16), 8, 4)
    assert torch.equal(c, a + b)


@pytest.mark.parametrize("variant", ["cuda_style", "composition", "tiled_copy"])
@pytest.mark.parametrize("shape", [(8, 1024), (5, 1001)])
def test_every_row_sum_variant_matches_numpy(sim, variant, shape):
    from cutlass.cute.runtime import from_dlpack
    reduce_sum = importlib.import_module("benchmarks.kernels.reduce_sum")
    x, out = floats(*shape), numpy.zeros(shape[0], numpy.float32)
    reduce_sum.VARIANTS[variant](from_dlpack(x, assumed_align=16), from_dlpack(out, assumed_align=16), 4 if shape[1] % 4 == 0 else 1)
    numpy.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-5, atol=1e-4)


def test_the_any_dim_sum_matches_numpy(sim):
    from cutlass.cute.runtime import from_dlpack
    reduce_sum = importlib.import_module("benchmarks.kernels.reduce_sum")
    x, out = floats(3, 10, 64), numpy.zeros((3, 64), numpy.float32)
    reduce_sum.sum_any_dim(from_dlpack(x, assumed_align=16), from_dlpack(out, assumed_align=16), 4)
    numpy.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_the_simt_sgemm_matches_torch(sim):
    from cutlass.cute.runtime import from_dlpack
    sgemm_simt = importlib.import_module("benchmarks.kernels.sgemm_simt")
    a_t, b = torch.randn(16, 128), torch.randn(16, 132)
    c = torch.zeros(128, 132)
    sgemm_simt.sgemm(from_dlpack(a_t.T, assumed_align=16), from_dlpack(b.T, assumed_align=16), from_dlpack(c, assumed_align=16))
    torch.testing.assert_close(c, a_t.T @ b, rtol=1e-5, atol=1e-4)


def test_the_tensor_core_gemm_matches_torch_with_ldmatrix_and_mma_sync_per_warp(sim):
    from cutlass.cute.runtime import from_dlpack
    gemm_tensorcore = importlib.import_module("benchmarks.kernels.gemm_tensorcore")
    a, b = torch.randn(128, 64).half(), torch.randn(136, 64).half()
    c = torch.zeros(128, 136, dtype=torch.float16)
    gemm_tensorcore.gemm_tn(from_dlpack(a, assumed_align=16), from_dlpack(b, assumed_align=16), from_dlpack(c, assumed_align=16))
    torch.testing.assert_close(c.float(), a.float() @ b.float().T, rtol=2e-3, atol=2e-2)
    assert last_launch().bank_conflicts == 0        # the Swizzle<3,3,3> layout is conflict-free


@pytest.mark.parametrize("knobs", [{"BM": 256, "BN": 128, "WARPS_M": 4, "WARPS_N": 2, "GROUP_M": 16},
                                   {"BM": 128, "BN": 256, "WARPS_M": 2, "WARPS_N": 4}],
                         ids=["256x128 on 4x2 warps (FAST)", "128x256 on 2x4 warps: C staged in sB"])
def test_the_bigger_gemm_tiles_store_c_through_conflict_free_shared_memory(sim, knobs):
    from cutlass.cute.runtime import from_dlpack
    gemm_tensorcore = importlib.import_module("benchmarks.kernels.gemm_tensorcore")
    a, b = torch.randn(136, 64).half(), torch.randn(264, 64).half()
    c = torch.full((136, 264), float("nan"), dtype=torch.float16)
    with gemm_tensorcore.configured(**knobs):
        gemm_tensorcore.gemm_tn(*[from_dlpack(t, assumed_align=16) for t in (a, b, c)])
    torch.testing.assert_close(c.float(), a.float() @ b.float().T, rtol=2e-3, atol=2e-2)
    report = last_launch()
    assert report.bank_conflicts == 0
    # the epilogue's shared-memory stores (fp16 pairs) and 128-bit reads are among the counted lines
    assert sum(1 for line in report.bank_conflicts_by_line if line.startswith("gemm_tensorcore.py")) >= 8


# ------------------------------------------------------------------------------------ CUDA semantics

def test_a_2d_grid_of_2d_blocks_runs_one_thread_per_element(sim, kernels):
    from cutlass.cute.runtime import from_dlpack
    a, b = floats(256, 256), floats(256, 256)
    c = numpy.zeros_like(a)
    kernels.add_one_per_thread(from_dlpack(a, assumed_align=16), from_dlpack(b, assumed_align=16), from_dlpack(c, assumed_align=16))
    numpy.testing.assert_array_equal(c, a + b)
    report = last_launch()
    assert report.grid == (16, 16, 1) and report.block == (16, 16, 1) and report.threads == 65536


def test_printf_prints_every_thread_of_a_3d_launch_in_order(sim, kernels, capsys):
    kernels.hello((2, 1, 2), (2, 2, 1))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 16 and lines[0] == "block (0,0,0) thread (0,0,0)" and lines[-1] == "block (1,0,1) thread (1,1,0)"
    assert last_launch().printed == lines


def test_warp_reduction_sum_gives_each_warp_its_total(sim, kernels):
    from cutlass.cute.runtime import from_dlpack
    x, out = floats(96), numpy.zeros(3, numpy.float32)
    kernels.warp_sums(from_dlpack(x, assumed_align=16), from_dlpack(out, assumed_align=16))
    numpy.testing.assert_allclose(out, x.reshape(3, 32).sum(axis=1), rtol=1e-5)


def test_shared_memory_is_shared_by_the_block_and_the_barrier_orders_it(sim, kernels):
    from cutlass.cute.runtime import from_dlpack
    x, out = floats(64), numpy.zeros(64, numpy.float32)
    kernels.reverse(from_dlpack(x, assumed_align=16), from_dlpack(out, assumed_align=16))
    numpy.testing.assert_array_equal(out, x[::-1])


def test_cp_async_lands_after_wait_group(sim, kernels):
    from cutlass.cute.runtime import from_dlpack
    x, out = floats(128), numpy.zeros(32, numpy.float32)
    kernels.staged_copy(from_dlpack(x, assumed_align=16), from_dlpack(out, assumed_align=16))
    numpy.testing.assert_array_equal(out, x[::-1][:32])


# ------------------------------------------------------------------------------------ planted bugs

def test_a_missing_barrier_is_reported_as_a_shared_memory_race(sim, kernels):
    from cutlass.cute.runtime import from_dlpack
    x, out = floats(64), numpy.zeros(64, numpy.float32)
    with pytest.raises(RaceError, match=r"race on .*thread \d+ .*sync_threads"):
        kernels.reverse(from_dlpack(x, assumed_align=16), from_dlpack(out, assumed_align=16), False)


def test_an_off_by_one_guard_stops_at_the_first_thread_outside_naming_the_tensor(sim, kernels):
    from cutlass.cute.runtime import from_dlpack
    a, b = floats(20, 20), floats(20, 20)
    c = numpy.zeros_like(a)
    with pytest.raises(OutOfBoundsError) as caught:
        kernels.add_one_per_thread(from_dlpack(a, assumed_align=16), from_dlpack(b, assumed_align=16), from_dlpack(c, assumed_align=16), True)
    message = str(caught.value)
    assert "gA" in message and "at coordinate (20,0)" in message and "block (0, 1, 0)" in message and "thread (0, 4, 0)" in message


def test_an_index_past_the_end_of_a_tensor_is_out_of_bounds(sim, kernels):
    from cutlass.cute.runtime import from_dlpack
    too_short = floats(32)              # reverse launches 64 threads, and thread 32 reads gIn[32]
    with pytest.raises(OutOfBoundsError, match=r"thread \(32, 0, 0\) .*gIn .*coordinate 32"):
        kernels.reverse(from_dlpack(too_short, assumed_align=16), from_dlpack(numpy.zeros(64, numpy.float32), assumed_align=16))


def test_a_128_bit_copy_from_a_tensor_not_known_to_be_aligned_is_refused_as_cutedsl_refuses_it(sim, kernels):
    from cutlass.cute.runtime import from_dlpack
    x, out = floats(128), numpy.zeros(32, numpy.float32)
    with pytest.raises(Exception, match=r"128-bit copy needs 16-byte aligned .*gIn.*assumed_align=16"):
        kernels.staged_copy(from_dlpack(x), from_dlpack(out), True)


def test_reading_what_cp_async_has_not_finished_writing_is_reported(sim, kernels):
    from cutlass.cute.runtime import from_dlpack
    x, out = floats(128), numpy.zeros(32, numpy.float32)
    with pytest.raises(RaceError, match="cp_async_wait_group"):
        kernels.staged_copy(from_dlpack(x, assumed_align=16), from_dlpack(out, assumed_align=16), False)


def test_a_barrier_half_the_block_skips_is_a_deadlock_not_a_hang(sim, kernels):
    from cutlass.cute.runtime import from_dlpack
    with pytest.raises(DeadlockError, match=r"threads 0-15 wait at sync_threads .*48 threads have already returned"):
        kernels.half_barrier(from_dlpack(numpy.zeros(64, numpy.float32), assumed_align=16))


def test_column_reads_of_an_unpadded_tile_conflict_32_ways_and_padding_removes_it(sim, kernels):
    from cutlass.cute.runtime import from_dlpack
    x = floats(32, 32)
    out = numpy.zeros_like(x)
    kernels.transpose(from_dlpack(x, assumed_align=16), from_dlpack(out, assumed_align=16), 0)
    numpy.testing.assert_array_equal(out, x.T)
    conflicting = last_launch()
    kernels.transpose(from_dlpack(x, assumed_align=16), from_dlpack(out, assumed_align=16), 1)
    numpy.testing.assert_array_equal(out, x.T)
    padded = last_launch()
    # 8 warps x 4 column reads, each 32-way: 31 extra wavefronts each; the row writes are conflict-free
    assert conflicting.bank_conflicts == 8 * 4 * 31
    assert padded.bank_conflicts == 0


@pytest.mark.parametrize("bits, conflicts", [(0, 4 * 48), (2, 0)])
def test_chapter_07s_m_major_tile_conflicts_only_unswizzled_and_only_in_the_ldmatrix_trans_reads(sim, kernels, bits,
                                                                                                   conflicts):
    """Chapter 07 section 5 counts, per k-block, 48 extra passes for the ldmatrix.trans reads of its unswizzled
    32x64 M-major tile and none for the cp.async writes, with render.bank_conflicts; the simulator running the same
    copies (4 k-blocks) must count the same, and Swizzle<2,3,3> none."""
    from cutlass.cute.runtime import from_dlpack
    a_km = torch.randn(64, 32, dtype=torch.float16)            # (K, M) row-major: A (M, K), M contiguous
    out_km = torch.zeros(64, 32, dtype=torch.float16)
    kernels.m_major_tile(from_dlpack(a_km.T, assumed_align=16), from_dlpack(out_km.T, assumed_align=16), bits)
    assert torch.equal(out_km, a_km)                           # every fragment holds the MMA's A values
    report = last_launch()
    assert report.bank_conflicts == conflicts
    if conflicts:
        (where, extra), = [(line, n) for line, n in report.bank_conflicts_by_line.items() if n]
        assert extra == conflicts and "kernels.py" in where    # one line: the ldmatrix copy


def test_wavefronts_follow_the_bank_rules():
    assert wavefronts([(lane, [4 * lane]) for lane in range(32)], 4) == 1            # 32 banks, once each
    assert wavefronts([(lane, [0]) for lane in range(32)], 4) == 1                   # one word, broadcast
    assert wavefronts([(lane, [8 * lane]) for lane in range(32)], 4) == 2            # stride 2: 2-way
    assert wavefronts([(lane, [16 * lane]) for lane in range(32)], 16) == 4          # 128-bit: 4 phases


# ------------------------------------------------------------------------------------ the switch

def test_use_rejects_an_unknown_mode_by_name():
    import cutekit
    with pytest.raises(ValueError, match=r"'auto', 'sim', 'gpu'.*'cpu'"):
        cutekit.use("cpu")


def test_device_code_called_on_the_host_says_so(sim):
    import cutlass.cute as cute
    from cutekit.sim import KernelError
    with pytest.raises(KernelError, match="inside a @cute.kernel"):
        cute.arch.thread_idx()


def test_a_trace_records_which_thread_touched_which_element(sim, kernels):
    from cutlass.cute.runtime import from_dlpack
    from cutekit.sim import configure
    a, b = floats(20, 20), floats(20, 20)
    c = numpy.zeros_like(a)
    configure(trace=True)
    try:
        kernels.add_one_per_thread(from_dlpack(a), from_dlpack(b), from_dlpack(c))
    finally:
        configure(trace=False)
    writes = [(block, thread, offset) for block, thread, name, offset, kind in last_launch().trace
              if name == "gC" and kind == "write"]
    assert len(writes) == 400 and len({offset for _, _, offset in writes}) == 400
    # element (row 17, column 3) is written by block (0, 1) thread (3, 1): row = 1 * 16 + 1, column = 3
    assert ((0, 1, 0), (3, 1, 0), 17 * 20 + 3) in writes


def test_using_the_simulator_for_a_block_gives_the_earlier_cutlass_back():
    import sys
    import cutekit
    before = sys.modules.get("cutlass")
    with cutekit.using("sim") as backend:
        import cutlass
        assert backend.name == "sim" and getattr(cutlass, "__cutekit_sim__", False)
    assert sys.modules.get("cutlass") is before
