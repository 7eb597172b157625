"""What the chapters' checks share, so that no chapter borrows from another:

  case_text(case)                  a case as hints name it: `M=4, N=8` (keys starting with `_` stay hidden)
  first_error(outcomes)            the failed verdict of the first case whose answer raised, or None
  each_outcome(judge_one)          a criterion's judge: `first_error` first, then `judge_one(outcome)` case by case
  layout_difference(hint, ...)     a failed verdict carrying the data of a picture of the wrong offset
  describe_layout(layout)          a learner's layout as plain data (runs in the sandbox)
  column_major_coordinate(i, M)    the (m, n) of 1-D index i in an M-row grid or tile

CuTeDSL agreement (the `cutedsl-cpu` criteria):
  cutedsl_builds_same_layouts      real CuTeDSL, running the learner's own function, prints the layouts expected
  cutedsl_gives_the_same           real CuTeDSL, asked each case's question, gives the learner's answer

Kernel runs (a learner's `@cute.jit` host function and the kernels it calls):
  torch_ready()                    torch's thread pool set up before the sandbox forks
  on_simulator(host)               the host function rebuilt from its source on cutekit's simulator
  compile_notebook_kernel(host)    its PTX, compiled by real CuTeDSL for sm_80 (no GPU needed)
  compiled_kernel(answer, ...)     the same for a criterion: the report, or the failed verdict saying why not
"""
from __future__ import annotations

import functools
import importlib.util
import inspect
import sys
import tempfile
from pathlib import Path

from .cutedsl import FakeTensor, compile_to_ptx, cutedsl_agrees, trace_function
from .kernels import kernel_module_source, naming_what_is_not_carried, unwrap
from .verdict import Verdict, failed, passed

# the cutekit.cute functions that divide a layout; an exercise about dividing by hand switches them all off
DIVIDES = ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide")


# ---- cases, errors and hints ------------------------------------------------------------------------------------

def case_text(case: dict) -> str:
    return ", ".join(f"{key}={value}" for key, value in case.items() if not key.startswith("_"))


def first_error(outcomes) -> Verdict | None:
    """A failed verdict naming the first case whose answer raised, and its error; None when none did."""
    for outcome in outcomes:
        if outcome.error:
            return failed(f"{case_text(outcome.case)}: {outcome.error}")
    return None


def each_outcome(judge_one):
    """A criterion's judge made of `judge_one(outcome) -> Verdict | None`, which looks at one case: a case
    whose answer raised fails the criterion first (`first_error`); then each outcome in order, and the first
    verdict `judge_one` returns is the criterion's (None moves on to the next case); all pass: `passed()`."""
    @functools.wraps(judge_one)
    def judge(context) -> Verdict:
        problem = first_error(context.outcomes)
        if problem:
            return problem
        for outcome in context.outcomes:
            verdict = judge_one(outcome)
            if verdict is not None:
                return verdict
        return passed()
    return judge


def layout_difference(hint: str, got: str, coordinate: tuple, expected_offset: int, got_offset: int) -> Verdict:
    """A failed verdict whose figure shows the learner's layout `got` and the first coordinate it sends to
    the wrong offset (drawn by the renderer `set_figure_renderer` registers)."""
    return failed(hint, {"kind": "layout_difference", "got": got, "coordinate": coordinate,
                         "expected_offset": expected_offset, "got_offset": got_offset})


# ---- layouts as plain data (runs in the sandbox) -----------------------------------------------------------------

def describe_layout(layout) -> dict:
    """A learner's layout as plain data: its printed form, shape part, and offset of every 1-D index."""
    from cutekit import cute
    if not isinstance(layout, cute.Layout):
        raise TypeError(f"expected a layout made with cute.make_layout(...), got {type(layout).__name__}: {layout!r}")
    text = str(layout)
    return {"text": text, "shape": text.split(":", 1)[0], "size": cute.size(layout),
            "shape_tuple": layout.shape, "stride_tuple": layout.stride,
            "offsets": [layout(index) for index in range(cute.size(layout))]}


def column_major_coordinate(index: int, rows: int) -> tuple:
    """The (m, n) of 1-D index `index` in a grid or tile with `rows` rows: CuTe unfolds column-major, m fastest."""
    return index % rows, index // rows


# ---- CuTeDSL agreement (the cutedsl-cpu tier) --------------------------------------------------------------------

def cutedsl_builds_same_layouts(arguments, expected_text):
    """Criterion: real CuTeDSL, running the learner's own function on `arguments(case)`, prints the layout
    `expected_text(case)` for every case."""
    def judge(context) -> Verdict:
        cases = [outcome.case for outcome in context.outcomes]
        reply = trace_function(context.answer, [arguments(case) for case in cases])
        if not reply.ok:
            return failed(f"CuTeDSL could not run your function: {reply.error}")
        for case, (value, error) in zip(cases, reply.values):
            if error:
                return failed(f"{case_text(case)}: under CuTeDSL your function raised {error}")
            if value != expected_text(case):
                return failed(f"{case_text(case)}: under CuTeDSL your function built {value}, "
                              f"expected {expected_text(case)}")
        return passed()
    return judge


def cutedsl_gives_the_same(module: str, function: str, arguments, learner_text, multiline: bool = False):
    """Criterion: real CuTeDSL, asked each case's question (`module.function(cute, *arguments(case))` in a
    fresh process), gives what the learner's answer gave (`learner_text(value)`); hints name the case."""
    return cutedsl_agrees(module, function, lambda outcome: arguments(outcome.case), learner_text, case_text,
                          multiline=multiline)


# ---- running and compiling a learner's kernel ----------------------------------------------------------------------

def torch_ready() -> None:
    """One small torch operation in the parent, before the sandbox forks: torch's first operation in a forked
    child otherwise sets up its thread pool there, which takes seconds under pytest."""
    import torch
    torch.zeros(1).add_(1)


_rebuilt: dict = {}


def on_simulator(host):
    """`host` rebuilt from its source with cutekit's simulator as `cutlass` (cached per function), and the
    simulator's `from_dlpack`. Call it from a check's `ask`: it runs in the forked sandbox, so switching
    `cutlass` there touches nothing else."""
    name = inspect.unwrap(host).__name__
    if name in _rebuilt:
        return _rebuilt[name]
    source = kernel_module_source(host)
    import cutekit
    saved = {key: module for key, module in sys.modules.items() if key == "cutlass" or key.startswith("cutlass.")}
    for key in saved:
        del sys.modules[key]
    cutekit.use("sim")
    folder = tempfile.mkdtemp(prefix="cutekit-sim-")
    path = Path(folder) / f"learner_{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"learner_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _rebuilt[name] = (naming_what_is_not_carried(getattr(module, name)),
                      sys.modules["cutlass.cute.runtime"].from_dlpack)
    return _rebuilt[name]


def compile_notebook_kernel(host, *arguments, module: str = "notebook_kernel"):
    """PtxReport of `host` (a @cute.jit function and the kernels it calls, defined in a notebook or a file)
    compiled by real CuTeDSL for sm_80. A tuple argument is a FakeTensor (dtype, rank, divisibility).
    `module` names the file the source is compiled from (CuTeDSL's errors name it)."""
    source = kernel_module_source(host)
    fakes = tuple(FakeTensor(*value) if isinstance(value, tuple) else value for value in arguments)
    with tempfile.TemporaryDirectory(prefix="cutekit-kernel-") as folder:
        path = Path(folder) / f"{module}.py"
        path.write_text(source)
        return compile_to_ptx(str(path), unwrap(host).__name__, fakes)


def compiled_kernel(answer, *arguments, module: str = "notebook_kernel"):
    """For a `cutedsl-cpu` criterion: (PtxReport, None) of the learner's kernel compiled for sm_80 with
    `arguments` (as `compile_notebook_kernel` takes them), or (None, the failed verdict saying why not)."""
    try:
        report = compile_notebook_kernel(answer, *arguments, module=module)
    except (OSError, TypeError) as error:
        return None, failed(f"the kernel's source cannot be read ({error}); define it in a notebook cell or a .py file")
    if not report.ok:
        return None, failed(f"CuTeDSL could not compile your kernel for sm_80: {report.error[:600]}")
    return report, None
