"""A warp collective needs its lanes together, as on a GPU.

A shuffle, a vote, a warp reduction, `warp_idx()` (a shuffle from lane 0 in CuTeDSL), ldmatrix, mma.sync and a
warpgroup's wgmma operations are instructions that lanes execute together. One that not every lane it needs
reaches at the same line stops the launch with a DeadlockError at the learner's line, saying which lanes
arrived, which did not (returned from the kernel, or waiting elsewhere, at which line), and that a GPU hangs or
gives undefined results there. What the PTX ISA allows keeps working: every lane reaching the collective and
then branching, a loop every lane runs as often, lanes that left the kernel (shfl.sync and vote.sync do not
wait for exited lanes; mma.sync, ldmatrix, bar.warp.sync and the warpgroup's .aligned operations do), a mask
naming only the lanes that call it. (Rules and their PTX ISA sentences: cutekit/sim/machine/collectives.py.)"""
import importlib

import numpy
import pytest
import torch

import cutekit
from cutekit.sim import DeadlockError, KernelError


@pytest.fixture(scope="module")
def kernels():
    with cutekit.using("sim", fresh=("tests.sim.divergent_kernels",)):
        yield importlib.import_module("tests.sim.divergent_kernels")


def _run(kernels, case, launch, *arrays, steps=None, **options):
    from cutlass.cute.runtime import from_dlpack
    kernels.CASE[0] = case
    tensors = [from_dlpack(a) for a in arrays]
    getattr(kernels, launch)(*tensors, *(() if steps is None else (steps,)), **options)


def _refused(kernels, case, launch, *arrays, error=DeadlockError, steps=None, **options) -> KernelError:
    with pytest.raises(error) as caught:
        _run(kernels, case, launch, *arrays, steps=steps, **options)
    return caught.value


X = numpy.arange(32, dtype=numpy.float32) - 7         # small integers: every sum is exact in fp32


def _zeros(n=32):
    return numpy.zeros(n, numpy.float32)


# ------------------------------------------------------------------------------------------ refused

def test_a_reduction_under_an_if_some_lanes_skip_reads_lanes_that_returned(kernels):
    """`if tidx % 16 == 0: warp_reduction_sum(x, threads_in_group=16)`: the other lanes return; shfl.sync does
    not wait for them, but the butterfly reads their values, which PTX leaves undefined."""
    error = _refused(kernels, "reduction_under_if", "half_warp_sums", X, _zeros(2))
    message = str(error)
    assert error.line == "mOut[tidx // 16] = cute.arch.warp_reduction_sum(mX[tidx], threads_in_group=16)"
    assert error.where.startswith("divergent_kernels.py, line ")
    assert "cute.arch.warp_reduction_sum() at divergent_kernels.py" in message
    assert "reached by lanes 0,16 of warp 0;" in message
    assert "lanes 1-15,17-31 have returned from the kernel" in message
    assert "lane 0 reads lane 8's value" in message and "undefined" in message


def test_a_reduction_under_an_if_whose_other_lanes_wait_at_a_barrier_hangs(kernels):
    error = _refused(kernels, "reduction_under_if_then_barrier", "half_warp_sums", X, _zeros(2))
    message = str(error)
    assert "cute.arch.warp_reduction_sum(" in error.line
    assert "reached by lanes 0,16 of warp 0" in message
    assert "lanes 1-15,17-31 wait at cute.arch.sync_threads() at divergent_kernels.py:" in message
    assert "a GPU hangs here" in message and "shfl.sync waits until every lane named in its mask" in message


def test_a_shuffle_in_a_divergent_branch_hangs(kernels):
    error = _refused(kernels, "shuffle_in_a_divergent_branch", "shuffle", X, _zeros(), steps=0)
    message = str(error)
    assert error.line == "mOut[tidx] = cute.arch.shuffle_sync_bfly(x, offset=1)"
    assert "cute.arch.shuffle_sync_bfly() at divergent_kernels.py:" in message
    assert "reached by lanes 0-15 of warp 0" in message
    assert "lanes 16-31 wait at cute.arch.sync_threads()" in message and "a GPU hangs here" in message


def test_two_halves_of_a_warp_at_two_different_collectives_hang(kernels):
    error = _refused(kernels, "two_collectives_at_two_lines", "shuffle", X, _zeros(), steps=0)
    message = str(error)
    assert error.line == "mOut[tidx] = cute.arch.shuffle_sync(x, 0)"
    assert "cute.arch.shuffle_sync() at divergent_kernels.py:" in message and "reached by lanes 0-15" in message
    assert "lanes 16-31 wait at cute.arch.warp_reduction_sum() at divergent_kernels.py:" in message


def test_a_shuffle_that_reads_a_lane_that_returned_is_undefined(kernels):
    """Lanes 16-31 return; `shuffle_sync_down(x, 8)` in lanes 8-15 reads lanes 16-23."""
    message = str(_refused(kernels, "reads_a_lane_that_returned", "shuffle", X, _zeros(), steps=0))
    assert "lanes 16-31 have returned" in message and "lane 8 reads lane 16's value" in message


def test_a_whole_warp_reduction_in_a_warp_the_block_does_not_fill_is_undefined(kernels):
    """A block of 48 threads: warp 1 has lanes 0-15 only; a 32-lane butterfly reads lanes that do not exist."""
    x = numpy.arange(48, dtype=numpy.float32)
    message = str(_refused(kernels, "whole_warp_sums", "half_warp_sums", x, _zeros(2), threads=48))
    assert "reached by lanes 0-15 of warp 1; lanes 16-31 are not in the block (it has 48 threads)" in message
    assert "lane 0 reads lane 16's value" in message and "a multiple of 32" in message


def test_a_mask_must_name_the_lane_that_calls_it(kernels):
    error = _refused(kernels, "mask_without_the_caller", "shuffle", X, _zeros(), error=KernelError, steps=0)
    assert error.thread == (16, 0, 0) and "mask 0x0000ffff, which does not name lane 16" in str(error)


def test_warp_idx_inside_if_lane_0_hangs_as_on_an_h100(kernels):
    """CuTeDSL's warp_idx() is a shfl.sync.idx from lane 0 over the whole warp (chapter 05)."""
    message = str(_refused(kernels, "warp_idx_in_lane_0", "shuffle", X, _zeros(), steps=0))
    assert "cute.arch.warp_idx() at divergent_kernels.py:" in message and "reached by lane 0 of warp 0" in message
    assert "lanes 1-31 wait at cute.arch.sync_threads()" in message


def test_ldmatrix_by_half_a_warp_hangs(kernels):
    a, b, c = torch.ones(16, 32, dtype=torch.float16), torch.ones(16, 32, dtype=torch.float16), torch.zeros(16, 16)
    error = _refused(kernels, "ldmatrix_by_half_a_warp", "tensor_core", a, b, c)
    message = str(error)
    assert error.line == "cute.copy(s2r_A, thread_A.partition_S(sA), thread_A.retile(tCrA))"
    assert "ldmatrix (cute.copy) at divergent_kernels.py:" in message and "reached by lanes 0-15 of warp 0" in message
    assert "lanes 16-31 wait at ldmatrix (cute.copy) at divergent_kernels.py:" in message
    assert "ldmatrix is .sync.aligned" in message


def test_mma_sync_under_a_lane_condition_in_warp_0_is_refused(kernels):
    """mma.sync is .sync.aligned: undefined if any lane of the warp has exited (PTX ISA)."""
    a, b, c = torch.ones(16, 32, dtype=torch.float16), torch.ones(16, 32, dtype=torch.float16), torch.zeros(16, 16)
    error = _refused(kernels, "mma_under_a_lane_condition", "tensor_core", a, b, c)
    message = str(error)
    assert error.line == "cute.gemm(tiled_mma, tCrC, tCrA, tCrB, tCrC)"
    assert "mma.sync (cute.gemm) at divergent_kernels.py:" in message and "reached by lanes 0-7 of warp 0" in message
    assert "lanes 8-31 have returned from the kernel without reaching it" in message
    assert "undefined if any lane of the warp has exited" in message


def test_a_warpgroup_fence_by_two_warps_of_four_is_refused(kernels):
    message = str(_refused(kernels, "fence_by_two_warps_of_four", "fence", _zeros(128)))
    assert "warpgroup.fence() at divergent_kernels.py:" in message
    assert "reached by threads 0-63 of warpgroup 0 (threads 0-127)" in message
    assert "threads 64-127 have returned" in message and "all 128 threads of it" in message


# ------------------------------------------------------------------------------------------ allowed

def test_every_lane_reduces_and_then_branches(kernels):
    out = _zeros(2)
    _run(kernels, "all_lanes_then_branch", "half_warp_sums", X, out)
    assert out.tolist() == [X[:16].sum(), X[16:].sum()]


def test_half_warp_reductions_in_a_warp_the_block_fills_by_half_run(kernels):
    x, out = numpy.arange(48, dtype=numpy.float32), _zeros(3)
    _run(kernels, "all_lanes_then_branch", "half_warp_sums", x, out, threads=48)
    assert out.tolist() == [x[:16].sum(), x[16:32].sum(), x[32:].sum()]


def test_lanes_that_returned_are_not_waited_for_by_a_shuffle_that_does_not_read_them(kernels):
    out = _zeros(2)
    _run(kernels, "upper_half_exits", "half_warp_sums", X, out)
    assert out[0] == X[:16].sum()


def test_a_mask_of_the_lanes_that_are_there_lets_half_a_warp_shuffle(kernels):
    out = _zeros()
    _run(kernels, "shuffle_with_a_mask_of_the_lanes_there", "shuffle", X, out, steps=0)
    assert out[:16].tolist() == X[numpy.arange(16) ^ 1].tolist() and not out[16:].any()


def test_a_loop_every_lane_runs_as_often_shuffles_every_time(kernels):
    out, x = _zeros(), X.copy()
    _run(kernels, "loop_with_a_uniform_trip_count", "shuffle", X, out, steps=3)
    for _ in range(3):
        x = x + x[numpy.r_[1:32, 31]]       # down by 1: lane 31's source, 32, is out of range: its own
    assert out.tolist() == x.tolist()


def test_shuffle_up_takes_its_source_lane_as_ptx_computes_it(kernels):
    """shfl.sync.up is valid where lane - b >= the clamp. CuTeDSL 4.8.1's shuffle_sync_up defaults to
    mask_and_clamp=0 (its PTX: `shfl.sync.up.b32 %r8, %r6, 1, 0, -1`): lane i gets lane i - 1's value, lane 0
    its own (CUDA's __shfl_up_sync); with 31 no lane's source is valid and every lane keeps its own. Found by the
    differential test (tests/sim/differential.py, seed 0, case 16)."""
    out = _zeros()
    _run(kernels, "shuffle_up_default_clamp", "shuffle", X, out, steps=0)
    assert out.tolist() == X[numpy.r_[0, 0:31]].tolist()
    _run(kernels, "shuffle_up_clamp_31", "shuffle", X, out, steps=0)
    assert out.tolist() == X.tolist()


def test_a_ballot_counts_the_lanes_still_running(kernels):
    out = _zeros()
    _run(kernels, "ballot_of_the_lanes_still_running", "shuffle", X, out, steps=0)
    assert out[:24].tolist() == [0x555555] * 24


def test_whole_warps_that_leave_do_not_hold_up_the_others_tensor_core_collectives(kernels):
    a = (torch.arange(512) % 7 - 3).to(torch.float16).reshape(16, 32)
    b = (torch.arange(512) % 5 - 2).to(torch.float16).reshape(16, 32)
    c = torch.zeros(16, 16)
    _run(kernels, "whole_warp_0", "tensor_core", a, b, c)
    assert torch.equal(c, a.float() @ b.float().T)


def test_a_warpgroup_fence_by_the_whole_warpgroup_runs(kernels):
    out = _zeros(128)
    _run(kernels, "fence_by_the_whole_warpgroup", "fence", out)
    assert out.all()
