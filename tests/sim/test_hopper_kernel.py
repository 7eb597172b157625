"""Chapter 08's Hopper GEMM (benchmarks/kernels/hopper_gemm.py, unchanged) runs on the simulator: TMA loads
and stores, transaction-counting mbarriers, a producer warp and two consumer warpgroups, wgmma, stmatrix,
named barriers. Its results equal fp32 torch on ragged shapes and several tile settings, and each ordering
mistake a learner makes in it stops the launch with a message naming the mistake and the line.

A mistake is the kernel's source with one edit (MUTANTS), run as its own module on the simulator.
The epilogue's mistakes stop the launch with the same message (word for word, line included) at K = 64, one
k-tile, as at K = 320, five k-tiles on two stages (compared 2026-11-28): make test runs them at K = 64 (a
quarter of the CPU), make test-deep at K = 320. The main loop's mistakes need the laps round the ring."""
import pathlib

import pytest

import cutekit
import cutekit.sim.machine
from tests.sim.gemm_runs import simulated_gemm
from tests.sweep import pick

ROOT = pathlib.Path(__file__).parents[2]
SOURCE = (ROOT / "benchmarks" / "kernels" / "hopper_gemm.py").read_text()


def run(source: str, M: int, N: int, K: int, **knobs):
    """C = A B^T with the kernel built from `source`, on the simulator; returns (C, A, B)."""
    return simulated_gemm("hopper_gemm", source, M, N, K, knobs)


@pytest.mark.parametrize("M, N, K, knobs", [
    (128, 256, 512, {}),                                 # the kernel as benchmarked: 8 k-tiles on 4 stages
    (200, 136, 192, dict(BN=128, STAGES=2)),             # ragged M and N: zero-filled loads, clipped stores
    (136, 64, 520, dict(BN=64, STAGES=3)),               # ragged K: the last k-tile is 8 wide
])  # fewer k-tiles than stages: the chapter's checks run that case for every answer
def test_the_kernel_equals_torch_on_the_simulator(M, N, K, knobs):
    c, a, b = run(SOURCE, M, N, K, **knobs)
    expected = a.float() @ b.float().T
    assert (c.float() - expected).abs().max().item() < 0.06


# (mistake, the edit, what the message must say)
MUTANTS = [
    ("consumers start at phase 1", ("    phase = cutlass.Int32(0)\n    previous_stage",
                                    "    phase = cutlass.Int32(1)\n    previous_stage"), "wrong phase"),
    ("producer starts at phase 0", ("    phase = cutlass.Int32(1)\n    for k_tile",
                                    "    phase = cutlass.Int32(0)\n    for k_tile"),
     "wrong parity"),
    ("producer does not wait for a free stage",
     ("        cute.arch.mbarrier_wait(free, phase)                                    # stage free?", ""),
     "stage reused before its consumer released it"),
    ("a stage released while its wgmmas run", ("        warpgroup.wait_group(1)\n",
                                               "        warpgroup.wait_group(2)\n"),
     "still reading; its group has not been retired"),
    ("released on the current stage's barrier",
     ("cute.arch.mbarrier_arrive(empty + previous_stage)",
      "cute.arch.mbarrier_arrive(empty + stage)"), "an arrival on the wrong stage's barrier"),
    ("no warpgroup.fence", ("        warpgroup.fence()\n", ""), "missing fence"),
    ("plain arrive instead of expect_tx",
     ("cute.arch.mbarrier_arrive_and_expect_tx(filled, bytes_per_stage)",
      "cute.arch.mbarrier_arrive(filled)"), "expected none"),
    ("expect_tx of A's bytes only", ("bytes_per_stage = (BM + BN) * BK * 2 ", "bytes_per_stage = BM * BK * 2 "),
     "announcing fewer completes the phase"),
    ("expect_tx of twice the bytes", ("bytes_per_stage = (BM + BN) * BK * 2 ",
                                      "bytes_per_stage = 2 * (BM + BN) * BK * 2 "), "expect_tx"),
    ("every lane arrives", ("        with cute.arch.elect_one():\n"
                            "            # arrive once and tell full[s] how many bytes the copies will deliver\n"
                            "            cute.arch.mbarrier_arrive_and_expect_tx",
                            "        if True:\n            cute.arch.mbarrier_arrive_and_expect_tx"),
     "elect_one"),
    ("no proxy fence before the TMA store", ('        cute.arch.fence_proxy("async.shared", space="cta")\n', ""),
     "missing fence"),
    ("no wait for the TMA store", ("            cute.arch.cp_async_bulk_wait_group(0, read=True)\n", ""),
     "cp_async_bulk_wait_group"),
    ("no wait_group(0) before the epilogue", ("    warpgroup.wait_group(0)\n", ""), "still in flight"),
    # registers start as garbage: a wgmma that adds to accumulators nothing zeroed reads it
    ("accumulators never zeroed", ("        accumulators.fill(0.0)\n", ""), "accumulators that nothing has written"),
    # every lane of each consumer warp releases the stage: 32 arrivals per warp on a barrier counting 8 warps
    # the barriers' initialization: fenced for the copy engine, then a block barrier before other threads use them
    ("no mbarrier_init_fence", ("    cute.arch.mbarrier_init_fence()\n", ""),
     "whose initialization (at hopper_gemm.py:"),
    ("no barrier after initializing the mbarriers", ("    else:\n        cute.arch.sync_threads()\n",
                                                     "    else:\n        pass\n"),
     "was not initialized (cute.arch.mbarrier_init, or a pipeline's create), not by this point at least"),
    ("every consumer lane arrives on empty", ("            if lane < CLUSTER_M:\n", "            if True:\n"),
     "more arrivals in one phase than mbarrier shared allocation 0[2] counts: it was initialized with count 8"),
]

# the epilogue reads (or writes) the accumulators one element at a time while the last k-tile's wgmmas run
ELEMENT_EPILOGUE = ("        result.store(accumulators.load().to(cutlass.Float16))\n",
                    "        for i in cutlass.range_constexpr(cute.size(accumulators)):\n"
                    "            result[i] = accumulators[i]\n")
MUTANTS += [
    ("element reads before wait_group(0)", [("    warpgroup.wait_group(0)\n", ""), ELEMENT_EPILOGUE],
     "read the accumulators while wgmmas that write them are still in flight"),
    ("element write before wait_group(0)", [("    warpgroup.wait_group(0)\n", "    accumulators[0] = 0.0\n")],
     "wrote the accumulators while wgmmas that write them are still in flight"),
]


# the mistakes after the main loop: the same message at K = 64 as at K = 320 (see the docstring)
EPILOGUE_MISTAKES = {"no proxy fence before the TMA store", "no wait for the TMA store",
                     "no wait_group(0) before the epilogue", "element reads before wait_group(0)",
                     "element write before wait_group(0)"}
assert EPILOGUE_MISTAKES <= {m[0] for m in MUTANTS}, "an epilogue mistake's name no longer names a row of MUTANTS"


@pytest.mark.parametrize("mistake, edit, named", MUTANTS, ids=[m[0] for m in MUTANTS])
def test_each_ordering_mistake_is_named(mistake, edit, named):
    source = SOURCE
    for old, new in (edit if isinstance(edit, list) else [edit]):
        assert source.count(old) == 1, f"the edit for {mistake!r} no longer matches the kernel's source"
        source = source.replace(old, new)
    with pytest.raises(cutekit.sim.machine.KernelError) as raised:
        K = pick(quick=64, deep=320) if mistake in EPILOGUE_MISTAKES else 320
        run(source, 128, 64, K, BN=64, STAGES=2)
    assert named in str(raised.value), str(raised.value)
    assert "hopper_gemm.py" in str(raised.value)          # it names the kernel's line


def test_copies_issued_before_their_bytes_are_announced_are_legal():
    """The tx-count may go below zero: the phase cannot complete before the producer's arrival brings it back."""
    copy_a = "        cute.copy(tma_a, tAgA[None, k_tile], tAsA[None, stage], tma_bar_ptr=filled)\n"
    announce = ("        with cute.arch.elect_one():\n"
                "            # arrive once and tell full[s] how many bytes the copies will deliver\n"
                "            cute.arch.mbarrier_arrive_and_expect_tx(filled, bytes_per_stage)\n")
    assert SOURCE.count(copy_a) == 1 and SOURCE.count(announce) == 1
    c, a, b = run(SOURCE.replace(announce, "").replace(copy_a, copy_a + announce), 128, 64, 320, BN=64, STAGES=2)
    assert (c.float() - a.float() @ b.float().T).abs().max().item() < 0.06


def test_a_copy_nobody_waits_for_is_named_when_the_block_ends():
    """Loading past the last k-tile (a first lap of `stages` copies when there are fewer k-tiles) leaves copies no
    consumer waits for: on a GPU they may still write shared memory that the epilogue reuses."""
    loop = "    for k_tile in range(k_tiles):\n        filled, free"
    assert SOURCE.count(loop) == 1
    with pytest.raises(cutekit.sim.machine.KernelError, match="never waited for"):
        run(SOURCE.replace(loop, "    for k_tile in range(max(k_tiles, stages)):\n        filled, free"),
            128, 64, 64, BN=64, STAGES=3)


def test_without_accumulate_each_wgmma_overwrites_the_accumulators():
    """CuTeDSL 4.8.1 makes the wgmma atom with accumulate off (warpgroup/mma.py: `make_atom(ty,
    [Boolean(False)...])`; its PTX passes the field as wgmma's scale-d predicate), so a kernel that never sets
    Field.ACCUMULATE to True keeps only the last k-block's product, as on a GPU."""
    setting = "        tiled_mma.set(warpgroup.Field.ACCUMULATE, True)\n"
    assert SOURCE.count(setting) == 1
    c, a, b = run(SOURCE.replace(setting, ""), 128, 64, 320, BN=64, STAGES=2)
    last = a[:, 304:].float() @ b[:, 304:].float().T          # K = 320: the last 16-wide k-block
    assert (c.float() - last).abs().max().item() < 0.06
    assert (c.float() - a.float() @ b.float().T).abs().max().item() > 1


def test_accumulate_set_per_thread_before_the_loop_and_false_for_the_first_wgmma():
    """The other legal way to start: no zero fill, the first wgmma overwrites (ACCUMULATE false), then True."""
    fill = ("        accumulators.fill(0.0)\n        tiled_mma.set(warpgroup.Field.ACCUMULATE, True)\n")
    first = ("            cute.gemm(tiled_mma, accumulators, tCrA[None, None, kb, stage], tCrB[None, None, kb, stage],\n"
             "                      accumulators)\n")
    assert SOURCE.count(fill) == 1 and SOURCE.count(first) == 1
    source = SOURCE.replace(fill, "        tiled_mma.set(warpgroup.Field.ACCUMULATE, False)\n").replace(
        first, first + "            tiled_mma.set(warpgroup.Field.ACCUMULATE, True)\n")
    c, a, b = run(source, 128, 64, 320, BN=64, STAGES=2)
    assert (c.float() - a.float() @ b.float().T).abs().max().item() < 0.06


def test_a_late_release_with_more_stages_is_still_correct():
    """wait_group(0) in the loop (no wgmma left running) is slower on a GPU, not wrong."""
    c, a, b = run(SOURCE.replace("        warpgroup.wait_group(1)\n", "        warpgroup.wait_group(0)\n"),
                  128, 64, 320, BN=64, STAGES=4)
    assert (c.float() - a.float() @ b.float().T).abs().max().item() < 0.06


def test_multicast_is_refused_by_name():
    with pytest.raises(Exception, match="multicast|cluster"):
        run(SOURCE, 256, 64, 128, BN=64, STAGES=2, CLUSTER_M=2)
