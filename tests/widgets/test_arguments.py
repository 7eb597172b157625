"""Every explorer checks its arguments before drawing and names the wrong one: the explorer, the parameter,
what was given and what is expected (TypeError for a wrong kind, ValueError for a wrong value)."""
import pytest

from cutekit import cute, widgets
from cutekit.cute import nvgpu


def wrong_calls():
    """{mistake: (call, error type, texts the message must contain)}"""
    op = nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
    return {
        # chapter 04's Play cell as it was: the thread layout in the tiler's place
        "partition: a thread layout where the tiler goes": (
            lambda: widgets.partition_explorer((8, 8), cute.make_layout((4, 2))), TypeError,
            ["partition_explorer: tiler must be a tuple of 2 ints", "got the Layout (4,2):(1,4)",
             "thr_layout=cute.make_layout((4,2)"]),
        "partition: a thread layout larger than the tile": (
            lambda: widgets.partition_explorer((16, 16), (8, 8), cute.make_layout((16, 2))), ValueError,
            ["thr_layout must be a thread layout that fits in the (8,8) tile", "16 threads along mode 0"]),
        "partition: a tiler larger than the shape": (
            lambda: widgets.partition_explorer((8, 8), (16, 8)), ValueError,
            ["tiler must be a tile no larger than shape (8,8)", "got the tuple (16, 8)"]),
        "partition: a tiler of the wrong rank": (
            lambda: widgets.partition_explorer((8, 8), (4, 4, 4)), ValueError, ["tiler must be a tuple of 2 ints"]),
        "partition: a shape given as text": (
            lambda: widgets.partition_explorer("(8, 8)"), TypeError, ["shape must be an int or a tuple of ints",
                                                                     "got the str '(8, 8)'"]),
        "partition: a thread shape instead of a thread layout": (
            lambda: widgets.partition_explorer((8, 8), (4, 4), (2, 2)), TypeError,
            ["thr_layout must be a Layout", "cute.make_layout((2,2))"]),
        "tv: the tile where the value layout goes": (
            lambda: widgets.tv_explorer(cute.make_layout((4, 8)), (4, 8)), TypeError,
            ["val_layout must be a Layout", "tv_explorer(tv_layout=tv, tiler_mn=tiler)"]),
        "tv: a TV layout past its tile": (
            lambda: widgets.tv_explorer(tv_layout=cute.make_layout((4, 8)), tiler_mn=(2, 2)), ValueError,
            ["tv_layout (4,8):(1,4) must map every (thread, value) into the (2, 2) tile", "reaches index 31"]),
        "tv: a TV layout without its tile": (
            lambda: widgets.tv_explorer(tv_layout=cute.make_layout((4, 8))), TypeError, ["tiler_mn must be"]),
        "tv: both forms at once": (
            lambda: widgets.tv_explorer(cute.make_layout(4), tv_layout=cute.make_layout(4), tiler_mn=4), TypeError,
            ["thr_layout must be left out when tv_layout or tiler_mn is given"]),
        "tv: layouts of different ranks": (
            lambda: widgets.tv_explorer(cute.make_layout((4, 8)), cute.make_layout(4)), ValueError,
            ["val_layout must be a layout with as many modes as thr_layout"]),
        "divide: a tiler past the layout": (
            lambda: widgets.divide_explorer(cute.make_layout((8, 12)), (16, 2)), ValueError,
            ["divide_explorer: tiler must be a tiler within the layout's shape (8,12)", "reaches 16 elements"]),
        "divide: a tiler with more modes than the layout": (
            lambda: widgets.divide_explorer(cute.make_layout((8, 12)), (2, 2, 2)), ValueError,
            ["tiler must be a tiler with at most 2 modes"]),
        "divide: a tiler of text": (
            lambda: widgets.divide_explorer(cute.make_layout((8, 12)), "(2, 4)"), TypeError,
            ["tiler must be an int or a tuple of ints or Layouts"]),
        "layout: a Layout where the shape goes": (
            lambda: widgets.layout_explorer(cute.make_layout((4, 8), stride=(8, 1))), TypeError,
            ["layout_explorer: shape must be an int or a tuple of ints", "layout_explorer(shape=(4,8), stride=(8,1))"]),
        "layout: a stride not congruent with the shape": (
            lambda: widgets.layout_explorer((4, 8), (1, 2, 3)), ValueError,
            ["stride must be an int-tuple with the nesting of shape (4,8)"]),
        "layout: a negative size": (
            lambda: widgets.layout_explorer((4, -8)), ValueError, ["shape must be a shape of positive sizes"]),
        "swizzle: |S| < B": (
            lambda: widgets.swizzle_explorer(bits=3, shift=2), ValueError, ["shift must be at least bits (3)"]),
        "swizzle: bits off the slider": (
            lambda: widgets.swizzle_explorer(bits=9, shift=9), ValueError, ["bits must be an int from 0 to 5"]),
        "swizzle: element bits": (
            lambda: widgets.swizzle_explorer(element_bits=12), ValueError, ["element_bits must be one of"]),
        "swizzle: a swizzled layout": (
            lambda: widgets.swizzle_explorer(cute.make_composed_layout(cute.make_swizzle(3, 3, 3), 0,
                                                                       cute.make_layout((8, 64)))),
            TypeError, ["layout must be a Layout", "already swizzled"]),
        "mma: an MMA op instead of a TiledMma": (
            lambda: widgets.mma_explorer(op), TypeError,
            ["mma_explorer: tiled_mma must be a TiledMma", "mma_explorer(cute.make_tiled_mma(op))"]),
    }


@pytest.mark.parametrize("name", sorted(wrong_calls()))
def test_a_wrong_argument_is_named_with_what_was_given_and_what_is_expected(name):
    call, error_type, texts = wrong_calls()[name]
    with pytest.raises(error_type) as raised:
        call()
    for text in texts:
        assert text in str(raised.value), str(raised.value)


def test_chapter_04s_intended_explorer_moves_every_block_and_thread():
    explorer = widgets.partition_explorer((16, 16), (8, 8), thr_layout=cute.make_layout((4, 2)))
    assert (explorer.block_row_slider.max, explorer.block_column_slider.max, explorer.thread_slider.max) == (1, 1, 7)
    explorer.block_row_slider.value, explorer.thread_slider.value = 1, 5
    assert explorer.error.value == ""


def test_a_tiler_that_does_not_divide_the_shape_is_drawn_with_its_partial_tiles():
    """Chapter 03 section 7 and chapter 04's predicates draw these on purpose."""
    explorer = widgets.partition_explorer((12, 10), (8, 4))
    assert explorer.block_row_slider.max == 1 and explorer.block_column_slider.max == 2
    explorer.block_row_slider.value = explorer.block_column_slider.value = 2
    assert explorer.error.value == ""


def test_the_tv_caption_lists_where_each_value_of_the_thread_is():
    explorer = widgets.tv_explorer(cute.make_ordered_layout((4, 32), order=(1, 0)), cute.make_layout((1, 4)))
    explorer.thread_slider.value = 33
    assert explorer.caption.value == "thread 33 holds 4 values: V0 at (1,4), V1 at (1,5), V2 at (1,6), V3 at (1,7)"


def test_the_argument_checks_doctests_hold():
    import doctest

    from cutekit.widgets import arguments
    assert doctest.testmod(arguments).failed == 0
