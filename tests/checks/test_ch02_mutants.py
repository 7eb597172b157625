"""Chapter 02 checks: every correct answer passes in strict mode, and every wrong answer in MISTAKES (each
named for the mistake it models, with a regular expression for the cause its hint must name) loses points
on the sweep's seeds (tests/checks/verdicts.py HINT_SEEDS: 0-9, 0-99 under make test-deep), with a hint that names that cause.

The seed sweep grades in this process (`graded_in_process`: the sandbox's fork costs ~18 ms a check, the
grading itself under 1 ms); the functions an exercise switches off are switched off there too, exactly as in
the sandbox, and put back afterwards. The sandboxed path runs every mistake on the five SEEDS as well.

The answers live in this real file on purpose: the cutedsl-cpu tier moves an answer to CuTeDSL by its source."""
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
    """Treats the threads as one run of equal steps (thread p at p x the step of thread 1)."""
    where = _where(owner)
    p, q = thread_shape
    r, s = value_shape
    stride = ((where[(1, 0)], p * where[(1, 0)]), (where[(0, 1)], where[(0, r)]))
    return cute.make_layout((thread_shape, value_shape), stride=stride)


def tv_from_picture_flat_value_stride(owner, thread_shape, value_shape):
    """Treats a thread's values as one run of equal steps (value r at r x the step of value 1)."""
    where = _where(owner)
    p, q = thread_shape
    r, s = value_shape
    stride = ((where[(1, 0)], where[(p, 0)]), (where[(0, 1)], r * where[(0, 1)]))
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


# ---- ch02.tiler_for: tiler_for(thread_layout, value_layout), row-major, column-major or nested layouts ----

def _sizes(layout):
    return cute.size(layout, mode=[0]), cute.size(layout, mode=[1])


def tiler_for(thread_layout, value_layout):
    (tm, tn), (vm, vn) = _sizes(thread_layout), _sizes(value_layout)
    return (tm * vm, tn * vn)


def tiler_for_swapped(thread_layout, value_layout):
    (tm, tn), (vm, vn) = _sizes(thread_layout), _sizes(value_layout)
    return (tn * vn, tm * vm)


def _first_stride(stride):
    return _first_stride(stride[0]) if isinstance(stride, tuple) else stride


def _rows_by_stride(layout):
    """the mode with stride 1 taken as the columns, as in a row-major grid"""
    rows, columns = _sizes(layout)
    s0, s1 = layout.stride
    return (columns, rows) if _first_stride(s0) < _first_stride(s1) else (rows, columns)


def tiler_for_orders_modes_by_stride(thread_layout, value_layout):
    (tm, tn), (vm, vn) = _rows_by_stride(thread_layout), _rows_by_stride(value_layout)
    return (tm * vm, tn * vn)


def _flat(shape):
    return [x for part in shape for x in (_flat(part) if isinstance(part, tuple) else [part])]


def tiler_for_flattened_shape(thread_layout, value_layout):
    """the first two numbers of each flattened shape, as if every layout were a plain (rows, columns)"""
    t, v = _flat(thread_layout.shape), _flat(value_layout.shape)
    return (t[0] * v[0], t[1] * v[1])


def tiler_for_values_then_threads(thread_layout, value_layout):
    """The notes' footnote: 'the tiler is (num_vals, num_thrs)'."""
    return (cute.size(value_layout), cute.size(thread_layout))


def tiler_for_threads_only(thread_layout, value_layout):
    return _sizes(thread_layout)


def tiler_for_value_block_only(thread_layout, value_layout):
    return _sizes(value_layout)


def tiler_for_added(thread_layout, value_layout):
    (tm, tn), (vm, vn) = _sizes(thread_layout), _sizes(value_layout)
    return (tm + vm, tn + vn)


def tiler_for_worked_example_only(thread_layout, value_layout):
    return (16, 32)


def tiler_for_calls_make_layout_tv(thread_layout, value_layout):
    return tuple(cute.make_layout_tv(thread_layout, value_layout)[0])


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


def owned_by_divides_by_the_columns(tv_layout, tiler, thread):
    columns = tiler[1]
    indices = [tv_layout((thread, value)) for value in range(cute.size(tv_layout, mode=[1]))]
    return [(index % columns, index // columns) for index in indices]


def owned_by_column_then_row(tv_layout, tiler, thread):
    return [(n, m) for m, n in owned_by(tv_layout, tiler, thread)]


def owned_by_sorted(tv_layout, tiler, thread):
    return sorted(owned_by(tv_layout, tiler, thread))


def owned_by_thread_zero(tv_layout, tiler, thread):
    """Forgets the thread: lists thread 0's elements."""
    return owned_by(tv_layout, tiler, 0)


def owned_by_worked_example_only(tv_layout, tiler, thread):
    return [(0, 3), (1, 3), (0, 4), (1, 4), (0, 5), (1, 5)]


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


def elementwise_tv_notes_tiler(bits, thread_rows, value_rows):
    tiler, tv = elementwise_tv(bits, thread_rows, value_rows)
    return (thread_rows * 128 // bits, thread_rows * 32), tv


def elementwise_tv_fixed_vector_of_four(bits, thread_rows, value_rows):
    """Keeps fp32's 4 values per access whatever the type."""
    return elementwise_tv(32, thread_rows, value_rows)


def elementwise_tv_thread_layout_read_backwards(bits, thread_rows, value_rows):
    """Thread t at grid place t, column-major: ids run down the thread rows first."""
    vector = 128 // bits
    rows = thread_rows * value_rows
    tv = cute.make_layout(((thread_rows, 32), (vector, value_rows)),
                          stride=((value_rows, rows * vector), (rows, 1)))
    return (rows, 32 * vector), tv


def elementwise_tv_values_down_first(bits, thread_rows, value_rows):
    """Numbers a thread's values down its rows first (a column-major value block)."""
    vector = 128 // bits
    rows = thread_rows * value_rows
    tv = cute.make_layout(((32, thread_rows), (value_rows, vector)),
                          stride=((rows * vector, value_rows), (1, rows)))
    return (rows, 32 * vector), tv


def elementwise_tv_values_before_threads(bits, thread_rows, value_rows):
    tiler, tv = elementwise_tv(bits, thread_rows, value_rows)
    return tiler, cute.make_layout((tv.shape[1], tv.shape[0]), stride=(tv.stride[1], tv.stride[0]))


def elementwise_tv_row_major_tile_index(bits, thread_rows, value_rows):
    vector = 128 // bits
    rows, columns = thread_rows * value_rows, 32 * vector
    tv = cute.make_layout(((32, thread_rows), (vector, value_rows)),
                          stride=((vector, value_rows * columns), (1, columns)))
    return (rows, columns), tv


def elementwise_tv_worked_example_only(bits, thread_rows, value_rows):
    return (8, 256), cute.make_layout(((32, 2), (8, 4)), stride=((64, 4), (8, 1)))


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

# (exercise, mistake, wrong answer, what the hint must name)
MISTAKES = [
    ("ch02.tv_from_picture", "row_major_tile_index", tv_from_picture_row_major_index, r"row-major.*column-major"),
    ("ch02.tv_from_picture", "thread_and_value_modes_swapped", tv_from_picture_values_first,
     r"threads come first"),
    ("ch02.tv_from_picture", "threads_as_one_equal_step", tv_from_picture_flat_thread_stride,
     r"thread mode's second stride"),
    ("ch02.tv_from_picture", "values_as_one_equal_step", tv_from_picture_flat_value_stride,
     r"value mode's second stride"),
    ("ch02.tv_from_picture", "swapped_value_strides", tv_from_picture_swapped_value_strides,
     r"value mode's strides .*swapped"),
    ("ch02.tv_from_picture", "hard_coded_worked_example", tv_from_picture_worked_example_only, r"worked example"),
    ("ch02.tv_from_picture", "returns_the_value_layout_only", tv_from_picture_returns_the_value_layout,
     r"only the value layout"),
    ("ch02.tiler_for", "rows_and_columns_swapped", tiler_for_swapped, r"rows and columns swapped"),
    ("ch02.tiler_for", "orders_modes_by_stride", tiler_for_orders_modes_by_stride, r"smaller stride as the columns"),
    ("ch02.tiler_for", "flattened_shape", tiler_for_flattened_shape, r"first two numbers of the flattened shape"),
    ("ch02.tiler_for", "values_then_threads_as_the_notes_footnote_says", tiler_for_values_then_threads,
     r"values per thread, threads"),
    ("ch02.tiler_for", "thread_grid_only", tiler_for_threads_only, r"thread grid alone"),
    ("ch02.tiler_for", "value_block_only", tiler_for_value_block_only, r"one thread's value block"),
    ("ch02.tiler_for", "adds_instead_of_multiplying", tiler_for_added, r"multipl"),
    ("ch02.tiler_for", "hard_coded_worked_example", tiler_for_worked_example_only, r"whatever the layouts"),
    ("ch02.tiler_for", "calls_the_switched_off_make_layout_tv", tiler_for_calls_make_layout_tv,
     r"make_layout_tv is switched off"),
    ("ch02.thread_owns", "returns_tile_indices", owned_by_returns_indices, r"tile indices"),
    ("ch02.thread_owns", "unfolds_row_major", owned_by_row_major_unfolding, r"row-major"),
    ("ch02.thread_owns", "divides_by_the_columns", owned_by_divides_by_the_columns, r"number of rows M"),
    ("ch02.thread_owns", "coordinate_order_swapped", owned_by_column_then_row, r"\(n, m\)"),
    ("ch02.thread_owns", "sorted_not_in_value_order", owned_by_sorted, r"value order"),
    ("ch02.thread_owns", "lists_thread_zero_whatever_the_thread", owned_by_thread_zero, r"thread 0's"),
    ("ch02.thread_owns", "hard_coded_worked_example", owned_by_worked_example_only, r"worked example"),
    ("ch02.thread_owns", "calls_the_switched_off_idx2crd", owned_by_calls_idx2crd, r"idx2crd is switched off"),
    ("ch02.layout_tv_for_dtype", "the_notes_tiler_formula", elementwise_tv_notes_tiler, r"notes' formula"),
    ("ch02.layout_tv_for_dtype", "four_values_whatever_the_type", elementwise_tv_fixed_vector_of_four,
     r"128 // bits"),
    ("ch02.layout_tv_for_dtype", "thread_layout_read_backwards", elementwise_tv_thread_layout_read_backwards,
     r"thread t stands at row t // 32"),
    ("ch02.layout_tv_for_dtype", "values_numbered_down_first", elementwise_tv_values_down_first,
     r"value 1 is to the right"),
    ("ch02.layout_tv_for_dtype", "thread_and_value_modes_swapped", elementwise_tv_values_before_threads,
     r"threads come first"),
    ("ch02.layout_tv_for_dtype", "row_major_tile_index", elementwise_tv_row_major_tile_index,
     r"row-major.*column-major"),
    ("ch02.layout_tv_for_dtype", "hard_coded_worked_example", elementwise_tv_worked_example_only,
     r"worked example"),
    ("ch02.layout_tv_for_dtype", "calls_the_switched_off_make_layout_tv", elementwise_tv_calls_make_layout_tv,
     r"make_layout_tv is switched off"),
]


def test_every_chapter_02_exercise_has_a_correct_answer_and_four_named_mistakes():
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch02"]
    assert len(ids) >= 4 and set(ids) == set(CORRECT)
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


@pytest.mark.parametrize("exercise_id,answer,cause", mistake_params(MISTAKES))
def test_mistake_loses_points_in_the_sandbox(exercise_id, answer, cause, monkeypatch):
    assert_wrong_answer_loses_points_with_a_hint(exercise_id, answer, SEEDS, monkeypatch)


@pytest.mark.parametrize("exercise_id,answer,cause", mistake_params(MISTAKES))
def test_mistake_fails_naming_its_cause_on_every_seed(exercise_id, answer, cause, graded_in_process, monkeypatch):
    assert_mistake_fails_naming_its_cause(exercise_id, answer, cause, HINT_SEEDS, monkeypatch)


def test_hard_coded_answers_are_right_for_the_worked_examples_they_copy():
    """The mistakes are fair models: each is right for the example the notebook shows."""
    tv = cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4)))
    owner = [[None] * 6 for _ in range(4)]
    for thread in range(4):
        for value in range(6):
            index = tv((thread, value))
            owner[index % 4][index // 4] = (thread, value)
    assert str(tv_from_picture(owner, (2, 2), (2, 3))) == str(tv)
    assert str(tv_from_picture_worked_example_only(owner, (2, 2), (2, 3))) == str(tv)
    threads = cute.make_layout(((2, 4), 8), stride=((32, 8), 1))
    values = cute.make_layout((2, 4), stride=(1, 2))
    assert tiler_for_worked_example_only(threads, values) == tiler_for(threads, values) == \
        tuple(cute.make_layout_tv(threads, values)[0]) == (16, 32)
    assert owned_by_worked_example_only(tv, (4, 6), 2) == owned_by(tv, (4, 6), 2)
    assert str(elementwise_tv_worked_example_only(16, 2, 4)) == str(elementwise_tv(16, 2, 4)) == \
        "((8, 256), ((32,2),(8,4)):((64,4),(8,1)))"


def test_the_notes_tiler_formula_is_right_for_fp32_and_wrong_for_fp16():
    """Why the notes' (4 * 128 // width, 128) survived: it happens to be right for fp32."""
    assert elementwise_tv_notes_tiler(32, 4, 4)[0] == elementwise_tv(32, 4, 4)[0] == (16, 128)
    assert elementwise_tv_notes_tiler(16, 4, 4)[0] == (32, 128) != elementwise_tv(16, 4, 4)[0] == (16, 256)


def test_reading_the_thread_layout_backwards_is_a_column_major_thread_grid():
    """The mistake modelled: make_layout_tv with the thread ids running down the columns of the grid."""
    threads = cute.make_layout((4, 32), stride=(1, 4))
    values = cute.make_ordered_layout((4, 8), order=(1, 0))
    assert str(cute.make_layout_tv(threads, values)[1]) == str(elementwise_tv_thread_layout_read_backwards(16, 4, 4)[1])


def test_switching_make_layout_tv_off_for_a_check_leaves_the_notebooks_cute_whole(monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    original = cute.make_layout_tv
    check("ch02.tiler_for", tiler_for_calls_make_layout_tv, seed=0)
    assert cute.make_layout_tv is original
