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
from .verdict import Verdict, failed, passed


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
    imported under its names, e.g. `import cutlass.cute.nvgpu.warpgroup as warpgroup`, the classes and
    functions it imported from cutlass by name imported again, e.g. `from cutlass.cute.nvgpu import
    OperandMajorMode`, plain constants copied)."""
    header, pieces = kernel_module_parts(host)
    return header + "\n\n".join(source for source, _, _ in pieces)


NOT_CARRIED = "__cutekit_not_carried__"     # the rebuilt module's {name: why the check did not carry it}
CARRIED = ("its functions, the cutlass modules it imports, the classes and functions it imports from cutlass, "
           "and int/float/bool/str/tuple constants")


def cutlass_import(value, name: str = ""):
    """(module, attribute) to import `value` (a class or function of `cutlass`) from, the way a learner's file
    would: the shortest public `cutlass.*` module loaded now that holds this very object (on the simulator
    its objects live in cutekit's modules, so their own `__module__` names no cutlass module), else the
    module its `__module__` names when that is cutlass's; None when it is not cutlass's."""
    places = cutlass_imports(value, name)
    return places[0] if places else None


def cutlass_imports(value, name: str = "") -> list:
    """Every (module, attribute) `cutlass_import` chooses from, the shortest first: the rebuilt module tries them
    in turn, as the tier it runs in (the simulator or real CuTeDSL) may lay its modules out differently."""
    attributes = [a for a in dict.fromkeys((getattr(value, "__name__", None), name)) if isinstance(a, str) and a]
    found = set()
    for module_name, module in list(sys.modules.items()):
        if module is None or not (module_name == "cutlass" or module_name.startswith("cutlass.")) \
                or any(part.startswith("_") for part in module_name.split(".")):
            continue
        space = getattr(module, "__dict__", {})
        found.update((module_name.count("."), len(module_name), module_name, attribute) for attribute in attributes
                     if space.get(attribute) is value)
    home = _home_in_cutlass(value)
    return [place[2:] for place in sorted(found)] + ([home] if home and home not in [f[2:] for f in found] else [])


def _home_in_cutlass(value):
    """(value's own module, its name) when that module is cutlass's, else None."""
    module_name = getattr(value, "__module__", None) or ""
    qualname = getattr(value, "__qualname__", None) or ""
    if (module_name == "cutlass" or module_name.startswith("cutlass.")) and qualname.isidentifier():
        return module_name, qualname
    return None


def _global_loads(code) -> set:
    """The names `code` (and the functions and comprehensions nested in it) reads as globals, not as
    attributes: `co_names` holds both."""
    import dis
    names = {instruction.argval for instruction in dis.get_instructions(code)
             if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for constant in code.co_consts:
        if inspect.iscode(constant):
            names |= _global_loads(constant)
    return names


def _first_import(places: list, name: str) -> str:
    """`from module import attribute as name` for the first of `places` the importing tier has (nested
    try/except ImportError when there are several)."""
    lines = [f"from {module} import {attribute}" + (f" as {name}" if attribute != name else "")
             for module, attribute in places]
    text = lines[-1]
    for line in reversed(lines[:-1]):
        text = f"try:\n    {line}\nexcept ImportError:\n" + textwrap.indent(text, "    ")
    return text


_BUILTINS = frozenset(vars(__import__("builtins")))


def _what_it_is(value) -> str:
    """`value` in a few words, for a message that says why it was not carried."""
    if inspect.ismodule(value):
        return f"the module {value.__name__}"
    if inspect.isclass(value) or callable(value):
        kind = "class" if inspect.isclass(value) else "function"
        origin = getattr(value, "__module__", None)
        return f"a {kind} from {origin}" if origin else f"a {kind}"
    return f"a {type(value).__name__}"


def kernel_module_parts(host) -> tuple:
    """`kernel_module_source` in parts: (the imports and constants, [(a function's source, the file or cell it
    comes from, the line there where it starts)]). The one place a check rebuilds a learner's kernel from: the
    simulator (`simulate`, `common.on_simulator`), the GPU worker (`on_gpu`) and real CuTeDSL's PTX all use it.
    A module-level name the functions use that is none of what it carries (CARRIED) is listed, with what it is
    bound to, in the module's NOT_CARRIED dict: a NameError for it says so (cutekit/sim/machine/failures.py)."""
    pieces, constants, seen, modules, dropped = [], [], {"cutlass", "cute"}, [], {}   # the header binds those two

    def add(function):
        function = unwrap(function)
        if not inspect.isfunction(function) or function.__name__ in seen:
            return
        seen.add(function.__name__)
        closure = dict(zip(function.__code__.co_freevars,
                           (cell.cell_contents for cell in (function.__closure__ or ()))))
        loaded = _global_loads(function.__code__) | set(closure)
        for name in sorted(set(function.__code__.co_names) | loaded):
            value = closure[name] if name in closure else function.__globals__.get(name)
            if value is None or name in seen or name.startswith("__"):
                continue
            origin = (getattr(unwrap(value), "__module__", "") or "") if callable(value) else ""
            if callable(value) and not inspect.isclass(value) and not inspect.ismodule(value) and origin \
                    and not origin.startswith(("cutlass", "cutekit", "torch", "numpy")):
                add(value)
                if inspect.isfunction(unwrap(value)):
                    continue
            if inspect.ismodule(value) and (value.__name__ == "cutlass" or value.__name__.startswith("cutlass.")):
                seen.add(name)
                modules.append(f"import {value.__name__} as {name}")
            elif name in _BUILTINS:
                continue        # `range` the simulator gives a module (cutekit/sim/dsl.py): Python's own, as on a GPU
            elif name in loaded and (inspect.isclass(value) or callable(value)) \
                    and cutlass_import(value, name) is not None:
                seen.add(name)
                modules.append(_first_import(cutlass_imports(value, name), name))
            elif isinstance(value, (int, float, bool, str, tuple)):
                seen.add(name)
                constants.append(f"{name} = {value!r}")
            elif name in loaded and not inspect.isfunction(unwrap(value)):
                dropped[name] = (f"`{name}` is bound in your module to {_what_it_is(value)}, and the check runs "
                                 f"your kernel in a module of its own that carries only {CARRIED}: pass it to "
                                 f"the kernel as an argument, or reach it through a cutlass module")
        source, first = _located_source(function)
        pieces.append((textwrap.dedent(source), function.__code__.co_filename, first))
    add(host)
    dropped = {name: why for name, why in dropped.items() if name not in seen}
    lines = ["import cutlass", "import cutlass.cute as cute"] + modules + [""] + constants
    if dropped:
        lines.append(f"{NOT_CARRIED} = {dropped!r}")
    return "\n".join(lines + ["", ""]), pieces


def naming_what_is_not_carried(function):
    """`function` (a host function of a rebuilt module) raising, for a NameError in its own code, one that says
    why: the name is one the rebuild did not carry (NOT_CARRIED), or defined nowhere. A NameError inside a
    kernel is the simulator's to explain (cutekit/sim/machine/failures.py reads the same NOT_CARRIED)."""
    import functools

    @functools.wraps(function)
    def host(*arguments, **keywords):
        try:
            return function(*arguments, **keywords)
        except NameError as error:
            if type(error) is not NameError or not getattr(error, "name", None):
                raise
            why = (function.__globals__.get(NOT_CARRIED) or {}).get(error.name) or (
                "your functions can use their arguments, their own variables and module-level names: define it "
                "in your module or pass it as an argument")
            raise NameError(f"{error}; {why}", name=error.name) from None
    return host


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
    return harness(naming_what_is_not_carried(getattr(module, unwrap(host).__name__)), case)


def simulate_until_one_fails(host, harness, case, failed_hosts: dict) -> dict:
    """`simulate(host, harness, case)` for a capstone's problems in turn (case["_shape"] 0, 1, ...): a later
    problem is skipped ({"skipped": True}) once an earlier one failed for this host, as noted in `failed_hosts`
    (the module's own dict, keyed by id(host))."""
    if case["_shape"] == 0:
        failed_hosts.pop(id(host), None)
    elif id(host) in failed_hosts:
        return {"skipped": True}
    try:
        value = simulate(host, harness, case)
    except (OSError, TypeError) as error:
        raise TypeError(f"the kernel's source cannot be read ({error}); define the kernel and its host in a "
                        f"notebook cell or a .py file") from None
    if value.get("error") or value.get("wrong"):
        failed_hosts[id(host)] = True
    return value


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


def fresh_kernel(kernel: str, what: str):
    """The chapter's kernel module `kernel` imported anew (on whatever `cutlass` is imported now), with its whole
    package: its helpers bind to that `cutlass` too. `what` names the learner's piece in the error ("loop")."""
    import importlib
    package = kernel.split(".")[0]
    for name in [name for name in sys.modules if name == package or name.startswith(package + ".")]:
        del sys.modules[name]
    try:
        return importlib.import_module(kernel)
    except ImportError as error:
        raise RuntimeError(f"the check runs your {what} inside the chapter's kernel, {kernel.replace('.', '/')}.py, "
                           f"which is not importable here ({error}): run the course from its repository") from None


def kernel_root(kernel: str) -> str:
    """The folder holding the chapter's kernel package `kernel` (the repository), for a compiler in another
    process; "" where it is not importable."""
    try:
        spec = importlib.util.find_spec(kernel)
    except ImportError:
        spec = None
    return str(Path(spec.origin).parents[2]) if spec is not None and spec.origin else ""


def gpu_gemm_criterion(module: str, harness: str, case: dict, chapter_kernel: bool):
    """The GPU criterion of a chapter's GEMM kernel with the learner's piece: `module:harness` on `case` (an fp16
    M x N x K GEMM) must match torch; its time is then said next to torch.matmul's, and next to the chapter's own
    kernel's (the harness's "chapter_ms") where `chapter_kernel`."""

    def judge(context) -> Verdict:
        reply = on_gpu(context.answer, f"{module}:{harness}", [case])
        if not reply.ok:
            return failed(f"on the GPU: {reply.error[:600]}")
        value, error = reply.values[0]
        where = f"a {case['M']}x{case['N']}x{case['K']} fp16 GEMM on the GPU"
        if error:
            return failed(f"{where}: {error[:500]}")
        if value["wrong"]:
            return failed(f"{where}: {value['wrong']} outputs differ from torch, the first at {value['first']} (on "
                          f"a GPU an ordering mistake gives wrong values that change from run to run)")
        flops = 2 * case["M"] * case["N"] * case["K"]
        chapter = f"the chapter's kernel {value['chapter_ms']:.3f} ms, " if chapter_kernel else ""
        return Verdict(True, f"{where}: {value['ms']:.3f} ms ({flops / value['ms'] / 1e9:.0f} TFLOP/s); "
                             f"{chapter}torch.matmul {value['torch_ms']:.3f} ms")
    return judge


def gpu_gemm_bias_relu(host, case, bias_scale: float) -> dict:
    """For capstone harnesses on the GPU (real CuTeDSL, in this process): the learner's host on an fp16 A (M, K),
    B (N, K) and an fp32 bias (N,) of scale `bias_scale`, compared with torch.relu(torch.addmm(bias, A, B^T)) in
    fp32, then timed (median of 20 launches) next to torch.relu(torch.addmm(...)) in fp16."""
    import torch
    from cutlass.cute.runtime import from_dlpack

    import cutlass.cute as cute
    M, N, K = case["M"], case["N"], case["K"]
    generator = torch.Generator(device="cuda").manual_seed(M + N + K)
    a = torch.randn(M, K, device="cuda", generator=generator).half()
    b = torch.randn(N, K, device="cuda", generator=generator).half()
    bias = torch.randn(N, device="cuda", generator=generator) * bias_scale
    d = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    views = [from_dlpack(t, assumed_align=16) for t in (a, b, bias, d)]
    compiled = cute.compile(host, *views)
    compiled(*views)
    torch.cuda.synchronize()
    reference = torch.relu(torch.addmm(bias, a.float(), b.float().T))
    wrong = (~torch.isclose(d.float(), reference, rtol=2e-2, atol=0.25)).nonzero().tolist()
    result = {"wrong": len(wrong), "first": tuple(wrong[0]) if wrong else None}
    if not wrong:
        bias16 = bias.half()
        result["ms"] = gpu_median_ms(lambda: compiled(*views))
        result["torch_ms"] = gpu_median_ms(lambda: torch.relu(torch.addmm(bias16, a, b.T)))
    return result


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
    `cutlass` / `cute` names at it too (on a GPU machine the notebook imported the real package), and the
    names its module imported from cutlass by name (`from cutlass.cute.nvgpu import OperandMajorMode`), found
    where `kernel_module_parts` finds them (`cutlass_import`)."""
    import importlib

    import cutekit
    namespace = getattr(answer, "__globals__", {})
    by_name = {}        # the classes and functions its module imported from cutlass by name: where from
    for key, value in list(namespace.items()):
        if inspect.ismodule(value) or not (inspect.isclass(value) or callable(value)) or key in _BUILTINS \
                or key.startswith("__") \
                or not str(getattr(value, "__module__", "") or "").startswith(("cutlass", "cutekit")):
            continue
        found = cutlass_imports(value, key)
        if found:
            by_name[key] = found
    cutekit.use("sim")
    for key, value in list(namespace.items()):
        name = getattr(value, "__name__", "")
        if isinstance(value, types.ModuleType) and (name == "cutlass" or name.startswith("cutlass.")):
            if not getattr(value, "__cutekit_sim__", False):
                namespace[key] = importlib.import_module(name)
    for key, places in by_name.items():
        for module, attribute in places:
            try:
                namespace[key] = getattr(importlib.import_module(module), attribute)
                break
            except (ImportError, AttributeError):
                continue        # none there: the answer's own object stays, and its use says so


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


def capstone_problem_criterion(shape: int, where, errors, remedies, hint):
    """A GEMM + bias + relu capstone's criterion for one of its problems (the outcome whose case has `_shape` ==
    `shape`): passed where that problem was not graded, failed where it was skipped (an earlier problem failed),
    where the kernel stopped (the message cleaned by `remedies`, with the advice of the first of `errors` whose clue
    it holds) or where D differs (`hint(value, case)`). `where(case)` names the problem."""

    def judge(context) -> Verdict:
        outcome = next((o for o in context.outcomes if o.case.get("_shape") == shape), None)
        if outcome is None:                  # graded on other problems only (a single example's case)
            return passed()
        place = where(outcome.case)
        value = outcome.value or {}
        if value.get("skipped"):
            return failed(f"{place}: not run, as the first problem failed (the criterion above says why)")
        error = outcome.error or value.get("error", "")
        if error:
            advice = next((fix for clue, fix in errors if clue in error), "")
            for remedy, replacement in remedies:
                error = remedy.sub(replacement, error)
            return failed(f"{place}: {error.strip()[:900]}" + (f"\nTo fix: {advice}" if advice else ""))
        if value["wrong"]:
            return failed(f"{place}: {hint(value, outcome.case)}")
        return Verdict(True, f"{place}: D = relu(A B^T + bias)")
    return judge
