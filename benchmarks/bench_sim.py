"""How fast the CPU simulator runs the course's kernels, at the sizes the notebooks use.

    python benchmarks/bench_sim.py

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

    return {"add, one thread per element, 256x256 fp32": one_per_thread,
            "add, TiledCopy 128-bit, 256x256 fp32": tiled_add,
            "row sums cuda_style 64x1024": row_sums("cuda_style"),
            "row sums composition 64x1024": row_sums("composition"),
            "row sums tiled_copy 64x1024": row_sums("tiled_copy"),
            "SIMT sgemm 128x128x64 (elements = MACs)": simt_gemm,
            "tensor-core gemm 128x128x128 (elements = MACs)": tensor_core_gemm}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=2, help="runs per kernel; the best is reported (>= 1)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    cutekit.use("sim")
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
