"""The pictures show the reference algebra's facts: each test reads labels and colours back from the drawn
figure and compares them with what `cutekit.cute` says."""
import doctest
import io

import numpy
import pytest
from matplotlib.figure import Figure

from cutekit import cute, render
from cutekit.cute import nvgpu
from cutekit.render import banks, facts, grid

from .drawn import axes_named, cell_colours, cell_labels, is_grey, label_colours, outlined_cells, same_colour


def test_render_modules_doctests_hold():
    for module in (facts, banks, grid):
        failures, _ = doctest.testmod(module)
        assert failures == 0, module.__name__


# ---- layouts ---------------------------------------------------------------------------------------------

def test_layout_labels_each_cell_with_the_offset_of_its_coordinate():
    layout = cute.make_layout((4, 8), stride=(8, 1))
    figure = render.layout(layout)
    assert isinstance(figure, Figure)
    labels = cell_labels(figure.axes[0])
    assert len(labels) == 32
    for (row, column), text in labels.items():
        assert text == str(layout((row, column)))
    assert labels[(1, 2)] == "10"


def test_layout_colours_darken_as_the_offset_grows():
    colours = cell_colours(render.layout(cute.make_layout((4, 8), stride=(8, 1))).axes[0])
    brightness = colours[..., :3].sum(axis=-1)
    assert brightness[0, 0] > brightness[0, 7] > brightness[3, 7]


def test_hierarchical_mode_is_grouped_by_thicker_lines_between_its_sub_modes():
    figure = render.layout(cute.make_layout((4, (2, 3)), stride=(2, (1, 8))))
    groups = next(c for c in figure.axes[0].collections if c.get_gid() == "groups")
    x_positions = sorted({segment[0][0] for segment in groups.get_segments() if segment[0][0] == segment[1][0]})
    assert x_positions == [2, 4]
    assert cell_labels(figure.axes[0])[(0, 2)] == "8"


def test_one_dimensional_layout_is_drawn_as_one_row():
    figure = render.layout(cute.make_layout(6, stride=2))
    assert cell_colours(figure.axes[0]).shape[:2] == (1, 6)
    assert [cell_labels(figure.axes[0])[(0, c)] for c in range(6)] == ["0", "2", "4", "6", "8", "10"]


def test_swizzled_layout_is_drawn_with_swizzled_offsets():
    swizzled = cute.make_composed_layout(cute.make_swizzle(1, 0, 1), 0, cute.make_layout((2, 2), stride=(2, 1)))
    labels = cell_labels(render.layout(swizzled).axes[0])
    assert labels == {(0, 0): "0", (0, 1): "1", (1, 0): "3", (1, 1): "2"}


def test_layout_inverse_labels_each_index_with_the_coordinate_that_holds_it():
    layout = cute.make_layout((4, 8), stride=(1, 4))
    labels = cell_labels(render.layout_inverse(layout).axes[0])
    # indices run row-major, 8 per row: index 13 is at (1, 5) and is held by coordinate (1, 3)
    assert labels[(1, 5)] == "(1,3)"
    for (row, column), text in labels.items():
        r, c = (int(x) for x in text.strip("()").split(","))
        assert layout((r, c)) == row * 8 + column


def test_layout_inverse_leaves_indices_no_coordinate_reaches_empty():
    ax = render.layout_inverse(cute.make_layout(4, stride=2)).axes[0]
    labels = cell_labels(ax)
    assert labels[(0, 0)] == "(0)" and labels[(0, 2)] == "(1)"
    assert (0, 1) not in labels and same_colour(cell_colours(ax)[0, 1], grid.EMPTY)


# ---- thread-value layouts --------------------------------------------------------------------------------

def small_tv():
    tiler, tv = cute.make_layout_tv(cute.make_ordered_layout((2, 4), order=(1, 0)), cute.make_layout((2, 2)))
    return tv, tiler


def test_tv_layout_labels_the_cell_each_thread_value_lands_on():
    tv, tiler = small_tv()
    ax = render.tv_layout(tv, tiler).axes[0]
    labels, colours = cell_labels(ax), cell_colours(ax)
    rows = tiler[0]
    for t in range(cute.size(tv, mode=[0])):
        for v in range(cute.size(tv, mode=[1])):
            index = tv((t, v))
            cell = (index % rows, index // rows)
            assert labels[cell] == f"T{t}\nV{v}"
            assert same_colour(colours[cell], grid.THREAD_COLOURS[t % 8])


def test_tv_layout_highlight_greys_every_other_thread():
    tv, tiler = small_tv()
    ax = render.tv_layout(tv, tiler, highlight=3).axes[0]
    colours, labels = cell_colours(ax), cell_labels(ax)
    for cell, text in labels.items():
        assert is_grey(colours[cell]) == (not text.startswith("T3\n"))


def test_tv_layout_rejects_a_thread_outside_the_layout():
    tv, tiler = small_tv()
    with pytest.raises(cute.CuteError, match="thread 8"):
        render.tv_layout(tv, tiler, highlight=8)


# ---- divides ---------------------------------------------------------------------------------------------

def test_divide_colours_every_tile_alike_in_all_three_panels():
    layout, tiler = cute.make_layout((8, 12), stride=(12, 1)), (2, 4)
    figure = render.divide(layout, tiler)
    source, logical, zipped = (axes_named(figure, name) for name in ("source", "logical_divide", "zipped_divide"))
    source_colours = cell_colours(source)
    # tile 0 is rows 0-1, columns 0-3 of the source, one colour; tile 1 (rest index 1) starts at row 2
    assert all(same_colour(source_colours[r, c], source_colours[0, 0]) for r in range(2) for c in range(4))
    assert not same_colour(source_colours[2, 0], source_colours[0, 0])
    # a zipped_divide column is one tile: one colour per column, the source's colour of that tile
    zipped_colours = cell_colours(zipped)
    for k in range(12):
        assert all(same_colour(zipped_colours[i, k], zipped_colours[0, k]) for i in range(8))
    assert same_colour(zipped_colours[0, 1], source_colours[2, 0])
    # labels are the divided layouts' own offsets
    for ax, divided in ((logical, cute.logical_divide(layout, tiler)), (zipped, cute.zipped_divide(layout, tiler))):
        values = facts.grid_values(divided)
        assert all(text == str(values[cell]) for cell, text in cell_labels(ax).items())
    assert len(cell_labels(zipped)) == 96


def test_divide_tile_keeps_only_the_cells_zipped_divide_gives_that_tile():
    layout = cute.make_layout((8, 12), stride=(12, 1))
    source = render.divide(layout, (2, 4), tile=5).axes[0]
    coloured = {cell for cell in numpy.ndindex(8, 12) if not is_grey(cell_colours(source)[cell])}
    tile = cute.zipped_divide(cute.make_identity_tensor((8, 12)), (2, 4))[((None, None), 5)]
    assert coloured == {tile[i] for i in range(8)}
    assert coloured == {(r, c) for r in (2, 3) for c in (4, 5, 6, 7)}


def test_divide_by_the_documentations_layout_tiler_groups_rows_three_apart():
    layout = cute.make_layout((9, (4, 8)), stride=(59, (13, 1)))
    tiler = (cute.make_layout(3, stride=3), cute.make_layout((2, 4), stride=(1, 8)))
    source = axes_named(render.divide(layout, tiler), "source")
    colours = cell_colours(source)
    one_tile = [(r, c) for r in (0, 3, 6) for c in (0, 1, 8, 9, 16, 17, 24, 25)]
    assert all(same_colour(colours[cell], colours[0, 0]) for cell in one_tile)
    assert not same_colour(colours[1, 0], colours[0, 0])


def test_local_tile_outlines_exactly_the_tile_cute_returns():
    ax = render.local_tile((8, 12), (2, 4), (1, 2)).axes[0]
    tile = cute.local_tile(cute.make_identity_tensor((8, 12)), (2, 4), (1, 2))
    assert outlined_cells(ax) == {tile[i] for i in range(8)}
    assert cell_labels(ax)[(2, 8)] == "(1,2)"


def test_local_tile_of_a_shape_the_tiler_does_not_divide_marks_only_cells_inside():
    ax = render.local_tile((10, 12), (4, 8), (2, 1)).axes[0]
    assert outlined_cells(ax) == {(r, c) for r in (8, 9) for c in range(8, 12)}


@pytest.mark.parametrize("thr_layout", [cute.make_layout((2, 4)), cute.make_layout((2, 4), stride=(4, 1))])
def test_local_partition_owner_of_each_element_matches_cute_local_partition(thr_layout):
    shape = (8, 12)
    identity = cute.make_identity_tensor(shape)
    owner = facts.thread_owner(shape, thr_layout)
    for thread in range(8):
        piece = cute.local_partition(identity, thr_layout, thread)
        cells = {piece[i] for i in range(cute.size(piece.layout))}
        assert cells == {cell for cell in numpy.ndindex(*shape) if owner[cell] == thread}
    ax = render.local_partition(shape, thr_layout, 5).axes[0]
    piece = cute.local_partition(identity, thr_layout, 5)
    mine = {piece[i] for i in range(cute.size(piece.layout))}
    assert {cell for cell in numpy.ndindex(*shape) if not is_grey(cell_colours(ax)[cell])} == mine
    assert {cell for cell, text in cell_labels(ax).items() if text == "T5"} == mine


# ---- copies and MMAs -------------------------------------------------------------------------------------

def coordinates(piece):
    return {tuple(piece[i]) for i in range(cute.size(piece.layout))}


def test_tiled_copy_panels_show_which_thread_moves_each_element():
    atom = cute.make_copy_atom(nvgpu.CopyUniversalOp(), cute.Float32, num_bits_per_copy=64)
    copy = cute.make_tiled_copy_tv(atom, cute.make_layout((4, 8), stride=(8, 1)), cute.make_layout((1, 2)))
    figure = render.tiled_copy(copy)
    source, destination = axes_named(figure, "source"), axes_named(figure, "destination")
    identity = cute.make_identity_tensor((4, 16))
    for thread in (0, 5, 31):
        piece = copy.get_slice(thread)
        for ax, part in ((source, piece.partition_S(identity)), (destination, piece.partition_D(identity))):
            held = {cell for cell, text in cell_labels(ax).items() if text.startswith(f"T{thread}\n")}
            assert held == coordinates(part)


def test_tiled_mma_panels_match_each_threads_partitions_of_a_b_and_c():
    op = nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
    mma = cute.make_tiled_mma(op, (2, 1, 1))
    figure = render.tiled_mma(mma, highlight=37)
    m, n, k = (mma.get_tile_size(i) for i in range(3))
    a, b, c = (next(ax for ax in figure.axes if ax.get_gid() == name) for name in "ABC")
    for thread in (0, 37, 63):
        piece = mma.get_slice(thread)
        def held(ax, shown=thread):
            return {cell for cell, text in cell_labels(ax).items() if text.startswith(f"T{shown}\n")}
        assert held(a) == coordinates(piece.partition_A(cute.make_identity_tensor((m, k))))
        # B is drawn K down, N across; the two atoms along M share B, and (as print_latex does) a shared cell
        # shows its lowest thread: thread 37's B values are labelled as thread 5's
        assert held(b, thread % 32) == {(kk, nn) for nn, kk in
                                        coordinates(piece.partition_B(cute.make_identity_tensor((n, k))))}
        assert held(c) == coordinates(piece.partition_C(cute.make_identity_tensor((m, n))))
    colours = cell_colours(c)
    assert all(is_grey(colours[cell]) == (not text.startswith("T37\n")) for cell, text in cell_labels(c).items())


def test_ldmatrix_gives_thread_t_two_neighbouring_elements_of_row_t_over_4_in_every_matrix():
    figure = render.ldmatrix(4)
    for matrix in range(4):
        ax = next(a for a in figure.axes if a.get_gid() == f"matrix {matrix}")
        labels = cell_labels(ax)
        for thread in (0, 6, 31):
            row, column = thread // 4, 2 * (thread % 4)
            assert labels[(row, column)] == f"T{thread}\nR{matrix}.lo"
            assert labels[(row, column + 1)] == f"T{thread}\nR{matrix}.hi"
        assert [t.get_text() for t in ax.get_yticklabels()] == [f"lane {8 * matrix + r}" for r in range(8)]


def test_ldmatrix_transposed_gives_thread_t_two_rows_of_column_t_over_4():
    labels = cell_labels(next(a for a in render.ldmatrix(2, transpose=True).axes if a.get_gid() == "matrix 1"))
    for thread in (0, 6, 31):
        row, column = 2 * (thread % 4), thread // 4
        assert labels[(row, column)] == f"T{thread}\nR1.lo"
        assert labels[(row + 1, column)] == f"T{thread}\nR1.hi"


def test_ldmatrix_lane_outlines_the_row_it_addresses_and_keeps_its_own_elements():
    figure = render.ldmatrix(4, lane=9)
    matrix1 = next(a for a in figure.axes if a.get_gid() == "matrix 1")
    assert outlined_cells(matrix1) == {(1, c) for c in range(8)}
    colours = cell_colours(matrix1)
    assert {cell for cell in numpy.ndindex(8, 8) if not is_grey(colours[cell])} == {(2, 2), (2, 3)}


# ---- banks -----------------------------------------------------------------------------------------------

def test_bank_conflicts_counts_extra_wavefronts_per_row():
    row_major = cute.make_layout((32, 32), stride=(32, 1))
    assert render.bank_conflicts(row_major) == 0
    assert render.bank_conflicts(cute.make_layout((32, 32), stride=(1, 32))) == 32 * 31
    assert render.bank_conflicts(cute.make_layout((32, 32), stride=(1, 33))) == 0
    # 16-bit elements: two share a word, and lanes reading one word share it (a broadcast, no conflict)
    assert render.bank_conflicts(cute.make_layout((1, 64)), element_bits=16) == 0
    assert render.bank_conflicts(cute.make_layout((8, 8), stride=(1, 64)), element_bits=16) == 8 * 7


def test_a_wide_row_needs_its_minimum_wavefronts_without_counting_them_as_conflicts():
    assert banks.wavefronts(range(64)) == (2, 2)
    assert render.bank_conflicts(cute.make_layout((1, 64))) == 0


def test_swizzle_picture_shows_banks_and_conflicts_before_and_after():
    column_reads = cute.make_layout((32, 32), stride=(1, 32))     # each row of the picture: one column of a tile
    swizzle = cute.make_swizzle(5, 0, 5)
    figure = render.swizzle(swizzle, column_reads, highlight_row=3)
    before, after = axes_named(figure, "before"), axes_named(figure, "after")
    assert before.get_title().startswith("before: 992 conflicts")
    assert after.get_title().startswith(f"after {swizzle}: 0 conflicts")
    assert "992 -> 0" in figure._suptitle.get_text()
    swizzled = cute.make_composed_layout(swizzle, 0, column_reads)
    assert cell_labels(after)[(3, 7)] == str(swizzled((3, 7)) % 32)
    assert cell_labels(before)[(3, 7)] == "3"          # row 3 is elements 3, 35, 67, ...: all bank 3
    # in the highlighted row every before-cell is a conflict (dark red text), no after-cell is
    red = numpy.array(grid.to_rgba(grid.CONFLICT_TEXT))
    assert all(same_colour(label_colours(before)[(3, c)], red) for c in range(32))
    assert not any(same_colour(label_colours(after)[(3, c)], red) for c in range(32))
    assert is_grey(cell_colours(after)[0, 0]) and not is_grey(cell_colours(after)[3, 0])


# ---- every picture saves -----------------------------------------------------------------------------------

def every_picture():
    tv, tiler = small_tv()
    op = nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 8))
    atom = cute.make_copy_atom(nvgpu.CopyUniversalOp(), cute.Float32, num_bits_per_copy=32)
    return {
        "layout": lambda: render.layout(cute.make_layout((4, 8))),
        "layout_inverse": lambda: render.layout_inverse(cute.make_layout((4, 8))),
        "tv_layout": lambda: render.tv_layout(tv, tiler, highlight=1),
        "divide": lambda: render.divide(cute.make_layout(24), cute.make_layout(4, stride=2), tile=1),
        "local_tile": lambda: render.local_tile((8, 8), (4, 4), (0, 1)),
        "local_partition": lambda: render.local_partition((8, 8), cute.make_layout((2, 2)), 0),
        "tiled_copy": lambda: render.tiled_copy(cute.make_tiled_copy_tv(atom, cute.make_layout(4), cute.make_layout(1))),
        "tiled_mma": lambda: render.tiled_mma(cute.make_tiled_mma(op)),
        "ldmatrix": lambda: render.ldmatrix(1, lane=0),
        "swizzle": lambda: render.swizzle(cute.make_swizzle(2, 0, 3), cute.make_layout((4, 32), stride=(32, 1))),
    }


@pytest.mark.parametrize("name", sorted(every_picture()))
def test_every_picture_is_a_figure_that_saves_as_png_and_svg(name):
    figure = every_picture()[name]()
    assert isinstance(figure, Figure)
    assert figure.get_facecolor()[3] == 1.0                         # opaque: legible on a dark theme too
    png, svg = io.BytesIO(), io.BytesIO()
    figure.savefig(png, format="png")
    figure.savefig(svg, format="svg")
    assert png.getvalue().startswith(b"\x89PNG") and b"<svg" in svg.getvalue()
    assert figure._repr_png_().startswith(b"\x89PNG")         # a notebook shows it without pyplot's backend


def test_copy_partition_names_every_elements_thread_and_labels_the_chosen_threads_values_by_copy_tile():
    atom = cute.make_copy_atom(nvgpu.CopyUniversalOp(), cute.Float32, num_bits_per_copy=64)
    tiny = cute.make_tiled_copy_tv(atom, cute.make_ordered_layout((2, 4), order=(1, 0)), cute.make_layout((1, 2)))
    ax = render.copy_partition(tiny, (4, 16), 5).axes[0]
    labels, colours = cell_labels(ax), cell_colours(ax)
    identity = cute.make_identity_tensor((4, 16))
    for thread in range(8):
        mine = tiny.get_slice(thread).partition_S(identity)     # ((values, atoms), rest m, rest n)
        for k in range(cute.size(mine)):
            cell = mine[k]
            if thread == 5:
                v, (m, n) = k % 2, divmod(k // 2, 2)[::-1]
                assert labels[cell] == f"V{v}\n{m},{n}" and not is_grey(colours[cell])
            else:
                assert labels[cell] == f"T{thread}" and is_grey(colours[cell])
    fives = tiny.get_slice(5).partition_S(identity)
    assert outlined_cells(ax) == {fives[k] for k in range(cute.size(fives))} and len(outlined_cells(ax)) == 8
