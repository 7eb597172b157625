"""Chapter 09's Blackwell GEMM (benchmarks/kernels/blackwell_gemm.py: TMA, two stages, tcgen05.mma into tensor
memory) against a float64 reference, on an sm_100a GPU (B200, GB200) or a B300 (sm_103a). Written for a B200
owner and reviewed, but not yet run: the course has been lent no Blackwell GPU. Without a GPU the folder's
conftest deselects these tests; on any other GPU each skips with the one line saying what the kernel needs."""
import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def blackwell():
    from benchmarks.blackwell_gemm_bench import why_not_here
    why = why_not_here()
    if why:
        pytest.skip(why)


def relative_error(got, reference):
    return float((got.double() - reference).norm() / reference.norm())


def operands(M, N, K, generator):
    import torch
    a = torch.randn(M, K, device="cuda", dtype=torch.float16, generator=generator)
    b = torch.randn(N, K, device="cuda", dtype=torch.float16, generator=generator)
    return a, b


# one tile and one k-tile; one k-tile per stage (K = 2 x 64) and one more than the stages (3 x 64); tiles along M
# and N that differ (M = 3 x 128, N = 5 x 128) with a k-loop of 15 laps round the two stages; the benchmark's size
@pytest.mark.parametrize("M,N,K", [(128, 128, 64), (128, 128, 128), (256, 128, 192), (384, 640, 960),
                                   (4096, 4096, 4096)])
def test_blackwell_gemm_matches_float64_reference(M, N, K, generator):
    import torch
    from benchmarks.blackwell_gemm_bench import prepare
    a, b = operands(M, N, K, generator)
    d = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    prepare(a, b, d)()
    torch.cuda.synchronize()
    assert not d.isnan().any(), "an output element was not written"
    assert relative_error(d, a.double() @ b.double().T) < 2e-3


def test_blackwell_gemm_gives_the_same_bits_twice(generator):
    """Each output is summed in one fixed order: a second run must repeat it exactly; a stage refilled while
    the MMAs still read it would show as a difference."""
    import torch
    from benchmarks.blackwell_gemm_bench import prepare
    a, b = operands(1024, 1024, 4096, generator)
    first, second = (torch.empty(1024, 1024, device="cuda", dtype=torch.float16) for _ in range(2))
    prepare(a, b, first)()
    prepare(a, b, second)()
    torch.cuda.synchronize()
    assert torch.equal(first, second)


def test_blackwell_gemm_names_the_tile_rule(generator):
    import torch
    from benchmarks.blackwell_gemm_bench import prepare
    a, b = operands(200, 128, 64, generator)
    with pytest.raises(ValueError, match="multiples of 128 and 128, K of 64; got M=200"):
        prepare(a, b, torch.empty(200, 128, device="cuda", dtype=torch.float16))


def test_the_benchmark_checks_and_times_the_kernel_against_torch(capsys):
    from benchmarks import blackwell_gemm_bench
    assert blackwell_gemm_bench.main(["--size", "1024", "--repeats", "5", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "checked against torch.matmul" in out and "torch time / kernel time" in out, out
