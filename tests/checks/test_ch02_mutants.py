"""Chapter 02 checks: every correct answer passes in strict mode, and every wrong answer below (each named for
the mistake it models) loses points, with a hint, on every seed tried.

The answers live in this real file on purpose: the cutedsl-cpu tier moves an answer to CuTeDSL by its source."""
import pytest

from cutekit import cute
from cutekit.checks import check, exercises

from verdicts import assert_real_cutedsl_confirms_it, assert_right_answer_earns_every_reference_point, assert_wrong_answer_loses_points_with_a_hint, mutant_params, SEEDS

# ---- ch02.tv_from_picture: tv_from_picture(owner, thread_shape, value_shape) ----


def _where(owner):
    """{(thread, value): column-major tile index} read off the picture."""
    rows = len(owner)
    return {owner[m][n]: m + n * rows for m in range(rows) for n in range(len(owner[0]))}


def tv_from_picture(owner, thread_shape, value_shape):
    where = _where(owner)
    p, q = thread_shape
    r, s = value_shape
    # values first: thread 0's value 1 and value r; then threads: value 0 of thread 1 and thread p
    stride = ((where[(1, 0)], where[(p, 0)]), (where[(0, 1)], where[(0, r)]))
    return cute.make_layout((thread_shape, value_shape), stride=stride)


def tv_from_picture_row_major_index(owner, thread_shape, value_shape):
    columns = len(owner[0])
    where = {owner[m][n]: m * columns + n for m in range(len(owner)) for n in range(columns)}
    p, q = thread_shape
    r, s = value_shape
    stride = ((where[(1, 0)], where[(p, 0)]), (where[(0, 1)], where[(0, r)]))
    return cute.make_layout((thread_shape, value_shape), stride=stride)


def tv_from_picture_values_first(owner, thread_shape, value_shape):
    where = _where(owner)
    p, q = thread_shape
    r, s = value_shape
    stride = ((where[(0, 1)], where[(0, r)]), (where[(1, 0)], where[(p, 0)]))
    return cute.make_layout((value_shape, thread_shape), stride=stride)


def tv_from_picture_flat_thread_stride(owner, thread_shape, value_shape):
    """Treats the threads as one run of equal steps (thread t at t x the step of thread 1)."""
    where = _where(owner)
    p, q = thread_shape
    r, s = value_shape
    stride = ((where[(1, 0)], p * where[(1, 0)]), (where[(0, 1)], where[(0, r)]))
    return cute.make_layout((thread_shape, value_shape), stride=stride)


def tv_from_picture_swapped_value_strides(owner, thread_shape, value_shape):
    where = _where(owner)
    p, q = thread_shape
    r, s = value_shape
    stride = ((where[(1, 0)], where[(p, 0)]), (where[(0, r)], where[(0, 1)]))
    return cute.make_layout((thread_shape, value_shape), stride=stride)


def tv_from_picture_worked_example_only(owner, thread_shape, value_shape):
    return cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4)))


def tv_from_picture_returns_the_value_layout(owner, thread_shape, value_shape):
    where = _where(owner)
    r, s = value_shape
    return cute.make_layout(value_shape, stride=(where[(0, 1)], where[(0, r)]))


# ---- ch02.tiler_for: tiler_for(thread_shape, value_shape) ----

def tiler_for(thread_shape, value_shape):
    return (thread_shape[0] * value_shape[0], thread_shape[1] * value_shape[1])


def tiler_for_swapped(thread_shape, value_shape):
    return (thread_shape[1] * value_shape[1], thread_shape[0] * value_shape[0])


def tiler_for_values_then_threads(thread_shape, value_shape):
    """The seed's footnote: 'the tiler is (num_vals, num_thrs)'."""
    return (value_shape[0] * value_shape[1], thread_shape[0] * thread_shape[1])


def tiler_for_threads_only(thread_shape, value_shape):
    return tuple(thread_shape)


def tiler_for_seed_formula(thread_shape, value_shape):
    """The seed's (4 * 128 // width, 128): thread rows x values per row, then the thread count."""
    return (thread_shape[0] * value_shape[1], thread_shape[0] * thread_shape[1])


def tiler_for_added(thread_shape, value_shape):
    return (thread_shape[0] + value_shape[0], thread_shape[1] + value_shape[1])


def tiler_for_worked_example_only(thread_shape, value_shape):
    return (16, 128)


def tiler_for_calls_make_layout_tv(thread_shape, value_shape):
    threads = cute.make_ordered_layout(thread_shape, order=(1, 0))
    values = cute.make_ordered_layout(value_shape, order=(1, 0))
    return tuple(cute.make_layout_tv(threads, values)[0])


# ---- ch02.thread_owns: owned_by(tv_layout, tiler, thread) ----

def owned_by(tv_layout, tiler, thread):
    rows = tiler[0]
    indices = [tv_layout((thread, value)) for value in range(cute.size(tv_layout, mode=[1]))]
    return [(index % rows, index // rows) for index in indices]


def owned_by_returns_indices(tv_layout, tiler, thread):
    return [tv_layout((thread, value)) for value in range(cute.size(tv_layout, mode=[1]))]


def owned_by_row_major_unfolding(tv_layout, tiler, thread):
    columns = tiler[1]
    indices = [tv_layout((thread, value)) for value in range(cute.size(tv_layout, mode=[1]))]
    return [(index // columns, index % columns) for index in indices]


def owned_by_column_then_row(tv_layout, tiler, thread):
    return [(n, m) for m, n in owned_by(tv_layout, tiler, thread)]


def owned_by_sorted(tv_layout, tiler, thread):
    return sorted(owned_by(tv_layout, tiler, thread))


def owned_by_thread_zero(tv_layout, tiler, thread):
    """Forgets the thread: lists thread 0's elements."""
    return owned_by(tv_layout, tiler, 0)


def owned_by_worked_example_only(tv_layout, tiler, thread):
    return [(2, 0), (3, 0), (2, 1), (3, 1), (2, 2), (3, 2)]


def owned_by_calls_idx2crd(tv_layout, tiler, thread):
    return [cute.idx2crd(tv_layout((thread, value)), tiler) for value in range(cute.size(tv_layout, mode=[1]))]


# ---- ch02.layout_tv_for_dtype: elementwise_tv(bits, thread_rows, value_rows) ----

def elementwise_tv(bits, thread_rows, value_rows):
    vector = 128 // bits
    rows = thread_rows * value_rows
    # thread t sits at row t // 32, column t % 32 of the thread grid: 32 threads along a row first
    tv = cute.make_layout(((32, thread_rows), (vector, value_rows)),
                          stride=((rows * vector, value_rows), (rows, 1)))
    return (rows, 32 * vector), tv


def elementwise_tv_seed_tiler(bits, thread_rows, value_rows):
    tiler, tv = elementwise_tv(bits, thread_rows, value_rows)
    return (thread_rows * 128 // bits, thread_rows * 32), tv


def elementwise_tv_fixed_vector_of_four(bits, thread_rows, value_rows):
    """Keeps fp32's 4 values per access whatever the type."""
    return elementwise_tv(32, thread_rows, value_rows)


def elementwise_tv_thread_modes_swapped(bits, thread_rows, value_rows):
    vector = 128 // bits
    rows = thread_rows * value_rows
    tv = cute.make_layout(((thread_rows, 32), (vector, value_rows)),
                          stride=((value_rows, rows * vector), (rows, 1)))
    return (rows, 32 * vector), tv


def elementwise_tv_row_major_tile_index(bits, thread_rows, value_rows):
    vector = 128 // bits
    rows, columns = thread_rows * value_rows, 32 * vector
    tv = cute.make_layout(((32, thread_rows), (vector, value_rows)),
                          stride=((vector, value_rows * columns), (1, columns)))
    return (rows, columns), tv


def elementwise_tv_worked_example_only(bits, thread_rows, value_rows):
    return (16, 128), cute.make_layout(((32, 4), (4, 4)), stride=((64, 4), (16, 1)))


def elementwise_tv_calls_make_layout_tv(bits, thread_rows, value_rows):
    threads = cute.make_ordered_layout((thread_rows, 32), order=(1, 0))
    values = cute.make_ordered_layout((value_rows, 128 // bits), order=(1, 0))
    return cute.make_layout_tv(threads, values)


CORRECT = {
    "ch02.tv_from_picture": tv_from_picture,
    "ch02.tiler_for": tiler_for,
    "ch02.thread_owns": owned_by,
    "ch02.layout_tv_for_dtype": elementwise_tv,
}

MUTANTS = [
    ("ch02.tv_from_picture", "row_major_tile_index", tv_from_picture_row_major_index),
    ("ch02.tv_from_picture", "values_before_threads", tv_from_picture_values_first),
    ("ch02.tv_from_picture", "threads_as_one_equal_step", tv_from_picture_flat_thread_stride),
    ("ch02.tv_from_picture", "swapped_value_strides", tv_from_picture_swapped_value_strides),
    ("ch02.tv_from_picture", "hard_coded_worked_example", tv_from_picture_worked_example_only),
    ("ch02.tv_from_picture", "returns_the_value_layout_only", tv_from_picture_returns_the_value_layout),
    ("ch02.tiler_for", "rows_and_columns_swapped", tiler_for_swapped),
    ("ch02.tiler_for", "values_then_threads_as_the_seed_footnote_says", tiler_for_values_then_threads),
    ("ch02.tiler_for", "thread_grid_only", tiler_for_threads_only),
    ("ch02.tiler_for", "the_seed_formula", tiler_for_seed_formula),
    ("ch02.tiler_for", "adds_instead_of_multiplying", tiler_for_added),
    ("ch02.tiler_for", "hard_coded_worked_example", tiler_for_worked_example_only),
    ("ch02.tiler_for", "calls_the_switched_off_make_layout_tv", tiler_for_calls_make_layout_tv),
    ("ch02.thread_owns", "returns_tile_indices", owned_by_returns_indices),
    ("ch02.thread_owns", "unfolds_row_major", owned_by_row_major_unfolding),
    ("ch02.thread_owns", "column_then_row", owned_by_column_then_row),
    ("ch02.thread_owns", "sorted_not_in_value_order", owned_by_sorted),
    ("ch02.thread_owns", "lists_thread_zero_whatever_the_thread", owned_by_thread_zero),
    ("ch02.thread_owns", "hard_coded_worked_example", owned_by_worked_example_only),
    ("ch02.thread_owns", "calls_the_switched_off_idx2crd", owned_by_calls_idx2crd),
    ("ch02.layout_tv_for_dtype", "the_seed_tiler_formula", elementwise_tv_seed_tiler),
    ("ch02.layout_tv_for_dtype", "four_values_whatever_the_type", elementwise_tv_fixed_vector_of_four),
    ("ch02.layout_tv_for_dtype", "thread_rows_fastest", elementwise_tv_thread_modes_swapped),
    ("ch02.layout_tv_for_dtype", "row_major_tile_index", elementwise_tv_row_major_tile_index),
    ("ch02.layout_tv_for_dtype", "hard_coded_worked_example", elementwise_tv_worked_example_only),
    ("ch02.layout_tv_for_dtype", "calls_the_switched_off_make_layout_tv", elementwise_tv_calls_make_layout_tv),
]



def test_every_chapter_02_exercise_has_a_correct_answer_and_five_wrong_ones():
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch02"]
    assert len(ids) >= 4 and set(ids) == set(CORRECT)
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
    tv = cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4)))
    owner = [[None] * 6 for _ in range(4)]
    for thread in range(4):
        for value in range(6):
            index = tv((thread, value))
            owner[index % 4][index // 4] = (thread, value)
    assert str(tv_from_picture(owner, (2, 2), (2, 3))) == str(tv)
    assert str(tv_from_picture_worked_example_only(owner, (2, 2), (2, 3))) == str(tv)
    assert tiler_for_worked_example_only((4, 32), (4, 4)) == tiler_for((4, 32), (4, 4)) == (16, 128)
    assert owned_by_worked_example_only(tv, (4, 6), 1) == owned_by(tv, (4, 6), 1)
    assert str(elementwise_tv_worked_example_only(32, 4, 4)) == str(elementwise_tv(32, 4, 4)) == \
        "((16, 128), ((32,4),(4,4)):((64,4),(16,1)))"


def test_the_seed_tiler_formula_is_right_for_fp32_and_wrong_for_fp16():
    """Why the seed's (4 * 128 // width, 128) survived: it happens to be right for fp32."""
    assert elementwise_tv_seed_tiler(32, 4, 4)[0] == elementwise_tv(32, 4, 4)[0] == (16, 128)
    assert elementwise_tv_seed_tiler(16, 4, 4)[0] == (32, 128) != elementwise_tv(16, 4, 4)[0] == (16, 256)


def test_a_row_major_reading_gets_the_hint_that_names_it(monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    result = check("ch02.thread_owns", owned_by_row_major_unfolding, seed=3)
    assert "CuTe's tile is column-major" in str(result)


def test_switching_make_layout_tv_off_for_a_check_leaves_the_notebooks_cute_whole(monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    original = cute.make_layout_tv
    check("ch02.tiler_for", tiler_for_calls_make_layout_tv, seed=0)
    assert cute.make_layout_tv is original
