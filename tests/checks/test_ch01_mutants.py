"""Chapter 01 checks: every correct answer passes in strict mode on every tier this machine has, and every
mistake in MISTAKES (each named for what the learner got wrong) loses points on the sweep's seeds (tests/checks/verdicts.py HINT_SEEDS: 0-9, 0-99 under make test-deep) with a hint
that names its cause."""
import pytest

from cutekit.checks import check, exercises, grading, sandbox

from verdicts import (HINT_SEEDS, assert_mistake_fails_naming_its_cause, assert_real_cutedsl_confirms_it,
                      assert_right_answer_earns_every_reference_point, mistake_params, mistakes_per_exercise, SEEDS)

import answers_ch01 as answers

CORRECT = {
    "ch01.layout_from_grid": answers.layout_for,
    "ch01.layout_from_picture": answers.layout_from_picture,
    "ch01.index_of_coordinate": answers.index_of,
    "ch01.coalesce_by_hand": answers.coalesced,
    "ch01.transpose_by_composition": answers.transposer,
    "ch01.compose_by_hand": answers.composed,
    "ch01.complement_by_hand": answers.complement_of,
    "ch01.right_inverse_by_hand": answers.right_inverse_of,
}
ALSO_CORRECT = [
    ("ch01.layout_from_grid", answers.layout_for_by_order),
    ("ch01.index_of_coordinate", answers.index_of_with_cute_size),
    ("ch01.coalesce_by_hand", answers.coalesced_with_cute_flatten),
]

# (exercise, mistake, wrong answer, what the hint must name: a regular expression, case-insensitive)
MISTAKES = [
    ("ch01.layout_from_grid", "column_major_matrices", answers.layout_for_column_major, r"column-major"),
    ("ch01.layout_from_grid", "strides_of_m_and_n_swapped", answers.layout_for_swapped_strides,
     r"strides of m and n are swapped"),
    ("ch01.layout_from_grid", "batch_mode_first", answers.layout_for_batch_first, r"batch mode comes last"),
    ("ch01.layout_from_grid", "matrices_interleaved", answers.layout_for_interleaved_batch, r"interleave"),
    ("ch01.layout_from_grid", "batch_stride_one_row", answers.layout_for_batch_stride_one_row,
     r"mode b .*whole matrix"),
    ("ch01.layout_from_grid", "rows_padded", answers.layout_for_padded_rows, r"mode m .*N elements on"),
    ("ch01.layout_from_grid", "batch_mode_dropped", answers.layout_for_drops_the_batch, r"third mode"),
    ("ch01.layout_from_grid", "returns_a_string_not_a_layout", answers.layout_for_returns_a_string,
     r"expected a layout"),

    ("ch01.layout_from_picture", "strides_swapped", answers.picture_swapped_strides, r"swapped"),
    ("ch01.layout_from_picture", "shape_transposed", answers.picture_transposed_shape, r"\(rows, columns\)"),
    ("ch01.layout_from_picture", "every_picture_taken_as_row_major", answers.picture_assumes_row_major,
     r"not every picture is row-major"),
    ("ch01.layout_from_picture", "every_picture_taken_as_column_major", answers.picture_assumes_column_major,
     r"not every picture is column-major"),
    ("ch01.layout_from_picture", "one_row_short", answers.picture_off_by_one_shape, r"the picture has \d+ rows"),
    ("ch01.layout_from_picture", "the_picture_above_hard_coded", answers.picture_worked_example_only,
     r"picture drawn above"),
    ("ch01.layout_from_picture", "stride_read_from_the_last_cell", answers.picture_steps_from_last_cell,
     r"from row 0 to row 1 of the picture|from column 0 to column 1 of the picture"),

    ("ch01.index_of_coordinate", "1d_index_unfolded_row_major", answers.index_of_row_major_unfolding,
     r"unfolded the 1-D index row-major"),
    ("ch01.index_of_coordinate", "flat_entry_not_unfolded", answers.index_of_ignores_nesting,
     r"is a 1-D index into the nested mode"),
    ("ch01.index_of_coordinate", "flat_entry_unfolded_row_major", answers.index_of_flat_entry_row_major,
     r"unfolds column-major inside the nested mode"),
    ("ch01.index_of_coordinate", "off_by_one", answers.index_of_off_by_one, r"one more than"),
    ("ch01.index_of_coordinate", "nested_strides_reversed", answers.index_of_reversed_inner_strides,
     r"in reverse order"),
    ("ch01.index_of_coordinate", "strides_ignored", answers.index_of_uses_shape_as_stride,
     r"from the shape alone"),
    ("ch01.index_of_coordinate", "only_the_second_mode_may_nest", answers.index_of_assumes_second_mode_nests,
     r"first mode nests"),
    ("ch01.index_of_coordinate", "worked_example_hard_coded", answers.index_of_worked_example_only,
     r"worked example"),
    ("ch01.index_of_coordinate", "calls_the_switched_off_layout", answers.index_of_calls_the_layout,
     r"switched off"),
    ("ch01.index_of_coordinate", "returns_a_float", answers.index_of_returns_a_float, r"expected an int"),

    ("ch01.coalesce_by_hand", "layout_returned_unchanged", answers.coalesced_unchanged, r"unchanged"),
    ("ch01.coalesce_by_hand", "size_one_modes_kept", answers.coalesced_keeps_size_one_modes, r"mode of size 1"),
    ("ch01.coalesce_by_hand", "size_one_modes_dropped_after_merging", answers.coalesced_drops_ones_after_merging,
     r"drop the size-1 modes first"),
    ("ch01.coalesce_by_hand", "merged_by_the_row_major_rule", answers.coalesced_row_major_rule,
     r"stride\[i\+1\] == shape\[i\] \* stride\[i\]"),
    ("ch01.coalesce_by_hand", "equal_strides_merged", answers.coalesced_merges_equal_strides,
     r"do not continue each other"),
    ("ch01.coalesce_by_hand", "one_mode_kept_as_a_tuple", answers.coalesced_keeps_one_mode_as_tuple,
     r"plain integers"),
    ("ch01.coalesce_by_hand", "nesting_not_flattened", answers.coalesced_does_not_flatten, r"flatten"),
    ("ch01.coalesce_by_hand", "worked_example_hard_coded", answers.coalesced_worked_example_only,
     r"worked example"),
    ("ch01.coalesce_by_hand", "calls_the_switched_off_coalesce", answers.coalesced_calls_coalesce,
     r"switched off"),

    ("ch01.transpose_by_composition", "the_view_itself_a_reshape", answers.transposer_returns_the_view,
     r"reshape, not a transpose"),
    ("ch01.transpose_by_composition", "only_the_shape_swapped", answers.transposer_shape_swapped_only,
     r"reshape, not a transpose"),
    ("ch01.transpose_by_composition", "batch_mode_dropped", answers.transposer_drops_the_batch,
     r"third mode"),
    ("ch01.transpose_by_composition", "a_1d_index_unfolded_row_major", answers.transposer_unfolds_a_row_major,
     r"row-major"),
    ("ch01.transpose_by_composition", "batch_stride_one_column", answers.transposer_batch_stride_one_column,
     r"mode b .*whole matrix"),
    ("ch01.transpose_by_composition", "strides_swapped", answers.transposer_swapped_strides,
     r"strides of n and m are swapped"),
    ("ch01.transpose_by_composition", "shape_not_transposed", answers.transposer_shape_not_transposed,
     r"shape \(N, M, B\)"),
    ("ch01.transpose_by_composition", "worked_example_hard_coded", answers.transposer_worked_example_only,
     r"worked example"),
    ("ch01.coalesce_by_hand", "nothing_left_when_every_mode_has_size_1", answers.coalesced_with_nothing_left_unhandled,
     r"every mode of this layout has size 1"),

    ("ch01.compose_by_hand", "composed_the_other_way_round", answers.composed_roles_swapped, r"roles swapped"),
    ("ch01.compose_by_hand", "strides_multiplied_mode_by_mode", answers.composed_strides_multiplied,
     r"multiplies B's strides by A's strides"),
    ("ch01.compose_by_hand", "shape_divisibility_not_checked", answers.composed_without_shape_divisibility,
     r"shape divisibility is broken"),
    ("ch01.compose_by_hand", "stride_divisibility_not_checked", answers.composed_without_stride_divisibility,
     r"stride divisibility is broken"),
    ("ch01.compose_by_hand", "walked_the_first_layout_uncoalesced", answers.composed_without_coalescing_a, r"coalesce A first"),
    ("ch01.compose_by_hand", "refuses_a_read_past_the_last_element", answers.composed_stops_at_the_end_of_a,
     r"last mode never runs out"),
    ("ch01.compose_by_hand", "worked_example_hard_coded", answers.composed_worked_example_only, r"worked answer"),

    ("ch01.complement_by_hand", "rest_rounded_down", answers.complement_rest_rounded_down, r"rounds up"),
    ("ch01.complement_by_hand", "block_taken_from_the_cosize", answers.complement_block_from_cosize,
     r"not A's cosize"),
    ("ch01.complement_by_hand", "modes_not_sorted_by_stride", answers.complement_modes_not_sorted,
     r"order of stride"),
    ("ch01.complement_by_hand", "gaps_not_filled", answers.complement_gaps_not_filled, r"holes .* not filled"),
    ("ch01.complement_by_hand", "gap_between_modes_not_filled", answers.complement_only_the_first_gap,
     r"holes between A's modes are not filled"),
    ("ch01.complement_by_hand", "gap_steps_by_one", answers.complement_gap_steps_by_one, r"not by 1"),
    ("ch01.complement_by_hand", "size_one_modes_kept", answers.complement_size_one_modes_kept,
     r"mode of size 1 adds no offsets"),
    ("ch01.complement_by_hand", "worked_example_hard_coded", answers.complement_worked_example_only,
     r"worked answer"),

    ("ch01.right_inverse_by_hand", "offsets_instead_of_indices", answers.right_inverse_offsets_not_indices,
     r"indices into A .*not A's offsets"),
    ("ch01.right_inverse_by_hand", "modes_not_sorted_by_stride", answers.right_inverse_modes_not_sorted,
     r"order of stride"),
    ("ch01.right_inverse_by_hand", "runs_past_the_hole", answers.right_inverse_runs_past_the_hole,
     r"leaves a hole"),
    ("ch01.right_inverse_by_hand", "worked_example_hard_coded", answers.right_inverse_worked_example_only,
     r"worked answer"),
]


def test_every_chapter_01_exercise_has_a_correct_answer_and_four_mistakes_or_more():
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch01"]
    assert len(ids) >= 4 and set(ids) == set(CORRECT)
    counts = mistakes_per_exercise(MISTAKES)
    assert all(counts[exercise_id] >= 4 for exercise_id in ids), counts


@pytest.mark.parametrize("exercise_id", sorted(CORRECT))
@pytest.mark.parametrize("seed", SEEDS)
def test_correct_answer_earns_every_reference_point_in_strict_mode(exercise_id, seed, monkeypatch):
    assert_right_answer_earns_every_reference_point(exercise_id, CORRECT[exercise_id], seed, monkeypatch)


@pytest.mark.parametrize("exercise_id,answer", ALSO_CORRECT, ids=[a.__name__ for _, a in ALSO_CORRECT])
@pytest.mark.parametrize("seed", SEEDS)
def test_the_notebooks_other_right_answers_earn_every_reference_point(exercise_id, answer, seed, monkeypatch):
    assert_right_answer_earns_every_reference_point(exercise_id, answer, seed, monkeypatch)


# the exercises of the layout algebra: real CuTeDSL answers their cases in one process below
ALGEBRA = ("ch01.compose_by_hand", "ch01.complement_by_hand", "ch01.right_inverse_by_hand")
CONFIRMED_ONE_BY_ONE = [(e, a) for e, a in sorted(CORRECT.items()) if e not in ALGEBRA] + ALSO_CORRECT


@pytest.mark.cutedsl
@pytest.mark.parametrize("exercise_id,answer", CONFIRMED_ONE_BY_ONE, ids=[a.__name__ for _, a in CONFIRMED_ONE_BY_ONE])
def test_correct_answer_is_confirmed_by_real_cutedsl_in_strict_mode(exercise_id, answer, monkeypatch):
    assert_real_cutedsl_confirms_it(exercise_id, answer, monkeypatch)


@pytest.mark.cutedsl
def test_the_algebra_exercises_right_answers_are_what_real_cutedsl_computes():
    """What the algebra exercises' cutedsl-cpu criteria do, for all three at once: real CuTeDSL computes the
    composition, complement and right inverse of every case of one seed (refusing the compositions CuTe
    refuses), and each equals the right answer's, in the form the criteria compare. One CuTeDSL process,
    where a check per exercise would start three: CuTeDSL's start-up is most of a check's time."""
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    import random

    from cutekit.checks import exercise
    from cutekit.checks.cutedsl import run_in_cutedsl
    asked = {"ch01.compose_by_hand": ("composed_offsets_in_cutedsl", ("a_shape", "a_stride", "b_shape", "b_stride"),
                                      lambda value: "refused" if value is None else str(value["offsets"])),
             "ch01.complement_by_hand": ("complement_offsets_in_cutedsl", ("shape", "stride", "n"),
                                         lambda value: str(value["offsets"])),
             "ch01.right_inverse_by_hand": ("right_inverse_offsets_in_cutedsl", ("shape", "stride"),
                                            lambda value: str(value["offsets"]))}
    calls, expected = [], []
    for exercise_id, (function, keys, text) in asked.items():
        for case in exercise(exercise_id).cases(random.Random(7)):
            calls.append((function, *(case[key] for key in keys)))
            expected.append(text(exercise(exercise_id).ask(CORRECT[exercise_id], case)))
    reply = run_in_cutedsl(answers.__file__, "in_cutedsl", calls, with_cute=True)
    assert reply.ok, reply.error
    assert [value or error for value, error in reply.values] == expected
    assert "refused" in expected


# mistakes whose cause shows only in the forked sandbox (it switches functions off there): graded forked
SANDBOXED = {"calls_the_switched_off_layout", "calls_the_switched_off_coalesce"}



def test_grading_in_this_process_gives_the_forked_sandboxs_hints(monkeypatch):
    """The shortcut the mistake sweep takes changes nothing a learner would see (seed 0, every mistake)."""
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    forked = [str(check(e, a, seed=0, record=False)) for e, name, a, _ in MISTAKES if name not in SANDBOXED]
    monkeypatch.setattr(grading, "run_isolated", lambda function, timeout=10.0: sandbox.Isolated(value=function()))
    assert [str(check(e, a, seed=0, record=False)) for e, name, a, _ in MISTAKES if name not in SANDBOXED] == forked

@pytest.mark.parametrize("exercise_id,answer,cause", mistake_params(MISTAKES))
def test_each_mistake_fails_with_a_hint_naming_its_cause_on_every_seed(exercise_id, answer, cause, monkeypatch,
                                                                        request):
    """Graded in this process, not in a forked child per check: the hints are what this test is about, and
    forking for every seed of every mistake costs about 20 ms a check under pytest (more than a minute in all).
    The mistakes in SANDBOXED are graded forked, as a learner's answer is."""
    if not any(name in request.node.name for name in SANDBOXED):
        monkeypatch.setenv("CUTEKIT_PROGRESS", "off")
        monkeypatch.setattr(grading, "run_isolated",
                            lambda function, timeout=10.0: sandbox.Isolated(value=function()))
    assert_mistake_fails_naming_its_cause(exercise_id, answer, cause, HINT_SEEDS, monkeypatch)


def test_hard_coded_answers_are_right_for_the_example_they_copy():
    """The mistakes are fair models: each is right for the example the notebook shows."""
    from cutekit import cute
    assert str(answers.picture_worked_example_only(None)) == "(3,5):(7,2)"
    assert answers.index_of_worked_example_only(0, 0, 0) == answers.index_of((4, (2, 3)), (2, (1, 8)), (1, (1, 2)))
    assert str(answers.coalesced_worked_example_only(0, 0)) == str(cute.coalesce(
        cute.make_layout((2, (1, 6)), stride=(1, (6, 2)))))
    row_major = cute.make_layout((4, 8), stride=(8, 1))
    assert str(cute.composition(row_major, answers.transposer_worked_example_only(4, 8, 1))) == "(8,4):(1,8)"
    assert str(answers.composed_worked_example_only(None, None)) == str(
        cute.composition(row_major, cute.make_layout(4, stride=2)))
    assert str(answers.complement_worked_example_only(0, 0, 0)) == str(
        cute.complement(cute.make_layout(4, stride=2), 24))
    assert str(answers.right_inverse_worked_example_only(0, 0)) == str(cute.right_inverse(row_major))


def test_a_grid_hint_names_the_first_element_that_differs(monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    result = check("ch01.layout_from_grid", answers.layout_for_column_major, seed=0)
    hint = [criterion for criterion in result.criteria if criterion.status == "failed"][0].hint
    assert "element (m, n, b) = (1, 0, 0) belongs at offset" in hint and "puts it at 1" in hint


def test_switching_coalesce_off_for_a_check_leaves_the_notebooks_cute_whole(monkeypatch):
    from cutekit import cute
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    original = cute.coalesce
    check("ch01.coalesce_by_hand", answers.coalesced_calls_coalesce, seed=0)
    assert cute.coalesce is original and str(cute.coalesce(cute.make_layout((2, 2), stride=(1, 2)))) == "4:1"
