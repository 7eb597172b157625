import pytest

pytestmark = pytest.mark.gpu

SHAPES = [(1024, 1024), (37, 1000), (5, 3), (1, 1), (129, 257), (300, 1032)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype_name", ["float16", "float32"])
def test_add_matches_torch_exactly_on_every_element_including_partial_tiles(shape, dtype_name, generator):
    import torch
    from benchmarks.kernels import elementwise_add
    dtype = getattr(torch, dtype_name)
    a = torch.randn(shape, device="cuda", dtype=dtype, generator=generator)
    b = torch.randn(shape, device="cuda", dtype=dtype, generator=generator)
    c = torch.full(shape, float("nan"), device="cuda", dtype=dtype)   # poisoned: every element must be written
    elementwise_add.prepare(a, b, c)()
    torch.cuda.synchronize()
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)


def test_add_leaves_memory_after_the_output_untouched(generator):
    import torch
    from benchmarks.kernels import elementwise_add
    a = torch.randn(37, 1000, device="cuda", dtype=torch.float16, generator=generator)
    b = torch.randn(37, 1000, device="cuda", dtype=torch.float16, generator=generator)
    storage = torch.zeros(37 * 1000 + 4096, device="cuda", dtype=torch.float16)
    c = storage[: 37 * 1000].view(37, 1000)
    elementwise_add.prepare(a, b, c)()
    torch.cuda.synchronize()
    assert bool((storage[37 * 1000:] == 0).all())


def test_add_rejects_mismatched_shapes():
    import torch
    from benchmarks.kernels import elementwise_add
    a = torch.zeros(4, 8, device="cuda")
    with pytest.raises(ValueError, match="one shape"):
        elementwise_add.prepare(a, torch.zeros(4, 16, device="cuda"), a)
