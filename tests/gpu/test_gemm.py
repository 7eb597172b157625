import pytest

pytestmark = pytest.mark.gpu


def relative_error(got, reference):
    return float((got.double() - reference).norm() / reference.norm())


@pytest.mark.parametrize("config", ["teaching", "fast"])
@pytest.mark.parametrize("M,N,K", [(256, 256, 256), (200, 136, 64), (1000, 520, 192), (129, 8, 64), (64, 1024, 4096),
                                   (520, 264, 128)])
def test_tensorcore_gemm_matches_float64_reference(M, N, K, config, generator):
    import torch
    from benchmarks.kernels import gemm_tensorcore
    a = torch.randn(M, K, device="cuda", dtype=torch.float16, generator=generator)
    b = torch.randn(N, K, device="cuda", dtype=torch.float16, generator=generator)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    gemm_tensorcore.prepare(a, b, c, **(gemm_tensorcore.FAST if config == "fast" else {}))()
    torch.cuda.synchronize()
    assert not c.isnan().any(), "an output element was not written"
    assert relative_error(c, a.double() @ b.double().T) < 2e-3


def test_tensorcore_gemm_names_the_k_rule_when_k_is_not_a_multiple_of_64():
    import torch
    from benchmarks.kernels import gemm_tensorcore
    with pytest.raises(ValueError, match="multiple of 64"):
        gemm_tensorcore.run(torch.zeros(64, 100, device="cuda", dtype=torch.float16),
                            torch.zeros(64, 100, device="cuda", dtype=torch.float16))


@pytest.mark.parametrize("M,N,K", [(128, 128, 64), (100, 196, 40), (516, 260, 24), (4, 1028, 1024)])
def test_simt_sgemm_matches_float64_reference(M, N, K, generator):
    import torch
    from benchmarks.kernels import sgemm_simt
    a_t = torch.randn(K, M, device="cuda", dtype=torch.float32, generator=generator)
    b = torch.randn(K, N, device="cuda", dtype=torch.float32, generator=generator)
    c = torch.full((M, N), float("nan"), device="cuda")
    sgemm_simt.prepare(a_t, b, c)()
    torch.cuda.synchronize()
    assert not c.isnan().any(), "an output element was not written"
    # fp32 FFMA lands far under tf32's ~3e-4
    assert relative_error(c, a_t.double().T @ b.double()) < 1e-5


def test_simt_sgemm_names_the_vector_rule_when_m_is_not_a_multiple_of_4():
    import torch
    from benchmarks.kernels import sgemm_simt
    with pytest.raises(ValueError, match="multiples of 4"):
        sgemm_simt.run(torch.zeros(8, 6, device="cuda"), torch.zeros(8, 8, device="cuda"))
