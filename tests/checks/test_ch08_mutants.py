"""Chapter 08 checks: each right answer earns every reference point in strict mode, and each mistake learners
make (MISTAKES in answers_ch08.py, with the cause its hint must name) fails with that hint.

Exercises 1-3 are graded in plain Python (layouts and numbers), so their mistakes run on the sweep's seeds (tests/checks/verdicts.py HINT_SEEDS: 0-9, 0-99 under make test-deep) in
this process (a fork per check would cost more than the grading; a test below shows the hints are the same).
Exercises 4 and 5 run the learner's loop inside the chapter's kernel on the simulator (1-3 s a check, forked,
since they switch `cutlass` to the simulator), so their mistakes run on one seed (make test: one problem at a
time, verdicts.kernel_mistake_results), and their case generator is
swept over seeds 0-99 instead: every draw holds a problem with fewer k-tiles than stages and one that goes
round the ring at least twice.

The capstone (exercise 6) is a whole kernel: its mistakes (KERNEL_MISTAKES, from CAPSTONE_MISTAKES in
answers_ch08.py) are the solution's kernel with edits, written out as one module and run on the simulator on
seed 0 (a few seconds a check; a failing first problem skips the second; SHOWN_BY_THE_LAPS_ONLY says which
start on the second under make test). What tells its epilogue mistakes
apart, `capstone_diagnosis`, is run on the problems of seeds 0-24 with D made in NumPy."""
import random
import re
from types import SimpleNamespace

import numpy
import pytest

from cutekit.checks import ch08_hopper, check, exercises, grading, sandbox

from answers_ch08 import CAPSTONE_MISTAKES, CORRECT, KERNEL_EXERCISES, MISTAKES
from simulated import kernels_on_simulator, solution_code
from verdicts import (ALL_SEEDS, HINT_SEEDS, assert_kernel_mistake_fails_naming_its_cause,
                      assert_mistake_fails_naming_its_cause, assert_right_answer_earns_every_reference_point,
                      kernel_mistake_results, mistake_params, mistakes_per_exercise)


KERNEL_SEEDS = (0,)
PLAIN_MISTAKES = [row for row in MISTAKES if row[0] not in KERNEL_EXERCISES]
LOOP_MISTAKES = [row for row in MISTAKES if row[0] in KERNEL_EXERCISES]
# (exercise, mistake, the edits of the solution's text, what the hint must name)
KERNEL_MISTAKES = [("ch08.capstone", name, edits, cause) for name, (edits, cause) in CAPSTONE_MISTAKES.items()]
# The mistakes that only the problem going round the ring shows (drawn second; the first has fewer k-tiles than
# stages and passes them after a full simulation, measured 2026-11-28): make test tries that problem first, and
# the other after it should it stop showing them there (verdicts.kernel_mistake_results).
SHOWN_BY_THE_LAPS_ONLY = {
    "ch08.mbarrier_phases": {"parity off by one", "no wait on empty", "waits on full", "stage never wraps"},
    "ch08.wgmma_main_loop": {"releases the current stage", "releases the previous stage", "never releases",
                             "release index not wrapped", "waits before committing", "one arrival per warpgroup"},
    "ch08.capstone": {"producer_never_waits_for_a_free_stage", "releases_the_stage_its_wgmmas_still_read"}}
assert all(names <= {row[1] for row in MISTAKES + KERNEL_MISTAKES if row[0] == exercise_id}
           for exercise_id, names in SHOWN_BY_THE_LAPS_ONLY.items()), "a mistake named here is no row of its table"


def first_problem(exercise_id, mistake) -> int:
    """The problem of a kernel mistake make test simulates first: the last drawn (the laps) or the first."""
    return -1 if mistake in SHOWN_BY_THE_LAPS_ONLY.get(exercise_id, ()) else 0


def in_this_process(monkeypatch):
    monkeypatch.setenv("CUTEKIT_PROGRESS", "off")
    monkeypatch.setattr(grading, "run_isolated", lambda function, timeout=10.0: sandbox.Isolated(value=function()))


def test_chapter_08_has_six_exercises_each_with_five_mistakes_or_more_and_the_capstone_eight():
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch08"]
    assert ids == list(CORRECT) + ["ch08.capstone"]
    counts = mistakes_per_exercise(MISTAKES + KERNEL_MISTAKES)
    assert all(counts[exercise_id] >= 5 for exercise_id in ids) and counts["ch08.capstone"] >= 8, counts
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


@pytest.mark.parametrize("exercise_id,answer,cause,first", [
    pytest.param(e, a, c, first_problem(e, m), id=f"{e.split('.')[1]}-{m}") for e, m, a, c in LOOP_MISTAKES])
def test_each_kernel_loop_mistake_fails_with_a_hint_naming_its_cause(exercise_id, answer, cause, first, monkeypatch):
    assert_kernel_mistake_fails_naming_its_cause(exercise_id, answer, cause, KERNEL_SEEDS, monkeypatch, first=first)


def test_every_draw_holds_the_cases_that_tell_the_mistakes_apart():
    for seed in ALL_SEEDS:
        for draw, least in ((ch08_hopper._loop_cases, 2), (ch08_hopper._consumer_cases, 3)):
            few, laps = draw(random.Random(seed))
            k_tiles = [-(-case["K"] // 64) for case in (few, laps)]
            assert k_tiles[0] < few["STAGES"] and k_tiles[1] > 2 * laps["STAGES"], (seed, few, laps)
            assert least <= few["STAGES"] == laps["STAGES"] <= 4 and few["N"] % 8 == laps["N"] % 8 == 0
            assert few["K"] % 8 == laps["K"] % 8 == 0 and laps["K"] % 64       # ragged K: a short last k-tile
            assert max(few["M"], laps["M"]) <= 128 and max(few["N"], laps["N"]) <= few["BN"]   # one tile of C
        tma = ch08_hopper._tma_cases(random.Random(seed))
        clusters = {(case["cluster_m"], case["cluster_n"]) for case in tma}
        assert {(2, 1), (1, 2), (2, 2)} <= clusters       # B shared, A shared, both: each mistake shows on one


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


# ---- ch08.capstone: the whole kernel, D = relu(A B^T + bias) ------------------------------------------------

CAPSTONE = solution_code("08_hopper_gemm", "from cutlass.cute.nvgpu import cpasync, warpgroup\n\n### BEGIN",
                         'check("ch08.capstone"')


def _capstone_source() -> str:
    """The solution's capstone, then once per mistake with its edits made, each under its own names
    (gemm_bias_relu_<mistake> and gemm_bias_relu_<mistake>_kernel)."""
    pieces = ["import cutlass\nimport cutlass.cute as cute\n"]
    for name, edits in {"none": [], **{name: edits for name, (edits, _) in CAPSTONE_MISTAKES.items()}}.items():
        text = CAPSTONE
        for old, new in edits:
            assert text.count(old) == 1, f"the solution no longer holds, once, what mistake {name!r} edits: {old!r}"
            text = text.replace(old, new)
        pieces.append(text.replace("gemm_bias_relu", f"gemm_bias_relu_{name}"))
    return "\n".join(pieces)


@pytest.fixture(scope="module")
def capstones(tmp_path_factory):
    with kernels_on_simulator(_capstone_source(), "ch08_capstones", tmp_path_factory.mktemp("ch08_capstones")) as module:
        yield module


def test_the_capstones_model_answer_earns_every_reference_point_in_strict_mode(capstones, monkeypatch):
    assert_right_answer_earns_every_reference_point("ch08.capstone", capstones.gemm_bias_relu_none, 0, monkeypatch)


def removed_statements(edits) -> list:
    """The solution's statements an edit removed or changed, 24 characters or more: the answer's code with its
    arguments, which a hint must not give away (a bare call such as `warpgroup.fence()` is the cause's name)."""
    return [line.strip() for old, _ in edits for line in old.splitlines() if len(line.strip()) >= 24]


@pytest.mark.parametrize("mistake", list(CAPSTONE_MISTAKES))
def test_each_capstone_mistake_fails_with_a_hint_naming_its_cause_not_the_answer(capstones, mistake, monkeypatch):
    edits, cause = CAPSTONE_MISTAKES[mistake]
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    # all of seed 0's problems at once (the check itself skips the second once the first failed), except under
    # make test for a mistake only the laps show: the laps alone first (kernel_mistake_results)
    answer = getattr(capstones, f"gemm_bias_relu_{mistake}")
    if first_problem("ch08.capstone", mistake):
        [result] = kernel_mistake_results("ch08.capstone", answer, cause, (0,), monkeypatch, first=-1)
    else:
        result = check("ch08.capstone", answer, seed=0)
    lost = [criterion for criterion in result.criteria if criterion.status == "failed"]
    assert lost and not result.passed, f"a wrong kernel passed:\n{result}"
    hints = " | ".join(criterion.hint for criterion in lost)
    assert re.search(cause, hints, flags=re.IGNORECASE | re.DOTALL), f"the hint does not name /{cause}/: {hints}"
    for statement in removed_statements(edits):
        assert statement not in hints, f"the hint gives the answer's {statement!r} away: {hints}"
    for formula in ANSWER_FORMULAS:
        assert formula not in hints, f"the hint gives the answer's {formula!r} away: {hints}"


def test_every_capstone_draw_is_ragged_and_goes_round_the_ring_twice():
    for seed in ALL_SEEDS:
        edges, laps = ch08_hopper._capstone_cases(random.Random(seed))
        for case in (edges, laps):
            assert case["N"] % 8 == case["K"] % 8 == 0 and case["N"] % 64 and case["K"] % 64 and case["M"] % 64
        assert 64 < edges["M"] < 128 < 256 < edges["N"] < 384 and edges["K"] < 64      # two tiles, one k-tile
        assert laps["M"] < 64 and laps["N"] < 256 and 8 * 64 < laps["K"] < 9 * 64      # 9 k-tiles: 2 laps of 4


ANSWER_FORMULAS = ("(k_tile // STAGES", "stride=(0, 1)", "n_tile * BN", "cute.where(", "(k_tile - 1) % STAGES")
# what the epilogue left in D -> what the hint must name
EPILOGUE_HINTS = {"no bias": r"bias was never added", "no relu": r"clamp at 0 is missing",
                  "relu first": r"clamp at 0 came before the bias", "per row": r"changes down the rows of a column",
                  "another thread's columns": r"columns its accumulators do not hold",
                  "tile shift": r"first tile-column's bias", "unwritten": r"never written.*rounding up",
                  "last k-block": r"only the last k-block's product.*ACCUMULATE",
                  "all nan": r"every entry of D is NaN.*registers read before anything wrote them"}


def test_the_epilogue_diagnosis_names_each_mistake_on_every_seed():
    """What each epilogue mistake leaves in D, made in NumPy for the problems of seeds 0-24 (their data differ
    from seed to seed): the diagnosis names it, and the hint says so without the answer's code. The kernels
    above run a few of them on the simulator; these are all of them, cheaply."""
    for seed in ALL_SEEDS[:25]:
        for case in ch08_hopper._capstone_cases(random.Random(seed)):
            a, b, bias, _ = ch08_hopper._capstone_data(case)
            product = a.astype(numpy.float32) @ b.astype(numpy.float32).T
            M, N = product.shape
            columns = numpy.arange(N)
            right = numpy.maximum(product + bias, 0)
            # the bias tile with stride (1, 0): row m of tile-column c gets the value staged for column 256 c + m
            staged = (columns // 256)[None, :] * 256 + numpy.arange(M)[:, None]
            rows = numpy.where(staged < N, bias[numpy.minimum(staged, N - 1)], 0)
            made = {"no bias": numpy.maximum(product, 0), "no relu": product + bias,
                    "relu first": numpy.maximum(product, 0) + bias, "per row": numpy.maximum(product + rows, 0),
                    # the bias slice of the warpgroup's first thread: column n gets column n - 2 (n % 8 // 2)'s
                    "another thread's columns": numpy.maximum(product + bias[columns - columns % 8 + columns % 2], 0)}
            last = ch08_hopper.last_k_block_product(a, b)
            made["last k-block"] = numpy.maximum(last + bias, 0)          # every wgmma overwrote
            made["all nan"] = numpy.full_like(product, numpy.nan)           # garbage registers stored
            if N > 256:
                made["tile shift"] = numpy.maximum(product + bias[columns % 256], 0)   # no tile offset
                made["unwritten"] = numpy.where(columns < 256, right, numpy.nan)        # one tile-column only
            for mistake, d in made.items():
                found = ch08_hopper.capstone_diagnosis(product, bias, d.astype(numpy.float16), last)
                cause = {"another thread's columns": "other column", "tile shift": "other column"}.get(mistake, mistake)
                assert found["cause"] == cause, (seed, case, mistake, found)
                hint = ch08_hopper._capstone_hint(found, case)
                assert re.search(EPILOGUE_HINTS[mistake], hint, flags=re.DOTALL), (seed, mistake, hint)
                assert not any(formula in hint for formula in ANSWER_FORMULAS), (seed, mistake, hint)
                if mistake == "unwritten":
                    assert found["from_column"] == 256


@pytest.mark.cutedsl
def test_real_cutedsl_compiles_the_capstone_for_sm_90a_and_its_ptx_passes(capstones):
    """The cutedsl-cpu criterion on the model answer, called directly (the check would first simulate it)."""
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    verdict = ch08_hopper._capstone_ptx(SimpleNamespace(answer=capstones.gemm_bias_relu_none))
    assert verdict.passed, verdict
