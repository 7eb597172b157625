"""The shape of cutekit/checks, read from its source with `ast`: what the chapters share comes from one
module (`common`), no chapter borrows from another, and the grading core imports without a cycle.

Every import counts, the ones inside functions too (a lazy import is still a dependency), and so does the
registry's import of each chapter by name (`CHAPTER_MODULES`)."""
import ast
import pathlib
import re
import sys

import pytest

PACKAGE = "cutekit.checks"
FOLDER = pathlib.Path(__file__).parents[2] / "cutekit" / "checks"
CHAPTER = re.compile(r"ch\d\d_\w+$")
MODULES = sorted(path.stem for path in FOLDER.glob("*.py") if path.stem != "__init__")
CHAPTERS = [name for name in MODULES if CHAPTER.match(name)]
SHARED = "common"
CORE = [name for name in MODULES if name not in CHAPTERS and name != SHARED]


def _tree(name: str) -> ast.Module:
    return ast.parse((FOLDER / f"{name}.py").read_text(), filename=f"{name}.py")


def _sibling(module: str | None, level: int) -> str | None:
    """The sibling module an import names (`.grading`, `cutekit.checks.grading`), or None for any other."""
    if level == 1 and module:
        return module.split(".")[0]
    if level == 0 and module and module.startswith(PACKAGE + "."):
        return module[len(PACKAGE) + 1:].split(".")[0]
    return None


def imported_names(name: str) -> list:
    """(sibling module, name imported from it or None for the module itself, line) for every import of a
    sibling in module `name`."""
    found = []
    for node in ast.walk(_tree(name)):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module is None:          # from . import grading
                found += [(alias.name, None, node.lineno) for alias in node.names]
                continue
            sibling = _sibling(node.module, node.level)
            if sibling is not None:
                found += [(sibling, alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                sibling = _sibling(alias.name, 0)
                if sibling is not None:
                    found.append((sibling, None, node.lineno))
    return [(sibling, imported, line) for sibling, imported, line in found if sibling in MODULES]


def dependencies(name: str) -> set:
    """The sibling modules `name` imports; the registry also imports every chapter (by name, at run time)."""
    found = {sibling for sibling, _, _ in imported_names(name)} - {name}
    if name == "registry":
        found |= set(registered_chapters())
    return found


def registered_chapters() -> tuple:
    for node in ast.walk(_tree("registry")):
        if isinstance(node, ast.Assign) and any(getattr(target, "id", "") == "CHAPTER_MODULES"
                                                for target in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("registry.py no longer defines CHAPTER_MODULES")


def a_cycle(modules) -> list | None:
    """One import cycle among `modules` (edges to modules outside the list are left out), or None."""
    modules = set(modules)
    state, path = {}, []

    def visit(name):
        state[name] = "open"
        path.append(name)
        for following in sorted(dependencies(name) & modules):
            if state.get(following) == "open":
                return path[path.index(following):] + [following]
            if following not in state:
                cycle = visit(following)
                if cycle:
                    return cycle
        state[name] = "done"
        path.pop()
        return None

    for name in sorted(modules):
        if name not in state:
            cycle = visit(name)
            if cycle:
                return cycle
    return None


def test_the_package_has_chapters_a_shared_module_and_a_core():
    assert len(CHAPTERS) >= 8 and SHARED in MODULES
    assert {"grading", "registry", "progress", "result", "sandbox", "cutedsl", "_worker", "kernels"} <= set(CORE)
    assert sorted(registered_chapters()) == CHAPTERS, "every chapter file is registered, and only those"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_chapter_imports_another_chapter(chapter):
    borrowed = sorted({f"line {line}: {sibling}" for sibling, _, line in imported_names(chapter)
                       if sibling in CHAPTERS and sibling != chapter})
    assert not borrowed, f"{chapter} imports another chapter ({', '.join(borrowed)}); move what they share to {SHARED}.py"


@pytest.mark.parametrize("name", MODULES)
def test_no_module_imports_a_private_name_from_a_sibling(name):
    private = [f"line {line}: {imported} from {sibling}" for sibling, imported, line in imported_names(name)
               if imported and imported.startswith("_") and sibling != name]
    assert not private, f"{name} imports private names ({', '.join(private)}); share them under a public name"


def test_the_shared_module_imports_no_chapter():
    assert not dependencies(SHARED) & set(CHAPTERS)


def test_the_grading_core_has_no_import_cycle():
    assert a_cycle(CORE) is None, f"import cycle among the core modules: {' -> '.join(a_cycle(CORE))}"


def test_the_whole_package_has_no_import_cycle_counting_the_registrys_chapters():
    assert a_cycle(MODULES) is None, f"import cycle: {' -> '.join(a_cycle(MODULES))}"


def test_the_cycle_finder_finds_a_cycle(monkeypatch):
    """The checks above would pass vacuously if the import reader or the cycle finder saw nothing."""
    assert "grading" in dependencies("checking") and "kernels" in dependencies("grading")
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}}
    monkeypatch.setattr(sys.modules[__name__], "dependencies", lambda name: graph[name])
    assert a_cycle(["a", "b", "c"]) == ["a", "b", "c", "a"]
