"""Chapter 08's exercises 4 and 5 on a GPU: the solution's producer and consumer loops, moved by source into
the chapter's kernel, earn every point their tiers offer; on an sm_90 GPU the gpu criterion runs a 4096^3
GEMM with the loop and times it next to the chapter's kernel and torch.matmul, on any other GPU it waits with
one line saying the kernels need sm_90 (the simulator grades the rest)."""
import importlib
import os
import pathlib
import sys

import pytest
import torch

from cutekit.checks import check

pytestmark = pytest.mark.gpu

ROOT = pathlib.Path(__file__).parents[2]
SOLUTION = ROOT / "solutions" / "08_hopper_gemm.py"
HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)


def loop_source(name: str) -> str:
    text = SOLUTION.read_text()
    start = text.index(f"def {name}(")
    end = text.index("\n\n\ncheck(", start)
    body = text[start:end].replace("    ### BEGIN SOLUTION\n", "").replace("    ### END SOLUTION\n", "")
    return ("import cutlass\nimport cutlass.cute as cute\nfrom cutlass.cute.nvgpu import warpgroup\n\n\n" + body + "\n")


@pytest.fixture(scope="module")
def loops(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hopper_loops")
    (folder / "hopper_loops.py").write_text(loop_source("producer_loop") + "\n\n" + loop_source("consumer_loop"))
    sys.path.insert(0, str(folder))
    sys.path.insert(0, str(ROOT))
    yield importlib.import_module("hopper_loops")
    sys.path.remove(str(folder))
    sys.modules.pop("hopper_loops", None)


@pytest.mark.parametrize("exercise, name", [("ch08.mbarrier_phases", "producer_loop"),
                                            ("ch08.wgmma_main_loop", "consumer_loop")])
def test_the_solutions_loops_earn_their_points_on_this_gpu(loops, exercise, name, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    result = check(exercise, getattr(loops, name), seed=0, record=False)
    assert result.passed, str(result)
    gpu = next(criterion for criterion in result.criteria if criterion.tier == "gpu")
    if HOPPER:
        assert gpu.status == "passed" and "TFLOP/s" in gpu.hint and "torch.matmul" in gpu.hint, str(result)
        print(gpu.hint)
    else:
        assert gpu.status == "waiting" and "kernels need sm_90" in gpu.hint, str(result)
