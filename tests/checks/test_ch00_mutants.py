"""Chapter 00's check: the right prediction passes in strict mode, and every mistake in MISTAKES (named for
what the learner got wrong) loses points on the sweep's seeds (tests/checks/verdicts.py HINT_SEEDS: 0-9, 0-99 under make test-deep) with a hint that names its cause."""
import pytest

from cutekit.checks import check, exercises, grading, sandbox

from verdicts import HINT_SEEDS, SEEDS, assert_mistake_fails_naming_its_cause, mistake_params

import answers_ch00 as answers

# (exercise, mistake, wrong answer, what the hint must name: a regular expression, case-insensitive)
MISTAKES = [
    ("ch00.predict_printf", "one_block_only", answers.predict_one_block_only, r"every block of the grid"),
    ("ch00.predict_printf", "y_and_z_ignored", answers.predict_ignores_y_and_z, r"y and z"),
    ("ch00.predict_printf", "grid_and_block_swapped", answers.predict_swaps_grid_and_block,
     r"grid and block swapped"),
    ("ch00.predict_printf", "one_thread_too_many", answers.predict_off_by_one_range, r"from 0 to"),
    ("ch00.predict_printf", "ids_counted_from_one", answers.predict_counts_from_one, r"from 0 to"),
    ("ch00.predict_printf", "worked_example_hard_coded", answers.predict_worked_example_only,
     r"worked example"),
    ("ch00.predict_printf", "returns_a_string", answers.predict_returns_a_string, r"list of strings"),
    ("ch00.predict_printf", "z_varies_fastest", answers.predict_z_fastest, r"x varies fastest"),
    ("ch00.predict_printf", "blocks_z_fastest", answers.predict_blocks_z_fastest,
     r"blockIdx\.x varies fastest"),
    ("ch00.predict_printf", "threads_outer_blocks_inner", answers.predict_threads_outer_blocks_inner,
     r"block by block"),
]
ORDER_ONLY = ["z_varies_fastest", "blocks_z_fastest", "threads_outer_blocks_inner"]


def test_chapter_00_has_its_exercise():
    assert [exercise.id for exercise in exercises() if exercise.chapter == "ch00"] == ["ch00.predict_printf"]
    assert len(MISTAKES) >= 4


@pytest.mark.parametrize("seed", SEEDS)
def test_the_right_prediction_earns_every_point_in_strict_mode(seed, monkeypatch):
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    result = check("ch00.predict_printf", answers.predict, seed=seed)
    assert result.passed and result.earned == result.possible



def test_grading_in_this_process_gives_the_forked_sandboxs_hints(monkeypatch):
    """The shortcut the mistake sweep takes changes nothing a learner would see (seed 0, every mistake)."""
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    forked = [str(check(e, a, seed=0, record=False)) for e, name, a, _ in MISTAKES]
    monkeypatch.setattr(grading, "run_isolated", lambda function, timeout=10.0: sandbox.Isolated(value=function()))
    assert [str(check(e, a, seed=0, record=False)) for e, name, a, _ in MISTAKES] == forked

@pytest.mark.parametrize("exercise_id,answer,cause", mistake_params(MISTAKES))
def test_each_mistake_fails_with_a_hint_naming_its_cause_on_every_seed(exercise_id, answer, cause, monkeypatch):
    """Graded in this process, not in a forked child per check: the hints are what this test is about, and
    forking for every seed of every mistake costs about 20 ms a check under pytest. The forked sandbox grades
    the right answer above, and every check in a notebook."""
    monkeypatch.setenv("CUTEKIT_PROGRESS", "off")
    monkeypatch.setattr(grading, "run_isolated", lambda function, timeout=10.0: sandbox.Isolated(value=function()))
    assert_mistake_fails_naming_its_cause(exercise_id, answer, cause, HINT_SEEDS, monkeypatch)


@pytest.mark.parametrize("name", ORDER_ONLY)
@pytest.mark.parametrize("seed", SEEDS)
def test_the_right_lines_in_another_order_lose_only_the_order_point(name, seed):
    answer = next(row[2] for row in MISTAKES if row[1] == name)
    result = check("ch00.predict_printf", answer, seed=seed, record=False)
    assert result.possible - result.earned == 1
