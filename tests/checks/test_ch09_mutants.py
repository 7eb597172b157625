"""Chapter 09 checks: each right answer earns every reference point in strict mode, and each mistake learners
make (MISTAKES in answers_ch09.py, with the cause its hint must name) fails with that hint. Both exercises are
graded in plain Python (numbers and layouts), so their mistakes run on the sweep's seeds in this process."""
import random

import pytest

from cutekit.checks import ch09_blackwell, check, exercises, grading, sandbox

from answers_ch09 import CORRECT, MISTAKES, umma_by_hand
from answers_ch09_kernels import EPILOGUE_MISTAKES, MMA_LOOP_MISTAKES, epilogue_with, mma_loop_with
from verdicts import (ALL_SEEDS, HINT_SEEDS, assert_mistake_fails_naming_its_cause,
                      assert_right_answer_earns_every_reference_point, mistake_params, mistakes_per_exercise)


# the kernel exercises' tables (run in test_ch09_kernel_mutants.py, on the tier that catches each row)
KERNEL_MISTAKES = [("ch09.mma_warp_loop", mistake.replace("_", " "), mma_loop_with(mistake), cause)
                   for mistake, (_, cause) in MMA_LOOP_MISTAKES.items()] + \
                  [("ch09.tmem_epilogue", mistake.replace("_", " "), epilogue_with(mistake), cause)
                   for mistake, (_, cause) in EPILOGUE_MISTAKES.items()]


def in_this_process(monkeypatch):
    monkeypatch.setenv("CUTEKIT_PROGRESS", "off")
    monkeypatch.setattr(grading, "run_isolated", lambda function, timeout=10.0: sandbox.Isolated(value=function()))


def test_chapter_09s_host_exercises_each_have_six_mistakes_or_more():
    """(the kernel exercises' tables: test_ch09_kernel_mutants.py)"""
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch09"][:len(CORRECT)]
    assert ids == list(CORRECT)
    counts = mistakes_per_exercise(MISTAKES)
    assert all(counts[exercise_id] >= 6 for exercise_id in ids), counts
    assert len({(row[0], row[1]) for row in MISTAKES}) == len(MISTAKES)


@pytest.mark.parametrize("exercise_id", list(CORRECT))
def test_the_correct_answer_earns_every_reference_point_in_strict_mode(exercise_id, monkeypatch):
    assert_right_answer_earns_every_reference_point(exercise_id, CORRECT[exercise_id], 0, monkeypatch)


def test_the_correct_answers_and_the_rules_by_hand_pass_on_every_seed(monkeypatch):
    in_this_process(monkeypatch)
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    for exercise_id, answer in [*CORRECT.items(), ("ch09.umma_plan", umma_by_hand)]:
        for seed in HINT_SEEDS:
            result = check(exercise_id, answer, seed=seed, record=False)
            assert result.passed and result.earned == result.possible - result.waiting, f"seed {seed}: {result}"


@pytest.mark.parametrize("exercise_id,answer,cause", mistake_params(MISTAKES))
def test_each_mistake_fails_with_a_hint_naming_its_cause_on_every_seed(exercise_id, answer, cause, monkeypatch):
    in_this_process(monkeypatch)
    assert_mistake_fails_naming_its_cause(exercise_id, answer, cause, HINT_SEEDS, monkeypatch)


def test_every_draw_holds_a_refused_tile_a_pair_of_128_rows_and_both_majors():
    for seed in ALL_SEEDS:
        plans = ch09_blackwell._umma_cases(random.Random(seed))
        refused = [case for case in plans if ch09_blackwell._refused(ch09_blackwell._safe(
            ch09_blackwell.reference_umma_plan, case))]
        assert len(refused) >= 3 and any(c["cta_group"] == "TWO" and c["bm"] == 128 for c in plans), (seed, plans)
        smem = ch09_blackwell._smem_cases(random.Random(seed))
        assert {c["major"] for c in smem} == {"K", "MN"} and {c["cta_group"] for c in smem} == {"ONE", "TWO"}


def test_the_rules_by_hand_are_cutekits_helpers_on_every_case():
    """The plain-Python reference (the rules the chapter states) against cutekit's Blackwell helpers, which
    tests/cute/test_blackwell_atoms.py compares with CuTeDSL 4.8.1."""
    from cutekit import cute
    for seed in range(20):
        for case in ch09_blackwell._umma_cases(random.Random(seed)):
            args = (case["bm"], case["bn"], getattr(cute, case["ab"]), getattr(cute, case["acc"]),
                    ch09_blackwell._group(case["cta_group"]), case["acc_stages"])
            assert ch09_blackwell._ask_umma(CORRECT["ch09.umma_plan"], case) == \
                ch09_blackwell._safe(ch09_blackwell.reference_umma_plan, case) or \
                ch09_blackwell._refused(ch09_blackwell._ask_umma(CORRECT["ch09.umma_plan"], case)), (case, args)


@pytest.mark.cutedsl
def test_real_cutedsl_gives_what_cutekit_gave_from_the_right_answers(monkeypatch):
    """The cutedsl-cpu criteria move the learner's function into a CuTeDSL process traced for sm_100a (its enum
    members and cutekit's tcgen05, utils and memory modules become CuTeDSL's). One exercise here (a CuTeDSL
    process costs about 6 s); the strict run of solutions/09_blackwell.ipynb grades both with this tier."""
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference cutedsl-cpu")
    result = check("ch09.umma_plan", CORRECT["ch09.umma_plan"], seed=5, record=False)
    assert "cutedsl-cpu" in result.tiers and result.earned == result.possible, str(result)
