"""The simulator's cute.copy and cute.gemm refuse the operands real CuTeDSL refuses, and accept the ones it accepts.

Each case below is a pair of operand layouts with CuTeDSL 4.8.1's answer, recorded by compiling it for sm_80
on the CPU (tests.sim.cutedsl_operands_oracle): "accepted", or "refused" with a phrase of CuTeDSL's error.
The simulator side needs no CuTeDSL: it asks the simulator's rules (cutekit.sim.ops.operands) about the same
operands. The `cutedsl` tests ask real CuTeDSL again, so the recorded answers cannot drift from it.

A few pairs CuTeDSL compiles although the instruction then reads or writes registers outside the tensors
(an ldmatrix writing 8 values into 4 registers, say): the simulator cannot run those and refuses them,
saying that CuTeDSL compiles them ("cannot run" below)."""
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy
import pytest
import torch

import cutekit
from cutekit import cute as reference
from cutekit.cute import typing as types
from cutekit.sim.memory.tensors import SimTensor, Storage
from cutekit.sim.ops import operands

ROOT = Path(__file__).resolve().parents[2]


def copy(atom, src, dst, dtype="Float16"):
    return {"kind": "copy", "atom": atom, "dtype": dtype, "src": src, "dst": dst}


def gemm(mma, a, b, c, d=None, threads=32):
    return {"kind": "gemm", "mma": mma, "threads": threads, "a": a, "b": b, "c": c, "d": d or c}


def t(shape, stride, space, dtype=None):
    return [shape, stride, space] + ([dtype] if dtype else [])


# (id, case, CuTeDSL's answer, a phrase of CuTeDSL's error, what the simulator says: None = the same as CuTeDSL
#  and its message carries that phrase; "cannot run" = refused although CuTeDSL compiles it; or a phrase of
#  the simulator's message where CuTeDSL's own words are not an error message, a compiler crash)
ACCEPTED, REFUSED = "accepted", "refused"
V81 = t([[8, 1], 1], [[1, 0], 0], "smem")
R81 = t([[8, 1], 1], [[1, 0], 0], "rmem")
R222 = t([[2, 2, 2], 1], [[1, 2, 4], 0], "rmem")
COPIES = [
    # ldmatrix: the retiled destination, and what CuTeDSL does with other groupings
    ("ldmatrix x4 into the retiled view ((8,1),1)", copy("ldsm4", V81, R81), ACCEPTED, None, None),
    ("ldmatrix x4 (transposed) into the retiled view", copy("ldsm4t", V81, R81), ACCEPTED, None, None),
    ("ldmatrix x4, two instructions per step", copy("ldsm4", t([[8, 2], 1], [[1, 8], 0], "smem"),
                                                    t([[8, 2], 1], [[1, 8], 0], "rmem")), ACCEPTED, None, None),
    ("ldmatrix x4 into ((4,2),1) grouped per instruction",
     copy("ldsm4", V81, t([[[4, 2], 1], 1], [[[1, 4], 0], 0], "rmem")), ACCEPTED, None, None),
    ("ldmatrix x4 from an ungrouped source 8 into the MMA's (2,2,2)",
     copy("ldsm4", t([8, 1], [1, 0], "smem"), R222), ACCEPTED, None, None),
    ("ldmatrix x4 into the MMA fragment ((2,2,2),1): not retiled", copy("ldsm4", V81, R222), REFUSED,
     "crd2idx", "retile"),
    ("ldmatrix x4 into an ungrouped 8", copy("ldsm4", V81, t([8, 1], [1, 0], "rmem")), REFUSED, "crd2idx", None),
    ("ldmatrix x4 from a rank-3 first mode", copy("ldsm4", t([[2, 2, 2], 1], [[1, 2, 4], 0], "smem"), R81),
     REFUSED, "crd2idx", None),
    ("ldmatrix x4 (transposed) into the MMA fragment", copy("ldsm4t", V81, R222), REFUSED, "crd2idx", "retile"),
    ("ldmatrix x4 into ((4,2),1): 2 instructions for 1", copy("ldsm4", V81, t([[4, 2], 1], [[1, 4], 0], "rmem")),
     REFUSED, "restAtomVRank", None),
    ("ldmatrix x4 from 8 values into 16", copy("ldsm4", t([8, 1], [1, 0], "smem"), t([16, 1], [1, 0], "rmem")),
     REFUSED, "same size in rank 0", None),
    ("ldmatrix from global memory", copy("ldsm4", t([[8, 1], 1], [[1, 0], 0], "gmem"), R81), REFUSED,
     "src needs be shared based memref", None),
    ("ldmatrix into shared memory", copy("ldsm4", V81, V81), REFUSED, "dst needs be reg based memref", None),
    ("ldmatrix x4 writing 8 values into ((4,1),1)", copy("ldsm4", V81, t([[4, 1], 1], [[1, 0], 0], "rmem")),
     ACCEPTED, None, "cannot run"),
    ("ldmatrix x4 of 2 values", copy("ldsm4", t([2, 1], [1, 0], "smem"), t([2, 1], [1, 0], "rmem")), ACCEPTED,
     None, "cannot run"),
    # cp.async
    ("cp.async 128-bit, grouped", copy("cpasync128", t([[8, 1], 1], [[1, 0], 0], "gmem"), V81), ACCEPTED, None, None),
    ("cp.async 128-bit from an ungrouped 8", copy("cpasync128", t([8, 1], [1, 0], "gmem"), V81), ACCEPTED, None, None),
    ("cp.async into a destination not grouped per instruction",
     copy("cpasync128", t([[8, 1], 1], [[1, 0], 0], "gmem"), t([[2, 2, 2], 1], [[1, 2, 4], 0], "smem")),
     REFUSED, "SIGABRT", "partition_D"),
    ("cp.async from shared memory", copy("cpasync128", V81, V81), REFUSED, "src expects global based memref", None),
    # universal copies
    ("universal 16-bit: (8,1) grouping into the MMA's (2,2,2)", copy("univ16", V81, R222), ACCEPTED, None, None),
    ("universal 16-bit: (2,2,2) into (8,1)", copy("univ16", t([[2, 2, 2], 1], [[1, 2, 4], 0], "smem"), R81),
     ACCEPTED, None, None),
    ("universal 16-bit: steps (1,2) and (2,1)", copy("univ16", t([[8, 1], 1, 2], [[1, 0], 0, 8], "smem"),
                                                    t([[8, 1], 2, 1], [[1, 0], 8, 0], "rmem")), ACCEPTED, None, None),
    ("universal 128-bit, 8 contiguous in both", copy("univ128", t([[8, 1], 4], [[1, 0], 8], "smem"),
                                                    t([[8, 1], 4], [[1, 0], 16], "rmem")), ACCEPTED, None, None),
    ("universal 128-bit: 16 into ((8,2),1)", copy("univ128", t([16, 1], [1, 0], "smem"),
                                                  t([[8, 2], 1], [[1, 8], 0], "rmem")), ACCEPTED, None, None),
    ("universal 128-bit f32: first mode 2, whole tensor contiguous",
     copy("univ128", t([2, 2], [1, 2], "smem"), t([2, 2], [1, 2], "rmem"), "Float32"), ACCEPTED, None, None),
    ("universal 64-bit: 4 contiguous then a gap", copy("univ64", t([8, 1], [1, 0], "smem"),
                                                       t([[4, 2], 1], [[1, 8], 0], "rmem")), ACCEPTED, None, None),
    ("universal 128-bit f32: 5 contiguous", copy("univ128", t([5, 1], [1, 0], "smem"), t([5, 1], [1, 0], "rmem"),
                                                  "Float32"), ACCEPTED, None, None),
    ("universal: 8 values into 4", copy("univ16", t([8, 1], [1, 0], "smem"), t([4, 1], [1, 0], "rmem")), REFUSED,
     "same size in rank 0", None),
    ("universal: (8,1) grouping into an ungrouped 16", copy("univ16", V81, t([16, 1], [1, 0], "rmem")), REFUSED,
     "same size in rank 0", None),
    ("universal: 2 copy steps into 1", copy("univ16", t([8, 2], [1, 8], "smem"), t([16, 1], [1, 0], "rmem")),
     REFUSED, "same size in mode-1", None),
    ("universal: rank 2 into rank 1", copy("univ16", t([8, 1], [1, 0], "smem"), t([8], [1], "rmem")), REFUSED,
     "same rank", None),
    ("universal: f32 into f16", copy("univ32", t([8, 1], [1, 0], "smem", "Float32"), t([8, 1], [1, 0], "rmem")),
     REFUSED, "equal source and destination element type bit width", None),
    ("universal 128-bit of 4 halves", copy("univ128", t([4, 1], [1, 0], "smem"), t([4, 1], [1, 0], "rmem")),
     REFUSED, "cannot vectorize copy to 8 elements", None),
    ("universal 128-bit into stride 2", copy("univ128", t([8, 1], [1, 0], "smem"), t([8, 1], [2, 0], "rmem")),
     REFUSED, "cannot vectorize copy to 8 elements", None),
    ("universal 128-bit f32 into (2,4):(1,4)", copy("univ128", t([2, 4], [1, 2], "smem"), t([2, 4], [1, 4], "rmem"),
                                                    "Float32"), REFUSED, "cannot vectorize copy to 4 elements", None),
    ("universal 64-bit f32 from a transposed pair", copy("univ64", t([[2, 2], 2], [[2, 1], 4], "smem"),
                                                         t([[2, 2], 2], [[2, 1], 4], "rmem"), "Float32"),
     REFUSED, "cannot vectorize copy to 2 elements", None),
    ("universal 128-bit of 6 halves", copy("univ128", t([6, 1], [1, 0], "smem"), t([6, 1], [1, 0], "rmem")),
     REFUSED, "bad_variant_access", "moves 8 consecutive"),
    ("universal (8,1) grouping into ((4,1),1)", copy("univ16", V81, t([[4, 1], 1], [[1, 0], 0], "rmem")), ACCEPTED,
     None, "cannot run"),
]

A = t([[2, 2, 2], 1, 1], [[1, 2, 4], 0, 0], "rmem", "Float16")
B = t([[2, 2], 1, 1], [[1, 2], 0, 0], "rmem", "Float16")
C = t([[2, 2], 1, 1], [[1, 2], 0, 0], "rmem", "Float32")
FA = t([1, 2, 1], [0, 1, 0], "rmem", "Float32")
FC = t([1, 2, 2], [0, 1, 2], "rmem", "Float32")
GEMMS = [
    ("mma.sync: (V,M,K) fragments", gemm("f16", A, B, C), ACCEPTED, None, None),
    ("mma.sync: A as the retiled view ((8,1),1,1)", gemm("f16", t([[8, 1], 1, 1], [[1, 0], 0, 0], "rmem", "Float16"),
                                                          B, C), ACCEPTED, None, None),
    ("mma.sync: (V,M) x (V,N) => (V,M,N)", gemm("f16", t([[2, 2, 2], 1], [[1, 2, 4], 0], "rmem", "Float16"),
                                                 t([[2, 2], 1], [[1, 2], 0], "rmem", "Float16"), C),
     ACCEPTED, None, None),
    ("mma.sync: two k-blocks", gemm("f16", t([[2, 2, 2], 1, 2], [[1, 2, 4], 0, 8], "rmem", "Float16"),
                                    t([[2, 2], 1, 2], [[1, 2], 0, 4], "rmem", "Float16"), C), ACCEPTED, None, None),
    ("mma.sync: two atoms down M", gemm("f16", t([[2, 2, 2], 2, 1], [[1, 2, 4], 8, 0], "rmem", "Float16"), B,
                                        t([[2, 2], 2, 1], [[1, 2], 4, 0], "rmem", "Float32")), ACCEPTED, None, None),
    ("mma.sync: C in f16, D in f32", gemm("f16", A, B, t([[2, 2], 1, 1], [[1, 2], 0, 0], "rmem", "Float16"), C),
     ACCEPTED, None, None),
    ("mma.sync: A rank 3, B rank 2", gemm("f16", A, t([[2, 2], 1], [[1, 2], 0], "rmem", "Float16"), C), REFUSED,
     "`a` and `b` must have the same rank", None),
    ("mma.sync: C rank 2, D rank 3", gemm("f16", A, B, t([[2, 2], 1], [[1, 2], 0], "rmem", "Float32"), C), REFUSED,
     "`c` and `d` must have the same rank", None),
    ("mma.sync: A rank 3, C rank 2", gemm("f16", A, B, t([[2, 2], 1], [[1, 2], 0], "rmem", "Float32")), REFUSED,
     "`c` must have rank 3 when `a` has rank 3", None),
    ("mma.sync: (V,M) x (V,N) => (V,M)", gemm("f16", t([[2, 2, 2], 1], [[1, 2, 4], 0], "rmem", "Float16"),
                                               t([[2, 2], 1], [[1, 2], 0], "rmem", "Float16"),
                                               t([[2, 2], 1], [[1, 2], 0], "rmem", "Float32")), REFUSED,
     "expects rank 3 for D", None),
    ("mma.sync: rank-1 fragments", gemm("f16", t([[2, 2, 2]], [[1, 2, 4]], "rmem", "Float16"),
                                        t([[2, 2]], [[1, 2]], "rmem", "Float16"),
                                        t([[2, 2]], [[1, 2]], "rmem", "Float32")),
     REFUSED, "expects rank 2 or 3 for A", None),
    ("mma.sync: rank-4 fragments", gemm("f16", t([[2, 2, 2], 1, 1, 1], [[1, 2, 4], 0, 0, 0], "rmem", "Float16"),
                                        t([[2, 2], 1, 1, 1], [[1, 2], 0, 0, 0], "rmem", "Float16"),
                                        t([[2, 2], 1, 1, 1], [[1, 2], 0, 0, 0], "rmem", "Float32")),
     REFUSED, "expects rank 2 or 3 for A", None),
    ("mma.sync: A's M 2, D's M 1", gemm("f16", t([[2, 2, 2], 2, 1], [[1, 2, 4], 8, 0], "rmem", "Float16"), B, C),
     REFUSED, "expects A's M == D'M and B's N == D'N", None),
    ("mma.sync: A's K 2, B's K 1", gemm("f16", t([[2, 2, 2], 1, 2], [[1, 2, 4], 0, 8], "rmem", "Float16"), B, C),
     REFUSED, "expects A's K == B's K", None),
    ("mma.sync: A and B in f32", gemm("f16", t([[2, 2, 2], 1, 1], [[1, 2, 4], 0, 0], "rmem", "Float32"),
                                      t([[2, 2], 1, 1], [[1, 2], 0, 0], "rmem", "Float32"), C), REFUSED,
     "expects A/B of type f16", None),
    ("mma.sync: A in f32, B in f16", gemm("f16", t([[2, 2, 2], 1, 1], [[1, 2, 4], 0, 0], "rmem", "Float32"), B, C),
     REFUSED, "expects A/B of the same type", None),
    ("mma.sync: D in f16", gemm("f16", A, B, C, t([[2, 2], 1, 1], [[1, 2], 0, 0], "rmem", "Float16")), REFUSED,
     "expects D of type f32", None),
    ("mma.sync: B in shared memory", gemm("f16", A, t([[2, 2], 1, 1], [[1, 2], 0, 0], "smem", "Float16"), C),
     REFUSED, "expects rmem for input operands", None),
    ("mma.sync: C in shared memory", gemm("f16", A, B, t([[2, 2], 1, 1], [[1, 2], 0, 0], "smem", "Float32"), C),
     REFUSED, "NVVM backend compilation failed", None),
    ("mma.sync: A with 4 values", gemm("f16", t([[2, 2], 1, 1], [[1, 2], 0, 0], "rmem", "Float16"), B, C), ACCEPTED,
     None, "cannot run"),
    ("mma.sync: C two atoms down M, D one", gemm("f16", A, B, t([[2, 2], 2, 1], [[1, 2], 4, 0], "rmem", "Float32"), C),
     ACCEPTED, None, "cannot run"),
    ("FMA: (V,M,K) fragments", gemm("fma", FA, FA, FC, threads=256), ACCEPTED, None, None),
    ("FMA: (M,K) x (N,K) => (M,N)", gemm("fma", t([2, 1], [1, 0], "rmem", "Float32"),
                                         t([2, 1], [1, 0], "rmem", "Float32"), t([2, 2], [1, 2], "rmem", "Float32"),
                                         threads=256), ACCEPTED, None, None),
    ("FMA: D in f16", gemm("fma", FA, FA, FC, t([1, 2, 2], [0, 1, 2], "rmem", "Float16"), threads=256), ACCEPTED,
     None, None),
    ("FMA: A in shared memory", gemm("fma", t([1, 2, 1], [0, 1, 0], "smem", "Float32"), FA, FC, threads=256),
     ACCEPTED, None, None),
    ("FMA: A and B in f16", gemm("fma", t([1, 2, 1], [0, 1, 0], "rmem", "Float16"),
                                 t([1, 2, 1], [0, 1, 0], "rmem", "Float16"), FC, threads=256), REFUSED,
     "NVVM backend compilation failed", None),
    ("FMA: C in f16", gemm("fma", FA, FA, t([1, 2, 2], [0, 1, 2], "rmem", "Float16"), FC, threads=256), REFUSED,
     "NVVM backend compilation failed", None),
    ("FMA: A's K 4, B's K 3", gemm("fma", t([2, 4], [1, 2], "rmem", "Float32"), t([2, 3], [1, 2], "rmem", "Float32"),
                                   t([2, 2], [1, 2], "rmem", "Float32"), threads=256), ACCEPTED, None, "cannot run"),
]
CASES = COPIES + GEMMS


# --------------------------------------------------------------------------------------------- simulator side

def _type(name):
    return getattr(types, name)


def _tensor(spec, default_type):
    shape, stride, space = _tuple(spec[0]), _tuple(spec[1]), spec[2]
    element = _type(spec[3] if len(spec) > 3 else default_type)
    layout = reference.make_layout(shape, stride=stride)
    storage = Storage(numpy.zeros(4096, types.NUMPY_STORAGE[element]), space, element)
    storage.align_bytes = 16
    return SimTensor(storage, layout)


def _tuple(x):
    return tuple(_tuple(v) for v in x) if isinstance(x, list) else x


def _atom(spec, dtype):
    element = _type(dtype)
    if spec.startswith("ldsm"):
        op = reference.nvgpu.warp.LdMatrix8x8x16bOp(spec.endswith("t"), int(spec[4]))
        return reference.make_copy_atom(op, element)
    if spec.startswith("cpasync"):
        return reference.make_copy_atom(reference.nvgpu.cpasync.CopyG2SOp(), element, num_bits_per_copy=int(spec[7:]))
    return reference.make_copy_atom(reference.nvgpu.CopyUniversalOp(), element, num_bits_per_copy=int(spec[4:]))


def _mma(spec):
    if spec == "f16":
        return reference.make_tiled_mma(reference.nvgpu.warp.MmaF16BF16Op(types.Float16, types.Float32, (16, 8, 16)))
    return reference.make_tiled_mma(reference.nvgpu.MmaUniversalOp(types.Float32), (16, 16, 1))


def simulator_says(case):
    """None when the simulator accepts the case, else its message."""
    if case["kind"] == "copy":
        dtype = case.get("dtype", "Float16")
        problem = operands.copy_problem(_atom(case["atom"], dtype), _tensor(case["src"], dtype),
                                        _tensor(case["dst"], dtype))
        return problem and problem(["s2r", "tXsA[None, None, k]", "tCrA[None, None, k]"])
    d, a, b, c = (_tensor(case[k], "Float32") for k in ("d", "a", "b", "c"))
    problem = operands.gemm_problem(_mma(case["mma"]), d, a, b, c)
    return problem and problem(["tiled_mma", "tCrC", "tCrA", "tCrB", "tCrC"])


@pytest.mark.parametrize("name, case, cutedsl, phrase, simulator", CASES, ids=[c[0] for c in CASES])
def test_the_simulator_accepts_and_refuses_what_cutedsl_does(name, case, cutedsl, phrase, simulator):
    message = simulator_says(case)
    if simulator == "cannot run":
        assert message is not None and "CuTeDSL 4.8.1 compiles this" in message, message
        return
    if cutedsl == ACCEPTED:
        assert message is None, message
        return
    assert message is not None, f"CuTeDSL refuses {name} ({phrase}), the simulator accepts it"
    assert (simulator or phrase) in message, message
    assert message.startswith(("cute.copy: ", "cute.gemm: ")) and "CuTeDSL" in message


# --------------------------------------------------------------------------------------------- CuTeDSL side

def ask_cutedsl(cases: list) -> list:
    """CuTeDSL's answer to every case, from a fresh process (tests.sim.cutedsl_operands_oracle)."""
    env = {**os.environ, "CUTE_DSL_ARCH": os.environ.get("CUTE_DSL_ARCH", "sm_80"), "PYTHONPATH": str(ROOT)}
    finished = subprocess.run([sys.executable, "-m", "tests.sim.cutedsl_operands_oracle"], input=json.dumps(cases),
                              capture_output=True, text=True, timeout=900, cwd=ROOT, env=env)
    assert finished.returncode == 0, finished.stderr[-3000:]
    return json.loads(finished.stdout)


@pytest.fixture(scope="module")
def cutedsl_answers():
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    answers = ask_cutedsl([case for _, case, *_ in CASES] + [{"kind": "s2r", "variant": "retiled"},
                                                             {"kind": "s2r", "variant": "plain"}])
    return answers


@pytest.mark.cutedsl
def test_the_recorded_answers_are_cutedsls(cutedsl_answers):
    wrong = []
    for (name, _, cutedsl, phrase, _), answer in zip(CASES, cutedsl_answers):
        if cutedsl == ACCEPTED and answer != "ACCEPTED" or cutedsl == REFUSED and (
                answer == "ACCEPTED" or phrase not in answer):
            wrong.append(f"{name}: recorded {cutedsl} ({phrase}), CuTeDSL says {answer}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.cutedsl
def test_cutedsl_compiles_the_retiled_s2r_kernel_and_aborts_on_the_fragment(cutedsl_answers):
    retiled, plain = cutedsl_answers[-2:]
    assert retiled == "ACCEPTED"
    assert plain.startswith("CRASH") and "crd2idx" in plain and "((2,2,2)):((1,2,4))" in plain


# --------------------------------------------------------------------------------------------- on the simulator

@pytest.fixture(scope="module")
def s2r():
    with cutekit.using("sim", fresh=("tests.sim.operand_kernels",)):
        yield importlib.import_module("tests.sim.operand_kernels")


def _run_s2r(kernels, variant):
    from cutlass.cute.runtime import from_dlpack
    kernels.VARIANT[0] = variant
    a = torch.arange(512, dtype=torch.float16).reshape(16, 32)
    out = torch.zeros(32, 8, dtype=torch.float16)
    kernels.load_k_block(from_dlpack(a, assumed_align=16), from_dlpack(out, assumed_align=16), 1)
    return out


def test_the_retiled_s2r_kernel_runs_on_the_simulator(s2r):
    out = _run_s2r(s2r, "retiled")
    assert out[0].tolist() == [16, 17, 272, 273, 24, 25, 280, 281]


def test_copying_into_the_mma_fragment_is_refused_naming_the_retiled_view(s2r):
    with pytest.raises(operands.OperandError) as caught:
        _run_s2r(s2r, "plain")
    message = str(caught.value)
    assert "pass the retiled view, `s2r.retile(tCrA)[None, None, k_block]`" in message
    assert "(2,2,2)" in message and "(8,1)" in message and "crd2idx" in message
    assert "thread (0, 0, 0)" in message
