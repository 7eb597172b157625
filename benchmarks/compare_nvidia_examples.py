"""Our kernels, NVIDIA's own CuTeDSL Ampere examples and torch, timed in one process on one GPU.

    python benchmarks/compare_nvidia_examples.py --examples DIR [--size 8192] [--repeats 50]

DIR holds NVIDIA's example files, unchanged, from a checkout of github.com/NVIDIA/cutlass:
    examples/python/CuTeDSL/cute/ampere/kernel/dense_gemm/tensorop_gemm.py
    examples/python/CuTeDSL/cute/ampere/kernel/dense_gemm/sgemm.py
    examples/python/CuTeDSL/cute/ampere/kernel/elementwise/elementwise_add.py
(they are not part of this repository; copy them into an ignored folder, e.g. .nvidia-examples/).

Each example is run through its own `run(...)` entry point, which compiles it, checks it against torch and
times it with `cutlass.testing.benchmark` (mean over iterations, cold L2 where the example offers it). Our
kernel and torch's op are timed with bench.py's `median_ms` (CUDA events, inputs rotated so L2 is cold).
The table gives each kernel's time and its ratio to torch measured in this same process: the comparison
the course's targets are stated in ("at least NVIDIA's example's ratio, in the same run").
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FILES = ("tensorop_gemm.py", "sgemm.py", "elementwise_add.py")


def _import_example(folder, name):
    import importlib.util
    path = os.path.join(folder, name)
    spec = importlib.util.spec_from_file_location(f"nvidia_{name[:-3]}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _theirs_ms(call):
    """Run one example's entry point; its time in ms (from its return value, or from what it printed)."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        value = call()
    if isinstance(value, (int, float)) and value > 0:
        return value / 1e3                                  # the examples return microseconds
    found = re.search(r"Kernel execution time: ([0-9.]+) ms", printed.getvalue())
    if not found:
        raise RuntimeError("the example printed no execution time:\n" + printed.getvalue()[-800:])
    return float(found.group(1))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", required=True, help="folder holding NVIDIA's " + ", ".join(FILES))
    parser.add_argument("--size", type=int, default=8192, help="M = N = K for the GEMMs, M = N for the add")
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args(argv)
    missing = [f for f in FILES if not os.path.isfile(os.path.join(args.examples, f))]
    if missing:
        parser.error(f"--examples {args.examples} lacks {', '.join(missing)} (see this script's help)")
    if args.size <= 0 or args.size % 128:
        parser.error(f"--size must be a positive multiple of 128, got {args.size}")

    import torch
    import cutlass
    from benchmarks.bench import median_ms, sets_for
    from benchmarks.kernels import elementwise_add, gemm_tensorcore, sgemm_simt
    if not torch.cuda.is_available():
        print("compare_nvidia_examples: no CUDA GPU here; nothing to measure")
        return 1
    n, repeats, rows = args.size, args.repeats, []
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)

    # ---- tensor-core GEMM, fp16 in, fp32 accumulate, TN (A and B K-major)
    theirs = _import_example(args.examples, "tensorop_gemm.py")
    their_ms = _theirs_ms(lambda: theirs.run(
        (n, n, n, 1), cutlass.Float16, cutlass.Float16, cutlass.Float32, "k", "k", "n", (2, 2, 1),
        skip_ref_check=True, use_cold_l2=True, benchmark=True, iterations=repeats))
    sets = [(torch.randn(n, n, device="cuda", dtype=torch.float16), torch.randn(n, n, device="cuda", dtype=torch.float16),
             torch.empty(n, n, device="cuda", dtype=torch.float16)) for _ in range(2)]
    torch_ms = median_ms([lambda s=s: torch.matmul(s[0], s[1].T, out=s[2]) for s in sets], repeats)
    ours_ms = median_ms([gemm_tensorcore.prepare(*s) for s in sets], repeats)
    rows.append(("tensor-core GEMM fp16 TN", f"{n}^3", 2 * n ** 3 / 1e12, "TFLOP/s", ours_ms, their_ms, torch_ms))
    del sets

    # ---- SIMT sgemm, fp32, TF32 off (A M-major, B N-major: our kernel's operands)
    torch.backends.cuda.matmul.allow_tf32 = False
    theirs = _import_example(args.examples, "sgemm.py")
    their_ms = _theirs_ms(lambda: theirs.run((n, n, n), "m", "n", "n", skip_ref_check=True, use_cold_l2=True,
                                             iterations=max(10, repeats // 5)))
    sets = [(torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda"), torch.empty(n, n, device="cuda"))
            for _ in range(2)]
    torch_ms = median_ms([lambda s=s: torch.matmul(s[0].T, s[1], out=s[2]) for s in sets], max(10, repeats // 5))
    ours_ms = median_ms([sgemm_simt.prepare(*s) for s in sets], max(10, repeats // 5))
    rows.append(("SIMT sgemm fp32 (TF32 off)", f"{n}^3", 2 * n ** 3 / 1e12, "TFLOP/s", ours_ms, their_ms, torch_ms))
    del sets

    # ---- elementwise add, fp16
    theirs = _import_example(args.examples, "elementwise_add.py")
    their_ms = _theirs_ms(lambda: theirs.run_elementwise_add(n, n, cutlass.Float16, skip_ref_check=True,
                                                              benchmark=True, iterations=repeats * 2))
    bytes_ = 3 * n * n * 2
    sets = [[torch.randn(n, n, device="cuda", dtype=torch.float16) for _ in range(3)] for _ in range(sets_for(bytes_))]
    torch_ms = median_ms([lambda s=s: torch.add(s[0], s[1], out=s[2]) for s in sets], repeats)
    ours_ms = median_ms([elementwise_add.prepare(*s) for s in sets], repeats)
    rows.append(("elementwise add fp16", f"{n}x{n}", bytes_ / 1e9, "GB/s", ours_ms, their_ms, torch_ms))

    print(f"\n{'kernel':28} {'shape':10} {'ours ms':>8} {'NVIDIA ms':>10} {'torch ms':>9} "
          f"{'ours/torch':>10} {'NVIDIA/torch':>12}  (rate = torch time / kernel time)")
    for name, shape, amount, unit, ours, their, torch_time in rows:
        print(f"{name:28} {shape:10} {ours:8.4f} {their:10.4f} {torch_time:9.4f} {torch_time / ours:10.3f} "
              f"{torch_time / their:12.3f}   ours {amount / ours * 1e3:.1f} {unit}, NVIDIA {amount / their * 1e3:.1f}, "
              f"torch {amount / torch_time * 1e3:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
