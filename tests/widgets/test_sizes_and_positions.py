"""Explorers refuse sizes they cannot draw (the limit in the error line, the last picture kept, drawing again
once the field is set back), and every slider position and every option of every explorer draws."""
import time

import ipywidgets
import pytest

from cutekit import cute, render, widgets
from cutekit.cute import nvgpu
from cutekit.render import limits

from tests.render.drawn import cell_labels

LIMIT_TEXT = f"pictures draw at most {limits.MAX_CELLS} cells"


def field_cases():
    """{name: (make explorer, field, too-large text, what the message names, good text, check of the good picture)}"""
    def layout_labels(count):
        return lambda explorer: len(cell_labels(explorer.figure.axes[0])) == count

    return {
        "layout shape (100000,100000)": (
            lambda: widgets.layout_explorer(shape=(4, 8), stride=None), "shape_text", "(100000,100000)",
            "a (100000,100000) layout has 10000000000 cells", "(2,3)", layout_labels(6)),
        "layout shape 100000 (one row)": (
            lambda: widgets.layout_explorer(shape=(4, 8), stride=None), "shape_text", "100000",
            "a 100000 layout has 100000 cells", "(4,8)", layout_labels(32)),
        "layout shape just over the limit": (
            lambda: widgets.layout_explorer(shape=(4, 8), stride=None), "shape_text", "(256,257)",
            "a (256,257) layout has 65792 cells", "(3,(2,2))", layout_labels(12)),
        "divide tiler (100000,100000)": (
            lambda: widgets.divide_explorer(cute.make_layout((8, 12), stride=(12, 1)), (2, 4)), "tiler_text",
            "(100000,100000)", "tiled by (100000,100000)", "(4,4)",
            lambda explorer: explorer.tile_slider.max == 5),
        "divide tiler padding the panels past the limit": (
            lambda: widgets.divide_explorer(cute.make_layout((8, 12), stride=(12, 1)), (2, 4)), "tiler_text",
            "(200,200)", "in three panels (96 + 40000 + 40000) has 80096 cells", "(2,4)",
            lambda explorer: explorer.tile_slider.max == 11),
    }


@pytest.mark.parametrize("name", sorted(field_cases()))
def test_a_field_asking_for_too_large_a_picture_shows_the_limit_keeps_the_picture_and_draws_again_after(name):
    make, field_name, too_large, named, good, drawn_right = field_cases()[name]
    explorer = make()
    field = getattr(explorer, field_name)
    picture, figure, count = explorer.image.value, explorer.figure, explorer.redraw_count
    sliders = [(s, s.value, s.max) for s in widgets._controls_in(explorer.children)
               if isinstance(s, ipywidgets.IntSlider)]

    start = time.perf_counter()
    field.value = too_large
    assert time.perf_counter() - start < 1.0
    assert named in explorer.error.value and LIMIT_TEXT in explorer.error.value
    assert "Traceback" not in explorer.error.value
    assert isinstance(explorer.last_error, render.PictureTooLarge)
    assert explorer.image.value == picture and explorer.figure is figure and explorer.redraw_count == count
    assert [(s, s.value, s.max) for s, _, _ in sliders] == sliders      # the sliders were left alone

    field.value = good
    assert explorer.error.value == "" and explorer.last_error is None
    assert explorer.redraw_count == count + 1 and bytes(explorer.image.value).startswith(b"\x89PNG")
    assert drawn_right(explorer)


def test_a_stride_too_large_for_64_bits_is_named_in_the_widget_and_the_explorer_draws_again_after():
    explorer = widgets.layout_explorer(shape=(4, 8), stride=(8, 1))
    picture = explorer.image.value
    explorer.stride_text.value = "(100000000000000000000,1)"
    assert "do not fit in 64 bits" in explorer.error.value and explorer.image.value == picture
    explorer.stride_text.value = "(1,4)"
    assert explorer.error.value == "" and cell_labels(explorer.figure.axes[0])[(1, 2)] == "9"


def test_the_layout_explorer_draws_a_layout_at_the_limit_and_its_sliders_reach_every_row_and_column():
    explorer = widgets.layout_explorer(shape=(4, 8))
    explorer.shape_text.value = "(256,256)"
    assert explorer.error.value == "" and (explorer.row_slider.max, explorer.column_slider.max) == (255, 255)
    explorer.row_slider.value, explorer.column_slider.value = 255, 255
    assert "offset <b>65535</b>" in explorer.caption.value and explorer.error.value == ""


def too_large_explorers():
    op = nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
    huge = cute.make_layout((100000, 100000))
    return {
        "layout_explorer": lambda: widgets.layout_explorer(shape=(100000, 100000)),
        "tv_explorer": lambda: widgets.tv_explorer(cute.make_layout((1000, 1000)), cute.make_layout((4, 4))),
        "divide_explorer": lambda: widgets.divide_explorer(huge, (2, 4)),
        "partition_explorer": lambda: widgets.partition_explorer(shape=(100000, 100000)),
        "swizzle_explorer": lambda: widgets.swizzle_explorer(huge),
        "mma_explorer": lambda: widgets.mma_explorer(cute.make_tiled_mma(op, (64, 64, 1))),
    }


@pytest.mark.parametrize("name", sorted(too_large_explorers()))
def test_an_explorer_made_around_too_large_a_picture_refuses_it_at_once_with_the_limit(name):
    start = time.perf_counter()
    with pytest.raises(render.PictureTooLarge, match=LIMIT_TEXT):
        too_large_explorers()[name]()
    assert time.perf_counter() - start < 1.0


# ---- every position -----------------------------------------------------------------------------------------

def explorers():
    """{name: make}: the explorers whose every slider position is drawn."""
    return {
        "layout": widgets.layout_explorer,
        "layout nested": lambda: widgets.layout_explorer(shape=(3, (2, 2)), stride=(1, (6, 3))),
        "layout one row": lambda: widgets.layout_explorer(shape=7, stride=None),
        "tv": widgets.tv_explorer,
        "tv given a layout": lambda: widgets.tv_explorer(
            tv_layout=cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4))), tiler_mn=(4, 6)),
        "divide": widgets.divide_explorer,
        "divide not dividing": lambda: widgets.divide_explorer(cute.make_layout((6, 10)), (4, 4)),
        "partition": widgets.partition_explorer,
        "partition not dividing": lambda: widgets.partition_explorer(shape=(12, 10), tiler=(8, 4)),
        "swizzle": widgets.swizzle_explorer,
        "mma": widgets.mma_explorer,
    }


def larger_explorers():
    """{name: make}: explorers with long sliders, drawn at each slider's min, max and middle."""
    op = nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
    return {
        "layout 256x256": lambda: widgets.layout_explorer(shape=(256, 256), stride=(256, 1)),
        "divide 128x128 by 16x32": lambda: widgets.divide_explorer(cute.make_layout((128, 128)), (16, 32)),
        "partition 128x128": lambda: widgets.partition_explorer((128, 128), (32, 32), cute.make_layout((8, 4))),
        "swizzle 32x32": lambda: widgets.swizzle_explorer(cute.make_layout((32, 32), stride=(1, 32)), 32, 5, 0, 5),
        "mma 2x2 atoms": lambda: widgets.mma_explorer(cute.make_tiled_mma(op, (2, 2, 1))),
    }


def positions(control, every=True):
    """The values a control offers: a slider's min and max, then every value between (or only the middle one),
    a dropdown's options."""
    if isinstance(control, ipywidgets.IntSlider):
        middle = [v for v in range(control.min, control.max + 1) if v not in (control.min, control.max)]
        return [control.min, control.max, *(middle if every else middle[len(middle) // 2:][:1])]
    options = getattr(control, "options", None)
    if options is not None:
        return [option[1] if isinstance(option, tuple) else option for option in options]
    return []


def every_position_draws(explorer, every):
    controls = [c for c in widgets._controls_in(explorer.children) if positions(c)]
    assert controls, "an explorer with no slider"
    for control in controls:
        for value in positions(control, every):
            control.value = value
            assert explorer.error.value == "", (control.description, value, explorer.error.value)
            assert explorer.last_error is None
            for image, figure in zip(explorer.images, explorer.figures):
                assert figure is not None and bytes(image.value).startswith(b"\x89PNG")
        assert control.value == positions(control, every)[-1]     # a control ends where it was put


@pytest.mark.parametrize("name", sorted(explorers()))
def test_every_slider_position_and_every_option_of_every_explorer_draws(name):
    every_position_draws(explorers()[name](), every=True)


@pytest.mark.parametrize("name", sorted(larger_explorers()))
def test_every_slider_of_larger_explorers_draws_at_its_min_middle_and_max(name):
    every_position_draws(larger_explorers()[name](), every=False)
