"""What CuTeDSL code from outside the course needs of the simulator (cutekit/sim/compat.py): launch options and
testing.benchmark said once, cute.domain_offset, cutlass.utils.LayoutEnum, cp.async's zero fill under a false
predicate, kernels defined as methods, the old name of the shared-memory allocator."""
import numpy
import pytest

from cutekit.cute.inttuple import CuteError
from cutekit.sim import compat


@pytest.fixture
def said(capsys):
    """Forget the notices a test is about to meet; the stderr lines the simulator prints, as a list."""
    def forget(*keys):
        for key in keys:
            compat._SAID.discard(key)
    forget.lines = lambda: [line for line in capsys.readouterr().err.splitlines() if line.startswith("cutekit simulator")]
    return forget


def _one_thread_kernel(sim):
    import cutlass.cute as cute

    @cute.kernel
    def store_one(gOut: cute.Tensor):
        gOut[0] = 1.0
    return store_one


def test_streams_and_clusters_are_accepted_and_said_once(sim, said):
    from cutlass.cute.runtime import from_dlpack
    said("stream", "cluster", "launch-max_number_threads")
    store_one, out = _one_thread_kernel(sim), numpy.zeros(1, numpy.float32)
    for _ in range(3):
        store_one(from_dlpack(out)).launch(grid=[1, 1, 1], block=[1, 1, 1], stream=object(), cluster=[2, 1, 1],
                                           max_number_threads=[1, 1, 1])
    lines = said.lines()
    assert out[0] == 1.0
    assert len(lines) == 3, lines
    assert any("no CUDA streams" in line for line in lines)
    assert any("cluster=[2, 1, 1]" in line and "no thread-block clusters" in line for line in lines)
    assert any("max_number_threads" in line for line in lines)


def test_a_cluster_of_one_block_says_nothing(sim, said):
    from cutlass.cute.runtime import from_dlpack
    said("cluster")
    _one_thread_kernel(sim)(from_dlpack(numpy.zeros(1, numpy.float32))).launch(cluster=[1, 1, 1])
    assert said.lines() == []


def test_testing_benchmark_calls_once_and_says_graphs_and_timing_once(sim, said):
    import cutlass.cute as cute
    said("graphs", "benchmark")
    calls = []
    arguments = cute.testing.JitArguments(2, scale=3)
    for _ in range(2):
        microseconds = cute.testing.benchmark(lambda x, scale: calls.append(x * scale), kernel_arguments=arguments,
                                              use_cuda_graphs=True, warmup_iterations=5, iterations=50)
        assert microseconds >= 0
    lines = said.lines()
    assert calls == [6, 6]
    assert len(lines) == 2, lines
    assert "no CUDA graphs" in lines[0]
    assert "5 warm-up and 50 timed iterations" in lines[1]


def test_domain_offset_moves_the_origin_also_backwards(sim):
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack
    a = numpy.arange(24, dtype=numpy.float32).reshape(4, 6)
    t = from_dlpack(a)
    moved = cute.domain_offset((1, 2), t)
    assert moved[0, 0] == a[1, 2] and moved[2, 3] == a[3, 5]
    back = cute.domain_offset((-1, 0), moved)         # element c of back is element c + (0, 2) of a
    assert back[1, 0] == a[1, 2] and back[3, 3] == a[3, 5]
    assert cute.domain_offset(0, t)[3, 1] == a[3, 1]
    with pytest.raises(CuteError, match="does not match"):
        cute.domain_offset((1, 2, 3), t)


def test_layout_enum_reads_the_major_mode_of_a_tensor(sim):
    import cutlass
    from cutlass.cute.runtime import from_dlpack
    a = numpy.zeros((4, 6), numpy.float32)
    row, col = cutlass.utils.LayoutEnum.from_tensor(from_dlpack(a)), cutlass.utils.LayoutEnum.from_tensor(from_dlpack(a.T))
    assert row is cutlass.utils.LayoutEnum.ROW_MAJOR and col is cutlass.utils.LayoutEnum.COL_MAJOR
    assert row.is_k_major_a() and row.is_k_major_b() and row.is_n_major_c()
    assert col.is_m_major_a() and col.is_n_major_b() and col.is_m_major_c()
    assert not row.is_m_major_a() and not col.is_k_major_b()


def test_cp_async_with_a_false_predicate_fills_zeros(sim):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    @cute.kernel
    def guarded_copy(gIn: cute.Tensor, gOut: cute.Tensor):
        smem = cutlass.memory.SmemAllocator()
        staged = smem.allocate_tensor(cutlass.Float32, cute.make_layout(8), 16)
        for i in range(8):
            staged[i] = -1.0                    # what a false predicate must not leave behind
        atom = cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), cutlass.Float32, num_bits_per_copy=128)
        pred = cute.make_rmem_tensor(cute.make_layout(2), cutlass.Boolean)
        pred[0], pred[1] = True, False
        cute.copy(atom, cute.zipped_divide(gIn, (4,)), cute.zipped_divide(staged, (4,)), pred=pred)
        cute.arch.cp_async_commit_group()
        cute.arch.cp_async_wait_group(0)
        for i in range(8):
            gOut[i] = staged[i]

    x, out = numpy.arange(1, 9, dtype=numpy.float32), numpy.full(8, 5.0, numpy.float32)
    guarded_copy(from_dlpack(x, assumed_align=16), from_dlpack(out, assumed_align=16)).launch()
    numpy.testing.assert_array_equal(out, [1, 2, 3, 4, 0, 0, 0, 0])


def test_a_kernel_defined_as_a_method_is_bound_to_its_instance(sim):
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    class Scale:
        def __init__(self, factor):
            self.factor = factor

        @cute.kernel
        def kernel(self, gIn: cute.Tensor, gOut: cute.Tensor):
            tidx, _, _ = cute.arch.thread_idx()
            gOut[tidx] = gIn[tidx] * self.factor

        @cute.jit
        def __call__(self, mIn: cute.Tensor, mOut: cute.Tensor):
            self.kernel(mIn, mOut).launch(grid=[1, 1, 1], block=[8, 1, 1])

    x, out = numpy.arange(8, dtype=numpy.float32), numpy.zeros(8, numpy.float32)
    Scale(3.0)(from_dlpack(x), from_dlpack(out))
    numpy.testing.assert_array_equal(out, x * 3)
    assert Scale.kernel is Scale.__dict__["kernel"]


def test_the_old_allocator_name_works_and_warns_as_cutedsl_does(sim):
    """CuTeDSL 4.8.1 moved SmemAllocator to cutlass.memory; cutlass.utils.SmemAllocator still allocates, and each
    construction warns (a DeprecationWarning, an error under `-W error`). The simulator gives the same message,
    read here from the real package where it is installed."""
    import subprocess
    import sys
    import warnings

    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack
    from cutekit.sim.memory.structs import SMEM_ALLOCATOR_MOVED

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        old = cutlass.utils.SmemAllocator()
        cutlass.memory.SmemAllocator()
    assert [(w.category, str(w.message)) for w in seen] == [(DeprecationWarning, SMEM_ALLOCATOR_MOVED)]
    assert isinstance(old, cutlass.memory.SmemAllocator) and seen[0].filename == __file__

    @cute.kernel
    def staged(gOut: cute.Tensor):
        smem = cutlass.utils.SmemAllocator().allocate_tensor(cutlass.Float32, cute.make_layout(4), 16)
        tidx, _, _ = cute.arch.thread_idx()
        smem[tidx] = tidx + 1.0
        cute.arch.sync_threads()
        gOut[tidx] = smem[3 - tidx]

    out = numpy.zeros(4, numpy.float32)
    with pytest.warns(DeprecationWarning, match="use cutlass.memory.SmemAllocator"):
        staged(from_dlpack(out)).launch(block=[4, 1, 1])
    numpy.testing.assert_array_equal(out, [4, 3, 2, 1])

    real = subprocess.run([sys.executable, "-c", "import warnings, cutlass\n"
                           "with warnings.catch_warnings(record=True) as seen:\n"
                           "    warnings.simplefilter('always')\n"
                           "    cutlass.utils.SmemAllocator\n"
                           "    try:\n        cutlass.utils.SmemAllocator()\n    except Exception:\n        pass\n"
                           "print(repr([(w.category.__name__, str(w.message)) for w in seen]))"],
                          capture_output=True, text=True, timeout=120)
    if "No module named" in real.stderr:
        pytest.skip("nvidia-cutlass-dsl is not installed: the message is compared with CuTeDSL 4.8.1's where it is")
    assert real.stdout.strip().splitlines()[-1] == repr([("DeprecationWarning", SMEM_ALLOCATOR_MOVED)]), real.stderr
