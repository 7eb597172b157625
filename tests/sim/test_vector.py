"""Large launches run as NumPy vectors (cutekit/sim/memory/vector.py): the same results as the thread-by-thread run,
what vectors cannot run falls back to it, a failure names the thread, a kernel's print comes once."""
import numpy
import pytest

from cutekit.sim.memory import vector


@pytest.fixture
def small_threshold(monkeypatch):
    """Vectorize launches of more than 64 threads, so the tests stay small."""
    monkeypatch.setattr(vector, "THRESHOLD", 64)


def _kernels(sim):
    import cutlass
    import cutlass.cute as cute

    @cute.kernel
    def add_one_thread_each(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        bdim, _, _ = cute.arch.block_dim()
        i = bidx * bdim + tidx
        m, n = gA.shape
        gC[i // n, i % n] = gA[i // n, i % n] + gB[i // n, i % n]

    @cute.kernel
    def add_tiles(gA: cute.Tensor, gC: cute.Tensor, cC: cute.Tensor, shape: cute.Shape, tv: cute.Layout):
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        blkA, blkC, blkCrd = gA[((None, None), bidx)], gC[((None, None), bidx)], cC[((None, None), bidx)]
        thrA = cute.composition(blkA, tv)[(tidx, None)]
        thrC = cute.composition(blkC, tv)[(tidx, None)]
        thrCrd = cute.composition(blkCrd, tv)[(tidx, None)]
        print(f"thrCrd = {thrCrd.type}")
        pred = cute.make_rmem_tensor(thrCrd.shape, cutlass.Boolean)
        for i in cutlass.range_constexpr(cute.size(pred)):
            pred[i] = cute.elem_less(thrCrd[i], shape)
        values = thrA.load()
        thrC.store(cute.where(values > 0, values * 2, cute.full_like(values, 0)))

    @cute.jit
    def add(mA, mB, mC):
        m, n = mA.shape
        add_one_thread_each(mA, mB, mC).launch(grid=((m * n) // 32, 1, 1), block=(32, 1, 1))

    @cute.jit
    def tiles(mA: cute.Tensor, mC: cute.Tensor):
        thr = cute.make_ordered_layout((4, 8), order=(1, 0))
        val = cute.make_ordered_layout((2, 4), order=(1, 0))
        tiler, tv = cute.make_layout_tv(thr, val)
        gA, gC = cute.zipped_divide(mA, tiler), cute.zipped_divide(mC, tiler)
        cC = cute.zipped_divide(cute.make_identity_tensor(mC.shape), tiler)
        add_tiles(gA, gC, cC, mC.shape, tv).launch(grid=[cute.size(gC, mode=[1]), 1, 1],
                                                   block=[cute.size(tv, mode=[0]), 1, 1])

    @cute.kernel
    def first_thread_writes(gC: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        gC[bidx, tidx] = 1.0
        if tidx == 0:                        # a branch on a thread's value: run thread by thread
            gC[bidx, tidx] = 7.0

    @cute.jit
    def branchy(mC):
        first_thread_writes(mC).launch(grid=(mC.shape[0], 1, 1), block=(mC.shape[1], 1, 1))

    @cute.kernel
    def past_the_end(gC: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        gC[bidx * 32 + tidx + 1] = 1.0

    @cute.jit
    def overrun(mC):
        past_the_end(mC).launch(grid=(mC.shape[0] // 32, 1, 1), block=(32, 1, 1))

    return add, tiles, branchy, overrun


def test_a_vectorized_launch_equals_torch(sim, small_threshold):
    from cutlass.cute.runtime import from_dlpack
    import cutekit
    add, *_ = _kernels(sim)
    a, b = numpy.random.default_rng(0).standard_normal((2, 16, 64), dtype=numpy.float32)
    c = numpy.zeros_like(a)
    add(from_dlpack(a), from_dlpack(b), from_dlpack(c))
    numpy.testing.assert_array_equal(c, a + b)
    assert cutekit.sim.last_launch().threads == 1024


def test_tiles_identity_tensor_and_registers_run_as_vectors(sim, small_threshold, capsys):
    from cutlass.cute.runtime import from_dlpack
    _, tiles, *_ = _kernels(sim)
    a = numpy.random.default_rng(1).standard_normal((32, 64), dtype=numpy.float32)
    c = numpy.zeros_like(a)
    tiles(from_dlpack(a), from_dlpack(c))
    numpy.testing.assert_array_equal(c, numpy.where(a > 0, a * 2, 0))
    printed = capsys.readouterr().out.splitlines()
    # once for the launch (not once per thread); the per-thread origin as CuTeDSL 4.8.1 prints it, traced on the CPU
    assert printed == ['thrCrd = !cute.coord_tensor<"(?{div=2},?{div=4})", "((4,2)):((1@1,1@0))">'], printed


def test_a_branch_on_the_thread_index_runs_thread_by_thread(sim, small_threshold):
    from cutlass.cute.runtime import from_dlpack
    *_, branchy, _ = _kernels(sim)
    c = numpy.zeros((8, 32), numpy.float32)
    branchy(from_dlpack(c))
    expected = numpy.ones_like(c)
    expected[:, 0] = 7.0
    numpy.testing.assert_array_equal(c, expected)


def test_an_access_past_the_end_names_the_thread(sim, small_threshold):
    from cutlass.cute.runtime import from_dlpack
    from cutekit.sim.machine import KernelError
    *_, overrun = _kernels(sim)
    c = numpy.zeros(128, numpy.float32)
    with pytest.raises(KernelError, match=r"thread \(31, 0, 0\) of block \(3, 0, 0\)"):
        overrun(from_dlpack(c))
