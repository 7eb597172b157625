"""Tile and pipeline choices of the tensor-core GEMM, timed against torch.matmul in the same process.

    python benchmarks/sweep_gemm_tensorcore.py [--size 8192] [--repeats 20]

Each configuration (BM, BN, BK, STAGES, GROUP_M, warps, swizzle on or off, epilogue through shared memory or not) is compiled, checked against torch, and timed; prints TFLOP/s and
the ratio to torch.matmul fp16. Needs an sm_80+ GPU and CuTeDSL.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (BM, BN, BK, STAGES, GROUP_M, WARPS_M, WARPS_N, SWIZZLE, EPILOGUE_SMEM)
CONFIGS = [(128, 128, 64, 3, 8, 2, 2, True, True), (128, 128, 64, 3, 8, 2, 2, True, False),    # the epilogue's worth
           (128, 128, 64, 3, 8, 2, 2, False, True),                                            # the swizzle's worth
           (128, 128, 64, 3, 16, 2, 2, True, True), (128, 128, 32, 4, 8, 2, 2, True, True),
           (256, 128, 64, 3, 8, 4, 2, True, True), (256, 128, 64, 3, 16, 4, 2, True, True),
           (256, 128, 64, 3, 16, 4, 2, True, False), (256, 128, 32, 4, 16, 4, 2, True, True),
           (256, 128, 64, 4, 16, 4, 2, True, True), (128, 256, 64, 3, 8, 2, 4, True, True),
           (128, 256, 64, 3, 16, 2, 4, True, True)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=8192, help="M = N = K (a multiple of 64)")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)
    if args.size <= 0 or args.size % 64:
        parser.error(f"--size must be a positive multiple of 64, got {args.size}")
    import torch
    from benchmarks.bench import median_ms
    from benchmarks.kernels import gemm_tensorcore
    size = args.size
    sets = [(torch.randn(size, size, device="cuda", dtype=torch.float16),
             torch.randn(size, size, device="cuda", dtype=torch.float16),
             torch.empty(size, size, device="cuda", dtype=torch.float16)) for _ in range(2)]
    flops = 2 * size ** 3
    torch_ms = median_ms([lambda s=s: torch.matmul(s[0], s[1].T, out=s[2]) for s in sets], args.repeats)
    print(f"torch.matmul fp16: {flops / torch_ms / 1e9:.1f} TFLOP/s")
    for config in CONFIGS:
        bm, bn, bk, stages, group_m, warps_m, warps_n, swizzle, epilogue_smem = config
        name = (f"BM={bm} BN={bn} BK={bk} STAGES={stages} GROUP_M={group_m} warps={warps_m}x{warps_n}"
                + ("" if swizzle else " NO SWIZZLE") + (" epilogue smem" if epilogue_smem else " epilogue direct"))
        knobs = dict(zip(gemm_tensorcore.KNOBS, config))
        try:
            launches = [gemm_tensorcore.prepare(*s, **knobs) for s in sets]
        except Exception as error:  # noqa: BLE001 - a configuration that does not compile is reported
            print(f"{name}: {type(error).__name__}: {str(error)[:200]}", flush=True)
            continue
        a, b, c = sets[0]
        c.zero_()
        launches[0]()
        reference = torch.matmul(a, b.T)
        error = float((c.float() - reference.float()).norm() / reference.float().norm())
        ms = median_ms(launches, args.repeats)
        again = median_ms([lambda s=s: torch.matmul(s[0], s[1].T, out=s[2]) for s in sets], args.repeats)
        print(f"{name}: {flops / ms / 1e9:.1f} TFLOP/s = "
              f"{again / ms:.3f} of torch (torch now {flops / again / 1e9:.1f}), rel. error {error:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
