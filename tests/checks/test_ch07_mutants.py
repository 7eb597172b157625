"""Chapter 07 checks: the correct answers pass in strict mode, and every wrong answer below (each named for
the mistake it models) loses points with a hint, on every seed tried. The main loop runs on the simulator."""
import pytest

from cutekit import cute
from cutekit.checks import check, exercises

from answers_ch07 import MISTAKES, main_loop_with

SEEDS = (1, 2, 3)


def fp16_atom(accumulator=cute.Float32, shape=(16, 8, 16)):
    return cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, accumulator, shape)


# ---- ch07.tiled_mma ----

def tiled_mma_for(warps_m, warps_n):
    return cute.make_tiled_mma(fp16_atom(), cute.make_layout((warps_m, warps_n, 1)),
                               permutation_mnk=(16 * warps_m, 16 * warps_n, 16))


def mma_without_permutation(warps_m, warps_n):
    return cute.make_tiled_mma(fp16_atom(), cute.make_layout((warps_m, warps_n, 1)))


def mma_permutation_of_one_n8_atom_per_warp(warps_m, warps_n):
    return cute.make_tiled_mma(fp16_atom(), cute.make_layout((warps_m, warps_n, 1)),
                               permutation_mnk=(16 * warps_m, 8 * warps_n, 16))


def mma_warps_swapped(warps_m, warps_n):
    return cute.make_tiled_mma(fp16_atom(), cute.make_layout((warps_n, warps_m, 1)),
                               permutation_mnk=(16 * warps_n, 16 * warps_m, 16))


def mma_warps_row_major(warps_m, warps_n):
    return cute.make_tiled_mma(fp16_atom(), cute.make_layout((warps_m, warps_n, 1), stride=(warps_n, 1, 0)),
                               permutation_mnk=(16 * warps_m, 16 * warps_n, 16))


def mma_accumulates_in_fp16(warps_m, warps_n):
    return cute.make_tiled_mma(fp16_atom(cute.Float16), cute.make_layout((warps_m, warps_n, 1)),
                               permutation_mnk=(16 * warps_m, 16 * warps_n, 16))


def mma_hard_coded_worked_example(warps_m, warps_n):
    return cute.make_tiled_mma(fp16_atom(), cute.make_layout((2, 2, 1)), permutation_mnk=(32, 32, 16))


def mma_returns_the_atom(warps_m, warps_n):
    return fp16_atom()


# ---- ch07.swizzle ----

def swizzle_for(row_elements, element_bits):
    vector = 128 // element_bits
    chunks = row_elements // vector
    vector_bits, chunk_bits, row_shift = (vector.bit_length() - 1, min(chunks, 8).bit_length() - 1,
                                          row_elements.bit_length() - 1)
    if chunks < 8:
        row_shift += (8 // chunks).bit_length() - 1
    return (chunk_bits, vector_bits, row_shift - vector_bits)


def swizzle_none(row_elements, element_bits):
    return (0, 3, 3)


def swizzle_hard_coded_worked_example(row_elements, element_bits):
    return (3, 3, 3)


def swizzle_assumes_fp16_vectors(row_elements, element_bits):
    b, _, s = swizzle_for(row_elements, element_bits)
    return (b, 3, s)


def swizzle_xors_the_wrong_row_bits(row_elements, element_bits):
    b, m, s = swizzle_for(row_elements, element_bits)
    return (b, m, s + 1)


def swizzle_ignores_short_rows(row_elements, element_bits):
    vector = 128 // element_bits
    chunk_bits = min(row_elements // vector, 8).bit_length() - 1
    return (chunk_bits, vector.bit_length() - 1, row_elements.bit_length() - 1 - (vector.bit_length() - 1))


def swizzle_too_many_bits(row_elements, element_bits):
    b, m, s = swizzle_for(row_elements, element_bits)
    return (b + 1, m, s + 1)


def swizzle_vector_bits_too_few(row_elements, element_bits):
    b, m, s = swizzle_for(row_elements, element_bits)
    return (b, m - 1, s + 1)


# ---- ch07.pipeline_stages ----

def schedule(k_tiles, stages):
    plan = []
    for k_tile in range(k_tiles):
        upcoming = k_tile + stages - 1
        plan.append((k_tile % stages, upcoming % stages, upcoming) if upcoming < k_tiles else (k_tile % stages, None, None))
    return plan


def schedule_reads_modulo_stages_minus_one(k_tiles, stages):
    return [((k % (stages - 1)) if stages > 1 else 0, w, k_loaded) for k, (_, w, k_loaded) in
            enumerate(schedule(k_tiles, stages))]


def schedule_refills_the_stage_it_reads(k_tiles, stages):
    return [(r, None if w is None else r, k) for r, w, k in schedule(k_tiles, stages)]


def schedule_refills_the_next_stage(k_tiles, stages):
    return [(r, None if w is None else (r + 1) % stages, k) for r, w, k in schedule(k_tiles, stages)]


def schedule_loads_one_k_tile_too_far(k_tiles, stages):
    plan = []
    for k_tile in range(k_tiles):
        upcoming = k_tile + stages
        plan.append((k_tile % stages, (k_tile - 1) % stages, upcoming) if upcoming < k_tiles else (k_tile % stages, None, None))
    return plan


def schedule_loads_past_the_end(k_tiles, stages):
    return [(k % stages, (k + stages - 1) % stages, k + stages - 1) for k in range(k_tiles)]


def schedule_hard_coded_three_stages(k_tiles, stages):
    return schedule(k_tiles, 3)


# ---- ch07.s2r_copy ----

def ldmatrix_atom(transpose=False, matrices=4):
    return cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(transpose, matrices), cute.Float16)


def s2r_copy(tiled_mma, operand):
    make = cute.make_tiled_copy_A if operand == "A" else cute.make_tiled_copy_B
    return make(ldmatrix_atom(), tiled_mma)


def s2r_always_operand_A(tiled_mma, operand):
    return cute.make_tiled_copy_A(ldmatrix_atom(), tiled_mma)


def s2r_operands_swapped(tiled_mma, operand):
    return s2r_copy(tiled_mma, "B" if operand == "A" else "A")


def s2r_transposed_ldmatrix(tiled_mma, operand):
    make = cute.make_tiled_copy_A if operand == "A" else cute.make_tiled_copy_B
    return make(ldmatrix_atom(transpose=True), tiled_mma)


def s2r_two_matrices(tiled_mma, operand):
    make = cute.make_tiled_copy_A if operand == "A" else cute.make_tiled_copy_B
    return make(ldmatrix_atom(matrices=2), tiled_mma)


def s2r_plain_copy_not_ldmatrix(tiled_mma, operand):
    make = cute.make_tiled_copy_A if operand == "A" else cute.make_tiled_copy_B
    return make(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cute.Float16), tiled_mma)


def s2r_returns_the_mma(tiled_mma, operand):
    return tiled_mma


# ---- the table ----

CORRECT = {"ch07.tiled_mma": tiled_mma_for, "ch07.swizzle": swizzle_for, "ch07.pipeline_stages": schedule,
           "ch07.s2r_copy": s2r_copy, "ch07.main_loop": main_loop_with(None)}

WRONG = {
    "ch07.tiled_mma": [mma_without_permutation, mma_permutation_of_one_n8_atom_per_warp, mma_warps_swapped,
                       mma_warps_row_major, mma_accumulates_in_fp16, mma_hard_coded_worked_example,
                       mma_returns_the_atom],
    "ch07.swizzle": [swizzle_none, swizzle_hard_coded_worked_example, swizzle_assumes_fp16_vectors,
                     swizzle_xors_the_wrong_row_bits, swizzle_ignores_short_rows, swizzle_too_many_bits,
                     swizzle_vector_bits_too_few],
    "ch07.pipeline_stages": [schedule_reads_modulo_stages_minus_one, schedule_refills_the_stage_it_reads,
                             schedule_refills_the_next_stage, schedule_loads_one_k_tile_too_far,
                             schedule_loads_past_the_end, schedule_hard_coded_three_stages],
    "ch07.s2r_copy": [s2r_always_operand_A, s2r_operands_swapped, s2r_transposed_ldmatrix, s2r_two_matrices,
                      s2r_plain_copy_not_ldmatrix, s2r_returns_the_mma],
    "ch07.main_loop": [main_loop_with(mistake) for mistake in MISTAKES],
}


def test_chapter_07_has_five_exercises_each_with_at_least_five_named_wrong_answers():
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch07"]
    assert ids == list(CORRECT) and set(WRONG) == set(ids)
    assert all(len(WRONG[exercise_id]) >= 5 for exercise_id in ids)


@pytest.mark.parametrize("exercise_id", list(CORRECT))
def test_the_correct_answer_earns_every_reference_point_in_strict_mode(exercise_id, monkeypatch):
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    for seed in SEEDS[:2]:
        result = check(exercise_id, CORRECT[exercise_id], seed=seed)
        assert all(criterion.status == "passed" for criterion in result.criteria if criterion.tier == "reference")


@pytest.mark.parametrize("exercise_id,wrong", [(exercise_id, answer) for exercise_id, answers in WRONG.items()
                                               for answer in answers],
                         ids=lambda value: getattr(value, "__name__", value))
def test_a_wrong_answer_loses_points_with_a_hint(exercise_id, wrong, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    seeds = SEEDS[:1] if exercise_id == "ch07.main_loop" else SEEDS
    for seed in seeds:
        result = check(exercise_id, wrong, seed=seed)
        lost = [criterion for criterion in result.criteria if criterion.status == "failed"]
        assert lost, f"{wrong.__name__} passed every criterion with seed {seed}"
        assert all(len(criterion.hint) > 30 for criterion in lost)


@pytest.mark.cutedsl
def test_real_cutedsl_prints_the_same_tiled_mma_and_s2r_copy_as_the_reference(monkeypatch):
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    for exercise_id in ("ch07.tiled_mma", "ch07.s2r_copy"):
        result = check(exercise_id, CORRECT[exercise_id], seed=5)
        statuses = {criterion.tier: criterion.status for criterion in result.criteria}
        assert statuses["cutedsl-cpu"] == "passed", result


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
