"""Run chapters' code cells with real CuTeDSL 4.8.1 on the CPU, warnings as errors, and write down what it says.

    python -m tests.chapters.in_cutedsl --arch sm_80 --out result.json 01_layouts 04_local_tile_partition ...

One process per target architecture (CuTeDSL reads CUTE_DSL_ARCH once). For each chapter, in order:

1. Its code cells run top to bottom, statement by statement, in one namespace, in `solutions/` as a notebook
   does, with `cutlass` the real CuTeDSL (`cutekit.use` chooses nothing). Nothing runs on a GPU:
   * every call of a `@cute.jit` function from a cell is compiled instead (`cute.compile` with the same
     arguments, warnings as errors), and so is every `cute.compile`, `compile_to_ptx` and
     `compile_notebook_kernel` call (in this process, not a subprocess); a check call whose answer is a
     `@cute.jit` function compiles it with the arguments its check compiles it with (EXERCISE_ARGUMENTS);
   * since kernels do not run, an `assert` that fails is written down and the cell goes on, and a statement
     that raises is written down and the next statement runs;
   * pictures, widgets, checks, the simulator and the tier probes are stubs (they are tested elsewhere).
2. While the cells run, every call they make to `cutekit.cute` is recorded (cutekit/cute/recording.py).
3. The recorded calls are made again, in order, with CuTeDSL's `cutlass.cute` inside one `@cute.jit` trace,
   warnings as errors: each argument is the CuTeDSL object an earlier replayed call returned where the
   cutekit object came from a recorded call, else built from its printed form (a layout from its shape and
   stride, a swizzle from its bits, an atom's operation from its fields). Each result is printed and
   compared with what cutekit printed.

The JSON written has, per chapter: "calls" (name, where, arguments as printed, cutekit's and CuTeDSL's
result, and a status: "same", "differs", "both raise", "skipped"), "compiles" (function, how it was asked
for, arguments, ok, error, seconds), "statements" (statements that raised), "asserts" (asserts that failed)
and "seconds".
"""
import argparse
import ast
import contextlib
import dataclasses
import enum
import functools
import inspect
import io
import json
import os
import re
import sys
import tempfile
import time
import traceback
import types
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*m")

# The arguments a kernel exercise's check compiles the learner's @cute.jit function with (its cutedsl-cpu
# criterion: FakeTensor (dtype, rank, divisibility) tuples and compile-time constants).
EXERCISE_ARGUMENTS = {
    "ch04.add_with_tails": (("Float32", 2, 1),) * 3,
    "ch05.tiled_copy_row_sum": (("Float32", 2, 4), ("Float32", 1, 1), 4),
    "ch05.sum_dim0": (("Float32", 2, 4), ("Float32", 1, 4)),
    "ch06.s2r_k_block": (("Float16", 2, 8), ("Float16", 2, 8), 1),
    "ch05.capstone_softmax": (("Float32", 2, 4), ("Float32", 2, 4), 4),
    "ch07.capstone_gemm": (("Float16", 2, 8), ("Float16", 2, 8), ("Float32", 2, 4), 1.5, 0.5),
    "ch08.capstone": (("Float16", 2, 8), ("Float16", 2, 8), ("Float32", 1, 8), ("Float16", 2, 8)),
    "ch09.capstone": (("Float16", 2, 8), ("Float16", 2, 8), ("Float32", 1, 8), ("Float16", 2, 8)),
}
MAX_COMPILES_PER_FUNCTION = 3        # distinct argument types compiled per @cute.jit function called by a cell


CUTLASS_MODULES = ("utils", "memory", "tensor_utils")     # cutekit.cute.X mirrors cutlass.X, not cutlass.cute.X


def self_arch_has_tcgen05() -> bool:
    """CuTeDSL builds tcgen05 operations only when it compiles for datacenter Blackwell (sm_100a, sm_103a, ...)."""
    return os.environ.get("CUTE_DSL_ARCH", "").startswith(("sm_100", "sm_103", "sm_110"))


def short(error: BaseException, limit: int = 1500) -> str:
    text = ANSI.sub("", str(error)).strip()
    return f"{type(error).__name__}: {text[:limit]}"


class Anything:
    """A stub module: every attribute is a function that accepts anything and returns None."""

    def __init__(self, name):
        self.__name__ = name

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: None


class NotRun(Exception):
    """What a stubbed helper raises: the chapter's run in CuTeDSL does not run the simulator."""


# ---- one chapter's run ------------------------------------------------------------------------------------------

class Session:
    def __init__(self, arch):
        self.arch = arch
        self.tracing = False
        self.chapter = None
        self.cell_files: dict = {}

    # compiling, with warnings as errors -------------------------------------------------------------------------

    def compile(self, real, args, kwargs, via, options=None, limit=False):
        name = getattr(real, "__qualname__", getattr(real, "__name__", str(real)))
        args = [on_the_gpu(a) for a in args]
        kwargs = {k: on_the_gpu(v) for k, v in kwargs.items()}
        described = [describe(a) for a in args] + [f"{k}={describe(v)}" for k, v in kwargs.items()]
        entry = {"function": name, "module": getattr(real, "__module__", ""), "via": via,
                 "arguments": described, "ok": False, "error": "", "warning": False, "seconds": 0.0,
                 "where": self.where()}
        if limit:
            same = [c for c in self.chapter["compiles"] if c["function"] == name and c["via"] == via]
            if any(c["arguments"] == described for c in same) or len(same) >= MAX_COMPILES_PER_FUNCTION:
                return None
        started = time.perf_counter()
        compiled = None
        was = self.tracing
        self.tracing = True
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                compile_ = REAL["compile"] if options is None else REAL["compile"][options]
                compiled = compile_(real, *args, **kwargs)
            entry["ok"] = True
        except Exception as error:
            entry["error"] = short(error)
            entry["warning"] = isinstance(error, Warning)
            if not entry["warning"]:
                # CuTeDSL catches some of its own warnings, raised as errors here, and reports another error in
                # their place (a static loop too long to trace becomes "range_constexpr() requires ... integers"):
                # compiled again with warnings only recorded, the warning shows
                warned = self.warnings_of(compile_, real, args, kwargs)
                if warned:
                    entry["warning"] = True
                    entry["error"] = warned[0] + "\n(raised as an error, CuTeDSL reported: " + entry["error"][:600] + ")"
        finally:
            self.tracing = was
            entry["seconds"] = round(time.perf_counter() - started, 3)
            self.chapter["compiles"].append(entry)
        return compiled

    @staticmethod
    def warnings_of(compile_, real, args, kwargs) -> list:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                compile_(real, *args, **kwargs)
            except Exception:
                pass
        return [f"{w.category.__name__}: {w.message} ({Path(w.filename).name}:{w.lineno})" for w in seen]

    def where(self):
        """(cell, line) of the innermost frame running a cell of the chapter."""
        frame = sys._getframe(1)
        while frame is not None:
            cell = self.cell_files.get(frame.f_code.co_filename)
            if cell is not None:
                return [cell, frame.f_lineno]
            frame = frame.f_back
        return None


SESSION = None
REAL: dict = {}


LEAF = re.compile(r"^\?(?:\{(?P<wide>i64)?\s*(?:div=(?P<div>\d+))?\})?$")


def on_the_gpu(value):
    """A `from_dlpack` tensor of a CPU torch tensor is in the generic address space; a GPU's is in global memory,
    which kernels that copy with cp.async or TMA require. So a cell's tensor is compiled as the fake tensor of
    the same type in global memory: its element type, its alignment, its shape and strides (a dynamic one, `?`
    after `mark_layout_dynamic`, a symbolic integer of the same width and divisibility)."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import _Tensor, make_fake_tensor
    if type(value) is not _Tensor:
        return value
    layout = str(value).split(" o ", 1)[1].rstrip(">")
    shape_text, stride_text = layout.split(":")

    def leaves(text):
        return [part.strip() for part in text.strip("()").split(",")]

    def leaf(text):
        if not text.startswith("?"):
            return int(text)
        match = LEAF.match(text)
        return cute.sym_int(64 if match.group("wide") else 32, divisibility=int(match.group("div") or 1))
    shape = tuple(leaf(t) for t in leaves(shape_text))
    stride = tuple(leaf(t) for t in leaves(stride_text))
    return make_fake_tensor(value.element_type, shape, stride, assumed_align=value._assumed_align)


def describe(value) -> str:
    """An argument as a compile record names it: a tensor by its type, anything else as it prints."""
    try:
        text = str(value)
    except Exception:
        text = type(value).__name__
    return re.sub(r"0x[0-9a-f]+", "0x...", text)[:200]


def intercept(real):
    """A cell's @cute.jit function: called from a cell it is compiled (not run); called while CuTeDSL traces
    (a device helper called from a kernel, or the body of a compile) it is the real one."""
    @functools.wraps(real)
    def jit_function(*args, **kwargs):
        if SESSION.tracing:
            return real(*args, **kwargs)
        SESSION.compile(real, args, kwargs, via="call", limit=True)
        return None
    jit_function.__chapter_jit__ = real
    return jit_function


def unwrap(function):
    return getattr(function, "__chapter_jit__", function)


def jit(*dargs, **dkwargs):
    if len(dargs) == 1 and callable(dargs[0]) and not dkwargs:
        return intercept(REAL["jit"](dargs[0]))
    decorator = REAL["jit"](*dargs, **dkwargs)
    return lambda function: intercept(decorator(function))


class Compile:
    """cute.compile: the real one, on the function behind an intercepted @cute.jit, warnings as errors."""

    def __init__(self, options=None):
        self.options = options

    def __getitem__(self, options):
        return Compile(options)

    def __call__(self, function, *args, **kwargs):
        return SESSION.compile(unwrap(function), args, kwargs, via="cute.compile", options=self.options)


def _ptx_report(compiled, error=""):
    from cutekit.checks.cutedsl import PtxReport, instruction_counts
    if compiled is None:
        return PtxReport(False, error=error or SESSION.chapter["compiles"][-1]["error"])
    text = getattr(compiled, "__ptx__", None) or ""
    if not text:
        found = sorted(Path(os.environ["CUTE_DSL_DUMP_DIR"]).rglob("*.ptx"), key=lambda p: p.stat().st_mtime)
        text = found[-1].read_text() if found else ""
    return PtxReport(True, text, instruction_counts(text))


def compile_to_ptx(module_path, function_name, arguments=(), timeout=300, arch="sm_80"):
    """cutekit.checks.compile_to_ptx, in this process: compiled for `arch` when it is this run's."""
    from cutekit.checks import _worker
    if arch != SESSION.arch:
        SESSION.chapter["other_arch"].append(f"{module_path}:{function_name} for {arch}")
        return _ptx_report(None, f"compiled in the {arch} run, not this one")
    function = unwrap(getattr(_worker.load(str(module_path)), function_name))
    compiled = SESSION.compile(function, [_worker.argument(a) for a in arguments], {}, via="compile_to_ptx")
    return _ptx_report(compiled)


def compile_notebook_kernel(host, *arguments, module="notebook_kernel"):
    from cutekit.checks import _worker
    from cutekit.checks.cutedsl import FakeTensor
    fakes = [_worker.argument(FakeTensor(*a) if isinstance(a, tuple) else a) for a in arguments]
    compiled = SESSION.compile(unwrap(host), fakes, {}, via="compile_notebook_kernel")
    return _ptx_report(compiled)


def check(exercise_id, answer=None, *args, **kwargs):
    """A check call: written down; a @cute.jit answer is compiled as its check compiles it."""
    from cutekit.checks import _worker
    from cutekit.checks.cutedsl import FakeTensor
    is_jit = hasattr(answer, "__chapter_jit__")
    SESSION.chapter["checks"].append({"id": exercise_id, "answer": getattr(answer, "__name__", str(answer)),
                                      "jit": is_jit})
    if is_jit:
        if exercise_id not in EXERCISE_ARGUMENTS:
            SESSION.chapter["compiles"].append({
                "function": answer.__name__, "module": "", "via": f"check {exercise_id}", "arguments": [],
                "ok": False, "warning": False, "seconds": 0.0, "where": SESSION.where(),
                "error": f"no compile arguments for {exercise_id}: add them to EXERCISE_ARGUMENTS"})
            return None
        fakes = [_worker.argument(FakeTensor(*a) if isinstance(a, tuple) else a)
                 for a in EXERCISE_ARGUMENTS[exercise_id]]
        SESSION.compile(unwrap(answer), fakes, {}, via=f"check {exercise_id}")
    return None


def install(arch: str):
    """Real CuTeDSL as `cutlass`, its jit and compile intercepted; cutekit's slow or GPU-only helpers stubbed."""
    global SESSION
    SESSION = Session(arch)
    import cutlass
    import cutlass.cute as cute
    REAL["jit"], REAL["compile"] = cute.jit, cute.compile
    cute.jit = jit
    if getattr(cutlass, "jit", None) is REAL["jit"]:
        cutlass.jit = jit
    cute.compile = Compile()

    import cutekit
    import cutekit.backend
    import cutekit.checks
    import cutekit.checks.ch05_tiled_copy
    import cutekit.checks.ch08_hopper
    import cutekit.checks.checking
    import cutekit.checks.common
    from cutekit.backend import DoctorReport, Tier
    from cutekit.use import Backend

    # "sim": the cells' CPU branches (torch CPU tensors, no CUDA calls) are the ones that run here
    compile_only = Backend("sim", "CuTeDSL 4.8.1 on the CPU: kernels are compiled for the GPU, nothing runs")
    cutekit.use = lambda *args, **kwargs: compile_only
    cutekit.doctor = lambda *args, **kwargs: DoctorReport((Tier("reference", True, "stub"),))
    cutekit.backend.probe_cutedsl_cpu = lambda *args, **kwargs: Tier("cutedsl-cpu", True, "this process")
    cutekit.render = Anything("cutekit.render")
    cutekit.widgets = Anything("cutekit.widgets")
    cutekit.checks.check = cutekit.checks.checking.check = check
    cutekit.checks.compile_to_ptx = compile_to_ptx
    cutekit.checks.common.compile_notebook_kernel = compile_notebook_kernel
    cutekit.checks.ch05_tiled_copy.compile_notebook_kernel = compile_notebook_kernel

    def not_run(*args, **kwargs):
        raise NotRun("the simulator does not run in the CuTeDSL run")
    cutekit.checks.ch08_hopper.simulate_kernel = not_run
    cutekit.checks.ch05_tiled_copy.tensor_types_in_cutedsl = not_run


# ---- running the cells ------------------------------------------------------------------------------------------

class SoftAsserts(ast.NodeTransformer):
    """`assert x` at a cell's top level (not in a function) becomes: try it, write down a failure, go on."""

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef

    def visit_Assert(self, node):
        record = ast.Expr(ast.Call(ast.Name("__assert_failed__", ast.Load()),
                                   [ast.Name("__error__", ast.Load()), ast.Constant(node.lineno)], []))
        handler = ast.ExceptHandler(ast.Name("Exception", ast.Load()), "__error__", [record])
        return ast.copy_location(ast.Try([node], [handler], [], []), node)


def chapter_file(chapter: str) -> Path:
    """solutions/NN_topic.py for a chapter's name; a path ending in .py is itself (the tests' own cells)."""
    return Path(chapter) if chapter.endswith(".py") else ROOT / "solutions" / f"{chapter}.py"


def code_cells(chapter: str) -> list:
    import jupytext
    notebook = jupytext.read(chapter_file(chapter))
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def run_cell(source: str, path: Path, namespace: dict, index: int):
    record = SESSION.chapter
    if source.startswith("%%writefile"):
        first, _, body = source.partition("\n")
        target = first.split(None, 1)[1].format(**namespace)
        Path(target).write_text(body + "\n")
        return
    lines = ["" if line.startswith(("%", "!")) else line for line in source.splitlines()]
    source = "\n".join(lines) + "\n"
    path.write_text(source)
    tree = SoftAsserts().visit(ast.parse(source, str(path)))
    ast.fix_missing_locations(tree)
    for statement in tree.body:
        code = compile(ast.Module([statement], []), str(path), "exec")
        try:
            exec(code, namespace)
        except Exception as error:
            record["statements"].append({"cell": index, "line": statement.lineno, "error": short(error, 400)})


def run_chapter(chapter: str, folder: Path) -> dict:
    from cutekit.cute.recording import recording
    SESSION.chapter = record = {"calls": [], "compiles": [], "statements": [], "asserts": [], "checks": [],
                                "other_arch": [], "seconds": 0.0}
    started = time.perf_counter()
    module = types.ModuleType(f"chapter_{Path(chapter).stem}")
    sys.modules[module.__name__] = module
    namespace = module.__dict__

    def assert_failed(error, line):
        cell = SESSION.where()
        record["asserts"].append({"cell": cell[0] if cell else None, "line": line, "error": short(error, 300)})
    namespace["__assert_failed__"] = assert_failed
    cells = code_cells(chapter)
    paths = [folder / f"{Path(chapter).stem}_cell{index:02d}.py" for index in range(len(cells))]
    SESSION.cell_files = {str(path): index for index, path in enumerate(paths)}
    keep = (lambda frame: frame.f_code.co_filename in SESSION.cell_files)
    here = os.getcwd()
    os.chdir(ROOT / "solutions")
    try:
        with recording(keep) as calls, contextlib.redirect_stdout(io.StringIO()):
            for index, (source, path) in enumerate(zip(cells, paths)):
                run_cell(source, path, namespace, index)
    finally:
        os.chdir(here)
    record["run_seconds"] = round(time.perf_counter() - started, 2)
    record["calls"] = replay(calls)
    record["seconds"] = round(time.perf_counter() - started, 2)
    return record


# ---- replaying the recorded cutekit.cute calls in CuTeDSL -----------------------------------------------------

POINTER = re.compile(r"ptr<(\w+), (?:numpy\+\d+|\w+(?:, align<\d+>)?)>")


def without_pointers(text: str) -> str:
    """A tensor's pointer is an address: cutekit's NumPy memory prints `ptr<f16, numpy+0>` where CuTeDSL's
    registers print `ptr<f16, rmem, align<16>>`; the element type and the layout are compared."""
    return POINTER.sub(r"ptr<\1>", text)


class Unconvertible(Exception):
    pass


class Replayer:
    def __init__(self):
        import cutlass
        import cutlass.cute as cute
        import cutlass.memory  # noqa: F401  (cutekit.cute.memory, .tensor_utils and .utils mirror cutlass')
        import cutlass.tensor_utils  # noqa: F401
        import cutlass.utils.blackwell_helpers  # noqa: F401
        if self_arch_has_tcgen05():
            import cutlass.cute.nvgpu.tcgen05  # noqa: F401
        self.cutlass, self.cute = cutlass, cute
        self.known: dict = {}        # id(cutekit object) -> (the object, CuTeDSL's replayed object)
        self.failed: dict = {}       # id(cutekit object) -> why its call could not be replayed
        self.trees: dict = {}        # a cell's file -> its syntax tree

    def remember(self, ours, theirs):
        if ours is None or isinstance(ours, (bool, int, float, str)):
            return
        self.known[id(ours)] = (ours, theirs)
        if isinstance(ours, tuple) and isinstance(theirs, tuple) and len(ours) == len(theirs):
            for a, b in zip(ours, theirs):
                self.remember(a, b)

    def forget(self, ours, why):
        if ours is None or isinstance(ours, (bool, int, float, str)):
            return
        self.failed[id(ours)] = (ours, why)
        if isinstance(ours, tuple):
            for a in ours:
                self.forget(a, why)

    def convert(self, x):
        from cutekit import cute as ref
        from cutekit.cute import typing as ref_types
        cute, cutlass = self.cute, self.cutlass
        if id(x) in self.known and self.known[id(x)][0] is x:
            return self.known[id(x)][1]
        if id(x) in self.failed and self.failed[id(x)][0] is x:
            raise Unconvertible(f"made by a call that was not replayed ({self.failed[id(x)][1]})")
        if x is None or isinstance(x, (bool, int, float, str)):
            return x
        if isinstance(x, tuple):
            return tuple(self.convert(v) for v in x)
        if isinstance(x, list):
            return [self.convert(v) for v in x]
        if isinstance(x, ref.Layout):
            return cute.make_layout(self.convert(x.shape), stride=self.convert(x.stride))
        if isinstance(x, ref.Swizzle):
            return cute.make_swizzle(x.bits, x.base, x.shift)
        if isinstance(x, ref.ComposedLayout):
            return cute.make_composed_layout(self.convert(x.inner), self.convert(x.offset), self.convert(x.outer))
        if isinstance(x, type) and issubclass(x, ref_types.Numeric):
            return getattr(cutlass, x.__name__)
        if isinstance(x, ref_types.Numeric):
            return getattr(cutlass, type(x).__name__)(x.value if hasattr(x, "value") else int(x))
        if isinstance(x, enum.Enum):
            return getattr(self.mirror(type(x)), x.name)
        if dataclasses.is_dataclass(x) and not isinstance(x, type) and type(x).__module__.startswith("cutekit.cute.nvgpu"):
            # CuTeDSL's operations take the same values in the same order (some under other names), but for
            # tcgen05's MMAs, which take A's and B's one type once (`ab_dtype`) where cutekit keeps both
            theirs = self.mirror(type(x))
            values = [self.convert(getattr(x, f.name)) for f in dataclasses.fields(x) if f.init]
            names = [f.name for f in dataclasses.fields(x) if f.init]
            if names[:2] == ["a_dtype", "b_dtype"] and "ab_dtype" in inspect.signature(theirs.__init__).parameters:
                values = values[:1] + values[2:]
            return theirs(*values)
        raise Unconvertible(f"a {type(x).__module__}.{type(x).__name__} made outside cutekit.cute")

    def mirror(self, cls):
        """The CuTeDSL class of the same name as a cutekit one (cutekit.cute.nvgpu.warp.copy.X -> cute.nvgpu.warp.X)."""
        parts = cls.__module__.split(".")[2:]          # cutekit.cute.nvgpu.warp.copy -> nvgpu, warp, copy
        root = self.cute
        if parts[:1] and parts[0] in CUTLASS_MODULES:  # cutekit.cute.utils.X -> cutlass.utils.X
            root, parts = getattr(self.cutlass, parts[0]), parts[1:]
        for depth in range(len(parts), -1, -1):
            owner = root
            try:
                for part in parts[:depth]:
                    owner = getattr(owner, part)
                return getattr(owner, cls.__name__)
            except AttributeError:
                continue
        # cutekit keeps a few enums several CuTeDSL modules share in one place (common_modes: CtaGroup, ...)
        for module in ("tcgen05", "cpasync", "warpgroup", "warp"):
            found = getattr(getattr(self.cute.nvgpu, module, None), cls.__name__, None)
            if found is not None:
                return found
        raise Unconvertible(f"CuTeDSL has no {cls.__name__}")

    def function(self, name):
        owner = self.cute
        if name.split(".")[0] in CUTLASS_MODULES:      # cutekit.cute.utils mirrors cutlass.utils
            owner, name = getattr(self.cutlass, name.split(".")[0]), name.split(".", 1)[1]
        for part in name.split("."):
            owner = getattr(owner, part)
        return owner

    def numeric_arguments(self, call) -> dict:
        """{position or keyword: type name} of the arguments the cell wrote as `cute.Int32(...)` (or another
        numeric type): cutekit's Int32(0) is the int 0, CuTeDSL's a run-time integer, and some functions
        (local_partition) take only the latter."""
        if not call.where or call.where[0] not in SESSION.cell_files:
            return {}
        tree = self.trees.get(call.where[0])
        if tree is None:
            tree = self.trees[call.where[0]] = ast.parse(Path(call.where[0]).read_text())
        name = call.name.split(".")[-1]
        found = {}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not (node.lineno <= call.where[1] <= node.end_lineno):
                continue
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if callee != name:
                continue
            offset = 1 if call.name.startswith(".") else 0
            for position, argument in [(i + offset, a) for i, a in enumerate(node.args)] + \
                                      [(k.arg, k.value) for k in node.keywords]:
                if isinstance(argument, ast.Call):
                    inner = argument.func.attr if isinstance(argument.func, ast.Attribute) else \
                        getattr(argument.func, "id", "")
                    if inner in ("Int32", "Int64", "Int16", "Int8", "Uint32", "Uint8", "Boolean"):
                        found[position] = inner
        return found

    def one(self, call) -> dict:
        from cutekit.cute.recording import show
        cell = SESSION.cell_files.get(call.where[0]) if call.where else None
        entry = {"name": call.name, "cell": cell, "line": call.where[1] if call.where else None,
                 "arguments": show(call.args[1:] if call.name.startswith(".") else call.args)[:300],
                 "kwargs": {k: show(v)[:200] for k, v in call.kwargs.items()},
                 "object": show(call.args[0])[:200] if call.name.startswith(".") and call.args else "",
                 "cutekit": call.printed if not call.error else f"raises {call.error[:300]}",
                 "cutedsl": "", "status": ""}
        try:
            args = [self.convert(a) for a in call.args]
            kwargs = {k: self.convert(v) for k, v in call.kwargs.items()}
            for where, type_name in self.numeric_arguments(call).items():
                if isinstance(where, int) and where < len(args) and isinstance(args[where], int):
                    args[where] = getattr(self.cutlass, type_name)(args[where])
                elif where in kwargs and isinstance(kwargs[where], int):
                    kwargs[where] = getattr(self.cutlass, type_name)(kwargs[where])
        except Unconvertible as why:
            entry.update(status="skipped", cutedsl=f"not replayed: {why}")
            self.forget(call.result, str(why))
            return entry
        except Exception as error:      # CuTeDSL refused to build an argument the way cutekit's was built
            entry.update(status="differs", cutedsl=f"an argument cannot be built: {short(error, 300)}")
            self.forget(call.result, "an argument could not be built")
            return entry
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                if call.kind == "property":
                    result = getattr(args[0], call.name[1:])
                elif call.name.startswith("."):
                    result = getattr(args[0], call.name[1:])(*args[1:], **kwargs)
                else:
                    result = self.function(call.name)(*args, **kwargs)
                printed = show(result)
        except Exception as error:
            entry["cutedsl"] = f"raises {short(error, 300)}"
            entry["status"] = "both raise" if call.error else "differs"
            self.forget(call.result, "CuTeDSL raised")
            return entry
        entry["cutedsl"] = printed
        entry["status"] = "differs" if call.error else \
            ("same" if without_pointers(printed) == without_pointers(call.printed) else "differs")
        self.remember(call.result, result)
        return entry


def replay(calls) -> list:
    """Every recorded call made again in CuTeDSL (inside one @cute.jit trace); identical calls once."""
    from cutekit.cute.recording import show
    import cutlass
    replayer = Replayer()
    entries, seen = [], {}

    def body():
        for call in calls:
            try:
                key = (call.name, show(call.args), show(sorted(call.kwargs.items())),
                       tuple(id(a) for a in call.args if not isinstance(a, (int, str, tuple, type(None)))))
            except Exception:
                key = None
            if key is not None and key in seen:
                first = seen[key]
                if id(first.result) in replayer.known:
                    replayer.remember(call.result, replayer.known[id(first.result)][1])
                else:
                    replayer.forget(call.result, "an identical earlier call was not replayed")
                continue
            if key is not None:
                seen[key] = call
            entries.append(replayer.one(call))

    traced.__annotations__ = {"run": cutlass.Constexpr}
    REAL["jit"](traced)(body)
    return entries


def traced(run):
    """The @cute.jit function the replay runs in (CuTeDSL traces only functions whose source file it reads)."""
    run()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="+")
    parser.add_argument("--arch", default="sm_80")
    parser.add_argument("--out", required=True)
    options = parser.parse_args(argv)
    os.environ["CUTE_DSL_ARCH"] = options.arch
    dump = tempfile.mkdtemp(prefix="chapters-in-cutedsl-")
    os.environ.update(CUTE_DSL_KEEP="ptx", CUTE_DSL_DUMP_DIR=dump)
    sys.path.insert(0, str(ROOT))
    started = time.perf_counter()
    install(options.arch)
    results = {"arch": options.arch, "import_seconds": round(time.perf_counter() - started, 2), "chapters": {}}
    folder = Path(tempfile.mkdtemp(prefix="chapter-cells-"))
    for chapter in options.chapters:
        try:
            results["chapters"][chapter] = run_chapter(chapter, folder)
        except Exception as error:
            results["chapters"][chapter] = {"crashed": "".join(traceback.format_exception(error))[-3000:]}
    results["seconds"] = round(time.perf_counter() - started, 2)
    Path(options.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
