"""Chapter 09's Blackwell GEMM (benchmarks/kernels/blackwell_gemm.py, unchanged) runs on the simulator: TMA loads,
tensor memory allocated by a warp, tcgen05 MMAs issued by one thread for the CTA, tcgen05.commit arriving on
mbarriers, TMEM loads in the epilogue. Its results equal fp32 torch, and each Blackwell mistake a learner makes
in it stops the launch with a message naming the mistake and the line.

A mistake is the kernel's source with one edit (MUTANTS), run as its own module on the simulator; the mistakes no
one-line edit of it can show run on tests/sim/blackwell_kernels.py's one-MMA kernel."""
import pathlib

import pytest
import torch

import cutekit
import cutekit.sim.machine
from tests.sim.gemm_runs import simulated_gemm

ROOT = pathlib.Path(__file__).parents[2]
SOURCE = (ROOT / "benchmarks" / "kernels" / "blackwell_gemm.py").read_text()


def run(source: str, M: int, N: int, K: int):
    """D = A B^T with the kernel built from `source`, on the simulator; returns (D, A, B)."""
    return simulated_gemm("blackwell_gemm", source, M, N, K)


@pytest.mark.parametrize("M, N, K", [
    (256, 256, 128),            # 4 CTAs, 2 k-tiles: each stage filled once
    (128, 128, 320),            # 5 k-tiles on 2 stages: the phases wrap, the producer waits for free stages
])
def test_the_kernel_equals_torch_on_the_simulator(M, N, K):
    d, a, b = run(SOURCE, M, N, K)
    assert (d.float() - a.float() @ b.float().T).abs().max().item() < 0.06


# (mistake, the edit, what the message must say)
MUTANTS = [
    ("no wait for the accumulator", ("    cute.arch.mbarrier_wait(accumulator_ready, 0)\n", ""),
     "read before the MMA's commit completed"),
    ("the accumulator's wait on the wrong parity", ("mbarrier_wait(accumulator_ready, 0)",
                                                    "mbarrier_wait(accumulator_ready, 1)"),
     "read before the MMA's commit completed"),
    ("every lane commits", ("        with cute.arch.elect_one():\n            tcgen05.commit(empty + stage)",
                            "        if True:\n            tcgen05.commit(empty + stage)"),
     "is executed by lanes 0 and 1 of warp 0"),
    ("the producer does not wait for a free stage",
     ("            cute.arch.mbarrier_wait(empty + stage, (k_tile // STAGES - 1) % 2)\n", "            pass\n"),
     "stage reused before its consumer released it"),
    ("the first MMA adds to garbage", ("tiled_mma.set(tcgen05.Field.ACCUMULATE, False)",
                                       "tiled_mma.set(tcgen05.Field.ACCUMULATE, True)"),
     "adds its product to TMEM that nothing has written"),
    ("TMEM never freed", ("        cute.arch.dealloc_tmem(accumulator.iterator, tmem_columns())\n", ""),
     "the CTA ends holding TMEM"),
    ("columns not a power of two", ("return max(32, 1 << (BN - 1).bit_length())", "return 96"),
     "power of two from 32 to 512"),
    ("fewer columns than the accumulator", ("return max(32, 1 << (BN - 1).bit_length())", "return 64"),
     "touches TMEM columns 64-127, which are not allocated"),
    ("more than 512 columns", ("        cute.arch.alloc_tmem(tmem_columns(), tmem_address)     # a whole warp allocates\n",
                               "        cute.arch.alloc_tmem(tmem_columns(), tmem_address)\n"
                               "        cute.arch.alloc_tmem(512, tmem_address)\n"),
     "the CTA hangs"),
]


@pytest.mark.parametrize("mistake, edit, named", MUTANTS, ids=[m[0] for m in MUTANTS])
def test_each_blackwell_mistake_is_named(mistake, edit, named):
    old, new = edit
    assert SOURCE.count(old) == 1, f"the edit for {mistake!r} no longer matches the kernel's source"
    K = 192 if mistake == "the producer does not wait for a free stage" else 128
    with pytest.raises(cutekit.sim.machine.KernelError) as raised:
        run(SOURCE.replace(old, new), 128, 128, K)
    assert named in str(raised.value), str(raised.value)
    assert "blackwell_gemm.py" in str(raised.value)          # it names the kernel's line


def test_without_accumulate_each_mma_overwrites_the_accumulator():
    """CuTeDSL 4.8.1 makes the tcgen05 atom with accumulate off (tcgen05/mma.py: `Boolean(False)` for neg_a,
    neg_b, accum_c), so a kernel that never sets Field.ACCUMULATE to True keeps only the last k-block's product."""
    setting = "            tiled_mma.set(tcgen05.Field.ACCUMULATE, True)\n"
    assert SOURCE.count(setting) == 1
    d, a, b = run(SOURCE.replace(setting, ""), 128, 128, 128)
    last = a[:, 112:].float() @ b[:, 112:].float().T          # K = 128: the last 16-wide k-block
    assert (d.float() - last).abs().max().item() < 0.06


def test_a_load_of_columns_no_mma_wrote_says_so():
    """A k-tile count that rounds down to 0 (K smaller than a k-tile): no MMA is issued, the commit after the loop
    still arrives and the epilogue's wait on it returns, so the load reads TMEM no MMA wrote. The message says that,
    at the load's line (before: "read before the MMA's commit completed ... a wait on the wrong phase", a wait that
    was right)."""
    count = "    k_tiles = cute.size(gA, mode=[2])\n"
    assert SOURCE.count(count) == 1
    with pytest.raises(cutekit.sim.machine.KernelError) as raised:
        run(SOURCE.replace(count, "    k_tiles = cute.size(gA, mode=[2]) - 1\n"), 128, 128, 64)
    message = str(raised.value)
    assert "no tcgen05.mma wrote these columns before this load" in message, message
    assert "the k-loop ran zero times" in message and "read before the MMA's commit completed" not in message
    assert "blackwell_gemm.py" in message and "cute.copy(" in message, message      # the load's line


def test_a_cta_pair_is_refused_by_name():
    with pytest.raises(Exception, match="CtaGroup.TWO|cluster"):
        run(SOURCE.replace("cutlass.Float32, tcgen05.CtaGroup.ONE,", "cutlass.Float32, tcgen05.CtaGroup.TWO,"),
            128, 128, 128)


# ---- the one-MMA kernel: mistakes about who issues the MMA and which TMEM lanes a warp reaches

def one_mma(**knobs):
    with cutekit.using("sim", fresh=("tests.sim.blackwell_kernels",)):
        from tests.sim import blackwell_kernels
        generator = torch.Generator().manual_seed(9)
        a = torch.randn(128, 16, generator=generator).half()
        b = torch.randn(64, 16, generator=generator).half()
        d = torch.zeros(128, 64)
        blackwell_kernels.one_mma(a, b, d, **knobs)
        return d, a, b


def test_one_mma_equals_torch():
    d, a, b = one_mma()
    assert (d - a.float() @ b.float().T).abs().max().item() < 1e-4


@pytest.mark.parametrize("knobs, named", [
    (dict(issuers=2), "is issued by warp 0 and by warp 1"),
    (dict(in_elect_one=True), "inside `with cute.arch.elect_one():`"),
    (dict(slice_shift=32), "warp 0 (thread 0) reaches TMEM lanes 32-63, outside its quarter"),
], ids=["two warps issue the MMA", "the MMA inside elect_one", "a warp reads another warp's lanes"])
def test_one_mma_mistakes_are_named(knobs, named):
    with pytest.raises(cutekit.sim.machine.KernelError) as raised:
        one_mma(**knobs)
    assert named in str(raised.value), str(raised.value)
    assert "blackwell_kernels.py" in str(raised.value)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_tmem_store_then_load_gives_the_values_back(dtype):
    """tcgen05.st (St32x32bOp) then tcgen05.ld (Ld32x32bOp) through a 128 x 32 TMEM tile: lane l holds row l;
    fp16 values one per 32-bit column, stored with Unpack.UNPACK_32b_IN_16b and loaded with Pack.PACK_16b_IN_32b
    (compiled for sm_100a: tcgen05.st...32x32b.x16.unpack::16b and tcgen05.ld...32x32b.x16.pack::16b)."""
    with cutekit.using("sim", fresh=("tests.sim.blackwell_kernels",)):
        from tests.sim import blackwell_kernels
        x, y = torch.randn(128, 32).to(dtype), torch.zeros(128, 32, dtype=dtype)
        blackwell_kernels.round_trip(x, y)
    assert torch.equal(x, y)


def test_tmem_allocator_and_accumulator_pipeline_as_nvidia_writes_them():
    """cutlass.utils.TmemAllocator (allocate, wait_for_alloc, retrieve_ptr, relinquish, free) and
    cutlass.pipeline.PipelineUmmaAsync (the MMA warp commits, 128 threads wait and release), as NVIDIA's
    tour_to_sol_gemm notebook uses them."""
    with cutekit.using("sim", fresh=("tests.sim.blackwell_kernels",)):
        from tests.sim import blackwell_kernels
        generator = torch.Generator().manual_seed(5)
        a = torch.randn(128, 16, generator=generator).half()
        b = torch.randn(64, 16, generator=generator).half()
        d = torch.zeros(128, 64)
        blackwell_kernels.one_mma_pipelined(a, b, d)
    assert (d - a.float() @ b.float().T).abs().max().item() < 1e-4


# ---- tcgen05.wait::ld / wait::st (cute.arch.fence_view_async_tmem_load / _store)

def round_trip(**knobs):
    with cutekit.using("sim", fresh=("tests.sim.blackwell_kernels",)):
        from tests.sim import blackwell_kernels
        x, y = torch.randn(128, 32), torch.zeros(128, 32)
        blackwell_kernels.round_trip(x, y, **knobs)
    return x, y


def test_the_registers_of_a_tmem_load_may_be_used_before_its_wait():
    """The PTX ISA (9.7.16.6.4.5, "Register dependencies, same thread"): "For tcgen05.ld, an intra-thread ordering
    through true register dependency will be respected regardless of the presence or absence of other forms of
    synchronization." CuTeDSL 4.8.1 emits no tcgen05.wait::ld of its own (the one-MMA kernel compiled for sm_100a
    without its fence: one tcgen05.ld, no tcgen05.wait), and NVIDIA's tour_to_sol_gemm and dense_gemm use the
    loaded registers with none: the simulator accepts it, here and in chapter 09's kernel."""
    d, a, b = one_mma(wait_ld=False)
    assert (d - a.float() @ b.float().T).abs().max().item() < 1e-4
    fence = "        cute.arch.fence_view_async_tmem_load()"
    assert SOURCE.count(fence) == 1
    d, a, b = run(SOURCE.replace(fence, "        pass"), 128, 128, 128)
    assert (d.float() - a.float() @ b.float().T).abs().max().item() < 0.06


def test_an_accumulator_reused_after_its_loads_completed_equals_torch():
    d, a, b = one_mma(again=True)
    assert (d - a.float() @ b.float().T).abs().max().item() < 1e-4


@pytest.mark.parametrize("kernel, knobs, named, where", [
    (one_mma, dict(again=True, wait_ld=False),
     "TMEM overwritten before the load that reads it completed: the tcgen05 MMA at blackwell_kernels.py", "warp 0"),
    (round_trip, dict(wait_ld=False, store_back=True),
     "TMEM overwritten before the load that reads it completed: the TMEM store (tcgen05.st) at", "warp 0"),
    (round_trip, dict(wait_st=False),
     "TMEM read before the store that writes it completed: the TMEM load (tcgen05.ld) at", "warp 0"),
], ids=["an MMA overwrites TMEM a load without wait::ld reads", "a store overwrites TMEM its own load still reads",
        "a load reads TMEM a store without wait::st writes"])
def test_tmem_accesses_not_waited_for_are_named(kernel, knobs, named, where):
    """What tcgen05.wait::ld / wait::st order (PTX ISA 9.7.16.6.4.2 and .5): a load's read of TMEM before a later
    write of it ("anti-dependency hazards"), a store's write before a later read."""
    with pytest.raises(cutekit.sim.machine.KernelError) as raised:
        kernel(**knobs)
    message = str(raised.value)
    assert named in message and where in message, message
    assert message.count("blackwell_kernels.py") >= 2, message          # both lines: the access and the earlier one


# ---- 64-row MMAs, fp16 and int32 accumulators, kind::tf32 and kind::i8

@pytest.mark.parametrize("rows, accumulator, operands, K", [
    (64, torch.float32, torch.float16, 16),
    (128, torch.float16, torch.float16, 16),
    (64, torch.float16, torch.float16, 16),
    (128, torch.float32, torch.float32, 16),
    (128, torch.int32, torch.int8, 64),
    (64, torch.int32, torch.int8, 64),
], ids=["64 rows fp32", "fp16 accumulator", "64 rows fp16 accumulator", "kind::tf32", "kind::i8", "64 rows kind::i8"])
def test_mma_shapes_and_kinds_equal_torch(rows, accumulator, operands, K):
    """tests/sim/blackwell_kernels.py's shaped_mma (compiled for sm_100a, 2026-11-28: tcgen05.mma kind::f16,
    kind::tf32 (2 per K 16) or kind::i8 (2 per K 64); its loads tcgen05.ld 16x256b.x8 for 64 rows, 32x32b.x64 for
    128, 32x32b.x32.pack::16b and 16x128b.x8.pack::16b for fp16 accumulators). A 64-row accumulator sits in
    lanes 0-15 of each warp's quarter of TMEM; the simulator rounds each MMA's exact sum once to the
    accumulator's type, and multiplies tf32 operands as the fp32 values they are stored as."""
    generator = torch.Generator().manual_seed(rows + K)
    if operands is torch.int8:
        a = torch.randint(-128, 128, (rows, K), generator=generator, dtype=torch.int8)
        b = torch.randint(-128, 128, (64, K), generator=generator, dtype=torch.int8)
    else:
        a = torch.randn(rows, K, generator=generator).to(operands)
        b = torch.randn(64, K, generator=generator).to(operands)
    d = torch.zeros(rows, 64, dtype=accumulator)
    with cutekit.using("sim", fresh=("tests.sim.blackwell_kernels",)):
        import cutlass
        from tests.sim import blackwell_kernels
        blackwell_kernels.shaped_mma(a, b, d, rows, {torch.float32: cutlass.Float32, torch.float16: cutlass.Float16,
                                                     torch.int32: cutlass.Int32}[accumulator])
    exact = a.double() @ b.double().T
    if accumulator is torch.float32:
        assert (d.double() - exact).abs().max().item() < 1e-4
    elif accumulator is torch.float16:          # rounded once: within half an fp16 ulp of the exact sum
        assert ((d.double() - exact).abs() <= exact.abs() * 2.0 ** -11).all()
    else:
        assert torch.equal(d, exact.to(accumulator))
