"""Kernels whose Int32 arithmetic leaves Int32's range before a comparison, `//`, `%`, `>>` or `min` sees it
(tests/sim/test_int32_wrap.py). On a GPU each value is a 32-bit register: a product past 2**31 keeps its low 32
bits (two's complement), as CuTeDSL 4.8.1 compiles it for sm_80 (`mul.lo.s32`, then `setp.lt.s32`); `//` floors
and `%` takes the dividend's sign (its PTX: `mul.hi.s32` ... `sub.s32`, no correction). Flags go to mOut[tidx]
(one bit per check) and the values to the rows after it."""
import cutlass
import cutlass.cute as cute


@cute.kernel
def overflow(mX: cute.Tensor, mOut: cute.Tensor, a: cutlass.Int32, b: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    v = mX[tidx]
    flags = 0
    x = tidx * 100000000            # past 2**31 from thread 22 on: negative there
    if x < 0:
        flags = flags + 1
    w = v * 1000000000              # an element of an Int32 tensor, times 10**9
    if w < 0:
        flags = flags + 2
    p = a * b                       # two Int32 arguments (DSL numbers: they wrap by their own arithmetic)
    if p < 0:
        flags = flags + 4
    wide = cutlass.Int64(tidx) * 100000000      # 64-bit: no wrap
    if wide < 0:
        flags = flags + 8
    if min(x, 0) < 0:
        flags = flags + 16
    q = x // 1000
    q //= 7
    mOut[tidx] = flags
    mOut[tidx + 32] = q
    mOut[tidx + 64] = x % 1000003
    mOut[tidx + 96] = x >> 20
    mOut[tidx + 128] = (tidx - 8) % 5          # C's remainder: the dividend's sign (-3 in thread 0)
    mOut[tidx + 160] = (a - 50003) % 7         # an Int32 argument's too
    z = tidx * 65536 * 65536                    # a multiple of 2**32: zero in a 32-bit register
    if z:
        mOut[tidx + 192] = 1
    if cutlass.Float32(x) < 0.0:                # the register's value converted
        mOut[tidx + 224] = 1


@cute.kernel
def wide_elements(mX: cute.Tensor, mOut: cute.Tensor):
    """mX holds Int64 values: an element past 2**31 stays 64-bit when compared."""
    tidx, _, _ = cute.arch.thread_idx()
    v = mX[tidx]
    if v > 0:
        mOut[tidx] = 1


@cute.jit
def launch_wide(mX: cute.Tensor, mOut: cute.Tensor):
    wide_elements(mX, mOut).launch(grid=(1, 1, 1), block=(2, 1, 1))


@cute.jit
def launch(mX: cute.Tensor, mOut: cute.Tensor, a: cutlass.Int32, b: cutlass.Int32):
    overflow(mX, mOut, a, b).launch(grid=(1, 1, 1), block=(32, 1, 1))


if __name__ == "__main__":          # real CuTeDSL: compile for sm_80 and print the PTX's 32-bit multiplies
    import os
    import re
    import sys

    import torch
    from cutlass.cute.runtime import from_dlpack
    os.environ.setdefault("CUTE_DSL_ARCH", "sm_80")
    compiled = cute.compile[cute.KeepPTX](launch, from_dlpack(torch.zeros(32, dtype=torch.int32)),
                                          from_dlpack(torch.zeros(256, dtype=torch.int32)), cutlass.Int32(5),
                                          cutlass.Int32(5))
    ptx = getattr(compiled, "__ptx__", "") or ""
    sys.stdout.write(" ".join(sorted(set(re.findall(r"\b(?:mul\.lo\.s32|mul\.wide\.s32|setp\.lt\.s32|setp\.lt\.s64)",
                                                    ptx)))) + "\n")
