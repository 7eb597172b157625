"""Kernels whose lanes meet, or fail to meet, at warp and warpgroup collectives (tests/sim/test_warps_converge.py).

Each kernel takes its variant from CASE[0]. A CuTeDSL kernel cannot `return` inside a run-time `if`
(error[UNSUP_EARLY_EXIT], CuTeDSL 4.8.1), so lanes leave the kernel early the way CuTeDSL allows: by skipping the
rest of it in an `if`. Imported after `cutekit.use("sim")`, they run on the simulator."""
import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import warpgroup

CASE = ["all_lanes_then_branch"]


# --------------------------------------------------------------------------------------------- reductions

@cute.kernel
def half_warp_sums_kernel(mX: cute.Tensor, mOut: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    if cutlass.const_expr(CASE[0] == "all_lanes_then_branch"):
        total = cute.arch.warp_reduction_sum(mX[tidx], threads_in_group=16)
        if tidx % 16 == 0:
            mOut[tidx // 16] = total
    elif cutlass.const_expr(CASE[0] == "reduction_under_if"):
        if tidx % 16 == 0:
            mOut[tidx // 16] = cute.arch.warp_reduction_sum(mX[tidx], threads_in_group=16)
    elif cutlass.const_expr(CASE[0] == "reduction_under_if_then_barrier"):
        if tidx % 16 == 0:
            mOut[tidx // 16] = cute.arch.warp_reduction_sum(mX[tidx], threads_in_group=16)
        cute.arch.sync_threads()
    elif cutlass.const_expr(CASE[0] == "upper_half_exits"):
        if tidx < 16:
            mOut[0] = cute.arch.warp_reduction_sum(mX[tidx], threads_in_group=16)
    elif cutlass.const_expr(CASE[0] == "whole_warp_sums"):
        total = cute.arch.warp_reduction_sum(mX[tidx])
        if tidx % 32 == 0:
            mOut[tidx // 32] = total


@cute.jit
def half_warp_sums(mX: cute.Tensor, mOut: cute.Tensor, threads: cutlass.Constexpr = 32):
    half_warp_sums_kernel(mX, mOut).launch(grid=[1, 1, 1], block=[threads, 1, 1])


# --------------------------------------------------------------------------------------------- shuffles

@cute.kernel
def shuffle_kernel(mX: cute.Tensor, mOut: cute.Tensor, steps: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    lane = cute.arch.lane_idx()
    x = mX[tidx]
    if cutlass.const_expr(CASE[0] == "shuffle_in_a_divergent_branch"):
        if lane < 16:
            mOut[tidx] = cute.arch.shuffle_sync_bfly(x, offset=1)
        cute.arch.sync_threads()
    elif cutlass.const_expr(CASE[0] == "shuffle_with_a_mask_of_the_lanes_there"):
        if lane < 16:
            mOut[tidx] = cute.arch.shuffle_sync_bfly(x, offset=1, mask=0x0000FFFF)
        cute.arch.sync_threads()
    elif cutlass.const_expr(CASE[0] == "two_collectives_at_two_lines"):
        if lane < 16:
            mOut[tidx] = cute.arch.shuffle_sync(x, 0)
        else:
            mOut[tidx] = cute.arch.warp_reduction_sum(x)
    elif cutlass.const_expr(CASE[0] == "loop_with_a_uniform_trip_count"):
        for _ in range(steps):
            x = x + cute.arch.shuffle_sync_down(x, 1)
        mOut[tidx] = x
    elif cutlass.const_expr(CASE[0] == "reads_a_lane_that_returned"):
        if lane < 16:
            mOut[tidx] = cute.arch.shuffle_sync_down(x, 8)
    elif cutlass.const_expr(CASE[0] == "mask_without_the_caller"):
        if lane >= 16:
            mOut[tidx] = cute.arch.shuffle_sync_bfly(x, offset=1, mask=0x0000FFFF)
    elif cutlass.const_expr(CASE[0] == "shuffle_up_default_clamp"):
        mOut[tidx] = cute.arch.shuffle_sync_up(x, 1)
    elif cutlass.const_expr(CASE[0] == "shuffle_up_clamp_31"):
        mOut[tidx] = cute.arch.shuffle_sync_up(x, 1, mask_and_clamp=31)
    elif cutlass.const_expr(CASE[0] == "warp_idx_in_lane_0"):
        if lane == 0:
            mOut[cute.arch.warp_idx()] = x
        cute.arch.sync_threads()
    elif cutlass.const_expr(CASE[0] == "ballot_of_the_lanes_still_running"):
        if lane < 24:
            mOut[tidx] = cutlass.Float32(cute.arch.vote_ballot_sync(lane % 2 == 0))


@cute.jit
def shuffle(mX: cute.Tensor, mOut: cute.Tensor, steps: cutlass.Int32):
    shuffle_kernel(mX, mOut, steps).launch(grid=[1, 1, 1], block=[32, 1, 1])


# --------------------------------------------------------------------------------------------- tensor cores

@cute.kernel
def tensor_core_kernel(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, tiled_mma: cute.TiledMma,
                       s2r_A: cute.TiledCopy, s2r_B: cute.TiledCopy):
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.warp_idx()
    lane = cute.arch.lane_idx()
    smem = cutlass.memory.SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float16, cute.make_layout((16, 32), stride=(32, 1)), 16)
    sB = smem.allocate_tensor(cutlass.Float16, cute.make_layout((16, 32), stride=(32, 1)), 16)
    if warp == 0:
        for i in cutlass.range_constexpr(16):
            sA[lane * 16 + i] = mA[lane * 16 + i]
            sB[lane * 16 + i] = mB[lane * 16 + i]
    cute.arch.sync_threads()
    if warp == 0:                       # warp 1 leaves the kernel: it has no part in warp 0's collectives
        thread_mma = tiled_mma.get_slice(lane)
        tCrA = tiled_mma.make_fragment_A(thread_mma.partition_A(sA))
        tCrB = tiled_mma.make_fragment_B(thread_mma.partition_B(sB))
        tCgC = thread_mma.partition_C(mC)
        tCrC = tiled_mma.make_fragment_C(tCgC)
        tCrC.fill(0.0)
        thread_A, thread_B = s2r_A.get_slice(lane), s2r_B.get_slice(lane)
        if cutlass.const_expr(CASE[0] == "ldmatrix_by_half_a_warp"):
            if lane < 16:
                cute.copy(s2r_A, thread_A.partition_S(sA), thread_A.retile(tCrA))
        else:
            cute.copy(s2r_A, thread_A.partition_S(sA), thread_A.retile(tCrA))
        cute.copy(s2r_B, thread_B.partition_S(sB), thread_B.retile(tCrB))
        if cutlass.const_expr(CASE[0] == "mma_under_a_lane_condition"):
            if lane < 8:
                cute.gemm(tiled_mma, tCrC, tCrA, tCrB, tCrC)
        else:
            cute.gemm(tiled_mma, tCrC, tCrA, tCrB, tCrC)
        cute.autovec_copy(tCrC, tCgC)


@cute.jit
def tensor_core(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    tiled_mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)),
                                    (1, 1, 1), permutation_mnk=(16, 16, 32))
    atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), cutlass.Float16)
    tensor_core_kernel(mA, mB, mC, tiled_mma, cute.make_tiled_copy_A(atom, tiled_mma),
                       cute.make_tiled_copy_B(atom, tiled_mma)).launch(grid=[1, 1, 1], block=[64, 1, 1])


# --------------------------------------------------------------------------------------------- warpgroups

@cute.kernel
def warpgroup_kernel(mOut: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    if cutlass.const_expr(CASE[0] == "fence_by_the_whole_warpgroup"):
        warpgroup.fence()
        mOut[tidx] = 1.0
    elif cutlass.const_expr(CASE[0] == "fence_by_two_warps_of_four"):
        if tidx < 64:
            warpgroup.fence()
            mOut[tidx] = 1.0


@cute.jit
def fence(mOut: cute.Tensor):
    warpgroup_kernel(mOut).launch(grid=[1, 1, 1], block=[128, 1, 1])
