"""`cutlass.const_expr(x)` and `cutlass.range_constexpr(n)` take compile-time values only, as in CuTeDSL.

CuTeDSL decides `if cutlass.const_expr(c):` and unrolls `for i in cutlass.range_constexpr(n):` while it traces
the kernel, once for every thread: `c` and `n` must be Python values then. A run-time value (the thread's index,
a value loaded from a tensor, an Int32 argument, a dynamic extent, the counter of a `range` loop) is refused
when the kernel compiles, with (CuTeDSL 4.8.1, compiled for sm_80 on the CPU):

    error[PHASE_REQUIRES_CONSTANT]: `const_expr()` requires a value known at code-read time, but you gave it
    a Runtime value (Staged value).
    error[ARG_NON_CONSTANT]: `range_constexpr()` requires all arguments to be Python integers known at
    code-read time.

The simulator runs the kernel's Python with every value known, so it tells a run-time value by three cheap
signs, none of which costs the kernel's own arithmetic anything (thread indices stay plain ints):

1. its type: an Int32 argument or what is computed from it (numbers.Integer, known=False), a dynamic extent
   (inttuple.Dynamic: an extent or stride of a tensor marked with mark_layout_dynamic or
   mark_compact_shape_dynamic, and sizes and ceil_divs of one), a comparison of either (a run-time Boolean:
   numbers.install makes Dynamic's comparisons give one in traced code), `thread_idx()`'s tuple, a vectorized
   launch's per-thread values;
2. the source (read once per function): the argument mentions a name that comes from
   `cute.arch.thread_idx()`, `block_idx()`, `block_dim()`, `lane_idx()`, `warp_idx()`, a warp collective,
   `.load()`, an element of a tensor, a parameter annotated as a DSL number, or the counter of a `range` /
   `cutlass.range` loop; or a parameter of a helper whose caller passes such a value (the caller's call is read
   at the instruction it is making, and so on up to the kernel: `keep_if(mOut, bdim > 3)` makes `flag` run-time
   in `keep_if` though every thread passes the same value);
3. its value differs between threads at the same point of the trace (same lines, same visit): a compile-time
   value cannot (this catches a run-time value passed in a way the source does not show, `f(*(lane == 0,))`).

CuTeDSL 4.8.1 keeps from_dlpack's extents static unless they are marked (assumed_align changes nothing), takes a
Constexpr parameter as a Python value whatever is passed, and a static tiler's size stays static: so does the
simulator (tests/sim/test_constexpr_values.py compares with CuTeDSL).
"""
from __future__ import annotations

import ast
import builtins
import linecache
import sys

import numpy

from ..cute.inttuple import Dynamic
from .machine import threads as machine, tracing

CONST_EXPR_MESSAGE = ("`const_expr()` requires a value known at code-read time, but you gave it a Runtime value "
                      "(Staged value).")
CONST_EXPR_HINT = ("Make the value a Python constant (a literal or a value computed only from Python values); if "
                   "the value is only known at run time, use the runtime form instead (for example a runtime "
                   "`if`/loop or a runtime assert)")
RANGE_MESSAGE = "`range_constexpr()` requires all arguments to be Python integers known at code-read time."
RANGE_HINT = ("Use `range(start, stop, step)` instead if your bounds are Runtime value (Staged value); ensure all "
              "arguments are Python int literals or const Python variables")


class ConstexprError(machine.KernelError):
    """A run-time value given to cutlass.const_expr or cutlass.range_constexpr (CuTeDSL refuses to compile it)."""


def const_expr(value):
    """cutlass.const_expr: the value, when it is known while tracing; a ConstexprError when it is a run-time one."""
    thread = machine._current[0]
    if thread is None and tracing.mode() is None:
        return value            # plain Python, outside any @cute.jit function or kernel
    frame = sys._getframe(1)
    key = (id(frame.f_code), frame.f_lasti)
    site = _SITES.get(key)
    if site is not None and site[0] and type(value) in _PLAIN and (
            thread is None or thread.__class__ is not _THREAD or (thread.linear and thread.block_idx != _ORIGIN)):
        return value            # the usual case, checked in a dictionary look-up or two
    reason = _reason(frame, key, site, "const_expr", (value,))
    if reason:
        raise ConstexprError(f"{CONST_EXPR_MESSAGE} (CuTeDSL 4.8.1 refuses to compile this: "
                             f"error[PHASE_REQUIRES_CONSTANT].) {reason}. {CONST_EXPR_HINT}.")
    return value


def range_constexpr(*args, **kwargs):
    """cutlass.range_constexpr: Python's range, unrolled while tracing; its bounds must be known then."""
    thread = machine._current[0]
    if thread is not None or tracing.mode() is not None:
        frame = sys._getframe(1)
        key = (id(frame.f_code), frame.f_lasti)
        site = _SITES.get(key)
        if not (site is not None and site[0] and all(type(a) is int for a in args) and
                (thread is None or _settled(thread))):
            reason = _reason(frame, key, site, "range_constexpr", args)
            if reason:
                raise ConstexprError(f"{RANGE_MESSAGE} (CuTeDSL 4.8.1 refuses to compile this: "
                                     f"error[ARG_NON_CONSTANT].) {reason}. {RANGE_HINT}.")
    return builtins.range(*args)


_PLAIN = {bool, int, float, str, type(None)}
_SIM_FOLDER = __file__.rsplit("/", 1)[0] + "/"
_ORIGIN = (0, 0, 0)
_THREAD = machine.Thread


def _settled(thread) -> bool:
    """Whether this thread's value needs no comparison with other threads' (3): every thread of block (0, 0, 0)
    compares, and thread 0 of every other block (a value that differs between blocks shows there); a vectorized
    launch compares nothing (its run-time values are vectors, found by their type)."""
    if thread.__class__ is not machine.Thread:
        return True
    return thread.linear != 0 and thread.block_idx != _ORIGIN


def _reason(frame, key, site, function: str, values: tuple) -> str | None:
    """Why one of `values`, the arguments of the const_expr (range_constexpr) call `frame` is making, is a
    run-time value: by its type (1), by the kernel's source (2), by its value in other threads (3); or None."""
    if site is None:
        if len(_SITES) > 16384:
            _SITES.clear()
        site = _SITES[key] = _site(frame.f_code, frame, function)
    clean, site = site[0], site[1]
    for text, why in site:
        if why is None:
            continue
        detail = "" if why[1] is None else _holds(frame, why[1])
        if detail is not None:
            return f"Here `{text}` is a run-time value: it depends on {why[0]}{detail}"
    for i, value in enumerate(values):
        typed = _typed(value)
        if typed:
            text = site[i][0] if i < len(site) else None
            return f"Here `{text}` is a run-time value: {typed}" if text else f"It is a run-time value: {typed}"
    thread = machine._current[0]
    if thread is not None and thread.__class__ is machine.Thread and \
            (thread.linear == 0 or thread.block_idx == _ORIGIN):
        return _differs(thread, frame, values[0] if len(values) == 1 else values)
    return None


# --------------------------------------------------------------------------------------------- 1. by type

def _typed(value, depth: int = 0) -> str | None:
    """Why `value` is a run-time value by its type alone, or None."""
    kind = type(value)
    if kind is bool or kind is int or kind is float or kind is str or value is None:
        return None
    if isinstance(value, Dynamic):
        if getattr(value, "known", False):
            return None         # cutlass.Int32(5) in host code: a constant CuTeDSL folds
        if getattr(value, "element_type", None) is not None and value.element_type.__name__ == "Boolean":
            return (f"it is {value!r}, a comparison of a run-time value (an Int32 argument or a value computed "
                    f"from one, or an extent of a tensor marked dynamic, or `cute.size`/`cute.ceil_div` of one)")
        return (f"it is {value!r}, an Int32 argument, a value computed from one, or a dynamic extent of a "
                f"tensor")
    from .machine.failures import Dim3
    if isinstance(value, Dim3):
        return f"it is cute.arch.{value.function}()'s (x, y, z), values a thread has only when the kernel runs"
    if isinstance(value, numpy.ndarray) and getattr(machine._current[0], "vectorized", False):
        return "it differs between the threads of the launch"
    if getattr(value, "known", True) is False:
        return f"it is {value!r}, a run-time argument or a value computed from one"
    if (kind is tuple or kind is list) and depth < 3:
        return next(filter(None, (_typed(v, depth + 1) for v in value)), None)
    return None


# --------------------------------------------------------------------------------------------- 2. by source

_RUNTIME_CALLS = {
    "thread_idx": "cute.arch.thread_idx()", "block_idx": "cute.arch.block_idx()",
    "block_dim": "cute.arch.block_dim()", "grid_dim": "cute.arch.grid_dim()",
    "lane_idx": "cute.arch.lane_idx()", "warp_idx": "cute.arch.warp_idx()",
    "make_warp_uniform": "cute.arch.make_warp_uniform()", "block_idx_in_cluster": "cute.arch.block_idx_in_cluster()",
    "shuffle_sync": "a shuffle", "shuffle_sync_bfly": "a shuffle", "shuffle_sync_down": "a shuffle",
    "shuffle_sync_up": "a shuffle", "warp_reduction": "a warp reduction", "warp_reduction_sum": "a warp reduction",
    "warp_reduction_max": "a warp reduction", "vote_ballot_sync": "a vote", "vote_any_sync": "a vote",
    "vote_all_sync": "a vote", "vote_uni_sync": "a vote", "mbarrier_try_wait": "an mbarrier test",
    "mbarrier_test_wait": "an mbarrier test",
}
_METHODS = {"load": "a tensor's .load()"}
_DSL_NUMBERS = {"Int8", "Int16", "Int32", "Int64", "Uint8", "Uint16", "Uint32", "Uint64", "Float16", "BFloat16",
                "Float32", "Float64", "Boolean", "Numeric", "Integer"}
_STATIC_ANNOTATIONS = {"Constexpr"}     # a parameter CuTeDSL takes as a Python value whatever the caller passes
_DYNAMIC_LOOPS = {"range"}          # `range(...)` and `cutlass.range(...)`: a loop on the GPU
_VALUE_CALLS = {"min", "max", "abs", "int", "float", "bool", "round", "elem_less", "Int8", "Int16", "Int32", "Int64", "Uint8",
                "Uint16", "Uint32", "Uint64", "Float16", "BFloat16", "Float32", "Float64", "Boolean"}

_ANALYSES: dict = {}                # id of a code object -> (_Analysis or None when its source cannot be read, code)
_TREES: dict = {}                   # file name -> (its lines, their ast)


class _Analysis:
    """Which names of one function hold run-time values, and why; and its const_expr / range_constexpr calls.

    A value is run-time when it is computed (arithmetic, comparisons, `min`, a DSL number's constructor, an
    element of a tuple) from one: an object built from one is not (`tiled_mma.get_slice(tidx)` is a partition
    whose offsets differ between threads but whose shape, and `cute.size` of it, is static)."""

    def __init__(self, function: ast.FunctionDef):
        self.node = function
        self.taints: dict = {}      # name -> (why, in words; tensor name or None: run-time only if it is a tensor)
        self.counters: dict = {}    # name -> [(first line, last line, why)]: counters of `range` loops, run-time
        self.line = 0               # only inside their loop (the name may count an unrolled loop elsewhere)
        self.calls: dict = {}       # (line, column, end line, end column) -> ast.Call
        self.unrolled: list = []    # (first line, last line, targets) of the loops Python runs while tracing
        self.dynamic_loops: list = []   # (first line, last line) of the loops the GPU runs (traced once)
        self.parameters = [p.arg for p in function.args.posonlyargs + function.args.args]
        for parameter in function.args.posonlyargs + function.args.args + function.args.kwonlyargs:
            kind = _annotation_name(parameter.annotation)
            if kind in _DSL_NUMBERS:
                self.taints[parameter.arg] = (f"`{parameter.arg}`, a run-time argument (annotated {kind})", None)
            elif kind not in _STATIC_ANNOTATIONS:
                # run-time when the caller's argument is (a helper called from a kernel with a thread's index):
                # asked of the caller's source when a const_expr or print reads it (_holds)
                self.taints[parameter.arg] = (f"`{parameter.arg}`, an argument of `{function.name}`",
                                              (("param", parameter.arg),))
        self.every_call: dict | None = None     # (line, column, end line, end column) -> ast.Call, when asked
        statements = list(_own_nodes(function))
        for _ in range(8):          # until no new name is found (a fixpoint: assignments in any order)
            before = len(self.taints), sum(map(len, self.counters.values()))
            for node in statements:
                self._assign(node)
            if (len(self.taints), sum(map(len, self.counters.values()))) == before:
                break
        for node in statements:
            if isinstance(node, ast.Call) and _called_name(node) in ("const_expr", "range_constexpr", "print"):
                self.calls[(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)] = node
            if isinstance(node, ast.For) and not (isinstance(node.iter, ast.Call) and
                                                  _called_name(node.iter) in _DYNAMIC_LOOPS):
                self.unrolled.append((node.lineno, node.end_lineno, tuple(_names(node.target))))
            elif isinstance(node, (ast.For, ast.While)):
                self.dynamic_loops.append((node.lineno, node.end_lineno))
        self.loops_at: dict = {}    # line -> the targets of the unrolled loops around it

    def unrolled_at(self, line: int) -> tuple:
        found = self.loops_at.get(line)
        if found is None:
            found = self.loops_at[line] = tuple(name for first, last, names in sorted(self.unrolled)
                                                if first <= line <= last for name in names)
        return found

    def _assign(self, node):
        self.line = getattr(node, "lineno", 0)
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            found = self._why(node.value)
            if found:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for name in _names(target):
                        if name not in self.taints:
                            why, tensor, direct = found
                            self.taints[name] = (f"`{name}` (line {node.lineno}), which comes from {why}" if direct
                                                 else why, tensor)
        elif isinstance(node, ast.For):
            if isinstance(node.iter, ast.Call) and _called_name(node.iter) in _DYNAMIC_LOOPS:
                for name in _names(node.target):
                    scopes = self.counters.setdefault(name, [])
                    if not any(first == node.lineno for first, _, _ in scopes):
                        scopes.append((node.lineno, node.end_lineno, (
                            f"`{name}`, the counter of the loop at line {node.lineno}: a `range` loop in a kernel is "
                            f"a loop on the GPU (cutlass.range_constexpr unrolls one while tracing)", None)))
            else:
                found = self._why(node.iter)
                if found:
                    for name in _names(node.target):
                        self.taints.setdefault(name, (found[0], found[1]))

    def why(self, expression):
        """(why, tensor name or None) when `expression` computes a run-time value, else None."""
        self.line = getattr(expression, "lineno", 0)
        found = self._why(expression)
        return None if found is None else (found[0], found[1])

    def _why(self, node):
        """(why, tensor name or None, whether it is the expression itself rather than a name it uses) or None."""
        if isinstance(node, ast.Name):
            taint = self.taints.get(node.id)
            if taint is None:
                for first, last, why in self.counters.get(node.id, ()):
                    if first <= self.line <= last:
                        return why[0], why[1], False
                return None
            return taint[0], taint[1], False
        if isinstance(node, ast.Call):
            name = _called_name(node)
            if name in _RUNTIME_CALLS:
                return f"{_RUNTIME_CALLS[name]}, a value a thread has only when the kernel runs", None, True
            if isinstance(node.func, ast.Attribute) and node.func.attr in _METHODS and not node.args:
                return f"{_METHODS[node.func.attr]}, values read when the kernel runs", None, True
            if isinstance(node.func, ast.Attribute) and node.func.attr == "to":
                return self._first(node.func.value)
            if name in _VALUE_CALLS:
                return self._first(*node.args)
            return None
        if isinstance(node, ast.Subscript):
            base = self._why(node.value)
            if base is not None and base[1] is None:
                return base
            if isinstance(node.value, ast.Name) and _element(node.slice):
                element = self._first(node.slice) or (
                    f"`{ast.unparse(node)}`, an element a thread reads from a tensor when the kernel runs",
                    (node.value.id,), True)
                if base is None or element[1] is None:
                    return element
                return element[0], element[1] + tuple(c for c in base[1] if c not in element[1]), element[2]
            return base
        if isinstance(node, ast.BinOp):
            return self._first(node.left, node.right)
        if isinstance(node, ast.UnaryOp):
            return self._first(node.operand)
        if isinstance(node, ast.Compare):
            return self._first(node.left, *node.comparators)
        if isinstance(node, ast.BoolOp):
            return self._first(*node.values)
        if isinstance(node, ast.IfExp):
            return self._first(node.test, node.body, node.orelse)
        if isinstance(node, (ast.Tuple, ast.List)):
            return self._first(*node.elts)
        if isinstance(node, ast.NamedExpr):
            return self._first(node.value)
        return None

    def _first(self, *nodes):
        """The first definite reason among `nodes`, else the first conditional one (an element of a tensor)."""
        conditional = None
        for node in nodes:
            found = self._why(node)
            if found is not None:
                if found[1] is None:
                    return found
                conditional = found if conditional is None else (      # run-time when any of them holds
                    conditional[0], conditional[1] + tuple(c for c in found[1] if c not in conditional[1]),
                    conditional[2])
        return conditional


def _own_nodes(function):
    """The nodes of `function`, not those of functions, lambdas or classes defined inside it."""
    stack = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.append(child)


def _names(target) -> list:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _called_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _annotation_name(annotation) -> str:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value.split(".")[-1]
    if isinstance(annotation, ast.Attribute):
        return annotation.attr
    if isinstance(annotation, ast.Name):
        return annotation.id
    return ""


def _element(index) -> bool:
    """An index that picks one element (no `None` or `:` in it): `t[i]`, `t[i, j]`, not `t[None, j]`."""
    for node in ast.walk(index):
        if isinstance(node, ast.Slice) or (isinstance(node, ast.Constant) and node.value is None):
            return False
    return True


def _analysis(code, frame) -> _Analysis | None:
    found = _ANALYSES.get(id(code))
    if found is not None:
        return found[0]
    if len(_ANALYSES) > 4096:       # notebook cells make new code objects each time they run
        _ANALYSES.clear()
    analysis = _analyse(code, frame)
    _ANALYSES[id(code)] = (analysis, code)      # the code is kept: its id is not reused while the entry stands
    return analysis


def _analyse(code, frame) -> _Analysis | None:
    node = _function_node(code, frame.f_globals)
    return None if node is None else _Analysis(node)


def _function_node(code, namespace):
    """The ast of the function whose code is `code`, or None when its source cannot be read."""
    filename = code.co_filename
    lines = linecache.getlines(filename, namespace)
    if not lines:
        return None
    cached = _TREES.get(filename)
    if cached is None or cached[0] is not lines:
        try:
            tree = ast.parse("".join(lines))
        except (SyntaxError, ValueError):
            tree = None
        if len(_TREES) > 256:
            _TREES.clear()
        cached = _TREES[filename] = (lines, tree)
    if cached[1] is None:
        return None
    for node in ast.walk(cached[1]):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name and \
                code.co_firstlineno in (node.lineno, *(d.lineno for d in node.decorator_list[:1])):
            return node
    return None


# (id of the code, instruction) -> (no argument is run-time by the source, [(argument text, why or None)], the code:
# kept, so that its id is not reused while the entry stands). Code objects hash by their contents: ids are cheaper.
_SITES: dict = {}


def _site(code, frame, function: str) -> tuple:
    """(whether the source shows none of them to be run-time, the arguments of the call at the frame's
    instruction as text, each with why the source shows it to be run-time, or None)."""
    analysis = _analysis(code, frame)
    call = None if analysis is None else _call_at(analysis, code, frame.f_lasti, frame.f_lineno, function)
    if call is None:
        return True, [], code
    found = [(ast.unparse(argument), analysis.why(argument)) for argument in call.args]
    return all(why is None for _, why in found), found, code


def _call_at(analysis: _Analysis, code, lasti: int, line: int, function: str):
    positions = None
    try:
        positions = list(code.co_positions())[lasti // 2]
    except (AttributeError, IndexError):
        pass
    if positions is not None and positions[0] is not None:
        call = analysis.calls.get((positions[0], positions[2], positions[1], positions[3]))
        if call is not None:
            return call
    on_line = [c for key, c in analysis.calls.items() if key[0] == line and _called_name(c) == function]
    return on_line[0] if len(on_line) == 1 else None


def _holds(frame, condition: tuple) -> str | None:
    """Whether a conditional reason holds in `frame`: "" (or what the caller passed, for a parameter) when one
    of its atoms does, None when none does. An atom is a name that must hold a tensor (`x[i]` reads an element
    only if `x` is one) or ("param", name): a parameter, run-time when the caller's argument is."""
    for atom in condition:
        if type(atom) is str:
            if _is_tensor(frame, atom):
                return ""
        else:
            passed = _passed(frame, atom[1])
            if passed is not None:
                return passed
    return None


_PASS_THROUGH = {"run_jit", "with_dynamic_arguments"}     # @cute.jit's wrappers (dsl.py, dynamic.py)
# (callee code id, parameter, caller code id, caller instruction) -> (text, why, place, the two codes: kept, so that
# their ids are not reused while the entry stands), or (None, the two codes) when the argument is not run-time
_CALLS: dict = {}


def _caller(frame):
    """The frame that called `frame`'s function inside traced code, past @cute.jit's wrappers; None when the
    function was called from the host (a @cute.jit function called from Python, a kernel's launch)."""
    caller = frame.f_back
    while caller is not None and caller.f_code.co_name in _PASS_THROUGH and \
            caller.f_code.co_filename.startswith(_SIM_FOLDER):
        if caller.f_code.co_name == "with_dynamic_arguments" and "bound" in caller.f_locals:
            return None     # the outermost @cute.jit call: its arguments are the host's (dynamic.argument)
        caller = caller.f_back
    if caller is None or caller.f_code.co_filename.startswith(_SIM_FOLDER):
        return None
    known = _LEARNER.get(id(caller.f_code))
    if known is None:
        from .machine.failures import is_learner_file
        known = _LEARNER[id(caller.f_code)] = (is_learner_file(caller.f_code.co_filename), caller.f_code)
    return caller if known[0] else None


def _passed(frame, parameter: str) -> str | None:
    """When the caller of `frame`'s function passes a run-time value as `parameter`: why, in words (the call,
    what it passes and why that is run-time there); None when it passes a Python value (or cannot be told)."""
    caller = _caller(frame)
    if caller is None:
        return None
    key = (id(frame.f_code), parameter, id(caller.f_code), caller.f_lasti)
    found = _CALLS.get(key)
    if found is None:
        if len(_CALLS) > 16384:
            _CALLS.clear()
        found = _CALLS[key] = _argument_at(frame, parameter, caller) or (None, frame.f_code, caller.f_code)
    if found[0] is None:
        return None
    text, why, place = found[0], found[1], found[2]
    detail = "" if why[1] is None else _holds(caller, why[1])
    if detail is None:
        return None
    return f" ({place} passes it `{text}`, which depends on {why[0]}{detail})"


def _argument_at(frame, parameter: str, caller):
    """(the caller's argument for `parameter` as text, why it is run-time by the caller's source, the place),
    or None when the argument is not run-time by the source (or the call cannot be read)."""
    callee, analysis = _analysis(frame.f_code, frame), _analysis(caller.f_code, caller)
    if callee is None or analysis is None:
        return None
    call = _any_call_at(analysis, caller.f_code, caller.f_lasti)
    if call is None or any(isinstance(a, ast.Starred) for a in call.args) or \
            any(k.arg is None for k in call.keywords):
        return None
    argument = next((k.value for k in call.keywords if k.arg == parameter), None)
    if argument is None and parameter in callee.parameters:
        index = callee.parameters.index(parameter)
        if callee.parameters[:1] in (["self"], ["cls"]) and isinstance(call.func, ast.Attribute):
            index -= 1      # a method called on its object: the object is the first parameter
        if 0 <= index < len(call.args):
            argument = call.args[index]
    if argument is None:
        return None         # the parameter's default: a Python value
    why = analysis.why(argument)
    if why is None:
        return None
    from .machine.errors import where_text
    place = f"{where_text(caller.f_code.co_filename, call.lineno)}: `{ast.unparse(call)}`"
    return ast.unparse(argument), why, place, frame.f_code, caller.f_code


def _any_call_at(analysis: _Analysis, code, lasti: int):
    """The call the caller's instruction `lasti` is making (the ast.Call with the instruction's position)."""
    if analysis.every_call is None:
        analysis.every_call = {(n.lineno, n.col_offset, n.end_lineno, n.end_col_offset): n
                               for n in _own_nodes(analysis.node) if isinstance(n, ast.Call)}
    try:
        positions = list(code.co_positions())[lasti // 2]
    except (AttributeError, IndexError):
        return None
    if positions[0] is None:
        return None
    return analysis.every_call.get((positions[0], positions[2], positions[1], positions[3]))


def _is_tensor(frame, name: str) -> bool:
    from ..cute.tensor import Tensor
    value = frame.f_locals.get(name, frame.f_globals.get(name))
    return isinstance(value, Tensor) and not getattr(value, "is_coordinate", False)


# --------------------------------------------------------------------------------------------- 3. by thread

_SIMPLE = (bool, int, float, str, type(None), numpy.bool_, numpy.integer, numpy.floating)
_LEARNER: dict = {}     # id of a code object -> (whether it is the learner's (failures.is_learner_file), the code)


def _differs(thread, frame, value) -> str | None:
    """Why `value` is run-time: it differs from the value at the same point of the trace in another thread, or in
    an earlier pass of this one (a loop the GPU runs: CuTeDSL traces its body once); None if it does not.

    A point of the trace is the learner's call stack, line by line, with the current values of the loops that
    Python runs while tracing (range_constexpr, a loop over a tuple): each pass of those is a point of its own."""
    if not isinstance(value, _SIMPLE) and not (type(value) is tuple and all(isinstance(v, _SIMPLE) for v in value)):
        return None
    point, f = [], frame
    while f is not None:
        code = f.f_code
        known = _LEARNER.get(id(code))
        if known is None:
            from .machine.failures import is_learner_file
            if len(_LEARNER) > 4096:
                _LEARNER.clear()
            known = _LEARNER[id(code)] = (is_learner_file(code.co_filename), code)
        learner = known[0]
        if learner:
            point.append((code, f.f_lasti, _unrolled(f)))
        f = f.f_back
    point = tuple(point)
    seen = thread.block.launch.__dict__.setdefault("constexpr_values", {})
    first = seen.get(point)
    if first is None:
        seen[point] = (value, thread.describe())
        return None
    if first[0] == value:
        return None
    where = "an earlier pass of this thread" if first[1] == thread.describe() else first[1]
    return (f"Its value differs at the same point of the kernel: {first[0]!r} in {where}, {value!r} in "
            f"{thread.describe()}, so it is computed from something a thread has only when the kernel runs (its "
            f"index, a value it loaded, the counter of a `range` loop), not from Python values")


def _unrolled(frame) -> tuple:
    """The current values of the loops around the frame's line that Python runs while tracing (those not over
    `range`): which pass of an unrolled loop this is. For a frame whose source cannot be read (a comprehension),
    all its local values."""
    analysis = _analysis(frame.f_code, frame)
    names = analysis.unrolled_at(frame.f_lineno) if analysis is not None else None
    if names == ():
        return ()
    values = frame.f_locals
    return tuple(_key(values.get(name)) for name in (names or sorted(values)))


def _key(value):
    return value if isinstance(value, _SIMPLE) else id(value)


# --------------------------------------------------------------------------------------------- before a launch

_TRACED: dict = {}      # id of a kernel's code -> ([(guards, line, error's arguments)], the code)


def check_kernel(function):
    """Before a launch (and in cute.compile): the first const_expr / range_constexpr of a run-time value (by the
    kernel's source, sign 2) that CuTeDSL's trace reaches is refused before any thread runs, as CuTeDSL refuses
    to compile the kernel. Run thread by thread, a launch could otherwise stop first at a later line (a warp
    collective some lanes skip) or never reach it (a branch no thread takes), where CuTeDSL would not compile it.

    The trace reaches a line inside run-time `if`s (both sides are traced) and `range` loops (traced once), and
    inside a const_expr `if` whose condition reads only the module's globals and constants when its value (at
    this launch) picks that side, and inside a range_constexpr loop whose bounds do and that runs at least once;
    lines under a condition on an unrolled loop's counter, `if`s on other Python values, `while` and `try` are
    left to the check as threads reach them."""
    code = getattr(function, "__code__", None)
    if code is None:
        return
    found = _TRACED.get(id(code))
    if found is None:
        if len(_TRACED) > 1024:
            _TRACED.clear()
        found = _TRACED[id(code)] = (_traced_refusals(function, code), code)
    for guards, line, arguments in found[0]:
        try:
            if all(bool(eval(test, function.__globals__, {})) == wanted for test, wanted in guards):
                from .machine.errors import where_text
                problem, text = arguments
                raise ConstexprError(problem, kernel=function.__name__, block=(0, 0, 0), thread=(0, 0, 0),
                                     where=where_text(code.co_filename, line), line=text)
        except ConstexprError:
            raise
        except Exception:       # noqa: BLE001 (a guard that cannot be evaluated here: left to the threads)
            continue


def _traced_refusals(function, code) -> list:
    class Globals:
        f_globals = function.__globals__
    analysis = _analysis(code, Globals)
    if analysis is None:
        return []
    lines = linecache.getlines(code.co_filename, function.__globals__)
    found: list = []

    def calls(node, guards):
        for call in ast.walk(node):
            if isinstance(call, ast.Call) and _called_name(call) in ("const_expr", "range_constexpr"):
                refusal(call, guards)

    def refusal(call, guards):
        for argument in call.args:
            why = analysis.why(argument)
            if why is not None and why[1] is None:
                text = ast.unparse(argument)
                if _called_name(call) == "const_expr":
                    problem = (f"{CONST_EXPR_MESSAGE} (CuTeDSL 4.8.1 refuses to compile this: "
                               f"error[PHASE_REQUIRES_CONSTANT].) Here `{text}` is a run-time value: it depends on "
                               f"{why[0]}. {CONST_EXPR_HINT}.")
                else:
                    problem = (f"{RANGE_MESSAGE} (CuTeDSL 4.8.1 refuses to compile this: error[ARG_NON_CONSTANT].) "
                               f"Here `{text}` is a run-time value: it depends on {why[0]}. {RANGE_HINT}.")
                problem += (" CuTeDSL reads this line when it compiles the kernel, whichever threads reach it, so "
                            "the simulator refuses the kernel before any thread runs")
                line = lines[call.lineno - 1].strip() if call.lineno <= len(lines) else None
                found.append((tuple(guards), call.lineno, (problem, line)))
                return

    def static_test(test):
        """The compiled condition of `if cutlass.const_expr(c)` when c reads only globals and constants."""
        if not (isinstance(test, ast.Call) and _called_name(test) == "const_expr" and len(test.args) == 1):
            return None
        argument = test.args[0]
        local = set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars)
        for node in ast.walk(argument):
            if isinstance(node, (ast.Call, ast.Lambda, ast.NamedExpr)) or \
                    (isinstance(node, ast.Name) and node.id in local):
                return None
        return compile(ast.Expression(argument), code.co_filename, "eval")

    def static_bounds(call):
        """`len(range(bounds)) > 0` compiled, when the range_constexpr's bounds read only globals and constants."""
        if call.keywords or not call.args:
            return None
        local = set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars)
        for node in ast.walk(ast.Tuple(elts=call.args, ctx=ast.Load())):
            if isinstance(node, (ast.Call, ast.Lambda, ast.NamedExpr)) or \
                    (isinstance(node, ast.Name) and node.id in local):
                return None
        bounds = ", ".join(ast.unparse(argument) for argument in call.args)
        return compile(f"len(range({bounds})) > 0", code.co_filename, "eval")

    def block(statements, guards):
        for statement in statements:
            if isinstance(statement, ast.If):
                test = statement.test
                if isinstance(test, ast.Call) and _called_name(test) == "const_expr":
                    refusal(test, guards)
                    compiled = static_test(test)
                    if compiled is not None:
                        block(statement.body, guards + [(compiled, True)])
                        block(statement.orelse, guards + [(compiled, False)])
                elif (analysis.why(test) or (None, ""))[1] is None:      # definitely run-time: both sides
                    calls(test, guards)
                    block(statement.body, guards)
                    block(statement.orelse, guards)
            elif isinstance(statement, ast.For):
                if isinstance(statement.iter, ast.Call) and _called_name(statement.iter) in _DYNAMIC_LOOPS:
                    calls(statement.iter, guards)
                    block(statement.body, guards)
                elif isinstance(statement.iter, ast.Call) and _called_name(statement.iter) == "range_constexpr":
                    refusal(statement.iter, guards)
                    runs = static_bounds(statement.iter)
                    if runs is not None:        # traced when it runs at least once (its counter: left to threads)
                        block(statement.body, guards + [(runs, True)])
            elif isinstance(statement, ast.With):
                block(statement.body, guards)
            elif not isinstance(statement, (ast.While, ast.Try, ast.FunctionDef, ast.AsyncFunctionDef,
                                            ast.ClassDef, ast.AsyncFor, ast.AsyncWith, ast.Match)):
                calls(statement, guards)

    block(analysis.node.body, [])
    return found


# --------------------------------------------------------------------------------------------- control flow

EARLY_EXIT_MESSAGE = ("Early exit ({kind}) is not allowed in {where}. A staged for/while/if runs as a whole, so it "
                      "cannot return/break/continue out early.")
EARLY_EXIT_HINT = ("If the condition is decided at compile time, write `if const_expr(...)` or `for ... in "
                   "range_constexpr(...)` -- then the early exit runs in Python and is allowed")
LOOP_ELSE_MESSAGE = "A `for`/`while` loop with an `else:` clause is not supported in compiled code."
LOOP_ELSE_HINT = "Remove the `else:` and put its code after the loop"
_DYNAMIC_RANGES = {"range", "range_dynamic"}    # CuTeDSL stages `for` over these; range_constexpr and others unroll
_FLOW: dict = {}        # id of a code object -> (the refusal's text or "", the code)


class ControlFlowError(ConstexprError):
    """A construct CuTeDSL's rewrite of dynamic control flow rejects (a `return` in a run-time `if`, a `break` in
    a `range` loop, a loop's `else:`): it refuses to compile the function."""


def refuse_control_flow(function) -> None:
    """Raise a ControlFlowError when CuTeDSL 4.8.1 would refuse `function` (a @cute.jit or @cute.kernel function)
    for its control flow: checked once per function, from its source, as CuTeDSL's preprocessor does."""
    code = getattr(function, "__code__", None)
    if code is None:
        return
    found = _FLOW.get(id(code))
    if found is None:
        if len(_FLOW) > 4096:
            _FLOW.clear()
        node = _function_node(code, getattr(function, "__globals__", {}))
        text = "" if node is None else (_flow_refusal(node, code) or "")
        found = _FLOW[id(code)] = (text, code)
    if found[0]:
        raise ControlFlowError(found[0])


def _is_constexpr_test(test) -> bool:
    return isinstance(test, ast.Call) and _called_name(test) in ("const_expr", "target_version")


def _flow_refusal(function: ast.FunctionDef, code) -> str | None:
    """The first construct (in source order, outer before inner, as CuTeDSL visits them) it refuses, in words."""
    parts = code.co_qualname.split(".") if hasattr(code, "co_qualname") else [code.co_name]
    where = f"`{function.name}`" + (f" in `{parts[-2]}`" if len(parts) > 1 and parts[-2] != "<locals>" else "")

    def place(node) -> str:
        line = linecache.getline(code.co_filename, node.lineno).strip()
        from .machine.errors import where_text
        return f"{where_text(code.co_filename, node.lineno)}: `{line}`"

    def early(node, kind: str) -> str | None:
        offender = _early_exit(node, kind)
        if offender is None:
            return None
        what = type(offender).__name__.lower()
        return (f"{EARLY_EXIT_MESSAGE.format(kind=what, where=where)} (CuTeDSL 4.8.1 refuses to compile this: "
                f"error[UNSUP_EARLY_EXIT].) At {place(offender)}. {EARLY_EXIT_HINT}.")

    def loop_else(node) -> str | None:
        if not node.orelse:
            return None
        return (f"{LOOP_ELSE_MESSAGE} (CuTeDSL 4.8.1 refuses to compile this: error[UNSUP_LOOP_ELSE].) At "
                f"{place(node)}. {LOOP_ELSE_HINT}.")

    def outside_loop(node) -> str | None:
        """A `break`/`continue` in a run-time `if` whose loop is around the `if`: CuTeDSL makes the `if`'s body
        a function, and Python refuses the statement there (SyntaxError: 'break' outside loop)."""
        offender = _early_exit(node, "if-loop")
        if offender is None:
            return None
        what = type(offender).__name__.lower()
        return (f"'{what}' outside loop (CuTeDSL 4.8.1 refuses to compile this with a SyntaxError: it makes the "
                f"body of an `if` on a run-time condition a function of its own, and a `{what}` there has no loop "
                f"around it.) At {place(offender)}. Decide the condition at compile time with "
                f"`if cutlass.const_expr(...)`, or keep the loop going and guard its body instead.")

    def visit(statements) -> str | None:
        for node in statements:
            found = None
            if isinstance(node, ast.If) and not _is_constexpr_test(node.test):
                found = early(node, "if") or outside_loop(node)
            elif isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and \
                    _called_name(node.iter) in _DYNAMIC_RANGES:
                found = early(node, "for") or loop_else(node)
            elif isinstance(node, ast.While) and not _is_constexpr_test(node.test):
                found = loop_else(node) or early(node, "while")
            if found:
                return found
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, field, None)
                if isinstance(inner, list) and inner and not isinstance(node, (ast.FunctionDef, ast.ClassDef,
                                                                               ast.AsyncFunctionDef)):
                    found = visit([n for n in inner if isinstance(n, (ast.stmt, ast.excepthandler))])
                    if found:
                        return found
        return None

    return visit(function.body)


def _early_exit(node, kind: str):
    """CuTeDSL's EarlyExitChecker: the first `return`/`raise` in a staged region, or a `break`/`continue` not
    inside a loop of the region's own (for a loop; for an `if`, kind "if-loop" finds only those)."""
    stack = [(child, 0) for child in reversed(list(ast.iter_child_nodes(node)))]
    while stack:
        child, depth = stack.pop()
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(child, (ast.Return, ast.Raise)) and kind != "if-loop":
            return child
        if isinstance(child, (ast.Break, ast.Continue)) and depth == 0 and kind != "if":
            return child
        inner = depth + isinstance(child, (ast.For, ast.While))
        stack.extend((grand, inner) for grand in reversed(list(ast.iter_child_nodes(child))))
    return None


# --------------------------------------------------------------------------------------------- print

_PRINTS: dict = {}      # (id of the code, instruction) -> (what each argument of the print there is, the code)
_NUMBER_NAMES = {"Int8": "Int8", "Int16": "Int16", "Int32": "Int32", "Int64": "Int64", "Uint8": "Uint8",
                 "Uint16": "Uint16", "Uint32": "Uint32", "Uint64": "Uint64", "Float16": "Float16",
                 "BFloat16": "BFloat16", "Float32": "Float32", "Float64": "Float64", "Boolean": "Boolean"}


def trace_args(args: tuple, frame) -> tuple:
    """Python print's arguments as CuTeDSL's trace shows them: `?` for a run-time value (a thread's index and
    what is computed from it, an element of a tensor, a DSL-number argument, a DSL number made in a kernel, the
    counter of a `range` loop, a helper's parameter its caller gave one of these), `(Int32(?), Int32(?),
    Int32(?))` for thread_idx()'s tuple, the value otherwise.
    The source of the print is read once per place (by the analysis const_expr uses)."""
    key = (id(frame.f_code), frame.f_lasti)
    site = _PRINTS.get(key)
    if site is None:
        if len(_PRINTS) > 4096:
            _PRINTS.clear()
        site = _PRINTS[key] = (_print_site(frame), frame.f_code)
    verdicts = site[0]
    in_kernel = machine._current[0] is not None
    return tuple(_shown(value, verdicts[i] if i < len(verdicts) else None, frame, in_kernel)
                 for i, value in enumerate(args))


def _print_site(frame) -> list:
    analysis = _analysis(frame.f_code, frame)
    call = None if analysis is None else _call_at(analysis, frame.f_code, frame.f_lasti, frame.f_lineno, "print")
    if call is None or any(isinstance(a, ast.Starred) for a in call.args):
        return []
    unrolled = set(analysis.unrolled_at(frame.f_lineno))
    if unrolled:        # a name counting an unrolled loop here is a Python value, whatever other loops it counts
        view = object.__new__(_Analysis)
        view.__dict__.update(analysis.__dict__)
        view.taints = {name: why for name, why in analysis.taints.items() if name not in unrolled}
        analysis = view
    return [_print_verdict(analysis, argument) for argument in call.args]


_ONCE: dict = {}        # (id of the code, line) -> (whether the line is in a loop the GPU runs, the code)


def traced_once(frame) -> bool:
    """Whether the frame's line is inside a `range` or `while` loop: CuTeDSL traces its body once, so a print
    there prints once."""
    key = (id(frame.f_code), frame.f_lineno)
    found = _ONCE.get(key)
    if found is None:
        if len(_ONCE) > 4096:
            _ONCE.clear()
        analysis = _analysis(frame.f_code, frame)
        inside = analysis is not None and any(first < frame.f_lineno <= last
                                              for first, last in analysis.dynamic_loops)
        found = _ONCE[key] = (inside, frame.f_code)
    return found[0]


def _print_verdict(analysis: _Analysis, node):
    """("run", tensor name or None), ("number",), ("tuple", [verdicts]), ("fstring", code), or None."""
    if isinstance(node, ast.Tuple):
        inner = [_print_verdict(analysis, element) for element in node.elts]
        return ("tuple", inner) if any(inner) else None
    if isinstance(node, ast.JoinedStr):
        parts, conditions = [], []
        for part in node.values:
            why = analysis.why(part.value) if isinstance(part, ast.FormattedValue) else None
            if isinstance(part, ast.FormattedValue) and (why is not None and why[1] is None or
                                                         _number_call(part.value)):
                parts.append(ast.Constant("?"))
                conditions.append(None)
            elif why is not None:       # `?` when its condition holds (a parameter the caller gave a run-time value)
                call = ast.Call(ast.Name("__cutekit_shown__", ast.Load()),
                                [ast.Constant(len(conditions)), part.value], [])
                parts.append(ast.FormattedValue(call, part.conversion, part.format_spec))
                conditions.append(why[1])
            else:
                parts.append(part)
        if not conditions:
            return None
        expression = ast.Expression(ast.JoinedStr(parts))
        ast.fix_missing_locations(ast.copy_location(expression.body, node))
        return "fstring", compile(expression, "<print>", "eval"), conditions
    found = analysis.why(node)
    if found is not None:
        return "run", found[1]
    return ("number",) if _number_call(node) else None


def _number_call(node) -> bool:
    """`cutlass.Int32(3)` and the like, or arithmetic on one: a DSL number, a run-time value in a kernel."""
    if isinstance(node, ast.Call):
        return _called_name(node) in _NUMBER_NAMES
    if isinstance(node, ast.BinOp):
        return _number_call(node.left) or _number_call(node.right)
    if isinstance(node, ast.UnaryOp):
        return _number_call(node.operand)
    return False


class _Shown(str):
    """A text print shows as it is (str) and a tuple shows as it is too (repr)."""

    def __repr__(self):
        return str(self)


class _Unknown:
    """A run-time value inside an f-string: `?` however it is formatted."""

    def __format__(self, spec):
        return "?"

    def __str__(self):
        return "?"

    __repr__ = __str__


_UNKNOWN = _Unknown()


def _scalar(value) -> bool:
    return isinstance(value, (bool, int, float, numpy.generic)) or (
        isinstance(value, numpy.ndarray) and getattr(machine._current[0], "vectorized", False))


def _named(value) -> str:
    """How CuTeDSL writes a run-time number inside a tuple: Int32(?), Float32(?), Boolean(?)."""
    if isinstance(value, (bool, numpy.bool_)):
        return "Boolean(?)"
    if isinstance(value, (float, numpy.floating)):
        return "Float32(?)"
    if isinstance(value, numpy.ndarray):
        return "Boolean(?)" if value.dtype == bool else "Float32(?)" if value.dtype.kind == "f" else "Int32(?)"
    return "Int32(?)"


def _shown(value, verdict, frame, in_kernel: bool):
    from .machine.failures import Dim3
    if isinstance(value, Dim3):
        return _Shown("(Int32(?), Int32(?), Int32(?))")
    if verdict is None:
        if isinstance(value, numpy.ndarray) and getattr(machine._current[0], "vectorized", False):
            return _Shown("?")
        return value
    kind = verdict[0]
    if kind == "run":
        if verdict[1] is not None and _holds(frame, verdict[1]) is None:
            return value
        if _scalar(value):
            return _Shown("?")
        if type(value) is tuple and all(_scalar(v) for v in value):
            return _Shown("(" + ", ".join(_named(v) for v in value) + ")")
        return value
    if kind == "number":
        return _Shown("?") if in_kernel and _scalar(value) else value
    if kind == "tuple":
        if type(value) is not tuple or len(value) != len(verdict[1]):
            return value
        parts = []
        for element, inner in zip(value, verdict[1]):
            shown = _shown(element, inner, frame, in_kernel)
            parts.append(_named(element) if isinstance(shown, _Shown) and shown == "?" else repr(shown))
        return _Shown("(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")")
    if kind == "fstring":
        def shown(index, part):
            condition = verdict[2][index]
            return _UNKNOWN if condition is not None and _holds(frame, condition) is not None else part
        try:
            return eval(verdict[1], frame.f_globals,        # noqa: S307 - the learner's own f-string
                        {**frame.f_locals, "__cutekit_shown__": shown})
        except Exception:  # noqa: BLE001 - print what Python computed
            return value
    return value


tracing.SOURCE_ANALYSIS[:] = [sys.modules[__name__]]     # prints below the face read run-time values through this
