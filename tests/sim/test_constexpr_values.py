"""cutlass.const_expr and cutlass.range_constexpr take compile-time values, as in CuTeDSL: a run-time value (the
thread's index, an element of a tensor, an Int32 argument, a `range` loop's counter, a value that differs between
threads or blocks) is refused at the learner's line with CuTeDSL 4.8.1's own message (`error[...]` as CuTeDSL
prints it compiling such a kernel for sm_80 on the CPU) and what made the value a run-time one; compile-time
values (Constexpr arguments, sizes of a thread's partition, constants) keep working."""
import importlib

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


def _run(kernels, case, launch="run", n=5):
    from cutlass.cute.runtime import from_dlpack
    kernels.CASE[0] = case
    out = numpy.zeros(64, numpy.float32)
    getattr(kernels, launch)(from_dlpack(X), from_dlpack(out), n)
    return out


def _refused(kernels, case, launch="run") -> KernelError:
    with pytest.raises(KernelError) as caught:
        _run(kernels, case, launch)
    return caught.value


@pytest.mark.parametrize("case, line, words", [
    ("thread_index", "if cutlass.const_expr(tidx == 0):",
     ["`tidx` (line ", "which comes from cute.arch.thread_idx()"]),
    ("tensor_element", "if cutlass.const_expr(first > 0):",
     ["`first` (line ", "which comes from `mX[0]`, an element a thread reads from a tensor"]),
    ("int32_argument", "if cutlass.const_expr(n > 3):", ["`n`, a run-time argument (annotated Int32)"]),
    ("range_loop_counter", "if cutlass.const_expr(k == 0):", ["`k`, the counter of the loop at line"]),
    ("lane_through_a_helper", "if cutlass.const_expr(flag):",
     ["differs at the same point of the kernel: True in thread (0, 0, 0) of block (0, 0, 0), False in thread "
      "(1, 0, 0)"]),
    ("block_through_a_helper", "if cutlass.const_expr(flag):",
     ["differs at the same point of the kernel: True in thread (0, 0, 0) of block (0, 0, 0), False in thread "
      "(0, 0, 0) of block (1, 0, 0)"]),
    ("range_counter_through_a_helper", "if cutlass.const_expr(flag):",
     ["differs at the same point of the kernel: True in an earlier pass of this thread, False in thread (0, 0, 0)"]),
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
