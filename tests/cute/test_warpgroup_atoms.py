"""cutekit's sm_90 descriptions (cutekit.cute.nvgpu.warpgroup) against CuTeDSL 4.8.1 traced on the CPU for
sm_90a: every shared-memory layout atom kind for 8-, 16- and 32-bit types, the atoms tiled to the staged
shapes chapter 08's check asks for (and the swizzle its rule picks, against
cutlass.utils.hopper_helpers.get_smem_layout_atom), and the warpgroup MMA's TV layouts and partitions.

CuTeDSL reads the target once per process and the other CPU tests use sm_80, so CuTeDSL runs in a child."""
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from cutekit import cute
from cutekit.checks import ch08_hopper
from cutekit.cute.nvgpu import warpgroup

ROOT = Path(__file__).parents[2]
DTYPES = ("Float16", "BFloat16", "Float32", "Int8")
MMA_NS = (8, 16, 64, 128, 256)


def smem_cases():
    cases = []
    for seed in range(20):
        cases += ch08_hopper._smem_cases(random.Random(seed))
    return cases


PROGRAM = r"""
import json, sys
import cutlass, cutlass.cute as cute
from cutlass.cute.nvgpu import warpgroup
from cutlass.cute.nvgpu import OperandMajorMode
from cutlass.tensor_utils import LayoutEnum
import cutlass.utils.hopper_helpers as sm90
ask = json.loads(sys.argv[1])
out = {"atoms": {}, "smem": [], "kinds": [], "mma": {}}

@cute.jit
def trace():
    for kind in warpgroup.SmemLayoutAtomKind:
        for name in ask["dtypes"]:
            out["atoms"][f"{kind.name} {name}"] = str(warpgroup.make_smem_layout_atom(kind, getattr(cutlass, name)))
    for case in ask["smem"]:
        dtype = getattr(cutlass, case["dtype"])
        contiguous = case["k"] if case["major"] == "K" else case["mn"]
        layout = LayoutEnum.ROW_MAJOR if case["major"] == "K" else LayoutEnum.COL_MAJOR   # A: row-major is K-major
        kind = sm90.get_smem_layout_atom(layout, dtype, contiguous)
        out["kinds"].append(kind.name)
        atom = warpgroup.make_smem_layout_atom(kind, dtype)
        order = (0, 1, 2) if case["major"] == "K" else (1, 0, 2)
        out["smem"].append(str(cute.tile_to_shape(atom, (case["mn"], case["k"], case["stages"]), order=order)))
    for n in ask["ns"]:
        op = warpgroup.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (64, n, 16), warpgroup.OperandSource.SMEM,
                                    OperandMajorMode.K, OperandMajorMode.K)
        one = cute.make_tiled_mma(cute.make_mma_atom(op))
        two = cute.make_tiled_mma(cute.make_mma_atom(op), (2, 1, 1))
        C = cute.make_identity_tensor((128, n))
        out["mma"][str(n)] = [str(op), str(one), str(two.tv_layout_C_tiled), str(two.tv_layout_A_tiled),
                              str(two.thr_layout_vmnk)] + [str(two.get_slice(t).partition_C(C)) for t in (0, 37, 130)]
trace()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def cutedsl(tmp_path_factory):
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    ask = {"dtypes": list(DTYPES), "smem": smem_cases(), "ns": list(MMA_NS)}
    program = tmp_path_factory.mktemp("warpgroup") / "trace_warpgroup.py"     # CuTeDSL compiles from a file
    program.write_text(PROGRAM)
    done = subprocess.run([sys.executable, str(program), json.dumps(ask)], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, CUTE_DSL_ARCH="sm_90a"))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


pytestmark = pytest.mark.cutedsl


def test_every_smem_layout_atom_is_cutedsls(cutedsl):
    for kind in warpgroup.SmemLayoutAtomKind:
        for name in DTYPES:
            assert str(warpgroup.make_smem_layout_atom(kind, getattr(cute, name))) == cutedsl["atoms"][f"{kind.name} {name}"]


def test_the_fp16_atoms_the_chapter_prints(cutedsl):
    assert cutedsl["atoms"]["K_SW128 Float16"] == "S<3,4,3> o 0 o (8,64):(64,1)"
    assert cutedsl["atoms"]["K_SW64 Float16"] == "S<2,4,3> o 0 o (8,32):(32,1)"
    assert cutedsl["atoms"]["K_SW32 Float16"] == "S<1,4,3> o 0 o (8,16):(16,1)"
    assert cutedsl["atoms"]["MN_SW128 Float16"] == "S<3,4,3> o 0 o (64,8):(1,64)"


def test_the_checks_staged_layouts_and_swizzle_rule_are_cutedsls(cutedsl):
    cases = smem_cases()
    assert [ch08_hopper.reference_smem_layout(case) for case in cases] == cutedsl["smem"]
    rule = [f"{case['major']}_{ch08_hopper.swizzle_kind_for((case['k'] if case['major'] == 'K' else case['mn']) * ch08_hopper._width(case['dtype']) // 8)}"
            for case in cases]
    assert rule == cutedsl["kinds"]


def test_the_warpgroup_mma_is_cutedsls(cutedsl):
    for n in MMA_NS:
        op = warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, n, 16), warpgroup.OperandSource.SMEM,
                                    cute.nvgpu.OperandMajorMode.K, cute.nvgpu.OperandMajorMode.K)
        one = cute.make_tiled_mma(cute.make_mma_atom(op))
        two = cute.make_tiled_mma(cute.make_mma_atom(op), (2, 1, 1))
        C = cute.make_identity_tensor((128, n))
        mine = [str(op), str(one), str(two.tv_layout_C_tiled), str(two.tv_layout_A_tiled), str(two.thr_layout_vmnk)]
        mine += [str(two.get_slice(t).partition_C(C)) for t in (0, 37, 130)]
        assert mine == cutedsl["mma"][str(n)], n


@pytest.mark.parametrize("extra, message", [
    ((), r"missing 3 required positional arguments: 'a_src', 'a_major_mode', and 'b_major_mode'"),
    (("SMEM", cute.nvgpu.OperandMajorMode.K, cute.nvgpu.OperandMajorMode.K),
     r"expects the 'a_src' Op parameter to be a warpgroup.OperandSource instance"),
    ((warpgroup.OperandSource.SMEM, "K", cute.nvgpu.OperandMajorMode.K),
     r"expects the 'a_major_mode' Op parameter to be a cute.nvgpu.OperandMajorMode"),
])
def test_the_warpgroup_mma_takes_cutedsls_six_arguments(extra, message):
    """As CuTeDSL 4.8.1 (sm_90a, 2026-11-27): the A source and both major modes are required; three arguments
    raise the same TypeError, a wrong type the same message."""
    with pytest.raises((TypeError, Exception), match=message):
        warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 256, 16), *extra)


def test_a_staged_composed_layout_is_sliced_with_slice_not_called_with_none():
    """CuTeDSL 4.8.1 (sm_90a, 2026-11-27): `cute.slice_(sA, (None, None, 1))` prints
    S<3,4,3> o 0 o ((8,16),(64,1)):((64,512),(1,0)); `sA((None, None, 1))` returns 8192, an int (None read as 0),
    which cutekit refuses; the coordinate first, `cute.slice_(coord, layout)`, returns () there."""
    atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cute.Float16)
    staged = cute.tile_to_shape(atom, (128, 64, 4), order=(0, 1, 2))
    for stage in (0, 1):
        assert str(cute.slice_(staged, (None, None, stage))) == "S<3,4,3> o 0 o ((8,16),(64,1)):((64,512),(1,0))"
    with pytest.raises(cute.CuteError, match=r"does not slice it: CuTeDSL 4.8.1 returns the offset"):
        staged((None, None, 0))
    with pytest.raises(cute.CuteError, match=r"takes the layout or tensor first"):
        cute.slice_((None, None, 0), staged)
    assert str(cute.slice_(cute.make_layout((4, 8), stride=(8, 1)), (None, 1))) == "(4):(8)"
