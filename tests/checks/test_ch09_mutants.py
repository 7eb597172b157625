"""Chapter 09 checks: each right answer earns every reference point in strict mode, and each mistake learners
make (MISTAKES in answers_ch09.py, with the cause its hint must name) fails with that hint. Both exercises are
graded in plain Python (numbers), so their mistakes run on the sweep's seeds in this process."""
import random

import pytest

from cutekit import cute
from cutekit.checks import ch09_blackwell, check, exercises, grading, sandbox

from answers_ch09 import CORRECT, MISTAKES, stages_by_hand
from answers_ch09_kernels import CAPSTONE_MISTAKES, EPILOGUE_MISTAKES, MMA_LOOP_MISTAKES, epilogue_with, mma_loop_with
from verdicts import (ALL_SEEDS, HINT_SEEDS, assert_mistake_fails_naming_its_cause,
                      assert_right_answer_earns_every_reference_point, mistake_params, mistakes_per_exercise)


# the kernel exercises' tables (run in test_ch09_kernel_mutants.py, on the tier that catches each row)
KERNEL_MISTAKES = [("ch09.mma_warp_loop", mistake.replace("_", " "), mma_loop_with(mistake), " | ".join(tiers.values()))
                   for mistake, tiers in MMA_LOOP_MISTAKES.items()] + \
                  [("ch09.tmem_epilogue", mistake.replace("_", " "), epilogue_with(mistake), " | ".join(tiers.values()))
                   for mistake, tiers in EPILOGUE_MISTAKES.items()] + \
                  [("ch09.capstone", mistake.replace("_", " "), edits, " | ".join(tiers.values()))
                   for mistake, (edits, tiers) in CAPSTONE_MISTAKES.items()]


def in_this_process(monkeypatch):
    monkeypatch.setenv("CUTEKIT_PROGRESS", "off")
    monkeypatch.setattr(grading, "run_isolated", lambda function, timeout=10.0: sandbox.Isolated(value=function()))


def test_chapter_09_has_two_exercises_each_with_eight_mistakes_or_more():
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch09"]
    assert ids[:2] == list(CORRECT)
    counts = mistakes_per_exercise(MISTAKES)
    assert all(counts[exercise_id] >= 8 for exercise_id in CORRECT), counts
    assert len({(row[0], row[1]) for row in MISTAKES}) == len(MISTAKES)


@pytest.mark.parametrize("exercise_id", list(CORRECT))
def test_the_correct_answer_earns_every_reference_point_in_strict_mode(exercise_id, monkeypatch):
    assert_right_answer_earns_every_reference_point(exercise_id, CORRECT[exercise_id], 0, monkeypatch)


def test_the_correct_answers_and_the_rules_by_hand_pass_on_every_seed(monkeypatch):
    in_this_process(monkeypatch)
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    for exercise_id, answer in [*CORRECT.items(), ("ch09.accumulator_stages", stages_by_hand)]:
        for seed in HINT_SEEDS:
            result = check(exercise_id, answer, seed=seed, record=False)
            assert result.passed and result.earned == result.possible - result.waiting, f"seed {seed}: {result}"


@pytest.mark.parametrize("exercise_id,answer,cause", mistake_params(MISTAKES))
def test_each_mistake_fails_with_a_hint_naming_its_cause_on_every_seed(exercise_id, answer, cause, monkeypatch):
    in_this_process(monkeypatch)
    assert_mistake_fails_naming_its_cause(exercise_id, answer, cause, HINT_SEEDS, monkeypatch)


def test_every_draw_holds_refusals_both_cta_groups_and_every_operand_width():
    for seed in ALL_SEEDS:
        plans = ch09_blackwell._stage_cases(random.Random(seed))
        refused = [case for case in plans if ch09_blackwell._refused(ch09_blackwell._safe(
            ch09_blackwell.reference_accumulator_stages, case))]
        assert len(refused) >= 4 and {c["bm"] for c in plans if c["cta_group"] == "TWO"} >= {128, 256}, (seed, plans)
        budgets = ch09_blackwell._ab_cases(random.Random(seed))
        assert {c["cta_group"] for c in budgets} == {"ONE", "TWO"}, (seed, budgets)
        assert any(ch09_blackwell._refused(ch09_blackwell._safe(ch09_blackwell.reference_ab_stages, c))
                   for c in budgets), (seed, budgets)



def test_the_rules_by_hand_are_cutekits_helpers_on_every_case():
    """The plain-Python references (the rules the chapter states) against the model answers, which build the
    tiled MMA, its accumulator and the shared-memory layouts with cutekit's Blackwell helpers
    (tests/cute/test_blackwell_atoms.py compares those with CuTeDSL 4.8.1)."""
    for seed in range(20):
        for case in ch09_blackwell._stage_cases(random.Random(seed)):
            assert ch09_blackwell._same(ch09_blackwell._ask_stages(CORRECT["ch09.accumulator_stages"], case),
                                        ch09_blackwell._safe(ch09_blackwell.reference_accumulator_stages, case)), case
        for case in ch09_blackwell._ab_cases(random.Random(seed)):
            assert ch09_blackwell._same(ch09_blackwell._ask_ab(CORRECT["ch09.ab_stages"], case),
                                        ch09_blackwell._safe(ch09_blackwell.reference_ab_stages, case)), case


def test_the_examples_numbers_follow_from_the_layouts_the_helpers_build():
    """ab_stages' example: a 256 x 96 pair tile of fp16 with a 64-deep k-tile keeps 128 x 64 of A and 48 x 64 of
    B in each CTA (section 2.4's halves), 16384 + 6144 bytes a stage; (232448 - 16384) // 22528 = 9."""
    from cutekit.cute.nvgpu import OperandMajorMode, tcgen05
    from cutekit.cute.utils import blackwell_helpers
    K = OperandMajorMode.K
    mma = blackwell_helpers.make_trivial_tiled_mma(cute.Float16, cute.Float16, K, K, cute.Float32,
                                                   tcgen05.CtaGroup.TWO, (256, 96))
    s_b = blackwell_helpers.make_smem_layout_b(mma, (256, 96, 64), cute.Float16, 1)
    assert str(s_b) == "S<3,4,3> o 0 o ((48,16),1,4,1):((64,1),0,16,0)"
    assert cute.size_in_bytes(cute.Float16, s_b) == 6144


@pytest.mark.cutedsl
def test_real_cutedsl_gives_what_cutekit_gave_from_the_right_answers(monkeypatch):
    """The cutedsl-cpu criteria move the learner's function into a CuTeDSL process traced for sm_100a (its enum
    members and cutekit's tcgen05, utils and memory modules become CuTeDSL's). One exercise here (a CuTeDSL
    process costs about 6 s); the strict run of solutions/09_blackwell.ipynb grades both with this tier."""
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference cutedsl-cpu")
    result = check("ch09.accumulator_stages", CORRECT["ch09.accumulator_stages"], seed=5, record=False)
    assert "cutedsl-cpu" in result.tiers and result.earned == result.possible, str(result)


@pytest.mark.cutedsl
def test_one_cta_may_use_227_kib_on_sm_100_in_cutedsl():
    cutlass = pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    import cutlass.utils
    assert cutlass.utils.get_smem_capacity_in_bytes("sm_100") == ch09_blackwell.SMEM_BYTES == 232448
