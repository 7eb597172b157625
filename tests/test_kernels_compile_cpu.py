"""CPU tier for the course's fast kernels: each compiles for sm_80 without a GPU (fake tensors), with every
warning CuTeDSL gives an error (a deprecated name, a static loop too long to trace), and its PTX holds the
instructions the kernel was written to produce, with nothing spilled to local memory."""
import os
import re

import pytest

os.environ.setdefault("CUTE_DSL_ARCH", "sm_80")
pytestmark = [pytest.mark.cutedsl, pytest.mark.filterwarnings("error")]
cutlass = pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")


def instructions(ptx):
    """The set of PTX opcodes (with their modifiers) in a module."""
    return set(re.findall(r"^\s*(?:@!?%p\d+\s+)?([a-z][\w.]*)", ptx, flags=re.MULTILINE))


def assert_no_local_memory(ptx):
    spills = {op for op in instructions(ptx) if op.startswith(("ld.local", "st.local"))}
    assert not spills, f"local-memory traffic (register spill or dynamically indexed array): {spills}"


@pytest.mark.parametrize("dtype_name,vector", [("Float16", 8), ("Float32", 4)])
def test_elementwise_add_moves_data_in_128_bit_loads_and_stores(dtype_name, vector):
    from benchmarks.kernels import elementwise_add
    ptx = elementwise_add.compile_for_cpu(getattr(cutlass, dtype_name), vector).__ptx__
    ops = instructions(ptx)
    assert "ld.global.v4.b32" in ops and "st.global.v4.b32" in ops
    assert_no_local_memory(ptx)


def test_elementwise_add_falls_back_to_scalar_accesses_when_rows_are_odd():
    from benchmarks.kernels import elementwise_add
    ops = instructions(elementwise_add.compile_for_cpu(cutlass.Float16, 1).__ptx__)
    assert "ld.global.b16" in ops and "ld.global.v4.b32" not in ops


@pytest.mark.parametrize("variant", ["cuda_style", "composition", "tiled_copy", "any_dim"])
def test_every_reduce_sum_variant_reads_128_bits_at_a_time_and_has_no_spills(variant):
    from benchmarks.kernels import reduce_sum
    ptx = reduce_sum.compile_for_cpu(variant, 4).__ptx__
    assert "ld.global.v4.b32" in instructions(ptx)
    assert_no_local_memory(ptx)


@pytest.mark.parametrize("variant", ["cuda_style", "composition", "tiled_copy"])
def test_row_sums_fold_each_warp_with_shuffles(variant):
    from benchmarks.kernels import reduce_sum
    assert "shfl.sync.bfly.b32" in instructions(reduce_sum.compile_for_cpu(variant, 4).__ptx__)


def test_tensorcore_gemm_uses_cp_async_ldmatrix_and_mma_sync_m16n8k16():
    from benchmarks.kernels import gemm_tensorcore
    ptx = gemm_tensorcore.compile_for_cpu().__ptx__
    ops = instructions(ptx)
    assert "cp.async.cg.shared.global" in ops
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ops
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ops
    # one k-tile of 128 x 128 x 64 on 4 warps is 128 MMAs per warp
    assert ptx.count("mma.sync.aligned.m16n8k16") >= 128
    assert_no_local_memory(ptx)


@pytest.mark.parametrize("knobs", [{}, "FAST"])
def test_tensorcore_gemm_epilogue_goes_through_shared_memory_and_stores_128_bits(knobs):
    from benchmarks.kernels import gemm_tensorcore
    knobs = gemm_tensorcore.FAST if knobs == "FAST" else knobs
    ptx = gemm_tensorcore.compile_for_cpu(**knobs).__ptx__
    ops = instructions(ptx)
    assert "st.global.v4.b32" in ops and "ld.shared.v4.b32" in ops
    # the fp16 pairs of the accumulator layout are never stored to global memory 32 bits at a time
    assert "st.global.b32" not in ops
    # each warp computes 64x64 in both configurations: 128 MMAs per 64-deep k-tile
    assert ptx.count("mma.sync.aligned.m16n8k16") >= 128
    assert_no_local_memory(ptx)


def test_tensorcore_gemm_without_the_shared_memory_epilogue_stores_fp16_pairs():
    from benchmarks.kernels import gemm_tensorcore
    ptx = gemm_tensorcore.compile_for_cpu(EPILOGUE_SMEM=False).__ptx__
    ops = instructions(ptx)
    assert "st.global.b32" in ops and "st.global.v4.b32" not in ops
    assert_no_local_memory(ptx)            # the edge tile's predicated stores, unrolled by the compiler


def test_tensorcore_gemm_settings_are_restored_and_unknown_ones_named():
    from benchmarks.kernels import gemm_tensorcore
    before = gemm_tensorcore.BM
    with gemm_tensorcore.configured(BM=256):
        assert gemm_tensorcore.BM == 256
    assert gemm_tensorcore.BM == before
    with pytest.raises(ValueError, match="BLOCK_M"):
        with gemm_tensorcore.configured(BLOCK_M=64):
            pass


def test_simt_sgemm_feeds_ffma_from_128_bit_shared_loads():
    from benchmarks.kernels import sgemm_simt
    ptx = sgemm_simt.compile_for_cpu().__ptx__
    ops = instructions(ptx)
    assert "cp.async.cg.shared.global" in ops
    assert "ld.shared.v4.b32" in ops and "ld.shared.b32" not in ops
    assert ptx.count("fma.rn.f32") >= 8 * 8 * 8           # 8 x 8 outputs per thread, BK = 8
    assert "mma.sync" not in ptx
    assert_no_local_memory(ptx)


def test_gemm_shape_rules_are_stated_in_the_errors():
    from benchmarks.kernels import gemm_tensorcore, sgemm_simt
    with pytest.raises(ValueError, match="multiple of 64"):
        gemm_tensorcore.check_shapes(128, 128, 100)
    with pytest.raises(ValueError, match="multiple of 8"):
        gemm_tensorcore.check_shapes(128, 12, 64)
    with pytest.raises(ValueError, match="multiples of 4"):
        sgemm_simt.check_shapes(6, 8, 8)
    gemm_tensorcore.check_shapes(129, 8, 64)
    sgemm_simt.check_shapes(4, 4, 8)


def test_vector_width_is_the_widest_power_of_two_that_divides_the_row_and_the_address():
    from benchmarks.kernels.tensors import vector_width
    assert vector_width(8192, 2) == 8
    assert vector_width(1001, 2) == 1
    assert vector_width(1002, 2) == 2
    assert vector_width(8192, 4) == 4
    assert vector_width(8192, 2, base_address=4) == 2
