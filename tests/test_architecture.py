"""How cutekit's simulator and pictures are built: read from the source with `ast`, nothing imported.

cutekit/sim/ is a house of floors (its package docstring says what lives on each): a module imports only its own
floor and the floors below it, and no modules import each other in a circle; cutekit/render/ has no circle
either. Every import counts, the ones inside functions too (a lazy import is still a dependency), and
`from package import name` counts as an import of the package's `__init__` as well (Python runs it first),
except where the package is one the importing module lives in (that one is already running).
"""
import ast
import pathlib
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

# The floors of cutekit/sim, bottom first: the spec. A module belongs to the floor of the longest prefix of its
# name listed here; "cutekit.sim" itself (the package and its top-level modules) is the face the learner meets.
SIM_FLOORS = (
    ("machine", ("cutekit.sim.machine",)),          # threads, scheduler, watchdog, collectives' rules, errors
    ("memory", ("cutekit.sim.memory",)),            # storage, tensors, races, shared memory, numbers
    ("operations", ("cutekit.sim.ops",)),           # indices, barriers, shuffles, copies, GEMMs, mbarriers
    ("architectures", ("cutekit.sim.arch",)),       # one room per GPU generation: sm80, sm90
    ("face", ("cutekit.sim",)),                     # the cutlass modules use("sim") installs; mbarriers on paper
)


def module_files(package_dir: pathlib.Path, package: str) -> dict:
    """{module name: path} for every .py file under package_dir (package `package`)."""
    found = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join([package] + parts)] = path
    return found


def import_graph(package_dir: pathlib.Path, package: str) -> dict:
    """{module: {(imported module, line)}} over the modules of `package`, imports inside it only."""
    modules = module_files(package_dir, package)
    graph = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        here = name if is_package else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = here.split(".")[:len(here.split(".")) - (node.level - 1)]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
            for target in targets:
                # the module and every package above it that Python runs first, ours only
                while target:
                    if target in modules and target != name and not name.startswith(target + "."):
                        edges.add((target, node.lineno))    # (not itself, nor a package it lives in)
                    target = target.rpartition(".")[0]
        graph[name] = edges
    return graph


def circles(graph: dict) -> list:
    """Each import circle found (a list of modules, the first repeated at the end)."""
    found, state, stack = [], {}, []

    def visit(module):
        state[module] = "open"
        stack.append(module)
        for target, _ in sorted(graph[module]):
            if state.get(target) == "open":
                found.append(stack[stack.index(target):] + [target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module)
    return found


def floor_of(module: str, floors=SIM_FLOORS) -> int:
    best = max(((len(prefix), index) for index, (_, prefixes) in enumerate(floors) for prefix in prefixes
                if module == prefix or module.startswith(prefix + ".")), default=None)
    assert best is not None, f"{module} is on no floor: add it to SIM_FLOORS"
    return best[1]


def upward_imports(graph: dict, floors=SIM_FLOORS) -> list:
    """'module (floor) imports target (higher floor) at line n' for every import that runs up a floor."""
    wrong = []
    for module, edges in sorted(graph.items()):
        for target, line in sorted(edges):
            if floor_of(target, floors) > floor_of(module, floors):
                wrong.append(f"{module} ({floors[floor_of(module, floors)][0]}) imports {target} "
                             f"({floors[floor_of(target, floors)][0]}) at line {line}")
    return wrong


SIM = import_graph(ROOT / "cutekit" / "sim", "cutekit.sim")
RENDER = import_graph(ROOT / "cutekit" / "render", "cutekit.render")


def test_every_floor_of_the_simulator_has_its_modules():
    """(so that a renamed floor cannot leave this test with nothing to check)"""
    for index, (floor, prefixes) in enumerate(SIM_FLOORS):
        assert any(floor_of(module) == index for module in SIM), f"no module on the {floor} floor"
    assert len(SIM) > 20


def test_no_simulator_module_imports_up_a_floor():
    wrong = upward_imports(SIM)
    assert not wrong, "imports running up a floor of cutekit/sim:\n" + "\n".join(wrong)


@pytest.mark.parametrize("graph", [SIM, RENDER], ids=["sim", "render"])
def test_no_import_circle(graph):
    found = circles(graph)
    assert not found, "import circles:\n" + "\n".join(" -> ".join(circle) for circle in found)


def test_the_checks_find_an_upward_import_and_a_circle(tmp_path):
    """The same checks on a small package made for them: memory importing the architecture's room (up a floor),
    and two machine modules importing each other (one of them inside a function)."""
    files = {
        "__init__.py": "",
        "machine/__init__.py": "",
        "machine/threads.py": "def f():\n    from . import scheduler\n",
        "machine/scheduler.py": "from .threads import f\n",
        "memory/__init__.py": "",
        "memory/tensors.py": "from ..machine import threads\nfrom ..arch.sm90 import check\n",
        "ops/__init__.py": "",
        "arch/__init__.py": "",
        "arch/sm90.py": "from ..memory import tensors\ncheck = 1\n",
    }
    for name, text in files.items():
        (tmp_path / "house" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "house" / name).write_text(textwrap.dedent(text))
    floors = tuple((floor, tuple(prefix.replace("cutekit.sim", "house") for prefix in prefixes))
                   for floor, prefixes in SIM_FLOORS)
    graph = import_graph(tmp_path / "house", "house")
    assert upward_imports(graph, floors) == [
        "house.memory.tensors (memory) imports house.arch (architectures) at line 2",
        "house.memory.tensors (memory) imports house.arch.sm90 (architectures) at line 2"]
    assert circles(graph) == [["house.arch.sm90", "house.memory.tensors", "house.arch.sm90"],
                              ["house.machine.threads", "house.machine.scheduler", "house.machine.threads"]]
