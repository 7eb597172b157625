"""Kernels giving cutlass.const_expr and cutlass.range_constexpr compile-time and run-time values
(tests/sim/test_constexpr_values.py); the variant is CASE[0]. CuTeDSL 4.8.1 compiles the compile-time ones and
refuses the run-time ones (the module docstring of cutekit/sim/constexpr.py quotes its messages).

`python tests/sim/constexpr_kernels.py CASE TENSOR` compiles `run` for one case with real CuTeDSL (sm_80, on the
CPU), mX made by from_dlpack as TENSOR says (static, aligned, dynamic, compact: test_constexpr_values.py's table),
and prints `compiled` or CuTeDSL's error."""
import sys

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
    bdim, _, _ = cute.arch.block_dim()
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
    elif cutlass.const_expr(CASE[0] == "size_of_a_tensor"):
        # mX's extents: static for a plain from_dlpack tensor, run-time after mark_layout_dynamic
        if cutlass.const_expr(cute.size(mX) > 3):
            mOut[where] = 1.0
    elif cutlass.const_expr(CASE[0] == "extent_of_a_tensor"):
        if cutlass.const_expr(mX.shape[0] > 3):
            mOut[where] = 1.0
    elif cutlass.const_expr(CASE[0] == "mode_size_of_a_tensor"):
        if cutlass.const_expr(cute.size(mX, mode=[0]) > 3):
            mOut[where] = 1.0
    elif cutlass.const_expr(CASE[0] == "ceil_div_of_an_extent"):
        if cutlass.const_expr(cute.ceil_div(mX.shape[0], 32) > 1):
            mOut[where] = 1.0
    elif cutlass.const_expr(CASE[0] == "size_through_a_helper"):
        keep_if(mOut, cute.size(mX) > 3, where)
    elif cutlass.const_expr(CASE[0] == "block_dim_through_a_helper"):
        keep_if(mOut, bdim > 3, where)          # the same in every thread, and still a run-time value
    elif cutlass.const_expr(CASE[0] == "lane_through_a_starred_call"):
        keep_if(mOut, *(lane == 0,), where)     # the call's source does not say: told by the value in other threads
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


if __name__ == "__main__":          # real CuTeDSL: compile one case, print `compiled` or its refusal
    import torch
    from cutlass.cute.runtime import from_dlpack
    CASE[0], kind = sys.argv[1], sys.argv[2]
    x = torch.arange(64, dtype=torch.float32) + 1
    mX = {"static": lambda: from_dlpack(x), "aligned": lambda: from_dlpack(x, assumed_align=16),
          "dynamic": lambda: from_dlpack(x).mark_layout_dynamic(),
          "compact": lambda: from_dlpack(x).mark_compact_shape_dynamic(mode=0)}[kind]()
    try:
        cute.compile(run, mX, from_dlpack(torch.zeros(64)), cutlass.Int32(5))
        print("compiled")
    except Exception as error:  # noqa: BLE001 - the refusal is what is printed
        print(str(error))
