"""Chapter 00's check: the right prediction passes in strict mode, and every wrong one below (named for
the mistake it models) loses points with a hint, on every seed tried."""
import pytest

from cutekit.checks import check, exercises

import answers_ch00 as answers

MUTANTS = [
    ("one_block_only", answers.predict_one_block_only, "lines"),
    ("ignores_y_and_z", answers.predict_ignores_y_and_z, "lines"),
    ("swaps_grid_and_block", answers.predict_swaps_grid_and_block, "missing"),
    ("off_by_one_range", answers.predict_off_by_one_range, "lines"),
    ("worked_example_only", answers.predict_worked_example_only, ""),
    ("returns_a_string", answers.predict_returns_a_string, "list of strings"),
]
SEEDS = (0, 1, 2, 12345, 999_999)


def test_chapter_00_has_its_exercise():
    assert [exercise.id for exercise in exercises() if exercise.chapter == "ch00"] == ["ch00.predict_printf"]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_right_prediction_earns_every_point_in_strict_mode(seed, monkeypatch):
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    result = check("ch00.predict_printf", answers.predict, seed=seed)
    assert result.passed and result.earned == result.possible


@pytest.mark.parametrize("name,answer,hint_word", MUTANTS, ids=[m[0] for m in MUTANTS])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_wrong_prediction_loses_points_with_a_hint(name, answer, hint_word, seed):
    result = check("ch00.predict_printf", answer, seed=seed, record=False)
    lost = [criterion for criterion in result.criteria if criterion.status == "failed"]
    assert lost and not result.passed, f"seed {seed}: {result}"
    hints = " ".join(criterion.hint for criterion in lost)
    assert all(criterion.hint for criterion in lost) and hint_word in hints, hints


@pytest.mark.parametrize("seed", SEEDS)
def test_the_right_lines_in_another_order_lose_only_the_order_point(seed):
    result = check("ch00.predict_printf", answers.predict_z_fastest, seed=seed, record=False)
    assert result.possible - result.earned <= 1
