import pytest

pytestmark = pytest.mark.gpu

SHAPES = [(64, 16384), (37, 1000), (5, 3), (3, 1), (300, 4097), (2, 70000)]


def relative_error(got, reference):
    import torch
    return float((got.double() - reference).abs().max() / reference.abs().clamp_min(1.0).max())


@pytest.mark.parametrize("variant", ["cuda_style", "composition", "tiled_copy"])
@pytest.mark.parametrize("shape", SHAPES)
def test_row_sum_matches_float64_reference(variant, shape, generator):
    import torch
    from benchmarks.kernels import reduce_sum
    x = torch.randn(shape, device="cuda", dtype=torch.float32, generator=generator)
    out = torch.full((shape[0],), float("nan"), device="cuda")
    reduce_sum.prepare(x, out, variant)()
    torch.cuda.synchronize()
    assert not out.isnan().any(), "a row was not written"
    assert relative_error(out, x.double().sum(dim=1)) < 1e-5


@pytest.mark.parametrize("shape,dim", [((4, 37, 64), 0), ((4, 37, 64), 1), ((4, 37, 64), 2), ((4, 37, 64), -1),
                                       ((2, 3, 5, 7), 1), ((2, 3, 5, 7), 3), ((1000, 33), 0), ((8, 4096, 256), 1)])
def test_any_dim_sum_matches_float64_reference(shape, dim, generator):
    import torch
    from benchmarks.kernels import reduce_sum
    x = torch.randn(shape, device="cuda", dtype=torch.float32, generator=generator)
    got = reduce_sum.run_any_dim(x, dim)
    torch.cuda.synchronize()
    reference = x.double().sum(dim=dim)
    assert got.shape == reference.shape
    assert relative_error(got, reference) < 1e-5
