"""GPU tier: the course kernels run on a real GPU and are compared with torch.

Every test here is skipped, with one reason, when this machine cannot run CuTeDSL kernels
(no CUDA torch, no device, a device older than sm_80, or no nvidia-cutlass-dsl)."""
import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _why_no_gpu():
    try:
        import torch
    except Exception as error:  # a broken torch install: say so instead of failing every test
        return f"torch does not import ({error})"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    major, minor = torch.cuda.get_device_capability()
    if (major, minor) < (8, 0):
        return f"{torch.cuda.get_device_name()} is sm_{major}{minor}; the kernels need sm_80 or newer"
    try:
        import cutlass.cute  # noqa: F401
    except Exception as error:
        return f"nvidia-cutlass-dsl does not import ({error})"
    return ""


_skipped = []


def pytest_collection_modifyitems(config, items):
    mine = [item for item in items if "tests/gpu/" in str(item.fspath).replace("\\", "/")]
    if not mine:
        return
    why = _why_no_gpu()
    if why:
        # deselected, not skipped one by one, so the run reports it in one line (see terminal summary)
        items[:] = [item for item in items if item not in mine]
        config.hook.pytest_deselected(items=mine)
        _skipped.append(f"GPU tests skipped: {why} ({len(mine)} tests in tests/gpu not run)")


def pytest_terminal_summary(terminalreporter):
    for line in _skipped:
        terminalreporter.write_line(line, yellow=True)


@pytest.fixture
def generator():
    """A seeded CUDA random generator, so a failure reproduces."""
    import torch
    return torch.Generator(device="cuda").manual_seed(1234)


@pytest.fixture(scope="module")
def module_from_source(tmp_path_factory):
    """`load(name, source)`: the Python `source` written to NAME.py in a fresh folder and imported, as a
    learner's cell is moved by its source (a capstone's model answer cut from its chapter); the folder leaves
    sys.path and the module sys.modules when the test module ends."""
    loaded = []

    def load(name: str, source: str):
        folder = tmp_path_factory.mktemp(name)
        (folder / f"{name}.py").write_text(source)
        sys.path.insert(0, str(folder))
        loaded.append((str(folder), name))
        return importlib.import_module(name)

    yield load
    for folder, name in loaded:
        sys.path.remove(folder)
        sys.modules.pop(name, None)


def solution_source(chapter: str, first: str, exercise_id: str, header: str) -> str:
    """A model answer cut from solutions/CHAPTER as a learner's module: `header` (its imports), then the chapter's
    text from `first` up to the cell that checks `exercise_id`, the BEGIN/END SOLUTION markers dropped."""
    text = (ROOT / "solutions" / chapter).read_text()
    start = text.index(first)
    body = text[start:text.index(f'\ncheck("{exercise_id}"', start)].rstrip("\n")
    lines = [line for line in body.splitlines() if "### BEGIN SOLUTION" not in line and "### END SOLUTION" not in line]
    return header + "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def solution_module(module_from_source):
    """`load(name, chapter, first, exercise_id, header)`: solution_source(...) imported as module `name`."""
    return lambda name, *where: module_from_source(name, solution_source(*where))


def pytest_sessionfinish(session, exitstatus):
    # "no tests ran" (5) is the expected outcome of `make gpu-test` on a machine without a GPU
    if _skipped and exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.OK
