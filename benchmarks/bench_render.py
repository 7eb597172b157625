"""How long pictures and slider redraws take (Python time, this machine): `python -m benchmarks.bench_render`.

Targets (the course's redraw budget): a figure for a tile up to 128x128 in under 1 s (build + PNG); a slider move under 100 ms
of Python time, from the slider's value change to the widget's new PNG (`Explorer.last_redraw_seconds`).
Prints the median of a few runs for each, each move's time, and whether the median is under 100 ms."""
import argparse
import statistics
import time

from cutekit import cute, render, widgets
from cutekit.cute import nvgpu


def median_seconds(make, repeats=3):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        render.png_bytes(make())
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def pictures():
    op = nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
    tiler, tv = cute.make_layout_tv(cute.make_ordered_layout((32, 4), order=(1, 0)), cute.make_layout((4, 32)))
    return {
        "layout 8x8": lambda: render.layout(cute.make_layout((8, 8), stride=(8, 1))),
        "layout 32x32 (labels)": lambda: render.layout(cute.make_layout((32, 32), stride=(32, 1))),
        "layout 128x128": lambda: render.layout(cute.make_layout((128, 128), stride=(128, 1))),
        "layout_inverse 16x16": lambda: render.layout_inverse(cute.make_layout((16, 16), stride=(16, 1))),
        "tv_layout 128x128": lambda: render.tv_layout(tv, tiler, highlight=3),
        "divide 128x128 by 16x32": lambda: render.divide(cute.make_layout((128, 128), stride=(128, 1)), (16, 32), tile=5),
        "local_tile 128x128": lambda: render.local_tile((128, 128), (16, 32), (1, 1)),
        "local_partition 128x128": lambda: render.local_partition((128, 128), cute.make_layout((16, 8)), 3),
        "tiled_mma 2x2 m16n8k16": lambda: render.tiled_mma(cute.make_tiled_mma(op, (2, 2, 1)), highlight=5),
        "ldmatrix x4": lambda: render.ldmatrix(4, lane=5),
        "swizzle 32x32": lambda: render.swizzle(cute.make_swizzle(5, 0, 5), cute.make_layout((32, 32), stride=(1, 32))),
    }


def redraws():
    """(explorer, slider) pairs: each move is one slider value change -> figure repainted and PNG updated."""
    return {
        "layout_explorer row": (widgets.layout_explorer(shape=(8, 8), stride=(8, 1)), "row_slider"),
        "tv_explorer thread": (widgets.tv_explorer(), "thread_slider"),
        "divide_explorer tile": (widgets.divide_explorer(), "tile_slider"),
        "divide_explorer tile (128x128 / 16x32)": (widgets.divide_explorer(
            cute.make_layout((128, 128), stride=(128, 1)), (16, 32)), "tile_slider"),
        "partition_explorer block row": (widgets.partition_explorer(), "block_row_slider"),
        "partition_explorer thread": (widgets.partition_explorer(), "thread_slider"),
        "swizzle_explorer row": (widgets.swizzle_explorer(), "row_slider"),
        "swizzle_explorer B (bits)": (widgets.swizzle_explorer(), "bits_slider"),
        "mma_explorer thread": (widgets.mma_explorer(), "thread_slider"),
        "mma_explorer thread (2x2 atoms)": (widgets.mma_explorer(cute.make_tiled_mma(
            nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)), (2, 2, 1))), "thread_slider"),
    }


REDRAW_TARGET_MS = 100


def main():
    print(f"{'picture (build + PNG)':40s} median s")
    for name, make in pictures().items():
        print(f"{name:40s} {median_seconds(make):.3f}")
    print(f"\n{'slider redraw (value change -> PNG)':40s} median ms  (each move, ms)      under {REDRAW_TARGET_MS} ms")
    for name, (explorer, slider_name) in redraws().items():
        slider, times = getattr(explorer, slider_name), []
        for value in (1, 2, 3, 4, 5):
            before = explorer.redraw_count
            slider.value = min(value, slider.max)
            if explorer.redraw_count > before:
                times.append(explorer.last_redraw_seconds)
        median_ms = 1000 * statistics.median(times)
        each = " ".join(f"{1000 * t:.0f}" for t in times)
        print(f"{name:40s} {median_ms:9.0f}  ({each}){'':6s} {'yes' if median_ms < REDRAW_TARGET_MS else 'NO'}")
    explorer = widgets.divide_explorer()
    explorer.tiler_text.value = "(4, 4)"
    print(f"\n{'rebuild: divide_explorer tiler retyped':40s} {1000 * explorer.last_redraw_seconds:9.0f} ms "
          "(a new picture, not a slider move)")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()   # --help; refuses unknown flags
    main()
