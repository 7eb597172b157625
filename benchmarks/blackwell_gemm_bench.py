"""Chapter 09's Blackwell GEMM (benchmarks/kernels/blackwell_gemm.py, `gemm_tn`: TMA, two stages, tcgen05.mma
into tensor memory) on a B200: checked against torch, then timed against torch.matmul in the same process.

    python benchmarks/blackwell_gemm_bench.py [--size 4096] [--repeats 30] [--rounds 3]

D = A B^T at SIZE^3 in fp16 with fp32 accumulation, A (M, K) and B (N, K) row-major. The kernel and
torch.matmul(a, b.T, out=d) are timed by the same timer (bench.py's interleaved_ms: CUDA events around single
launches, the two in turn, median of REPEATS, two input sets), ROUNDS times; each round prints both rates and
the ratio torch time / kernel time.

The kernel uses tcgen05 and tensor memory, which only datacenter Blackwell has: it needs an sm_100a GPU (B200,
GB200; B300 is sm_103a). On any other machine (no GPU, Hopper sm_90, consumer Blackwell sm_120) this script
prints one line saying so and exits 0. The course has run it on no Blackwell GPU: it has no Blackwell timing.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# compute capabilities with tcgen05.mma and tensor memory that this kernel is built for: B200/GB200 (10.0) and
# B300 (10.3). Hopper (9.0) has wgmma instead; consumer Blackwell (12.x, GeForce RTX 50) has neither.
TCGEN05_CAPABILITIES = ((10, 0), (10, 3))
NEEDS = ("the Blackwell GEMM needs an sm_100a GPU (B200, GB200; or a B300, sm_103a): tcgen05 and tensor memory "
         "are not on Hopper (sm_90) or consumer Blackwell (sm_120)")


def device() -> tuple | None:
    """(name, (major, minor)) of the current CUDA device, or None where torch sees none."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    return torch.cuda.get_device_name(), torch.cuda.get_device_capability()


def why_not_here(found=None) -> str:
    """"" where this machine's GPU runs the kernel, else the one line saying what it needs and what is here."""
    found = device() if found is None else found
    if not found:
        return f"{NEEDS}; this machine has no CUDA GPU"
    name, capability = found
    if tuple(capability) in TCGEN05_CAPABILITIES:
        return ""
    return f"{NEEDS}; this {name} is sm_{capability[0]}{capability[1]}"


def check_shapes(M: int, N: int, K: int) -> None:
    from benchmarks.kernels import blackwell_gemm as kernel
    if M % kernel.BM or N % kernel.BN or K % kernel.BK or min(M, N, K) <= 0:
        raise ValueError(f"the Blackwell GEMM has no predication: M and N must be positive multiples of "
                         f"{kernel.BM} and {kernel.BN}, K of {kernel.BK}; got M={M}, N={N}, K={K}")


_compiled: list = []


def prepare(a, b, d):
    """`launch()` computing d = a @ b.T with the chapter's kernel, for fp16 CUDA tensors a (M, K), b (N, K),
    d (M, N), row-major, on an sm_100a (or sm_103a) GPU. Compiled once per process (the shapes are dynamic)."""
    import torch
    import cutlass.cute as cute
    from benchmarks.kernels import blackwell_gemm, tensors
    if not (a.dtype == b.dtype == d.dtype == torch.float16):
        raise ValueError("the Blackwell GEMM needs float16 a, b and d")
    M, K = a.shape
    N = b.shape[0]
    if b.shape[1] != K or tuple(d.shape) != (M, N):
        raise ValueError(f"shapes do not chain: a {tuple(a.shape)}, b {tuple(b.shape)}, d {tuple(d.shape)}")
    check_shapes(M, N, K)
    # the tensors are marked as chapter 09 section 3 compiles them: contiguous extent a multiple of 64 elements,
    # base 128-byte aligned (TMA wants 16 bytes; a fresh torch allocation is 256-byte aligned)
    if not all(t.is_cuda and t.is_contiguous() and t.data_ptr() % 128 == 0 for t in (a, b, d)):
        raise ValueError("the Blackwell GEMM needs contiguous CUDA tensors whose data starts 128-byte aligned")
    why = why_not_here((torch.cuda.get_device_name(a.device), torch.cuda.get_device_capability(a.device)))
    if why:
        raise ValueError(why)
    args = [tensors.from_torch(t, 64) for t in (a, b, d)]
    if not _compiled:
        _compiled.append(cute.compile(blackwell_gemm.gemm_tn, *args))
    compiled = _compiled[0]
    return lambda: compiled(*args)


def relative_error(got, reference) -> float:
    return float((got.float() - reference).norm() / reference.norm())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=4096, help="M = N = K (a positive multiple of 128)")
    parser.add_argument("--repeats", type=int, default=30, help="launches per kernel and round (median)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of interleaved timing")
    args = parser.parse_args(argv)
    if args.size <= 0 or args.size % 128:
        parser.error(f"--size must be a positive multiple of 128 (the kernel's tile), got {args.size}")
    if args.repeats < 1 or args.rounds < 1:
        parser.error(f"--repeats and --rounds must be at least 1, got {args.repeats} and {args.rounds}")
    why = why_not_here()
    if why:
        print(f"blackwell_gemm_bench: {why}")
        return 0

    import torch
    from benchmarks.bench import interleaved_ms
    n, flops = args.size, 2 * args.size ** 3
    print(f"device {torch.cuda.get_device_name()} (sm_{''.join(map(str, torch.cuda.get_device_capability()))}), "
          f"torch {torch.__version__}", flush=True)
    sets = [(torch.randn(n, n, device="cuda", dtype=torch.float16),
             torch.randn(n, n, device="cuda", dtype=torch.float16),
             torch.empty(n, n, device="cuda", dtype=torch.float16)) for _ in range(2)]
    ours = [prepare(*s) for s in sets]
    theirs = [lambda s=s: torch.matmul(s[0], s[1].T, out=s[2]) for s in sets]

    a, b, d = sets[0]
    reference = torch.matmul(a.float(), b.float().T)
    d.fill_(float("nan"))
    ours[0]()
    torch.cuda.synchronize()
    error = relative_error(d, reference)
    if not error < 2e-3:          # the bound tests/gpu/test_hopper_gemm.py allows the Hopper GEMM
        print(f"blackwell_gemm_bench: the kernel's D differs from torch's (relative error {error:.2e}); not timed")
        return 1
    print(f"checked against torch.matmul in fp32: relative error {error:.1e}")
    del reference

    print(f"D = A B^T, {n}^3 fp16, fp32 accumulation: the kernel and torch.matmul timed in turn by the same timer "
          f"(CUDA events around single launches, median of {args.repeats}; 2 input sets)")
    ratios = []
    for number in range(1, args.rounds + 1):
        kernel_ms, torch_ms = interleaved_ms([ours, theirs], args.repeats)
        ratios.append(torch_ms / kernel_ms)
        print(f"round {number}: kernel {kernel_ms:.4f} ms = {flops / kernel_ms / 1e9:.1f} TFLOP/s, torch.matmul "
              f"{torch_ms:.4f} ms = {flops / torch_ms / 1e9:.1f} TFLOP/s; torch time / kernel time "
              f"{ratios[-1]:.3f}", flush=True)
    print(f"torch time / kernel time over {args.rounds} rounds: {min(ratios):.3f}-{max(ratios):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
