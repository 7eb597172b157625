"""The `cutedsl-cpu` tier: real CuTeDSL, run in a fresh subprocess with a time limit.

Two facts shape this module:
  * CuTeDSL compiles only functions whose source file it can read. So a learner's function (a notebook
    cell, which IPython keeps in `linecache`, or a file) is moved as *source*: `module_source(function)`
    writes it, and the globals it uses, into a real .py file that the worker imports. `cute` bound to
    `cutekit.cute` there becomes `cutlass.cute`: the learner's code meets the real library.
  * Host-side layout code is traced on the CPU; kernels compile for sm_80 without a GPU when
    CUTE_DSL_ARCH=sm_80, and CUTE_DSL_KEEP=ptx with CUTE_DSL_DUMP_DIR keeps the PTX for inspection.

  run_in_cutedsl(module, function, calls)   call `function(*args)` for each args inside a `cute.jit` trace
  trace_function(function, calls)           the same for a learner's function, moved by source
  compile_to_ptx(path, function, arguments) PTX text and opcode counts of a compiled function
"""
from __future__ import annotations

import base64
import enum
import inspect
import os
import pickle
import re
import subprocess
import sys
import tempfile
import textwrap
import types
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from . import _forkserver
from .verdict import failed, passed

# modules a learner's function may use under a cutekit name, and the real library that replaces them
REAL_MODULES = {"cutekit.cute": "cutlass.cute", "cutekit.cute.nvgpu": "cutlass.cute.nvgpu",
                "cutekit.cute.nvgpu.warpgroup": "cutlass.cute.nvgpu.warpgroup",
                "cutekit.cute.nvgpu.common_modes": "cutlass.cute.nvgpu",
                "cutekit.cute.nvgpu.tcgen05": "cutlass.cute.nvgpu.tcgen05",
                "cutekit.cute.nvgpu.tcgen05.mma": "cutlass.cute.nvgpu.tcgen05",
                "cutekit.cute.nvgpu.tcgen05.copy": "cutlass.cute.nvgpu.tcgen05", "cutekit.cute.utils": "cutlass.utils",
                "cutekit.cute.utils.blackwell_helpers": "cutlass.utils.blackwell_helpers",
                "cutekit.cute.memory": "cutlass.memory", "cutekit.cute.tensor_utils": "cutlass.tensor_utils"}


class NotMovable(Exception):
    """The learner's function cannot be rebuilt in a fresh process (no source, or a global that does not pickle)."""


def _names_used(code: types.CodeType) -> set:
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):  # nested functions, comprehensions, lambdas
            names |= _names_used(constant)
    return names


def module_source(function, _seen: set | None = None) -> str:
    """Python source of a module that defines `function` and every global it uses.

    Modules are imported by name (cutekit.cute as cutlass.cute), functions are copied as source,
    other values are pickled. Raises NotMovable saying what could not be moved.
    """
    seen = set() if _seen is None else _seen
    seen.add(function.__name__)
    if function.__name__ == "<lambda>":
        raise NotMovable("a lambda cannot be moved by source; write it as a def")
    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError) as error:
        raise NotMovable(f"the source of {function.__name__} cannot be read ({error}); define it in a notebook "
                         "cell or a .py file, not with exec()") from None
    lines = []
    for name in sorted(_names_used(function.__code__)):
        if name in seen or name not in function.__globals__:
            continue
        value = function.__globals__[name]
        home = getattr(value, "__module__", None) or ""
        if isinstance(value, types.ModuleType):
            real = REAL_MODULES.get(value.__name__, value.__name__)
            lines.append(f"import {real} as {name}")
        elif home.startswith(("cutekit.cute", "cutlass")) and hasattr(value, "__name__"):
            # `from cutekit.cute import make_layout`: the real library's function of the same name
            real = REAL_MODULES.get(home) or ("cutlass.cute" if home.startswith("cutekit") else home)
            lines.append(f"from {real} import {value.__name__} as {name}")
        elif isinstance(value, enum.Enum) and type(value).__module__.startswith("cutekit.cute"):
            # `K = OperandMajorMode.K`: the real library's member of the same name
            kind = type(value)
            real = REAL_MODULES.get(kind.__module__) or "cutlass.cute"
            lines.append(f"from {real} import {kind.__name__} as _{name}_kind\n{name} = _{name}_kind.{value.name}")
        elif isinstance(value, types.FunctionType):
            lines.append(module_source(value, seen))
        else:
            try:
                data = base64.b64encode(pickle.dumps(value)).decode()
            except Exception as error:
                raise NotMovable(f"the global {name!r} ({type(value).__name__}) cannot be moved: {error}") from None
            lines.append(f"{name} = __import__('pickle').loads(__import__('base64').b64decode({data!r}))")
    return "\n".join(lines + [source])


@dataclass(frozen=True)
class WorkerReply:
    ok: bool
    values: list = field(default_factory=list)     # one (value, error) pair per call
    error: str = ""
    ptx: str = ""


def run_worker(job: dict, timeout: float, environment: dict | None = None) -> WorkerReply:
    with tempfile.TemporaryDirectory(prefix="cutekit-check-") as folder:
        job_path, reply_path = Path(folder) / "job.pickle", Path(folder) / "reply.pickle"
        job_path.write_bytes(pickle.dumps(job))
        # CUTEKIT_REAL_CUTLASS: a learner's module that calls cutekit.use("auto") at import keeps real CuTeDSL here
        env = {**os.environ, "CUTE_DSL_ARCH": os.environ.get("CUTE_DSL_ARCH", "sm_80"), "CUTEKIT_REAL_CUTLASS": "1",
               **(environment or {})}
        env = {key: value for key, value in env.items() if value is not None}   # None: leave unset
        if _forkserver.usable(env):
            served = _forkserver.served(job_path, reply_path, env, timeout)
            if served is not None:
                finished, output = served
                if not finished:
                    return WorkerReply(False, error=f"CuTeDSL did not finish within {timeout:g} s")
                if not reply_path.exists():
                    tail = "\n".join(output.strip().splitlines()[-6:])
                    return WorkerReply(False, error=f"the CuTeDSL process ended without an answer:\n{tail}")
                return pickle.loads(reply_path.read_bytes())
        try:
            finished = subprocess.run([sys.executable, "-m", "cutekit.checks._worker", str(job_path), str(reply_path)],
                                      capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return WorkerReply(False, error=f"CuTeDSL did not finish within {timeout:g} s")
        if not reply_path.exists():
            tail = "\n".join((finished.stderr or finished.stdout).strip().splitlines()[-6:])
            return WorkerReply(False, error=f"the CuTeDSL process ended without an answer (exit {finished.returncode}):"
                                            f"\n{tail}")
        return pickle.loads(reply_path.read_bytes())


def run_in_cutedsl(module: str, function: str, calls: list, timeout: float = 120, with_cute: bool = False,
                   arch: str | None = None) -> WorkerReply:
    """Call `module.function(*args)` (with `cutlass.cute` first when `with_cute`) for each args in `calls`,
    inside one `cute.jit` trace in a fresh process; each value comes back as its `str`.

    `module` is a dotted name or a .py path; `arch` (say "sm_100a", for tcgen05 atoms) sets CUTE_DSL_ARCH for
    that process, else it is this one's (sm_80 when unset)."""
    return run_worker({"task": "trace", "module": module, "function": function, "calls": list(calls),
                        "with_cute": with_cute}, timeout, {"CUTE_DSL_ARCH": arch} if arch else None)


def trace_function(function, calls: list, timeout: float = 120) -> WorkerReply:
    """Run a learner's function under real CuTeDSL (moved by source, `cute` made `cutlass.cute`)."""
    try:
        source = module_source(function)
    except NotMovable as why:
        return WorkerReply(False, error=str(why))
    with tempfile.TemporaryDirectory(prefix="cutekit-answer-") as folder:
        path = Path(folder) / "learner_answer.py"
        path.write_text(source + "\n")
        return run_in_cutedsl(str(path), function.__name__, calls, timeout)


@dataclass(frozen=True)
class FakeTensor:
    """A shape-only tensor argument for compiling without a GPU: `rank` dynamic modes (the contiguous one a
    multiple of `divisibility`), or a static `shape`; row-major (the last mode contiguous)."""
    dtype: str = "Float32"
    rank: int = 2
    divisibility: int = 1
    shape: tuple | None = None


@dataclass(frozen=True)
class Dtype:
    """A cutlass numeric type passed as a compile-time argument, by name (`Dtype("Float16")`)."""
    name: str


def instruction_counts(ptx: str) -> Counter:
    """How often each PTX opcode (with its modifiers, predicate guard dropped) occurs."""
    return Counter(re.findall(r"^\s*(?:@!?%p\d+\s+)?([a-z][\w.]*)", ptx, flags=re.MULTILINE))


@dataclass(frozen=True)
class PtxReport:
    ok: bool
    ptx: str = ""
    counts: Counter = field(default_factory=Counter)
    error: str = ""
    available: bool = True           # False: CuTeDSL is not installed here (macOS has no wheels), not a failure

    def count(self, prefix: str) -> int:
        """Occurrences of opcodes starting with `prefix` (`ld.global.v4`, `cp.async`, `ldmatrix`, `mma.sync`)."""
        return sum(number for opcode, number in self.counts.items() if opcode.startswith(prefix))

    @property
    def local_memory(self) -> int:
        """Loads and stores to local memory: register spills or dynamically indexed per-thread arrays."""
        return self.count("ld.local") + self.count("st.local")


def compile_to_ptx(module_path: str, function_name: str, arguments: tuple = (), timeout: float = 300,
                   arch: str = "sm_80") -> PtxReport:
    """Compile `function_name` from the .py file `module_path` with `cute.compile(function, *arguments)` for
    `arch` in a subprocess (no GPU needed) and return its PTX and opcode counts.

    `arguments` may hold plain values (compile-time constants), `FakeTensor(...)` and `Dtype(...)`."""
    with tempfile.TemporaryDirectory(prefix="cutekit-ptx-") as dump:
        reply = run_worker({"task": "ptx", "module": str(module_path), "function": function_name,
                             "arguments": list(arguments)}, timeout,
                            {"CUTE_DSL_ARCH": arch, "CUTE_DSL_KEEP": "ptx", "CUTE_DSL_DUMP_DIR": dump})
    if not reply.ok:
        if "No module named 'cutlass'" in reply.error:
            from cutekit.backend import platform_name
            return PtxReport(False, error=f"no PTX on this machine: CuTeDSL (nvidia-cutlass-dsl) is not installed "
                                          f"({platform_name()}); where it is (Linux, Windows) this cell compiles the kernel and counts "
                                          f"its instructions", available=False)
        return PtxReport(False, error=reply.error)
    return PtxReport(True, reply.ptx, instruction_counts(reply.ptx))


@dataclass(frozen=True)
class AlgebraReply:
    """Real CuTeDSL's answers to layout-algebra calls: one printed result (or `ErrorType: message`) per call."""
    available: bool
    answers: list = field(default_factory=list)
    error: str = ""


def layout_algebra_in_cutedsl(calls: list, timeout: float = 120) -> AlgebraReply:
    """Ask real CuTeDSL, in a fresh process and inside one `@cute.jit` trace, for `cute.<name>(*arguments)` per
    call `(name, *arguments)`. A cutekit layout among the arguments (or inside a tuple of them, a tiler) is
    rebuilt with CuTeDSL's `make_layout`; a trailing dict holds keyword arguments. Each answer is what `print`
    shows, or `ErrorType: message` where CuTeDSL raised. Where CuTeDSL is not installed, `available` is False.

    >>> from cutekit import cute
    >>> reply = layout_algebra_in_cutedsl([("coalesce", cute.make_layout((2, 2), stride=(1, 2)))])
    >>> reply.answers if reply.available else ["4:1"]
    ['4:1']
    """
    reply = run_in_cutedsl("cutekit.checks.cutedsl", "_algebra_call", [tuple(call) for call in calls], timeout,
                           with_cute=True)
    if not reply.ok:
        if "No module named 'cutlass'" in reply.error:
            from cutekit.backend import platform_name
            return AlgebraReply(False, error=f"CuTeDSL (nvidia-cutlass-dsl) is not installed ({platform_name()}); "
                                             f"where it is (Linux, Windows) this cell prints its answers")
        return AlgebraReply(False, error=reply.error)
    return AlgebraReply(True, [value if error == "" else error for value, error in reply.values])


def _algebra_call(cute, name, *arguments):
    """Runs in the CuTeDSL worker, with `cute` = cutlass.cute: one call of `layout_algebra_in_cutedsl`."""
    from cutekit.cute import Layout

    def real(value):
        if isinstance(value, Layout):
            return cute.make_layout(value.shape, stride=value.stride)
        if isinstance(value, tuple) and any(isinstance(part, Layout) for part in value):
            return tuple(real(part) for part in value)
        return value
    keywords = arguments[-1] if arguments and isinstance(arguments[-1], dict) else {}
    positional = arguments[:-1] if keywords else arguments
    return getattr(cute, name)(*(real(argument) for argument in positional),
                               **{key: real(value) for key, value in keywords.items()})


def cutedsl_agrees(module: str, function: str, arguments, learner_text, case_text, multiline: bool = False):
    """A `cutedsl-cpu` criterion: real CuTeDSL, asked each case's question (`module.function(cute,
    *arguments(outcome))` in a fresh process), gives what the learner's answer gave (`learner_text(value)`).
    Cases where the learner's code raised are left to the reference criteria, which report them."""

    def judge(context):
        outcomes = [outcome for outcome in context.outcomes if not outcome.error]
        reply = run_in_cutedsl(module, function, [arguments(outcome) for outcome in outcomes], with_cute=True)
        if not reply.ok:
            return failed(f"CuTeDSL could not run this check: {reply.error}")
        for outcome, (value, error) in zip(outcomes, reply.values):
            theirs, yours = value or error, learner_text(outcome.value)
            if error or value != yours:
                if multiline:
                    return failed(f"{case_text(outcome.case)}: CuTeDSL prints\n{theirs}\nyours is\n{yours}")
                return failed(f"{case_text(outcome.case)}: CuTeDSL gives {theirs}, yours is {yours}")
        return passed()
    return judge


def answer_in_cutedsl(context, wrapper: str, entry: str, calls, compare, arch: str | None = None):
    """A cutedsl-cpu criterion's Verdict: the learner's function, moved by its source into a fresh CuTeDSL process
    with `wrapper` appended (its `{name}` the function's name; it defines `entry`), called once per case cutekit
    graded without an error (`calls(case)` gives the arguments); `compare(outcome, value, error)` gives a
    failing Verdict, or None where CuTeDSL agrees with what cutekit gave."""
    outcomes = [outcome for outcome in context.outcomes if not outcome.error]
    if not outcomes:
        return failed("your function raised on every case (see the other criteria)")
    try:
        source = module_source(context.answer)
    except NotMovable as why:
        reply = WorkerReply(False, error=str(why))
    else:
        with tempfile.TemporaryDirectory(prefix="cutekit-answer-") as folder:
            path = Path(folder) / "learner_answer.py"
            path.write_text(source + "\n\n" + wrapper.replace("{name}", context.answer.__name__) + "\n")
            reply = run_in_cutedsl(str(path), entry, [calls(o.case) for o in outcomes], arch=arch)
    if not reply.ok:
        return failed(f"CuTeDSL could not run your function: {reply.error[:600]}")
    for outcome, (value, error) in zip(outcomes, reply.values):
        verdict = compare(outcome, value, error)
        if verdict is not None:
            return verdict
    return passed()
