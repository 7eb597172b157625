"""Chapter 04 checks: the correct answers pass in strict mode, and every wrong answer below (each named for
the mistake it models) loses points with a hint, on every seed tried. Kernel answers run on the simulator."""

import pytest

from cutekit import cute
from cutekit.checks import check, exercises

from simulated import kernels_on_simulator, solution_code, with_mistakes
from verdicts import assert_real_cutedsl_confirms_it, assert_right_answer_earns_every_reference_point, assert_wrong_answer_loses_points_with_a_hint, mutant_params, SEEDS


# ---- ch04.local_tile_by_hand ----

def tile_of(tensor, tiler, coord):
    return cute.zipped_divide(tensor, tiler)[(tuple(None for _ in tiler), coord)]


def tile_slices_the_tile_mode(tensor, tiler, coord):
    return cute.zipped_divide(tensor, tiler)[(coord, tuple(None for _ in tiler))]


def tile_uses_logical_divide_a_correct_alternative(tensor, tiler, coord):
    return cute.logical_divide(tensor, tiler)[tuple((None, c) for c in coord)]


def tile_assumes_a_two_dimensional_tiler(tensor, tiler, coord):
    return cute.zipped_divide(tensor, tiler)[((None, None), coord)]


def tile_reverses_the_coordinate(tensor, tiler, coord):
    return cute.zipped_divide(tensor, tiler)[(tuple(None for _ in tiler), tuple(reversed(coord)))]


def tile_always_the_first(tensor, tiler, coord):
    return cute.zipped_divide(tensor, tiler)[(tuple(None for _ in tiler), tuple(0 for _ in coord))]


def tile_hard_coded_worked_example(tensor, tiler, coord):
    return cute.zipped_divide(tensor, (4, 4))[((None, None), (1, 0))]


def tile_calls_the_switched_off_local_tile(tensor, tiler, coord):
    return cute.local_tile(tensor, tiler, coord)


# ---- ch04.thread_elements ----

def elements_of(tile_shape, thread_shape, thread):
    (tile_m, tile_n), (threads_m, threads_n) = tile_shape, thread_shape
    first_m, first_n = thread % threads_m, thread // threads_m
    rows = tile_m // threads_m
    return [(first_m + threads_m * (i % rows), first_n + threads_n * (i // rows))
            for i in range(rows * (tile_n // threads_n))]


def elements_blocked(tile_shape, thread_shape, thread):
    (tile_m, tile_n), (threads_m, threads_n) = tile_shape, thread_shape
    rows, columns = tile_m // threads_m, tile_n // threads_n
    first_m, first_n = (thread % threads_m) * rows, (thread // threads_m) * columns
    return [(first_m + i % rows, first_n + i // rows) for i in range(rows * columns)]


def elements_row_major_threads(tile_shape, thread_shape, thread):
    (tile_m, tile_n), (threads_m, threads_n) = tile_shape, thread_shape
    first_m, first_n = thread // threads_n, thread % threads_n
    rows = tile_m // threads_m
    return [(first_m + threads_m * (i % rows), first_n + threads_n * (i // rows))
            for i in range(rows * (tile_n // threads_n))]


def elements_row_major_order(tile_shape, thread_shape, thread):
    return sorted(elements_of(tile_shape, thread_shape, thread))


def elements_only_the_first(tile_shape, thread_shape, thread):
    return elements_of(tile_shape, thread_shape, thread)[:1]


def elements_hard_coded_worked_example(tile_shape, thread_shape, thread):
    return [(0, 0), (2, 0), (0, 2), (2, 2)]


# ---- ch04.thread_layout_for_picture ----

def thread_layout_for(picture):
    threads_n = next(n for n in range(1, len(picture[0]) + 1)
                     if n == len(picture[0]) or picture[0][n] == picture[0][0])
    threads_m = next(m for m in range(1, len(picture) + 1) if m == len(picture) or picture[m][0] == picture[0][0])
    return cute.make_layout((threads_m, threads_n), stride=(picture[1 % threads_m][0] if threads_m > 1 else 1,
                                                          picture[0][1 % threads_n] if threads_n > 1 else 1))


def thread_layout_always_column_major(picture):
    return cute.make_layout(thread_layout_for(picture).shape)


def thread_layout_always_row_major(picture):
    shape = thread_layout_for(picture).shape
    return cute.make_layout(shape, stride=(shape[1], 1))


def thread_layout_transposed(picture):
    layout = thread_layout_for(picture)
    return cute.make_layout((layout.shape[1], layout.shape[0]), stride=(layout.stride[1], layout.stride[0]))


def thread_layout_one_dimensional(picture):
    return cute.make_layout(cute.size(thread_layout_for(picture)))


def thread_layout_hard_coded_worked_example(picture):
    return cute.make_layout((2, 2), stride=(2, 1))


# ---- ch04.gemm_tiles ----

def gemm_tiles(mA, mB, mC, tiler, m, n):
    coordinate = (m, n, None)
    return (cute.local_tile(mA, tiler, coordinate, proj=(1, None, 1)),
            cute.local_tile(mB, tiler, coordinate, proj=(None, 1, 1)),
            cute.local_tile(mC, tiler, coordinate, proj=(1, 1, None)))


def gemm_same_proj_for_a_and_b(mA, mB, mC, tiler, m, n):
    coordinate = (m, n, None)
    return (cute.local_tile(mA, tiler, coordinate, proj=(1, None, 1)),
            cute.local_tile(mB, tiler, coordinate, proj=(1, None, 1)),
            cute.local_tile(mC, tiler, coordinate, proj=(1, 1, None)))


def gemm_swapped_block_coordinate(mA, mB, mC, tiler, m, n):
    return gemm_tiles(mA, mB, mC, tiler, n, m)


def gemm_only_the_first_k_tile(mA, mB, mC, tiler, m, n):
    coordinate = (m, n, 0)
    return (cute.local_tile(mA, tiler, coordinate, proj=(1, None, 1)),
            cute.local_tile(mB, tiler, coordinate, proj=(None, 1, 1)),
            cute.local_tile(mC, tiler, coordinate, proj=(1, 1, None)))


def gemm_c_keeps_k(mA, mB, mC, tiler, m, n):
    tiles = gemm_tiles(mA, mB, mC, tiler, m, n)
    return tiles[0], tiles[1], cute.local_tile(mC, tiler[:2], (m, None))


def gemm_hard_coded_worked_example(mA, mB, mC, tiler, m, n):
    return gemm_tiles(mA, mB, mC, (16, 8, 4), 1, 2)


# ---- ch04.add_with_tails: kernels, defined once the simulator is `cutlass` ----

ADD_WITH_TAILS = solution_code("04_local_tile_partition", "@cute.kernel\ndef tails_kernel", 'check("ch04.add_with_tails"') \
    .replace("tails_kernel", "tails_kernel_NAME").replace("def add_with_tails(", "def add_with_tails_NAME(")

KERNEL_MISTAKES = {
    "no_predicate": ("    cute.copy(tiled_copy, tAgA, rA, pred=inside)\n    cute.copy(tiled_copy, tBgB, rB, pred=inside)",
                     "    cute.copy(tiled_copy, tAgA, rA)\n    cute.copy(tiled_copy, tBgB, rB)"),
    "predicate_from_the_first_atom_only": ("tCcC[(0, atom), 0, 0]", "tCcC[(0, 0), 0, 0]"),
    "compares_with_the_tile_shape": ("cute.elem_less(tCcC[(0, atom), 0, 0], shape)",
                                     "cute.elem_less(tCcC[(0, atom), 0, 0], (16, 128))"),
    "stores_a_not_the_sum": ("rC.store(rA.load() + rB.load())", "rC.store(rA.load())"),
    "forgets_the_store": ("    cute.copy(tiled_copy, rC, tCgC, pred=inside)\n", ""),
    "always_block_zero": ("block = ((None, None), bidx)", "block = ((None, None), 0)"),
}
KERNEL_SOURCE = "import cutlass\nimport cutlass.cute as cute\n\n" + with_mistakes(ADD_WITH_TAILS, KERNEL_MISTAKES)


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """The kernels, imported from a real file with the simulator as `cutlass`; real cutlass given back."""
    with kernels_on_simulator(KERNEL_SOURCE, "ch04_add_kernels", tmp_path_factory.mktemp("ch04_kernels")) as module:
        yield module


CORRECT = {
    "ch04.local_tile_by_hand": tile_of,
    "ch04.thread_elements": elements_of,
    "ch04.thread_layout_for_picture": thread_layout_for,
    "ch04.gemm_tiles": gemm_tiles,
}

MUTANTS = [
    ("ch04.local_tile_by_hand", "slices_the_tile_mode", tile_slices_the_tile_mode),
    ("ch04.local_tile_by_hand", "assumes_a_two_dimensional_tiler", tile_assumes_a_two_dimensional_tiler),
    ("ch04.local_tile_by_hand", "reverses_the_coordinate", tile_reverses_the_coordinate),
    ("ch04.local_tile_by_hand", "always_the_first_tile", tile_always_the_first),
    ("ch04.local_tile_by_hand", "hard_coded_worked_example", tile_hard_coded_worked_example),
    ("ch04.local_tile_by_hand", "calls_the_switched_off_local_tile", tile_calls_the_switched_off_local_tile),
    ("ch04.thread_elements", "blocked_not_cyclic", elements_blocked),
    ("ch04.thread_elements", "numbers_threads_row_major", elements_row_major_threads),
    ("ch04.thread_elements", "lists_cells_row_major", elements_row_major_order),
    ("ch04.thread_elements", "only_the_first_cell", elements_only_the_first),
    ("ch04.thread_elements", "hard_coded_worked_example", elements_hard_coded_worked_example),
    ("ch04.thread_layout_for_picture", "always_column_major", thread_layout_always_column_major),
    ("ch04.thread_layout_for_picture", "always_row_major", thread_layout_always_row_major),
    ("ch04.thread_layout_for_picture", "transposed", thread_layout_transposed),
    ("ch04.thread_layout_for_picture", "one_dimensional", thread_layout_one_dimensional),
    ("ch04.thread_layout_for_picture", "hard_coded_worked_example", thread_layout_hard_coded_worked_example),
    ("ch04.gemm_tiles", "same_proj_for_a_and_b", gemm_same_proj_for_a_and_b),
    ("ch04.gemm_tiles", "swapped_block_coordinate", gemm_swapped_block_coordinate),
    ("ch04.gemm_tiles", "only_the_first_k_tile", gemm_only_the_first_k_tile),
    ("ch04.gemm_tiles", "c_keeps_k", gemm_c_keeps_k),
    ("ch04.gemm_tiles", "hard_coded_worked_example", gemm_hard_coded_worked_example),
]



def test_every_chapter_04_exercise_has_a_correct_answer_and_five_wrong_ones():
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch04"]
    assert len(ids) >= 4 and set(ids) == set(CORRECT) | {"ch04.add_with_tails"}
    for exercise_id in CORRECT:
        assert sum(1 for mutant in MUTANTS if mutant[0] == exercise_id) >= 5, exercise_id
    assert len(KERNEL_MISTAKES) >= 5


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


def test_the_correct_kernel_passes_on_the_simulator_in_strict_mode(kernels, monkeypatch):
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    for seed in (0, 1):
        assert check("ch04.add_with_tails", kernels.add_with_tails_none, seed=seed).passed


@pytest.mark.parametrize("mistake", KERNEL_MISTAKES)
def test_a_wrong_kernel_loses_points_with_a_hint(kernels, mistake, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    result = check("ch04.add_with_tails", getattr(kernels, f"add_with_tails_{mistake}"), seed=3)
    lost = [criterion for criterion in result.criteria if criterion.status == "failed"]
    assert lost and not result.passed, str(result)
    assert all(criterion.hint for criterion in lost)


def test_an_unguarded_kernel_is_told_to_predicate(kernels, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    assert "copy with pred=" in str(check("ch04.add_with_tails", kernels.add_with_tails_no_predicate, seed=3))


def test_logical_divide_sliced_per_mode_is_also_accepted(monkeypatch):
    """Slicing (None, c) in each mode of a logical divide is the same tile: a right answer, not a mutant."""
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    assert check("ch04.local_tile_by_hand", tile_uses_logical_divide_a_correct_alternative, seed=0).passed


def test_a_blocked_answer_is_told_local_partition_is_cyclic(monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    hints = " ".join(str(check("ch04.thread_elements", elements_blocked, seed=seed)) for seed in SEEDS)
    assert "local_partition is cyclic" in hints
