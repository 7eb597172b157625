"""Chapter 08's capstone on a GPU: the solution's kernel, D = relu(A B^T + bias) with TMA, an mbarrier pipeline
and wgmma, moved by source as a learner's is, earns every point its tiers offer. On an sm_90 GPU the gpu
criterion runs a 4096^3 fp16 problem, compares D with torch.relu(torch.addmm(bias, A, B^T)) and times the
kernel against that torch expression in the same process (at least 0.5 of torch's speed passes); the test
prints the times. On any other GPU the criterion waits with one line saying the kernels need sm_90."""
import os
import pathlib

import pytest
import torch

from cutekit.checks import check

pytestmark = pytest.mark.gpu

ROOT = pathlib.Path(__file__).parents[2]
HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)


@pytest.fixture(scope="module")
def capstone(solution_module):
    return solution_module("hopper_capstone", "08_hopper_gemm.py",
                           "from cutlass.cute.nvgpu import cpasync, warpgroup\n\n### BEGIN SOLUTION", "ch08.capstone",
                           "import cutlass\nimport cutlass.cute as cute\n")


def test_the_solutions_capstone_earns_its_points_and_is_timed_against_torch(capstone, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    result = check("ch08.capstone", capstone.gemm_bias_relu, seed=0, record=False)
    assert result.passed, str(result)
    gpu = next(criterion for criterion in result.criteria if criterion.tier == "gpu")
    if HOPPER:
        assert gpu.status == "passed" and "of torch's speed" in gpu.hint, str(result)
        print(gpu.hint)
    else:
        assert gpu.status == "waiting" and "kernels need sm_90" in gpu.hint, str(result)
