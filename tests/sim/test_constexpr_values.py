"""cutlass.const_expr and cutlass.range_constexpr take compile-time values, as in CuTeDSL: a run-time value (the
thread's index, an element of a tensor, an Int32 argument, a `range` loop's counter, a value that differs between
threads or blocks) is refused at the learner's line with CuTeDSL 4.8.1's own message (`error[...]` as CuTeDSL
prints it compiling such a kernel for sm_80 on the CPU) and what made the value a run-time one; compile-time
values (Constexpr arguments, sizes of a thread's partition, constants) keep working."""
import importlib
import os
import re
import subprocess
import sys

import numpy
import pytest

import cutekit
from cutekit.sim import KernelError

CONST_EXPR = ("`const_expr()` requires a value known at code-read time, but you gave it a Runtime value (Staged "
              "value).")
RANGE_CONSTEXPR = "`range_constexpr()` requires all arguments to be Python integers known at code-read time."


@pytest.fixture(scope="module")
def kernels():
    with cutekit.using("sim", fresh=("tests.sim.constexpr_kernels",)):
        yield importlib.import_module("tests.sim.constexpr_kernels")


X = numpy.arange(64, dtype=numpy.float32) + 1


def _tensor(kind: str):
    """mX as from_dlpack makes it: static extents (plain, or with assumed_align), or run-time ones (marked
    dynamic whole, or its one extent marked compact-dynamic)."""
    from cutlass.cute.runtime import from_dlpack
    return {"static": lambda: from_dlpack(X), "aligned": lambda: from_dlpack(X, assumed_align=16),
            "dynamic": lambda: from_dlpack(X).mark_layout_dynamic(),
            "compact": lambda: from_dlpack(X).mark_compact_shape_dynamic(mode=0)}[kind]()


def _run(kernels, case, launch="run", n=5, tensor="static"):
    from cutlass.cute.runtime import from_dlpack
    kernels.CASE[0] = case
    out = numpy.zeros(64, numpy.float32)
    getattr(kernels, launch)(_tensor(tensor), from_dlpack(out), n)
    return out


def _refused(kernels, case, launch="run", tensor="static") -> KernelError:
    with pytest.raises(KernelError) as caught:
        _run(kernels, case, launch, tensor=tensor)
    return caught.value


@pytest.mark.parametrize("case, line, words", [
    ("thread_index", "if cutlass.const_expr(tidx == 0):",
     ["`tidx` (line ", "which comes from cute.arch.thread_idx()"]),
    ("tensor_element", "if cutlass.const_expr(first > 0):",
     ["`first` (line ", "which comes from `mX[0]`, an element a thread reads from a tensor"]),
    ("int32_argument", "if cutlass.const_expr(n > 3):", ["`n`, a run-time argument (annotated Int32)"]),
    ("range_loop_counter", "if cutlass.const_expr(k == 0):", ["`k`, the counter of the loop at line"]),
    ("lane_through_a_helper", "if cutlass.const_expr(flag):",
     ["`flag`, an argument of `keep_if` (constexpr_kernels.py, line ", "`keep_if(mOut, lane == 0, where)` passes "
      "it `lane == 0`, which depends on `lane` (line ", "which comes from cute.arch.lane_idx()"]),
    ("block_through_a_helper", "if cutlass.const_expr(flag):",
     ["`keep_if(mOut, bidx == 0, where)` passes it `bidx == 0`", "which comes from cute.arch.block_idx()"]),
    ("range_counter_through_a_helper", "if cutlass.const_expr(flag):",
     ["passes it `k == 0`, which depends on `k`, the counter of the loop at line "]),
    ("block_dim_through_a_helper", "if cutlass.const_expr(flag):",      # alike in every thread: told by the source
     ["passes it `bdim > 3`, which depends on `bdim` (line ", "which comes from cute.arch.block_dim()"]),
    ("lane_through_a_starred_call", "if cutlass.const_expr(flag):",     # the call unread: told by the values
     ["differs at the same point of the kernel: True in thread (0, 0, 0) of block (0, 0, 0), False in thread "
      "(1, 0, 0)"]),
])
def test_const_expr_of_a_run_time_value_is_refused_as_cutedsl_refuses_it(kernels, case, line, words):
    error = _refused(kernels, case)
    message = str(error)
    assert error.line == line and error.where.startswith("constexpr_kernels.py, line ")
    assert CONST_EXPR in message and "error[PHASE_REQUIRES_CONSTANT]" in message
    for word in words:
        assert word in message


def test_range_constexpr_of_an_int32_argument_is_refused_as_cutedsl_refuses_it(kernels):
    error = _refused(kernels, "range_constexpr_of_an_argument")
    message = str(error)
    assert error.line == "for k in cutlass.range_constexpr(n):"
    assert RANGE_CONSTEXPR in message and "error[ARG_NON_CONSTANT]" in message
    assert "Here `n` is a run-time value" in message and "Use `range(start, stop, step)` instead" in message


def test_const_expr_of_an_int32_argument_in_host_code_is_refused(kernels):
    message = str(_refused(kernels, "constexpr_argument", "host_decides"))
    assert CONST_EXPR in message
    assert "Here `n > 3` is a run-time value: it depends on `n`, a run-time argument" in message


def test_compile_time_values_keep_working(kernels):
    """A Constexpr argument, the size of a thread's partition (static, though its offset is the thread's), a
    range_constexpr over it, a helper given True and False from two lines, and i == 0 in each pass of an
    unrolled loop."""
    out = _run(kernels, "constexpr_argument")
    mine = X.reshape(2, 32).sum(axis=0)              # thread t's partition: elements t and t + 32
    assert out.tolist() == (numpy.tile(mine, 2) + 2).tolist()


TENSOR_CASES = {        # case -> its line; CuTeDSL 4.8.1 refuses each for a tensor marked dynamic, compiles it for a
    "size_of_a_tensor": "if cutlass.const_expr(cute.size(mX) > 3):",                # plain or aligned from_dlpack one
    "extent_of_a_tensor": "if cutlass.const_expr(mX.shape[0] > 3):",
    "mode_size_of_a_tensor": "if cutlass.const_expr(cute.size(mX, mode=[0]) > 3):",
    "ceil_div_of_an_extent": "if cutlass.const_expr(cute.ceil_div(mX.shape[0], 32) > 1):",
    "size_through_a_helper": "if cutlass.const_expr(flag):",
}


@pytest.mark.parametrize("case", TENSOR_CASES)
@pytest.mark.parametrize("tensor", ["dynamic", "compact"])
def test_const_expr_of_a_run_time_extent_is_refused(kernels, case, tensor):
    """A tensor's extents are run-time values once marked dynamic (`?` when traced): a comparison of one, of its
    size or of a ceil_div of it is a run-time Boolean, in the kernel or passed to a helper."""
    error = _refused(kernels, case, tensor=tensor)
    message = str(error)
    assert error.line == TENSOR_CASES[case] and CONST_EXPR in message, message
    assert "error[PHASE_REQUIRES_CONSTANT]" in message and "is a run-time value: it is Boolean(?), a comparison of " \
        "a run-time value" in message


@pytest.mark.parametrize("case", TENSOR_CASES)
@pytest.mark.parametrize("tensor", ["static", "aligned"])
def test_const_expr_of_a_static_extent_still_decides(kernels, case, tensor):
    """from_dlpack's extents are static unless marked dynamic (assumed_align changes nothing): CuTeDSL decides
    the same comparisons while tracing, and so does the simulator."""
    assert _run(kernels, case, tensor=tensor).tolist() == [1.0] * 64


@pytest.mark.skipif(os.environ.get("CUTEKIT_CUTEDSL_ORACLE") != "1",
                    reason="compiles with real CuTeDSL (about 3 s a case); set CUTEKIT_CUTEDSL_ORACLE=1")
@pytest.mark.parametrize("case, tensor, refused", [
    *[(case, tensor, tensor in ("dynamic", "compact")) for case in TENSOR_CASES
      for tensor in ("static", "aligned", "dynamic", "compact")],
    ("block_dim_through_a_helper", "static", True), ("lane_through_a_starred_call", "static", True),
    ("lane_through_a_helper", "static", True), ("constexpr_argument", "static", False)])
def test_cutedsl_refuses_and_compiles_the_same(case, tensor, refused):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, CUTE_DSL_ARCH="sm_80", NO_COLOR="1", PYTHONPATH=root)
    printed = re.sub(r"\x1b\[[0-9;]*m", "", subprocess.run(
        [sys.executable, os.path.join(root, "tests", "sim", "constexpr_kernels.py"), case, tensor],
        capture_output=True, text=True, env=env, timeout=120).stdout)
    if refused:
        assert "error[PHASE_REQUIRES_CONSTANT]: " + CONST_EXPR in printed, printed
    else:
        assert printed.strip().endswith("compiled"), printed
