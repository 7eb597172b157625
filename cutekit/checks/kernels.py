"""Grading a learner's kernel: on the simulator (reference tier) and on a real GPU (gpu tier).

A learner's kernel is a `@cute.jit` host function plus the `@cute.kernel`s and helpers it calls, written in
a notebook cell. Both tiers move it by *source* (`kernel_module_source`) into a real .py file and import it
fresh, so it binds to the `cutlass` of the tier, whatever `cutekit.use(...)` chose in the notebook:

  simulate(host, harness, case)   inside the check's forked sandbox: `cutekit.use("sim")`, import, run
                                  `harness(host, case)` (the sandbox keeps CUDA out of the fork)
  on_gpu(host, harness, cases)    a fresh subprocess with real CuTeDSL on the GPU; a kernel that faults
                                  (illegal address) or hangs ends that process, not the notebook

A harness is a plain function `harness(host, case) -> dict` in a cutekit module: it builds the tensors,
runs the learner's host function, compares with torch and, on a GPU, times both.
"""
from __future__ import annotations

import importlib.util
import inspect
import linecache
import sys
import tempfile
import textwrap
import types
import uuid
from pathlib import Path

from .cutedsl import WorkerReply, run_worker


def unwrap(function):
    """The plain function under a decorator's wrapper (`__wrapped__`, `.func` or `.function`)."""
    while True:
        inner = getattr(function, "__wrapped__", None) or getattr(function, "func", None) \
            or getattr(function, "function", None)
        if inner is None or inner is function or not callable(inner):
            return function
        function = inner


_SOURCES: dict = {}     # id(code object) -> (code, its source with decorators), asked again for every check


def _source_with_decorators(function) -> str:
    """The function's source from its first decorator line. Once real CuTeDSL has compiled a function, the
    object its name refers to reports source starting at `def` (its decorators gone), so the decorator lines
    just above it in the same file (or notebook cell) are put back. Kept per code object: running a cell again
    makes a new one, so an edited function is read afresh, and reading the source (tokenizing the file) is the
    dearest part of asking whether an answer was attempted."""
    return _located_source(function)[0]


def _located_source(function) -> tuple:
    """(`_source_with_decorators(function)`, the line of the file or cell where that source starts)."""
    code = getattr(function, "__code__", None)
    kept = _SOURCES.get(id(code))
    if kept is not None and kept[0] is code:    # the same object, not an equal one (equal code may differ in
        return kept[1], kept[2]                 # its comments, and the placeholder is a comment)
    source, first = _read_source_with_decorators(function)
    if code is not None:
        if len(_SOURCES) >= 4096:
            _SOURCES.clear()
        _SOURCES[id(code)] = (code, source, first)     # the code object kept alive, so its id is not reused
    return source, first


def _read_source_with_decorators(function) -> tuple:
    lines, first = inspect.getsourcelines(function)
    if lines and lines[0].lstrip().startswith("@"):
        return "".join(lines), first
    above = linecache.getlines(function.__code__.co_filename)[:max(first - 1, 0)]
    decorators = []
    for line in reversed(above):
        if not line.lstrip().startswith("@"):
            break
        decorators.insert(0, line)
    return "".join(decorators + lines), first - len(decorators)


def kernel_module_source(host) -> str:
    """A module holding the learner's host function and every kernel or function it calls, as source
    (`import cutlass` / `import cutlass.cute as cute` at the top, the other `cutlass` modules it names
    imported under its names, e.g. `import cutlass.cute.nvgpu.warpgroup as warpgroup`, plain constants
    copied)."""
    header, pieces = kernel_module_parts(host)
    return header + "\n\n".join(source for source, _, _ in pieces)


def kernel_module_parts(host) -> tuple:
    """`kernel_module_source` in parts: (the imports and constants, [(a function's source, the file or cell it
    comes from, the line there where it starts)])."""
    pieces, constants, seen, modules = [], [], set(), []

    def add(function):
        function = unwrap(function)
        if not inspect.isfunction(function) or function.__name__ in seen:
            return
        seen.add(function.__name__)
        closure = dict(zip(function.__code__.co_freevars,
                           (cell.cell_contents for cell in (function.__closure__ or ()))))
        for name in sorted(set(function.__code__.co_names) | set(closure)):
            value = closure[name] if name in closure else function.__globals__.get(name)
            if value is None or name in seen:
                continue
            if callable(value) and not inspect.isclass(value) and not inspect.ismodule(value) \
                    and getattr(unwrap(value), "__module__", "") not in ("", None) \
                    and not getattr(unwrap(value), "__module__", "").startswith(("cutlass", "cutekit", "torch", "numpy")):
                add(value)
            elif inspect.ismodule(value) and value.__name__.startswith("cutlass.") and name != "cute":
                seen.add(name)
                modules.append(f"import {value.__name__} as {name}")
            elif isinstance(value, (int, float, bool, str, tuple)) and not name.startswith("__"):
                seen.add(name)
                constants.append(f"{name} = {value!r}")
        source, first = _located_source(function)
        pieces.append((textwrap.dedent(source), function.__code__.co_filename, first))
    add(host)
    return "\n".join(["import cutlass", "import cutlass.cute as cute"] + modules + [""] + constants + ["", ""]), pieces


def _import_located(header: str, pieces: list, path: Path):
    """The module of `kernel_module_parts`, each function compiled under its own file (a .py file or a notebook
    cell) and line numbers: what the simulator says of a line names the learner's file and line, and shows its
    text. `path` holds the whole module's source too (what a traceback falls back to)."""
    import ast
    name = f"learner_kernel_{uuid.uuid4().hex[:8]}"
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    exec(compile(header, str(path), "exec"), module.__dict__)
    for source, filename, first in pieces:
        tree = ast.parse(source)
        ast.increment_lineno(tree, first - 1)
        exec(compile(tree, filename, "exec"), module.__dict__)
    return module


def _import_file(path: Path):
    name = f"learner_kernel_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def simulate(host, harness, case):
    """Run `harness(host, case)` with the learner's kernel re-imported on cutekit's simulator. Call it from
    a check's `ask` (it runs in the forked sandbox, so switching `cutlass` there touches nothing else)."""
    import cutekit
    header, pieces = kernel_module_parts(host)
    source = header + "\n\n".join(piece for piece, _, _ in pieces)
    cutekit.use("sim")
    folder = tempfile.mkdtemp(prefix="cutekit-kernel-")
    path = Path(folder) / "learner_kernel.py"
    path.write_text(source)
    try:
        # each function under its own file and lines: the messages name the learner's file (or cell) and line
        module = _import_located(header, pieces, path)
    except (SyntaxError, ValueError, OSError):
        module = _import_file(path)
    return harness(getattr(module, unwrap(host).__name__), case)


def on_gpu(host, harness: str, cases: list, timeout: float = 300) -> WorkerReply:
    """Run `harness(host, case)` for each case in a fresh process with real CuTeDSL on the GPU; `harness`
    is "module:function". One (value, error) pair per case comes back."""
    try:
        source = kernel_module_source(host)
    except (OSError, TypeError) as error:
        return WorkerReply(False, error=f"the kernel's source cannot be read ({error}); define it in a notebook "
                                        "cell or a .py file")
    with tempfile.TemporaryDirectory(prefix="cutekit-gpu-") as folder:
        path = Path(folder) / "learner_kernel.py"
        path.write_text(source)
        return run_worker({"task": "harness", "module": str(path), "function": unwrap(host).__name__,
                            "harness": harness, "cases": list(cases)}, timeout,
                           environment={"CUTE_DSL_ARCH": None})   # the GPU it finds


def gpu_median_ms(launch, warmup: int = 3, repeats: int = 20) -> float:
    """For harnesses on the GPU: the median time of `launch()` in ms, CUDA events around each launch after
    `warmup` launches (the learner's kernel and torch's op are timed alike)."""
    import statistics

    import torch
    for _ in range(warmup):
        launch()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        launch()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def use_the_simulator(answer):
    """Make `import cutlass` the simulator in this (forked, throw-away) process, and point the answer's own
    `cutlass` / `cute` names at it too (on a GPU machine the notebook imported the real package)."""
    import importlib

    import cutekit
    cutekit.use("sim")
    namespace = getattr(answer, "__globals__", {})
    for key, value in list(namespace.items()):
        name = getattr(value, "__name__", "")
        if isinstance(value, types.ModuleType) and (name == "cutlass" or name.startswith("cutlass.")):
            if not getattr(value, "__cutekit_sim__", False):
                namespace[key] = importlib.import_module(name)


def decorated_with_jit(function):
    """`function` loaded again from a copy of its module file in which its `def` carries `@cute.jit`
    (as it is, if the learner decorated it already)."""
    import importlib.util
    source_file = Path(inspect.getsourcefile(inspect.unwrap(function)))
    lines = source_file.read_text().splitlines(keepends=True)
    first = inspect.unwrap(function).__code__.co_firstlineno - 1
    header = []
    for line in lines[first:]:
        header.append(line)
        if line.lstrip().startswith(("def ", "async def ")):
            break
    if any(line.lstrip().startswith("@") and "jit" in line for line in header):
        return function
    lines.insert(first, "@cute.jit\n")
    folder = Path(tempfile.mkdtemp(prefix="cutekit-jit-"))
    path = folder / f"jit_{source_file.name}"
    path.write_text("".join(lines))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, function.__name__)
