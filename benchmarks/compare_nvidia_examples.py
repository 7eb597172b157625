"""Our kernels, NVIDIA's own CuTeDSL examples and torch, timed in one process on one GPU.

    python benchmarks/compare_nvidia_examples.py --examples DIR [--size 8192] [--repeats 50]
    python benchmarks/compare_nvidia_examples.py --examples DIR --hopper [--hopper-only] [--rounds 5]

DIR holds NVIDIA's example files, unchanged, from a checkout of github.com/NVIDIA/cutlass:
    examples/python/CuTeDSL/cute/ampere/kernel/dense_gemm/tensorop_gemm.py
    examples/python/CuTeDSL/cute/ampere/kernel/dense_gemm/sgemm.py
    examples/python/CuTeDSL/cute/ampere/kernel/elementwise/elementwise_add.py
and, for --hopper, DIR/hopper/dense_gemm.py (examples/python/CuTeDSL/cute/hopper/kernel/dense_gemm/dense_gemm.py;
another folder with --hopper-examples). They are not part of this repository; copy them into an ignored
folder, e.g. .nvidia-examples/.

--hopper adds our Hopper GEMM (benchmarks/kernels/hopper_gemm.py: TMA, mbarrier pipeline, wgmma) against
NVIDIA's Hopper dense_gemm (128x256 tile, cluster 1x1, the configuration its documentation runs) and
torch.matmul at SIZE^3 fp16, on an sm_90 GPU; --hopper-only skips the Ampere examples.

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
HOPPER_FILE = "dense_gemm.py"
HOPPER_TILE, HOPPER_CLUSTER = (128, 256), (1, 1)


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
    parser.add_argument("--hopper", action="store_true",
                        help=f"also compare the Hopper GEMM with NVIDIA's hopper {HOPPER_FILE} (sm_90 GPU)")
    parser.add_argument("--hopper-only", action="store_true", help="only the Hopper comparison (implies --hopper)")
    parser.add_argument("--hopper-examples", help=f"folder holding NVIDIA's hopper {HOPPER_FILE} "
                                                  "(default: EXAMPLES/hopper)")
    parser.add_argument("--size", type=int, default=8192, help="M = N = K for the GEMMs, M = N for the add")
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3, help="same-timer GEMM rounds (ours, NVIDIA's, torch in turn)")
    args = parser.parse_args(argv)
    args.hopper = args.hopper or args.hopper_only
    hopper_folder = args.hopper_examples or os.path.join(args.examples, "hopper")
    missing = [] if args.hopper_only else [f for f in FILES if not os.path.isfile(os.path.join(args.examples, f))]
    if missing:
        parser.error(f"--examples {args.examples} lacks {', '.join(missing)} (see this script's help)")
    if args.hopper and not os.path.isfile(os.path.join(hopper_folder, HOPPER_FILE)):
        parser.error(f"--hopper: {hopper_folder} lacks {HOPPER_FILE} (see this script's help)")
    if args.rounds < 1 or args.repeats < 1:
        parser.error(f"--rounds and --repeats must be at least 1, got {args.rounds} and {args.repeats}")
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
    if args.hopper:
        if torch.cuda.get_device_capability() != (9, 0):
            print(f"compare_nvidia_examples: --hopper needs an sm_90 GPU, not {torch.cuda.get_device_name()}")
            return 1
        _compare_hopper(hopper_folder, n, repeats, args.rounds)
        if args.hopper_only:
            return 0

    # ---- tensor-core GEMM, fp16 in, fp32 accumulate, TN (A and B K-major)
    theirs = _import_example(args.examples, "tensorop_gemm.py")
    their_ms = _theirs_ms(lambda: theirs.run(
        (n, n, n, 1), cutlass.Float16, cutlass.Float16, cutlass.Float32, "k", "k", "n", (2, 2, 1),
        skip_ref_check=True, use_cold_l2=True, benchmark=True, iterations=repeats))
    sets = [(torch.randn(n, n, device="cuda", dtype=torch.float16), torch.randn(n, n, device="cuda", dtype=torch.float16),
             torch.empty(n, n, device="cuda", dtype=torch.float16)) for _ in range(2)]
    torch_ms = median_ms([lambda s=s: torch.matmul(s[0], s[1].T, out=s[2]) for s in sets], repeats)
    ours_ms = median_ms([gemm_tensorcore.prepare(*s, **gemm_tensorcore.FAST) for s in sets], repeats)
    rows.append(("tensor-core GEMM fp16 TN", f"{n}^3", 2 * n ** 3 / 1e12, "TFLOP/s", ours_ms, their_ms, torch_ms))
    del sets
    # the same kernels on two kinds of input: torch.randn (what our benchmarks use) and the whole numbers
    # -2..2 that NVIDIA's example fills its tensors with. Tensor cores draw less power on the latter (few
    # mantissa bits toggle), so the GPU holds higher clocks: the data changes the time, not the kernel
    rounds = {kind: _same_timer_gemm(theirs, kind, n, repeats, args.rounds) for kind in ("randn", "integers -2..2")}

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
    print("(NVIDIA ms above: each example's own run(), on its own inputs and with its own timer; the GEMM rounds\n"
          " below time every kernel on the same inputs with the same timer)")
    for kind, measured in rounds.items():
        print(f"\ntensor-core GEMM {n}^3 on {kind} inputs, every kernel timed by the same timer (bench.py's median "
              f"of single launches, inputs rotated), in turn, {args.rounds} rounds (TFLOP/s):")
        print(f"{'round':>5} {'ours (FAST)':>12} {'ours (2x2)':>11} {'NVIDIA':>8} {'torch':>7} {'ours/NVIDIA':>12} "
              f"{'ours/torch':>11} {'NVIDIA/torch':>13}")
        for number, (fast, teaching, nvidia, torch_time) in enumerate(measured, 1):
            rate = lambda ms: 2 * n ** 3 / ms / 1e9  # noqa: E731
            print(f"{number:>5} {rate(fast):12.1f} {rate(teaching):11.1f} {rate(nvidia):8.1f} {rate(torch_time):7.1f} "
                  f"{nvidia / fast:12.3f} {torch_time / fast:11.3f} {torch_time / nvidia:13.3f}")
    return 0


def _same_timer_gemm(theirs, kind, n, repeats, rounds):
    """Our GEMM (FAST and teaching configurations), NVIDIA's (compiled through its own compile_bmm, launched
    on its own (L, M, K) views of the same torch tensors) and torch.matmul, timed alike, round after round
    (so that clock and power drift falls on all of them); one (ours, ours 2x2, NVIDIA, torch) ms per round."""
    import cutlass
    import cuda.bindings.driver as cuda
    import torch
    from benchmarks.bench import median_ms
    from benchmarks.kernels import gemm_tensorcore
    stream = cuda.CUstream(torch.cuda.current_stream().cuda_stream)

    def operand():
        if kind == "randn":
            return torch.randn(n, n, device="cuda", dtype=torch.float16)
        return torch.randint(-2, 3, (n, n), device="cuda").to(torch.float16)
    sets = [(operand(), operand(), torch.empty(n, n, device="cuda", dtype=torch.float16)) for _ in range(2)]
    views = [theirs.mark_dynamic_layout(a.unsqueeze(0), b.unsqueeze(0).permute(0, 2, 1), c.unsqueeze(0), 2, 1, 2,
                                        cutlass.Float16, cutlass.Float16) for a, b, c in sets]
    compiled = theirs.compile_bmm((n, n, n, 1), *views[0], cutlass.Float16, cutlass.Float16, cutlass.Float32,
                                  (2, 2, 1), epilogue_op=lambda x: x)
    a, b, c = sets[0]
    c.zero_()
    compiled(*views[0], stream)
    reference = torch.matmul(a, b.T).float()
    error = float((c.float() - reference).norm() / reference.norm())
    if error > 2e-3:
        raise RuntimeError(f"NVIDIA's GEMM on our (M, K) x (N, K) tensors: relative error {error}")
    nvidia = [lambda v=v: compiled(*v, stream) for v in views]
    fast = [gemm_tensorcore.prepare(*s, **gemm_tensorcore.FAST) for s in sets]
    teaching = [gemm_tensorcore.prepare(*s) for s in sets]
    matmul = [lambda s=s: torch.matmul(s[0], s[1].T, out=s[2]) for s in sets]
    return [tuple(median_ms(launches, repeats) for launches in (fast, teaching, nvidia, matmul)) for _ in range(rounds)]


def _torch_gemm_operands(kind, n, count):
    """`count` (a, b, c) fp16 sets for c = a @ b.T, with (n, n) operands of one kind: "randn" (what our
    benchmarks use) or "integers -2..2" (what NVIDIA's examples fill their tensors with)."""
    import torch

    def operand():
        if kind == "randn":
            return torch.randn(n, n, device="cuda", dtype=torch.float16)
        return torch.randint(-2, 3, (n, n), device="cuda").to(torch.float16)
    return [(operand(), operand(), torch.empty(n, n, device="cuda", dtype=torch.float16)) for _ in range(count)]


# our Hopper GEMM's configurations in the comparison: the default, and pairs of CTAs sharing B by multicast
HOPPER_OURS = {"ours": {}, "ours 2x1": {"CLUSTER_M": 2}}


def _compare_hopper(folder, n, repeats, rounds):
    """Our Hopper GEMM, NVIDIA's Hopper dense_gemm and torch.matmul at n^3 fp16 (fp32 accumulation), TN."""
    import cutlass
    import cutlass.cute as cute
    import cuda.bindings.driver as cuda
    import torch
    from cutlass.cute.runtime import from_dlpack
    from benchmarks.bench import interleaved_ms
    from benchmarks.kernels import hopper_gemm
    theirs = _import_example(folder, HOPPER_FILE)
    flops = 2 * n ** 3

    # 1. NVIDIA's example through its own run(): its inputs (whole numbers -2..2), its timer
    #    (cutlass.testing.benchmark, cold L2), its own compilation
    their_own_ms = _theirs_ms(lambda: theirs.run(
        (n, n, n, 1), cutlass.Float16, cutlass.Float16, cutlass.Float16, cutlass.Float32, "k", "k", "n",
        HOPPER_TILE, HOPPER_CLUSTER, 1e-1, 5, repeats, True, True))
    print(f"\nNVIDIA's hopper {HOPPER_FILE} run() (its inputs, its timer): {their_own_ms:.4f} ms = "
          f"{flops / their_own_ms / 1e9:.1f} TFLOP/s")

    # 2. the same tensors and the same timer for all. NVIDIA's kernel takes (rows, K, L) tensors with K
    #    contiguous, as its run() builds them: our row-major (rows, K) tensors viewed with a batch of 1
    stream = cuda.CUstream(torch.cuda.current_stream().cuda_stream)
    gemm = theirs.HopperWgmmaGemmKernel(cutlass.Float32, HOPPER_TILE, HOPPER_CLUSTER)

    def batched(t):
        return from_dlpack(t.unsqueeze(0).permute(1, 2, 0), assumed_align=16).mark_layout_dynamic(leading_dim=1)

    compiled = None
    names = list(HOPPER_OURS) + ["NVIDIA", "torch"]
    for kind in ("randn", "integers -2..2"):
        sets = _torch_gemm_operands(kind, n, 2)
        views = [tuple(batched(t) for t in s) for s in sets]
        if compiled is None:
            compiled = cute.compile(gemm, *views[0], stream)
        kernels = [[hopper_gemm.prepare(*s, **knobs) for s in sets] for knobs in HOPPER_OURS.values()]
        kernels.append([lambda v=v: compiled(*v, stream) for v in views])
        kernels.append([lambda s=s: torch.matmul(s[0], s[1].T, out=s[2]) for s in sets])
        a, b, c = sets[0]
        reference = torch.matmul(a, b.T).float()
        for name, launches in zip(names[:-1], kernels):
            c.fill_(float("nan"))
            launches[0]()
            torch.cuda.synchronize()
            error = float((c.float() - reference).norm() / reference.norm())
            if not error < 2e-3:
                raise RuntimeError(f"Hopper GEMM ({name}) on {kind} inputs: relative error {error}")
        del reference
        print(f"\nHopper GEMM {n}^3 fp16 on {kind} inputs, every kernel timed by the same timer (CUDA events "
              f"around single launches, the kernels in turn, median of {repeats}; 2 input sets), {rounds} rounds "
              f"(TFLOP/s; ratios are NVIDIA's or torch's time over ours):")
        ours = list(HOPPER_OURS)
        header = [f"{name:>9}" for name in names]
        header += [f"{f'{mine}/{other}':>17}" for mine in ours for other in ("NVIDIA", "torch")]
        header.append(f"{'NVIDIA/torch':>13}")
        print(f"{'round':>5} " + " ".join(header))
        ratios = {(mine, other): [] for mine in ours for other in ("NVIDIA", "torch")}
        ratios[("NVIDIA", "torch")] = []
        for number in range(1, rounds + 1):
            ms = dict(zip(names, interleaved_ms(kernels, repeats)))
            for mine, other in ratios:
                ratios[(mine, other)].append(ms[other] / ms[mine])
            cells = [f"{flops / ms[name] / 1e9:9.1f}" for name in names]
            cells += [f"{ratios[key][-1]:{17 if key[0] != 'NVIDIA' else 13}.3f}" for key in ratios]
            print(f"{number:>5} " + " ".join(cells), flush=True)
        for (mine, other), values in ratios.items():
            print(f"  {mine}/{other}: {min(values):.3f}-{max(values):.3f}, mean {sum(values) / len(values):.3f}")
        del sets, views, kernels
        torch.cuda.empty_cache()


if __name__ == "__main__":
    sys.exit(main())
