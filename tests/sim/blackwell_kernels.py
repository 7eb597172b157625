"""One tcgen05 MMA of 128 x 64 x 16 for one CTA, written with CuTeDSL's API, and the knobs that plant the
Blackwell mistakes chapter 09's kernel cannot show by a one-line edit: MMAs issued by several warps, an MMA
inside elect_one, a warp reading another warp's TMEM lanes, an accumulator reused (`again`) while loads of it
have not completed (`wait_ld=False`); and a round trip through TMEM whose waits (tcgen05.wait::st / ::ld) can be
left out, and the same through fp16 TMEM (Pack / Unpack); and shaped_mma, one MMA of 64 or 128 rows of each
kind the simulator runs (f16 with fp32 or fp16 accumulators, tf32, i8). Imported after `cutekit.use("sim")` they
run on the CPU (tests/sim/test_blackwell_kernel.py); each also compiles with CuTeDSL 4.8.1 for sm_100a.

The threads copy A (128 x 16) and B (64 x 16) into shared memory themselves (no TMA), warp 0 allocates TMEM and
issues the MMA, a commit signals an mbarrier, and every warp loads its 32 rows of D out of TMEM."""
import cutlass
import cutlass.cute as cute
import cutlass.utils.blackwell_helpers as blackwell_helpers
from cutlass.cute.nvgpu import OperandMajorMode, tcgen05

BM, BN, BK = 128, 64, 16
COLUMNS = 64


@cute.kernel
def one_mma_kernel(tiled_mma: cute.TiledMma, mA: cute.Tensor, mB: cute.Tensor, mD: cute.Tensor,
                   sA_layout: cute.ComposedLayout, sB_layout: cute.ComposedLayout, issuers: cutlass.Constexpr,
                   in_elect_one: cutlass.Constexpr, slice_shift: cutlass.Constexpr, wait_ld: cutlass.Constexpr,
                   again: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    smem = cutlass.memory.SmemAllocator()
    done = smem.allocate_array(cutlass.Int64, 1, byte_alignment=8)
    tmem_address = smem.allocate_array(cutlass.Int32, 1, byte_alignment=4)
    sA = smem.allocate_tensor(cutlass.Float16, sA_layout.outer, 1024, swizzle=sA_layout.inner)
    sB = smem.allocate_tensor(cutlass.Float16, sB_layout.outer, 1024, swizzle=sB_layout.inner)
    for i in cutlass.range_constexpr(BM * BK // 128):            # A: element (m, k) of the MMA's (M, K) mode
        m, k = (tidx + 128 * i) % BM, (tidx + 128 * i) // BM
        sA[((m, k), 0, 0, 0)] = mA[m, k]
    for i in cutlass.range_constexpr(BN * BK // 128):
        n, k = (tidx + 128 * i) % BN, (tidx + 128 * i) // BN
        sB[((n, k), 0, 0, 0)] = mB[n, k]
    if warp == 0:
        with cute.arch.elect_one():
            cute.arch.mbarrier_init(done, 1)
        cute.arch.alloc_tmem(COLUMNS, tmem_address)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    accumulator_layout = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((BM, BN))).layout
    accumulator = cute.make_tensor(cute.arch.retrieve_tmem_ptr(cutlass.Float32, 16, tmem_address),
                                   accumulator_layout)
    tCrA, tCrB = tiled_mma.make_fragment_A(sA), tiled_mma.make_fragment_B(sB)
    if warp < issuers:
        if cutlass.const_expr(in_elect_one):
            with cute.arch.elect_one():
                cute.gemm(tiled_mma, accumulator, tCrA[None, None, 0, 0], tCrB[None, None, 0, 0], accumulator)
        else:
            cute.gemm(tiled_mma, accumulator, tCrA[None, None, 0, 0], tCrB[None, None, 0, 0], accumulator)
        with cute.arch.elect_one():
            tcgen05.commit(done)
    cute.arch.mbarrier_wait(done, 0)
    tile = accumulator[((None, None), 0, 0)]
    load = cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x64), cutlass.Float32)
    tmem_copy = tcgen05.make_tmem_copy(load, tile)
    mine = tmem_copy.get_slice((tidx + slice_shift) % 128)
    from_tmem, to_global = mine.partition_S(tile), mine.partition_D(mD)
    values = cute.make_rmem_tensor(to_global.shape, cutlass.Float32)
    cute.copy(tmem_copy, from_tmem, values)
    if cutlass.const_expr(wait_ld):
        cute.arch.fence_view_async_tmem_load()
    cute.autovec_copy(values, to_global)
    cute.arch.sync_threads()
    if cutlass.const_expr(again):
        # the accumulator reused for a second tile (here the same product, so D stays A B^T): the MMA may
        # overwrite TMEM only once every warp's loads of it have completed
        if warp == 0:
            cute.gemm(tiled_mma, accumulator, tCrA[None, None, 0, 0], tCrB[None, None, 0, 0], accumulator)
            with cute.arch.elect_one():
                tcgen05.commit(done)
        cute.arch.mbarrier_wait(done, 1)
        cute.copy(tmem_copy, from_tmem, values)
        cute.arch.fence_view_async_tmem_load()
        cute.autovec_copy(values, to_global)
        cute.arch.sync_threads()
    if warp == 0:
        cute.arch.dealloc_tmem(accumulator.iterator, COLUMNS)


@cute.jit
def one_mma(mA: cute.Tensor, mB: cute.Tensor, mD: cute.Tensor, issuers: cutlass.Constexpr = 1,
            in_elect_one: cutlass.Constexpr = False, slice_shift: cutlass.Constexpr = 0,
            wait_ld: cutlass.Constexpr = True, again: cutlass.Constexpr = False):
    """D (128 x 64, fp32) = A (128 x 16) B^T (B 64 x 16), fp16, with one tcgen05 MMA."""
    tiled_mma = blackwell_helpers.make_trivial_tiled_mma(cutlass.Float16, cutlass.Float16, OperandMajorMode.K,
                                                         OperandMajorMode.K, cutlass.Float32, tcgen05.CtaGroup.ONE,
                                                         (BM, BN))
    sA_layout = blackwell_helpers.make_smem_layout_a(tiled_mma, (BM, BN, BK), cutlass.Float16, 1)
    sB_layout = blackwell_helpers.make_smem_layout_b(tiled_mma, (BM, BN, BK), cutlass.Float16, 1)
    one_mma_kernel(tiled_mma, mA, mB, mD, sA_layout, sB_layout, issuers, in_elect_one, slice_shift,
                   wait_ld, again).launch(grid=[1, 1, 1], block=[128, 1, 1])


@cute.kernel
def round_trip_kernel(mX: cute.Tensor, mY: cute.Tensor, tmem_layout: cute.Layout, wait_st: cutlass.Constexpr,
                      wait_ld: cutlass.Constexpr, store_back: cutlass.Constexpr, half: cutlass.Constexpr):
    """X (128 x 32, fp32) -> registers -> TMEM (tcgen05.st) -> registers (tcgen05.ld) -> Y; with `store_back`,
    the loaded registers are stored to the same TMEM again."""
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    smem = cutlass.memory.SmemAllocator()
    tmem_address = smem.allocate_array(cutlass.Int32, 1, byte_alignment=4)
    if warp == 0:
        cute.arch.alloc_tmem(32, tmem_address)
    cute.arch.sync_threads()
    dtype = mX.element_type
    tile = cute.make_tensor(cute.arch.retrieve_tmem_ptr(dtype, 16, tmem_address), tmem_layout)
    if cutlass.const_expr(half):       # 16-bit values one per 32-bit column: a register holds two columns' values
        store = cute.make_copy_atom(tcgen05.St32x32bOp(tcgen05.Repetition.x16, tcgen05.Unpack.UNPACK_32b_IN_16b),
                                    dtype)
        load = cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x16, tcgen05.Pack.PACK_16b_IN_32b), dtype)
    else:
        store = cute.make_copy_atom(tcgen05.St32x32bOp(tcgen05.Repetition.x32), dtype)
        load = cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x32), dtype)
    to_tmem, from_tmem = tcgen05.make_tmem_copy(store, tile), tcgen05.make_tmem_copy(load, tile)
    mine_st, mine_ld = to_tmem.get_slice(tidx), from_tmem.get_slice(tidx)
    values = cute.make_rmem_tensor(mine_ld.partition_D(mY).shape, dtype)
    cute.autovec_copy(mine_ld.partition_D(mX), values)
    cute.copy(to_tmem, values, mine_st.partition_D(tile))
    if cutlass.const_expr(wait_st):
        cute.arch.fence_view_async_tmem_store()
    back = cute.make_rmem_tensor(values.shape, dtype)
    cute.copy(from_tmem, mine_ld.partition_S(tile), back)
    if cutlass.const_expr(wait_ld):
        cute.arch.fence_view_async_tmem_load()
    cute.autovec_copy(back, mine_ld.partition_D(mY))
    if cutlass.const_expr(store_back):
        cute.copy(to_tmem, back, mine_st.partition_D(tile))
        cute.arch.fence_view_async_tmem_store()
    cute.arch.sync_threads()
    if warp == 0:
        cute.arch.dealloc_tmem(tile.iterator, 32)


@cute.jit
def round_trip(mX: cute.Tensor, mY: cute.Tensor, wait_st: cutlass.Constexpr = True,
               wait_ld: cutlass.Constexpr = True, store_back: cutlass.Constexpr = False):
    """Y = X through tensor memory: 128 lanes x 32 columns, a row per lane; X and Y Float32, or Float16 (one
    value a 32-bit column, in elements of 16 bits: lane stride 2 x 65536, column stride 2)."""
    half = cutlass.const_expr(mX.element_type.width == 16)
    tmem_layout = cute.make_layout((128, 32), stride=(131072, 2) if half else (65536, 1))
    round_trip_kernel(mX, mY, tmem_layout, wait_st, wait_ld, store_back, half).launch(grid=[1, 1, 1], block=[128, 1, 1])


@cute.struct
class PipelinedStorage:
    accumulator_barriers: cute.struct.MemRange[cutlass.Int64, 2]
    tmem_holding_buf: cutlass.Int32


@cute.kernel
def one_mma_pipelined_kernel(tiled_mma: cute.TiledMma, mA: cute.Tensor, mB: cute.Tensor, mD: cute.Tensor,
                             sA_layout: cute.ComposedLayout, sB_layout: cute.ComposedLayout):
    """The one-MMA kernel as NVIDIA's tour_to_sol_gemm writes it: a TmemAllocator, and the accumulator handed
    from the MMA warp to the four epilogue warps through a PipelineUmmaAsync."""
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    smem = cutlass.memory.SmemAllocator()
    storage = smem.allocate(PipelinedStorage)
    sA = smem.allocate_tensor(cutlass.Float16, sA_layout.outer, 1024, swizzle=sA_layout.inner)
    sB = smem.allocate_tensor(cutlass.Float16, sB_layout.outer, 1024, swizzle=sB_layout.inner)
    for i in cutlass.range_constexpr(BM * BK // 128):
        m, k = (tidx + 128 * i) % BM, (tidx + 128 * i) // BM
        sA[((m, k), 0, 0, 0)] = mA[m, k]
    for i in cutlass.range_constexpr(BN * BK // 128):
        n, k = (tidx + 128 * i) % BN, (tidx + 128 * i) // BN
        sB[((n, k), 0, 0, 0)] = mB[n, k]
    tmem = cutlass.utils.TmemAllocator(storage.tmem_holding_buf.ptr,
                                       barrier_for_retrieve=cutlass.pipeline.NamedBarrier(barrier_id=1,
                                                                                          num_threads=128))
    tmem.allocate(COLUMNS)
    producer, consumer = cutlass.pipeline.PipelineUmmaAsync.create(
        num_stages=1, producer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread),
        consumer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 128),
        barrier_storage=storage.accumulator_barriers.data_ptr()).make_participants()
    tmem.wait_for_alloc()
    accumulator_layout = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((BM, BN))).layout
    tmem_ptr = tmem.retrieve_ptr(cutlass.Float32)
    accumulator = cute.make_tensor(tmem_ptr, accumulator_layout)
    tCrA, tCrB = tiled_mma.make_fragment_A(sA), tiled_mma.make_fragment_B(sB)
    if warp == 0:
        empty = producer.acquire_and_advance()
        cute.gemm(tiled_mma, accumulator, tCrA[None, None, 0, 0], tCrB[None, None, 0, 0], accumulator)
        empty.commit()
    tmem.relinquish_alloc_permit()
    full = consumer.wait_and_advance()
    tile = accumulator[((None, None), 0, 0)]
    load = cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x64), cutlass.Float32)
    tmem_copy = tcgen05.make_tmem_copy(load, tile)
    mine = tmem_copy.get_slice(tidx)
    values = cute.make_rmem_tensor(mine.partition_D(mD).shape, cutlass.Float32)
    cute.copy(tmem_copy, mine.partition_S(tile), values)
    cute.arch.fence_view_async_tmem_load()
    cute.autovec_copy(values, mine.partition_D(mD))
    full.release()
    cutlass.pipeline.sync(barrier_id=1)
    tmem.free(tmem_ptr)


@cute.jit
def one_mma_pipelined(mA: cute.Tensor, mB: cute.Tensor, mD: cute.Tensor):
    """one_mma's D = A B^T, with NVIDIA's TmemAllocator and PipelineUmmaAsync."""
    tiled_mma = blackwell_helpers.make_trivial_tiled_mma(cutlass.Float16, cutlass.Float16, OperandMajorMode.K,
                                                         OperandMajorMode.K, cutlass.Float32, tcgen05.CtaGroup.ONE,
                                                         (BM, BN))
    sA_layout = blackwell_helpers.make_smem_layout_a(tiled_mma, (BM, BN, BK), cutlass.Float16, 1)
    sB_layout = blackwell_helpers.make_smem_layout_b(tiled_mma, (BM, BN, BK), cutlass.Float16, 1)
    one_mma_pipelined_kernel(tiled_mma, mA, mB, mD, sA_layout, sB_layout).launch(grid=[1, 1, 1],
                                                                                 block=[128, 1, 1])


@cute.kernel
def shaped_mma_kernel(tiled_mma: cute.TiledMma, mA: cute.Tensor, mB: cute.Tensor, mD: cute.Tensor,
                      sA_layout: cute.ComposedLayout, sB_layout: cute.ComposedLayout, ab: cutlass.Constexpr,
                      acc: cutlass.Constexpr, bm: cutlass.Constexpr, bk: cutlass.Constexpr, kmma: cutlass.Constexpr):
    """One tcgen05 MMA of bm x 64 x bk: A, B of type `ab`, the accumulator of type `acc` in TMEM; 64 rows sit in
    lanes 0-15 of each warp's 32 (make_fragment_C's ((16,4),N) layout), read with a 16-lane load; 16-bit
    accumulators sit one per 32-bit TMEM column, read with Pack.PACK_16b_IN_32b (two columns to a register)."""
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    smem = cutlass.memory.SmemAllocator()
    done = smem.allocate_array(cutlass.Int64, 1, byte_alignment=8)
    tmem_address = smem.allocate_array(cutlass.Int32, 1, byte_alignment=4)
    sA = smem.allocate_tensor(ab, sA_layout.outer, 1024, swizzle=sA_layout.inner)
    sB = smem.allocate_tensor(ab, sB_layout.outer, 1024, swizzle=sB_layout.inner)
    for i in cutlass.range_constexpr(bm * bk // 128):       # element (m, k) of MMA k-block k // kmma
        m, k = (tidx + 128 * i) % bm, (tidx + 128 * i) // bm
        sA[((m, k % kmma), 0, k // kmma, 0)] = mA[m, k]
    for i in cutlass.range_constexpr(BN * bk // 128):
        n, k = (tidx + 128 * i) % BN, (tidx + 128 * i) // BN
        sB[((n, k % kmma), 0, k // kmma, 0)] = mB[n, k]
    if warp == 0:
        with cute.arch.elect_one():
            cute.arch.mbarrier_init(done, 1)
        cute.arch.alloc_tmem(COLUMNS, tmem_address)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    accumulator_layout = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((bm, BN))).layout
    accumulator = cute.make_tensor(cute.arch.retrieve_tmem_ptr(acc, 16, tmem_address), accumulator_layout)
    tCrA, tCrB = tiled_mma.make_fragment_A(sA), tiled_mma.make_fragment_B(sB)
    if warp == 0:
        for k_block in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
            cute.gemm(tiled_mma, accumulator, tCrA[None, None, k_block, 0], tCrB[None, None, k_block, 0],
                      accumulator)
            tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
        with cute.arch.elect_one():
            tcgen05.commit(done)
    cute.arch.mbarrier_wait(done, 0)
    tile = accumulator[((None, None), 0, 0)]
    if cutlass.const_expr(acc.width == 16):          # 2 columns a register: 64 columns in 32 (or 16 x 4) registers
        op = tcgen05.Ld32x32bOp(tcgen05.Repetition.x32, tcgen05.Pack.PACK_16b_IN_32b) if cutlass.const_expr(
            bm == 128) else tcgen05.Ld16x128bOp(tcgen05.Repetition.x8, tcgen05.Pack.PACK_16b_IN_32b)
    else:
        op = tcgen05.Ld32x32bOp(tcgen05.Repetition.x64) if cutlass.const_expr(
            bm == 128) else tcgen05.Ld16x256bOp(tcgen05.Repetition.x8)
    tmem_copy = tcgen05.make_tmem_copy(cute.make_copy_atom(op, acc), tile)
    mine = tmem_copy.get_slice(tidx)
    values = cute.make_rmem_tensor(mine.partition_D(mD).shape, acc)
    cute.copy(tmem_copy, mine.partition_S(tile), values)
    cute.arch.fence_view_async_tmem_load()
    cute.autovec_copy(values, mine.partition_D(mD))
    cute.arch.sync_threads()
    if warp == 0:
        cute.arch.dealloc_tmem(accumulator.iterator, COLUMNS)


@cute.jit
def shaped_mma(mA: cute.Tensor, mB: cute.Tensor, mD: cute.Tensor, bm: cutlass.Constexpr = 64,
               acc: cutlass.Constexpr = cutlass.Float32):
    """D (bm x 64, of type `acc`) = A (bm x K) B^T (B 64 x K), K one MMA's or two: fp16 (K 16), tf32 (A and B
    Float32 tensors, K 8 x 2), int8 (K 32 x 2); make_trivial_tiled_mma picks the MMA kind from the types."""
    ab = cutlass.TFloat32 if cutlass.const_expr(mA.element_type == cutlass.Float32) else mA.element_type
    bk = cute.size(mA, mode=[1])
    tiled_mma = blackwell_helpers.make_trivial_tiled_mma(ab, ab, OperandMajorMode.K, OperandMajorMode.K, acc,
                                                         tcgen05.CtaGroup.ONE, (bm, BN))
    sA_layout = blackwell_helpers.make_smem_layout_a(tiled_mma, (bm, BN, bk), ab, 1)
    sB_layout = blackwell_helpers.make_smem_layout_b(tiled_mma, (bm, BN, bk), ab, 1)
    kmma = cute.size(sA_layout.outer, mode=[0, 1])
    shaped_mma_kernel(tiled_mma, mA, mB, mD, sA_layout, sB_layout, ab, acc, bm, bk, kmma).launch(
        grid=[1, 1, 1], block=[128, 1, 1])
