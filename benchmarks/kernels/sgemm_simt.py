"""SIMT fp32 GEMM (FFMA on the CUDA cores, no tensor cores): C (M, N) = A (M, K) @ B (K, N).

Layouts: A is passed M-major and B N-major (in torch: `a_t` of shape (K, M) and `b` of shape (K, N), both
row-major; the product is `a_t.T @ b`), C is row-major. With both operands contiguous along M/N, a k-slice
of a tile is contiguous in global memory (128-bit cp.async) and in shared memory (128-bit LDS), which is
what keeps a SIMT GEMM fed.

The pieces:
  * local_tile with proj: gA (BM, BK, k_tiles), gB (BN, BK, k_tiles), gC (BM, BN) from one cta_tiler.
  * G2S: a TiledCopy of 128-bit cp.async, 32 x 8 threads (M fastest), STAGES-deep pipeline.
  * TiledMMA from MmaUniversalOp(Float32): 16 x 16 threads, each owning 8 x 8 outputs. The permutation
    (16, 4):(4, 1) on M and N gives each thread 4 *contiguous* rows and 4 contiguous columns per 64-wide
    half, so its k-slice of A or B is read with one LDS.128 per half.
  * Register accumulation: 64 fp32 accumulators per thread; k-block kb + 1 is loaded from shared memory
    while kb is multiplied.
  * Epilogue: the accumulators are stored with the MMA's C partition (contiguous 4-column runs), masked
    by an identity tensor on edge tiles.

Constraints (asserted in `prepare`): K a multiple of BK = 8; M and N multiples of 4 (16-byte vectors);
M and N otherwise arbitrary.
"""
from __future__ import annotations

import cutlass
import cutlass.cute as cute

from . import cta, tensors

BM, BN, BK = 128, 128, 8
STAGES = 3
THREADS = 256
GROUP_M = 8


@cute.kernel
def sgemm_kernel(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor,
                 sA_layout: cute.Layout, sB_layout: cute.Layout,
                 g2s_A: cute.TiledCopy, g2s_B: cute.TiledCopy, tiled_mma: cute.TiledMma):
    tidx, _, _ = cute.arch.thread_idx()
    gA, gB, gC, cA, cB, cC = cta.cta_tiles(mA, mB, mC, (BM, BN, BK), GROUP_M)   # (BM|BN, BK, k_tiles), (BM, BN)

    smem = cutlass.memory.SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float32, sA_layout, 16)         # (BM, BK, STAGES), M contiguous
    sB = smem.allocate_tensor(cutlass.Float32, sB_layout, 16)

    thr_A = g2s_A.get_slice(tidx)
    thr_B = g2s_B.get_slice(tidx)
    tAgA = thr_A.partition_S(gA)            # (CPY, CPY_M, CPY_K, k_tiles)
    tAsA = thr_A.partition_D(sA)
    tAcA = thr_A.partition_S(cA)
    tBgB = thr_B.partition_S(gB)
    tBsB = thr_B.partition_D(sB)
    tBcB = thr_B.partition_S(cB)
    # one predicate per 16-byte vector; along M (N) only, since K has no remainder
    inside_A = cute.make_rmem_tensor(cute.make_layout(
        (tAsA.shape[0][1], cute.size(tAsA, mode=[1]), cute.size(tAsA, mode=[2]))), cutlass.Boolean)
    inside_B = cute.make_rmem_tensor(cute.make_layout(
        (tBsB.shape[0][1], cute.size(tBsB, mode=[1]), cute.size(tBsB, mode=[2]))), cutlass.Boolean)
    for v in cutlass.range_constexpr(cute.size(inside_A, mode=[0])):
        for m in cutlass.range_constexpr(cute.size(inside_A, mode=[1])):
            for k in cutlass.range_constexpr(cute.size(inside_A, mode=[2])):
                inside_A[v, m, k] = cute.elem_less(tAcA[(0, v), m, k, 0][0], mA.shape[0])
    for v in cutlass.range_constexpr(cute.size(inside_B, mode=[0])):
        for n in cutlass.range_constexpr(cute.size(inside_B, mode=[1])):
            for k in cutlass.range_constexpr(cute.size(inside_B, mode=[2])):
                inside_B[v, n, k] = cute.elem_less(tBcB[(0, v), n, k, 0][0], mB.shape[0])

    k_tiles = cute.size(tAgA, mode=[3])
    for stage in cutlass.range_constexpr(STAGES - 1):
        if stage < k_tiles:
            cute.copy(g2s_A, tAgA[None, None, None, stage], tAsA[None, None, None, stage], pred=inside_A)
            cute.copy(g2s_B, tBgB[None, None, None, stage], tBsB[None, None, None, stage], pred=inside_B)
        cute.arch.cp_async_commit_group()

    thr_mma = tiled_mma.get_slice(tidx)
    tCsA = thr_mma.partition_A(sA)          # (MMA, MMA_M, MMA_K, STAGES)
    tCsB = thr_mma.partition_B(sB)
    tCgC = thr_mma.partition_C(gC)
    tCcC = thr_mma.partition_C(cC)
    tCrA = tiled_mma.make_fragment_A(tCsA[None, None, None, 0])
    tCrB = tiled_mma.make_fragment_B(tCsB[None, None, None, 0])
    accumulators = tiled_mma.make_fragment_C(tCgC)
    accumulators.fill(0.0)
    k_blocks = cute.size(tCrA, mode=[2])

    # read_stage: the stage ldmatrix/LDS reads; it moves on only at the last k-block, after the barrier,
    # while fill_stage (the next stage to read) moves on at k-block 0 when its refill is issued
    read_stage = cutlass.Int32(0)
    fill_stage = cutlass.Int32(1 % STAGES)
    write_stage = cutlass.Int32(STAGES - 1)
    next_k_tile = cutlass.Int32(STAGES - 1)
    cute.arch.cp_async_wait_group(STAGES - 2)
    cute.arch.sync_threads()
    cute.autovec_copy(tCsA[None, None, 0, read_stage], tCrA[None, None, 0])
    cute.autovec_copy(tCsB[None, None, 0, read_stage], tCrB[None, None, 0])

    for k_tile in range(k_tiles):
        for kb in cutlass.range_constexpr(k_blocks):
            if kb == k_blocks - 1:
                cute.arch.cp_async_wait_group(STAGES - 2)
                cute.arch.sync_threads()
                read_stage = fill_stage
            kb_next = (kb + 1) % k_blocks
            cute.autovec_copy(tCsA[None, None, kb_next, read_stage], tCrA[None, None, kb_next])
            cute.autovec_copy(tCsB[None, None, kb_next, read_stage], tCrB[None, None, kb_next])
            if kb == 0:
                if next_k_tile < k_tiles:
                    cute.copy(g2s_A, tAgA[None, None, None, next_k_tile], tAsA[None, None, None, write_stage],
                              pred=inside_A)
                    cute.copy(g2s_B, tBgB[None, None, None, next_k_tile], tBsB[None, None, None, write_stage],
                              pred=inside_B)
                cute.arch.cp_async_commit_group()
                next_k_tile = next_k_tile + 1
                write_stage = read_stage
                fill_stage = (read_stage + 1) % STAGES
            cute.gemm(tiled_mma, accumulators, tCrA[None, None, kb], tCrB[None, None, kb], accumulators)

    cute.arch.cp_async_wait_group(0)

    last = cC[cute.size(cC) - 1]
    if cute.elem_less(last, mC.shape):
        cute.autovec_copy(accumulators, tCgC)
    else:
        # 64 iterations: CuTeDSL warns that a static loop that long is slow to trace (DSLOptimizationWarning)
        # and asks for a loop the compiler unrolls instead
        for i in cutlass.range(cute.size(accumulators), unroll_full=True):
            if cute.elem_less(tCcC[i], mC.shape):
                tCgC[i] = accumulators[i]


@cute.jit
def sgemm(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    """C = A B with A (M, K) M-major, B (N, K) N-major, C (M, N) row-major, all fp32."""
    sA_layout = cute.make_layout((BM, BK, STAGES), stride=(1, BM, BM * BK))
    sB_layout = cute.make_layout((BN, BK, STAGES), stride=(1, BN, BN * BK))

    vector = 4                                  # 4 fp32 = 128 bits per cp.async
    g2s_atom = cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(cache_mode=cute.nvgpu.cpasync.LoadCacheMode.GLOBAL),
                                   cutlass.Float32, num_bits_per_copy=128)
    threads_along_m = BM // vector
    g2s_A = cute.make_tiled_copy_tv(
        g2s_atom, cute.make_layout((threads_along_m, THREADS // threads_along_m), stride=(1, threads_along_m)),
        cute.make_layout((vector, 1)))
    threads_along_n = BN // vector
    g2s_B = cute.make_tiled_copy_tv(
        g2s_atom, cute.make_layout((threads_along_n, THREADS // threads_along_n), stride=(1, threads_along_n)),
        cute.make_layout((vector, 1)))

    # 16 x 16 threads, N fastest (C is row-major); the permutation hands each thread 4 contiguous rows and
    # 4 contiguous columns per 64-wide half, instead of 4 rows 16 apart
    thread_grid = cute.make_layout((16, 16, 1), stride=(16, 1, 0))
    permute_m = cute.make_layout((16, 4), stride=(4, 1))
    permute_n = cute.make_layout((16, 4), stride=(4, 1))
    tiled_mma = cute.make_tiled_mma(cute.nvgpu.MmaUniversalOp(cutlass.Float32), thread_grid,
                                    permutation_mnk=(permute_m, permute_n, None))

    tiles = cute.ceil_div(cute.size(mC, mode=[0]), BM) * cute.ceil_div(cute.size(mC, mode=[1]), BN)
    sgemm_kernel(mA, mB, mC, sA_layout, sB_layout, g2s_A, g2s_B, tiled_mma).launch(
        grid=[tiles, 1, 1], block=[THREADS, 1, 1])


def compile_for_cpu():
    """Compile `sgemm` for fake fp32 tensors: A, B contiguous along mode 0, C along mode 1."""
    a = tensors.fake_tensor(cutlass.Float32, 2, 4, leading_dim=0)
    b = tensors.fake_tensor(cutlass.Float32, 2, 4, leading_dim=0)
    c = tensors.fake_tensor(cutlass.Float32, 2, 4)
    return tensors.compile_with_ptx(sgemm, a, b, c)


_compiled = {}


def check_shapes(M: int, N: int, K: int):
    """Raise ValueError naming the rule, if (M, N, K) is outside what the kernel supports."""
    if K % BK:
        raise ValueError(f"sgemm_simt needs K to be a multiple of {BK}, got K={K}")
    if M % 4 or N % 4:
        raise ValueError(f"sgemm_simt needs M and N to be multiples of 4 (16-byte vectors), got M={M}, N={N}")


def prepare(a_t, b, c):
    """`launch()` computing c = a_t.T @ b for contiguous fp32 CUDA tensors a_t (K, M), b (K, N), c (M, N)."""
    import torch
    if not (a_t.dtype == b.dtype == c.dtype == torch.float32):
        raise ValueError("sgemm_simt needs float32 tensors")
    K, M = a_t.shape
    N = b.shape[1]
    if b.shape[0] != K or tuple(c.shape) != (M, N):
        raise ValueError(f"shapes do not chain: a_t {tuple(a_t.shape)}, b {tuple(b.shape)}, c {tuple(c.shape)}")
    check_shapes(M, N, K)
    if not all(t.is_contiguous() and t.data_ptr() % 16 == 0 for t in (a_t, b, c)):
        raise ValueError("sgemm_simt needs contiguous, 16-byte aligned tensors")
    args = [tensors.from_torch(a_t.T, 4, leading_dim=0), tensors.from_torch(b.T, 4, leading_dim=0),
            tensors.from_torch(c, 4)]
    if "nt" not in _compiled:
        _compiled["nt"] = cute.compile(sgemm, *args)
    compiled = _compiled["nt"]
    return lambda: compiled(*args)


def run(a_t, b):
    """a_t.T @ b in fp32 FFMA with the CuTe SIMT kernel."""
    import torch
    c = torch.empty(a_t.shape[1], b.shape[1], device=a_t.device, dtype=torch.float32)
    prepare(a_t, b, c)()
    return c
