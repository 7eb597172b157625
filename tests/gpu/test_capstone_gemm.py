"""Chapter 07's capstone on a GPU: the model answer (solutions/07_sgemm.py) through the check's gpu tier. It must
equal torch's alpha A B + beta C (fp32) on 4096^3 and 1000x1032x1000 and reach, at 4096^3, the share of the speed
of torch.matmul(A, B) * alpha + beta * C that the exercise states; the test prints what was measured."""
import pathlib

import pytest

from cutekit.checks import ch07_sgemm, check

pytestmark = pytest.mark.gpu

SOLUTION = pathlib.Path(__file__).parents[2] / "solutions" / "07_sgemm.py"


def model_source() -> str:
    """The capstone's model answer (its constants, helper, kernel and host function) as a module."""
    text = SOLUTION.read_text()
    start = text.index("BM, BN, BK, STAGES = ")
    code = text[start:text.index('\ncheck("ch07.capstone_gemm"', start)]
    return "import cutlass\nimport cutlass.cute as cute\n\n" + code + "\n"


@pytest.fixture(scope="module")
def model(module_from_source):
    return module_from_source("capstone_model", model_source())


def test_the_capstones_model_answer_equals_torch_and_is_fast_enough(model, monkeypatch, capsys):
    monkeypatch.setenv("CUTEKIT_TIERS", "gpu")
    result = check("ch07.capstone_gemm", model.gemm, seed=0, record=False)
    gpu = next(criterion for criterion in result.criteria if criterion.tier == "gpu")
    with capsys.disabled():
        print(f"\nch07 capstone, model answer (threshold {ch07_sgemm.CAPSTONE_RATIO} of torch): {gpu.hint}")
    assert gpu.status == "passed", str(result)
    assert "4096x4096x4096" in gpu.hint and "of torch's speed" in gpu.hint
