"""Chapter 04 checks: every correct answer passes in strict mode, and every mistake in MISTAKES (each named for
what the learner got wrong) loses points on the sweep's seeds (tests/checks/verdicts.py HINT_SEEDS: 0-9, 0-99 under make test-deep) with a hint that names its cause.

The kernel exercise (ch04.add_with_tails, one block per row strip) runs on the simulator, which costs a second
or more a check: its mistakes in KERNEL_MISTAKES are graded on KERNEL_SEEDS only (make test: the first, one
problem at a time, verdicts.kernel_mistake_results), and the case generator is
swept over seeds 0-99 to show that every seed draws the shapes on which those mistakes go wrong."""
import random

import pytest

from cutekit.checks import check, exercises, grading, sandbox
from cutekit.checks import ch04_local_tile as chapter04

from simulated import kernels_on_simulator, solution_code, with_mistakes
from verdicts import (ALL_SEEDS, HINT_SEEDS, SEEDS, assert_kernel_mistake_fails_naming_its_cause,
                      assert_mistake_fails_naming_its_cause, assert_real_cutedsl_confirms_it,
                      assert_right_answer_earns_every_reference_point, mistake_params, mistakes_per_exercise)

import answers_ch04 as answers

CORRECT = {
    "ch04.local_tile_by_hand": answers.tile_of,
    "ch04.thread_elements": answers.elements_of,
    "ch04.thread_layout_for_picture": answers.thread_layout_for,
    "ch04.gemm_tiles": answers.gemm_tiles,
}

ALSO_CORRECT = [
    ("ch04.local_tile_by_hand", answers.tile_of_flat_divide),
    ("ch04.gemm_tiles", answers.gemm_tiles_with_proj_for_a_and_c),
]

# (exercise, mistake, wrong answer, what the hint must name: a regular expression, case-insensitive)
MISTAKES = [
    ("ch04.local_tile_by_hand", "ignores_proj", answers.tile_ignores_proj,
     r"has 2 modes: divide it by the tiler's modes proj marks with 1"),
    ("ch04.local_tile_by_hand", "projects_the_tiler_not_the_coordinate", answers.tile_projects_the_tiler_not_the_coordinate,
     r"coord loses the entries proj drops, as the tiler does"),
    ("ch04.local_tile_by_hand", "keeps_the_modes_proj_drops", answers.tile_keeps_the_modes_proj_drops,
     r"you kept the tiler modes proj marks None"),
    ("ch04.local_tile_by_hand", "takes_the_first_modes", answers.tile_takes_the_first_modes,
     r"first modes of the tiler and of coord"),
    ("ch04.local_tile_by_hand", "fixes_a_none_at_zero", answers.tile_fixes_a_none_at_zero,
     r"a None in coord keeps every tile of that mode"),
    ("ch04.local_tile_by_hand", "coord_given_to_the_tile_mode", answers.tile_slices_the_tile_mode,
     r"coord loses the entries|indexes the rest mode|tile mode takes one None"),
    ("ch04.local_tile_by_hand", "coordinate_reversed", answers.tile_reverses_the_coordinate, r"reversed"),
    ("ch04.local_tile_by_hand", "always_the_first_tile", answers.tile_always_the_first, r"always the first tile"),
    ("ch04.local_tile_by_hand", "worked_example_hard_coded", answers.tile_hard_coded_worked_example,
     r"section 5's gA"),
    ("ch04.local_tile_by_hand", "calls_the_switched_off_local_tile", answers.tile_calls_the_switched_off_local_tile,
     r"switched off"),

    ("ch04.thread_elements", "blocked_not_cyclic", answers.elements_blocked, r"local_partition is cyclic"),
    ("ch04.thread_elements", "threads_numbered_row_major", answers.elements_row_major_threads,
     r"numbers threads down the first mode first"),
    ("ch04.thread_elements", "steps_swapped", answers.elements_steps_swapped, r"steps are swapped"),
    ("ch04.thread_elements", "cells_listed_row_major", answers.elements_listed_row_major,
     r"another order.*column-major"),
    ("ch04.thread_elements", "only_the_first_cell", answers.elements_only_the_first, r"only 1 of the thread's"),
    ("ch04.thread_elements", "worked_example_hard_coded", answers.elements_hard_coded_worked_example,
     r"worked example"),
    ("ch04.thread_elements", "calls_the_switched_off_partition", answers.elements_calls_the_switched_off_partition,
     r"switched off"),

    ("ch04.thread_layout_for_picture", "always_column_major", answers.thread_layout_always_column_major,
     r"numbers threads row-major"),
    ("ch04.thread_layout_for_picture", "always_row_major", answers.thread_layout_always_row_major,
     r"numbers threads column-major"),
    ("ch04.thread_layout_for_picture", "shape_transposed", answers.thread_layout_transposed, r"transposed"),
    ("ch04.thread_layout_for_picture", "one_dimensional", answers.thread_layout_one_dimensional, r"1-D thread layout"),
    ("ch04.thread_layout_for_picture", "worked_example_hard_coded", answers.thread_layout_hard_coded_worked_example,
     r"worked example"),

    ("ch04.gemm_tiles", "section_5s_proj_for_b", answers.gemm_worked_proj_for_b, r"proj=\(None, 1, 1\).*\(K, N\)"),
    ("ch04.gemm_tiles", "b_coordinate_in_n_k_order", answers.gemm_b_coordinate_in_n_k_order,
     r"B's coordinate is in the wrong order"),
    ("ch04.gemm_tiles", "b_tiler_in_n_k_order", answers.gemm_b_tiler_in_n_k_order, r"B's tiler is in the wrong order"),
    ("ch04.gemm_tiles", "m_and_n_swapped", answers.gemm_m_and_n_swapped,
     r"row block is m|column block is n|block is \(m, n\)"),
    ("ch04.gemm_tiles", "only_the_first_k_tile", answers.gemm_only_the_first_k_tile, r"only the first k tile"),
    ("ch04.gemm_tiles", "c_keeps_every_column_tile", answers.gemm_c_keeps_every_column_tile, r"no K mode and no None"),
    ("ch04.gemm_tiles", "worked_example_hard_coded", answers.gemm_hard_coded_worked_example, r"section 5's block"),
]

# mistakes whose cause shows only in the forked sandbox (it switches functions off there): graded forked
SANDBOXED = {"calls_the_switched_off_local_tile", "calls_the_switched_off_partition"}


def test_every_chapter_04_exercise_has_a_correct_answer_and_four_mistakes_or_more():
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch04"]
    assert set(ids) == set(CORRECT) | {"ch04.add_with_tails"}
    counts = mistakes_per_exercise(MISTAKES)
    assert all(counts[exercise_id] >= 4 for exercise_id in CORRECT), counts
    assert len(KERNEL_MISTAKES) >= 4


@pytest.mark.parametrize("exercise_id", sorted(CORRECT))
@pytest.mark.parametrize("seed", SEEDS)
def test_correct_answer_earns_every_reference_point_in_strict_mode(exercise_id, seed, monkeypatch):
    assert_right_answer_earns_every_reference_point(exercise_id, CORRECT[exercise_id], seed, monkeypatch)


@pytest.mark.parametrize("exercise_id,answer", ALSO_CORRECT, ids=[a.__name__ for _, a in ALSO_CORRECT])
@pytest.mark.parametrize("seed", SEEDS)
def test_other_right_answers_earn_every_reference_point(exercise_id, answer, seed, monkeypatch):
    assert_right_answer_earns_every_reference_point(exercise_id, answer, seed, monkeypatch)


@pytest.mark.cutedsl
@pytest.mark.parametrize("exercise_id", sorted(CORRECT))
def test_correct_answer_is_confirmed_by_real_cutedsl_in_strict_mode(exercise_id, monkeypatch):
    assert_real_cutedsl_confirms_it(exercise_id, CORRECT[exercise_id], monkeypatch)


@pytest.mark.parametrize("exercise_id,answer,cause", mistake_params(MISTAKES))
def test_each_mistake_fails_with_a_hint_naming_its_cause_on_every_seed(exercise_id, answer, cause, monkeypatch,
                                                                        request):
    """Graded in this process, not in a forked child per check: the hints are what this test is about, and a
    fork per seed per mistake costs more than the whole table. The mistakes in SANDBOXED are graded forked,
    as a learner's answer is."""
    if not any(name in request.node.name for name in SANDBOXED):
        monkeypatch.setenv("CUTEKIT_PROGRESS", "off")
        monkeypatch.setattr(grading, "run_isolated",
                            lambda function, timeout=10.0: sandbox.Isolated(value=function()))
    assert_mistake_fails_naming_its_cause(exercise_id, answer, cause, HINT_SEEDS, monkeypatch)


def test_hard_coded_answers_are_right_for_the_examples_they_copy():
    """The hard-coded mistakes are fair models: each is right for the cell of the notebook it copies."""
    from cutekit import cute
    mA = cute.make_identity_tensor((64, 32))
    assert str(answers.tile_hard_coded_worked_example(mA, (16, 8, 4), (1, 2, None), (1, None, 1))) == \
        str(answers.tile_of(mA, (16, 8, 4), (1, 2, None), (1, None, 1))) == \
        str(cute.local_tile(mA, (16, 8, 4), (1, 2, None), proj=(1, None, 1))) == "tensor<(16,0) o (16,4,8):(1@0,1@1,4@1)>"
    assert answers.elements_hard_coded_worked_example((4, 6), (2, 3), 1) == answers.elements_of((4, 6), (2, 3), 1)
    assert str(answers.thread_layout_hard_coded_worked_example(None)) == "(2,3):(3,1)"


# ---- ch04.add_with_tails: kernels, defined once the simulator is `cutlass` ----

STRIP = solution_code("04_local_tile_partition", "@cute.kernel\ndef strip_kernel", 'check("ch04.add_with_tails"') \
    .replace("strip_kernel", "strip_kernel_NAME").replace("def add_strips(", "def add_strips_NAME(")

# (exercise, mistake, the solution's line and what it becomes, what the hint must name)
KERNEL_MISTAKES = [
    ("ch04.add_with_tails", "no_predicate",
     ("            if cute.elem_less(tCcC[i], mC.shape):\n                tCgC[i] = tAgA[i] + tBgB[i]",
      "            tCgC[i] = tAgA[i] + tBgB[i]"), r"guard the tail"),
    ("ch04.add_with_tails", "only_the_first_tile_of_a_strip",
     ("cutlass.range(cute.size(gC, mode=[2]))", "cutlass.range(1)"), r"loop k over every tile of the strip"),
    ("ch04.add_with_tails", "predicate_against_the_tile_shape",
     ("cute.elem_less(tCcC[i], mC.shape)", "cute.elem_less(tCcC[i], tiler)"), r"compare it with mC.shape"),
    ("ch04.add_with_tails", "stores_a_not_the_sum", ("tCgC[i] = tAgA[i] + tBgB[i]", "tCgC[i] = tAgA[i]"),
     r"C holds A, not A \+ B"),
    ("ch04.add_with_tails", "every_block_on_strip_zero", ("(strip, None)", "(0, None)"), r"block b's strip"),
    ("ch04.add_with_tails", "identity_not_tiled_like_c",
     ("cC = cute.local_tile(cute.make_identity_tensor(mC.shape), tiler, (strip, None))",
      "cC = cute.local_tile(cute.make_identity_tensor(mC.shape), tiler, (0, None))"),
     r"partition an identity tensor like C"),
    # the worked 2-D-grid add_kernel copied into the exercise: by is always 0, so only each strip's first tile
    ("ch04.add_with_tails", "copies_the_2d_kernel", "the worked add_kernel, renamed",
     r"loop k over every tile of the strip"),
]
KERNEL_CHANGES = {name: change for _, name, change, _ in KERNEL_MISTAKES if isinstance(change, tuple)}
KERNEL_CAUSES = {name: cause for _, name, _, cause in KERNEL_MISTAKES}
COPIED_2D_KERNEL = solution_code("04_local_tile_partition", "@cute.kernel\ndef add_kernel", "\n@cute.jit\ndef add(") \
    .replace("def add_kernel(", "def strip_kernel_copies_the_2d_kernel(")
COPIED_HOST = STRIP[STRIP.index("@cute.jit"):].replace("NAME", "copies_the_2d_kernel")
KERNEL_SEEDS = (0, 1, 2)


def _kernel_source() -> str:
    return "\n".join(["import cutlass\nimport cutlass.cute as cute\n",
                      with_mistakes(STRIP, KERNEL_CHANGES),
                      COPIED_2D_KERNEL, COPIED_HOST])


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """The kernels, imported from a real file with the simulator as `cutlass`; real cutlass given back."""
    with kernels_on_simulator(_kernel_source(), "ch04_strip_kernels", tmp_path_factory.mktemp("ch04_kernels")) as module:
        yield module


def test_the_correct_kernel_passes_on_the_simulator_in_strict_mode(kernels, monkeypatch):
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    assert check("ch04.add_with_tails", kernels.add_strips_none, seed=0).passed


@pytest.mark.parametrize("mistake", sorted(KERNEL_CAUSES))
def test_each_kernel_mistake_fails_with_a_hint_naming_its_cause(kernels, mistake, monkeypatch):
    assert_kernel_mistake_fails_naming_its_cause("ch04.add_with_tails", getattr(kernels, f"add_strips_{mistake}"),
                                                 KERNEL_CAUSES[mistake], KERNEL_SEEDS, monkeypatch)


def test_every_seed_draws_the_shapes_the_kernel_mistakes_fail_on():
    """What makes each kernel mistake fail, on every seed 0-99: a divisible shape whose strips hold two or more
    tiles (a kernel that writes one tile per strip leaves columns unwritten), and ragged shapes with rows past a
    multiple of 16 and columns past a multiple of 128 in strips of two tiles or more (an unguarded kernel goes
    out of bounds; a tile-shaped predicate or strip 0 for every block leaves rows unwritten)."""
    for seed in ALL_SEEDS:
        cases = chapter04._strip_cases(random.Random(seed))
        divisible = [c for c in cases if c["kind"] == "divisible"]
        ragged = [c for c in cases if c["kind"] == "ragged"]
        assert divisible and all(c["M"] % 16 == 0 and c["M"] >= 32 and c["N"] % 128 == 0 and c["N"] >= 256
                                 for c in divisible)
        assert any(c["M"] > 16 and c["M"] % 16 and c["N"] > 128 and c["N"] % 128 for c in ragged), (seed, cases)


@pytest.mark.cutedsl
def test_the_correct_kernel_compiles_with_real_cutedsl(kernels, monkeypatch):
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference cutedsl-cpu")
    result = check("ch04.add_with_tails", kernels.add_strips_none, seed=0)
    compiled = next(criterion for criterion in result.criteria if criterion.tier == "cutedsl-cpu")
    assert result.passed and compiled.status == "passed", str(result)
