"""A hint names the cause and the place of a mistake, never the model answer's code or formula; the second hint
level, `hint(id)`, states the rule behind the exercise, never the answer either.

The model answer of `chNN.x` is the code between BEGIN/END SOLUTION before `check("chNN.x", ...)` in
solutions/NN_*.py; its expressions, and how a text is searched for them (as written, or as a formula with other
names), are model_answers.py's.

Every hint a wrong answer of a mistake table gets is checked where the chapters' mutant tests grade it:
`verdicts.assert_mistake_fails_naming_its_cause` calls `assert_no_hint_answers` on every result of every seed it
grades, kernels included, so nothing is simulated twice. This file holds the rest: the search itself, every
exercise's statement, example, criteria and rule, the right answers' messages, and `hint()`."""
import importlib

import pytest

from cutekit.checks import check, exercises, grading, hint, sandbox

import model_answers
from model_answers import GIVEN, answer_in, model_answer, model_expressions
from verdicts import assert_no_hint_answers

CHAPTERS = [f"ch{n:02d}" for n in range(9)]
EXERCISES = [exercise.id for exercise in exercises()]


def _exercise(exercise_id):
    return next(exercise for exercise in exercises() if exercise.id == exercise_id)


# ---- the search ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("exercise_id, hint_text", [
    ("ch05.tiled_copy_row_sum", "a thread's row is row_block * 8 + tidx // 16"),
    ("ch05.tiled_copy_row_sum", "reduce over the row, warp_reduction_sum(x, threads_in_group=16)"),
    ("ch05.tiled_copy_row_sum", "the first lane of each 16 writes (tidx % 16 == 0)"),
    ("ch08.wgmma_main_loop", "wait with parity (k // stages) % 2"),
    ("ch08.wgmma_main_loop", "release empty + (k_tile - 2) % stages"),
    ("ch08.mbarrier_phases", "so wait with parity ((k_tile // stages) - 1) % 2"),
    ("ch05.sum_dim0", "the grid has size(divided, mode=[1, 1]) blocks"),
    ("ch06.ref_to_src", "ref2src is composition(right_inverse(src), dst)"),
    ("ch03.predict_zipped", "one tile down is tile_m * down"),
])
def test_a_hint_that_writes_the_answers_formula_is_caught_whatever_its_names(exercise_id, hint_text):
    assert answer_in(hint_text, exercise_id)


@pytest.mark.parametrize("exercise_id, hint_text", [
    ("ch08.mbarrier_phases", "the TMA loads go through cute.copy, with the stage's full barrier"),
    ("ch07.main_loop", "a second cute.arch.sync_threads() at the end of each k-tile"),
    ("ch05.tiled_copy_row_sum", "rows 4 to 7 of each block were never written: a row is 16 threads, not a warp"),
    ("ch01.layout_from_grid", "element (0, 0, 1) belongs at offset 12; your layout puts it at 6"),
    ("ch01.layout_from_grid", "element (m, n) of matrix b at offset b*M*N + m*N + n"),    # M*N is no part of it
    ("ch05.tiled_copy_row_sum", "line 30 `row = row_block * 8 + tidx // 16`: out of bounds"),  # the learner's line
    ("ch02.thread_owns", "(line 3: return [(index % rows, index // rows) for index in indices]) raised"),
])
def test_naming_an_api_a_case_or_the_learners_own_line_hands_over_nothing(exercise_id, hint_text):
    assert answer_in(hint_text, exercise_id) == []


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_every_exercise_has_a_model_answer_with_expressions_to_keep_out_of_its_hints(exercise_id):
    assert model_answer(exercise_id).strip(), exercise_id
    assert model_expressions(exercise_id), f"{exercise_id}: its model answer has no expression the search knows"


def test_an_exercise_without_a_check_call_in_its_solution_is_named():
    with pytest.raises(model_answers.NoModelAnswer, match="ch05.no_such_exercise"):
        model_answer("ch05.no_such_exercise")


# ---- what every learner sees: statement, example, criteria, rule ---------------------------------------------------

@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_the_statement_example_and_criteria_do_not_hand_over_the_answer(exercise_id):
    exercise = _exercise(exercise_id)
    for text in (exercise.statement, exercise.example, *(criterion.name for criterion in exercise.criteria)):
        assert not answer_in(text, exercise_id), f"{exercise_id}: {answer_in(text, exercise_id)} in {text!r}"


@pytest.mark.parametrize("exercise_id", sorted(GIVEN))
def test_what_a_statement_gives_is_written_in_that_statement(exercise_id):
    """An expression of the model answer a hint may repeat, because the statement or example already writes it."""
    exercise = _exercise(exercise_id)
    shown = answer_in(exercise.statement, exercise_id, given=True) + answer_in(exercise.example, exercise_id,
                                                                               given=True)
    assert set(GIVEN[exercise_id]) <= set(shown), (exercise_id, set(GIVEN[exercise_id]) - set(shown))


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_every_exercise_states_its_rule_and_the_rule_does_not_hand_over_the_answer(exercise_id):
    rule = _exercise(exercise_id).rule
    assert rule.strip(), (f"{exercise_id} is registered without rule=: give its Exercise the rule(s) behind it, one "
                          f"per line, for hint({exercise_id!r})")
    assert not answer_in(rule, exercise_id), f"{exercise_id}: the rule writes out {answer_in(rule, exercise_id)}"


# ---- the right answers' messages -----------------------------------------------------------------------------------

def _right_answers():
    """(exercise id, right answer) from every chapter's mistake table whose checks run in plain Python (the
    kernels' right answers are graded, and their results checked, by the chapters' mutant tests)."""
    found = []
    for chapter in CHAPTERS:
        module = importlib.import_module(f"test_{chapter}_mutants")
        kernels = set(getattr(module, "KERNEL_EXERCISES", ()))
        right = dict(getattr(module, "CORRECT", {}))
        if chapter == "ch00":
            right["ch00.predict_printf"] = module.answers.predict
        found += [(exercise_id, answer) for exercise_id, answer in right.items()
                  if exercise_id not in kernels and callable(answer)]
    return found


@pytest.mark.parametrize("exercise_id, answer", [pytest.param(e, a, id=e) for e, a in _right_answers()])
def test_a_right_answers_result_hands_over_nothing_either(exercise_id, answer, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    monkeypatch.setenv("CUTEKIT_PROGRESS", "off")
    monkeypatch.setattr(grading, "run_isolated", lambda function, timeout=10.0: sandbox.Isolated(value=function()))
    result = check(exercise_id, answer, seed=0)
    assert result.passed
    assert_no_hint_answers(result)
    assert not answer_in(result.note, exercise_id)


# ---- hint(): the second level ----------------------------------------------------------------------------------

def test_hint_prints_the_rules_behind_an_exercise(capsys):
    hint("ch08.mbarrier_phases")
    printed = capsys.readouterr().out
    assert printed.startswith("ch08.mbarrier_phases: the rule")
    assert "a wait on parity p returns once the phase with that parity has completed" in " ".join(printed.split())
    assert not answer_in(printed, "ch08.mbarrier_phases")


def test_hint_of_an_unknown_exercise_names_the_exercises_of_its_chapter():
    with pytest.raises(ValueError, match="chapter 08's exercises are ch08.smem_layout, ch08.tma_plan"):
        hint("ch08.mbarrier_phase")


def test_hint_of_an_unknown_chapter_names_the_chapters():
    with pytest.raises(ValueError, match="'ch42' is not one of the course's \\(ch00, ch01"):
        hint("ch42.layouts")
    with pytest.raises(TypeError, match="exercise id such as"):
        hint(5)
