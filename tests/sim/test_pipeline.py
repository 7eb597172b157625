"""mbarriers and cutlass.pipeline.PipelineAsync on the simulator (cutekit/sim/ops/pipeline.py), as NVIDIA's
async_pipeline notebook uses them: a producer warp hands values to a consumer warp through shared memory."""
import numpy
import pytest


def _pipeline_kernel(sim, stages: int, skip_release: bool = False):
    import cutlass
    import cutlass.cute as cute

    @cute.kernel
    def hand_over(res: cute.Tensor):
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())

        @cute.struct
        class SharedStorage:
            barriers: cute.struct.MemRange[cutlass.Int64, stages * 2]
            staging: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, stages], 1024]

        storage = cutlass.memory.SmemAllocator().allocate(SharedStorage, 64)
        group = cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 32)
        pipeline = cutlass.pipeline.PipelineAsync.create(num_stages=stages, producer_group=group,
                                                         consumer_group=group,
                                                         barrier_storage=storage.barriers.data_ptr())
        staging = storage.staging.get_tensor(cute.make_layout(stages))
        staging.fill(0)                  # every thread writes the same 0: not a race
        cute.arch.sync_threads()
        producer, consumer = pipeline.make_participants()
        if warp_idx == 0:
            for i in cutlass.range(cute.size(res)):
                handle = producer.acquire_and_advance()
                staging[handle.index] = 1.0 * i
                handle.commit()
            producer.tail()
        if warp_idx == 1:
            for i in cutlass.range(cute.size(res)):
                handle = consumer.wait_and_advance()
                res[i] = staging[handle.index]
                if not skip_release:
                    handle.release()

    @cute.jit
    def run(res: cute.Tensor):
        hand_over(res).launch(grid=(1, 1, 1), block=(64, 1, 1))
    return run


@pytest.mark.parametrize("stages", [1, 3])
def test_a_producer_warp_hands_values_to_a_consumer_warp(sim, stages):
    from cutlass.cute.runtime import from_dlpack
    res = numpy.zeros(8, numpy.float32)
    _pipeline_kernel(sim, stages)(from_dlpack(res))
    numpy.testing.assert_array_equal(res, numpy.arange(8, dtype=numpy.float32))


def test_a_stage_never_released_is_a_deadlock_named_by_its_wait(sim):
    from cutlass.cute.runtime import from_dlpack
    from cutekit.sim.machine import DeadlockError
    with pytest.raises(DeadlockError, match="mbarrier wait on .* for phase parity"):
        _pipeline_kernel(sim, 2, skip_release=True)(from_dlpack(numpy.zeros(8, numpy.float32)))


def test_threads_writing_different_values_still_race(sim):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack
    from cutekit.sim.machine import RaceError

    @cute.kernel
    def every_thread_its_own_value(out: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        shared = cutlass.memory.SmemAllocator().allocate_tensor(cutlass.Float32, cute.make_layout(1))
        shared[0] = 1.0 * tidx
        cute.arch.sync_threads()
        out[tidx] = shared[0]

    @cute.jit
    def run(out: cute.Tensor):
        every_thread_its_own_value(out).launch(grid=(1, 1, 1), block=(4, 1, 1))

    with pytest.raises(RaceError, match="overwrites a value"):
        run(from_dlpack(numpy.zeros(4, numpy.float32)))


def _init_kernel(sim, synchronize: bool):
    import cutlass
    import cutlass.cute as cute

    @cute.kernel
    def arrive_after_init(res: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        bar = cutlass.memory.SmemAllocator().allocate_array(cutlass.Int64, 1, byte_alignment=8)
        if tidx == 0:
            cute.arch.mbarrier_init(bar, 1)
            cute.arch.mbarrier_init_fence()
        if cutlass.const_expr(synchronize):
            cute.arch.sync_threads()
        if tidx == 1:
            cute.arch.mbarrier_arrive(bar)
        if tidx == 2:
            cute.arch.mbarrier_wait(bar, 0)
            res[0] = 1.0

    @cute.jit
    def run(res: cute.Tensor):
        arrive_after_init(res).launch(grid=(1, 1, 1), block=(32, 1, 1))
    return run


def test_another_thread_uses_an_mbarrier_only_after_a_barrier_that_follows_its_init(sim):
    """Thread 0 initializes; thread 1 arrives. With sync_threads between, legal; without, thread 1 may find the
    barrier uninitialized on a GPU (the simulator happens to run thread 0 first, and says so all the same)."""
    from cutlass.cute.runtime import from_dlpack
    from cutekit.sim.machine import KernelError
    res = numpy.zeros(1, numpy.float32)
    _init_kernel(sim, True)(from_dlpack(res))
    assert res[0] == 1.0
    with pytest.raises(KernelError, match=r"which another thread initialized \(at .*\) with no barrier between"):
        _init_kernel(sim, False)(from_dlpack(numpy.zeros(1, numpy.float32)))
