"""Run-time values stay run-time values in the simulator, as in CuTeDSL 4.8.1 (compiled for sm_80 on the CPU):
control flow its rewrite of dynamic `if`/`for`/`while` refuses (a `return` or `raise` in an `if` not under
const_expr, a `break`/`continue`/`return` in a `range` or `while` loop, a loop's `else:`, a `break` in a run-time
`if` of an unrolled loop) is refused with CuTeDSL's message and the learner's line, the same exits decided at
compile time run, and Python's print in a kernel or @cute.jit function shows `?` where CuTeDSL's trace does.
The kernels are tests/sim/flow_kernels.py; their docstrings hold what CuTeDSL prints."""
import importlib
import os
import re
import subprocess
import sys

import numpy
import pytest

import cutekit
from cutekit.sim import KernelError

EARLY_EXIT = ("is not allowed in `{where}`. A staged for/while/if runs as a whole, so it cannot "
              "return/break/continue out early. (CuTeDSL 4.8.1 refuses to compile this: error[UNSUP_EARLY_EXIT].)")


@pytest.fixture(scope="module")
def flow():
    with cutekit.using("sim", fresh=("tests.sim.flow_kernels",)):
        yield importlib.import_module("tests.sim.flow_kernels")


def _launch(flow, name, out=None):
    from cutlass.cute.runtime import from_dlpack
    import cutlass
    out = numpy.zeros(32, numpy.float32) if out is None else out
    flow.launch(name, from_dlpack(out), cutlass.Int32(3), cutlass.Float32(1.5), cutlass.Boolean(True))
    return out


@pytest.mark.parametrize("name, first, line", [
    ("return_in_a_run_time_if", "Early exit (return) " + EARLY_EXIT.format(where="return_in_a_run_time_if"),
     "flow_kernels.py, line 17: `return`"),
    ("return_in_a_python_if", "Early exit (return) " + EARLY_EXIT.format(where="return_in_a_python_if"),
     "flow_kernels.py, line 26: `return`"),
    ("raise_in_a_run_time_if", "Early exit (raise) " + EARLY_EXIT.format(where="raise_in_a_run_time_if"),
     "flow_kernels.py, line 35: `raise ValueError(\"too many threads\")`"),
    ("break_in_a_range_loop", "Early exit (break) " + EARLY_EXIT.format(where="break_in_a_range_loop"),
     "flow_kernels.py, line 45: `break`"),
    ("continue_in_a_range_loop", "Early exit (continue) " + EARLY_EXIT.format(where="continue_in_a_range_loop"),
     "flow_kernels.py, line 55: `continue`"),
    ("break_in_a_while_loop", "Early exit (break) " + EARLY_EXIT.format(where="break_in_a_while_loop"),
     "flow_kernels.py, line 67: `break`"),
    ("else_of_a_range_loop", "A `for`/`while` loop with an `else:` clause is not supported in compiled code. "
     "(CuTeDSL 4.8.1 refuses to compile this: error[UNSUP_LOOP_ELSE].)", "flow_kernels.py, line 75: `for i in "
     "range(2):`"),
    ("break_in_a_run_time_if_of_an_unrolled_loop", "'break' outside loop (CuTeDSL 4.8.1 refuses to compile this "
     "with a SyntaxError", "flow_kernels.py, line 87: `break`"),
    ("return_in_a_device_helper", "Early exit (return) " + EARLY_EXIT.format(where="guarded_store"),
     "flow_kernels.py, line 94: `return`"),
])
def test_control_flow_cutedsl_refuses_is_refused_with_its_message_and_line(flow, name, first, line):
    out = numpy.zeros(32, numpy.float32)
    with pytest.raises(KernelError) as caught:
        _launch(flow, name, out)
    text = str(caught.value)
    assert first in text and f"At {line}." in text, text
    assert not out.any()        # refused before any thread stored


def test_exits_decided_at_compile_time_still_run(flow):
    out = _launch(flow, "compile_time_exits")
    assert out[:4].tolist() == [122.0, 122.0, 22.0, 22.0]


def test_print_shows_a_run_time_value_as_cutedsl_traces_it(flow, capsys):
    _launch(flow, "prints")
    printed = capsys.readouterr().out.splitlines()
    assert printed == ["host ? ? ? ?"] + flow.PRINTED


def test_a_helper_prints_its_parameter_as_its_caller_passed_it(flow, capsys):
    """A @cute.jit helper called from a kernel: a parameter given a thread's index, an Int32 argument, the block's
    size (the same in every thread, still a run-time value) or a helper's own run-time parameter prints `?`; one
    given a Constexpr, a static size or extent, or a literal prints its value, in print and in f-strings."""
    _launch(flow, "helper_prints")
    assert capsys.readouterr().out.splitlines() == ["host ? ? ? ?"] + flow.PRINTED_BY_HELPERS


@pytest.mark.skipif(os.environ.get("CUTEKIT_CUTEDSL_ORACLE") != "1",
                    reason="compiles with real CuTeDSL (about 10 s); set CUTEKIT_CUTEDSL_ORACLE=1")
def test_cutedsl_prints_and_refuses_the_same():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, CUTE_DSL_ARCH="sm_80", NO_COLOR="1", PYTHONPATH=root)

    def compiled(name):
        return re.sub(r"\x1b\[[0-9;]*m", "", subprocess.run(      # CuTeDSL colours its errors
            [sys.executable, os.path.join(root, "tests", "sim", "flow_kernels.py"), name],
            capture_output=True, text=True, env=env, timeout=120).stdout)
    assert compiled("prints").splitlines() == ["host ? ? ? ?"] + _printed() + ["compiled"]
    assert compiled("helper_prints").splitlines() == ["host ? ? ? ?"] + _printed("PRINTED_BY_HELPERS") + \
        ["compiled"]
    assert "error[UNSUP_EARLY_EXIT]: Early exit (return) is not allowed in `guarded_store`" in \
        compiled("return_in_a_device_helper")


def _printed(name="PRINTED"):
    import ast
    source = open(os.path.join(os.path.dirname(__file__), "flow_kernels.py")).read()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == name:
            return ast.literal_eval(node.value)
    return []
