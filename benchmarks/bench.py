"""`make bench`: time the course's CuTeDSL kernels against torch on this GPU.

For each kernel: check it against torch once, then time it and torch's own op in the same process with
CUDA events (warm-up first, median of many single launches), rotating among several input sets so that
repeated runs do not read their inputs from L2. Prints a table and writes results/bench.csv and
results/bench.png (results/ is git-ignored; copy the numbers you keep into benchmarks/RESULTS.md).

    python benchmarks/bench.py                 # every kernel, full sizes
    python benchmarks/bench.py --only add,reduce --repeats 50
"""
from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    from tqdm import tqdm
except ImportError:     # the bar is a convenience; the numbers do not depend on it
    def tqdm(iterable, **_):
        return iterable


@dataclass
class Row:
    kernel: str
    shape: str
    dtype: str
    ms: float
    torch_ms: float
    amount: float          # bytes moved or flops done by one launch
    unit: str              # "GB/s" or "TFLOP/s"

    @property
    def rate(self):
        return self.amount / (self.ms * 1e-3) / (1e9 if self.unit == "GB/s" else 1e12)

    @property
    def torch_rate(self):
        return self.amount / (self.torch_ms * 1e-3) / (1e9 if self.unit == "GB/s" else 1e12)

    @property
    def ratio(self):
        return self.torch_ms / self.ms


def median_ms(launches, repeats, warmup=5):
    """Median time of one launch, cycling through `launches` (one per input set) so L2 stays cold-ish."""
    import torch
    for i in range(warmup):
        launches[i % len(launches)]()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    for i in range(repeats):
        starts[i].record()
        launches[i % len(launches)]()
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def interleaved_ms(kernels, repeats, warmup=2):
    """Median time of one launch for each of several kernels timed in turn: kernel 0, 1, ..., 0, 1, ...
    `kernels` is a list of launch lists (one launch per input set, as in `median_ms`). The GPU's clock drifts
    with its power and temperature over a run; launched in turn, every kernel sees the same drift, where
    timing one kernel after the other gives each its own stretch of it. The input set cycles with every
    launch, so consecutive launches do not share their inputs in L2."""
    import torch
    count = 0
    for _ in range(warmup):
        for launches in kernels:
            launches[count % len(launches)]()
            count += 1
    torch.cuda.synchronize()
    events = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(repeats)]
              for _ in kernels]
    for i in range(repeats):
        for j, launches in enumerate(kernels):
            events[j][i][0].record()
            launches[count % len(launches)]()
            events[j][i][1].record()
            count += 1
    torch.cuda.synchronize()
    return [statistics.median(start.elapsed_time(end) for start, end in pairs) for pairs in events]


def batched_ms(launches, repeats, batch=20, warmup=5):
    """Median time per launch when `batch` launches share one event pair: shows whether the host's launch
    overhead leaked into the single-launch numbers (it should not, when the GPU queue stays full)."""
    import torch
    for i in range(warmup):
        launches[i % len(launches)]()
    torch.cuda.synchronize()
    times = []
    for _ in range(max(1, repeats // batch)):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for i in range(batch):
            launches[i % len(launches)]()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / batch)
    return statistics.median(times)


def sets_for(bytes_per_set, l2_bytes=50 * 2**20):
    """Enough input sets that consecutive launches never find their inputs in L2 (at least 2)."""
    return max(2, -(-3 * l2_bytes // bytes_per_set))


def bench_add(repeats):
    import torch
    from benchmarks.kernels import elementwise_add
    rows = []
    M = N = 8192
    for dtype in (torch.float16, torch.float32):
        bytes_ = 3 * M * N * torch.tensor([], dtype=dtype).element_size()
        sets = [[torch.randn(M, N, device="cuda", dtype=dtype) for _ in range(3)] for _ in range(sets_for(bytes_))]
        a, b, c = sets[0]
        elementwise_add.prepare(a, b, c)()
        torch.testing.assert_close(c, a + b, rtol=0, atol=0)
        torch_ms = median_ms([lambda s=s: torch.add(s[0], s[1], out=s[2]) for s in sets], repeats)
        for threads_along_row in (32, 256):
            for rows_per_thread in (1, 4):
                launches = [elementwise_add.prepare(*s, rows_per_thread=rows_per_thread,
                                                    threads_along_row=threads_along_row) for s in sets]
                ms = median_ms(launches, repeats)
                rows.append(Row(f"add {threads_along_row} thr/row, {rows_per_thread} rows/thr", f"{M}x{N}",
                                str(dtype).split(".")[1], ms, torch_ms, bytes_, "GB/s"))
        ms = batched_ms([elementwise_add.prepare(*s) for s in sets], repeats)
        torch_batched = batched_ms([lambda s=s: torch.add(s[0], s[1], out=s[2]) for s in sets], repeats)
        rows.append(Row(f"add {elementwise_add.THREADS_ALONG_ROW} thr/row, {elementwise_add.ROWS_PER_THREAD} rows/thr (batched x20)", f"{M}x{N}", str(dtype).split(".")[1], ms,
                        torch_batched, bytes_, "GB/s"))
        del sets
    return rows


def bench_reduce(repeats):
    import torch
    from benchmarks.kernels import reduce_sum
    rows = []
    for M, N in ((16384, 16384), (4096, 65536), (65536, 1024)):
        bytes_ = M * N * 4 + M * 4
        sets = [(torch.randn(M, N, device="cuda"), torch.empty(M, device="cuda")) for _ in range(sets_for(bytes_))]
        torch_ms = median_ms([lambda s=s: torch.sum(s[0], dim=1, out=s[1]) for s in sets], repeats)
        for variant in ("cuda_style", "composition", "tiled_copy"):
            x, out = sets[0]
            reduce_sum.prepare(x, out, variant)()
            torch.testing.assert_close(out, x.sum(dim=1), rtol=1e-4, atol=1e-3)
            ms = median_ms([reduce_sum.prepare(x, out, variant) for x, out in sets], repeats)
            rows.append(Row(f"sum rows {variant}", f"{M}x{N}", "float32", ms, torch_ms, bytes_, "GB/s"))
        del sets
    shape, dim = (64, 4096, 1024), 1
    bytes_ = 64 * 4096 * 1024 * 4 + 64 * 1024 * 4
    sets = [(torch.randn(shape, device="cuda"), torch.empty(64, 1024, device="cuda")) for _ in range(sets_for(bytes_))]
    x, out = sets[0]
    reduce_sum.prepare_any_dim(x, dim, out)()
    torch.testing.assert_close(out, x.sum(dim=dim), rtol=1e-4, atol=1e-3)
    torch_ms = median_ms([lambda s=s: torch.sum(s[0], dim=dim, out=s[1]) for s in sets], repeats)
    ms = median_ms([reduce_sum.prepare_any_dim(x, dim, out) for x, out in sets], repeats)
    rows.append(Row("sum any_dim (dim=1)", "x".join(map(str, shape)), "float32", ms, torch_ms, bytes_, "GB/s"))
    return rows


def bench_gemm_tensorcore(repeats, size=8192):
    """The teaching configuration (chapter 07: 128x128 tile, 2x2 warps) and the fastest measured one
    (gemm_tensorcore.FAST: 256x128 tile, 4x2 warps), each against torch.matmul timed right after it."""
    import torch
    from benchmarks.kernels import gemm_tensorcore
    M = N = K = size
    sets = [(torch.randn(M, K, device="cuda", dtype=torch.float16), torch.randn(N, K, device="cuda", dtype=torch.float16),
             torch.empty(M, N, device="cuda", dtype=torch.float16)) for _ in range(2)]
    a, b, c = sets[0]
    reference = torch.matmul(a, b.T).float()
    rows = []
    for label, knobs in (("128x128 tile, 2x2 warps", {}), ("256x128 tile, 4x2 warps", gemm_tensorcore.FAST)):
        c.zero_()
        gemm_tensorcore.prepare(a, b, c, **knobs)()
        error = float((c.float() - reference).norm() / reference.norm())
        assert error < 2e-3, f"tensor-core GEMM ({label}) relative error {error}"
        ms = median_ms([gemm_tensorcore.prepare(*s, **knobs) for s in sets], repeats)
        torch_ms = median_ms([lambda s=s: torch.matmul(s[0], s[1].T, out=s[2]) for s in sets], repeats)
        rows.append(Row(f"gemm tensorcore TN (mma.sync), {label}", f"{M}x{N}x{K}", "float16", ms, torch_ms,
                        2 * M * N * K, "TFLOP/s"))
    return rows


def bench_gemm_hopper(repeats, size=8192):
    """The Hopper GEMM (TMA, mbarrier pipeline, wgmma; sm_90 only) against torch.matmul timed right after it."""
    import torch
    from benchmarks.kernels import hopper_gemm
    if torch.cuda.get_device_capability() != (9, 0):
        print(f"bench: hopper skipped: {torch.cuda.get_device_name()} is not sm_90", file=sys.stderr)
        return []
    M = N = K = size
    sets = [(torch.randn(M, K, device="cuda", dtype=torch.float16),
             torch.randn(N, K, device="cuda", dtype=torch.float16),
             torch.empty(M, N, device="cuda", dtype=torch.float16)) for _ in range(2)]
    a, b, c = sets[0]
    reference = torch.matmul(a, b.T).float()
    c.fill_(float("nan"))
    hopper_gemm.prepare(a, b, c)()
    error = float((c.float() - reference).norm() / reference.norm())
    assert error < 2e-3, f"Hopper GEMM relative error {error}"
    ms = median_ms([hopper_gemm.prepare(*s) for s in sets], repeats)
    torch_ms = median_ms([lambda s=s: torch.matmul(s[0], s[1].T, out=s[2]) for s in sets], repeats)
    return [Row(f"gemm Hopper TN (TMA + wgmma), {hopper_gemm.BM}x{hopper_gemm.BN} tile", f"{M}x{N}x{K}", "float16",
                ms, torch_ms, 2 * M * N * K, "TFLOP/s")]


def bench_sgemm(repeats, size=8192):
    import torch
    from benchmarks.kernels import sgemm_simt
    torch.backends.cuda.matmul.allow_tf32 = False       # compare FFMA with FFMA
    M = N = K = size
    sets = [(torch.randn(K, M, device="cuda"), torch.randn(K, N, device="cuda"), torch.empty(M, N, device="cuda"))
            for _ in range(2)]
    a_t, b, c = sets[0]
    sgemm_simt.prepare(a_t, b, c)()
    reference = a_t.double().T[:256] @ b.double()
    error = float((c[:256].double() - reference).norm() / reference.norm())
    assert error < 1e-5, f"SIMT sgemm relative error {error}"
    torch_ms = median_ms([lambda s=s: torch.matmul(s[0].T, s[1], out=s[2]) for s in sets], repeats)
    ms = median_ms([sgemm_simt.prepare(*s) for s in sets], repeats)
    return [Row("sgemm SIMT (FFMA, tf32 off)", f"{M}x{N}x{K}", "float32", ms, torch_ms, 2 * M * N * K, "TFLOP/s")]


BENCHES = {"add": bench_add, "reduce": bench_reduce, "gemm": bench_gemm_tensorcore, "hopper": bench_gemm_hopper,
           "sgemm": bench_sgemm}


def print_table(rows):
    header = f"{'kernel':32} {'shape':18} {'dtype':8} {'ms':>8} {'rate':>15} {'torch ms':>9} {'torch rate':>15} {'ratio':>6}"
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r.kernel:32} {r.shape:18} {r.dtype:8} {r.ms:8.4f} {r.rate:9.1f} {r.unit:5} {r.torch_ms:9.4f} "
              f"{r.torch_rate:9.1f} {r.unit:5} {r.ratio:6.3f}")


def write_outputs(rows, folder):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "bench.csv"), "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["kernel", "shape", "dtype", "ms", "rate", "unit", "torch_ms", "torch_rate", "ratio"])
        for r in rows:
            writer.writerow([r.kernel, r.shape, r.dtype, f"{r.ms:.5f}", f"{r.rate:.2f}", r.unit,
                             f"{r.torch_ms:.5f}", f"{r.torch_rate:.2f}", f"{r.ratio:.4f}"])
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    figure, axis = plt.subplots(figsize=(10, 0.6 * len(rows) + 1.5))
    labels = [f"{r.kernel}\n{r.shape} {r.dtype}" for r in rows]
    bars = axis.barh(labels, [r.ratio for r in rows],
                     color=["tab:green" if r.ratio >= 0.9 else "tab:orange" for r in rows])
    axis.bar_label(bars, labels=[f"{r.ratio:.3f}  ({r.rate:.0f} {r.unit})" for r in rows], padding=3, fontsize=8)
    axis.axvline(1.0, color="black", linewidth=1)
    axis.set_xlim(0, max(1.35, max(r.ratio for r in rows) * 1.3))
    axis.set_xlabel("torch time / kernel time (same process; 1.0 = as fast as torch)")
    axis.tick_params(axis="y", labelsize=8)
    axis.invert_yaxis()
    figure.tight_layout()
    figure.savefig(os.path.join(folder, "bench.png"), dpi=120, bbox_inches="tight")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(BENCHES), help="comma-separated subset of " + ",".join(BENCHES))
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--out", default="results")
    args = parser.parse_args(argv)
    names = [name for name in args.only.split(",") if name]
    unknown = [name for name in names if name not in BENCHES]
    if unknown or not names:
        parser.error(f"--only: unknown kernel {', '.join(map(repr, unknown)) or '(none given)'}; "
                     f"choose from {', '.join(BENCHES)}")
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    import torch
    if not torch.cuda.is_available():
        print("bench: torch sees no CUDA device; the benchmarks need an sm_80+ GPU", file=sys.stderr)
        return 2
    import cutlass
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, CuTeDSL {cutlass.__version__}")
    rows = []
    failed = []
    for name in tqdm(names, desc="bench"):
        try:
            rows += BENCHES[name](args.repeats)
        except Exception:   # one broken kernel should not hide the others' numbers
            import traceback
            traceback.print_exc()
            failed.append(name)
    print_table(rows)
    write_outputs(rows, args.out)
    if failed:
        print("bench: failed: " + ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
