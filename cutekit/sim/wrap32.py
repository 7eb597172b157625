"""Int32 arithmetic that wraps where a GPU's wraps: what a comparison, `//`, `%` or `>>` sees of a run-time int.

In CuTeDSL a thread's index, an element of an Int32 tensor and what is computed from them are Int32 values: a
product past 2**31 keeps its low 32 bits (two's complement), so `x = tidx * 100000000` is negative in thread 22
and `if x < 0:` takes that branch. The simulator keeps them as Python ints (their arithmetic costs nothing
extra), so a sum, difference or product (and `^ & | <<`) is exact and only its low 32 bits count: the store
keeps them (memory/tensors.py), and so would any other +, -, *. What does not commute with keeping the low
bits is a comparison (and `min`, `max`, `abs`), `//`, `%`, `>>`, a test (`if x:`), a conversion
(`cutlass.Float32(x)`, `cutlass.Int64(x)`) and `cute.printf`: `rewrite` compiles a kernel (or @cute.jit
function) again from its source with those operands passed through `int32` when the source shows them to be
run-time ints (the analysis cutlass.const_expr uses: constexpr._Analysis), not 64-bit or unsigned ones
(`cutlass.Int64(...)`, `Uint32`, `Uint64` and what is computed from them).
An Int32 argument and what is computed from it (memory/numbers.py's Integer) wraps by its own arithmetic.

A run-time integer `%` is also computed as the GPU computes it: with the dividend's sign (CuTeDSL 4.8.1 emits
arith.remsi, C's remainder: `(tidx - 8) % 5` is -3 in thread 0), where Python's % takes the divisor's; `//`
floors, as Python's does (CuTeDSL corrects the truncating division).

>>> int32(22 * 100000000), int32(-2**31), int32(2**31), int32(7)
(-2094967296, -2147483648, -2147483648, 7)
"""
from __future__ import annotations

import __future__
import ast
import copy
import types

import numpy

from . import constexpr

_LOW, _HIGH = -(1 << 31), (1 << 31) - 1


def int32(value):
    """A plain int as a 32-bit register holds it; anything else (a DSL number, a float, a vector) as it is."""
    if type(value) is int and not _LOW <= value <= _HIGH:
        value &= 0xFFFFFFFF
        return value - (1 << 32) if value > _HIGH else value
    return value


def remainder(a, b):
    """`a % b` as the GPU computes it for integers (CuTeDSL 4.8.1 emits arith.remsi: the sign of `a`, C's `%`:
    (tidx - 8) % 5 is -3 in thread 0, where Python's % gives 2); Python's % for anything else."""
    if type(a) is int and type(b) is int and b:
        a, b = int32(a), int32(b)
        r = abs(a) % abs(b)
        return -r if a < 0 else r
    if isinstance(a, numpy.ndarray) and a.dtype.kind == "i" and (type(b) is int or isinstance(b, numpy.ndarray) and
                                                                  b.dtype.kind == "i"):
        return numpy.fmod(a, b)     # a launch run as vectors: C's remainder too
    return a % b


_NAME = "__cutekit_int32__"
_REMAINDER = "__cutekit_remainder__"
_WIDE_CALLS = {"Int64", "Uint64", "Uint32", "Float16", "Float32", "Float64", "BFloat16", "TFloat32", "float"}
_SEEN_OPS = (ast.FloorDiv, ast.Mod, ast.RShift)
_SEEING_CALLS = {"min", "max", "abs", "printf", "float", "bool", "Int8", "Int16", "Int32", "Int64", "Float16",
                 "BFloat16", "Float32", "Float64", "TFloat32"}     # not Uint32(x): its value is x's 32 bits
_FUTURE = __future__.annotations.compiler_flag


def rewrite(function):
    """`function` compiled again with its run-time int comparisons, `//`, `%` and `>>` seeing 32-bit values;
    `function` itself when there is nothing to change or its source cannot be read (a lambda, a method using
    private names or `super()`, a generator)."""
    code = getattr(function, "__code__", None)
    if code is None or code.co_flags & 0x2A0 or "__class__" in code.co_freevars:     # generator, coroutine
        return function
    try:
        node = constexpr._function_node(code, function.__globals__)
    except Exception:  # noqa: BLE001 - unreadable source: the function as it is
        return function
    if node is None or isinstance(node, ast.AsyncFunctionDef):
        return function
    if any(isinstance(n, ast.Name) and n.id.startswith("__") and not n.id.endswith("__") or
           isinstance(n, ast.Attribute) and n.attr.startswith("__") and not n.attr.endswith("__") or
           isinstance(n, ast.Name) and n.id == "super" for n in ast.walk(node)):
        return function         # names a class mangles, or super(): compiled outside the class they differ
    analysis = constexpr._Analysis(node)
    original, node = _bare(copy.deepcopy(node)), copy.deepcopy(node)
    changer = _Changer(analysis, _wide_names(node))
    for statement in node.body:
        changer.visit(statement)
    if not changer.changed:
        return function
    try:        # the source read must be the code that runs (a file edited since, a module made from a string)
        if not _same(_compiled(original, code, function).__code__, code):
            return function
        inner = _compiled(_bare(node), code, function)
        cells = dict(zip(code.co_freevars, function.__closure__ or ()))
        cells[_NAME], cells[_REMAINDER] = types.CellType(int32), types.CellType(remainder)
        new_code = inner.__code__
        closure = tuple(cells[name] for name in new_code.co_freevars)
    except Exception:  # noqa: BLE001 - anything unexpected: the function as it is
        return function
    changed = types.FunctionType(new_code, function.__globals__, function.__name__, function.__defaults__,
                                 closure or None)
    changed.__kwdefaults__ = function.__kwdefaults__
    changed.__annotations__ = function.__annotations__
    changed.__qualname__, changed.__module__, changed.__doc__ = \
        function.__qualname__, function.__module__, function.__doc__
    changed.__dict__.update(function.__dict__)
    return changed


def _bare(node):
    """The function's definition without decorators, annotations and defaults (the function object keeps the
    original's): what is compiled again."""
    node.decorator_list = []
    for argument in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
        argument.annotation = None          # the function object keeps the original's (and defaults)
    for argument in (node.args.vararg, node.args.kwarg):
        if argument is not None:
            argument.annotation = None
    node.args.defaults, node.args.kw_defaults, node.returns = [], [None] * len(node.args.kwonlyargs), None
    return node


def _compiled(node, code, function):
    """The function `node` defines, compiled in the original's file and lines, inside a function whose
    parameters are its free variables and int32's name (so that it has the same closure, and one cell more)."""
    outer = ast.FunctionDef(
        name="__cutekit_outer__", args=ast.arguments(posonlyargs=[], args=[ast.arg(name) for name in (
            *code.co_freevars, _NAME, _REMAINDER)], kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[node, ast.Return(ast.Name(node.name, ast.Load()))], decorator_list=[], returns=None)
    # the module's imports, never run: CPython 3.11 compiles `module.f(x)` of an imported name differently
    imports = [copy.deepcopy(n) for n in (constexpr._TREES.get(code.co_filename, (None, None))[1] or
                                          ast.Module([], [])).body if isinstance(n, (ast.Import, ast.ImportFrom))
               and not (isinstance(n, ast.ImportFrom) and n.module == "__future__")]
    body = [ast.If(ast.Constant(False), imports, [])] if imports else []
    module = ast.Module(body + [ast.copy_location(outer, node)], type_ignores=[])
    ast.fix_missing_locations(module)
    compiled = compile(module, code.co_filename, "exec", flags=code.co_flags & _FUTURE, dont_inherit=True)
    namespace: dict = {}
    exec(compiled, function.__globals__, namespace)     # noqa: S102 - the learner's own function, recompiled
    return namespace["__cutekit_outer__"](*([None] * len(code.co_freevars)), int32, remainder)


def _same(a, b) -> bool:
    """Whether two code objects run the same instructions on the same names and constants (their line tables
    may differ: one was compiled without its decorators)."""
    if a.co_code != b.co_code or a.co_names != b.co_names or a.co_varnames != b.co_varnames or \
            set(a.co_freevars) != set(b.co_freevars) or len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if isinstance(x, types.CodeType) != isinstance(y, types.CodeType):
            return False
        if isinstance(x, types.CodeType) and not _same(x, y) or not isinstance(x, types.CodeType) and (
                type(x) is not type(y) or x != y):
            return False
    return True


def _wide_names(function: ast.FunctionDef) -> set:
    """Names assigned a 64-bit, unsigned or float value (from `cutlass.Int64(...)` and the like), or one computed
    from such a name: their comparisons are left as they are."""
    wide: set = set()
    for _ in range(8):
        before = len(wide)
        for node in ast.walk(function):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None and \
                    _is_wide(node.value, wide):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                wide.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        if len(wide) == before:
            break
    return wide


def _is_wide(expression, wide: set) -> bool:
    for node in ast.walk(expression):
        if isinstance(node, ast.Name) and node.id in wide:
            return True
        if isinstance(node, ast.Call) and constexpr._called_name(node) in _WIDE_CALLS:
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, float):
            return True
    return False


class _Changer(ast.NodeTransformer):
    def __init__(self, analysis, wide: set):
        self.analysis, self.wide, self.changed = analysis, wide, False

    def _seen(self, operand):
        """`operand` passed through int32 when the source shows a run-time int there."""
        if isinstance(operand, (ast.Constant, ast.Tuple, ast.List, ast.JoinedStr)) or \
                _is_wide(operand, self.wide) or self.analysis.why(operand) is None:
            return operand
        self.changed = True
        return ast.copy_location(ast.Call(ast.Name(_NAME, ast.Load()), [operand], []), operand)

    def visit_Compare(self, node):
        self.generic_visit(node)
        node.left = self._seen(node.left)
        node.comparators = [self._seen(c) for c in node.comparators]
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Mod) and not isinstance(node.left, (ast.Constant, ast.JoinedStr)) and \
                not _is_wide(node, self.wide) and self.analysis.why(node) is not None:
            self.changed = True
            return ast.copy_location(ast.Call(ast.Name(_REMAINDER, ast.Load()), [node.left, node.right], []), node)
        if isinstance(node.op, _SEEN_OPS):
            node.left, node.right = self._seen(node.left), self._seen(node.right)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        if constexpr._called_name(node) in _SEEING_CALLS:     # they compare, print or convert the 32-bit value
            node.args = [a if isinstance(a, ast.Starred) else self._seen(a) for a in node.args]
        return node

    def _tested(self, node):
        """`if x:` of a run-time int: the register is zero or not (a Compare or `and`/`or` gives a bool)."""
        self.generic_visit(node)
        if isinstance(node.test, (ast.Name, ast.BinOp, ast.Subscript)):
            node.test = self._seen(node.test)
        return node

    visit_If = visit_While = visit_IfExp = _tested

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if isinstance(node.op, _SEEN_OPS) and isinstance(node.target, ast.Name):
            value = ast.copy_location(ast.BinOp(ast.copy_location(ast.Name(node.target.id, ast.Load()),
                                                                  node.target), node.op, node.value), node)
            return ast.copy_location(ast.Assign([node.target], self.visit_BinOp(value)), node)
        return node

    def visit_FunctionDef(self, node):      # a function defined inside: compiled as it is
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef
