"""Chapter 08 checks: each right answer earns every reference point in strict mode, and each mistake learners
make (MISTAKES in answers_ch08.py, with the cause its hint must name) fails with that hint on every seed 0-99.

Every exercise is graded in plain Python (layouts, numbers, and the mbarrier model of cutekit.sim.mbarriers),
so the sweep grades in this process (a fork per check would cost more than the grading; a test below shows
the hints are the same)."""
import random

import pytest

from cutekit.checks import ch08_hopper, check, exercises, grading, sandbox

from answers_ch08 import CORRECT, MISTAKES
from verdicts import (HINT_SEEDS, assert_mistake_fails_naming_its_cause,
                      assert_right_answer_earns_every_reference_point, mistake_params, mistakes_per_exercise)


def in_this_process(monkeypatch):
    monkeypatch.setenv("CUTEKIT_PROGRESS", "off")
    monkeypatch.setattr(grading, "run_isolated", lambda function, timeout=10.0: sandbox.Isolated(value=function()))


def test_chapter_08_has_five_exercises_each_with_five_mistakes_or_more():
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch08"]
    assert ids == list(CORRECT)
    counts = mistakes_per_exercise(MISTAKES)
    assert all(counts[exercise_id] >= 5 for exercise_id in ids), counts
    assert len({(row[0], row[1]) for row in MISTAKES}) == len(MISTAKES)


@pytest.mark.parametrize("exercise_id", list(CORRECT))
@pytest.mark.parametrize("seed", [0, 1])
def test_the_correct_answer_earns_every_reference_point_in_strict_mode(exercise_id, seed, monkeypatch):
    assert_right_answer_earns_every_reference_point(exercise_id, CORRECT[exercise_id], seed, monkeypatch)


def test_the_correct_answers_pass_on_every_seed(monkeypatch):
    in_this_process(monkeypatch)
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    for exercise_id, answer in CORRECT.items():
        for seed in HINT_SEEDS:
            result = check(exercise_id, answer, seed=seed, record=False)
            assert result.passed and result.earned == result.possible - result.waiting, f"seed {seed}: {result}"


def test_grading_in_this_process_gives_the_forked_sandboxs_hints(monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    forked = [str(check(e, a, seed=0, record=False)) for e, _, a, _ in MISTAKES]
    in_this_process(monkeypatch)
    assert [str(check(e, a, seed=0, record=False)) for e, _, a, _ in MISTAKES] == forked


@pytest.mark.parametrize("exercise_id,answer,cause", mistake_params(MISTAKES))
def test_each_mistake_fails_with_a_hint_naming_its_cause_on_every_seed(exercise_id, answer, cause, monkeypatch):
    in_this_process(monkeypatch)
    assert_mistake_fails_naming_its_cause(exercise_id, answer, cause, HINT_SEEDS, monkeypatch)


def test_every_draw_holds_the_cases_that_tell_the_mistakes_apart():
    for seed in HINT_SEEDS:
        pipeline = ch08_hopper._pipeline_cases(random.Random(seed))
        assert any(case["k_tiles"] < case["stages"] for case in pipeline)
        assert any(case["k_tiles"] > 2 * case["stages"] for case in pipeline)
        loops = ch08_hopper._main_loop_cases(random.Random(seed))
        assert any(case["depth"] >= 1 and case["k_tiles"] > case["stages"] for case in loops)
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


def consumer_loop_waiting_only_when_a_stage_is_due(k_tiles, stages, depth):
    """another right loop: a fence before every k-tile's wgmma, and wait_group only once a stage is due"""
    from cutekit.sim.mbarriers import arrive, commit_group, fence, wait, wait_group, wgmma
    steps, stage, phase = [], 0, 0
    for k_tile in range(k_tiles):
        steps += [wait("full", stage, phase), fence(), wgmma(stage, k_tile), commit_group()]
        if k_tile >= depth:
            steps += [wait_group(depth), arrive("empty", (k_tile - depth) % stages)]
        stage, phase = (0, phase ^ 1) if stage + 1 == stages else (stage + 1, phase)
    return steps + [wait_group(0)]


def test_another_right_main_loop_earns_every_point(monkeypatch):
    in_this_process(monkeypatch)
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    for seed in HINT_SEEDS:
        result = check("ch08.wgmma_main_loop", consumer_loop_waiting_only_when_a_stage_is_due, seed=seed, record=False)
        assert result.passed and result.earned == result.possible, f"seed {seed}: {result}"
