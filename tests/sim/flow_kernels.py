"""Kernels whose control flow CuTeDSL 4.8.1 refuses while compiling (tests/sim/test_flow_and_prints.py), kernels
it compiles with the same statements written for compile time, and a kernel whose Python prints show `?` for its
run-time values. Each refused kernel was compiled with CuTeDSL 4.8.1 for sm_80 on the CPU; the refusal it gives is
in its docstring. Run as a program (`CUTE_DSL_ARCH=sm_80 python tests/sim/flow_kernels.py NAME`) with real CuTeDSL,
it compiles kernel NAME and prints what CuTeDSL prints."""
import sys

import cutlass
import cutlass.cute as cute


@cute.kernel
def return_in_a_run_time_if(mOut: cute.Tensor):
    """error[UNSUP_EARLY_EXIT]: Early exit (return) is not allowed in `return_in_a_run_time_if`. ..."""
    tidx, _, _ = cute.arch.thread_idx()
    if tidx >= 2:
        return
    mOut[tidx] = 1.0


@cute.kernel
def return_in_a_python_if(mOut: cute.Tensor):
    """error[UNSUP_EARLY_EXIT] too: CuTeDSL reads the source, an `if` without const_expr is staged."""
    tidx, _, _ = cute.arch.thread_idx()
    if 3 > 2:
        return
    mOut[tidx] = 1.0


@cute.kernel
def raise_in_a_run_time_if(mOut: cute.Tensor):
    """error[UNSUP_EARLY_EXIT]: Early exit (raise) ..."""
    tidx, _, _ = cute.arch.thread_idx()
    if tidx >= 2:
        raise ValueError("too many threads")
    mOut[tidx] = 1.0


@cute.kernel
def break_in_a_range_loop(mOut: cute.Tensor):
    """error[UNSUP_EARLY_EXIT]: Early exit (break) ..."""
    tidx, _, _ = cute.arch.thread_idx()
    for i in range(4):
        if i == 2:
            break
        mOut[tidx] = mOut[tidx] + 1.0


@cute.kernel
def continue_in_a_range_loop(mOut: cute.Tensor):
    """error[UNSUP_EARLY_EXIT]: Early exit (continue) ..."""
    tidx, _, _ = cute.arch.thread_idx()
    for i in cutlass.range(4):
        if i == 2:
            continue
        mOut[tidx] = mOut[tidx] + 1.0


@cute.kernel
def break_in_a_while_loop(mOut: cute.Tensor, n: cutlass.Int32):
    """error[UNSUP_EARLY_EXIT]: Early exit (break) ..."""
    tidx, _, _ = cute.arch.thread_idx()
    i = 0
    while i < n:
        i = i + 1
        if i == 2:
            break
    mOut[tidx] = 1.0


@cute.kernel
def else_of_a_range_loop(mOut: cute.Tensor):
    """error[UNSUP_LOOP_ELSE]: A `for`/`while` loop with an `else:` clause is not supported in compiled code."""
    tidx, _, _ = cute.arch.thread_idx()
    for i in range(2):
        mOut[tidx] = mOut[tidx] + 1.0
    else:
        mOut[tidx] = 0.0


@cute.kernel
def break_in_a_run_time_if_of_an_unrolled_loop(mOut: cute.Tensor):
    """SyntaxError: 'break' outside loop (the `if`'s body becomes a function of its own)."""
    tidx, _, _ = cute.arch.thread_idx()
    for i in cutlass.range_constexpr(4):
        if tidx == i:
            break
        mOut[tidx] = mOut[tidx] + 1.0


@cute.jit
def guarded_store(mOut: cute.Tensor, where):
    if where >= 2:
        return
    mOut[where] = 1.0


@cute.kernel
def return_in_a_device_helper(mOut: cute.Tensor):
    """error[UNSUP_EARLY_EXIT]: Early exit (return) is not allowed in `guarded_store`. ..."""
    tidx, _, _ = cute.arch.thread_idx()
    guarded_store(mOut, tidx)


@cute.kernel
def compile_time_exits(mOut: cute.Tensor, mode: cutlass.Constexpr):
    """CuTeDSL compiles these: the early exits are decided while tracing."""
    tidx, _, _ = cute.arch.thread_idx()
    if cutlass.const_expr(mode == "skip"):
        return
    for i in cutlass.range_constexpr(4):
        if cutlass.const_expr(i == 2):
            break
        mOut[tidx] = mOut[tidx] + 1.0
    for j in (1, 2, 3):
        if cutlass.const_expr(j == 3):
            continue
        mOut[tidx] = mOut[tidx] + 10.0
    if tidx < 2:
        mOut[tidx] = mOut[tidx] + 100.0
    return


@cute.kernel
def prints(mX: cute.Tensor, n: cutlass.Int32, f: cutlass.Float32, b: cutlass.Boolean, c: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    print("A", tidx, cute.arch.thread_idx(), bidx, cute.arch.lane_idx())
    x = tidx * 2 + 1
    print("B", x, tidx == 0, cute.elem_less((tidx, 0), (4, 4)))
    print("C", n, f, b, c, n + 1)
    print("D", mX[0], mX[tidx], 3, cutlass.Int32(3), cute.size(mX))
    print(f"E {tidx} {c}", (tidx, 3))
    for i in range(2):
        print("F", i)
    for i in cutlass.range_constexpr(2):
        print("G", i)


PRINTED = ["A ? (Int32(?), Int32(?), Int32(?)) ? ?", "B ? ? ?", "C ? ? ? 7 ?", "D ? ? 3 ? 32",
           "E ? 7 (Int32(?), 3)", "F ?", "G 0", "G 1"]      # CuTeDSL 4.8.1, compiled for sm_80 on the CPU


@cute.jit
def show(label, a, b):
    """A device helper: its parameters are what its caller passes, run-time values or Python ones."""
    print(label, a, b, f"{a}/{b}")


@cute.jit
def show_twice(label, x):
    show(label, x * 2, 3)


@cute.kernel
def helper_prints(mX: cute.Tensor, n: cutlass.Int32, c: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bdim, _, _ = cute.arch.block_dim()
    show("H1", tidx, c)
    show("H2", n, cute.size(mX))
    show("H3", bdim + 1, 3)
    show("H4", mX.shape, mX.shape[0])
    show_twice("H5", tidx)
    show_twice("H6", c)
    show(b=tidx == 0, a=c, label="H7")


PRINTED_BY_HELPERS = ["H1 ? 7 ?/7", "H2 ? 32 ?/32", "H3 ? 3 ?/3", "H4 (32,) 32 (32,)/32", "H5 ? 3 ?/3",
                      "H6 14 3 14/3", "H7 7 ? 7/?"]       # CuTeDSL 4.8.1, compiled for sm_80 on the CPU


@cute.jit
def launch(kernel_name: cutlass.Constexpr, mOut: cute.Tensor, n: cutlass.Int32, f: cutlass.Float32,
           b: cutlass.Boolean):
    print("host", n, f, b, n * 2)
    if cutlass.const_expr(kernel_name == "prints"):
        prints(mOut, n, f, b, 7).launch(grid=(1, 1, 1), block=(4, 1, 1))
    elif cutlass.const_expr(kernel_name == "helper_prints"):
        helper_prints(mOut, n, 7).launch(grid=(1, 1, 1), block=(4, 1, 1))
    elif cutlass.const_expr(kernel_name == "compile_time_exits"):
        compile_time_exits(mOut, "keep").launch(grid=(1, 1, 1), block=(4, 1, 1))
    elif cutlass.const_expr(kernel_name == "break_in_a_while_loop"):
        break_in_a_while_loop(mOut, n).launch(grid=(1, 1, 1), block=(4, 1, 1))
    else:
        globals()[kernel_name](mOut).launch(grid=(1, 1, 1), block=(4, 1, 1))


if __name__ == "__main__":          # real CuTeDSL: compile one kernel, print what it prints or its refusal
    import torch
    from cutlass.cute.runtime import from_dlpack
    try:
        cute.compile(launch, sys.argv[1], from_dlpack(torch.zeros(32), assumed_align=16), cutlass.Int32(3),
                     cutlass.Float32(1.5), cutlass.Boolean(True))
        print("compiled")
    except Exception as error:  # noqa: BLE001 - the refusal is what is printed
        print(str(error))
