"""The explorer and picture calls the course and solution notebooks make, read from the notebooks themselves
(`course/*.py` and `solutions/*.py`, jupytext's percent format, which `make sync` keeps equal to the .ipynb
files), each with the statements before it that it needs, so a test can make the call as the notebook does.

A call's setup is a slice of the notebook: for every name the call reads, the last top-level statement that
binds it before the call (an assignment, an import, a def, a for loop), any later statement that changes
it in place (`x[k] = ...`, `x += ...`), and, in turn, what those statements read. Prints, asserts, checks
and kernel launches that the call does not need are left out, so every call is made in milliseconds without
a GPU, the simulator, or the rest of the chapter.

    for call in notebook_calls("widgets"):
        explorer = call.make()          # runs the setup, then the call, in a fresh namespace
"""
from __future__ import annotations

import ast
import builtins
import dataclasses
import functools
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
FOLDERS = ("course", "solutions")
PICTURES = ("layout", "layout_inverse", "tv_layout", "divide", "local_tile", "local_partition", "tiled_copy",
            "copy_partition", "tiled_mma", "ldmatrix", "swizzle")


@dataclasses.dataclass(frozen=True)
class NotebookCall:
    notebook: str           # "course/04_local_tile_partition.py"
    line: int               # the call's line in that file
    module: str             # "widgets" or "render"
    function: str           # "partition_explorer"
    text: str               # the call as written
    setup: tuple            # the statements (source text) that run before it, in notebook order

    @property
    def name(self) -> str:
        return f"{self.notebook}:{self.line} {self.text}"

    def make(self):
        """Run the setup in a fresh namespace, then the call; return what the call returns."""
        namespace = {"__name__": "__notebook__"}
        for source in self.setup:
            exec(compile(source, f"{self.notebook} (setup)", "exec"), namespace)
        return eval(compile(self.text, f"{self.notebook}:{self.line}", "eval"), namespace)


def code_statements(path: pathlib.Path) -> list:
    """Every top-level statement of the notebook's code cells, in order, as (ast node, first line, source)."""
    lines = path.read_text().splitlines()
    statements, start, markdown = [], None, True

    def flush(end):
        if start is None or markdown:
            return
        cell = lines[start:end]
        tree = ast.parse("\n".join(cell))
        for node in tree.body:      # a top-level statement starts at column 0; its end column counts UTF-8 bytes
            last = cell[node.end_lineno - 1].encode()[:node.end_col_offset].decode()
            text = "\n".join(cell[node.lineno - 1:node.end_lineno - 1] + [last])
            statements.append((node, start + node.lineno, text))

    for number, line in enumerate(lines):
        if line.startswith("# %%"):
            flush(number)
            start, markdown = number + 1, "[markdown]" in line
    flush(len(lines))
    return statements


def _loads(node) -> set:
    """The names a statement or expression reads (a def: what its body reads, less its own arguments)."""
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return names - set(dir(builtins))


def _binds(node) -> tuple:
    """(names the statement binds as a whole, names it changes in place)."""
    whole, changed = set(), set()

    def target(t):
        if isinstance(t, ast.Name):
            whole.add(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for element in t.elts:
                target(element)
        elif isinstance(t, ast.Starred):
            target(t.value)
        elif isinstance(t, (ast.Subscript, ast.Attribute)):
            base = t.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                changed.add(base.id)

    if isinstance(node, ast.Assign):
        for t in node.targets:
            target(t)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        target(node.target)
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            changed.add(node.target.id)
    elif isinstance(node, ast.For):
        target(node.target)
        for inner in ast.walk(node):
            if inner is not node and isinstance(inner, (ast.Assign, ast.AugAssign)):
                inner_whole, inner_changed = _binds(inner)
                changed |= inner_changed
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            whole.add((alias.asname or alias.name).split(".")[0])
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        whole.add(node.name)
    return whole, changed


def _slice(statements, position, names) -> set:
    """Indices of the statements before `position` that the `names` need (see the module docstring)."""
    chosen = set()
    pending = [(position, name) for name in names]
    seen = set()
    while pending:
        before, name = pending.pop()
        if (before, name) in seen:
            continue
        seen.add((before, name))
        for index in range(before - 1, -1, -1):
            whole, changed = _binds(statements[index][0])
            if name in whole or name in changed:
                if index not in chosen:
                    chosen.add(index)
                    pending += [(index, needed) for needed in _loads(statements[index][0])]
                if name in whole and not isinstance(statements[index][0], ast.AugAssign):
                    break           # the last whole binding: anything earlier is overwritten
    return chosen


def _calls_in(node, modules):
    """Calls `module.function(...)` in a statement, outside any def."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
        return
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            isinstance(node.func.value, ast.Name) and node.func.value.id in modules:
        yield node
    for child in ast.iter_child_nodes(node):
        yield from _calls_in(child, modules)


def _wanted(module, function) -> bool:
    return function.endswith("_explorer") if module == "widgets" else function in PICTURES


@functools.lru_cache(maxsize=None)
def notebook_calls(*modules) -> tuple:
    """Every call of an explorer (module "widgets") or a picture (module "render") in the course and solution
    notebooks, in file order."""
    found = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).glob("[0-9][0-9]_*.py")):
            statements = code_statements(path)
            for position, (node, first_line, source) in enumerate(statements):
                for call in _calls_in(node, set(modules)):
                    module, function = call.func.value.id, call.func.attr
                    if not _wanted(module, function):
                        continue
                    text = ast.unparse(call)
                    setup = tuple(statements[i][2] for i in sorted(_slice(statements, position, _loads(call))))
                    found.append(NotebookCall(f"{folder}/{path.name}", first_line + call.lineno - node.lineno,
                                              module, function, text, setup))
    return tuple(found)
