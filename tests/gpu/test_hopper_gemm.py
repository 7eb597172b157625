"""The Hopper GEMM (benchmarks/kernels/hopper_gemm.py: TMA, mbarrier pipeline, wgmma) against a float64
reference, on an sm_90 GPU; every test here skips, with the reason, on older GPUs."""
import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def hopper():
    import torch
    capability = torch.cuda.get_device_capability()
    if capability != (9, 0):
        pytest.skip(f"{torch.cuda.get_device_name()} is sm_{capability[0]}{capability[1]}; wgmma and TMA "
                    "need sm_90 (Hopper)")


# the default, and CTAs in pairs along M that share B's tile by TMA multicast
CONFIGS = {"single": {}, "cluster2": {"CLUSTER_M": 2}}


def relative_error(got, reference):
    return float((got.double() - reference).norm() / reference.norm())


# whole tiles; tiles that M, N and K do not fill (1000 = 7 x 128 + 104 rows, 3 x 256 + 232 columns, 15 x 64 +
# 40 deep); K smaller than one k-tile; N = 8, the narrowest TMA allows; one row; the benchmark's size
@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("M,N,K", [(256, 256, 256), (1000, 1000, 1000), (4096, 3072, 1032), (200, 136, 64),
                                   (129, 8, 72), (520, 264, 24), (64, 1024, 4096), (1, 8, 8), (8192, 8192, 8192)])
def test_hopper_gemm_matches_float64_reference(M, N, K, config, generator):
    import torch
    from benchmarks.kernels import hopper_gemm
    a = torch.randn(M, K, device="cuda", dtype=torch.float16, generator=generator)
    b = torch.randn(N, K, device="cuda", dtype=torch.float16, generator=generator)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    hopper_gemm.prepare(a, b, c, **CONFIGS[config])()
    torch.cuda.synchronize()
    assert not c.isnan().any(), "an output element was not written"
    assert relative_error(c, a.double() @ b.double().T) < 2e-3


@pytest.mark.parametrize("config", list(CONFIGS))
def test_hopper_gemm_leaves_memory_around_c_alone(config, generator):
    """The TMA store is clipped to C's shape: a 1000 x 1000 C inside a larger buffer keeps its neighbours."""
    import torch
    from benchmarks.kernels import hopper_gemm
    a = torch.randn(1000, 200, device="cuda", dtype=torch.float16, generator=generator)
    b = torch.randn(1000, 200, device="cuda", dtype=torch.float16, generator=generator)
    buffer = torch.full((1000 * 1000 + 4096,), 7.0, device="cuda", dtype=torch.float16)
    c = buffer[:1000 * 1000].view(1000, 1000)
    hopper_gemm.prepare(a, b, c, **CONFIGS[config])()
    torch.cuda.synchronize()
    assert bool((buffer[1000 * 1000:] == 7.0).all()), "the store wrote past C's last element"
    assert relative_error(c, a.double() @ b.double().T) < 2e-3


@pytest.mark.parametrize("config", list(CONFIGS))
def test_hopper_gemm_gives_the_same_bits_twice(config, generator):
    """Each output is summed in one fixed order (no split-K, no atomics): a second run must repeat it exactly;
    a pipeline race (a stage refilled while still being read) would show as a difference."""
    import torch
    from benchmarks.kernels import hopper_gemm
    a = torch.randn(2048, 4096, device="cuda", dtype=torch.float16, generator=generator)
    b = torch.randn(2048, 4096, device="cuda", dtype=torch.float16, generator=generator)
    first, second = (hopper_gemm.run(a, b, **CONFIGS[config]) for _ in range(2))
    assert torch.equal(first, second)


def test_both_configurations_give_the_same_bits(generator):
    """The cluster changes who loads B, not what is summed or in which order."""
    import torch
    from benchmarks.kernels import hopper_gemm
    a = torch.randn(1000, 1032, device="cuda", dtype=torch.float16, generator=generator)
    b = torch.randn(3000, 1032, device="cuda", dtype=torch.float16, generator=generator)
    assert torch.equal(hopper_gemm.run(a, b), hopper_gemm.run(a, b, CLUSTER_M=2))


def test_hopper_gemm_names_the_16_byte_row_rule():
    import torch
    from benchmarks.kernels import hopper_gemm
    with pytest.raises(ValueError, match="multiples of 8"):
        hopper_gemm.run(torch.zeros(64, 100, device="cuda", dtype=torch.float16),
                        torch.zeros(64, 100, device="cuda", dtype=torch.float16))
