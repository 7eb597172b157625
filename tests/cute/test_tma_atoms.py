"""cutekit's TMA atoms (cpasync.make_tiled_tma_atom, tma_partition) and stmatrix atoms against CuTeDSL 4.8.1
traced on the CPU for sm_90a, on cases far wider than chapter 08 uses: every shared-memory atom kind, 8-,
16- and 32-bit types, K- and MN-major tensors, tiles of several atoms, 1 to 3 stages, multicast over 2 and 4
CTAs (each CTA's share), loads and stores; stmatrix x1/x2/x4, transposed or not, alone and tiled over
warpgroup MMAs of several N and warpgroup counts.

CuTeDSL reads the target once per process and the other CPU tests use sm_80, so CuTeDSL runs in a child.
Where CuTeDSL is not installed the cases are compared with answers CuTeDSL gave (pinned below)."""
import json
import os
import random
import subprocess
import sys

import numpy
import pytest

from cutekit import cute
from cutekit.cute.layout import group_modes
from cutekit.cute.nvgpu import cpasync, warp, warpgroup

WIDTHS = {"Float16": 16, "Float32": 32, "Int8": 8}


def tma_cases(seed: int, count: int) -> list:
    rng = random.Random(seed)
    cases = []
    while len(cases) < count:
        kind = rng.choice(list(warpgroup.SmemLayoutAtomKind)).name
        dtype = rng.choice(list(WIDTHS))
        major, swizzle = kind.split("_")
        row_bytes = {"INTER": 16, "SW32": 32, "SW64": 64, "SW128": 128}[swizzle]
        contiguous = row_bytes * 8 // WIDTHS[dtype]
        along = contiguous * rng.choice((1, 2, 3, 4))          # the contiguous mode: whole atoms
        across = 8 * rng.choice((1, 2, 4, 8, 16, 32))
        mn, k = (across, along) if major == "K" else (along, across)
        if mn > 256 or k > 256 or mn * k * WIDTHS[dtype] // 8 > 64 * 1024:
            continue
        op = rng.choice(("load", "load", "store", "multicast"))
        multicast = rng.choice((2, 4)) if op == "multicast" else 1
        if (mn * k) % multicast or (op == "store" and multicast > 1):
            continue
        cases.append({"kind": kind, "dtype": dtype, "mn": mn, "k": k, "stages": rng.choice((1, 2, 3)),
                      "op": op, "multicast": multicast, "rows": 1000 + rng.randrange(0, 9) * 8,
                      "columns": 512 + rng.randrange(0, 9) * 8})
    return cases


CASES = tma_cases(0, 36) + tma_cases(1, 12)
STMATRIX = [(n, transpose, x, groups) for n in (8, 16, 64, 256) for transpose in (False, True)
            for x in (1, 2, 4) for groups in (1, 2) if not (n == 8 and x == 4)]


def cutekit_answers() -> dict:
    out = {"tma": [], "stmatrix": []}
    for case in CASES:
        dtype = getattr(cute, case["dtype"])
        atom = warpgroup.make_smem_layout_atom(getattr(warpgroup.SmemLayoutAtomKind, case["kind"]), dtype)
        k_major = case["kind"].startswith("K")
        order = (0, 1, 2) if k_major else (1, 0, 2)
        staged = cute.tile_to_shape(atom, (case["mn"], case["k"], case["stages"]), order=order)
        rows, columns = case["rows"], case["columns"]
        stride = (columns, 1) if k_major else (1, rows)
        gmem = cute.make_tensor(numpy.zeros(rows * columns, numpy.float32).astype(
            {"Float16": numpy.float16, "Float32": numpy.float32, "Int8": numpy.int8}[case["dtype"]]),
            cute.make_layout((rows, columns), stride=stride))
        op = {"load": cpasync.CopyBulkTensorTileG2SOp(), "store": cpasync.CopyBulkTensorTileS2GOp(),
              "multicast": cpasync.CopyBulkTensorTileG2SMulticastOp()}[case["op"]]
        tma, coords = cpasync.make_tiled_tma_atom(op, gmem, cute.slice_(staged, (None, None, 0)),
                                                  (case["mn"], case["k"]),
                                                  num_multicast=case["multicast"])
        tiles = cute.local_tile(coords, (case["mn"], case["k"]), (1, None))
        smem = cute.make_tensor(numpy.zeros(cute.cosize(staged.outer), numpy.float32), staged.outer)
        shares = []
        for rank in range(case["multicast"]):
            s, g = cpasync.tma_partition(tma, rank, cute.make_layout(case["multicast"]),
                                         smem.with_layout(group_modes(smem.layout, 0, 2)),
                                         tiles.with_layout(group_modes(tiles.layout, 0, 2)))
            shares.append([str(s.layout), str(g)])
        out["tma"].append({"atom": str(tma), "coords": str(coords), "shares": shares})
    for n, transpose, x, groups in STMATRIX:
        mma = warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, n, 16), warpgroup.OperandSource.SMEM,
                                     cute.nvgpu.OperandMajorMode.K, cute.nvgpu.OperandMajorMode.K)
        tiled = cute.make_tiled_mma(cute.make_mma_atom(mma), (groups, 1, 1))
        atom = cute.make_copy_atom(warp.StMatrix8x8x16bOp(transpose, x), cute.Float16)
        out["stmatrix"].append({"atom": str(atom), "tiled": str(cute.make_tiled_copy_C(atom, tiled))})
    return out


PROGRAM = r"""
import json, sys
import cutlass, cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync, warpgroup, warp
from cutlass.cute.runtime import make_fake_compact_tensor
cases, stmatrix = json.loads(sys.argv[1])
out = {"tma": [], "stmatrix": []}

def traced(case):
    dtype = getattr(cutlass, case["dtype"])
    k_major = case["kind"].startswith("K")
    gmem = make_fake_compact_tensor(dtype, (case["rows"], case["columns"]), stride_order=(1, 0) if k_major else (0, 1),
                                    assumed_align=16)
    record = {"shares": []}

    @cute.jit
    def trace(gmem: cute.Tensor):
        atom = warpgroup.make_smem_layout_atom(getattr(warpgroup.SmemLayoutAtomKind, case["kind"]), dtype)
        staged = cute.tile_to_shape(atom, (case["mn"], case["k"], case["stages"]),
                                    order=(0, 1, 2) if k_major else (1, 0, 2))
        op = {"load": cpasync.CopyBulkTensorTileG2SOp(), "store": cpasync.CopyBulkTensorTileS2GOp(),
              "multicast": cpasync.CopyBulkTensorTileG2SMulticastOp()}[case["op"]]
        tma, coords = cpasync.make_tiled_tma_atom(op, gmem, cute.slice_(staged, (None, None, 0)),
                                                  (case["mn"], case["k"]), num_multicast=case["multicast"])
        record["atom"], record["coords"] = str(tma), str(coords)
        tiles = cute.local_tile(coords, (case["mn"], case["k"]), (1, None))
        smem = cute.make_tensor(cute.make_ptr(dtype, 1024, cute.AddressSpace.smem, assumed_align=1024),
                                staged.outer)
        for rank in cutlass.range_constexpr(case["multicast"]):
            s, g = cpasync.tma_partition(tma, rank, cute.make_layout(case["multicast"]),
                                         cute.group_modes(smem, 0, 2), cute.group_modes(tiles, 0, 2))
            record["shares"].append([str(s.layout), str(g)])
    cute.compile(trace, gmem)
    return record

for case in cases:
    out["tma"].append(traced(case))

@cute.jit
def trace_stmatrix():
    for n, transpose, x, groups in stmatrix:
        mma = warpgroup.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (64, n, 16), warpgroup.OperandSource.SMEM,
                                     cute.nvgpu.OperandMajorMode.K, cute.nvgpu.OperandMajorMode.K)
        tiled = cute.make_tiled_mma(cute.make_mma_atom(mma), (groups, 1, 1))
        atom = cute.make_copy_atom(warp.StMatrix8x8x16bOp(transpose, x), cutlass.Float16)
        out["stmatrix"].append({"atom": str(atom), "tiled": str(cute.make_tiled_copy_C(atom, tiled))})
trace_stmatrix()
print("JSON" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def cutedsl_answers(tmp_path_factory):
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed: the pinned answers are compared")
    environment = dict(os.environ, CUTE_DSL_ARCH="sm_90a")
    program = tmp_path_factory.mktemp("tma") / "trace_tma.py"      # CuTeDSL reads a jit function's source
    program.write_text(PROGRAM)
    done = subprocess.run([sys.executable, str(program), json.dumps([CASES, STMATRIX])], capture_output=True,
                          text=True, timeout=600, env=environment)
    assert done.returncode == 0, done.stderr[-3000:]
    line = [line for line in done.stdout.splitlines() if line.startswith("JSON")][-1]
    return json.loads(line[4:])


@pytest.fixture(scope="module")
def ours():
    return cutekit_answers()


@pytest.mark.cutedsl
def test_tma_atoms_coordinates_and_partitions_match_cutedsl(ours, cutedsl_answers):
    assert len(cutedsl_answers["tma"]) == len(CASES) == 48
    assert sum(len(answer["shares"]) for answer in cutedsl_answers["tma"]) > len(CASES)     # multicast shares
    for case, mine, theirs in zip(CASES, ours["tma"], cutedsl_answers["tma"]):
        assert mine == theirs, case


@pytest.mark.cutedsl
def test_stmatrix_atoms_and_tiled_copies_match_cutedsl(ours, cutedsl_answers):
    assert len(cutedsl_answers["stmatrix"]) == len(STMATRIX) == 44
    for case, mine, theirs in zip(STMATRIX, ours["stmatrix"], cutedsl_answers["stmatrix"]):
        assert mine == theirs, case


def test_the_kernels_tma_atoms_as_cutedsl_printed_them(ours):
    """Pinned from CuTeDSL 4.8.1 (sm_90a, 2026-11-24): chapter 08's A load and C store."""
    F16 = cute.Float16
    atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, F16)
    staged = cute.tile_to_shape(atom, (128, 64, 4), order=(0, 1, 2))
    a = cute.make_tensor(numpy.zeros(1000 * 512, numpy.float16), cute.make_layout((1000, 512), stride=(512, 1)))
    tma_a, coords = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a,
                                                cute.slice_(staged, (None, None, 0)), (128, 64))
    assert str(tma_a) == ("Copy Atom\n  ThrID:         1:0\n  TV Layout Src: (1,8192):(0,1)\n"
                          "  TV Layout Dst: (1,8192):(0,1)\n  Value type:    f16")
    assert str(coords) == "tensor<(0,0) o (1000,512):(1@1,1@0)>"
    tiles = cute.local_tile(coords, (128, 64), (1, None))
    assert str(tiles) == "tensor<(0,128) o (128,64,8):(1@1,1@0,64@0)>"
    smem = cute.make_tensor(numpy.zeros(cute.cosize(staged.outer), numpy.float16), staged.outer)
    s, g = cpasync.tma_partition(tma_a, 0, cute.make_layout(1), smem.with_layout(group_modes(smem.layout, 0, 2)),
                                 tiles.with_layout(group_modes(tiles.layout, 0, 2)))
    assert str(s.layout) == "((8192,1),(1,4)):((1,0),(0,8192))"
    assert str(g) == "tensor<(0,128) o (((64,128),1),8):(((1@0,1@1),0),64@0)>"
    c = cute.make_tensor(numpy.zeros(1000 * 776, numpy.float16), cute.make_layout((1000, 776), stride=(776, 1)))
    tma_c, _ = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), c,
                                           cute.tile_to_shape(atom, (128, 256), order=(0, 1)), (128, 256))
    assert str(tma_c.layout_src_tv) == "(1,8192):(0,1)"       # 4 boxes of 128 x 64 (a 128-byte row each)
    mn = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.MN_SW128, F16)
    t = cute.make_tensor(numpy.zeros(1000 * 512, numpy.float16), cute.make_layout((1000, 512), stride=(1, 1000)))
    tma_t, coords_t = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), t,
                                                  cute.tile_to_shape(mn, (128, 64), order=(1, 0)), (128, 64))
    assert str(tma_t.layout_src_tv) == "(1,4096):(0,1)" and str(coords_t) == "tensor<(0,0) o (1000,512):(1@0,1@1)>"


def test_stmatrix_x4_as_cutedsl_printed_it():
    """Pinned from CuTeDSL 4.8.1 (sm_90a, 2026-11-24): the kernel's epilogue copy."""
    mma = warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 256, 16), warpgroup.OperandSource.SMEM,
                                 cute.nvgpu.OperandMajorMode.K, cute.nvgpu.OperandMajorMode.K)
    tiled = cute.make_tiled_mma(cute.make_mma_atom(mma), (2, 1, 1))
    atom = cute.make_copy_atom(warp.StMatrix8x8x16bOp(False, 4), cute.Float16)
    assert str(atom.layout_src_tv) == "(32,(2,4)):(2,(1,64))" and str(atom.layout_dst_tv) == "(32,8):(8,1)"
    assert str(cute.make_tiled_copy_C(atom, tiled).layout_tv_tiled) == \
        "((4,8,8),((2,2,32),(1,1))):((256,1,16),((128,8,1024),(0,0)))"


@pytest.mark.parametrize("bad, message", [
    (lambda a, s: cpasync.make_tiled_tma_atom(cpasync.CopyG2SOp(), a, s, (128, 64)), "TMA copy operation"),
    (lambda a, s: cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a, s, (128, 64), num_multicast=2),
     "CopyBulkTensorTileG2SMulticastOp"),
    (lambda a, s: cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a, s, (64, 64)), "holds 8192"),
    (lambda a, s: cpasync.tma_partition("atom", 0, cute.make_layout(1), a, a), "TMA copy atom"),
])
def test_bad_tma_arguments_are_refused_by_name(bad, message):
    a = cute.make_tensor(numpy.zeros(1000 * 512, numpy.float16), cute.make_layout((1000, 512), stride=(512, 1)))
    atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cute.Float16)
    with pytest.raises(cute.CuteError, match=message):
        bad(a, cute.tile_to_shape(atom, (128, 64), order=(0, 1)))
