"""Learner-style kernels for the mutant tests: written to a real file (CuTeDSL and the simulator read
source) and imported with cutekit's simulator as `cutlass`; the real package comes back afterwards."""
import contextlib
import importlib
import pathlib
import sys

import cutekit


@contextlib.contextmanager
def kernels_on_simulator(source: str, name: str, folder):
    """The module `name`, made of `source`, imported on the simulator for the length of the block."""
    (folder / f"{name}.py").write_text(source)
    sys.path.insert(0, str(folder))
    try:
        with cutekit.using("sim", fresh=(name,)):
            yield importlib.import_module(name)
    finally:
        sys.path.remove(str(folder))


SOLUTIONS = pathlib.Path(__file__).parents[2] / "solutions"


def solution_code(chapter: str, start: str, end: str) -> str:
    """The solved chapter's code (solutions/<chapter>.py) from `start` up to `end`, cell markers and the
    exercise marker left out: the wrong kernels of the mutant tests are the shipped solution with one
    mistake each, so they stay in step with it."""
    text = (SOLUTIONS / f"{chapter}.py").read_text()
    begin = text.index(start)
    code = text[begin:text.index(end, begin)]
    return "\n".join(line for line in code.splitlines() if not line.startswith("# %%")
                     and line.strip() != "# YOUR CODE HERE") + "\n"


def with_mistakes(code: str, mistakes: dict) -> str:
    """`code` (a solution piece whose names carry NAME) once per mistake, NAME replaced by the mistake's name
    and its (old, new) replacement made; "none" is the solution itself."""
    pieces = []
    for name, (old, new) in {"none": ("", ""), **mistakes}.items():
        text = code.replace("NAME", name)
        assert old in text, f"the solution no longer contains what mistake {name!r} replaces: {old!r}"
        pieces.append(text.replace(old, new) if old else text)
    return "\n".join(pieces)
