"""How long pictures and slider redraws take (Python time, this machine): `python -m benchmarks.bench_render`.

Targets (the course's redraw budget): a figure for a tile up to 128x128 in under 1 s (build + PNG); a slider move under 100 ms
of Python time, from the slider's value change to the widget's new PNG (`Explorer.last_redraw_seconds`).
Prints the median of a few runs for each, each move's time, and whether the median is under 100 ms.
`--at-limit`: instead, each picture at the size limit (render.MAX_CELLS), the times cutekit/render/limits.py quotes."""
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


def at_the_limit():
    """Every picture at or just under render.MAX_CELLS: the times cutekit/render/limits.py quotes."""
    atom = cute.make_copy_atom(nvgpu.CopyUniversalOp(), cute.Float32, num_bits_per_copy=32)
    many_threads = cute.make_tiled_copy_tv(atom, cute.make_layout((256, 256), stride=(256, 1)),
                                           cute.make_layout(1))
    wide_copy = cute.make_tiled_copy_tv(atom, cute.make_layout((32, 8), stride=(8, 1)), cute.make_layout((4, 32)))
    tiler, tv = cute.make_layout_tv(cute.make_ordered_layout((256, 256), order=(1, 0)), cute.make_layout(1))
    cases = {
        "layout 256x256": lambda: render.layout(cute.make_layout((256, 256), stride=(256, 1))),
        "layout 1x65536": lambda: render.layout(cute.make_layout(65536)),
        "layout_inverse of 65536 indices": lambda: render.layout_inverse(cute.make_layout((256, 256))),
        "tv_layout 256x256 (65536 threads)": lambda: render.tv_layout(tv, tiler, highlight=3),
        "divide 104x208 by (8,16) (3 x 21632 cells)": lambda: render.divide(cute.make_layout((104, 208)),
                                                                             (8, 16), tile=3),
        "local_tile 256x256 in 1x1 tiles": lambda: render.local_tile((256, 256), (1, 1), (3, 4)),
        "local_partition 256x256, 65536 threads": lambda: render.local_partition(
            (256, 256), cute.make_layout((256, 256)), 3),
        "copy_partition 256x256, 65536 threads": lambda: render.copy_partition(many_threads, (256, 256), 3),
        "tiled_copy 128x256 (two panels)": lambda: render.tiled_copy(wide_copy, highlight=3),
        "swizzle 128x256 (two panels)": lambda: render.swizzle(cute.make_swizzle(3, 3, 3),
                                                                 cute.make_layout((128, 256)), highlight_row=1),
    }
    for name, make in cases.items():
        start = time.perf_counter()
        render.png_bytes(make())
        print(f"{name:45s} {time.perf_counter() - start:.2f} s", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])      # --help; refuses unknown flags
    parser.add_argument("--at-limit", action="store_true", help="each picture at the size limit (MAX_CELLS)")
    if parser.parse_args().at_limit:
        at_the_limit()
    else:
        main()
