"""The explorers, driven from Python as a notebook user drives them: move a slider or type in a field, and
the picture (and its figure) changes; bad input shows the reference algebra's message, not a traceback."""
import doctest
import io

import ipywidgets
import numpy
import pytest
from PIL import Image

from cutekit import cute, render, widgets
from cutekit.render import grid

from tests.render.drawn import (axes_named, cell_colours, cell_labels, is_grey, label_colours, outlined_cells,
                                same_colour)


def test_parse_int_tuple_doctests_hold():
    assert doctest.testmod(widgets).failed == 0


def test_every_explorer_is_a_vbox_showing_a_png_picture():
    for explorer in (widgets.layout_explorer(), widgets.tv_explorer(), widgets.divide_explorer(),
                     widgets.partition_explorer(), widgets.swizzle_explorer(), widgets.mma_explorer()):
        assert isinstance(explorer, ipywidgets.VBox)
        assert bytes(explorer.image.value).startswith(b"\x89PNG") and explorer.image in explorer.children
        assert explorer.error.value == ""


def test_layout_explorer_redraws_when_the_stride_is_retyped():
    explorer = widgets.layout_explorer(shape=(4, 8), stride=(8, 1))
    before = explorer.image.value
    assert cell_labels(explorer.figure.axes[0])[(1, 2)] == "10"
    explorer.stride_text.value = "(1, 4)"
    assert cell_labels(explorer.figure.axes[0])[(1, 2)] == "9"
    assert explorer.image.value != before and str(explorer.current_layout) == "(4,8):(1,4)"


def test_layout_explorer_sliders_pick_the_cell_and_spell_out_its_offset():
    explorer = widgets.layout_explorer(shape=(4, 8), stride=(8, 1))
    explorer.row_slider.value, explorer.column_slider.value = 3, 5
    assert outlined_cells(explorer.figure.axes[0]) == {(3, 5)}
    assert "offset <b>29</b>" in explorer.caption.value


def test_layout_explorer_slider_ranges_follow_the_shape():
    explorer = widgets.layout_explorer(shape=(4, 8))
    explorer.shape_text.value = "(2, (2, 3))"
    assert (explorer.row_slider.max, explorer.column_slider.max) == (1, 5)


@pytest.mark.parametrize("field, text, message", [
    ("stride_text", "(8,", "could not read '(8,'"),
    ("stride_text", "(8, 1, 1)", "not congruent"),
    ("shape_text", "(4, 0)", "positive int"),
    ("shape_text", "four", "could not read 'four'"),
])
def test_bad_input_shows_the_error_message_in_the_widget_and_keeps_the_last_picture(field, text, message):
    explorer = widgets.layout_explorer(shape=(4, 8), stride=(8, 1))
    picture = explorer.image.value
    setattr(getattr(explorer, field), "value", text)
    assert message in explorer.error.value and "Traceback" not in explorer.error.value
    assert explorer.image.value == picture
    getattr(explorer, field).value = "(8, 1)" if field == "stride_text" else "(4, 8)"
    assert explorer.error.value == ""


def test_tv_explorer_thread_slider_keeps_only_that_threads_cells_coloured():
    explorer = widgets.tv_explorer()
    explorer.thread_slider.value = 9
    ax = explorer.figure.axes[0]
    coloured = {cell for cell in cell_labels(ax) if not is_grey(cell_colours(ax)[cell])}
    assert coloured and all(cell_labels(ax)[cell].startswith("T9\n") for cell in coloured)
    assert len(coloured) == 4 and "holds 4 values" in explorer.caption.value


def test_divide_explorer_tile_slider_moves_the_highlighted_tile():
    explorer = widgets.divide_explorer(cute.make_layout((8, 12), stride=(12, 1)), (2, 4))
    assert explorer.tile_slider.max == 11
    explorer.tile_slider.value = 5
    source = axes_named(explorer.figure, "source")
    assert {c for c in numpy.ndindex(8, 12) if not is_grey(cell_colours(source)[c])} == \
        {(r, c) for r in (2, 3) for c in range(4, 8)}
    explorer.tiler_text.value = "(4, 4)"
    assert explorer.tile_slider.max == 5 and explorer.error.value == ""
    explorer.tiler_text.value = "(4, x)"
    assert "could not read" in explorer.error.value


def test_partition_explorer_block_and_thread_sliders_change_both_pictures():
    explorer = widgets.partition_explorer(shape=(16, 16), tiler=(8, 8), thr_layout=cute.make_layout((2, 4)))
    explorer.block_row_slider.value, explorer.block_column_slider.value = 1, 1
    assert outlined_cells(explorer.figures[0].axes[0]) == {(r, c) for r in range(8, 16) for c in range(8, 16)}
    explorer.thread_slider.value = 3
    inside = explorer.figures[1].axes[0]
    mine = {c for c in numpy.ndindex(8, 8) if not is_grey(cell_colours(inside)[c])}
    assert mine and all(cell_labels(inside)[c] == "T3" for c in mine)


def test_swizzle_explorer_counts_conflicts_and_keeps_every_slider_position_a_swizzle():
    explorer = widgets.swizzle_explorer(cute.make_layout((32, 32), stride=(1, 32)), element_bits=32,
                                        bits=5, base=0, shift=5)
    assert explorer.conflicts == (992, 0) and "<b>992</b> before, <b>0</b> after" in explorer.caption.value
    explorer.bits_slider.value = 0
    assert explorer.conflicts == (992, 992)
    explorer.shift_slider.value = 0
    # B = 3 with S = 0 would overlap the bit fields (make_swizzle refuses it): S moves out to 3
    explorer.bits_slider.value = 3
    assert explorer.error.value == "" and explorer.shift_slider.value == 3
    assert "S moved to 3" in explorer.caption.value and explorer.caption.value.startswith("S<3,0,3>")
    explorer.shift_slider.value = -1           # S inside B: B comes down to |S|, the sign of S is kept
    assert (explorer.bits_slider.value, explorer.error.value) == (1, "")
    assert "B lowered to 1" in explorer.caption.value and explorer.caption.value.startswith("S<1,0,-1>")
    explorer.base_slider.value = 2             # a move that needs nothing else says nothing about it
    assert "moved" not in explorer.caption.value and "lowered" not in explorer.caption.value
    with pytest.raises(cute.CuteError, match=r"\|s\| must be at least b"):
        cute.make_swizzle(3, 0, 0)             # the rule the sliders keep


def test_mma_explorer_thread_slider_highlights_the_thread_in_a_b_and_c():
    explorer = widgets.mma_explorer()
    explorer.thread_slider.value = 6
    for name in "AC":
        ax = next(a for a in explorer.figure.axes if a.get_gid() == name)
        coloured = {c for c in cell_labels(ax) if not is_grey(cell_colours(ax)[c])}
        assert coloured and all(cell_labels(ax)[c].startswith("T6\n") for c in coloured)


# ---- a slider move repaints the picture: what is highlighted after the move is what the algebra says ------

def coloured_cells(ax) -> set:
    colours = cell_colours(ax)
    return {cell for cell in numpy.ndindex(*colours.shape[:2]) if not is_grey(colours[cell])}


def identity_cells(piece) -> set:
    return {tuple(piece[i]) for i in range(cute.size(piece.layout))}


def test_layout_explorer_row_slider_moves_the_outline_off_the_old_cell():
    explorer = widgets.layout_explorer(shape=(8, 8), stride=(8, 1))
    explorer.row_slider.value, explorer.column_slider.value = 6, 2
    explorer.row_slider.value = 1
    assert outlined_cells(explorer.figure.axes[0]) == {(1, 2)}
    assert "offset <b>10</b>" in explorer.caption.value


def test_tv_explorer_thread_slider_move_colours_exactly_the_cells_the_tv_layout_gives_the_new_thread():
    thr, val = cute.make_ordered_layout((4, 8), order=(1, 0)), cute.make_layout((2, 2))
    (rows, _), tv = cute.make_layout_tv(thr, val)
    explorer = widgets.tv_explorer(thr, val)
    explorer.thread_slider.value = 9
    explorer.thread_slider.value = 22
    held = {(tv((22, v)) % rows, tv((22, v)) // rows) for v in range(4)}
    ax = explorer.figure.axes[0]
    assert coloured_cells(ax) == held
    assert all(same_colour(label_colours(ax)[cell], grid.to_rgba(grid.TEXT if cell in held else grid.MUTED_TEXT))
               for cell in cell_labels(ax))
    assert "thread 22 holds 4 values" in ax.get_title()


def test_divide_explorer_tile_slider_move_colours_that_tile_in_all_three_panels():
    layout, tiler = cute.make_layout((8, 12), stride=(12, 1)), (2, 4)
    explorer = widgets.divide_explorer(layout, tiler)
    explorer.tile_slider.value = 5
    explorer.tile_slider.value = 7
    tile = cute.zipped_divide(cute.make_identity_tensor((8, 12)), tiler)[((None, None), 7)]
    assert coloured_cells(axes_named(explorer.figure, "source")) == identity_cells(tile)
    # zipped_divide: column k is tile k; logical_divide: the same offsets, so the same labels are coloured
    assert coloured_cells(axes_named(explorer.figure, "zipped_divide")) == {(i, 7) for i in range(8)}
    logical = axes_named(explorer.figure, "logical_divide")
    tile_offsets = {str(layout(cell)) for cell in identity_cells(tile)}
    assert {cell_labels(logical)[cell] for cell in coloured_cells(logical)} == tile_offsets
    assert explorer.figure._suptitle.get_text().endswith("tile 7")


def test_partition_explorer_slider_moves_follow_local_tile_and_local_partition():
    shape, tiler, thr = (16, 16), (8, 8), cute.make_layout((2, 4))
    explorer = widgets.partition_explorer(shape=shape, tiler=tiler, thr_layout=thr)
    explorer.block_row_slider.value, explorer.block_column_slider.value = 1, 1
    explorer.block_row_slider.value = 0
    block = cute.local_tile(cute.make_identity_tensor(shape), tiler, (0, 1))
    assert outlined_cells(explorer.figures[0].axes[0]) == identity_cells(block)
    explorer.thread_slider.value = 3
    explorer.thread_slider.value = 6
    mine = cute.local_partition(cute.make_identity_tensor(tiler), thr, 6)
    inside = explorer.figures[1].axes[0]
    assert coloured_cells(inside) == identity_cells(mine) == outlined_cells(inside)
    assert inside.get_title().startswith("inside block (0, 1): thread 6")


def test_swizzle_explorer_row_slider_move_marks_that_rows_conflicting_banks():
    column_reads = cute.make_layout((32, 32), stride=(1, 32))
    explorer = widgets.swizzle_explorer(column_reads, element_bits=32, bits=5, base=0, shift=5)
    explorer.row_slider.value = 3
    explorer.row_slider.value = 12
    before, after = axes_named(explorer.figure, "before"), axes_named(explorer.figure, "after")
    for ax in (before, after):
        assert coloured_cells(ax) == {(12, c) for c in range(32)}
    # unswizzled, row 12 asks bank 12 for 32 words (all conflict); swizzled, 32 banks one word each (none)
    conflict = grid.to_rgba(grid.CONFLICT_TEXT)
    assert all(same_colour(label_colours(before)[(12, c)], conflict) for c in range(32))
    assert not any(same_colour(label_colours(after)[(12, c)], conflict) for c in range(32))


def test_swizzle_explorer_bits_slider_move_relabels_the_after_banks_from_the_swizzled_layout():
    column_reads = cute.make_layout((32, 32), stride=(1, 32))
    explorer = widgets.swizzle_explorer(column_reads, element_bits=32, bits=5, base=0, shift=5)
    explorer.bits_slider.value = 2
    swizzled = cute.make_composed_layout(cute.make_swizzle(2, 0, 5), 0, column_reads)
    after = axes_named(explorer.figure, "after")
    assert after.get_title().startswith(f"after S<2,0,5>: {explorer.conflicts[1]} conflicts")
    assert all(text == str(swizzled(cell) % 32) for cell, text in cell_labels(after).items())
    assert len(cell_labels(after)) == 32 * 32


def test_mma_explorer_thread_slider_move_colours_the_new_threads_a_b_and_c_fragments():
    op = cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
    mma = cute.make_tiled_mma(op)
    explorer = widgets.mma_explorer(mma)
    explorer.thread_slider.value = 6
    explorer.thread_slider.value = 17
    piece = mma.get_slice(17)
    a, b, c = (next(ax for ax in explorer.figure.axes if ax.get_gid() == name) for name in "ABC")
    assert coloured_cells(a) == identity_cells(piece.partition_A(cute.make_identity_tensor((16, 16))))
    b_held = identity_cells(piece.partition_B(cute.make_identity_tensor((8, 16))))
    assert coloured_cells(b) == {(k, n) for n, k in b_held}          # B is drawn K down, N across
    assert coloured_cells(c) == identity_cells(piece.partition_C(cute.make_identity_tensor((16, 8))))


def explorers_and_sliders():
    return {
        "layout row": (lambda: widgets.layout_explorer(shape=(8, 8), stride=(8, 1)), "row_slider"),
        "tv thread": (widgets.tv_explorer, "thread_slider"),
        "divide tile": (widgets.divide_explorer, "tile_slider"),
        "partition block": (widgets.partition_explorer, "block_row_slider"),
        "partition thread": (widgets.partition_explorer, "thread_slider"),
        "swizzle row": (widgets.swizzle_explorer, "row_slider"),
        "swizzle bits": (widgets.swizzle_explorer, "bits_slider"),
        "mma thread": (widgets.mma_explorer, "thread_slider"),
    }


def pixels(png: bytes) -> numpy.ndarray:
    with Image.open(io.BytesIO(png)) as image:
        return numpy.asarray(image.convert("RGBA"))


@pytest.mark.parametrize("name", sorted(explorers_and_sliders()))
def test_the_picture_shown_after_slider_moves_is_the_figure_drawn_in_full(name):
    make, slider_name = explorers_and_sliders()[name]
    explorer = make()
    slider = getattr(explorer, slider_name)
    for value in (1, 0, 1):          # several moves: the shown frames repaint the kept figure each time
        slider.value = value
    for image, figure in zip(explorer.images, explorer.figures):
        assert numpy.array_equal(pixels(bytes(image.value)), pixels(render.png_bytes(figure, dpi=90)))
