"""Chapter 09's kernel exercises on a GPU: the solution's MMA loop, epilogue and capstone (D = relu(A B^T + bias)),
moved by source as a learner's are, earn every point their tiers offer. On an sm_100a GPU (B200, GB200) or a B300
(sm_103a) each gpu criterion runs a 4096^3 fp16 problem, compares D with torch and prints the times; on any other
GPU it waits with the one line saying the kernel needs sm_100a. Written for a B200 owner; not yet run on one
(the course has been lent no Blackwell GPU)."""
import os
import pathlib
import sys

import pytest
import torch

from cutekit.checks import check

pytestmark = pytest.mark.gpu

ROOT = pathlib.Path(__file__).parents[2]
BLACKWELL = torch.cuda.is_available() and torch.cuda.get_device_capability() in ((10, 0), (10, 3))


@pytest.fixture(scope="module")
def capstone(solution_module):
    return solution_module("blackwell_capstone", "09_blackwell.py",
                           "import cutlass.experimental.primitives as primitives\nimport cutlass.utils.blackwell_helpers",
                           "ch09.capstone", "import cutlass\nimport cutlass.cute as cute\nfrom cutlass.cute.nvgpu import tcgen05\n")


def _graded(exercise_id, answer, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    result = check(exercise_id, answer, seed=0, record=False)
    assert result.passed, str(result)
    gpu = next(criterion for criterion in result.criteria if criterion.tier == "gpu")
    if BLACKWELL:
        assert gpu.status == "passed" and "ms" in gpu.hint, str(result)
        print(gpu.hint)
    else:
        assert gpu.status == "waiting" and "sm_100a" in gpu.hint, str(result)


def test_the_solutions_capstone_earns_its_points_and_is_timed_against_torch(capstone, monkeypatch):
    _graded("ch09.capstone", capstone.gemm_bias_relu, monkeypatch)


@pytest.mark.parametrize("exercise_id", ["ch09.mma_warp_loop", "ch09.tmem_epilogue"])
def test_the_right_loop_and_epilogue_earn_their_points(exercise_id, monkeypatch):
    sys.path.insert(0, str(ROOT / "tests" / "checks"))
    from answers_ch09_kernels import epilogue_with, mma_loop_with
    answer = mma_loop_with() if exercise_id == "ch09.mma_warp_loop" else epilogue_with()
    _graded(exercise_id, answer, monkeypatch)
