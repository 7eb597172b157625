"""Chapter 05's capstone on a GPU: the model answer's row softmax (solutions/05_tiled_copy.py) against
torch.softmax, both timed in the same process by the check's own harness; the ratio (torch's time over the
kernel's) is printed (`pytest -s` shows it). Then the check's gpu criterion, run on the model answer as a learner's
answer is run (a fresh process), passes with its bar of GPU_THRESHOLD of torch's speed on 8192x8192."""
import pathlib

import pytest

from cutekit.checks import check

pytestmark = pytest.mark.gpu

SOLUTION = pathlib.Path(__file__).parents[2] / "solutions" / "05_tiled_copy.py"


def model_answer_source() -> str:
    """The capstone's model answer, its kernel and its host function, as a module."""
    text = SOLUTION.read_text()
    start = text.index("@cute.kernel\ndef softmax_kernel")
    end = text.index('check("ch05.capstone_softmax"', start)
    return "import cutlass\nimport cutlass.cute as cute\n\n\n" + text[start:end]


@pytest.fixture(scope="module")
def softmax_rows(module_from_source):
    return module_from_source("capstone_softmax", model_answer_source()).softmax_rows


@pytest.mark.parametrize("shape", [(8192, 8192), (3000, 5001), (3000, 5000), (37, 1000), (5, 1), (9, 130)])
def test_the_model_softmax_equals_torch_and_is_timed_against_it(softmax_rows, shape):
    from cutekit.checks.ch05_tiled_copy import GPU_THRESHOLD, gpu_softmax
    result = gpu_softmax(softmax_rows, {"M": shape[0], "N": shape[1]})
    assert result["wrong"] == 0, f"{result['wrong']} outputs differ from torch.softmax, the first at {result['first']}"
    ratio = result["torch_ms"] / result["ms"]
    print(f"\ncapstone softmax {shape[0]}x{shape[1]}: {result['ms']:.3f} ms, torch.softmax {result['torch_ms']:.3f} ms: "
          f"{ratio:.2f} of torch's speed")
    if shape == (8192, 8192):
        assert ratio >= GPU_THRESHOLD, f"{ratio:.2f} of torch.softmax's speed, below the check's {GPU_THRESHOLD}"


def test_the_capstones_gpu_criterion_passes_on_the_model_answer(softmax_rows, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "gpu")
    result = check("ch05.capstone_softmax", softmax_rows, seed=0, record=False)
    gpu = next(criterion for criterion in result.criteria if criterion.tier == "gpu")
    print(f"\n{gpu.hint}")
    assert gpu.status == "passed" and "torch.softmax" in gpu.hint, str(result)
