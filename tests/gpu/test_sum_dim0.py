"""Chapter 05's exercise 5 on a GPU: the model answer's column sum (solutions/05_tiled_copy.py) against
torch.sum(x, dim=0), both timed in the same process by the check's own harness; the ratio (torch's time over
the kernel's) is printed (`pytest -s` shows it), not graded. Then the check's gpu criterion, run on the model
answer as a learner's answer is run (a fresh process), passes."""
import pathlib

import pytest

from cutekit.checks import check

pytestmark = pytest.mark.gpu

SOLUTION = pathlib.Path(__file__).parents[2] / "solutions" / "05_tiled_copy.py"


def model_answer_source() -> str:
    """Exercise 5's model answer, its kernel and its host function, as a module."""
    text = SOLUTION.read_text()
    start = text.index("@cute.kernel\ndef column_sum_kernel")
    end = text.index('check("ch05.sum_dim0"', start)
    return "import cutlass\nimport cutlass.cute as cute\n\n\n" + text[start:end]


@pytest.fixture(scope="module")
def sum_dim0(module_from_source):
    return module_from_source("exercise_sum_dim0", model_answer_source()).sum_dim0


@pytest.mark.parametrize("shape", [(4096, 8192), (3001, 5004), (8192, 512), (5, 1028), (1, 4)])
def test_the_model_column_sum_equals_torch_and_is_timed_against_it(sum_dim0, shape):
    from cutekit.checks.ch05_tiled_copy import gpu_sum_dim0
    result = gpu_sum_dim0(sum_dim0, {"M": shape[0], "N": shape[1]})
    assert result["wrong"] == 0, f"{result['wrong']} columns differ from torch.sum, the first {result['first']}"
    print(f"\nsum over dim 0, {shape[0]}x{shape[1]}: {result['ms']:.3f} ms, torch.sum {result['torch_ms']:.3f} ms: "
          f"{result['torch_ms'] / result['ms']:.2f} of torch's speed")


def test_the_gpu_criterion_passes_on_the_model_answer(sum_dim0, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "gpu")
    result = check("ch05.sum_dim0", sum_dim0, seed=0, record=False)
    gpu = next(criterion for criterion in result.criteria if criterion.tier == "gpu")
    print(f"\n{gpu.hint}")
    assert gpu.status == "passed" and "torch.sum" in gpu.hint, str(result)
