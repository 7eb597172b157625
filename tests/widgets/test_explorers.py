"""The explorers, driven from Python as a notebook user drives them: move a slider or type in a field, and
the picture (and its figure) changes; bad input shows the reference algebra's message, not a traceback."""
import doctest

import ipywidgets
import numpy
import pytest

from cutekit import cute, widgets
from cutekit.render import grid

from tests.render.drawn import axes_named, cell_colours, cell_labels, is_grey, outlined_cells


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


def test_swizzle_explorer_counts_conflicts_and_shows_an_invalid_swizzle_as_an_error():
    explorer = widgets.swizzle_explorer(cute.make_layout((32, 32), stride=(1, 32)), element_bits=32,
                                        bits=5, base=0, shift=5)
    assert explorer.conflicts == (992, 0) and "<b>992</b> before, <b>0</b> after" in explorer.caption.value
    explorer.bits_slider.value = 0
    assert explorer.conflicts == (992, 992)
    explorer.shift_slider.value = 0
    explorer.bits_slider.value = 3
    assert "|s| must be at least b" in explorer.error.value


def test_mma_explorer_thread_slider_highlights_the_thread_in_a_b_and_c():
    explorer = widgets.mma_explorer()
    explorer.thread_slider.value = 6
    for name in "AC":
        ax = next(a for a in explorer.figure.axes if a.get_gid() == name)
        coloured = {c for c in cell_labels(ax) if not is_grey(cell_colours(ax)[c])}
        assert coloured and all(cell_labels(ax)[c].startswith("T6\n") for c in coloured)
