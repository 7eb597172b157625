"""When the simulator prints: at trace time or at run time, as CuTeDSL does.

CuTeDSL runs the Python of a `@cute.jit` function (and of the kernels it launches) once, to trace it; what
Python's `print` shows comes then, and a kernel's print comes once, not once per thread. `cute.printf` and
`cute.print_tensor` print when the compiled code runs, after the trace. The simulator runs the Python once
too, so it keeps the two kinds of output apart:

- a direct `@cute.jit` call traces and runs: Python's prints appear as they are met, and what the run prints
  (printf, print_tensor, from the host or from kernels) is held and printed when the call returns;
- `cute.compile(f, ...)` traces only: the host function runs with its prints, printf prints nothing and no
  kernel is launched;
- calling what `cute.compile` returned runs only: the host's prints are silent, printf prints, and the kernels'
  prints appear at the first call (the simulator traced no kernel while compiling);
- inside a kernel, Python's print is the trace's: the launch's first thread prints, and another thread prints
  only a line (of code) that no thread of the launch printed before.

>>> with jit_call("call"):
...     emit("printed when the call returns")
...     print("printed now")
printed now
printed when the call returns
"""
from __future__ import annotations

import builtins
import contextlib
import sys

from . import threads

_PRINT = builtins.print
VECTOR_PRINT: list = [None]    # Python's print in a launch run as vectors (memory/vector.py sets it)


class _State:
    mode = None             # None (plain Python), "call" (trace and run), "trace" (cute.compile), "run" (compiled)
    held: list = []         # run-time output of the current call, printed when it returns
    kernel_prints = True    # whether kernels' Python prints are shown (not on a compiled function's later calls)


_STATE = _State()


def mode():
    """The outermost @cute.jit call's kind: None, "call", "trace" or "run"."""
    return _STATE.mode


def tracing_only() -> bool:
    """True inside cute.compile: host code runs, kernels are not launched."""
    return _STATE.mode == "trace"


@contextlib.contextmanager
def jit_call(kind: str, kernel_prints: bool = True):
    """The outermost @cute.jit call (`kind` "call"), cute.compile ("trace") or compiled call ("run"); a call
    nested in another is part of it."""
    if _STATE.mode is not None:
        yield
        return
    _STATE.mode, _STATE.held, _STATE.kernel_prints = kind, [], kernel_prints
    builtins.print = _trace_print
    try:
        yield
    finally:
        builtins.print = _PRINT
        held, _STATE.mode, _STATE.held = _STATE.held, None, []
        if held:
            sys.stdout.write("".join(held))
            sys.stdout.flush()


def emit(text: str):
    """Run-time output (cute.printf, cute.print_tensor): now outside @cute.jit, held until the call returns
    inside one, nothing while cute.compile traces."""
    kind = _STATE.mode
    if kind is None:
        _PRINT(text)
    elif kind != "trace":
        _STATE.held.append(text + "\n")


def _trace_print(*args, **kwargs):
    """Python's print inside @cute.jit: the trace's output (see the module's docstring)."""
    stream = kwargs.get("file")
    if stream is not None and stream is not sys.stdout:
        return _PRINT(*args, **kwargs)
    thread = threads.current()
    if thread is None:
        if _STATE.mode != "run":
            _PRINT(*_constexpr().trace_args(args, sys._getframe(1)), **kwargs)
        return
    if not _STATE.kernel_prints:
        return
    if getattr(thread, "vectorized", False):        # a launch run as vectors (memory/vector.py)
        frame = sys._getframe(1)
        return VECTOR_PRINT[0](_constexpr().trace_args(args, frame), kwargs,
                               (frame.f_code.co_filename, frame.f_lineno))
    launch = thread.block.launch
    printed = launch.__dict__.get("_traced_lines")
    if printed is None:
        printed = launch.__dict__["_traced_lines"] = set()
    frame = sys._getframe(1)
    line = (frame.f_code.co_filename, frame.f_lineno)
    if thread.linear == 0 and not any(thread.block_idx):
        if line in printed and _constexpr().traced_once(frame):
            return          # a `range` loop's body is traced once
        printed.add(line)
    elif line in printed:
        return
    else:
        printed.add(line)
    _PRINT(*_constexpr().trace_args(args, frame), **kwargs)


# The face's source analysis (cutekit/sim/constexpr.py) puts itself here when it is imported: what a print
# shows of run-time values (`trace_args`) and whether a line is in a loop traced once (`traced_once`). A floor
# below the face does not import it; without it a print shows the values as Python has them.
SOURCE_ANALYSIS: list = []


class _NoAnalysis:
    @staticmethod
    def trace_args(args, frame):
        return args

    @staticmethod
    def traced_once(frame):
        return False


def _constexpr():
    return SOURCE_ANALYSIS[0] if SOURCE_ANALYSIS else _NoAnalysis
