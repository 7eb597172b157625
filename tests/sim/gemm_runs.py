"""The course's GEMM kernels in benchmarks/kernels/ run on the simulator from their source (or a changed copy of
it, for a test that plants a mistake), for the simulator's kernel tests."""
import contextlib
import pathlib
import sys
import types

import torch

import cutekit

ROOT = pathlib.Path(__file__).parents[2]


def simulated_gemm(kernel: str, source: str, M: int, N: int, K: int, knobs: dict | None = None):
    """D = A B^T with benchmarks/kernels/KERNEL.py's `gemm_tn` built from `source`, on the simulator, fp16 inputs
    drawn from a generator seeded by the shape, inside `module.configured(**knobs)` where knobs are given;
    returns (D, A, B)."""
    with cutekit.using("sim", fresh=("benchmarks",)):
        from benchmarks.kernels import tensors
        module = types.ModuleType(f"benchmarks.kernels.{kernel}_under_test")
        module.__package__ = "benchmarks.kernels"
        module.__file__ = str(ROOT / "benchmarks" / "kernels" / f"{kernel}.py")
        sys.modules[module.__name__] = module
        try:
            exec(compile(source, module.__file__, "exec"), module.__dict__)
            generator = torch.Generator().manual_seed(M * 7 + N * 3 + K)
            a = torch.randn(M, K, generator=generator).half()
            b = torch.randn(N, K, generator=generator).half()
            d = torch.zeros(M, N, dtype=torch.float16)
            with module.configured(**knobs) if knobs is not None else contextlib.nullcontext():
                module.gemm_tn(*[tensors.from_torch(t, 8) for t in (a, b, d)])
            return d, a, b
        finally:
            del sys.modules[module.__name__]
