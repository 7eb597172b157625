"""How fast the CPU simulator runs the course's kernels, at the sizes the notebooks use.

    python benchmarks/bench_sim.py            every course kernel
    python benchmarks/bench_sim.py --numba    shared-memory kernels against numba's simulator, same run

For each kernel: simulated CUDA threads per second and elements per second (best of `--repeat` runs), and
the result checked against NumPy. For scale, on the course's 2-core reference machine NumPy's CUDA
simulator (numba, as in GPU Puzzles) manages 1.4-5.7 thousand threads per second (a 256x256 one-thread-
per-element add: 29 s) and Triton's interpreter 66-86 thousand elements per second.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import cutekit  # noqa: E402

NUMBA_THREADS_PER_SECOND = (1.4e3, 5.7e3)
TRITON_ELEMENTS_PER_SECOND = (66e3, 86e3)


def cases():
    import numpy
    import torch
    from cutlass.cute.runtime import from_dlpack
    rng = numpy.random.default_rng(0)
    kernels = importlib.import_module("tests.sim.kernels")
    add = importlib.import_module("benchmarks.kernels.elementwise_add")
    reduce_sum = importlib.import_module("benchmarks.kernels.reduce_sum")
    sgemm = importlib.import_module("benchmarks.kernels.sgemm_simt")
    gemm = importlib.import_module("benchmarks.kernels.gemm_tensorcore")
    hopper = importlib.import_module("benchmarks.kernels.hopper_gemm")

    def one_per_thread():
        a, b = rng.random((256, 256), numpy.float32), rng.random((256, 256), numpy.float32)
        c = numpy.zeros_like(a)
        return (lambda: kernels.add_one_per_thread(from_dlpack(a, assumed_align=16), from_dlpack(b, assumed_align=16), from_dlpack(c, assumed_align=16)),
                lambda: numpy.array_equal(c, a + b), a.size)

    def tiled_add():
        a, b = rng.random((256, 256), numpy.float32), rng.random((256, 256), numpy.float32)
        c = numpy.zeros_like(a)
        return (lambda: add.add(from_dlpack(a, assumed_align=16), from_dlpack(b, assumed_align=16), from_dlpack(c, assumed_align=16), 4, 4),
                lambda: numpy.array_equal(c, a + b), a.size)

    def row_sums(variant):
        def make():
            x, out = rng.random((64, 1024), numpy.float32), numpy.zeros(64, numpy.float32)
            return (lambda: reduce_sum.VARIANTS[variant](from_dlpack(x, assumed_align=16), from_dlpack(out, assumed_align=16), 4),
                    lambda: numpy.allclose(out, x.sum(1), rtol=1e-4), x.size)
        return make

    def simt_gemm():
        a_t, b, c = torch.randn(64, 128), torch.randn(64, 128), torch.zeros(128, 128)
        return (lambda: sgemm.sgemm(from_dlpack(a_t.T, assumed_align=16), from_dlpack(b.T, assumed_align=16), from_dlpack(c, assumed_align=16)),
                lambda: torch.allclose(c, a_t.T @ b, atol=1e-3), 128 * 128 * 64)

    def tensor_core_gemm():
        a, b = torch.randn(128, 128).half(), torch.randn(128, 128).half()
        c = torch.zeros(128, 128, dtype=torch.float16)
        return (lambda: gemm.gemm_tn(from_dlpack(a, assumed_align=16), from_dlpack(b, assumed_align=16), from_dlpack(c, assumed_align=16)),
                lambda: torch.allclose(c.float(), a.float() @ b.float().T, atol=0.1, rtol=1e-2), 128 * 128 * 128)

    def hopper_gemm(M, N, K, **knobs):
        def make():
            a, b = torch.randn(M, K).half(), torch.randn(N, K).half()
            c = torch.zeros(M, N, dtype=torch.float16)

            def run():
                with hopper.configured(**knobs):
                    hopper.gemm_tn(*[from_dlpack(t, assumed_align=16) for t in (a, b, c)])
            return (run, lambda: torch.allclose(c.float(), a.float() @ b.float().T, atol=0.06, rtol=1e-2), M * N * K)
        return make

    return {"add, one thread per element, 256x256 fp32": one_per_thread,
            "add, TiledCopy 128-bit, 256x256 fp32": tiled_add,
            "row sums cuda_style 64x1024": row_sums("cuda_style"),
            "row sums composition 64x1024": row_sums("composition"),
            "row sums tiled_copy 64x1024": row_sums("tiled_copy"),
            "SIMT sgemm 128x128x64 (elements = MACs)": simt_gemm,
            "tensor-core gemm 128x128x128 (elements = MACs)": tensor_core_gemm,
            "Hopper gemm 128x256x512, as benchmarked (MACs)": hopper_gemm(128, 256, 512),
            "Hopper gemm 200x72x136, chapter 08 sec. 4 (MACs)": hopper_gemm(200, 72, 136, BN=128, STAGES=2)}


# ---- the same kernels for cutekit's simulator and numba's CUDA simulator, timed in one run (--numba)
TRANSPOSE_N = 128          # a 128x128 fp32 transpose through shared memory: 16 blocks of 32x8 threads
REDUCE_ROWS, REDUCE_COLS = 16, 1024    # a tree reduction in shared memory: one 256-thread block per row


def _sim_kernels():
    import cutlass
    import cutlass.cute as cute

    @cute.kernel
    def transpose_kernel(gIn: cute.Tensor, gOut: cute.Tensor):
        tx, ty, _ = cute.arch.thread_idx()
        bx, by, _ = cute.arch.block_idx()
        smem = cutlass.memory.SmemAllocator()
        tile = smem.allocate_tensor(cutlass.Float32, cute.make_layout((32, 32), stride=(33, 1)), 16)
        for step in cutlass.range_constexpr(4):
            tile[ty + 8 * step, tx] = gIn[by * 32 + ty + 8 * step, bx * 32 + tx]
        cute.arch.sync_threads()
        for step in cutlass.range_constexpr(4):
            gOut[bx * 32 + ty + 8 * step, by * 32 + tx] = tile[tx, ty + 8 * step]

    @cute.jit
    def transpose(mIn: cute.Tensor, mOut: cute.Tensor):
        n = mIn.shape[0] // 32
        transpose_kernel(mIn, mOut).launch(grid=[n, n, 1], block=[32, 8, 1])

    @cute.kernel
    def reduce_kernel(gIn: cute.Tensor, gOut: cute.Tensor):
        tid, _, _ = cute.arch.thread_idx()
        row, _, _ = cute.arch.block_idx()
        smem = cutlass.memory.SmemAllocator()
        partial = smem.allocate_tensor(cutlass.Float32, cute.make_layout(256), 16)
        total = cutlass.Float32(0.0)
        for j in cutlass.range_constexpr(REDUCE_COLS // 256):
            total = total + gIn[row, tid + 256 * j]
        partial[tid] = total
        cute.arch.sync_threads()
        stride = 128
        while stride > 0:
            if tid < stride:
                partial[tid] = partial[tid] + partial[tid + stride]
            cute.arch.sync_threads()
            stride = stride // 2
        if tid == 0:
            gOut[row] = partial[0]

    @cute.jit
    def reduce_rows(mIn: cute.Tensor, mOut: cute.Tensor):
        reduce_kernel(mIn, mOut).launch(grid=[mIn.shape[0], 1, 1], block=[256, 1, 1])

    return transpose, reduce_rows


_NUMBA_SOURCE = '''
@cuda.jit
def transpose(a, out):
    tile = cuda.shared.array((32, 33), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    bx, by = cuda.blockIdx.x, cuda.blockIdx.y
    for step in range(4):
        tile[ty + 8 * step, tx] = a[by * 32 + ty + 8 * step, bx * 32 + tx]
    cuda.syncthreads()
    for step in range(4):
        out[bx * 32 + ty + 8 * step, by * 32 + tx] = tile[tx, ty + 8 * step]

@cuda.jit
def reduce_rows(a, out):
    partial = cuda.shared.array(256, float32)
    tid, row = cuda.threadIdx.x, cuda.blockIdx.x
    total = float32(0.0)
    for j in range(REDUCE_COLS // 256):
        total += a[row, tid + 256 * j]
    partial[tid] = total
    cuda.syncthreads()
    stride = 128
    while stride > 0:
        if tid < stride:
            partial[tid] += partial[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        out[row] = partial[0]

'''


def _numba_kernels():
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    from numba import cuda, float32

    # numba's simulator swaps `cuda` in the kernel's module globals, so the kernels get globals of their own
    namespace = {"cuda": cuda, "float32": float32, "REDUCE_COLS": REDUCE_COLS}
    exec(_NUMBA_SOURCE, namespace)
    transpose, reduce_rows = namespace["transpose"], namespace["reduce_rows"]
    n = TRANSPOSE_N // 32
    return (lambda a, o: transpose[(n, n), (32, 8)](a, o),
            lambda a, o: reduce_rows[REDUCE_ROWS, 256](a, o))


def compare_numba(repeat: int) -> int:
    """Time the shared-memory kernels on both simulators in this process; print the ratio."""
    import numpy
    try:
        ours_transpose, ours_reduce = _sim_kernels()
        theirs_transpose, theirs_reduce = _numba_kernels()
    except ImportError:
        print("bench_sim --numba: numba is not installed (pip install numba; it is not a dependency)")
        return 1
    from cutlass.cute.runtime import from_dlpack
    rng = numpy.random.default_rng(0)
    a = rng.random((TRANSPOSE_N, TRANSPOSE_N), numpy.float32)
    x = rng.random((REDUCE_ROWS, REDUCE_COLS), numpy.float32)
    rows = [("transpose 128x128 via smem, 32x8 threads/block", a, numpy.zeros_like(a), a.T,
             ours_transpose, theirs_transpose),
            ("tree reduction 16x1024 rows, 256 threads/block", x, numpy.zeros(REDUCE_ROWS, numpy.float32),
             x.sum(axis=1), ours_reduce, theirs_reduce)]
    print(f"{'kernel':48} {'cutekit s':>9} {'numba s':>8} {'speed-up':>9}  ok")
    for name, data, out, want, ours, theirs in rows:
        def best(call):
            times = []
            for _ in range(repeat):
                out[...] = 0
                started = time.perf_counter()
                call()
                times.append(time.perf_counter() - started)
            return min(times), numpy.allclose(out, want, rtol=1e-4, atol=1e-4)
        mine, ok_mine = best(lambda: ours(from_dlpack(data), from_dlpack(out)))
        numba_s, ok_numba = best(lambda: theirs(data, out))
        print(f"{name:48} {mine:9.3f} {numba_s:8.3f} {numba_s / mine:8.1f}x  "
              f"{'yes' if ok_mine and ok_numba else 'NO'}", flush=True)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=2, help="runs per kernel; the best is reported (>= 1)")
    parser.add_argument("--numba", action="store_true",
                        help="time a shared-memory transpose and a tree reduction on this simulator and on "
                             "numba's CUDA simulator, in this same run (needs numba installed)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    cutekit.use("sim")
    if args.numba:
        return compare_numba(args.repeat)
    print(f"{'kernel':48} {'seconds':>8} {'threads/s':>11} {'elements/s':>11} {'vs numba':>9}  ok")
    for name, make in cases().items():
        run, check, elements = make()
        best, report = float("inf"), None
        for _ in range(args.repeat):
            started = time.perf_counter()
            run()
            elapsed = time.perf_counter() - started
            if elapsed < best:
                best, report = elapsed, cutekit.sim.last_launch()
        threads = report.threads / best
        print(f"{name:48} {best:8.3f} {threads:11,.0f} {elements / best:11,.0f} "
              f"{threads / NUMBA_THREADS_PER_SECOND[1]:8.1f}x  {'yes' if check() else 'NO'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
