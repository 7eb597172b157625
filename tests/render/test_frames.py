"""Redrawing a picture with another highlight repaints the figure it was drawn in, and a frame (the PNG a widget
shows) is the same image as the whole figure drawn again."""
import io

import numpy
import pytest
from PIL import Image

from cutekit import cute, render
from cutekit.cute import nvgpu
from cutekit.render import frames

from .drawn import cell_colours, cell_labels, is_grey


def pixels(png: bytes) -> numpy.ndarray:
    with Image.open(io.BytesIO(png)) as image:
        return numpy.asarray(image.convert("RGB"))


def test_png_of_writes_a_png_any_reader_reads_back_pixel_for_pixel():
    rgb = numpy.random.default_rng(0).integers(0, 256, size=(7, 5, 3), dtype=numpy.uint8)
    assert numpy.array_equal(pixels(frames.png_of(rgb)), rgb)


def test_a_new_highlight_repaints_the_same_figure_and_axes():
    tv_tiler, tv = cute.make_layout_tv(cute.make_ordered_layout((2, 4), order=(1, 0)), cute.make_layout((2, 2)))
    figure = render.tv_layout(tv, tv_tiler, highlight=1)
    axes = list(figure.axes)
    again = render.tv_layout(tv, tv_tiler, highlight=6, figure=figure)
    assert again is figure and again.axes == axes
    ax = figure.axes[0]
    coloured = {cell for cell in cell_labels(ax) if not is_grey(cell_colours(ax)[cell])}
    assert coloured and all(cell_labels(ax)[cell].startswith("T6\n") for cell in coloured)
    assert "thread 6" in ax.get_title()


def test_another_layout_rebuilds_the_picture_in_the_same_figure():
    figure = render.layout(cute.make_layout((4, 8), stride=(8, 1)), highlight=(0, 0))
    old_axes = figure.axes[0]
    render.layout(cute.make_layout((2, 3), stride=(3, 1)), highlight=(1, 1), figure=figure)
    assert figure.axes[0] is not old_axes and cell_labels(figure.axes[0])[(1, 2)] == "5"


def repainted_pictures():
    op = nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 8))
    atom = cute.make_copy_atom(nvgpu.CopyUniversalOp(), cute.Float32, num_bits_per_copy=32)
    copy = cute.make_tiled_copy_tv(atom, cute.make_layout((4, 8), stride=(8, 1)), cute.make_layout(1))
    mma = cute.make_tiled_mma(op)
    return {
        "ldmatrix lane": lambda lane, figure=None: render.ldmatrix(4, lane=lane, figure=figure),
        "tiled_copy thread": lambda t, figure=None: render.tiled_copy(copy, highlight=t, figure=figure),
        "tiled_mma thread": lambda t, figure=None: render.tiled_mma(mma, highlight=t, figure=figure),
        "local_tile block": lambda k, figure=None: render.local_tile((8, 12), (4, 4), (k % 2, k), figure=figure),
    }


@pytest.mark.parametrize("name", sorted(repainted_pictures()))
def test_a_frame_after_repaints_is_the_whole_figure_drawn_again(name):
    draw = repainted_pictures()[name]
    figure = draw(0)
    frames.png_frame(figure)                        # keeps the background
    for highlight in (2, 1):
        draw(highlight, figure=figure)
        frame = frames.png_frame(figure)
    assert numpy.array_equal(pixels(frame), pixels(render.png_bytes(figure, dpi=90)))
