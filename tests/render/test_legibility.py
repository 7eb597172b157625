"""Every picture stays legible in a light and in a dark JupyterLab theme, and saves as PNG and SVG.

A dark theme shows a figure on a dark page unless the figure paints its own opaque background, and a label
is legible only with enough contrast against its own cell: both are read back from the drawn artists."""
import xml.etree.ElementTree as ElementTree

import numpy
import pytest
from PIL import Image

from cutekit import cute, render
from cutekit.cute import nvgpu
from cutekit.render import grid

from .drawn import cell_colours, contrast_ratio, label_colours

WCAG_NORMAL_TEXT = 4.5


def pictures():
    """Every renderer, with its highlight on where it has one (greyed cells, muted and conflict labels)."""
    tv_tiler, tv = cute.make_layout_tv(cute.make_ordered_layout((2, 4), order=(1, 0)), cute.make_layout((2, 2)))
    op = nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 8))
    atom = cute.make_copy_atom(nvgpu.CopyUniversalOp(), cute.Float32, num_bits_per_copy=32)
    copy = cute.make_tiled_copy_tv(atom, cute.make_layout((4, 8), stride=(8, 1)), cute.make_layout(1))
    # rows of (4,32):(1,4) each read 8 banks four words deep: conflicts, so the dark red labels are drawn
    conflicting = cute.make_layout((4, 32), stride=(1, 4))
    return {
        "layout": lambda: render.layout(cute.make_layout((4, 8)), highlight=(1, 2)),
        "layout 128x128": lambda: render.layout(cute.make_layout((128, 128), stride=(128, 1))),
        "layout_inverse": lambda: render.layout_inverse(cute.make_layout(4, stride=2)),
        "tv_layout": lambda: render.tv_layout(tv, tv_tiler, highlight=1),
        "divide": lambda: render.divide(cute.make_layout((8, 12), stride=(12, 1)), (2, 4), tile=3),
        "local_tile": lambda: render.local_tile((8, 8), (4, 4), (0, 1)),
        "local_partition": lambda: render.local_partition((8, 8), cute.make_layout((2, 2)), 0),
        "tiled_copy": lambda: render.tiled_copy(copy, highlight=3),
        "copy_partition": lambda: render.copy_partition(copy, (8, 16), 3),
        "tiled_mma": lambda: render.tiled_mma(cute.make_tiled_mma(op), highlight=5),
        "ldmatrix": lambda: render.ldmatrix(4, lane=9),
        "swizzle": lambda: render.swizzle(cute.make_swizzle(3, 0, 3), conflicting, highlight_row=1),
    }


def labelled_axes(figure):
    return [ax for ax in figure.axes if label_colours(ax)]


@pytest.mark.parametrize("name", sorted(pictures()))
def test_every_picture_paints_an_opaque_light_background(name):
    figure = pictures()[name]()
    face = numpy.asarray(figure.get_facecolor())
    assert face[3] == 1.0 and contrast_ratio(face, "black") >= 15      # opaque, and near white
    for ax in figure.axes:
        assert not ax.axison or ax.get_facecolor()[3] == 1.0


@pytest.mark.parametrize("name", sorted(set(pictures()) - {"layout 128x128"}))
def test_every_cell_label_has_enough_contrast_against_its_own_cell(name):
    figure = pictures()[name]()
    assert labelled_axes(figure), "the picture draws labels"
    for ax in labelled_axes(figure):
        fills = cell_colours(ax)
        for cell, text_colour in label_colours(ax).items():
            ratio = contrast_ratio(text_colour, fills[cell])
            assert ratio >= WCAG_NORMAL_TEXT, f"{name}: label at {cell} has contrast {ratio:.2f}"


def test_the_label_colours_checked_include_the_muted_and_the_conflict_colours():
    drawn = {tuple(colour) for make in pictures().values() for ax in labelled_axes(make())
             for colour in label_colours(ax).values()}
    for name in (grid.TEXT, grid.MUTED_TEXT, grid.CONFLICT_TEXT):
        assert tuple(grid.to_rgba(name)) in drawn, name


@pytest.mark.parametrize("name", sorted(pictures()))
def test_every_picture_saves_as_png_and_as_svg(name, tmp_path):
    figure = pictures()[name]()
    png, svg = tmp_path / f"{name}.png", tmp_path / f"{name}.svg"
    figure.savefig(png)
    figure.savefig(svg)
    with Image.open(png) as image:
        assert image.format == "PNG" and image.size[0] > 100 and image.size[1] > 100
    root = ElementTree.parse(svg).getroot()
    assert root.tag.endswith("svg") and svg.stat().st_size > 1000


def seed_tv_with_its_widest_title():
    """The seed's 4x6 TV layout, the picture where the title is widest for the grid: 4 threads, 6 values."""
    return render.tv_layout(cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4))), (4, 6), highlight=3)


@pytest.mark.parametrize("name", sorted(pictures()) + ["seed tv_layout"])
def test_every_title_fits_inside_its_figure(name):
    figure = seed_tv_with_its_widest_title() if name == "seed tv_layout" else pictures()[name]()
    renderer = figure.canvas.get_renderer()
    figure.canvas.draw()
    width, height = figure.bbox.width, figure.bbox.height
    titles = [t for ax in figure.axes for t in (ax.title, ax._left_title, ax._right_title) if t.get_text()]
    titles += [figure._suptitle] if figure._suptitle is not None else []
    assert titles, "the picture has a title"
    for title in titles:
        box = title.get_window_extent(renderer)
        assert box.x0 >= -0.5 and box.x1 <= width + 0.5 and box.y1 <= height + 0.5, \
            f"{title.get_text()!r} runs outside the {width:.0f}x{height:.0f} px figure: {box}"


# ---- cell and label size: every picture the course draws --------------------------------------------------

def course_pictures():
    """{notebook line and call: make figures} for every picture and explorer call in the course and solution
    notebooks (read from them: tests/widgets/notebook_calls.py), one per distinct call, and a 4x128 TV layout
    (chapter 05's copy tile) drawn directly."""
    from tests.widgets.notebook_calls import notebook_calls

    made = {}
    for call in notebook_calls("render", "widgets"):
        made.setdefault((call.text, call.setup), call)
    pictures = {call.name: (lambda call=call: _figures(call.make())) for call in made.values()}
    copy_tiler, copy_tv = cute.make_layout_tv(cute.make_ordered_layout((4, 32), order=(1, 0)),
                                              cute.make_layout((1, 4)))
    pictures["tv_layout of a 4x128 tile"] = lambda: [render.tv_layout(copy_tv, copy_tiler, highlight=33)]
    return pictures


def _figures(made):
    return list(made.figures) if hasattr(made, "figures") else [made]


def cell_pixels(ax) -> float:
    """The side of one cell on `ax`, in pixels at grid.LEGIBLE_DPI."""
    ax.apply_aspect()
    (x0, y0), (x1, y1) = ax.transData.transform([(0, 0), (1, 1)])
    return min(abs(x1 - x0), abs(y1 - y0)) * grid.LEGIBLE_DPI / ax.figure.dpi


@pytest.mark.parametrize("name", sorted(course_pictures()), ids=lambda name: name.split(" ")[0])
def test_every_picture_the_course_draws_has_cells_and_labels_large_enough_to_read(name):
    """The rule (cutekit/render/grid.py): cells of at least MIN_CELL_PIXELS px and labels of at least
    MIN_LABEL_POINTS pt at LEGIBLE_DPI (the explorers' PNG), every label inside its cell."""
    for figure in course_pictures()[name]():
        grids = [ax for ax in figure.axes if grid.artist(ax, "cells") is not None]
        assert grids, f"{name}: no grid drawn"
        for ax in grids:
            pixels = cell_pixels(ax)
            assert pixels >= grid.MIN_CELL_PIXELS, f"{name}: cells of {pixels:.1f} px"
            labels = grid.artist(ax, "labels")
            assert labels is not None and labels.texts, f"{name}: cells without labels ({pixels:.1f} px)"
            assert labels.fontsize >= grid.MIN_LABEL_POINTS, f"{name}: labels of {labels.fontsize:.1f} pt"
            cell_points = pixels * 72 / grid.LEGIBLE_DPI
            # the glyph outlines' vertices (control points included: a bound from above), in points
            spans = [numpy.ptp(path.vertices, axis=0) for path in {id(p): p for p in labels.get_paths()}.values()
                     if len(path.vertices)]
            widest, tallest = numpy.max(spans, axis=0)
            assert max(widest, tallest) <= cell_points, f"{name}: a label of {widest:.1f} x {tallest:.1f} pt " \
                f"in a cell of {cell_points:.1f} pt"


def test_a_4x128_tv_layout_is_wrapped_into_bands_that_keep_every_label():
    tiler, tv = cute.make_layout_tv(cute.make_ordered_layout((4, 32), order=(1, 0)), cute.make_layout((1, 4)))
    figure = render.tv_layout(tv, tiler, highlight=33)
    bands = [ax for ax in figure.axes if grid.artist(ax, "cells") is not None]
    assert [ax.get_gid() for ax in bands] == ["columns 0-31", "columns 32-63", "columns 64-95", "columns 96-127"]
    assert sum(len(grid.labels_of(ax)) for ax in bands) == 512
    assert grid.labels_of(bands[0])[(1, 4)] == "T33\nV0"        # thread 33's first value: row 1, column 4
    assert [t.get_text() for t in bands[1].get_xticklabels()][0] == "32"
    assert "thread 33 holds 4 values" in bands[0].get_title()
