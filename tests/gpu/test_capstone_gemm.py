"""Chapter 07's capstone on a GPU: the model answer (solutions/07_sgemm.py) through the check's gpu tier. It must
equal torch's alpha A B + beta C (fp32) on 4096^3 and 1000x1032x1000 and reach, at 4096^3, the share of the speed
of torch.matmul(A, B) * alpha + beta * C that the exercise states; the test prints what was measured."""

import pytest

from cutekit.checks import ch07_sgemm, check

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def model(solution_module):
    """The capstone's model answer (its constants, helper, kernel and host function) as a module."""
    return solution_module("capstone_model", "07_sgemm.py", "BM, BN, BK, STAGES = ", "ch07.capstone_gemm",
                           "import cutlass\nimport cutlass.cute as cute\n\n")


def test_the_capstones_model_answer_equals_torch_and_is_fast_enough(model, monkeypatch, capsys):
    monkeypatch.setenv("CUTEKIT_TIERS", "gpu")
    result = check("ch07.capstone_gemm", model.gemm, seed=0, record=False)
    gpu = next(criterion for criterion in result.criteria if criterion.tier == "gpu")
    with capsys.disabled():
        print(f"\nch07 capstone, model answer (threshold {ch07_sgemm.CAPSTONE_RATIO} of torch): {gpu.hint}")
    assert gpu.status == "passed", str(result)
    assert "4096x4096x4096" in gpu.hint and "of torch's speed" in gpu.hint
