"""Kernels giving cutlass.const_expr and cutlass.range_constexpr compile-time and run-time values
(tests/sim/test_constexpr_values.py); the variant is CASE[0]. CuTeDSL 4.8.1 compiles the compile-time ones and
refuses the run-time ones (the module docstring of cutekit/sim/constexpr.py quotes its messages)."""
import cutlass
import cutlass.cute as cute

CASE = ["constexpr_argument"]


@cute.jit
def keep_if(mOut: cute.Tensor, flag, where):
    """A device helper: `flag` is whatever the caller passed, a Python value or a run-time one."""
    if cutlass.const_expr(flag):
        mOut[where] = mOut[where] + 1.0


@cute.kernel
def constexpr_kernel(mX: cute.Tensor, mOut: cute.Tensor, n: cutlass.Int32, mode: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    lane = cute.arch.lane_idx()
    where = bidx * 32 + tidx
    if cutlass.const_expr(CASE[0] == "thread_index"):
        if cutlass.const_expr(tidx == 0):
            mOut[where] = 1.0
    elif cutlass.const_expr(CASE[0] == "tensor_element"):
        first = mX[0]
        if cutlass.const_expr(first > 0):
            mOut[where] = 1.0
    elif cutlass.const_expr(CASE[0] == "int32_argument"):
        if cutlass.const_expr(n > 3):
            mOut[where] = 1.0
    elif cutlass.const_expr(CASE[0] == "range_loop_counter"):
        for k in range(2):
            if cutlass.const_expr(k == 0):
                mOut[where] = 1.0
    elif cutlass.const_expr(CASE[0] == "range_constexpr_of_an_argument"):
        for k in cutlass.range_constexpr(n):
            mOut[where] = mOut[where] + 1.0
    elif cutlass.const_expr(CASE[0] == "lane_through_a_helper"):
        keep_if(mOut, lane == 0, where)
    elif cutlass.const_expr(CASE[0] == "block_through_a_helper"):
        keep_if(mOut, bidx == 0, where)
    elif cutlass.const_expr(CASE[0] == "range_counter_through_a_helper"):
        for k in range(2):
            keep_if(mOut, k == 0, where)
    elif cutlass.const_expr(CASE[0] == "constexpr_argument"):
        # compile-time: a Constexpr argument, the size of a thread's partition (its shape is static though its
        # offset is the thread's), a range_constexpr over it, a helper given two constants from two lines and
        # one from each pass of an unrolled loop
        mine = cute.local_partition(mX, cute.make_layout(32), tidx)
        if cutlass.const_expr(mode == "add" and cute.size(mine) == 2):
            for i in cutlass.range_constexpr(cute.size(mine)):
                mOut[where] = mOut[where] + mine[i]
        keep_if(mOut, True, where)
        keep_if(mOut, False, where)
        for i in cutlass.range_constexpr(2):
            keep_if(mOut, i == 0, where)


@cute.jit
def run(mX: cute.Tensor, mOut: cute.Tensor, n: cutlass.Int32, mode: cutlass.Constexpr = "add"):
    constexpr_kernel(mX, mOut, n, mode).launch(grid=[2, 1, 1], block=[32, 1, 1])


@cute.jit
def host_decides(mX: cute.Tensor, mOut: cute.Tensor, n: cutlass.Int32):
    """Host code: an Int32 argument is run-time there too; cutlass.Int32(5) is a constant CuTeDSL folds."""
    if cutlass.const_expr(cutlass.Int32(5) > 3):
        constexpr_kernel(mX, mOut, n, "add").launch(grid=[2, 1, 1], block=[32, 1, 1])
    if cutlass.const_expr(n > 3):
        constexpr_kernel(mX, mOut, n, "add").launch(grid=[2, 1, 1], block=[32, 1, 1])
