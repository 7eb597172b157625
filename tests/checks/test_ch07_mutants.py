"""Chapter 07 checks: each right answer earns every reference point in strict mode, and each mistake learners
make (MISTAKES in answers_ch07.py, with the cause its hint must name) fails with that hint.

The layout exercises (tiled_mma, swizzle, pipeline_stages) run every mistake on the sweep's seeds (tests/checks/verdicts.py HINT_SEEDS: 0-9, 0-99 under make test-deep), graded in this
process (a fork per check would cost more than the grading; a test below shows the hints are the same). The S2R
copy and the main loop simulate kernels case by case (0.5-1 s a check, forked, since they switch `cutlass` to the
simulator), so their mistakes run on one seed (make test: one problem at a time, verdicts.kernel_mistake_results), and their case generators are swept over seeds 0-99 instead: every
draw holds the cases that tell each mistake apart (both operands in both major orders, warps_m != warps_n, B with
one, two and three n8 atoms per warp; one k-tile and several)."""
import random
import re

import pytest

from cutekit.checks import ch07_sgemm, check, exercises, grading, sandbox
from tests.sweep import DEEP

from answers_ch07 import CORRECT, KERNEL_EXERCISES, MISTAKES, main_loop_with
from verdicts import (ALL_SEEDS, HINT_SEEDS, assert_kernel_mistake_fails_naming_its_cause,
                      assert_mistake_fails_naming_its_cause,
                      assert_right_answer_earns_every_reference_point, mistake_params, mistakes_per_exercise)

KERNEL_SEEDS = (0,)
LAYOUT_MISTAKES = [row for row in MISTAKES if row[0] not in KERNEL_EXERCISES]
KERNEL_MISTAKES = [row for row in MISTAKES if row[0] in KERNEL_EXERCISES]


def in_this_process(monkeypatch):
    monkeypatch.setenv("CUTEKIT_PROGRESS", "off")
    monkeypatch.setattr(grading, "run_isolated", lambda function, timeout=10.0: sandbox.Isolated(value=function()))


def test_chapter_07_has_six_exercises_each_with_four_mistakes_or_more():
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch07"]
    assert ids == list(CORRECT)
    counts = mistakes_per_exercise(MISTAKES)
    assert all(counts[exercise_id] >= 4 for exercise_id in ids), counts
    assert len({(row[0], row[1]) for row in MISTAKES}) == len(MISTAKES)


SIMULATED = KERNEL_EXERCISES + ("ch07.capstone_gemm",)


@pytest.mark.parametrize("exercise_id, seed", [(exercise_id, seed) for exercise_id in CORRECT for seed in (0, 1)
                                               if seed == 0 or exercise_id not in SIMULATED or DEEP])
def test_the_correct_answer_earns_every_reference_point_in_strict_mode(exercise_id, seed, monkeypatch):
    """(the simulated exercises on seed 0 under make test, seeds 0 and 1 under make test-deep; the notebook and
    test_exercise_examples grade them on other seeds)"""
    assert_right_answer_earns_every_reference_point(exercise_id, CORRECT[exercise_id], seed, monkeypatch)


def test_grading_in_this_process_gives_the_forked_sandboxs_hints(monkeypatch):
    """The shortcut the layout sweep takes changes nothing a learner would see (seed 0, every layout mistake)."""
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    forked = [str(check(e, a, seed=0, record=False)) for e, _, a, _ in LAYOUT_MISTAKES]
    in_this_process(monkeypatch)
    assert [str(check(e, a, seed=0, record=False)) for e, _, a, _ in LAYOUT_MISTAKES] == forked


@pytest.mark.parametrize("exercise_id,answer,cause", mistake_params(LAYOUT_MISTAKES))
def test_each_layout_mistake_fails_with_a_hint_naming_its_cause_on_every_seed(exercise_id, answer, cause, monkeypatch):
    in_this_process(monkeypatch)
    assert_mistake_fails_naming_its_cause(exercise_id, answer, cause, HINT_SEEDS, monkeypatch)


@pytest.mark.parametrize("exercise_id,answer,cause", mistake_params(KERNEL_MISTAKES))
def test_each_kernel_mistake_fails_with_a_hint_naming_its_cause(exercise_id, answer, cause, monkeypatch):
    assert_kernel_mistake_fails_naming_its_cause(exercise_id, answer, cause, KERNEL_SEEDS, monkeypatch)


def test_every_draw_holds_the_cases_that_tell_the_mistakes_apart():
    """Seeds 0-99 of each generator: what the mistakes above need on every seed, not only on those tried."""
    for seed in ALL_SEEDS:
        warps = [(case["warps_m"], case["warps_n"]) for case in ch07_sgemm._mma_cases(random.Random(seed))]
        # M-fastest vs N-fastest, a swapped shape and the hard-coded 2x2 all differ on 4x2 / 2x4
        assert warps[0] in ((4, 2), (2, 4)) and len(set(warps)) == 4
        rows = ch07_sgemm._swizzle_cases(random.Random(seed))
        widths = {case["row_elements"] * case["element_bits"] // 8 for case in rows}
        assert {32, 256} <= widths and 64 not in widths and {case["element_bits"] for case in rows} == {16, 32}
        rings = ch07_sgemm._pipeline_cases(random.Random(seed))
        assert {2, 3} <= {case["stages"] for case in rings} and any(case["stages"] > 3 for case in rings)
        # spare stages with several laps (section 6's refill rule breaks), stages - 1 ahead, fewer k-tiles than ahead
        assert sum(case["ahead"] < case["stages"] - 1 and case["k_tiles"] > case["stages"] for case in rings) >= 2
        assert any(case["ahead"] == case["stages"] - 1 > 1 for case in rings)
        assert any(case["k_tiles"] < case["ahead"] for case in rings)
        copies = ch07_sgemm._s2r_cases(random.Random(seed))
        assert {(case["operand"], case["major"]) for case in copies} == {("A", "K"), ("A", "MN"), ("B", "K"), ("B", "MN")}
        assert all(case["warps_m"] != case["warps_n"] for case in copies[:2])
        assert all(case["warps_m"] * case["warps_n"] <= 4 for case in copies)
        # B with one (x2), two (x4) and three (x2) n8 atoms per warp; the one-atom B on warps_n > 1, where the
        # TiledMMA's N is a multiple of 16 and one warp's is not, and with warps_m < warps_n
        assert sorted(case["atoms_n"] for case in copies if case["operand"] == "B") == [1, 2, 3]
        assert any(case["operand"] == "B" and case["atoms_n"] == 1 and case["warps_m"] < case["warps_n"]
                   for case in copies)
        assert {ch07_sgemm.s2r_matrices(case) for case in copies} == {2, 4}
        loops = ch07_sgemm._main_loop_cases(random.Random(seed))
        assert [case["k_tiles"] == 1 for case in loops] == [True, False] and loops[1]["k_tiles"] in (2, 3)
        # the capstone: one partial k-tile (of 32) with beta = 0, then 72x136x40, then a partial last k-tile after
        # several (K = 136: 5 k-tiles of 32, 3 of 64, 9 of 16); alpha, alpha^2, 1, 0 and beta all tell apart
        first, middle, last = ch07_sgemm._capstone_cases(random.Random(seed))[0]["runs"]
        assert first["K"] in (8, 24) and first["beta"] == 0 and first["N"] % 8 == 0
        assert (middle["M"], middle["N"], middle["K"]) == (72, 136, 40) and last["K"] == 136 and last["N"] % 8 == 0
        for run in (first, middle, last):
            assert run["alpha"] not in (0, 1, -1) and run["alpha"] ** 2 != run["alpha"]
        for run in (middle, last):
            assert run["beta"] not in (0, 1) and run["beta"] != run["alpha"]


def test_the_s2r_copy_read_off_bs_value_modes_earns_every_reference_point_too(monkeypatch):
    """Chapter 06 section 7's rule read off the TiledMMA's TV layout (n8 atoms per warp = B's values / 4) is as
    right as counting one warp's N."""
    from answers_ch07 import s2r_copy_from_the_value_modes
    assert_right_answer_earns_every_reference_point("ch07.s2r_copy", s2r_copy_from_the_value_modes, 0, monkeypatch)


def test_a_transposed_ldmatrix_on_a_k_major_tile_moves_the_wrong_data_although_its_tv_layout_is_the_mmas():
    """The criterion about the data reads the data: the two atoms' TiledCopies share `layout_tv_tiled` (the
    MMA's), but only the plain one can run on a K-major tile (the simulated copy refuses the other's addresses,
    as CuTeDSL refuses to compile it)."""
    from answers_ch07 import s2r_always_transposed, s2r_copy
    case = {"warps_m": 2, "warps_n": 1, "atoms_n": 2, "operand": "B", "major": "K"}
    tiled_mma = ch07_sgemm.kernel_tiled_mma(2, 1)
    plain, transposed = s2r_copy(tiled_mma, "B", "K"), s2r_always_transposed(tiled_mma, "B", "K")
    assert plain.layout_tv_tiled == transposed.layout_tv_tiled == tiled_mma.tv_layout_B_tiled
    result = check("ch07.s2r_copy", s2r_always_transposed, seed=3, record=False)
    data = next(criterion for criterion in result.criteria if criterion.name.startswith("every thread receives"))
    assert data.status == "failed" and "K-major tile needs the plain ldmatrix" in data.hint
    moved = sandbox.run_isolated(lambda: ch07_sgemm._simulated_s2r(plain, case), timeout=60)
    assert moved.value == {"error": "", "first": None}


def test_the_main_loop_hint_reads_what_c_holds():
    """C as whole multiples of each k-block's product (or of row sums, for an operand never loaded)."""
    import numpy
    rng = numpy.random.default_rng(5)
    a = rng.standard_normal((32, 64)).astype(numpy.float16)
    b = rng.standard_normal((32, 64)).astype(numpy.float16)
    blocks = [(a[:, k:k + 16].astype(numpy.float32), b[:, k:k + 16].astype(numpy.float32)) for k in range(0, 64, 16)]
    c = 2 * blocks[2][0] @ blocks[2][1].T + blocks[3][0] @ blocks[3][1].T
    assert dict(ch07_sgemm._what_c_holds(a, b, c, 2)) == {("AB", 1, 0): 2, ("AB", 1, 1): 1}
    holds = sorted(ch07_sgemm._what_c_holds(a, b, numpy.zeros((32, 32), numpy.float32), 2).items())
    assert "no product reached C" in ch07_sgemm._explain_what_c_holds(holds, 2)


@pytest.mark.cutedsl
def test_real_cutedsl_builds_what_cutekit_built_from_the_right_layout_answers(monkeypatch):
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference cutedsl-cpu")
    for exercise_id in ("ch07.tiled_mma", "ch07.s2r_copy"):
        result = check(exercise_id, CORRECT[exercise_id], seed=5, record=False)
        statuses = {criterion.tier: criterion.status for criterion in result.criteria}
        assert statuses["cutedsl-cpu"] == "passed", result


@pytest.mark.cutedsl
def test_real_cutedsl_compiles_the_right_main_loop_and_refuses_one_that_skips_retile(monkeypatch):
    """The cutedsl-cpu criterion compiles the loop for sm_80 and reads the PTX: the right loop has one
    ldmatrix.x4 per mma.sync; a loop that copies into parts.tCrA instead of the retiled parts.tXrA does not
    compile, and the hint names retile."""
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    monkeypatch.setenv("CUTEKIT_TIERS", "cutedsl-cpu")
    for answer, status in ((CORRECT["ch07.main_loop"], "passed"),
                           (main_loop_with("copies_into_the_mma_fragment"), "failed")):
        result = check("ch07.main_loop", answer, seed=0, record=False)
        compiled = next(criterion for criterion in result.criteria if criterion.tier == "cutedsl-cpu")
        assert compiled.status == status, str(result)
    assert re.search(r"retile", compiled.hint) and "could not compile" in compiled.hint


GPU_PROGRAM = """
import importlib, sys
sys.path.insert(0, sys.argv[1])
import cutlass
from cutlass.cute.runtime import make_fake_compact_tensor
from benchmarks.kernels.tensors import compile_with_ptx
from cutekit.checks import ch07_sgemm
for name in ("plain", "decorated"):
    host = ch07_sgemm._main_loop_program(importlib.import_module(name).main_loop)
    fakes = [make_fake_compact_tensor(dtype, (1024, 1024), stride_order=(1, 0), assumed_align=16)
             for dtype in (cutlass.Float16, cutlass.Float16, cutlass.Float32)]
    ptx = compile_with_ptx(host, *fakes).__ptx__
    print(name, ptx.count("mma.sync.aligned.m16n8k16"), ptx.count("bar.sync"))
"""


@pytest.mark.cutedsl
def test_the_gpu_criterions_program_compiles_a_learners_plain_or_jit_main_loop_with_real_cutedsl(tmp_path):
    """The gpu tier runs the learner's loop inside real CuTeDSL: a plain function (what the notebook asks
    for) is reloaded with @cute.jit so its loops become device loops; one already decorated is kept."""
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    import os
    import pathlib
    import subprocess
    import sys
    root = pathlib.Path(__file__).parents[2]
    text = (root / "solutions" / "07_sgemm.py").read_text()
    start = text.index("def main_loop(")
    loop = "import cutlass\nimport cutlass.cute as cute\n\n\n" + text[start:text.index("\n\ncheck(", start)]
    (tmp_path / "plain.py").write_text(loop)
    (tmp_path / "decorated.py").write_text(loop.replace("def main_loop(", "@cute.jit\ndef main_loop("))
    env = dict(os.environ, CUTE_DSL_ARCH="sm_80", PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", GPU_PROGRAM, str(tmp_path)], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    # the k-tile loop stays a device loop: a few MMAs and barriers in the PTX, not 32 unrolled k-tiles' worth
    assert done.stdout.split("\n")[:2] == ["plain 8 4", "decorated 8 4"], done.stdout


def test_the_right_but_slow_capstones_compute_c_right_on_the_simulator():
    """What the PTX criterion below calls slow is right: on the first problem of a draw (one partial k-tile, M and N
    inside one tile) the single-stage and the ldmatrix-less variant's C equals alpha A B + beta C (the cache mode is
    the model's kernel on the simulator). The harness is called in this process, on kernels imported with the
    simulator as `cutlass`."""
    import importlib
    import sys
    import tempfile
    from pathlib import Path

    import cutekit
    from answers_ch07 import CAPSTONE_SLOW, capstone_source
    runs = ch07_sgemm._capstone_cases(random.Random(2))[0]["runs"][:1]
    slow = {name: CAPSTONE_SLOW[name] for name in ("single_stage", "no_ldmatrix")}
    folder = Path(tempfile.mkdtemp(prefix="ch07-slow-"))
    names = [f"ch07_slow_{name}" for name in slow]
    for name, (replacements, _) in zip(names, slow.values()):
        (folder / f"{name}.py").write_text(capstone_source(replacements))
    sys.path.insert(0, str(folder))
    try:
        with cutekit.using("sim", fresh=tuple(names)):
            results = {name: ch07_sgemm.simulator_capstone(importlib.import_module(name).gemm, {"runs": runs})
                       for name in names}
    finally:
        sys.path.remove(str(folder))
    for name, result in results.items():
        assert [(r["error"], r["wrong"]) for r in result] == [("", 0)], (name, result)

CAPSTONE_PTX_PROGRAM = """
import sys
sys.path.insert(0, sys.argv[1])
import cutlass
from cutlass.cute.runtime import make_fake_compact_tensor
from benchmarks.kernels.tensors import compile_with_ptx
from cutekit.checks import ch07_sgemm
from cutekit.checks.cutedsl import PtxReport, instruction_counts
import importlib
for name in sys.argv[2:]:
    gemm = importlib.import_module(name).gemm
    fakes = [make_fake_compact_tensor(dtype, (cutlass.cute.sym_int(), cutlass.cute.sym_int(divisibility=8)),
                                      stride_order=(1, 0), assumed_align=16)
             for dtype in (cutlass.Float16, cutlass.Float16, cutlass.Float32)]
    ptx = compile_with_ptx(gemm, *fakes, 1.5, 0.5).__ptx__
    texts = {name: ptx}
    if name.endswith("model"):
        texts["capstone_cache_mode_always"] = ptx.replace("cp.async.cg.", "cp.async.ca.")
    for label, text in texts.items():
        verdict = ch07_sgemm._capstone_ptx_verdict(PtxReport(True, text, instruction_counts(text)))
        print(label, "|", verdict.passed, "|", verdict.hint.replace(chr(10), " "))
"""


@pytest.mark.cutedsl
def test_the_capstones_ptx_criterion_passes_the_model_and_names_what_a_slow_kernel_lacks(tmp_path):
    """Real CuTeDSL compiles the model answer, its single-stage and its ldmatrix-less variants for sm_80 in one
    process (one import, three compiles); the criterion's reading of each PTX: the model passes, each variant
    fails naming the part of the fast path it lacks. The cache mode differs in one qualifier, so its variant is
    the model's PTX with `.cg` made `.ca`."""
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    import os
    import pathlib
    import subprocess
    import sys
    from answers_ch07 import CAPSTONE_SLOW, capstone_source
    compiled = ("single_stage", "no_ldmatrix")
    assert ".ALWAYS" in capstone_source(CAPSTONE_SLOW["cache_mode_always"][0])     # its line is still the model's
    variants = {"model": []} | {name: CAPSTONE_SLOW[name][0] for name in compiled}
    for name, replacements in variants.items():
        (tmp_path / f"capstone_{name}.py").write_text(capstone_source(replacements))
    root = pathlib.Path(__file__).parents[2]
    env = dict(os.environ, CUTE_DSL_ARCH="sm_80", PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", CAPSTONE_PTX_PROGRAM, str(tmp_path)]
                          + [f"capstone_{name}" for name in variants], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    verdicts = {line.split(" | ")[0][len("capstone_"):]: line.split(" | ")[1:] for line in done.stdout.splitlines()
                if line.startswith("capstone_")}
    assert verdicts["model"] == ["True", ""], verdicts["model"]
    for name, (_, cause) in CAPSTONE_SLOW.items():
        passed, hint = verdicts[name]
        assert passed == "False" and re.search(cause, hint), (name, hint)
