"""Hand-picked cases the random property tests rarely draw (size-1 tiles, the seeds' worked examples),
printed by cutekit and by real CuTeDSL 4.8.1 traced on the CPU in a subprocess: string for string."""
import subprocess
import sys

import pytest

from cutekit import cute

# (expression over `cute`, as text): evaluated by both libraries
CASES = [
    "cute.zipped_divide(cute.make_layout((64, 32), stride=(32, 1)), (1, 32))",
    "cute.logical_divide(cute.make_layout((64, 32), stride=(32, 1)), (1, 32))",
    "cute.logical_divide(cute.make_layout(64, stride=32), 1)",
    "cute.zipped_divide(cute.make_layout((8, 8)), (1, 4))",
    # tuple entries in a tiler divide a mode's sub-modes one by one (None leaves a rank-2 mode as (tile, rest))
    "cute.zipped_divide(cute.make_layout((8, (4, 6))), (4, (2, 3)))",
    "cute.tiled_divide(cute.make_layout((8, (4, 6))), (4, (2, 3)))",
    "cute.flat_divide(cute.make_layout((8, (4, 6))), (4, (2, 3)))",
    "cute.zipped_divide(cute.make_layout(((4, 2), (4, 6))), (None, (2, 3)))",
    "cute.zipped_divide(cute.make_layout(((4, 8), ((2, 2), (2, 2)))), (None, (2, 2)))",
    # chapter 07's thrfrg_C step 4: the rest mode of ((ThrV,FrgV),(RestM,RestN)) handed to 2x2 warps in one call
    "cute.zipped_divide(cute.make_layout((((4, 8), (2, 2)), (2, 4)), stride=(((64, 1), (32, 8)), (16, 256))), (None, (2, 2)))",
    # identity tensors of hierarchical shapes hold hierarchical coordinates
    "cute.make_identity_tensor(((4, 2), 8))",
    "cute.make_identity_tensor(((4, 2), 8))[5, 3]",
    "cute.make_identity_tensor(((4, (2, 3)), (5, 6)))[(None, (None, None)), (0, None)]",
    "cute.make_identity_tensor(((4, (2, 3)), (5, 6)))[(None, (1, None)), (None, None)]",
    "cute.make_identity_tensor(((4, (2, 3)), (5, 6)))[(1, (None, None)), None]",
    # a trailing size-1 mode keeps its stride when a composition reaches past it (a 1-row tensor's edge tile)
    "cute.composition(cute.make_layout(1, stride=5), cute.make_layout(2))",
    "cute.composition(cute.make_layout((2, 1), stride=(5, 7)), cute.make_layout(4))",
    "cute.composition(cute.make_layout((4, 1), stride=(1, 0)), cute.make_layout(8))",
    "cute.composition(cute.make_layout((3, 1), stride=(1, 3)), cute.make_layout(6))",
    "cute.zipped_divide(cute.make_identity_tensor((1, 15)), (2, 16))",
    "cute.zipped_divide(cute.make_identity_tensor((1, 15)), (2, 16))[((None, None), 0)][1, 0]",
    # seed 000: the elementwise-add tiling of a (256, 512) fp32 tensor
    "cute.zipped_divide(cute.make_layout((256, 512), stride=(512, 1)), (16, 128))",
    "cute.make_layout_tv(cute.make_ordered_layout((4, 32), order=(1, 0)), cute.make_ordered_layout((4, 4), order=(1, 0)))",
    "cute.make_layout_tv(cute.make_ordered_layout((4, 32), order=(1, 0)), cute.make_ordered_layout((4, 8), order=(1, 0)))",
    # seed 001: a TV layout and its composition
    "cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4)))",
    # seed 003: the swizzled shared-memory atom tiled to (128, 64)
    "cute.tile_to_shape(cute.make_composed_layout(cute.make_swizzle(3, 3, 3), 0, cute.make_layout((8, 64), stride=(64, 1))), (128, 64), (0, 1))",
    # the five the conformance suite found first: CuTeDSL's printed form and its rules win
    "cute.tiled_product(cute.make_layout(((2, 2),), stride=((2, 1),)), cute.make_layout((8,), stride=(1,)))",
    "cute.blocked_product(cute.make_layout(6, stride=1), cute.make_layout((8,), stride=(1,)))",
    "cute.tiled_divide(cute.make_layout(((2, 2), (2, 2, 2)), stride=((1, 2), (4, 8, 16))), cute.make_layout(2, stride=2))",
    "cute.complement(cute.make_layout(((2, 4), 2), stride=((1, 3), 32)), 256)",
    "cute.composition(cute.make_layout(((2, 8, 4),), stride=((4, 8, 1),)), cute.make_layout(((4, 2), 2, 2), stride=((4, 3), 16, 4)))",
    # a stride smaller than the mode it starts in, and the coalesced result CuTeDSL prints
    "cute.composition(cute.make_layout((5, 4), stride=(8, 64)), cute.make_layout(4, stride=4))",
    "cute.composition(cute.make_layout((5, 6, 4, 2), stride=(4, 24, 8, 5)), cute.make_layout(144, stride=2))",
    # a tiler tuple drops the modes it does not reach; an int tile is make_layout(n), so 1 is 1:0
    "cute.composition(cute.make_layout((4, 8, 2)), (2, 4))",
    "cute.composition(cute.make_layout((2, 2), stride=(2, 1)), 1)",
    # the divide of chapter 03 (the CuTe documentation's example)
    "cute.logical_divide(cute.make_layout((9, (4, 8)), stride=(59, (13, 1))), (cute.make_layout(3, stride=3), cute.make_layout((2, 4), stride=(1, 8))))",
]


def test_hand_cases_print_as_in_cutedsl(tmp_path):
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    script = tmp_path / "hand_cases.py"
    lines = "\n".join(f"    print('CASE', {case})" for case in CASES)
    script.write_text("import cutlass, cutlass.cute as cute\n\n@cute.jit\ndef trace():\n" + lines + "\n\ntrace()\n")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    theirs = [line[5:] for line in result.stdout.splitlines() if line.startswith("CASE ")]
    ours = [str(eval(case, {"cute": cute})) for case in CASES]
    assert [(case, mine) for case, mine in zip(CASES, ours)] == [(case, t) for case, t in zip(CASES, theirs)]


def test_zipping_a_mode_its_tiler_left_undivided_is_refused_as_cutedsl_refuses_it():
    with pytest.raises(cute.CuteError, match=r"not divided into \(tile, rest\)"):
        cute.zipped_divide(cute.make_layout((8, 12)), (None, 4))


@pytest.mark.parametrize("call, rule", [
    ("cute.zipped_divide(cute.make_layout(16), 4)", "int tiler"),
    ("cute.zipped_product(cute.make_layout(4), (2,))", "only a Layout"),
    ("cute.logical_divide(cute.make_layout(16), cute.make_layout((2, 2), stride=(1, 1)))", "not injective"),
    ("cute.composition(cute.make_layout((2, 3), stride=(1, 8)), cute.make_layout(3, stride=3))", "divisibility"),
    ("cute.left_inverse(cute.make_layout((2, 2), stride=(2, 3)))", "divisibility"),
    ("cute.raked_product(cute.make_layout(3), cute.make_layout((3,), stride=(3,)))", "ranks"),
    ("cute.rank(cute.make_layout((4, 8)), mode=[0, 0])", "does not exist"),
])
def test_what_cutedsl_refuses_is_refused_with_the_rule_named(call, rule):
    with pytest.raises(cute.CuteError, match=rule):
        eval(call, {"cute": cute})
