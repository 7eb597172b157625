"""Kernels where the differential test (tests/sim/differential.py) found the simulator disagreeing with CuTeDSL
4.8.1 or the PTX ISA, kept as regressions (tests/sim/test_differential.py). The variant is CASE[0]; each is
the generated kernel cut down to what shows the disagreement. Imported after `cutekit.use("sim")`."""
import cutlass
import cutlass.cute as cute

CASE = ["int32_wraps"]
K = 3


@cute.kernel
def found_kernel(mX: cute.Tensor, mOut: cute.Tensor, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    lane = cute.arch.lane_idx()
    v = mX[tidx]
    if cutlass.const_expr(CASE[0] == "int32_wraps"):
        # seed 0, case 15: lane 31's ballot sets bit 31 (-2**31); twice that is 0 in a 32-bit register
        if lane >= 31:
            v = v ^ cute.arch.vote_ballot_sync(lane != 16)
            v = v + cute.arch.shuffle_sync_down(v, 1)
    elif cutlass.const_expr(CASE[0] == "group_of_one_in_a_divergent_loop"):
        # seed 1, case 226: a reduction over groups of 1 is no shuffle (CuTeDSL emits none): lanes that loop a
        # different number of times may call it
        for i in cutlass.range(lane % 3):
            v = v + 3
            v = cute.arch.warp_reduction_sum(v, threads_in_group=1)
        v = cute.arch.warp_reduction_sum(v, threads_in_group=32)
    elif cutlass.const_expr(CASE[0] == "counter_name_reused"):
        # a probe written with the differential test: `i` counts a loop on the GPU, then an unrolled loop, where
        # const_expr(i == 0) is compile-time (CuTeDSL 4.8.1 compiles this for sm_80)
        for i in cutlass.range(n):
            v = v + i
        for i in cutlass.range_constexpr(2):
            if cutlass.const_expr(i == 0):
                v = v + 100
    elif cutlass.const_expr(CASE[0] == "range_constexpr_no_thread_reaches"):
        # seed 1, case 116: CuTeDSL traces both sides of a run-time if, and refuses this whichever lanes run
        if cute.arch.vote_uni_sync(v < -100):
            for i in cutlass.range_constexpr(n):
                v = v + 1
    elif cutlass.const_expr(CASE[0] == "const_expr_after_a_divergent_reduction"):
        # seed 1, case 76: the kernel does not compile; the reduction some lanes skip never runs on a GPU
        if lane < 16:
            v = cute.arch.warp_reduction_sum(v)
        if cutlass.const_expr(lane < 4):
            v = v + 1
    elif cutlass.const_expr(CASE[0] == "run_time_const_expr_in_a_branch_the_trace_skips"):
        # seed 1, case 97: CuTeDSL does not trace the side of a const_expr if its value does not pick
        if cutlass.const_expr(K < 1):
            if cutlass.const_expr((tidx % 4) == 0):
                v = v + 1
        else:
            v = v + K
    elif cutlass.const_expr(CASE[0] == "warp_idx_and_a_vote_in_two_branches"):
        # seed 1, case 15: warp_idx() is a shfl.sync over the whole warp; lanes 16-31 wait at the vote for lanes
        # 0-15, which wait at warp_idx() for them (they have not exited)
        if lane < 16:
            v = v + cute.arch.warp_idx()
        else:
            if cute.arch.vote_uni_sync(n == 3):
                v = v + 1
    elif cutlass.const_expr(CASE[0] == "shuffle_while_lane_31_waits_at_warp_idx"):
        # seed 1, case 291: lane 31 waits at warp_idx() (it has not exited), so the shuffle waits for it
        if lane < 31:
            v = v + cute.arch.shuffle_sync(v, 4)
        v = v + cute.arch.warp_idx()
    elif cutlass.const_expr(CASE[0] == "even_lanes_wait_at_warp_idx"):
        # seed 1, case 113: on a GPU the even lanes hang at warp_idx(), never reaching the shuffle after it
        if lane % 2 == 1:
            v = cute.arch.warp_reduction_sum(v)
        else:
            v = v + cute.arch.warp_idx()
            v = v + cute.arch.shuffle_sync_down(v, 1)
    elif cutlass.const_expr(CASE[0] == "mask_error_after_a_hang_at_warp_idx"):
        # seed 0, case 765: lanes 0-30 and lane 31 reach two different warp_idx() lines and hang there on a GPU;
        # the ballot after them, whose mask does not name lanes 0-15, is never reached
        if lane != 31:
            v = v + cute.arch.warp_idx()
        else:
            v = v + cute.arch.warp_idx()
        v = v ^ cute.arch.vote_ballot_sync(lane % 2 == 0, mask=0xFFFF0000)
    elif cutlass.const_expr(CASE[0] == "mask_error_after_warp_idx"):
        # every lane passes the one warp_idx(); the ballot's mask does not name lane 0
        v = v + cute.arch.warp_idx()
        v = v ^ cute.arch.vote_ballot_sync(lane % 2 == 0, mask=0xFFFF0000)
    elif cutlass.const_expr(CASE[0] == "undefined_read_after_a_hang_at_warp_idx"):
        # seed 0, case 1905: on a GPU lanes 0-7 hang at warp_idx(), lanes 8-31 at the reduction; the shuffle that
        # would read lane 8 is never reached
        if lane < 8:
            v = v + cute.arch.warp_idx()
            v = v + cute.arch.shuffle_sync_down(v, 1, mask=0xFF)
        else:
            v = cute.arch.warp_reduction_sum(v, threads_in_group=2)
    elif cutlass.const_expr(CASE[0] == "range_constexpr_in_an_unrolled_loop"):
        # seed 0, case 432: CuTeDSL unrolls the outer loop once and refuses the inner bound; lane 31's shuffle,
        # whose mask leaves it out, comes first thread by thread
        for k in cutlass.range_constexpr(1):
            for i in range(n):
                for j in cutlass.range_constexpr(lane % 2 + 1):
                    v = v + 1
        v = v + cute.arch.shuffle_sync_up(v, 4, mask=0x7FFFFFFF)
    elif cutlass.const_expr(CASE[0] == "range_constexpr_in_an_unrolled_loop_of_none"):
        # a loop of no steps: CuTeDSL traces nothing inside it
        for k in cutlass.range_constexpr(K - 3):
            v = v + cute.arch.shuffle_sync_bfly(v, 1)
            if cutlass.const_expr(lane < 4):
                v = v + 1
    elif cutlass.const_expr(CASE[0] == "warp_idx_at_two_lines"):
        # seed 7, case 76: lanes 0-15 wait at the first warp_idx() for lanes 16-31, which wait at the second
        if lane < 16:
            v = v + cute.arch.warp_idx()
        v = v + cute.arch.warp_idx()
    mOut[tidx] = v


@cute.jit
def launch(mX: cute.Tensor, mOut: cute.Tensor, n: cutlass.Int32):
    found_kernel(mX, mOut, n).launch(grid=[1, 1, 1], block=[32, 1, 1])
