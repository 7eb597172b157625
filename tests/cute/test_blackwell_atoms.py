"""cutekit's Blackwell (sm_100) host side against CuTeDSL 4.8.1 traced on the CPU for sm_100a: the tcgen05 MMA
of every kind and type pair with CtaGroup ONE and TWO and both majors, its TMEM accumulator and column count,
the staged shared-memory layouts and their descriptor fragments, every shared-memory atom for 8-, 16- and
32-bit types, every TMEM load shape with and without packing and make_tmem_copy over the accumulator, the dense
GEMM's epilogue helpers and its TMA loads of A and B (tests/cute/blackwell_conformance.py, covering_cases).

Where CuTeDSL is installed, it answers the same cases in a child process (CUTE_DSL_ARCH=sm_100a; cached under
build/conformance/blackwell/) and cutekit must agree with it; everywhere, cutekit must agree with the answers
CuTeDSL gave, pinned in tests/cute/pinned/blackwell_sm100a.json (`scripts/conformance.py --blackwell --pin`
rewrites them). A wider seeded sample: `scripts/conformance.py --blackwell --cases 3000`."""
import importlib.util

import numpy
import pytest

from cutekit import cute
from cutekit.cute.nvgpu import OperandMajorMode, cpasync, tcgen05
from cutekit.cute.utils import LayoutEnum
from cutekit.cute.utils import blackwell_helpers as sm100

from . import blackwell_conformance as suite

K, MN = OperandMajorMode.K, OperandMajorMode.MN
ONE, TWO = tcgen05.CtaGroup.ONE, tcgen05.CtaGroup.TWO
SMEM = tcgen05.OperandSource.SMEM


def test_cutekit_gives_the_answers_cutedsl_gave_pinned():
    """Runs without CuTeDSL: the covering cases against the pinned answers, every step."""
    pins = suite.pinned()
    assert pins["cases"] == suite.covering_cases(), "the covering cases changed: re-pin with --blackwell --pin"
    bad, counts = suite.run(pins["cases"], theirs=pins["answers"])
    assert not bad, suite.report(bad, counts)
    assert counts["cases"] == len(pins["cases"]) >= 80 and counts["refused_both"] >= 10, counts
    kinds = {case["kind"] for case in pins["cases"]}
    assert kinds == {"mma", "smem_atom", "tmem_load", "epilogue", "tma"}


@pytest.mark.cutedsl
@pytest.mark.skipif(importlib.util.find_spec("cutlass") is None, reason="nvidia-cutlass-dsl is not installed")
def test_cutedsl_still_gives_the_pinned_answers_and_cutekit_agrees():
    cases = suite.covering_cases()
    theirs = suite.cutedsl_facts(cases)
    assert theirs == suite.pinned()["answers"], "CuTeDSL answers differently now: re-pin with --blackwell --pin"
    bad, counts = suite.run(cases, theirs=theirs)
    assert not bad, suite.report(bad, counts)


def test_cutekit_refuses_only_with_a_named_error_never_a_crash_inside():
    for case in suite.make_cases(100, seed=11) + suite.covering_cases():
        facts = suite.cutekit_facts(case)
        crashes = {step: text for step, text in facts.items() if text.startswith("CRASH")}
        assert not crashes, (case, crashes)


def test_the_dense_gemms_host_side_as_cutedsl_printed_it():
    """Pinned from CuTeDSL 4.8.1 (sm_100a, traced on the CPU, 2026-11-28): a 128x256 fp16 MMA of one CTA
    with fp32 accumulators, three stages of 128x64 tiles, the epilogue in 128x32 steps."""
    mma = sm100.make_trivial_tiled_mma(cute.Float16, cute.Float16, K, K, cute.Float32, ONE, (128, 256))
    assert str(mma.op).splitlines()[0] == "tcgen05 F16/BF16 MMA Operation"
    assert str(mma.tv_layout_C) == "(1,(128,256)):(128,(1,128))" and str(mma.thr_id) == "1:0"
    assert mma.partition_shape_C((128, 256)) == ((128, 256), 1, 1)
    acc = mma.make_fragment_C(mma.partition_shape_C((128, 256)))
    assert str(acc) == "tensor<ptr<f32, tmem, align<1>> o ((128,256),1,1):((65536,1),0,0)>"
    assert tcgen05.find_tmem_tensor_col_offset(acc) == 256 and sm100.get_num_tmem_alloc_cols(acc) == 256
    s_a = sm100.make_smem_layout_a(mma, (128, 256, 64), cute.Float16, 3)
    assert str(s_a) == "S<3,4,3> o 0 o ((128,16),1,4,3):((64,1),0,16,8192)"
    smem = cute.make_tensor(numpy.zeros(cute.cosize(s_a.outer), numpy.float16), s_a.outer)
    assert str(mma.make_fragment_A(smem).layout) == "(1,1,4,3):(0,0,2,1024)"
    epi = sm100.compute_epilogue_tile_shape((128, 256, 64), False, LayoutEnum.ROW_MAJOR, cute.Float16)
    assert [str(t) for t in epi] == ["128:1", "32:1"]
    load = sm100.get_tmem_load_op((128, 256, 64), LayoutEnum.ROW_MAJOR, cute.Float16, cute.Float32, epi, False)
    assert str(load.op) == "tcgen05 Ld32x32b Copy Operation\n  number of repetitions = 32"
    tiles = cute.flat_divide(acc[((None, None), 0, 0)], epi)
    assert str(tiles) == "tensor<ptr<f32, tmem, align<1>> o (128,32,1,8):(65536,1,0,32)>"
    copy = tcgen05.make_tmem_copy(load, tiles[(None, None, 0, 0)])
    assert str(copy.layout_tv_tiled) == "((32,4),(32,32)):((0,1),(128,4))"
    assert str(copy.get_slice(37).partition_S(tiles).layout) == "(((32,32),1),1,1,1,8):(((1,65536),0),0,0,0,32)"


def test_a_cta_pairs_mma_and_tma_as_cutedsl_printed_them():
    """Pinned from CuTeDSL 4.8.1 (sm_100a, 2026-11-28): CtaGroup.TWO, a 256x128 MMA shared by two CTAs."""
    mma = sm100.make_trivial_tiled_mma(cute.Float16, cute.Float16, K, K, cute.Float32, TWO, (256, 128))
    assert str(mma.thr_id) == "2:1" and str(mma.tv_layout_B) == "(2,(64,16)):(64,(1,128))"
    assert str(mma.thr_layout_vmnk) == "(2,1,1,1):(1,0,0,0)"
    acc = mma.make_fragment_C(mma.partition_shape_C((256, 128)))
    assert str(acc.layout) == "((128,128),1,1):((65536,1),0,0)"
    half = cute.make_tiled_mma(tcgen05.MmaF16BF16Op(cute.Float16, cute.Float32, (128, 64, 16), TWO, SMEM, K, K))
    assert str(half.make_fragment_C(half.partition_shape_C((128, 64))).layout) == \
        "((64,(32,2)),1,1):((65536,(1,4194304)),0,0)"
    s_a = sm100.make_smem_layout_a(mma, (256, 128, 64), cute.Float16, 3)
    a = cute.make_tensor(numpy.zeros(1000 * 512, numpy.float16), cute.make_layout((1000, 512, 1), stride=(512, 1, 0)))
    op = sm100.cluster_shape_to_tma_atom_A((2, 1), mma.thr_id)
    assert str(op) == "cp.async GMEM -> SMEM bulk tensor copy Operation\n  CTA group = 2"
    vmnk = cute.tiled_divide(cute.make_layout((2, 1, 1)), (mma.thr_id.shape,))
    atom, coords = cute.nvgpu.make_tiled_tma_atom_A(op, a, cute.slice_(s_a, (None, None, None, 0)), (256, 128, 64),
                                                    mma, vmnk.shape)
    assert str(atom.thr_id) == "2:1" and str(atom.layout_src_tv) == "(2,8192):(8192,1)"
    assert str(coords) == "tensor<(0,0) o (1000,512,1):(1@1,1@0,0)>"


@pytest.mark.parametrize("make, message", [
    (lambda: tcgen05.MmaF16BF16Op(cute.Float16, cute.Float32, (128, 12, 16), ONE, SMEM, K, K),
     r"expects the N-mode to satisfy 8 <= N <= 256 and N % 8 == 0, but got 12"),
    (lambda: tcgen05.MmaF16BF16Op(cute.Float16, cute.Float32, (128, 8, 16), TWO, SMEM, K, K),
     r"expects the N-mode to satisfy 16 <= N <= 256 and N % 16 == 0, but got 8"),
    (lambda: tcgen05.MmaI8Op(cute.Int8, (128, 24, 32), ONE, SMEM, K, MN),
     r"16 <= N <= 256 and N % 16 == 0, but got 24"),
    (lambda: tcgen05.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 64, 16), TWO, SMEM, K, K),
     r"expects the M-mode to be 128 or 256, but got 64"),
    (lambda: tcgen05.MmaF16BF16Op(cute.Float16, cute.Float32, (128, 64, 32), ONE, SMEM, K, K),
     r"instruction extent in the K-mode to be 16, but got 32"),
    (lambda: tcgen05.MmaF16BF16Op(cute.Float16, cute.Int32, (128, 64, 16), ONE, SMEM, K, K),
     r"'acc_dtype' Op parameter to be one of Float16 or Float32"),
    (lambda: tcgen05.MmaF16BF16Op(cute.Float16, cute.Float32, (128, 64, 16), "ONE", SMEM, K, K),
     r"'cta_group' Op parameter to be a tcgen05.CtaGroup"),
    (lambda: tcgen05.Ld16x256bOp(tcgen05.Repetition.x64), r"x64 and x128 repetition is not supported"),
    (lambda: tcgen05.St16x128bOp(tcgen05.Repetition.x128), r"St16x128bOp: x128 repetition is not supported"),
])
def test_what_cutedsl_refuses_cutekit_refuses_naming_it(make, message):
    with pytest.raises(cute.CuteError, match=message):
        make()


def test_a_tmem_copy_of_the_wrong_width_or_tile_is_refused_by_name():
    mma = cute.make_tiled_mma(tcgen05.MmaF16BF16Op(cute.Float16, cute.Float32, (128, 64, 16), ONE, SMEM, K, K))
    acc = mma.make_fragment_C(mma.partition_shape_C((128, 64)))[((None, None), 0, 0)]
    with pytest.raises(cute.CuteError, match=r"copies 16-bit values .* but the tensor holds 32-bit Float32"):
        tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x8), cute.Float16), acc)
    with pytest.raises(cute.CuteError, match=r"not all in the tensor"):
        tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x128), cute.Float32), acc)
    with pytest.raises(cute.CuteError, match=r"expects a tensor in tensor memory"):
        tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.Ld32x32bOp(), cute.Float32), cute.make_identity_tensor((128, 64)))
    s_a = sm100.make_smem_layout_a(mma, (128, 64, 64), cute.Float16, 2)
    composed = cute.make_tensor(numpy.zeros(cute.cosize(s_a.outer), numpy.float16), s_a.outer)
    with pytest.raises(cute.CuteError, match=r"composed layout"):
        mma.make_fragment_A(composed.with_layout(s_a))


def test_the_tma_load_cutedsl_aborts_on_is_refused_with_the_rule():
    """CuTeDSL 4.8.1 stops the process (SIGABRT, no Python error) on a K-major fp16 B of 24, 40, 56, ... rows;
    cutekit refuses it (tests/cute/blackwell_conformance.py shows the pattern over every N)."""
    mma = sm100.make_trivial_tiled_mma(cute.Float16, cute.Float16, K, K, cute.Float32, ONE, (128, 40))
    s_b = sm100.make_smem_layout_b(mma, (128, 40, 64), cute.Float16, 2)
    b = cute.make_tensor(numpy.zeros(400 * 256, numpy.float16), cute.make_layout((400, 256), stride=(256, 1)))
    with pytest.raises(cute.CuteError, match=r"40 rows per CTA: CuTeDSL 4.8.1 stops the whole process"):
        cute.nvgpu.make_tiled_tma_atom_B(cpasync.CopyBulkTensorTileG2SOp(), b, cute.slice_(s_b, (None, None, None, 0)),
                                         (128, 40, 64), mma)
