"""Every CuTeDSL name the course uses, where its prose first says it, and the reference notebook built from them.

    python scripts/vocabulary.py            # write solutions/90_reference.py and cutekit/reference_table.py
    python scripts/vocabulary.py --check    # write nothing; list every problem (names used before prose says
                                            # them, names without a description, stale files); exit 1 if any
    python scripts/vocabulary.py --list     # every name, its first use and the prose that first says it

The rules (what a use is, what saying it is) are stated in tests/test_vocabulary.py, which checks them. In
short: each chapter source is read as its cells, in order; a code cell uses the attribute chains rooted at a
CuTeDSL module (import aliases resolved with `ast`), the names imported from one, the methods in METHODS, the
kernel lines it prints with `kernel_lines`, and the @cute functions of a course kernel module it imports; a
markdown cell at or before it teaches a name by writing its last component in backticks (its last two for a
class member or a name two modules define, after a dot for a word Python also uses).

The one-line descriptions live in scripts/vocabulary_descriptions.toml; `make sync` runs this script before
scripts/generate_course.py, which makes the reference's notebooks like any chapter's.
"""
from __future__ import annotations

import argparse
import ast
import builtins
import importlib.util
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))   # the course's kernel modules (benchmarks.kernels)
from generate_course import REFERENCE  # noqa: E402  (the reference notebook's name, for the generator too)

ROOT = Path(__file__).resolve().parent.parent
SOURCE = "solutions"
DESCRIPTIONS = Path(__file__).resolve().parent / "vocabulary_descriptions.toml"
TABLE_MODULE = "cutekit/reference_table.py"
FIX = "python scripts/vocabulary.py (or make sync)"

# module path -> the name the course writes it by; the longest prefix wins
MODULES = {
    "cutlass": "cutlass",
    "cutlass.cute": "cute",
    "cutekit.cute": "cute",             # cutekit's reference algebra mirrors cutlass.cute's names
    "cutekit.cute.utils": "cutlass.utils",      # and cutlass.utils' host-side helpers (blackwell_helpers),
    "cutekit.cute.memory": "cutlass.memory",    # cutlass.memory's (get_num_tmem_alloc_cols)
    "cutekit.cute.tensor_utils": "cutlass.tensor_utils",    # and cutlass.tensor_utils' (LayoutEnum)
}
NOT_CUTEDSL = ("cutekit.cute.not_in_cutedsl",)      # cutekit's own views of what CuTeDSL keeps inside its IR
# a component that names a module, not a function or class (importing a module uses no name yet)
MODULE_NAMES = {"cutlass", "cute", "arch", "nvgpu", "warp", "warpgroup", "cpasync", "tcgen05", "runtime",
                "testing", "utils", "pipeline", "torch", "common", "memory", "tensor_utils"}

# Methods and properties of CuTeDSL objects (tensors, layouts, atoms, TiledCopy/TiledMma and their thread
# slices, numbers, shared-memory allocators, kernels) that a course cell calls or reads. A name here is
# tracked on any object but an imported module (`render.layout` is cutekit's); `to` is left out, torch's
# tensors have it too (`shape` is kept: a torch shape and a layout's shape are the same idea).
METHODS = {
    # kernels
    "launch",
    # tensors and layouts
    "load", "store", "reduce", "fill", "iterator", "element_type", "layout", "shape", "stride",
    "mark_layout_dynamic", "width", "get_flat_coord",
    # shared memory
    "allocate_tensor", "allocate_array",
    # copies
    "get_slice", "partition_S", "partition_D", "retile", "tiler_mn", "layout_tv_tiled", "layout_src_tv",
    "layout_dst_tv", "layout_src_tv_tiled", "layout_dst_tv_tiled",
    # MMAs
    "partition_A", "partition_B", "partition_C", "make_fragment_A", "make_fragment_B", "make_fragment_C",
    "thr_layout_vmnk", "tv_layout_A", "tv_layout_B", "tv_layout_C", "tv_layout_A_tiled", "tv_layout_B_tiled",
    "tv_layout_C_tiled", "set", "get_tile_size",
    # swizzles and composed layouts
    "inner", "outer",
}
# A last component that Python or the prose also uses for something else (`range`, `copy`, a tensor's
# `inner` mode): prose teaches it only written after a dot (`cutlass.range`, `cute.copy`, `.inner`).
AMBIGUOUS = {name for name in dir(builtins) if name.islower() and not name.startswith("_")} | {
    "copy", "get", "inner", "outer"}
IDENTIFIER = re.compile(r"\.?[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")   # `.inner` keeps its dot
CELL = re.compile(r"^# %%(?: \[markdown\])?[ \t]*$")


@dataclass(frozen=True)
class Cell:
    chapter: str
    index: int
    kind: str           # "markdown" | "code"
    line: int           # 1-based line of the cell's first line of text in the chapter source
    text: str


@dataclass(frozen=True)
class Use:
    chapter: str
    cell: int
    line: int           # line in the chapter source
    name: str           # `cute.arch.sync_threads`, `cute.runtime.from_dlpack`, `.load`
    origin: str = ""    # for a kernel's line: `benchmarks/kernels/hopper_gemm.py:212`, which the cell prints ...
    runs: bool = False  # ... or which is a line of a kernel module the cell imports (and runs)


def read_cells(path: Path) -> list[Cell]:
    """The cells of a percent-format source, in order; markdown cells without their `# ` prefixes."""
    lines = path.read_text().splitlines()
    start = 0
    if lines and lines[0] == "# ---":          # jupytext's header
        start = lines.index("# ---", 1) + 1
    cells, kind, first, body = [], None, 0, []

    def close():
        if kind is not None:
            text = "\n".join(re.sub(r"^# ?", "", b) if kind == "markdown" else b for b in body)
            cells.append(Cell(path.stem, len(cells), kind, first, text))

    for number, line in enumerate(lines[start:], start + 1):
        if CELL.match(line):
            close()
            kind, first, body = ("markdown" if "[markdown]" in line else "code"), number + 1, []
        elif kind is not None:
            body.append(line)
    close()
    return cells


# ---- what a code cell uses ------------------------------------------------------------------------------------

def canonical(module: str) -> str | None:
    """`cutlass.cute.nvgpu.warpgroup` -> `cute.nvgpu.warpgroup`; None for a module that is not CuTeDSL's."""
    if any(module == m or module.startswith(m + ".") for m in NOT_CUTEDSL):
        return None
    for prefix in sorted(MODULES, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return MODULES[prefix] + module[len(prefix):]
    return None


def imports(tree: ast.AST, aliases: dict[str, str | None]) -> list[tuple[int, str]]:
    """Record the tree's imports in `aliases` (local name -> canonical CuTeDSL path, or None for a module that
    is not CuTeDSL's: torch, cutekit's render); return the (line, name) of every CuTeDSL function or class
    imported by name (`from cutlass.cute.runtime import from_dlpack`)."""
    named = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                # `import cutlass.cute` binds `cutlass`; `import cutlass.cute as cute` binds the submodule
                aliases[local] = canonical(alias.name if alias.asname else alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                path = canonical(f"{node.module}.{alias.name}")
                aliases[alias.asname or alias.name] = path
                if path is not None and alias.name not in MODULE_NAMES:
                    named.append((node.lineno, path))
    return named


def chain(node: ast.Attribute) -> tuple[ast.expr, list[str]]:
    """`a.b.c` -> (Name a, ["b", "c"])."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return node, parts[::-1]


def uses_in(tree: ast.AST, aliases: dict[str, str | None]) -> list[tuple[int, str]]:
    """(line, name) for every CuTeDSL name the tree calls or reads, in source order."""
    found = imports(tree, aliases)
    inner = set()           # attribute nodes that are the value of another attribute: not chains of their own
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            inner.add(id(node.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            root, parts = chain(node)
            imported = isinstance(root, ast.Name) and root.id in aliases
            if imported and aliases[root.id] is not None:
                if id(node) not in inner:
                    found.append((node.lineno, ".".join([aliases[root.id], *parts])))
            elif node.attr in METHODS and not imported:     # a method of an object, not of a module
                found.append((node.lineno, "." + node.attr))
        elif isinstance(node, ast.Name) and aliases.get(node.id) and isinstance(node.ctx, ast.Load):
            path = aliases[node.id]
            if path.split(".")[-1] not in MODULE_NAMES:
                found.append((node.lineno, path))
    # a chain's root is also a Name: keep only the chain (a bare module name is no use of a name)
    return sorted(set(found))


def parse(source: str) -> ast.AST | None:
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def module_aliases(module: str) -> tuple[Path, dict[str, str | None]]:
    """A course module's file and the aliases its own imports make."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin:
        raise ValueError(f"vocabulary: no module {module!r} on this path (run from the repository root)")
    path = Path(spec.origin)
    aliases: dict[str, str | None] = {}
    imports(ast.parse(path.read_text()), aliases)
    return path, aliases


def shown_lines(node: ast.Call) -> tuple[str, str, str, bool] | None:
    """The literal arguments of a `kernel_lines(module, first, last, through=...)` call, or None."""
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    if name != "kernel_lines" or len(node.args) < 3:
        return None
    if not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args[:3]):
        return None
    through = any(k.arg == "through" and isinstance(k.value, ast.Constant) and k.value.value for k in node.keywords)
    return node.args[0].value, node.args[1].value, node.args[2].value, through


def excerpt_uses(module: str, first: str, last: str, through: bool) -> list[tuple[int, str]]:
    """(line in the module, name) for the CuTeDSL names of the lines kernel_lines shows."""
    path, aliases = module_aliases(module)
    lines = path.read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if first in line), None)
    end = next((i for i in range(start + 1, len(lines)) if last in lines[i]), None) if start is not None else None
    if end is None:
        raise ValueError(f"vocabulary: {module} has no line containing {first!r} followed by one containing {last!r}")
    chosen = lines[start:end + 1 if through else end]
    text = textwrap.dedent("\n".join(chosen))
    tree = parse(text)
    if tree is None:        # an excerpt that is not whole statements: read it line by line
        found = []
        for offset, line in enumerate(text.splitlines()):
            line = line.strip().rstrip(":")
            small = parse(line) or parse(line + "\n pass") or parse(line.rstrip("(,") + ")")
            if small is not None:
                found += [(offset + n, name) for n, name in uses_in(small, dict(aliases))]
        return [(start + n, name) for n, name in found]
    return [(start + n, name) for n, name in uses_in(tree, dict(aliases))]


KERNELS = "benchmarks.kernels"        # the course's kernel modules, which chapters 07 and 08 run and read


def kernel_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) for every course kernel module a cell imports (`from benchmarks.kernels import X`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == KERNELS:
            found += [(node.lineno, f"{KERNELS}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(KERNELS + "."):
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith(KERNELS + ".")]
    return found


def is_cutedsl_function(node: ast.AST) -> bool:
    """A function decorated with @cute.kernel or @cute.jit (however `cute` is spelled)."""
    return isinstance(node, ast.FunctionDef) and any(
        (d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")) in ("kernel", "jit")
        for d in node.decorator_list)


def kernel_module_uses(module: str, seen: set[str]) -> list[tuple[str, int, str]]:
    """(file, line, name) for the CuTeDSL names of a kernel module's @cute.kernel and @cute.jit functions, and
    of those of the course modules it imports (`from . import cta`)."""
    if module in seen:
        return []
    seen.add(module)
    path, aliases = module_aliases(module)
    tree = ast.parse(path.read_text())
    found = []
    for node in tree.body:
        if is_cutedsl_function(node):
            found += [(str(path.relative_to(ROOT)), n, name) for n, name in uses_in(node, dict(aliases))]
        elif isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is None:
            for alias in node.names:
                found += kernel_module_uses(f"{module.rsplit('.', 1)[0]}.{alias.name}", seen)
    return found


def code_uses(cell: Cell, aliases: dict[str, str | None], kernels_seen: set[str]) -> list[Use]:
    source = "\n".join(re.sub(r"^(\s*)[%!].*$", r"\1pass", line) for line in cell.text.splitlines())
    tree = parse(source)
    if tree is None:
        raise SyntaxError(f"{cell.chapter}.py:{cell.line}: a code cell that is not Python")
    found = [Use(cell.chapter, cell.index, cell.line + n - 1, name) for n, name in uses_in(tree, aliases)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (shown := shown_lines(node)):
            path = module_aliases(shown[0])[0].relative_to(ROOT)
            for n, name in excerpt_uses(*shown):
                found.append(Use(cell.chapter, cell.index, cell.line + node.lineno - 1, name, f"{path}:{n}"))
    for line, module in kernel_modules(tree):
        for path, n, name in kernel_module_uses(module, kernels_seen):
            found.append(Use(cell.chapter, cell.index, cell.line + line - 1, name, f"{path}:{n}", runs=True))
    return found


# ---- what prose teaches ----------------------------------------------------------------------------------------

def backticked(markdown: str) -> list[str]:
    """The text of every fenced block and inline code span of a markdown cell."""
    spans = re.findall(r"```[^\n]*\n(.*?)```", markdown, re.DOTALL)
    rest = re.sub(r"```.*?```", " ", markdown, flags=re.DOTALL)
    return spans + [a or b for a, b in re.findall(r"``(.+?)``|`([^`]+)`", rest)]


def taught_words(markdown: str) -> set[str]:
    """Every identifier and every dotted pair written in backticks."""
    words = set()
    for span in backticked(markdown):
        for dotted in IDENTIFIER.findall(span):
            parts = dotted.lstrip(".").split(".")
            words.update(parts)
            words.update("." + part for part in (parts if dotted.startswith(".") else parts[1:]))
            words.update(f"{a}.{b}" for a, b in zip(parts, parts[1:]))
    return words


def key(name: str, shared: frozenset[str] = frozenset()) -> str:
    """What prose must write for `name` to be taught: its last component; `Class.member` for a member of a
    class; `module.Name` for a name that two CuTeDSL modules of the course both define (`shared`:
    `warp.MmaF16BF16Op`, `warpgroup.MmaF16BF16Op`); `.name` for a name Python also uses (AMBIGUOUS)."""
    parts = name.lstrip(".").split(".")
    if len(parts) >= 2 and (parts[-2][:1].isupper() or parts[-1] in shared):
        return f"{parts[-2]}.{parts[-1]}"
    return "." + parts[-1] if parts[-1] in AMBIGUOUS else parts[-1]


def shared_names(names) -> frozenset[str]:
    """Last components that names under two different modules end in (`cute.Float32` and `cutlass.Float32`
    are one type, exported twice, and do not count)."""
    parents: dict[str, set[str]] = {}
    for name in names:
        parts = name.lstrip(".").split(".")
        if len(parts) >= 2 and parts[-2] not in ("cute", "cutlass"):
            parents.setdefault(parts[-1], set()).add(parts[-2])
    return frozenset(last for last, found in parents.items() if len(found) > 1)


# ---- the course -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Teaching:
    chapter: str
    section: str        # the heading above the prose that first says it
    line: int
    order: int          # the cell's place in the course: prose teaches the cells from its own on


def chapters(root: Path = ROOT) -> list[str]:
    return sorted(p.stem for p in (root / SOURCE).glob("[0-9][0-9]_*.py") if p.stem != REFERENCE)


HEADING = re.compile(r"^#{1,4} (.+)$")


def sections(markdown: str, current: str) -> list[tuple[str, str]]:
    """The cell's text cut at its headings (not at a `#` comment inside a fenced block): (the heading the
    text stands under, the text)."""
    found, lines, fenced = [], [], False
    for line in markdown.splitlines():
        fenced ^= line.lstrip().startswith("```")
        match = None if fenced else HEADING.match(line)
        if match:
            found.append((current, "\n".join(lines)))
            current, lines = match.group(1).strip(), []
        else:
            lines.append(line)
    return found + [(current, "\n".join(lines))]


@dataclass
class Course:
    uses: list[Use]
    orders: list[int]                   # each use's cell, as its place in the course
    taught: dict[str, Teaching]         # prose word -> where it is first written

    def __post_init__(self):
        self.shared = shared_names(use.name for use in self.uses)

    def first_uses(self) -> dict[str, Use]:
        first = {}
        for use in self.uses:
            first.setdefault(use.name, use)
        return first

    def teacher(self, name: str) -> Teaching | None:
        return self.taught.get(key(name, self.shared))

    @property
    def untaught(self) -> list[Use]:
        """The uses whose name no prose at or before their cell says."""
        found = []
        for use, order in zip(self.uses, self.orders):
            teacher = self.teacher(use.name)
            if teacher is None or teacher.order > order:
                found.append(use)
        return found


def read_course(root: Path = ROOT) -> Course:
    uses, orders, taught, order = [], [], {}, 0
    for chapter in chapters(root):
        aliases: dict[str, str | None] = {}
        kernels_seen: set[str] = set()          # a kernel module's names count once per chapter, where imported
        section = chapter
        for cell in read_cells(root / SOURCE / f"{chapter}.py"):
            order += 1
            if cell.kind == "markdown":
                for section, text in sections(cell.text, section):
                    for word in taught_words(text):
                        taught.setdefault(word, Teaching(chapter, section, cell.line, order))
                continue
            for use in code_uses(cell, aliases, kernels_seen):
                uses.append(use)
                orders.append(order)
    return Course(uses, orders, taught)


def describe(use: Use) -> str:
    """`solutions/05_tiled_copy.py:285: cute.arch.warp_idx`, and the kernel line it comes from, if any."""
    where = ""
    if use.origin:
        where = f" (in {use.origin}, {'a kernel the cell imports' if use.runs else 'which the cell prints'})"
    return f"{SOURCE}/{use.chapter}.py:{use.line}: {use.name}{where}"


def untaught_report(course: Course) -> list[str]:
    """One line per name and chapter where a name is used before any prose says it (its first such use)."""
    seen, lines = set(), []
    for use in course.untaught:
        if (use.chapter, use.name) not in seen:
            seen.add((use.chapter, use.name))
            lines.append(describe(use))
    return lines


# ---- the reference notebook -----------------------------------------------------------------------------------

def descriptions(path: Path = DESCRIPTIONS) -> dict[str, str]:
    """name -> one line of what it is, from scripts/vocabulary_descriptions.toml."""
    try:
        import tomllib
    except ImportError:                     # Python 3.10
        from pip._vendor import tomli as tomllib
    return tomllib.loads(path.read_text())


@dataclass(frozen=True)
class Entry:
    name: str
    description: str
    chapter: str        # "05"
    section: str        # the heading the prose that first says it stands under


# The reference's groups, in order: (title, does the name belong here)
GROUPS = (
    ("`cute`: layouts, tensors, copies and MMAs", lambda n: n.startswith("cute.") and n.count(".") == 1
     or n.startswith("cute.") and n.split(".")[1][:1].isupper()),
    ("`cute.arch`: what one thread or warp does (indices, barriers, mbarriers, registers)",
     lambda n: n.startswith("cute.arch.")),
    ("`cute.nvgpu`: the instructions, as copy and MMA operations",
     lambda n: n.startswith("cute.nvgpu.")),
    ("`cute.runtime`: tensors from outside", lambda n: n.startswith("cute.runtime.")),
    ("`cute.math`: functions of register values", lambda n: n.startswith("cute.math.")),
    ("`cutlass`: numbers, compile-time values, loops, shared memory", lambda n: n.startswith("cutlass.")),
    ("Methods and properties of CuTeDSL objects", lambda n: n.startswith(".")),
)


def group_of(name: str) -> int:
    found = next((i for i, (_, belongs) in enumerate(GROUPS) if belongs(name)), None)
    if found is None:
        raise SystemExit(f"vocabulary: {name!r} belongs to no group of the reference (GROUPS): add one")
    return found


def entries(course: Course, described: dict[str, str]) -> list[Entry]:
    """Every name the course uses, grouped and sorted, with its description and its teacher."""
    found = []
    for name in course.first_uses():
        teacher = course.teacher(name)
        found.append(Entry(name, described.get(name, "(no description yet)"),
                           teacher.chapter[:2] if teacher else "--", teacher.section if teacher else "(nowhere yet)"))
    return sorted(found, key=lambda e: (group_of(e.name), e.name.lstrip(".").lower()))


def chapter_titles(root: Path = ROOT) -> dict[str, str]:
    """"05" -> "05 · TiledCopy: a reduction written four ways", from each chapter's first heading."""
    titles = {}
    for chapter in chapters(root):
        first = next(c for c in read_cells(root / SOURCE / f"{chapter}.py") if c.kind == "markdown")
        titles[chapter[:2]] = re.search(r"^# (.+)$", first.text, re.MULTILINE).group(1).strip()
    return titles


HEADER = """\
# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-all
#     formats: ipynb,py:percent
#     notebook_metadata_filter: kernelspec,jupytext
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: CuTe by Hand
#     language: python
#     name: cute-by-hand
# ---
"""

INTRO = """\
# 90 · Reference: the CuTeDSL names of the course

Every CuTeDSL name a chapter's code calls or reads, with one line of what it is and where the course first
says it: the chapter, and the heading that prose stands under. Names are written as the chapters write
them: `cute` is `cutlass.cute`, and a name that starts with a dot is a method or property of a CuTeDSL
object (`.load` of a tensor, `.partition_S` of one thread's slice of a TiledCopy). The lines of the kernels
that chapters 07 and 08 run (`benchmarks/kernels/`) count too. The chapters themselves make this page (it
is regenerated from them), so it lists what the course uses and no more; the chapter it names says more.

`reference.lookup` searches it: part of a name gives every name that contains it, and a word that no name
contains is looked for in the descriptions."""


def markdown_cell(text: str) -> str:
    return "# %% [markdown]\n" + "\n".join(("# " + line).rstrip() for line in text.splitlines()) + "\n"


def reference_source(rows: list[Entry], titles: dict[str, str]) -> str:
    """The reference notebook's source (solutions/90_reference.py), jupytext percent format."""
    cells = [markdown_cell(INTRO),
             '# %%\nfrom cutekit import reference\n\nreference.lookup("partition")\n']
    cells.append(markdown_cell("\n".join(["The chapters:", ""] + [f"- {titles[c]}" for c in sorted(titles)])))
    for index, (title, _) in enumerate(GROUPS):
        mine = [e for e in rows if group_of(e.name) == index]
        if not mine:
            continue
        table = [f"## {title}", "", "| name | what it is | chapter | where |", "|---|---|---|---|"]
        table += [f"| `{e.name}` | {e.description} | {e.chapter} | {e.section} |" for e in mine]
        cells.append(markdown_cell("\n".join(table)))
    return HEADER + "\n" + "\n".join(cells)


def table_source(rows: list[Entry]) -> str:
    """cutekit/reference_table.py: the same rows, for `cutekit.reference.lookup`."""
    lines = ['"""Every CuTeDSL name the course uses: (name, what it is, chapter, the heading that first says it).',
             "",
             "Written by scripts/vocabulary.py (make sync) from the chapters and scripts/vocabulary_descriptions.toml;",
             'do not edit by hand."""', "", "NAMES = ("]
    lines += [f"    {(e.name, e.description, e.chapter, e.section)!r}," for e in rows]
    return "\n".join(lines + [")", ""])


def generated(root: Path = ROOT, course: Course | None = None) -> dict[Path, str]:
    """The files this script writes, with the text the chapters (read as `course`, if given) and the
    descriptions give them."""
    rows = entries(course or read_course(root), descriptions())
    return {root / SOURCE / f"{REFERENCE}.py": reference_source(rows, chapter_titles(root)),
            root / TABLE_MODULE: table_source(rows)}


def problems(root: Path = ROOT) -> list[str]:
    """Everything a writer must fix: names used before prose says them, names without a description,
    descriptions of names the course no longer uses, and generated files that differ from the sources."""
    course = read_course(root)
    described = descriptions()
    used = course.first_uses()
    found = [f"not said in prose at or before its use: {line}" for line in untaught_report(course)]
    found += [f"no description in {DESCRIPTIONS.relative_to(ROOT)}: {name} (first used at "
              f"{describe(used[name])})" for name in used if name not in described]
    found += [f"described but not used by any chapter: {name}" for name in described if name not in used]
    found += [f"stale: {path.relative_to(root)} (run {FIX})" for path, text in generated(root, course).items()
              if not path.exists() or path.read_text() != text]
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="write nothing; list every problem, exit 1 if any")
    ap.add_argument("--list", action="store_true", help="every name, its first use and where prose says it")
    args = ap.parse_args(argv)
    if args.list:
        course = read_course()
        for name, use in course.first_uses().items():
            teacher = course.teacher(name)
            said = f"{teacher.chapter}: {teacher.section}" if teacher else "NOT SAID"
            print(f"{name:55} {describe(use).split(': ')[0]:40} {said}")
        return 0
    if args.check:
        found = problems()
        print("\n".join(found) or "vocabulary: every name is said before its use, described and in the reference")
        return 1 if found else 0
    written = 0
    for path, text in generated().items():
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            written += 1
    course = read_course()
    for line in untaught_report(course):            # written anyway; tests/test_vocabulary.py fails on these
        print(f"vocabulary: not said in prose at or before its use: {line}", file=sys.stderr)
    print(f"vocabulary: {written} file(s) written, {len(course.first_uses())} names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
