"""The simulator's test kernels on a real GPU: the same source gives torch's answers there, as it gives
NumPy's on the simulator (tests/sim), so the two agree."""
import pytest
import torch

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def kernels():
    import importlib
    import sys
    module = sys.modules.get("tests.sim.kernels")
    if module is not None and getattr(module.cutlass, "__cutekit_sim__", False):
        del sys.modules["tests.sim.kernels"]
    return importlib.import_module("tests.sim.kernels")


def cuda(tensor):
    from cutlass.cute.runtime import from_dlpack
    return from_dlpack(tensor, assumed_align=16)


def test_one_thread_per_element_add_on_the_gpu(kernels):
    a, b = torch.randn(100, 36, device="cuda"), torch.randn(100, 36, device="cuda")
    c = torch.zeros_like(a)
    kernels.add_one_per_thread(cuda(a), cuda(b), cuda(c), False)
    torch.cuda.synchronize()
    assert torch.equal(c, a + b)


def test_shared_memory_reverse_with_a_barrier_on_the_gpu(kernels):
    x, out = torch.randn(64, device="cuda"), torch.zeros(64, device="cuda")
    kernels.reverse(cuda(x), cuda(out), True)
    torch.cuda.synchronize()
    assert torch.equal(out, x.flip(0))


@pytest.mark.parametrize("padding", [0, 1])
def test_transpose_through_shared_memory_on_the_gpu(kernels, padding):
    x, out = torch.randn(32, 32, device="cuda"), torch.zeros(32, 32, device="cuda")
    kernels.transpose(cuda(x), cuda(out), padding)
    torch.cuda.synchronize()
    assert torch.equal(out, x.T)


def test_warp_sums_on_the_gpu(kernels):
    x, out = torch.randn(96, device="cuda"), torch.zeros(3, device="cuda")
    kernels.warp_sums(cuda(x), cuda(out))
    torch.cuda.synchronize()
    torch.testing.assert_close(out, x.view(3, 32).sum(1), rtol=1e-5, atol=1e-5)


def test_cp_async_staged_copy_on_the_gpu(kernels):
    x, out = torch.randn(128, device="cuda"), torch.zeros(32, device="cuda")
    kernels.staged_copy(cuda(x), cuda(out), True)
    torch.cuda.synchronize()
    assert torch.equal(out, x.flip(0)[:32])
