"""The gpu tier of a kernel exercise: the learner's kernel (moved by source to a fresh process) runs on the
GPU with real CuTeDSL, is compared with torch and timed; a wrong kernel loses the point with a message, and
the process running the check (a notebook, here pytest) goes on."""
import importlib
import pathlib
import sys

import pytest

from cutekit.checks import check

SOLUTION = pathlib.Path(__file__).parents[2] / "solutions" / "04_local_tile_partition.py"


def solution_kernel_source() -> str:
    """Chapter 04's solved predicated add (the kernel and its host function), as a module."""
    text = SOLUTION.read_text()
    start = text.index("@cute.kernel\ndef add_kernel")
    end = text.index("# %%", text.index("def add(", start))
    return "import cutlass\nimport cutlass.cute as cute\n\n\n" + text[start:end]


@pytest.fixture(scope="module")
def learner_modules(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gpu_kernels")
    right = solution_kernel_source()
    wrong = right.replace("rC.store(rA.load() + rB.load())", "rC.store(rA.load())")
    assert wrong != right
    (folder / "right_add.py").write_text(right)
    (folder / "wrong_add.py").write_text(wrong)
    sys.path.insert(0, str(folder))
    yield importlib.import_module("right_add"), importlib.import_module("wrong_add")
    sys.path.remove(str(folder))
    for name in ("right_add", "wrong_add"):
        sys.modules.pop(name, None)


def _gpu_criterion(result):
    return next(criterion for criterion in result.criteria if criterion.tier == "gpu")


def test_the_right_kernel_earns_the_gpu_point_and_says_how_fast_it_was(learner_modules, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference gpu")
    result = check("ch04.add_with_tails", learner_modules[0].add, seed=0, record=False)
    gpu = _gpu_criterion(result)
    assert result.passed and gpu.status == "passed", str(result)
    assert "torch.add" in gpu.hint and "4096x4096" in gpu.hint


def test_a_wrong_kernel_loses_the_gpu_point_with_a_message(learner_modules, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "gpu")
    result = check("ch04.add_with_tails", learner_modules[1].add, seed=0, record=False)
    gpu = _gpu_criterion(result)
    assert gpu.status == "failed" and "differ from torch.add" in gpu.hint, str(result)
