"""Chapter 03 checks: the correct answers pass in strict mode, and every wrong answer in MISTAKES (each named
for the mistake it models, with a regular expression for the cause its hint must name) loses points on the sweep's
seeds (0-9; 0-99 under make test-deep), with a hint that names that cause.

The seed sweep grades in this process (`graded_in_process`: the sandbox's fork costs ~18 ms a check, the
grading itself a few ms); the functions an exercise switches off are switched off there too, exactly as in
the sandbox, and put back afterwards. The sandboxed path runs every mistake on the five SEEDS as well.

The answers live in this real file so the cutedsl-cpu tier can move them by source."""
import pytest

from cutekit import cute
from cutekit.checks import check, exercises, grading, sandbox

from verdicts import (HINT_SEEDS, SEEDS, assert_mistake_fails_naming_its_cause, assert_real_cutedsl_confirms_it,
                      assert_right_answer_earns_every_reference_point, assert_wrong_answer_loses_points_with_a_hint,
                      mistake_params, mistakes_per_exercise)


@pytest.fixture
def graded_in_process(monkeypatch):
    """grade() without the fork: the answer runs here, with the exercise's forbidden functions switched off
    while it runs and restored after."""
    asked = grading._ask_every_case

    def ask_here(exercise, answer, cases, parent):
        saved = {name: getattr(cute, name) for name in exercise.forbidden}
        try:
            grading._switch_off(exercise.forbidden, answer)
            return asked(exercise, answer, cases, parent)
        finally:
            for name, function in saved.items():
                setattr(cute, name, function)

    monkeypatch.setattr(grading, "_ask_every_case", ask_here)
    monkeypatch.setattr(grading, "run_isolated", lambda function, timeout=0: sandbox._call_capturing_output(function))


# ---- ch03.logical_divide_by_hand: zipped_by_hand(A, tiler), A = (M, N, L), tiler two or three 1-D layouts ----

def _zipped_modes(A, tiler, tile_of, rest_of, untouched="rest"):
    tiles, rests = [], []
    for index in range(len(A.shape)):
        mode = cute.get(A, mode=[index])
        if index < len(tiler):
            tiles.append(tile_of(mode, tiler[index], A))
            rests.append(rest_of(mode, tiler[index], A))
        elif untouched == "rest":
            rests.append(mode)
        elif untouched == "tile":
            tiles.append(mode)
    return cute.make_layout((tuple(t.shape for t in tiles), tuple(r.shape for r in rests)),
                            stride=(tuple(t.stride for t in tiles), tuple(r.stride for r in rests)))


def _tile(mode, B, A):
    return cute.composition(mode, B)


def _rest(mode, B, A):
    return cute.composition(mode, cute.complement(B, cute.size(mode)))


def zipped_by_hand(A, tiler):
    return _zipped_modes(A, tiler, _tile, _rest)


def divide_logical_grouping(A, tiler):
    """the old exercise's answer: section 2's divide, mode by mode, (tile, rest) kept in each mode"""
    parts = []
    for index in range(len(A.shape)):
        mode = cute.get(A, mode=[index])
        if index < len(tiler):
            B = tiler[index]
            rest = cute.complement(B, cute.size(mode))
            mode = cute.composition(mode, cute.make_layout((B.shape, rest.shape), stride=(B.stride, rest.stride)))
        parts.append(mode)
    return cute.make_layout(tuple(p.shape for p in parts), stride=tuple(p.stride for p in parts))


def divide_drops_the_undivided_mode(A, tiler):
    return _zipped_modes(A, tiler, _tile, _rest, untouched="dropped")


def divide_puts_the_undivided_mode_in_the_tile(A, tiler):
    return _zipped_modes(A, tiler, _tile, _rest, untouched="tile")


def divide_complement_up_to_the_whole_layout(A, tiler):
    return _zipped_modes(A, tiler, _tile,
                         lambda mode, B, A: cute.composition(mode, cute.complement(B, cute.size(A))))


def divide_not_read_through_the_layout(A, tiler):
    return _zipped_modes(A, tiler, lambda mode, B, A: B, lambda mode, B, A: cute.complement(B, cute.size(mode)))


def divide_rests_before_tiles(A, tiler):
    zipped = zipped_by_hand(A, tiler)
    return cute.make_layout((zipped.shape[1], zipped.shape[0]), stride=(zipped.stride[1], zipped.stride[0]))


def divide_tiler_modes_swapped(A, tiler):
    return zipped_by_hand(A, (tiler[1], tiler[0]) + tuple(tiler[2:]))


def divide_hard_coded_worked_example(A, tiler):
    return cute.make_layout(((3, 2), ((2, 2), 4, 3)), stride=((16, 1), ((8, 48), 2, 96)))


def divide_calls_the_switched_off_zipped_divide(A, tiler):
    return cute.zipped_divide(A, tiler)


# ---- ch03.tiler_from_picture ----

def tiler_from_picture(picture):
    rows, columns = len(picture), len(picture[0])
    tile_columns = next(n for n in range(1, columns + 1) if n == columns or picture[0][n] != picture[0][0])
    same_rows = [m for m in range(rows) if picture[m][0] == picture[0][0]]
    row_step = same_rows[1] - same_rows[0] if len(same_rows) > 1 else 1
    return (cute.make_layout(len(same_rows), stride=row_step), cute.make_layout(tile_columns, stride=1))


def tiler_ignores_skipped_rows(picture):
    rows, columns = len(picture), len(picture[0])
    tile_columns = next(n for n in range(1, columns + 1) if n == columns or picture[0][n] != picture[0][0])
    same_rows = [m for m in range(rows) if picture[m][0] == picture[0][0]]
    return (len(same_rows), tile_columns)


def tiler_swaps_rows_and_columns(picture):
    rows_tiler, columns_tiler = tiler_from_picture(picture)
    return (columns_tiler, rows_tiler)


def tiler_counts_tiles_not_tile_size(picture):
    rows, columns = len(picture), len(picture[0])
    tiles_across = len({picture[0][n] for n in range(columns)})
    tiles_down = len({picture[m][0] for m in range(rows)})
    return (tiles_down, tiles_across)


def tiler_hard_coded_worked_example(picture):
    return (2, 3)


def tiler_whole_matrix(picture):
    return (len(picture), len(picture[0]))


def tiler_one_layout_not_a_tuple(picture):
    rows_tiler, columns_tiler = tiler_from_picture(picture)
    return cute.make_layout(cute.size(rows_tiler) * cute.size(columns_tiler))


# ---- ch03.predict_zipped: zipped_text(shape, stride, tiler) for column-major, row-major and padded matrices ----

def _zipped(tile, rest, tile_steps, rest_steps, zero_size_one=True):
    steps = [d if s > 1 or not zero_size_one else 0 for s, d in zip(tile + rest, tile_steps + rest_steps)]
    return f"(({tile[0]},{tile[1]}),({rest[0]},{rest[1]})):(({steps[0]},{steps[1]}),({steps[2]},{steps[3]}))"


def zipped_text(shape, stride, tiler):
    (M, N), (down, across), (tile_m, tile_n) = shape, stride, tiler
    return _zipped((tile_m, tile_n), (M // tile_m, N // tile_n), (down, across), (tile_m * down, tile_n * across))


def zipped_copies_section_5_row_major(shape, stride, tiler):
    """section 5's pattern: the strides of an unpadded row-major matrix, whatever `stride` says"""
    (M, N), (tm, tn) = shape, tiler
    return f"(({tm},{tn}),({M // tm},{N // tn})):(({N},1),({tm * N},{tn}))"


def zipped_ignores_the_padding(shape, stride, tiler):
    """the unpadded matrix's strides, in the right order"""
    (M, N), (tm, tn) = shape, tiler
    row_major = stride[1] == 1
    return _zipped((tm, tn), (M // tm, N // tn), (N, 1) if row_major else (1, M),
                   (tm * N, tn) if row_major else (tm, tn * M))


def zipped_rest_is_tile_size(shape, stride, tiler):
    (a, b), (tm, tn) = stride, tiler
    return _zipped((tm, tn), (tm, tn), (a, b), (tm * a, tn * b))


def zipped_rest_stride_one_row(shape, stride, tiler):
    (M, N), (a, b), (tm, tn) = shape, stride, tiler
    return _zipped((tm, tn), (M // tm, N // tn), (a, b), (a, b))


def zipped_tile_step_is_the_tile_height(shape, stride, tiler):
    (M, N), (a, b), (tm, tn) = shape, stride, tiler
    return _zipped((tm, tn), (M // tm, N // tn), (a, b), (tm, tn))


def zipped_keeps_the_stride_of_a_size_one_mode(shape, stride, tiler):
    (M, N), (a, b), (tm, tn) = shape, stride, tiler
    return _zipped((tm, tn), (M // tm, N // tn), (a, b), (tm * a, tn * b), zero_size_one=False)


def zipped_logical_grouping(shape, stride, tiler):
    (M, N), (a, b), (tm, tn) = shape, stride, tiler
    return f"(({tm},{M // tm}),({tn},{N // tn})):(({a},{tm * a}),({b},{tn * b}))"


def zipped_coordinate_order_swapped(shape, stride, tiler):
    (M, N), (a, b), (tm, tn) = shape, stride, tiler
    return _zipped((tn, tm), (N // tn, M // tm), (b, a), (tn * b, tm * a))


def zipped_hard_coded_worked_example(shape, stride, tiler):
    return "((4,3),(2,4)):((1,8),(4,24))"


# ---- ch03.slice_block: block_tile(tensor, tiler, block) for a batch (M, N, L), with logical_divide ----

def _block_coordinate(by_mode, block, decode="column-major"):
    if not isinstance(block, int):
        return tuple(block)
    down, across, batch = cute.size(by_mode, mode=[0, 1]), cute.size(by_mode, mode=[1, 1]), cute.size(by_mode, mode=[2])
    if decode == "row-major":
        return ((block // across) % down, block % across, block // (down * across))
    if decode == "batch first":
        return ((block // batch) % down, block // (batch * down), block % batch)
    if decode == "no batch":
        return (block % down, block // down, 0)
    return (block % down, (block // down) % across, block // (down * across))


def _block_slice(tensor, tiler, block, decode="column-major", where=lambda bm, bn, l: ((None, bm), (None, bn), l)):
    by_mode = cute.logical_divide(tensor, tiler)
    return by_mode[where(*_block_coordinate(by_mode, block, decode))]


def block_tile(tensor, tiler, block):
    return _block_slice(tensor, tiler, block)


def block_numbers_tiles_row_major(tensor, tiler, block):
    return _block_slice(tensor, tiler, block, "row-major")


def block_counts_the_batch_first(tensor, tiler, block):
    return _block_slice(tensor, tiler, block, "batch first")


def block_decodes_as_if_two_modes(tensor, tiler, block):
    """section 6's two-mode decoding, (b % RestM, b // RestM), in matrix 0"""
    return _block_slice(tensor, tiler, block, "no batch")


def block_always_matrix_0(tensor, tiler, block):
    return _block_slice(tensor, tiler, block, where=lambda bm, bn, l: ((None, bm), (None, bn), 0))


def block_swaps_the_coordinate(tensor, tiler, block):
    return _block_slice(tensor, tiler, block, where=lambda bm, bn, l: ((None, bn), (None, bm), l))


def block_fixes_the_tile_part_not_the_rest(tensor, tiler, block):
    return _block_slice(tensor, tiler, block, where=lambda bm, bn, l: ((bm, None), (bn, None), l))


def block_keeps_the_batch_whole(tensor, tiler, block):
    return _block_slice(tensor, tiler, block, where=lambda bm, bn, l: ((None, bm), (None, bn), None))


def block_always_the_first(tensor, tiler, block):
    return cute.logical_divide(tensor, tiler)[((None, 0), (None, 0), 0)]


def block_returns_the_whole_division(tensor, tiler, block):
    return cute.logical_divide(tensor, tiler)


def block_calls_the_switched_off_zipped_divide(tensor, tiler, block):
    return cute.zipped_divide(tensor, tiler)[((None, None), block)]


def block_calls_the_switched_off_local_tile(tensor, tiler, block):
    return cute.local_tile(tensor, tiler, block)


# ---- ch03.tile_predicate: inside(shape, tiler, block), tiler two (size, stride) pairs, one strided ----

def _strided_tile(shape, tiler, block):
    layouts = tuple(cute.make_layout(size, stride=step) for size, step in tiler)
    return cute.zipped_divide(cute.make_identity_tensor(shape), layouts)[((None, None), block)]


def _over_tile(tiler, element):
    (tile_m, _), (tile_n, _) = tiler
    return [[element(i, j) for j in range(tile_n)] for i in range(tile_m)]


def inside(shape, tiler, block):
    tile = _strided_tile(shape, tiler, block)
    return _over_tile(tiler, lambda i, j: all(c < s for c, s in zip(tile[(i, j)], shape)))


def inside_compares_with_less_or_equal(shape, tiler, block):
    tile = _strided_tile(shape, tiler, block)
    return _over_tile(tiler, lambda i, j: tile[(i, j)][0] <= shape[0] and tile[(i, j)][1] <= shape[1])


def inside_says_every_element_is_inside(shape, tiler, block):
    return _over_tile(tiler, lambda i, j: True)


def inside_always_block_zero(shape, tiler, block):
    return inside(shape, tiler, 0)


def inside_compares_only_the_row(shape, tiler, block):
    tile = _strided_tile(shape, tiler, block)
    return _over_tile(tiler, lambda i, j: tile[(i, j)][0] < shape[0])


def inside_compares_only_the_column(shape, tiler, block):
    tile = _strided_tile(shape, tiler, block)
    return _over_tile(tiler, lambda i, j: tile[(i, j)][1] < shape[1])


def inside_ignores_the_strides(shape, tiler, block):
    """section 7's cell with the sizes: zipped_divide by (tile_m, tile_n)"""
    (tile_m, _), (tile_n, _) = tiler
    tile = cute.zipped_divide(cute.make_identity_tensor(shape), (tile_m, tile_n))[((None, None), block)]
    return _over_tile(tiler, lambda i, j: all(c < s for c, s in zip(tile[(i, j)], shape)))


def inside_rows_and_columns_swapped(shape, tiler, block):
    mask = inside(shape, tiler, block)
    return [list(column) for column in zip(*mask)]


def inside_compares_tile_coordinates_not_tensor_coordinates(shape, tiler, block):
    return _over_tile(tiler, lambda i, j: i < shape[0] and j < shape[1])


def inside_calls_the_switched_off_elem_less(shape, tiler, block):
    tile = _strided_tile(shape, tiler, block)
    return _over_tile(tiler, lambda i, j: cute.elem_less(tile[(i, j)], shape))


def inside_calls_the_switched_off_local_tile(shape, tiler, block):
    layouts = tuple(cute.make_layout(size, stride=step) for size, step in tiler)
    tile = cute.local_tile(cute.make_identity_tensor(shape), layouts, block)
    return _over_tile(tiler, lambda i, j: all(c < s for c, s in zip(tile[(i, j)], shape)))


CORRECT = {
    "ch03.logical_divide_by_hand": zipped_by_hand,
    "ch03.tiler_from_picture": tiler_from_picture,
    "ch03.predict_zipped": zipped_text,
    "ch03.slice_block": block_tile,
    "ch03.tile_predicate": inside,
}

# (exercise, mistake, wrong answer, what the hint must name)
MISTAKES = [
    ("ch03.logical_divide_by_hand", "logical_grouping", divide_logical_grouping, r"logical_divide's grouping"),
    ("ch03.logical_divide_by_hand", "drops_the_undivided_mode", divide_drops_the_undivided_mode,
     r"batch mode .* is missing"),
    ("ch03.logical_divide_by_hand", "puts_the_undivided_mode_in_the_tile", divide_puts_the_undivided_mode_in_the_tile,
     r"batch mode .* in the tile"),
    ("ch03.logical_divide_by_hand", "complement_up_to_the_whole_layout", divide_complement_up_to_the_whole_layout,
     r"complement.*up to the size of that mode"),
    ("ch03.logical_divide_by_hand", "not_read_through_the_layout", divide_not_read_through_the_layout,
     r"not read through A"),
    ("ch03.logical_divide_by_hand", "rests_before_tiles", divide_rests_before_tiles, r"tiles first"),
    ("ch03.logical_divide_by_hand", "tiler_modes_swapped", divide_tiler_modes_swapped, r"tiler\[i\] divides mode i"),
    ("ch03.logical_divide_by_hand", "hard_coded_worked_example", divide_hard_coded_worked_example,
     r"example's divide"),
    ("ch03.logical_divide_by_hand", "calls_the_switched_off_zipped_divide",
     divide_calls_the_switched_off_zipped_divide, r"zipped_divide is switched off"),
    ("ch03.tiler_from_picture", "ignores_skipped_rows", tiler_ignores_skipped_rows, r"row layout needs a stride"),
    ("ch03.tiler_from_picture", "swaps_rows_and_columns", tiler_swaps_rows_and_columns,
     r"rows and columns swapped"),
    ("ch03.tiler_from_picture", "counts_tiles_not_tile_size", tiler_counts_tiles_not_tile_size,
     r"number of tiles"),
    ("ch03.tiler_from_picture", "hard_coded_worked_example", tiler_hard_coded_worked_example, r"every picture"),
    ("ch03.tiler_from_picture", "whole_matrix", tiler_whole_matrix, r"whole matrix"),
    ("ch03.tiler_from_picture", "one_layout_not_a_tuple", tiler_one_layout_not_a_tuple,
     r"single layout .* one-dimensional"),
    ("ch03.predict_zipped", "copies_section_5_row_major", zipped_copies_section_5_row_major,
     r"unpadded row-major matrix.*the `stride` you are given"),
    ("ch03.predict_zipped", "ignores_the_padding", zipped_ignores_the_padding, r"this one is padded"),
    ("ch03.predict_zipped", "rest_is_the_tile_size", zipped_rest_is_tile_size, r"the rest counts tiles"),
    ("ch03.predict_zipped", "rest_stride_one_row", zipped_rest_stride_one_row,
     r"a whole tile down or across, not one row"),
    ("ch03.predict_zipped", "tile_step_down_is_the_tile_height", zipped_tile_step_is_the_tile_height,
     r"tile_m rows of the matrix.*not tile_m elements"),
    ("ch03.predict_zipped", "keeps_the_stride_of_a_size_one_mode", zipped_keeps_the_stride_of_a_size_one_mode,
     r"mode of size 1 .* prints 0"),
    ("ch03.predict_zipped", "logical_grouping_not_zipped", zipped_logical_grouping, r"logical_divide's grouping"),
    ("ch03.predict_zipped", "coordinate_order_swapped", zipped_coordinate_order_swapped, r"rows first"),
    ("ch03.predict_zipped", "hard_coded_worked_example", zipped_hard_coded_worked_example, r"example's text"),
    ("ch03.slice_block", "numbers_tiles_row_major", block_numbers_tiles_row_major, r"row-major"),
    ("ch03.slice_block", "counts_the_batch_first", block_counts_the_batch_first, r"counted the batch first"),
    ("ch03.slice_block", "decodes_as_if_two_modes", block_decodes_as_if_two_modes, r"as if the rest had two modes"),
    ("ch03.slice_block", "always_matrix_0", block_always_matrix_0, r"always take matrix 0"),
    ("ch03.slice_block", "coordinate_order_swapped", block_swaps_the_coordinate, r"\(bn, bm\)"),
    ("ch03.slice_block", "fixes_the_tile_part_not_the_rest", block_fixes_the_tile_part_not_the_rest,
     r"fixed the tile part"),
    ("ch03.slice_block", "keeps_the_batch_whole", block_keeps_the_batch_whole, r"kept the batch mode whole"),
    ("ch03.slice_block", "always_the_first_tile", block_always_the_first, r"tile 0 whatever the block"),
    ("ch03.slice_block", "returns_the_whole_division", block_returns_the_whole_division, r"whole divided tensor"),
    ("ch03.slice_block", "calls_the_switched_off_zipped_divide", block_calls_the_switched_off_zipped_divide,
     r"zipped_divide is switched off"),
    ("ch03.slice_block", "calls_the_switched_off_local_tile", block_calls_the_switched_off_local_tile,
     r"local_tile is switched off"),
    ("ch03.tile_predicate", "less_or_equal_off_by_one", inside_compares_with_less_or_equal, r"not <="),
    ("ch03.tile_predicate", "every_element_inside", inside_says_every_element_is_inside,
     r"the elements outside must be False"),
    ("ch03.tile_predicate", "always_block_zero", inside_always_block_zero, r"block 0's mask"),
    ("ch03.tile_predicate", "compares_only_the_row", inside_compares_only_the_row,
     r"compared only the row"),
    ("ch03.tile_predicate", "compares_only_the_column", inside_compares_only_the_column,
     r"compared only the column"),
    ("ch03.tile_predicate", "ignores_the_strides", inside_ignores_the_strides, r"sizes alone.*strides"),
    ("ch03.tile_predicate", "rows_and_columns_swapped", inside_rows_and_columns_swapped,
     r"mask\[i\]\[j\] is tile element \(i, j\)"),
    ("ch03.tile_predicate", "tile_coordinates_not_tensor_coordinates",
     inside_compares_tile_coordinates_not_tensor_coordinates, r"coordinate in the whole tensor"),
    ("ch03.tile_predicate", "calls_the_switched_off_elem_less", inside_calls_the_switched_off_elem_less,
     r"elem_less is switched off"),
    ("ch03.tile_predicate", "calls_the_switched_off_local_tile", inside_calls_the_switched_off_local_tile,
     r"local_tile is switched off"),
]


def test_every_chapter_03_exercise_has_a_correct_answer_and_four_named_mistakes():
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch03"]
    assert len(ids) >= 5 and set(ids) == set(CORRECT)
    counts = mistakes_per_exercise(MISTAKES)
    assert all(counts[exercise_id] >= 4 for exercise_id in ids), counts


@pytest.mark.parametrize("exercise_id", sorted(CORRECT))
@pytest.mark.parametrize("seed", SEEDS)
def test_correct_answer_earns_every_reference_point_in_strict_mode(exercise_id, seed, monkeypatch):
    assert_right_answer_earns_every_reference_point(exercise_id, CORRECT[exercise_id], seed, monkeypatch)


@pytest.mark.parametrize("exercise_id", sorted(CORRECT))
def test_correct_answer_passes_on_every_hint_seed(exercise_id, graded_in_process, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    for seed in HINT_SEEDS:
        result = check(exercise_id, CORRECT[exercise_id], seed=seed, record=False)
        assert result.passed, f"seed {seed}: {result}"


@pytest.mark.cutedsl
@pytest.mark.parametrize("exercise_id", sorted(CORRECT))
def test_correct_answer_is_confirmed_by_real_cutedsl_in_strict_mode(exercise_id, monkeypatch):
    assert_real_cutedsl_confirms_it(exercise_id, CORRECT[exercise_id], monkeypatch)


@pytest.mark.cutedsl
def test_elem_less_fails_under_real_cutedsl_where_plain_comparisons_pass(monkeypatch):
    """In CuTeDSL elem_less gives a run-time Boolean, so an answer built on it cannot give bools: the
    cutedsl-cpu criterion, which runs the learner's own function there, says so."""
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    from cutekit.checks import ch03_divide
    from cutekit.checks.grading import Context, Outcome
    case = {"shape": (10, 12), "tiler": ((4, 2), (8, 1)), "block": 3}
    for answer, ok in ((inside, True), (inside_calls_the_switched_off_elem_less, False)):
        context = Context(None, 0, (Outcome(case, value=inside(**case)),), answer)
        verdict = ch03_divide._cutedsl_runs_your_predicate(context)
        assert verdict.passed == ok, verdict.hint
        if not ok:
            assert "run-time Boolean" in verdict.hint


@pytest.mark.parametrize("exercise_id,answer,cause", mistake_params(MISTAKES))
def test_mistake_loses_points_in_the_sandbox(exercise_id, answer, cause, monkeypatch):
    assert_wrong_answer_loses_points_with_a_hint(exercise_id, answer, SEEDS, monkeypatch)


@pytest.mark.parametrize("exercise_id,answer,cause", mistake_params(MISTAKES))
def test_mistake_fails_naming_its_cause_on_every_seed(exercise_id, answer, cause, graded_in_process, monkeypatch):
    assert_mistake_fails_naming_its_cause(exercise_id, answer, cause, HINT_SEEDS, monkeypatch)


def test_hard_coded_answers_are_right_for_the_worked_examples_they_copy():
    """The mistakes are fair models: each is right for the example the notebook shows."""
    batch = cute.make_layout((12, 8, 3), stride=(8, 1, 96))
    tiler = (cute.make_layout(3, stride=2), cute.make_layout(2, stride=1))
    assert str(divide_hard_coded_worked_example(batch, tiler)) == str(zipped_by_hand(batch, tiler)) == \
        str(cute.zipped_divide(batch, tiler))
    assert zipped_hard_coded_worked_example((8, 12), (1, 8), (4, 3)) == zipped_text((8, 12), (1, 8), (4, 3)) == \
        str(cute.zipped_divide(cute.make_layout((8, 12), stride=(1, 8)), (4, 3)))
    assert zipped_copies_section_5_row_major((256, 512), (512, 1), (16, 128)) == \
        zipped_text((256, 512), (512, 1), (16, 128)) == "((16,128),(16,4)):((512,1),(8192,128))"


def test_the_logical_divide_slice_is_the_zipped_divide_slice():
    tensor = cute.make_identity_tensor((10, 12, 3))
    for block in range(18):
        assert str(block_tile(tensor, (4, 8), block)) == str(cute.zipped_divide(tensor, (4, 8))[((None, None), block)])
    assert str(block_tile(tensor, (4, 8), 13)) == "tensor<(4,0,2) o (4,8):(1@0,1@1)>"
