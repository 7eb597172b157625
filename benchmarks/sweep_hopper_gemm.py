"""Tile and pipeline choices of the Hopper GEMM (benchmarks/kernels/hopper_gemm.py), timed against
torch.matmul in the same process.

    python benchmarks/sweep_hopper_gemm.py [--size 8192] [--repeats 30]

Each configuration (BN, STAGES, GROUP_M, CLUSTER_M; BM is 128: two consumer warpgroups of 64 rows) is compiled,
checked against torch, and timed with bench.py's median of single launches; prints TFLOP/s and the ratio to
torch.matmul fp16 timed right after it. Needs an sm_90 GPU and CuTeDSL.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (BN, STAGES, GROUP_M, CLUSTER_M): the default first; the raster's group; a 128-wide tile (half the
# accumulators, so twice the A traffic per flop) with the stages its smaller footprint allows; 192 in
# between; pairs of CTAs sharing B by multicast
CONFIGS = [(256, 4, 8, 1), (256, 4, 16, 1), (256, 4, 4, 1), (256, 4, 1, 1), (192, 5, 8, 1), (128, 4, 8, 1),
           (128, 6, 8, 1), (256, 4, 8, 2), (256, 4, 16, 2), (128, 6, 8, 2)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=8192, help="M = N = K (a multiple of 8)")
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args(argv)
    if args.size <= 0 or args.size % 8:
        parser.error(f"--size must be a positive multiple of 8, got {args.size}")
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    import torch
    from benchmarks.bench import median_ms
    from benchmarks.kernels import hopper_gemm
    size = args.size
    sets = [(torch.randn(size, size, device="cuda", dtype=torch.float16),
             torch.randn(size, size, device="cuda", dtype=torch.float16),
             torch.empty(size, size, device="cuda", dtype=torch.float16)) for _ in range(2)]
    a, b, c = sets[0]
    reference = torch.matmul(a, b.T).float()
    flops = 2 * size ** 3
    for config in CONFIGS:
        knobs = dict(zip(("BN", "STAGES", "GROUP_M", "CLUSTER_M"), config))
        name = " ".join(f"{key}={value}" for key, value in knobs.items())
        try:
            launches = [hopper_gemm.prepare(*s, **knobs) for s in sets]
        except Exception as error:  # noqa: BLE001 - a configuration that does not compile is reported
            print(f"{name}: {type(error).__name__}: {str(error)[:200]}", flush=True)
            continue
        c.fill_(float("nan"))
        launches[0]()
        error = float((c.float() - reference).norm() / reference.norm())
        ms = median_ms(launches, args.repeats)
        torch_ms = median_ms([lambda s=s: torch.matmul(s[0], s[1].T, out=s[2]) for s in sets], args.repeats)
        print(f"{name}: {flops / ms / 1e9:.1f} TFLOP/s = {torch_ms / ms:.3f} of torch "
              f"(torch {flops / torch_ms / 1e9:.1f}), rel. error {error:.1e}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
