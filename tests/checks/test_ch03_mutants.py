"""Chapter 03 checks: the correct answers pass in strict mode, and every wrong answer below (each named for
the mistake it models) loses points with a hint, on every seed tried. The answers live in this real file so
the cutedsl-cpu tier can move them by source."""
import pytest

from cutekit import cute
from cutekit.checks import check, exercises

from verdicts import assert_real_cutedsl_confirms_it, assert_right_answer_earns_every_reference_point, assert_wrong_answer_loses_points_with_a_hint, mutant_params, SEEDS


# ---- ch03.logical_divide_by_hand ----

def divide_by_hand(A, B):
    rest = cute.complement(B, cute.size(A))
    return cute.composition(A, cute.make_layout((B.shape, rest.shape), stride=(B.stride, rest.stride)))


def divide_returns_the_tiler_and_complement_uncomposed(A, B):
    rest = cute.complement(B, cute.size(A))
    return cute.make_layout((B.shape, rest.shape), stride=(B.stride, rest.stride))


def divide_takes_complement_of_the_wrong_size(A, B):
    rest = cute.complement(B, cute.size(B))
    return cute.composition(A, cute.make_layout((B.shape, rest.shape), stride=(B.stride, rest.stride)))


def divide_puts_rest_before_tile(A, B):
    rest = cute.complement(B, cute.size(A))
    return cute.composition(A, cute.make_layout((rest.shape, B.shape), stride=(rest.stride, B.stride)))


def divide_returns_only_the_tile(A, B):
    return cute.composition(A, B)


def divide_hard_coded_worked_example(A, B):
    return cute.make_layout((4, (2, 3)), stride=(2, (1, 8)))


def divide_calls_the_switched_off_logical_divide(A, B):
    return cute.logical_divide(A, B)


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


# ---- ch03.predict_zipped ----

def zipped_text(M, N, tile_m, tile_n):
    return f"(({tile_m},{tile_n}),({M // tile_m},{N // tile_n})):(({N},1),({tile_m * N},{tile_n}))"


def zipped_rest_is_tile_size(M, N, tile_m, tile_n):
    return f"(({tile_m},{tile_n}),({tile_m},{tile_n})):(({N},1),({tile_m * N},{tile_n}))"


def zipped_column_major_strides(M, N, tile_m, tile_n):
    return f"(({tile_m},{tile_n}),({M // tile_m},{N // tile_n})):((1,{M}),({tile_m},{tile_n * M}))"


def zipped_tile_step_is_the_tile_width(M, N, tile_m, tile_n):
    return f"(({tile_m},{tile_n}),({M // tile_m},{N // tile_n})):(({N},1),({tile_m},{tile_n}))"


def zipped_logical_grouping(M, N, tile_m, tile_n):
    return f"(({tile_m},{M // tile_m}),({tile_n},{N // tile_n})):(({N},{tile_m * N}),(1,{tile_n}))"


def zipped_hard_coded_worked_example(M, N, tile_m, tile_n):
    return "((16,128),(16,4)):((512,1),(8192,128))"


def zipped_rest_stride_one_row(M, N, tile_m, tile_n):
    return f"(({tile_m},{tile_n}),({M // tile_m},{N // tile_n})):(({N},1),({N},{tile_n}))"


# ---- ch03.slice_block ----

def block_tile(tensor, tiler, block):
    return cute.zipped_divide(tensor, tiler)[((None, None), block)]


def block_slices_the_tile_mode(tensor, tiler, block):
    return cute.zipped_divide(tensor, tiler)[(block, (None, None))]


def block_numbers_tiles_row_major(tensor, tiler, block):
    divided = cute.zipped_divide(tensor, tiler)
    if isinstance(block, int):
        tiles_n = cute.size(divided, mode=[1, 1])
        block = (block // tiles_n, block % tiles_n)
    return divided[((None, None), block)]


def block_swaps_the_coordinate(tensor, tiler, block):
    if isinstance(block, tuple):
        block = (block[1], block[0])
    return cute.zipped_divide(tensor, tiler)[((None, None), block)]


def block_always_the_first(tensor, tiler, block):
    return cute.zipped_divide(tensor, tiler)[((None, None), 0)]


def block_returns_the_whole_division(tensor, tiler, block):
    return cute.zipped_divide(tensor, tiler)


def block_calls_the_switched_off_local_tile(tensor, tiler, block):
    return cute.local_tile(tensor, tiler, block)


# ---- ch03.tile_predicate ----

def inside(shape, tiler, block):
    tile = cute.zipped_divide(cute.make_identity_tensor(shape), tiler)[((None, None), block)]
    return [[cute.elem_less(tile[(i, j)], shape) for j in range(tiler[1])] for i in range(tiler[0])]


def inside_compares_with_less_or_equal(shape, tiler, block):
    tile = cute.zipped_divide(cute.make_identity_tensor(shape), tiler)[((None, None), block)]
    return [[tile[(i, j)][0] <= shape[0] and tile[(i, j)][1] <= shape[1] for j in range(tiler[1])]
            for i in range(tiler[0])]


def inside_says_every_element_is_inside(shape, tiler, block):
    return [[True] * tiler[1] for _ in range(tiler[0])]


def inside_always_block_zero(shape, tiler, block):
    return inside(shape, tiler, 0)


def inside_compares_only_the_row(shape, tiler, block):
    tile = cute.zipped_divide(cute.make_identity_tensor(shape), tiler)[((None, None), block)]
    return [[tile[(i, j)][0] < shape[0] for j in range(tiler[1])] for i in range(tiler[0])]


def inside_numbers_blocks_row_major(shape, tiler, block):
    if isinstance(block, int):
        tiles_n = -(-shape[1] // tiler[1])
        block = (block // tiles_n, block % tiles_n)
    return inside(shape, tiler, block)


def inside_rows_and_columns_swapped(shape, tiler, block):
    mask = inside(shape, tiler, block)
    return [[mask[i][j] for i in range(tiler[0])] for j in range(tiler[1])]


def inside_compares_tile_coordinates_not_tensor_coordinates(shape, tiler, block):
    return [[cute.elem_less((i, j), shape) for j in range(tiler[1])] for i in range(tiler[0])]


def inside_calls_the_switched_off_local_tile(shape, tiler, block):
    tile = cute.local_tile(cute.make_identity_tensor(shape), tiler, block)
    return [[cute.elem_less(tile[(i, j)], shape) for j in range(tiler[1])] for i in range(tiler[0])]


CORRECT = {
    "ch03.logical_divide_by_hand": divide_by_hand,
    "ch03.tiler_from_picture": tiler_from_picture,
    "ch03.predict_zipped": zipped_text,
    "ch03.slice_block": block_tile,
    "ch03.tile_predicate": inside,
}

MUTANTS = [
    ("ch03.logical_divide_by_hand", "returns_the_tiler_and_complement_uncomposed",
     divide_returns_the_tiler_and_complement_uncomposed),
    ("ch03.logical_divide_by_hand", "complement_of_the_wrong_size", divide_takes_complement_of_the_wrong_size),
    ("ch03.logical_divide_by_hand", "rest_before_tile", divide_puts_rest_before_tile),
    ("ch03.logical_divide_by_hand", "returns_only_the_tile", divide_returns_only_the_tile),
    ("ch03.logical_divide_by_hand", "hard_coded_worked_example", divide_hard_coded_worked_example),
    ("ch03.logical_divide_by_hand", "calls_the_switched_off_logical_divide",
     divide_calls_the_switched_off_logical_divide),
    ("ch03.tiler_from_picture", "ignores_skipped_rows", tiler_ignores_skipped_rows),
    ("ch03.tiler_from_picture", "swaps_rows_and_columns", tiler_swaps_rows_and_columns),
    ("ch03.tiler_from_picture", "counts_tiles_not_tile_size", tiler_counts_tiles_not_tile_size),
    ("ch03.tiler_from_picture", "hard_coded_worked_example", tiler_hard_coded_worked_example),
    ("ch03.tiler_from_picture", "whole_matrix", tiler_whole_matrix),
    ("ch03.tiler_from_picture", "one_layout_not_a_tuple", tiler_one_layout_not_a_tuple),
    ("ch03.predict_zipped", "rest_is_the_tile_size", zipped_rest_is_tile_size),
    ("ch03.predict_zipped", "column_major_strides", zipped_column_major_strides),
    ("ch03.predict_zipped", "tile_step_down_is_the_tile_height", zipped_tile_step_is_the_tile_width),
    ("ch03.predict_zipped", "logical_grouping_not_zipped", zipped_logical_grouping),
    ("ch03.predict_zipped", "hard_coded_worked_example", zipped_hard_coded_worked_example),
    ("ch03.predict_zipped", "rest_stride_one_row", zipped_rest_stride_one_row),
    ("ch03.slice_block", "slices_the_tile_mode", block_slices_the_tile_mode),
    ("ch03.slice_block", "numbers_tiles_row_major", block_numbers_tiles_row_major),
    ("ch03.slice_block", "swaps_the_coordinate", block_swaps_the_coordinate),
    ("ch03.slice_block", "always_the_first_tile", block_always_the_first),
    ("ch03.slice_block", "returns_the_whole_division", block_returns_the_whole_division),
    ("ch03.slice_block", "calls_the_switched_off_local_tile", block_calls_the_switched_off_local_tile),
    ("ch03.tile_predicate", "less_or_equal_off_by_one", inside_compares_with_less_or_equal),
    ("ch03.tile_predicate", "every_element_inside", inside_says_every_element_is_inside),
    ("ch03.tile_predicate", "always_block_zero", inside_always_block_zero),
    ("ch03.tile_predicate", "compares_only_the_row", inside_compares_only_the_row),
    ("ch03.tile_predicate", "numbers_blocks_row_major", inside_numbers_blocks_row_major),
    ("ch03.tile_predicate", "rows_and_columns_swapped", inside_rows_and_columns_swapped),
    ("ch03.tile_predicate", "tile_coordinates_not_tensor_coordinates",
     inside_compares_tile_coordinates_not_tensor_coordinates),
    ("ch03.tile_predicate", "calls_the_switched_off_local_tile", inside_calls_the_switched_off_local_tile),
]



def test_every_chapter_03_exercise_has_a_correct_answer_and_five_wrong_ones():
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch03"]
    assert len(ids) >= 5 and set(ids) == set(CORRECT)
    for exercise_id in ids:
        assert sum(1 for mutant in MUTANTS if mutant[0] == exercise_id) >= 5, exercise_id


@pytest.mark.parametrize("exercise_id", sorted(CORRECT))
@pytest.mark.parametrize("seed", SEEDS)
def test_correct_answer_earns_every_reference_point_in_strict_mode(exercise_id, seed, monkeypatch):
    assert_right_answer_earns_every_reference_point(exercise_id, CORRECT[exercise_id], seed, monkeypatch)


@pytest.mark.cutedsl
@pytest.mark.parametrize("exercise_id", sorted(CORRECT))
def test_correct_answer_is_confirmed_by_real_cutedsl_in_strict_mode(exercise_id, monkeypatch):
    assert_real_cutedsl_confirms_it(exercise_id, CORRECT[exercise_id], monkeypatch)


@pytest.mark.parametrize("exercise_id,answer", mutant_params(MUTANTS))
def test_wrong_answer_loses_points_with_a_hint_on_every_seed(exercise_id, answer, monkeypatch):
    assert_wrong_answer_loses_points_with_a_hint(exercise_id, answer, SEEDS, monkeypatch)


def test_hard_coded_answers_are_right_for_the_worked_examples_they_copy():
    """The mutants are fair models: each is right for the example the notebook shows."""
    assert str(divide_hard_coded_worked_example(None, None)) == str(
        divide_by_hand(cute.make_layout(24), cute.make_layout(4, stride=2)))
    assert zipped_hard_coded_worked_example(256, 512, 16, 128) == zipped_text(256, 512, 16, 128)


def test_a_tiler_without_the_row_stride_gets_the_hint_that_names_it(monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    hints = " ".join(str(check("ch03.tiler_from_picture", tiler_ignores_skipped_rows, seed=seed)) for seed in SEEDS)
    assert "its row layout needs a stride" in hints


def test_a_row_major_tile_number_gets_the_hint_about_column_major_order(monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    result = check("ch03.slice_block", block_numbers_tiles_row_major, seed=0)
    assert "column-major" in str(result)


@pytest.mark.parametrize("answer,words", [
    (inside_compares_with_less_or_equal, "compare with <, not <="),
    (inside_numbers_blocks_row_major, "column-major"),
    (inside_compares_only_the_row, "both coordinates must be inside"),
    (inside_says_every_element_is_inside, "the elements outside must be False"),
])
def test_a_wrong_predicate_gets_the_hint_that_names_its_mistake(answer, words, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    hints = " ".join(str(check("ch03.tile_predicate", answer, seed=seed)) for seed in SEEDS)
    assert words in hints


def test_a_wrong_predicate_names_the_element_its_coordinate_and_the_shape(monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    text = str(check("ch03.tile_predicate", inside_says_every_element_is_inside, seed=0))
    assert "tile element (" in text and "of the tensor, which is outside shape (" in text and "you said inside" in text
