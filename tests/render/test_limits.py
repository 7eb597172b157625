"""Sizes a picture cannot draw are refused, at once, with the limit in the message; everything within the limit
draws, and a figure that saw a refusal draws the next picture as usual (cutekit.render.limits)."""
import doctest
import time
import tracemalloc

import numpy
import pytest

from cutekit import cute, render
from cutekit.cute import nvgpu
from cutekit.cute.layout import Coord
from cutekit.render import facts, grid, limits
from cutekit.render.pictures import copy_owner

from .drawn import cell_labels

HUGE = (100000, 100000)
LIMIT = str(limits.MAX_CELLS)


def copy(threads, values, bits=32):
    atom = cute.make_copy_atom(nvgpu.CopyUniversalOp(), cute.Float32, num_bits_per_copy=bits)
    return cute.make_tiled_copy_tv(atom, threads, values)


def refused(call, seconds=1.0, peak_bytes=32 << 20) -> str:
    """Call `call`, which must raise PictureTooLarge within `seconds` and without allocating more than
    `peak_bytes` on the way (a (100000,100000) grid would be 80 GB); returns the message."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(limits.PictureTooLarge) as info:
            call()
        elapsed = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert elapsed < seconds, f"refused after {elapsed:.2f} s"
    assert peak < peak_bytes, f"allocated {peak} bytes before refusing"
    return str(info.value)


def too_large():
    """{name: (call, what the message must name)}: one too-large input for every renderer (and each of a
    renderer's sizes: its grid, its tiler's padded grid, its threads x values, its index range)."""
    small_copy = copy(cute.make_ordered_layout((2, 8), order=(1, 0)), cute.make_layout((1, 4)))
    many_threads = copy(cute.make_layout((1000, 1000)), cute.make_layout((4, 4)))
    op = nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
    swizzle = cute.make_swizzle(3, 3, 3)
    huge = cute.make_layout(HUGE)
    return {
        "layout": (lambda: render.layout(huge), "a (100000,100000) layout has 10000000000 cells"),
        "layout 1-D": (lambda: render.layout(cute.make_layout(100000)), "a 100000 layout has 100000 cells"),
        "layout swizzled": (lambda: render.layout(cute.make_composed_layout(swizzle, 0, huge)), "10000000000 cells"),
        "layout_inverse size": (lambda: render.layout_inverse(huge), "10000000000 cells"),
        "layout_inverse cosize": (lambda: render.layout_inverse(cute.make_layout((2, 2), stride=(1, 10 ** 9))),
                                  "indices 0..1000000001"),
        "tv_layout tile": (lambda: render.tv_layout(cute.make_layout((32, 4)), HUGE),
                           "a 100000x100000 tile has 10000000000 cells"),
        "tv_layout threads x values": (lambda: render.tv_layout(cute.make_layout(HUGE, stride=(0, 0)), (4, 4)),
                                       "(100000 threads x 100000 values) has 10000000000 (thread, value) pairs"),
        "divide layout": (lambda: render.divide(huge, (2, 4)), "in three panels"),
        "divide tiler": (lambda: render.divide(cute.make_layout((8, 12)), HUGE), "in three panels"),
        "local_tile shape": (lambda: render.local_tile(HUGE, (8, 8), (0, 0)),
                             "a (100000,100000) shape has 10000000000 cells"),
        "local_tile tiler": (lambda: render.local_tile((8, 8), HUGE, (0, 0)),
                             "tiled by (100000,100000) (1 tiles of 10000000000 elements, padded to whole tiles)"),
        "local_partition shape": (lambda: render.local_partition(HUGE, cute.make_layout((2, 2)), 0),
                                  "10000000000 cells"),
        "local_partition threads": (lambda: render.local_partition((8, 8), huge, 0), "10000000000 threads"),
        "copy_partition shape": (lambda: render.copy_partition(small_copy, HUGE, 0), "10000000000 cells"),
        "copy_partition threads": (lambda: render.copy_partition(many_threads, (8, 8), 0),
                                   "1000000-thread TiledCopy"),
        "tiled_copy": (lambda: render.tiled_copy(many_threads), "source and destination tiles of 4000x4000"),
        "tiled_mma": (lambda: render.tiled_mma(cute.make_tiled_mma(op, (64, 64, 1))),
                      "a TiledMMA drawn as A (1024x16), B (512x16) and C (1024x512) has 548864 cells"),
        "swizzle": (lambda: render.swizzle(swizzle, huge), "20000000000 cells"),
        "bank_conflicts": (lambda: render.bank_conflicts(huge), "10000000000 cells"),
        "facts.grid_values": (lambda: facts.grid_values(huge), "10000000000 cells"),
        "facts.tile_owner": (lambda: facts.tile_owner((8, 12), HUGE), "padded to whole tiles"),
    }


@pytest.mark.parametrize("name", sorted(too_large()))
def test_every_renderer_refuses_a_size_it_cannot_draw_at_once_naming_the_size_and_the_limit(name):
    call, named = too_large()[name]
    message = refused(call)
    assert named in message
    assert f"pictures draw at most {LIMIT} cells" in message


def test_the_message_names_the_size_asked_for_what_it_is_the_size_of_and_the_limit():
    message = refused(lambda: render.layout(cute.make_layout(HUGE)))
    assert message == ("a (100000,100000) layout has 10000000000 cells; pictures draw at most 65536 cells: "
                       "choose a smaller shape")


def test_the_refusal_is_a_cute_error_carrying_the_numbers():
    with pytest.raises(limits.PictureTooLarge) as info:
        render.layout(cute.make_layout((256, 257)))
    error = info.value
    assert isinstance(error, cute.CuteError) and isinstance(error, ValueError)
    assert (error.count, error.limit, error.what) == (65792, limits.MAX_CELLS, "a (256,257) layout")
    assert render.PictureTooLarge is limits.PictureTooLarge and render.MAX_CELLS == limits.MAX_CELLS


def test_a_picture_at_the_limit_draws_in_well_under_two_seconds_and_one_cell_more_is_refused():
    start = time.perf_counter()
    figure = render.layout(cute.make_layout((256, 256), stride=(256, 1)), highlight=(255, 255))
    assert render.png_bytes(figure).startswith(b"\x89PNG")
    assert time.perf_counter() - start < 2.0
    refused(lambda: render.layout(cute.make_layout((256, 257))))
    refused(lambda: render.layout(cute.make_layout(limits.MAX_CELLS + 1)))


def test_a_long_one_dimensional_layout_draws_a_bounded_number_of_ticks():
    ax = render.layout(cute.make_layout(limits.MAX_CELLS)).axes[0]
    assert 1 <= len(ax.get_xticks()) <= 16 and len(ax.get_yticks()) == 1
    assert [grid.tick_step(n) for n in (8, 32, 128, 4096, 65536)] == [1, 4, 16, 256, 4096]


def layout_figure():
    return render.layout(cute.make_layout((4, 8), stride=(8, 1)))


@pytest.mark.parametrize("picture, too_big, good", [
    ("layout", lambda f: render.layout(cute.make_layout(HUGE), figure=f),
     lambda f: render.layout(cute.make_layout((2, 3), stride=(3, 1)), highlight=(1, 2), figure=f)),
    ("divide", lambda f: render.divide(cute.make_layout((8, 12)), HUGE, figure=f),
     lambda f: render.divide(cute.make_layout((8, 12), stride=(12, 1)), (2, 4), tile=1, figure=f)),
    ("local_tile", lambda f: render.local_tile(HUGE, (8, 8), (0, 0), figure=f),
     lambda f: render.local_tile((8, 8), (4, 4), (1, 0), figure=f)),
])
def test_a_figure_that_saw_a_refusal_keeps_its_picture_and_then_draws_the_next_one(picture, too_big, good):
    figure = layout_figure()
    before = render.png_bytes(figure)
    refused(lambda: too_big(figure))
    assert render.png_bytes(figure) == before          # the picture it showed is untouched
    assert good(figure) is figure
    expected = good(None)
    assert render.png_bytes(figure) == render.png_bytes(expected)


def test_doctests_hold():
    assert doctest.testmod(limits).failed == 0 and doctest.testmod(grid).failed == 0


# ---- what keeps pictures at the limit fast gives the same facts as calling the layouts -------------------

def test_layout_inverse_with_many_index_rows_labels_the_first_index_of_each_ticked_row():
    layout = cute.make_layout((4, 8), stride=(400, 1))        # indices 0..1207: 76 rows of 16
    ax = render.layout_inverse(layout).axes[0]
    step = grid.tick_step(76)
    assert step == 16 and [t.get_text() for t in ax.get_yticklabels()] == [str(16 * r) for r in range(0, 76, step)]


def test_layout_inverse_refuses_negative_offsets_by_name():
    with pytest.raises(cute.CuteError, match="negative offset -3"):
        render.layout_inverse(cute.make_layout((2, 2), stride=(1, -3)))


def test_strides_too_large_for_64_bits_are_named():
    with pytest.raises(cute.CuteError, match="do not fit in 64 bits"):
        render.layout(cute.make_layout((2, 2), stride=(2 ** 70, 1)))


LAYOUTS = [cute.make_layout((4, 8), stride=(8, 1)), cute.make_layout((4, (2, 3)), stride=(2, (1, 8))),
           cute.make_layout(6, stride=2), cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4))),
           cute.make_layout((3, 5), stride=(0, -2)), cute.make_layout(1, stride=0),
           cute.make_layout((2, (3, (2, 2))), stride=(-7, (5, (0, 100)))), cute.make_layout((2, 2), stride=(2 ** 61, 1))]


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_mode_values_are_the_layout_called_at_every_index(layout):
    assert facts.mode_values(layout).tolist() == [layout(k) for k in range(cute.size(layout))]


def basis_layouts():
    identity = facts.identity_layout((8, 12))
    pieces = [identity, cute.zipped_divide(identity, (2, 4)), cute.logical_divide(identity, (3, 5)),
              cute.zipped_divide(facts.identity_layout((16,)), (4,)), cute.make_identity_tensor((4, (2, 3))).layout]
    return [mode for piece in pieces for mode in [piece, *facts.modes(piece)]]


@pytest.mark.parametrize("layout", basis_layouts(), ids=str)
def test_mode_coordinates_are_the_layout_called_at_every_index(layout):
    for rank in (1, 2):
        called = [layout(k) for k in range(cute.size(layout))]
        expected = [Coord.of(v).as_tuple(rank) if not isinstance(v, int) else (0,) * rank for v in called]
        assert facts.mode_coordinates(layout, rank).tolist() == [list(c) for c in expected]


def cells_by_indexing(tensor, shape):
    rank = facts.shape_rank(shape)
    coordinates = numpy.array([tensor[k] for k in range(cute.size(tensor.layout))]).reshape(-1, rank)
    row, column, inside = facts.cell_of_coordinate(coordinates, shape)
    return row[inside].tolist(), column[inside].tolist()


@pytest.mark.parametrize("shape, tiler", [((8, 12), (2, 4)), ((10, 10), (4, 4)), ((16,), (4,))])
def test_tensor_cells_are_the_tensor_read_at_every_index(shape, tiler):
    identity = cute.make_identity_tensor(shape)
    rest = facts.tile_owner(shape, tiler)[1]
    pieces = [cute.local_tile(identity, tiler, cute.idx2crd(k, rest) if isinstance(rest, tuple) else (k,))
              for k in range(cute.size(rest))]
    threads = cute.make_layout(tuple(2 for _ in tiler))
    pieces += [cute.local_partition(identity, threads, t) for t in range(cute.size(threads))]
    for piece in pieces:
        assert tuple(a.tolist() for a in facts.tensor_cells(piece, shape)) == cells_by_indexing(piece, shape)


@pytest.mark.parametrize("threads, values, bits, shape", [
    (cute.make_ordered_layout((2, 8), order=(1, 0)), cute.make_layout((1, 4)), 128, (4, 32)),
    (cute.make_ordered_layout((2, 4), order=(1, 0)), cute.make_layout((1, 2)), 64, (4, 16)),
    (cute.make_layout((4, 8)), cute.make_layout((2, 1)), 64, (16, 16)),
    (cute.make_ordered_layout((4, 4), order=(1, 0)), cute.make_layout((1, 2)), 64, (10, 12)),
])
def test_copy_owner_is_the_thread_whose_partition_s_holds_each_element(threads, values, bits, shape):
    tiled = copy(threads, values, bits)
    identity = cute.make_identity_tensor(shape)
    expected = numpy.full(facts.shape_extent(shape), -1)
    for t in range(tiled.size):
        expected[cells_by_indexing(tiled.get_slice(t).partition_S(identity), shape)] = t
    assert copy_owner(tiled, shape).tolist() == expected.tolist()


def test_large_pictures_draw_without_labels_and_small_ones_keep_them():
    big = render.local_tile((128, 128), (1, 1), (0, 0)).axes[0]
    assert cell_labels(big) == {}
    small = render.local_tile((8, 8), (4, 4), (1, 0)).axes[0]
    assert cell_labels(small)[(0, 0)] == "(0,0)" and len(cell_labels(small)) == 64
