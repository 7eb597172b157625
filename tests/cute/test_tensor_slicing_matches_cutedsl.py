"""Slicing a tensor with None (CuTe's underscore) keeps each None's whole sub-mode and lays the kept modes
side by side across the coordinate's nesting; identity tensors print as CuTeDSL prints them. Checked
against real CuTeDSL 4.8.1, traced on the CPU in a subprocess."""
import subprocess
import sys
import textwrap

import pytest

from cutekit import cute

CASES = [
    ((128, 32), (128, 16), ((None, None), (0, None))),
    ((128, 32), (128, 16), ((None, None), 1)),
    ((128, 32), (128, 16), ((None, 0), (0, None))),
    ((128, 32), (128, 16), (None, (0, 1))),
    ((128, 32), (128, 16), (None, (None, 1))),
    ((128, 32), (128, 16), ((None, None), (None, None))),
    ((128, 32), (128, 16), ((None, 0), (0, 1))),
    ((128, 32), (128, 16), ((0, 0), (None, 1))),
    ((12, 20), (4, 5), ((None, 3), (2, None))),
]


def ours(shape, tiler, coord):
    return str(cute.zipped_divide(cute.make_identity_tensor(shape), tiler)[coord])


def test_slices_of_a_divided_identity_tensor_print_as_in_cutedsl(tmp_path):
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    script = tmp_path / "slices.py"
    script.write_text(textwrap.dedent(f"""
        import cutlass, cutlass.cute as cute
        CASES = {CASES!r}

        @cute.jit
        def trace():
            for shape, tiler, coord in CASES:
                print(cute.zipped_divide(cute.make_identity_tensor(shape), tiler)[coord])

        trace()
    """))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    theirs = [line for line in result.stdout.splitlines() if line.startswith("tensor<")]
    assert theirs == [ours(*case) for case in CASES]


def test_a_single_none_keeps_its_mode_whole_and_the_result_is_rank_1():
    assert ours((128, 32), (128, 16), (None, (0, 1))) == "tensor<(0,16) o ((128,16)):((1@0,1@1))>"
    assert ours((128, 32), (128, 16), ((None, 0), (0, 1))) == "tensor<(0,16) o (128):(1@0)>"


def test_a_coordinate_that_does_not_match_the_shape_names_both():
    with pytest.raises(cute.CuteError, match=r"slice .* does not match shape"):
        cute.make_identity_tensor((4, 8))[(None, None, None)]
