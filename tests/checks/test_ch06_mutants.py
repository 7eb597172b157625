"""Chapter 06 checks: the right answers pass in strict mode, and every mistake in MISTAKES (each named for what
the learner got wrong) loses points on the sweep's seeds (tests/checks/verdicts.py HINT_SEEDS: 0-9, 0-99 under make test-deep) with a hint that names its cause.

The kernel exercise costs a simulated launch per case, too much for a sweep of seeds: its case generator is swept over
seeds 0-99 instead (both k-blocks, every seed), and its mistakes run through the check on two seeds
(make test: the first, one k-block case at a time, verdicts.kernel_mistake_results). Its
cutedsl-cpu criterion compiles the kernel with real CuTeDSL (a few seconds each), so only the mistakes that
only the PTX can see run there."""
import random

import pytest

from cutekit.checks import check, exercises
from cutekit.checks import ch06_ldmatrix as chapter06

from simulated import kernels_on_simulator, solution_code, with_mistakes
from verdicts import (ALL_SEEDS, HINT_SEEDS, SEEDS, assert_kernel_mistake_fails_naming_its_cause,
                      assert_mistake_fails_naming_its_cause, assert_real_cutedsl_confirms_it,
                      assert_right_answer_earns_every_reference_point, mistake_params, mistakes_per_exercise)

import answers_ch06 as answers

CORRECT = {
    "ch06.ref_to_src": answers.ref_to_src,
    "ch06.lands_in": answers.lands_in,
    "ch06.ldmatrix_for": answers.ldmatrix_for,
}
MODEL = [("ch06.ref_to_src", answers.model_ref_to_src), ("ch06.lands_in", answers.model_lands_in),
         ("ch06.ldmatrix_for", answers.model_ldmatrix_for)]

# (exercise, mistake, wrong answer, what the hint must name: a regular expression, case-insensitive)
MISTAKES = [
    ("ch06.ref_to_src", "the_load_step_alone", answers.written_from_the_load_alone, r"ldmatrix's step alone"),
    ("ch06.ref_to_src", "the_store_step_alone", answers.written_from_the_store_alone, r"stops at the registers"),
    ("ch06.ref_to_src", "store_step_reversed", answers.written_from_the_store_step_reversed,
     r"for stmatrix the registers are the source"),
    ("ch06.ref_to_src", "composed_in_the_wrong_order", answers.written_from_composed_in_the_wrong_order,
     r"composed in the wrong order"),
    ("ch06.ref_to_src", "section_3s_direction_twice", answers.written_from_section_3s_direction_twice,
     r"each goes section 3's worked direction"),
    ("ch06.ref_to_src", "two_ldmatrix_atoms", answers.written_from_two_ldmatrix_atoms,
     r"an ldmatrix atom standing in for the store"),
    ("ch06.ref_to_src", "ignores_store_transpose", answers.written_from_ignores_store_transpose,
     r"one atom is built with the other's transpose"),
    ("ch06.ref_to_src", "ignores_load_transpose", answers.written_from_ignores_load_transpose,
     r"one atom is built with the other's transpose"),
    ("ch06.ref_to_src", "ignores_num_matrices", answers.written_from_ignores_num_matrices,
     r"whatever num_matrices is"),
    ("ch06.ref_to_src", "round_trip_taken_for_the_identity", answers.written_from_is_the_identity,
     r"not always the identity"),
    ("ch06.lands_in", "one_holder_from_the_right_inverse", answers.held_by_one_thread, r"held by two threads"),
    ("ch06.lands_in", "the_other_holder_in_the_wrong_warp", answers.held_by_the_other_warp_wrong,
     r"second holder is in the wrong warp"),
    ("ch06.lands_in", "lanes_not_threads", answers.held_by_lanes, r"that is the lane"),
    ("ch06.lands_in", "one_warps_index_decoding", answers.held_by_one_warps_decoding, r"read as for one warp"),
    ("ch06.lands_in", "register_is_the_value_index", answers.held_by_register_is_the_value_index,
     r"register is the value index"),
    ("ch06.lands_in", "half_and_register_swapped", answers.held_by_half_and_register_swapped,
     r"register and half are swapped"),
    ("ch06.lands_in", "a_column_of_16", answers.held_by_a_column_of_16, r"32 elements\s+long"),
    ("ch06.lands_in", "b_taken_as_k_by_n", answers.held_by_b_as_k_by_n, r"B tile is N x K"),
    ("ch06.lands_in", "row_major_index", answers.held_by_row_major_index, r"column-major"),
    ("ch06.lands_in", "worked_example_hard_coded", answers.held_by_hard_coded_example,
     r"same answer for every element"),
    ("ch06.ldmatrix_for", "counts_8x8_matrices", answers.choose_by_counting_8x8_matrices,
     r"counting the tile's 8x8 matrices"),
    ("ch06.ldmatrix_for", "rule_from_one_example_n16_or_k32", answers.choose_n16_or_k32, r"read off one example"),
    ("ch06.ldmatrix_for", "whole_atoms_of_values_only", answers.choose_even_values, r"even number of values"),
    ("ch06.ldmatrix_for", "ignores_the_mma_shape", answers.choose_ignores_the_mma_shape,
     r"not always m16n8k16"),
    ("ch06.ldmatrix_for", "x4_for_a_x2_for_b", answers.choose_x4_for_a_x2_for_b, r"rule of one MMA"),
    ("ch06.ldmatrix_for", "uses_m_for_b", answers.choose_uses_m_for_b, r"B's rows are N"),
    ("ch06.ldmatrix_for", "always_x4", answers.choose_always_x4, r"x4 does not fit every tile"),
]


def test_every_chapter_06_exercise_has_a_right_answer_and_four_mistakes_or_more():
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch06"]
    assert set(ids) == set(CORRECT) | {"ch06.s2r_k_block"}
    counts = mistakes_per_exercise(MISTAKES)
    assert all(counts[exercise_id] >= 4 for exercise_id in CORRECT), counts
    assert mistakes_per_exercise(KERNEL_MISTAKES)["ch06.s2r_k_block"] >= 6


@pytest.mark.parametrize("exercise_id", sorted(CORRECT))
@pytest.mark.parametrize("seed", SEEDS)
def test_correct_answer_earns_every_reference_point_in_strict_mode(exercise_id, seed, monkeypatch):
    assert_right_answer_earns_every_reference_point(exercise_id, CORRECT[exercise_id], seed, monkeypatch)


@pytest.mark.parametrize("exercise_id,answer", MODEL, ids=[e.split(".")[1] for e, _ in MODEL])
@pytest.mark.parametrize("seed", SEEDS)
def test_the_notebooks_model_answers_earn_every_reference_point(exercise_id, answer, seed, monkeypatch):
    assert_right_answer_earns_every_reference_point(exercise_id, answer, seed, monkeypatch)


@pytest.mark.cutedsl
def test_written_from_runs_unchanged_under_real_cutedsl(monkeypatch):
    assert_real_cutedsl_confirms_it("ch06.ref_to_src", answers.ref_to_src, monkeypatch)


@pytest.mark.cutedsl
def test_written_from_through_cutekits_own_reference_layouts_fails_under_cutedsl(monkeypatch):
    """cutekit's atoms carry layout_ref_tv; CuTeDSL's do not: right on the reference tier, refused on CuTeDSL."""
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference cutedsl-cpu")
    result = check("ch06.ref_to_src", answers.written_from_with_cutekits_reference, seed=3)
    lost = [criterion for criterion in result.criteria if criterion.status == "failed"]
    assert [criterion.tier for criterion in lost] == ["cutedsl-cpu"], str(result)
    assert "no reference layout" in lost[0].hint


@pytest.fixture
def answers_asked_in_this_process(monkeypatch):
    """The layout answers are plain functions, quick to ask: asked here rather than in a forked child (as the
    checks do where os.fork is missing), 100 seeds cost a tenth of the CPU. The grading is the same."""
    from cutekit.checks import grading, sandbox
    monkeypatch.setattr(grading, "run_isolated", lambda function, timeout=10.0: sandbox._call_capturing_output(function))


@pytest.mark.parametrize("exercise_id,answer,cause", mistake_params(MISTAKES))
def test_each_mistake_fails_with_a_hint_naming_its_cause_on_every_seed(exercise_id, answer, cause, monkeypatch,
                                                                       answers_asked_in_this_process):
    assert_mistake_fails_naming_its_cause(exercise_id, answer, cause, HINT_SEEDS, monkeypatch)


def test_every_seed_asks_the_tiles_where_the_easy_rules_go_wrong():
    """The edge tiles (x4 refused for B at (16,24,16), (16,8,48), (16,40,16), (16,8,80), (16,24,32); x1 for
    m16n8k8's B) are in every seed's cases, so a rule learned from one example fails on every seed."""
    must = [(case["operand"], case["tile_mnk"], case["atom_mnk"]) for case in chapter06.EDGE_CASES]
    answers_there = {key: chapter06._choose_want(dict(zip(("operand", "tile_mnk", "atom_mnk"), key)))
                     for key in must}
    assert answers_there[("B", (16, 8, 8), (16, 8, 8))] == 1
    assert [answers_there[("B", tile, (16, 8, 16))] for tile in
            [(16, 24, 16), (16, 8, 48), (16, 40, 16), (16, 8, 80), (16, 24, 32)]] == [2] * 5
    for seed in ALL_SEEDS:
        cases = chapter06.LDMATRIX_FOR.cases(random.Random(seed))
        drawn = {(case["operand"], tuple(case["tile_mnk"]), tuple(case["atom_mnk"])) for case in cases}
        assert set(must) <= drawn, seed


# ---- ch06.s2r_k_block (kernels) ----

S2R_KERNEL = solution_code("06_ldmatrix_retile", "@cute.kernel\ndef s2r_kernel", 'check("ch06.s2r_k_block"') \
    .replace("s2r_kernel", "s2r_kernel_NAME").replace("def load_k_block(", "def load_k_block_NAME(")

COPY_LINE = "cute.copy(s2r, tXsB[None, None, k_block], tXrB[None, None, k_block])"
ATOM_LINE = "LdMatrix8x8x16bOp(False, 2)"
# (exercise, mistake, (the solution's text it replaces, the wrong text), what the hint must name)
KERNEL_MISTAKES = [
    ("ch06.s2r_k_block", "x4_where_it_does_not_fit", (ATOM_LINE, "LdMatrix8x8x16bOp(False, 4)"),
     r"does not fit B.*section 7's rule"),
    ("ch06.s2r_k_block", "copy_built_for_a", ("cute.make_tiled_copy_B(", "cute.make_tiled_copy_A("),
     r"built for B's operand\s+layout"),
    ("ch06.s2r_k_block", "retile_skipped",
     (COPY_LINE, "cute.copy(s2r, tXsB[None, None, k_block], tCrB[None, None, k_block])"), r"retile"),
    ("ch06.s2r_k_block", "always_k_block_0",
     ("tXsB[None, None, k_block], tXrB[None, None, k_block]", "tXsB[None, None, 0], tXrB[None, None, 0]"),
     r"never loaded \(copy\s+this k-block"),
    ("ch06.s2r_k_block", "source_from_the_other_k_block",
     ("tXsB[None, None, k_block], tXrB", "tXsB[None, None, 1 - k_block], tXrB"), r"wrong element.*same\s+k-block"),
    ("ch06.s2r_k_block", "k_block_indexes_the_n_mode",
     (COPY_LINE, "cute.copy(s2r, tXsB[None, k_block, None], tXrB[None, k_block, None])"),
     r"k_block indexes the last mode"),
    ("ch06.s2r_k_block", "every_thread_copies_thread_0s_rows",
     ("tXsB = thread_copy.partition_S(sB)", "tXsB = s2r.get_slice(0).partition_S(sB)"),
     r"this\s+thread's partition_S"),
    ("ch06.s2r_k_block", "partition_D_for_the_source",
     ("tXsB = thread_copy.partition_S(sB)", "tXsB = thread_copy.partition_D(sB)"), r"partition_S"),
    ("ch06.s2r_k_block", "no_copy_at_all", ("    " + COPY_LINE + "\n", ""), r"never loaded"),
    ("ch06.s2r_k_block", "copies_into_a_separate_fragment",
     ("tXrB = thread_copy.retile(tCrB)", "tXrB = thread_copy.retile(cute.make_fragment_like(tCrB))"),
     r"retiled view shares tCrB's registers"),
]
# right data on the simulator, the wrong instructions: only the compiled PTX tells
PTX_MISTAKES = [
    ("ch06.s2r_k_block", "whole_tile_copied", (COPY_LINE, "cute.copy(s2r, tXsB, tXrB)"), r"2 ldmatrix\.x2"),
    ("ch06.s2r_k_block", "x1_where_x2_fits", (ATOM_LINE, "LdMatrix8x8x16bOp(False, 1)"),
     r"2 ldmatrix\.x1.*section 7's rule"),
]
S2R_MISTAKES = {name: (change, cause) for _, name, change, cause in KERNEL_MISTAKES}
S2R_PTX_MISTAKES = {name: (change, cause) for _, name, change, cause in PTX_MISTAKES}
S2R_SEEDS = (0, 1)


def _kernel_source() -> str:
    replacements = {name: change for name, (change, _) in {**S2R_MISTAKES, **S2R_PTX_MISTAKES}.items()}
    return "import cutlass\nimport cutlass.cute as cute\n\n" + with_mistakes(S2R_KERNEL, replacements)


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """The kernels, imported from a real file with the simulator as `cutlass`; real cutlass given back."""
    with kernels_on_simulator(_kernel_source(), "ch06_kernels", tmp_path_factory.mktemp("ch06_kernels")) as module:
        yield module


def test_the_k_block_cases_ask_both_k_blocks_on_every_seed():
    for seed in ALL_SEEDS:
        cases = chapter06.S2R_K_BLOCK.cases(random.Random(seed))
        assert sorted(case["k_block"] for case in cases) == [0, 1], seed


def test_the_correct_s2r_kernel_passes_on_the_simulator_in_strict_mode(kernels, monkeypatch):
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    assert check("ch06.s2r_k_block", kernels.load_k_block_none, seed=0).passed


@pytest.mark.parametrize("mistake", sorted(S2R_MISTAKES))
def test_a_wrong_s2r_kernel_fails_with_a_hint_naming_its_cause(kernels, mistake, monkeypatch):
    answer = getattr(kernels, f"load_k_block_{mistake}")
    assert_kernel_mistake_fails_naming_its_cause("ch06.s2r_k_block", answer, S2R_MISTAKES[mistake][1], S2R_SEEDS,
                                                 monkeypatch)


@pytest.mark.cutedsl
def test_the_right_kernel_compiles_to_one_ldmatrix_x2_per_k_block(kernels, monkeypatch):
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    monkeypatch.setenv("CUTEKIT_TIERS", "cutedsl-cpu")
    result = check("ch06.s2r_k_block", kernels.load_k_block_none, seed=0)
    assert [criterion.status for criterion in result.criteria if criterion.tier == "cutedsl-cpu"] == ["passed"], \
        str(result)


@pytest.mark.cutedsl
@pytest.mark.parametrize("mistake", ["retile_skipped", "whole_tile_copied", "x1_where_x2_fits",
                                     "x4_where_it_does_not_fit"])
def test_real_cutedsl_refuses_or_counts_the_wrong_copy(kernels, mistake, monkeypatch):
    """Skipping retile does not compile in CuTeDSL 4.8.1; copying the whole tile compiles to 2 ldmatrix.x2, an x1
    copy to 2 ldmatrix.x1 and an x4 copy (which CuTeDSL builds although it does not fit) to 1 ldmatrix.x4."""
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    cause = {**S2R_MISTAKES, **S2R_PTX_MISTAKES}[mistake][1]
    assert_mistake_fails_naming_its_cause("ch06.s2r_k_block", getattr(kernels, f"load_k_block_{mistake}"), cause,
                                          (0,), monkeypatch, tiers="cutedsl-cpu")
