"""A roofline picture of GEMM measurements: achieved TFLOP/s against arithmetic intensity (flops per byte of
A, B and C moved once), under the device's memory roof and compute ceilings. Chapter 07 draws its GPU
measurements with it; `figure(rows, device)` takes bench.py's rows.

Ceilings are the vendor's dense peaks (no sparsity) for the GPUs the course is measured on; for another
device the picture has the points and no ceilings, and says so.
"""
from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

# memory GB/s; compute ceilings in TFLOP/s (dense)
PEAKS = {
    "H100": (3350, {"fp16 tensor cores": 989.4, "fp32 CUDA cores": 66.9}),
    "H200": (4800, {"fp16 tensor cores": 989.4, "fp32 CUDA cores": 66.9}),
    "A100": (2039, {"fp16 tensor cores": 312.0, "fp32 CUDA cores": 19.5}),
}
BYTES = {"float16": 2, "bfloat16": 2, "float32": 4}


def gemm_intensity(shape: str, dtype: str) -> float:
    """Flops per byte of a GEMM "MxNxK" that reads A and B and writes C once: 2MNK / ((MK + NK + MN) * bytes)."""
    try:
        m, n, k = (int(part) for part in shape.split("x"))
    except ValueError:
        raise ValueError(f"gemm_intensity: shape {shape!r} is not like 4096x4096x4096") from None
    if dtype not in BYTES:
        raise ValueError(f"gemm_intensity: dtype {dtype!r} is not one of {', '.join(BYTES)}")
    return 2 * m * n * k / ((m * k + n * k + m * n) * BYTES[dtype])


def peaks_for(device: str):
    """(memory GB/s, {ceiling: TFLOP/s}) of a known device (by name), or None."""
    return next((peaks for name, peaks in PEAKS.items() if name in device), None)


def figure(rows, device: str) -> Figure:
    """Each row's kernel and torch as points (TFLOP/s over intensity), under `device`'s roof and ceilings."""
    rows = [row for row in rows if row.unit == "TFLOP/s"]
    if not rows:
        raise ValueError("roofline.figure: no GEMM rows (unit TFLOP/s) to draw")
    picture = Figure(figsize=(7.5, 4.5), facecolor="white", layout="constrained")
    FigureCanvasAgg(picture)
    axes = picture.add_subplot()
    intensities = [gemm_intensity(row.shape, row.dtype) for row in rows]
    for kernel in dict.fromkeys(row.kernel for row in rows):
        mine = [(x, row) for x, row in zip(intensities, rows) if row.kernel == kernel]
        axes.plot([x for x, _ in mine], [row.rate for _, row in mine], "o-", label=kernel)
        axes.plot([x for x, _ in mine], [row.torch_rate for _, row in mine], "x--",
                  label=f"torch.matmul, {mine[0][1].dtype}")
    low, high = min(intensities) / 4, max(intensities) * 4
    peaks = peaks_for(device)
    if peaks:
        bandwidth, ceilings = peaks
        for name, tflops in ceilings.items():
            knee = tflops * 1e3 / bandwidth                      # where the memory roof meets this ceiling
            axes.plot([knee, high], [tflops, tflops], color="grey", linewidth=1)
            axes.plot([low, knee], [low * bandwidth / 1e3, tflops], color="grey", linewidth=1, linestyle=":")
            axes.annotate(f"{name}: {tflops:g} TFLOP/s", (high, tflops), ha="right", va="bottom", fontsize=7,
                          color="dimgrey")
        axes.set_title(f"GEMM roofline on {device} (memory {bandwidth} GB/s)", fontsize=9)
    else:
        axes.set_title(f"GEMM measurements on {device} (no ceilings known for this device)", fontsize=9)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlim(low, high)
    axes.set_xlabel("arithmetic intensity (flops per byte of A, B, C)")
    axes.set_ylabel("TFLOP/s")
    axes.legend(fontsize=7, loc="center right")
    return picture
