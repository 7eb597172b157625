"""Chapter 01 checks: every correct answer passes in strict mode on every tier this machine has, and every
wrong answer below (each named for the mistake it models) loses points, with a hint, on every seed tried."""
import pytest

from cutekit.checks import check, exercises

from verdicts import assert_real_cutedsl_confirms_it, assert_right_answer_earns_every_reference_point, assert_wrong_answer_loses_points_with_a_hint, mutant_params, SEEDS

import answers_ch01 as answers

CORRECT = {
    "ch01.layout_from_grid": answers.layout_for,
    "ch01.layout_from_picture": answers.layout_from_picture,
    "ch01.index_of_coordinate": answers.index_of,
    "ch01.coalesce_by_hand": answers.coalesced,
    "ch01.transpose_by_composition": answers.transposer,
}

MUTANTS = [
    ("ch01.layout_from_grid", "column_major_strides", answers.layout_for_column_major),
    ("ch01.layout_from_grid", "swapped_strides", answers.layout_for_swapped_strides),
    ("ch01.layout_from_grid", "transposed_shape", answers.layout_for_transposed_shape),
    ("ch01.layout_from_grid", "off_by_one_row_stride", answers.layout_for_off_by_one_stride),
    ("ch01.layout_from_grid", "hard_coded_worked_example", answers.layout_for_worked_example_only),
    ("ch01.layout_from_grid", "flattened_to_one_mode", answers.layout_for_flattened),
    ("ch01.layout_from_grid", "returns_a_string_not_a_layout", answers.layout_for_returns_a_string),
    ("ch01.layout_from_picture", "swapped_strides", answers.picture_swapped_strides),
    ("ch01.layout_from_picture", "transposed_shape", answers.picture_transposed_shape),
    ("ch01.layout_from_picture", "assumes_every_picture_is_row_major", answers.picture_assumes_row_major),
    ("ch01.layout_from_picture", "off_by_one_row_count", answers.picture_off_by_one_shape),
    ("ch01.layout_from_picture", "hard_coded_worked_example", answers.picture_worked_example_only),
    ("ch01.layout_from_picture", "stride_from_the_last_cell", answers.picture_steps_from_last_cell),
    ("ch01.index_of_coordinate", "unfolds_1d_index_row_major", answers.index_of_row_major_unfolding),
    ("ch01.index_of_coordinate", "ignores_nesting_of_a_flat_coordinate", answers.index_of_ignores_nesting),
    ("ch01.index_of_coordinate", "off_by_one", answers.index_of_off_by_one),
    ("ch01.index_of_coordinate", "reversed_inner_strides", answers.index_of_reversed_inner_strides),
    ("ch01.index_of_coordinate", "uses_shape_as_stride", answers.index_of_uses_shape_as_stride),
    ("ch01.index_of_coordinate", "hard_coded_worked_example", answers.index_of_worked_example_only),
    ("ch01.index_of_coordinate", "calls_the_switched_off_layout", answers.index_of_calls_the_layout),
    ("ch01.index_of_coordinate", "returns_a_float", answers.index_of_returns_a_float),
    ("ch01.coalesce_by_hand", "returns_the_layout_unchanged", answers.coalesced_unchanged),
    ("ch01.coalesce_by_hand", "keeps_size_one_modes", answers.coalesced_keeps_size_one_modes),
    ("ch01.coalesce_by_hand", "merges_by_the_row_major_rule", answers.coalesced_row_major_rule),
    ("ch01.coalesce_by_hand", "keeps_a_single_mode_as_a_tuple", answers.coalesced_keeps_one_mode_as_tuple),
    ("ch01.coalesce_by_hand", "merges_modes_with_equal_strides", answers.coalesced_merges_equal_strides),
    ("ch01.coalesce_by_hand", "hard_coded_worked_example", answers.coalesced_worked_example_only),
    ("ch01.coalesce_by_hand", "calls_the_switched_off_coalesce", answers.coalesced_calls_coalesce),
    ("ch01.transpose_by_composition", "returns_a_itself", answers.transposer_returns_a_itself),
    ("ch01.transpose_by_composition", "returns_the_transpose_not_b", answers.transposer_returns_the_transpose),
    ("ch01.transpose_by_composition", "swapped_strides", answers.transposer_swapped_strides),
    ("ch01.transpose_by_composition", "hard_coded_worked_example", answers.transposer_worked_example_only),
    ("ch01.transpose_by_composition", "off_by_one_stride", answers.transposer_off_by_one_stride),
    ("ch01.transpose_by_composition", "shape_not_transposed", answers.transposer_shape_not_transposed),
]



def test_every_chapter_01_exercise_has_a_correct_answer_and_five_wrong_ones():
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch01"]
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


def test_hard_coded_answer_passes_the_worked_example_it_copies():
    """The mutant is a fair model: it is right for the example shown in the notebook."""
    from cutekit import cute
    assert str(answers.layout_for_worked_example_only(4, 8)) == str(answers.layout_for(4, 8))
    assert answers.index_of_worked_example_only(0, 0, 0) == answers.index_of((4, (2, 3)), (2, (1, 8)), (1, (1, 2)))
    assert str(answers.coalesced_worked_example_only(0, 0)) == str(cute.coalesce(
        cute.make_layout((2, (1, 6)), stride=(1, (6, 2)))))
    assert str(answers.transposer_worked_example_only(4, 8)) == str(answers.transposer(4, 8))


def test_a_row_major_unfolding_gets_the_hint_that_names_it(monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    result = check("ch01.index_of_coordinate", answers.index_of_row_major_unfolding, seed=3)
    assert "column-major, the first mode fastest" in str(result)


def test_a_grid_hint_names_the_first_element_that_differs(monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    result = check("ch01.layout_from_grid", answers.layout_for_column_major, seed=0)
    hint = [criterion for criterion in result.criteria if criterion.status == "failed"][0].hint
    assert "element (m, n) = (1, 0) belongs at offset" in hint and "puts it at 1" in hint


def test_switching_coalesce_off_for_a_check_leaves_the_notebooks_cute_whole(monkeypatch):
    from cutekit import cute
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    original = cute.coalesce
    check("ch01.coalesce_by_hand", answers.coalesced_calls_coalesce, seed=0)
    assert cute.coalesce is original and str(cute.coalesce(cute.make_layout((2, 2), stride=(1, 2)))) == "4:1"
