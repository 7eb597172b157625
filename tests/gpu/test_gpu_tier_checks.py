"""The gpu tier of a kernel exercise: the learner's kernel (moved by source to a fresh process) runs on the
GPU with real CuTeDSL, is compared with torch and timed; a wrong kernel loses the point with a message, and
the process running the check (a notebook, here pytest) goes on."""
import importlib
import pathlib
import sys

import pytest

from cutekit.checks import check

pytestmark = pytest.mark.gpu

SOLUTION = pathlib.Path(__file__).parents[2] / "solutions" / "04_local_tile_partition.py"


def solution_kernel_source() -> str:
    """Chapter 04's predicated add (the kernel and its host function, a correct answer to the strip exercise's
    check), as a module."""
    text = SOLUTION.read_text()
    start = text.index("@cute.kernel\ndef add_kernel")
    end = text.index("# %%", text.index("def add(", start))
    return "import cutlass\nimport cutlass.cute as cute\n\n\n" + text[start:end]


@pytest.fixture(scope="module")
def learner_modules(tmp_path_factory):
    right = solution_kernel_source()
    wrong = right.replace("tCgC[i] = tAgA[i] + tBgB[i]", "tCgC[i] = tAgA[i]")
    # every store lands 1 TiB (2**38 fp32) past C: far outside anything allocated, an illegal address
    faulting = right.replace("tCgC[i] = tAgA[i] + tBgB[i]",
                             "cute.make_tensor(tCgC.iterator + (1 << 38), tCgC.layout)[i] = tAgA[i] + tBgB[i]")
    assert wrong != right and faulting.count("1 << 38") == 1
    yield from _imported(tmp_path_factory.mktemp("gpu_kernels"),
                         {"right_add": right, "wrong_add": wrong, "faulting_add": faulting})


def _imported(folder, sources):
    """Each source written to folder/<name>.py and imported (a fixture's value); forgotten afterwards."""
    for name, text in sources.items():
        (folder / f"{name}.py").write_text(text)
    sys.path.insert(0, str(folder))
    yield tuple(importlib.import_module(name) for name in sources)
    sys.path.remove(str(folder))
    for name in sources:
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


def test_a_kernel_that_writes_out_of_bounds_is_reported_and_the_caller_keeps_its_gpu(learner_modules, monkeypatch):
    import torch
    monkeypatch.setenv("CUTEKIT_TIERS", "gpu")
    result = check("ch04.add_with_tails", learner_modules[2].add, seed=0, record=False)
    gpu = _gpu_criterion(result)
    assert gpu.status == "failed", str(result)
    assert "illegal" in gpu.hint.lower() or "cuda" in gpu.hint.lower(), gpu.hint
    # the fault ended the checker's process only: this process's CUDA context still works
    assert torch.ones(4, device="cuda").add_(1).sum().item() == 8


CHAPTER_07 = pathlib.Path(__file__).parents[2] / "solutions" / "07_sgemm.py"


@pytest.fixture(scope="module")
def main_loops(tmp_path_factory):
    """Chapter 07's solved main loop, and the same loop without its two sync_threads() (a race: warps read
    shared memory before the others' copies landed, and the next copy overwrites what they still read)."""
    text = CHAPTER_07.read_text()
    start = text.index("def main_loop(")
    right = "import cutlass\nimport cutlass.cute as cute\n\n\n" + text[start:text.index("\n\ncheck(", start)]
    unsynchronized = right.replace("        cute.arch.sync_threads()\n", "")
    assert right.count("sync_threads") == 2 and "sync_threads" not in unsynchronized
    yield from _imported(tmp_path_factory.mktemp("main_loops"),
                         {"right_main_loop": right, "unsynchronized_main_loop": unsynchronized})


def test_the_solved_main_loop_earns_the_gpu_point_and_is_timed(main_loops, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "gpu")
    result = check("ch07.main_loop", main_loops[0].main_loop, seed=0, record=False)
    gpu = _gpu_criterion(result)
    assert gpu.status == "passed" and "torch.matmul" in gpu.hint, str(result)


def test_a_main_loop_without_barriers_is_caught_by_the_simulator_and_by_the_gpu(main_loops, monkeypatch):
    import torch
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    simulated = check("ch07.main_loop", main_loops[1].main_loop, seed=0, record=False)
    several = next(c for c in simulated.criteria if c.name.startswith("several k-tiles"))
    assert several.status == "failed" and "race" in several.hint.lower(), several.hint
    # the gpu tier runs only once the reference tier passes; alone, it runs the racy loop on the hardware
    monkeypatch.setenv("CUTEKIT_TIERS", "gpu")
    on_gpu = _gpu_criterion(check("ch07.main_loop", main_loops[1].main_loop, seed=0, record=False))
    assert on_gpu.status == "failed" and "differ from torch.matmul" in on_gpu.hint, on_gpu.hint
    assert torch.ones(4, device="cuda").add_(1).sum().item() == 8
