"""A named barrier (`cute.arch.barrier(barrier_id=1, number_of_threads=n)`, `bar.sync 1, n`) waits for n
threads of the block, not all of them: the other threads go on (here they return), as on a GPU. A count the
threads that meet there never reach stops the launch naming the barrier and its count."""
import numpy
import pytest


def test_a_named_barrier_waits_for_its_threads_only(sim):
    from cutlass.cute.runtime import from_dlpack

    import tests.sim.kernels as kernels
    out = numpy.zeros(64, numpy.float32)
    kernels.named_barrier(from_dlpack(out))
    assert numpy.array_equal(out, numpy.arange(63, -1, -1, dtype=numpy.float32))


def test_a_named_barrier_whose_count_is_never_reached_is_named(sim):
    from cutlass.cute.runtime import from_dlpack

    import tests.sim.kernels as kernels
    from cutekit.sim.machine import DeadlockError
    with pytest.raises(DeadlockError, match=r"named barrier 1 \(of 96 threads\)"):
        kernels.named_barrier(from_dlpack(numpy.zeros(64, numpy.float32)), 96)


def test_a_named_barrier_count_must_be_whole_warps(sim):
    from cutlass.cute.runtime import from_dlpack

    import tests.sim.kernels as kernels
    with pytest.raises(Exception, match="multiple of 32"):
        kernels.named_barrier(from_dlpack(numpy.zeros(64, numpy.float32)), 48)
