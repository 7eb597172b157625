"""Chapter 08 checks: each right answer earns every reference point in strict mode, and each mistake learners
make (MISTAKES in answers_ch08.py, with the cause its hint must name) fails with that hint.

Exercises 1-3 are graded in plain Python (layouts and numbers), so their mistakes run on every seed 0-99 in
this process (a fork per check would cost more than the grading; a test below shows the hints are the same).
Exercises 4 and 5 run the learner's loop inside the chapter's kernel on the simulator (1-3 s a check, forked,
since they switch `cutlass` to the simulator), so their mistakes run on one seed, and their case generator is
swept over seeds 0-99 instead: every draw holds a problem with fewer k-tiles than stages and one that goes
round the ring at least twice."""
import random

import pytest

from cutekit.checks import ch08_hopper, check, exercises, grading, sandbox

from answers_ch08 import CORRECT, KERNEL_EXERCISES, MISTAKES
from verdicts import (HINT_SEEDS, assert_mistake_fails_naming_its_cause,
                      assert_right_answer_earns_every_reference_point, mistake_params, mistakes_per_exercise)


KERNEL_SEEDS = (0,)
PLAIN_MISTAKES = [row for row in MISTAKES if row[0] not in KERNEL_EXERCISES]
KERNEL_MISTAKES = [row for row in MISTAKES if row[0] in KERNEL_EXERCISES]


def in_this_process(monkeypatch):
    monkeypatch.setenv("CUTEKIT_PROGRESS", "off")
    monkeypatch.setattr(grading, "run_isolated", lambda function, timeout=10.0: sandbox.Isolated(value=function()))


def test_chapter_08_has_five_exercises_each_with_five_mistakes_or_more():
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch08"]
    assert ids == list(CORRECT)
    counts = mistakes_per_exercise(MISTAKES)
    assert all(counts[exercise_id] >= 5 for exercise_id in ids), counts
    assert len({(row[0], row[1]) for row in MISTAKES}) == len(MISTAKES)


@pytest.mark.parametrize("exercise_id, seed", [(exercise_id, seed) for exercise_id in CORRECT for seed in (0, 1)
                                               if seed == 0 or exercise_id not in KERNEL_EXERCISES])
def test_the_correct_answer_earns_every_reference_point_in_strict_mode(exercise_id, seed, monkeypatch):
    """(the kernel loops on one seed here; other seeds in test_another_right_consumer_loop_earns... and the
    cutedsl test below)"""
    assert_right_answer_earns_every_reference_point(exercise_id, CORRECT[exercise_id], seed, monkeypatch)


def test_the_correct_answers_pass_on_every_seed(monkeypatch):
    in_this_process(monkeypatch)
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    for exercise_id, answer in CORRECT.items():
        if exercise_id in KERNEL_EXERCISES:
            continue            # simulated: the strict test above runs them on two seeds
        for seed in HINT_SEEDS:
            result = check(exercise_id, answer, seed=seed, record=False)
            assert result.passed and result.earned == result.possible - result.waiting, f"seed {seed}: {result}"


def test_grading_in_this_process_gives_the_forked_sandboxs_hints(monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    forked = [str(check(e, a, seed=0, record=False)) for e, _, a, _ in PLAIN_MISTAKES]
    in_this_process(monkeypatch)
    assert [str(check(e, a, seed=0, record=False)) for e, _, a, _ in PLAIN_MISTAKES] == forked


@pytest.mark.parametrize("exercise_id,answer,cause", mistake_params(PLAIN_MISTAKES))
def test_each_mistake_fails_with_a_hint_naming_its_cause_on_every_seed(exercise_id, answer, cause, monkeypatch):
    in_this_process(monkeypatch)
    assert_mistake_fails_naming_its_cause(exercise_id, answer, cause, HINT_SEEDS, monkeypatch)


@pytest.mark.parametrize("exercise_id,answer,cause", mistake_params(KERNEL_MISTAKES))
def test_each_kernel_loop_mistake_fails_with_a_hint_naming_its_cause(exercise_id, answer, cause, monkeypatch):
    assert_mistake_fails_naming_its_cause(exercise_id, answer, cause, KERNEL_SEEDS, monkeypatch)


def test_every_draw_holds_the_cases_that_tell_the_mistakes_apart():
    for seed in HINT_SEEDS:
        for draw, least in ((ch08_hopper._loop_cases, 2), (ch08_hopper._consumer_cases, 3)):
            few, laps = draw(random.Random(seed))
            k_tiles = [-(-case["K"] // 64) for case in (few, laps)]
            assert k_tiles[0] < few["STAGES"] and k_tiles[1] > 2 * laps["STAGES"], (seed, few, laps)
            assert least <= few["STAGES"] == laps["STAGES"] <= 4 and few["N"] % 8 == laps["N"] % 8 == 0
            assert few["K"] % 8 == laps["K"] % 8 == 0 and laps["K"] % 64       # ragged K: a short last k-tile
            assert max(few["M"], laps["M"]) <= 128 and max(few["N"], laps["N"]) <= few["BN"]   # one tile of C
        tma = ch08_hopper._tma_cases(random.Random(seed))
        assert {case["cluster_m"] for case in tma} == {1, 2}


def test_the_mbarrier_model_names_its_mistakes():
    from cutekit.sim.mbarriers import MBarrier
    barrier = MBarrier("full[0]", 1)
    assert barrier.passes(1) and not barrier.passes(0)          # a fresh barrier: "the phase before" is complete
    barrier.arrive(expect_tx=128)
    assert barrier.phase == 0                                   # the arrival is in, the bytes are not
    barrier.complete_tx(128)
    assert barrier.phase == 1 and barrier.passes(0) and not barrier.passes(1)


@pytest.mark.cutedsl
def test_real_cutedsl_builds_the_layouts_cutekit_built_from_the_right_answer(monkeypatch):
    """The cutedsl-cpu criterion moves the learner's function (cutekit's `cute` and `warpgroup` become
    CuTeDSL's) into a CuTeDSL process; the right answer's layouts are CuTeDSL's on every case."""
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference cutedsl-cpu")
    result = check("ch08.smem_layout", CORRECT["ch08.smem_layout"], seed=5, record=False)
    assert "cutedsl-cpu" in result.tiers and result.earned == result.possible, str(result)


def consumer_loop_with_a_carried_phase(tiled_mma, accumulators, tCrA, tCrB, full, empty, k_tiles, stages, lane):
    """another right loop: the stage and phase carried round the loop (as the kernel does), the two stages in
    flight kept in variables"""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import warpgroup
    stage, phase = cutlass.Int32(0), cutlass.Int32(0)
    older, old = cutlass.Int32(0), cutlass.Int32(0)
    for k_tile in range(k_tiles):
        cute.arch.mbarrier_wait(full + stage, phase)
        warpgroup.fence()
        for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
            cute.gemm(tiled_mma, accumulators, tCrA[None, None, kb, stage], tCrB[None, None, kb, stage], accumulators)
        warpgroup.commit_group()
        warpgroup.wait_group(2)
        if k_tile >= 2 and lane == 0:
            cute.arch.mbarrier_arrive(empty + older)
        older, old = old, stage
        stage = stage + 1
        if stage == stages:
            stage, phase = cutlass.Int32(0), phase ^ 1
    warpgroup.wait_group(0)


def test_another_right_consumer_loop_earns_every_reference_point(monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    result = check("ch08.wgmma_main_loop", consumer_loop_with_a_carried_phase, seed=7, record=False)
    assert result.passed and result.earned == result.possible - result.waiting == 4, str(result)


@pytest.mark.cutedsl
@pytest.mark.parametrize("exercise_id", ["ch08.mbarrier_phases", "ch08.wgmma_main_loop"])
def test_real_cutedsl_compiles_the_right_loops_inside_the_kernel_for_sm_90a(exercise_id, monkeypatch):
    """The cutedsl-cpu criterion moves the loop by source into a module, compiles the chapter's kernel with it
    for sm_90a and reads the PTX: the right loops earn its point."""
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference cutedsl-cpu")
    result = check(exercise_id, CORRECT[exercise_id], seed=2, record=False)
    compiled = next(criterion for criterion in result.criteria if criterion.tier == "cutedsl-cpu")
    assert result.passed and compiled.status == "passed", str(result)
