"""Inside @cute.jit and @cute.kernel the simulator prints a value that CuTeDSL knows only at run time as CuTeDSL
4.8.1 prints it while tracing: `?` for an Int32 or Int64 argument and for a Python int passed without
cutlass.Constexpr, `?{i64}` for a 64-bit stride of a tensor marked mark_layout_dynamic, `?{div=16}` where the
algebra knows a divisor, and every layout and tensor built from them likewise; cute.printf shows the values.
tests/sim/dynamic_probe.py asks the same questions of either `cutlass`; the lines below are real CuTeDSL's,
printed by cute.compile on the CPU (the last test asks it again)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from . import dynamic_probe

ROOT = Path(__file__).resolve().parents[2]

# arguments(t, n: Int32, m: Int64, k, c: Constexpr, shape: cute.Shape, plain), t marked mark_layout_dynamic
WITH_A_DYNAMIC_TENSOR = [
    'args ? ? ? 3 (16, 8) (Int32(?), Int32(?))',
    '(2,(1,6)):(1,(?,2))',
    '((2,2),3):((?,2),?{i64})',
    '(2,?):(1,2) (?,4):(1,?) (?,2):(1,?)',
    '(?{i64},2):(1,?{i64}) (?,4):(4,1)',
    '?{div=4} ?{div=4} (Int32(?), 4) ? ?',
    '(?,4,?):(?{div=4},1,4)',
    'tensor<(0,0) o (?,4):(1@0,1@1)>',
    '((2,?),(4,2)):((1,2),(?,?{div=4}))',
    '(?,4):(1,?)',
    '(?,?):(?{i64},1) (Int32(?), Int32(?)) (Int64(?), 1)',
    '((4,8),(?,?)):((?{i64},1),(?{i64 div=4},8))',
    '(4,8,?):(?{i64},1,8)',
    '(?,?):(?{i64 div=2},4)',
    'tensor<(0,0) o (?,?):(1@0,1@1)>',
    '(?,?):(1,?)',
    'inner 5 6 7',
    'inner ? ? 7',
]
# the same function given a static tensor (from_dlpack without marking) and plain ints
WITH_A_STATIC_TENSOR = [
    'args ? ? ? 3 (16, 8) (Int32(?), Int32(?))',
    '(2,(1,6)):(1,(?,2))',
    '((2,2),3):((?,2),?{i64})',
    '(2,?):(1,2) (?,4):(1,?) (?,2):(1,?)',
    '(?{i64},2):(1,?{i64}) (?,4):(4,1)',
    '?{div=4} ?{div=4} (Int32(?), 4) ? ?',
    '(?,4,?):(?{div=4},1,4)',
    'tensor<(0,0) o (?,4):(1@0,1@1)>',
    '((2,?),(4,2)):((1,2),(?,?{div=4}))',
    '(?,4):(1,?)',
    '(16,128):(128,1) (16, 128) (128, 1)',
    '((4,8),(4,16)):((128,1),(512,8))',
    '(4,8,16):(128,1,8)',
    '(8,32):(256,4)',
    'tensor<(0,0) o (16,128):(1@0,1@1)>',
    '(?,?):(1,?)',
    'inner 5 6 7',
    'inner ? ? 7',
]
# from_dlpack(...).mark_compact_shape_dynamic / mark_layout_dynamic variants, their layouts
MARKED_TENSORS = [
    '(?{div=16},128):(128,1)',
    '(8,?{div=2},2):(?{i64 div=4},2,1)',
    '(?,?,?):(?,?,1)',
    '(?{div=4},?{div=2}):(?{i64 div=2},1)',
    '(?,?):(1,?{i64})',
    '(?,?):(?{i64},1)',
    '(?,?{div=4}):(?{i64 div=4},1)',
    '(16,?):(?{i64},1)',
]
# a kernel(t, n: Int32, c: Constexpr, plain) launched with t marked dynamic, n = Int32(6), c = 5, plain = 7
IN_A_KERNEL = [
    '? 5 ? (?,5):(1,?)',
    '(?,?):(?{i64},1) (4,8,?):(?{i64},1,8)',
    '? ? (Int32(?), Int32(?)) (Int64(?), 1)',
]
HOST = WITH_A_DYNAMIC_TENSOR + WITH_A_STATIC_TENSOR + MARKED_TENSORS


def test_print_shows_run_time_values_as_cutedsl_traces_them(sim):
    assert dynamic_probe.host_lines() == HOST


def test_a_kernel_prints_its_run_time_arguments_as_cutedsl_traces_them(sim):
    assert dynamic_probe.kernel_lines(lambda function, *args: function(*args)) == IN_A_KERNEL


def test_printf_shows_the_values_and_the_values_compute(sim, capsys):
    import cutlass
    import cutlass.cute as cute
    seen = {}

    @cute.jit
    def show(n: cutlass.Int32):
        layout = cute.make_layout((2, n))
        seen["print"] = str(layout)
        seen["values"] = [layout((1, 5)), int(cute.size(layout)), int(n * 3)]
        cute.printf("{} {} {}", layout, n, cute.size(layout))

    show(cutlass.Int32(6))
    # CuTeDSL 4.8.1 prints the same line when the compiled function runs on the host (no GPU needed)
    assert capsys.readouterr().out.splitlines()[-1] == "(2,6):(1,2) 6 12"
    assert seen == {"print": "(2,?):(1,2)", "values": [11, 12, 18]}


def test_a_jit_function_called_from_another_takes_its_arguments_as_they_are(sim):
    assert [line for line in HOST if line.startswith("inner")] == ["inner 5 6 7", "inner ? ? 7"] * 2


@pytest.mark.cutedsl
def test_the_pinned_lines_are_what_cutedsl_prints():
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    env = dict(os.environ, PYTHONPATH=str(ROOT), CUTE_DSL_ARCH="sm_80")
    run = subprocess.run([sys.executable, "-m", "tests.sim.dynamic_probe"], capture_output=True, text=True,
                         cwd=ROOT, env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    real = json.loads(run.stdout.strip().splitlines()[-1])
    assert real == {"host": HOST, "kernel": IN_A_KERNEL}
