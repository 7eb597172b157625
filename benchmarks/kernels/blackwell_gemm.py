"""A minimal Blackwell (sm_100a) GEMM written with CuTeDSL for chapter 09: D = A B^T, A (M, K) and B (N, K)
row-major fp16 (K-major), fp32 accumulators in tensor memory (TMEM), D (M, N) row-major fp16.

One CTA of 128 threads computes one 128 x 128 tile of D:
  1. warp 0 sets up the mbarriers (full and empty per stage, and one for "the accumulator is ready") and
     allocates 128 TMEM columns, writing their address to shared memory;
  2. warp 0 runs the main loop (`load_and_multiply`): for each 64-wide k-tile it waits for its stage to be free,
     announces the stage's bytes and issues the two TMA loads, waits for them, issues the 4 tcgen05.mma of
     128 x 128 x 16 (one thread issues each, for the whole CTA), and has tcgen05.commit release the stage when
     they finish; after the last k-tile a commit signals the accumulator barrier;
  3. all four warps (`epilogue`) wait on that barrier and copy the accumulator out of TMEM (tcgen05.ld, 32x32b:
     warp w reads TMEM lanes 32 (w % 4) to 32 (w % 4) + 31, one row per thread) in strips of 32 columns,
     convert to fp16 and store, each load followed by tcgen05.wait::ld;
  4. warp 0 frees the TMEM.
Loads and MMAs of consecutive k-tiles overlap only through the two stages; there is no warp specialisation,
no cluster, no persistent scheduling: it is the smallest whole kernel that uses every piece chapter 09 shows.

Two settings trace variants that chapter 09's exercises complete (`configured(...)`): PRODUCER_WARP=True has warp
1 load (`produce`) while warp 0 only multiplies (`mma_loop`, exercise 3), and ALPHA=a number has the epilogue
compute D = ALPHA A B^T (`scaled_epilogue`, exercise 4). Their checks put the learner's function in place.

M and N must be multiples of the tile (BM, BN) and K of 64 (no predication). It compiles for sm_100a on a CPU
(`cutekit.checks.compile_to_ptx(..., arch="sm_100a")`, chapter 09 section 3) and runs on cutekit's simulator
(`cutekit.use("sim")`, equal to torch); it has not run on a GPU: the course lends no Blackwell GPU.

A tcgen05.ld's registers may be used without a wait (the PTX ISA, 9.7.16.6.4.5: "an intra-thread ordering through
true register dependency will be respected"); tcgen05.wait::ld is what orders the load's read of TMEM before a later
write of those columns or their dealloc ("To enforce such memory orderings and avoiding anti-dependency hazards
around tcgen05.ld, tcgen05.wait::ld must be used"), so the epilogue's loads are waited for before warp 0 frees the
TMEM. Across threads, an MMA's completion is ordered by `tcgen05.commit` to an mbarrier, which other threads wait
for; the PTX ISA's patterns for tcgen05 operations in different threads also put `tcgen05.fence::before_thread_sync`
before the thread synchronisation and `tcgen05.fence::after_thread_sync` after it; the kernel puts them around its
two block barriers and after the wait for the accumulator. CuTeDSL 4.8.1 has no `cute.arch` call for them:
`cutlass.experimental.primitives.tcgen05_fence` emits them. NVIDIA's CuTeDSL Blackwell dense_gemm and CUTLASS's
C++ headers emit none.
"""
import cutlass
import cutlass.cute as cute
import cutlass.utils.blackwell_helpers as blackwell_helpers
from cutlass.cute.nvgpu import OperandMajorMode, cpasync, tcgen05
from cutlass.experimental.primitives import tcgen05_fence

from . import settings

BM, BN, BK, STAGES = 128, 128, 64, 2
THREADS = 128                          # four warps: TMEM's 128 lanes, 32 per warp
EPILOGUE_COLUMNS = 32                  # columns of the accumulator one tcgen05.ld brings to registers
PRODUCER_WARP = False                  # True: warp 1 issues the TMA loads (`produce`), warp 0 only multiplies
ALPHA = None                           # a number: D = ALPHA A B^T, from `scaled_epilogue` (chapter 09's exercise 4)


def tmem_columns() -> int:
    """BN fp32 columns, as tcgen05.alloc takes them: a power of two, at least 32."""
    return max(32, 1 << (BN - 1).bit_length())


def stage_bytes() -> int:
    return (BM + BN) * BK * 2          # one k-tile of A and of B, fp16


@cute.kernel
def blackwell_gemm_kernel(tiled_mma: cute.TiledMma, tma_a: cute.CopyAtom, mA: cute.Tensor, tma_b: cute.CopyAtom,
                          mB: cute.Tensor, mD: cute.Tensor, sA_layout: cute.ComposedLayout,
                          sB_layout: cute.ComposedLayout):
    thread, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    tile_m, tile_n, _ = cute.arch.block_idx()

    smem = cutlass.memory.SmemAllocator()
    barriers = smem.allocate_array(cutlass.Int64, 2 * STAGES + 1, byte_alignment=8)
    tmem_address = smem.allocate_array(cutlass.Int32, 1, byte_alignment=4)
    sA = smem.allocate_tensor(cutlass.Float16, sA_layout.outer, 1024, swizzle=sA_layout.inner)
    sB = smem.allocate_tensor(cutlass.Float16, sB_layout.outer, 1024, swizzle=sB_layout.inner)
    full, empty, accumulator_ready = barriers, barriers + STAGES, barriers + 2 * STAGES

    if warp == 0:
        with cute.arch.elect_one():
            for stage in cutlass.range_constexpr(STAGES):
                cute.arch.mbarrier_init(full + stage, 1)       # one arrival (with the bytes) per fill
                cute.arch.mbarrier_init(empty + stage, 1)      # one tcgen05.commit per drain
            cute.arch.mbarrier_init(accumulator_ready, 1)
        cute.arch.alloc_tmem(tmem_columns(), tmem_address)     # a whole warp allocates
    cute.arch.mbarrier_init_fence()
    tcgen05_fence("before_thread_sync")                        # the alloc is ordered before the barrier...
    cute.arch.sync_threads()                                   # barriers and the TMEM address are visible
    tcgen05_fence("after_thread_sync")                         # ...and the TMEM accesses after it

    # the CTA's tiles: A (BM, BK, k-tiles), B (BN, BK, k-tiles), D (BM, BN)
    tiler = (BM, BN, BK)
    gA = cute.local_tile(mA, tiler, (tile_m, tile_n, None), proj=(1, None, 1))
    gB = cute.local_tile(mB, tiler, (tile_m, tile_n, None), proj=(None, 1, 1))
    gD = cute.local_tile(mD, tiler, (tile_m, tile_n, None), proj=(1, 1, None))
    thr_mma = tiled_mma.get_slice(0)                           # the one "thread" of a tcgen05 MMA: the CTA
    tCgA, tCgB = thr_mma.partition_A(gA), thr_mma.partition_B(gB)
    tCrA, tCrB = tiled_mma.make_fragment_A(sA), tiled_mma.make_fragment_B(sB)   # shared-memory descriptors
    tAsA, tAgA = cpasync.tma_partition(tma_a, 0, cute.make_layout(1), cute.group_modes(sA, 0, 3),
                                       cute.group_modes(tCgA, 0, 3))
    tBsB, tBgB = cpasync.tma_partition(tma_b, 0, cute.make_layout(1), cute.group_modes(sB, 0, 3),
                                       cute.group_modes(tCgB, 0, 3))

    accumulator_layout = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((BM, BN))).layout
    accumulator = cute.make_tensor(cute.arch.retrieve_tmem_ptr(cutlass.Float32, 16, tmem_address),
                                   accumulator_layout)

    k_tiles = cute.size(gA, mode=[2])
    if cutlass.const_expr(PRODUCER_WARP):
        if warp == 1:
            produce(tma_a, tAgA, tAsA, tma_b, tBgB, tBsB, full, empty, k_tiles, STAGES, stage_bytes())
        if warp == 0:
            mma_loop(tiled_mma, accumulator, tCrA, tCrB, full, empty, accumulator_ready, k_tiles, STAGES)
    else:
        if warp == 0:
            load_and_multiply(tiled_mma, accumulator, tCrA, tCrB, tma_a, tAgA, tAsA, tma_b, tBgB, tBsB, full, empty,
                              accumulator_ready, k_tiles)

    if cutlass.const_expr(ALPHA is None):
        epilogue(accumulator, gD, accumulator_ready, thread)
    else:
        scaled_epilogue(accumulator, gD, accumulator_ready, thread, ALPHA)

    tcgen05_fence("before_thread_sync")                        # this thread's TMEM loads, before the barrier
    cute.arch.sync_threads()                                   # every warp has read the TMEM
    tcgen05_fence("after_thread_sync")                         # the dealloc, after it
    if warp == 0:
        cute.arch.relinquish_tmem_alloc_permit()
        cute.arch.dealloc_tmem(accumulator.iterator, tmem_columns())


@cute.jit
def load_and_multiply(tiled_mma, accumulator, tCrA, tCrB, tma_a, tAgA, tAsA, tma_b, tBgB, tBsB, full, empty,
                      accumulator_ready, k_tiles):
    """Warp 0's main loop: for each k-tile, wait until its stage is free, load A's and B's tiles into it with
    TMA, wait for them, issue the UMMAs of the k-tile, and have tcgen05.commit release the stage when they are
    done; after the last k-tile, a commit signals that the accumulator is ready."""
    tiled_mma.set(tcgen05.Field.ACCUMULATE, False)             # the first MMA overwrites the TMEM
    for k_tile in cutlass.range(k_tiles):
        stage = k_tile % STAGES
        if k_tile >= STAGES:                                   # the MMAs of k_tile - STAGES must have finished
            cute.arch.mbarrier_wait(empty + stage, (k_tile // STAGES - 1) % 2)
        with cute.arch.elect_one():
            cute.arch.mbarrier_arrive_and_expect_tx(full + stage, stage_bytes())
        cute.copy(tma_a, tAgA[None, k_tile], tAsA[None, stage], tma_bar_ptr=full + stage)
        cute.copy(tma_b, tBgB[None, k_tile], tBsB[None, stage], tma_bar_ptr=full + stage)
        cute.arch.mbarrier_wait(full + stage, (k_tile // STAGES) % 2)
        for k_block in cutlass.range_constexpr(BK // 16):
            cute.gemm(tiled_mma, accumulator, tCrA[None, None, k_block, stage], tCrB[None, None, k_block, stage],
                      accumulator)
            tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
        with cute.arch.elect_one():
            tcgen05.commit(empty + stage)                      # arrives when these MMAs are done with the stage
    with cute.arch.elect_one():
        tcgen05.commit(accumulator_ready)


@cute.jit
def produce(tma_a, tAgA, tAsA, tma_b, tBgB, tBsB, full, empty, k_tiles, stages, bytes_per_stage):
    """With PRODUCER_WARP, warp 1's loop: for each k-tile, wait until its stage is free (the commit of the MMAs
    that last read it; parity 1 passes a fresh barrier, so the first lap does not wait), announce the stage's
    bytes on full + s and issue the TMA loads of A and B into it."""
    for k_tile in cutlass.range(k_tiles):
        stage = k_tile % stages
        cute.arch.mbarrier_wait(empty + stage, (k_tile // stages + 1) % 2)
        with cute.arch.elect_one():
            cute.arch.mbarrier_arrive_and_expect_tx(full + stage, bytes_per_stage)
        cute.copy(tma_a, tAgA[None, k_tile], tAsA[None, stage], tma_bar_ptr=full + stage)
        cute.copy(tma_b, tBgB[None, k_tile], tBsB[None, stage], tma_bar_ptr=full + stage)


def mma_loop(tiled_mma, accumulator, tCrA, tCrB, full, empty, accumulator_ready, k_tiles, stages):
    """With PRODUCER_WARP, warp 0's loop: chapter 09's exercise 3 (its check puts the learner's in its place);
    the chapter's configuration runs load_and_multiply instead."""
    raise NotImplementedError("mma_loop is chapter 09's exercise 3: its check runs the kernel with yours")


def scaled_epilogue(accumulator, gD, accumulator_ready, thread, alpha):
    """With ALPHA set, the epilogue of D = alpha A B^T: chapter 09's exercise 4 (its check puts the learner's
    in its place)."""
    raise NotImplementedError("scaled_epilogue is chapter 09's exercise 4: its check runs the kernel with yours")


@cute.jit
def epilogue(accumulator, gD, accumulator_ready, thread):
    """All four warps: wait until the accumulator is ready, then copy it out of TMEM (tcgen05.ld, 32x32b: warp w
    reads TMEM lanes 32 (w % 4) to 32 (w % 4) + 31, one row per thread) in strips of EPILOGUE_COLUMNS, convert
    to fp16 and store."""
    cute.arch.mbarrier_wait(accumulator_ready, 0)
    tcgen05_fence("after_thread_sync")                         # the loads come after the MMAs the wait saw finish
    strip = (BM, EPILOGUE_COLUMNS)
    tAcc = cute.flat_divide(accumulator[((None, None), 0, 0)], strip)          # (BM, 32, 1, BN / 32)
    tD = cute.flat_divide(gD, strip)
    load = cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x32), cutlass.Float32)
    tmem_copy = tcgen05.make_tmem_copy(load, tAcc[(None, None, 0, 0)])
    mine = tmem_copy.get_slice(thread)
    from_tmem, to_global = mine.partition_S(tAcc), mine.partition_D(tD)
    values = cute.make_rmem_tensor(to_global[(None, None, None, 0, 0)].shape, cutlass.Float32)
    result = cute.make_rmem_tensor(values.shape, cutlass.Float16)
    for n_strip in cutlass.range_constexpr(BN // EPILOGUE_COLUMNS):
        cute.copy(tmem_copy, from_tmem[(None, None, None, 0, n_strip)], values)
        cute.arch.fence_view_async_tmem_load()                 # tcgen05.wait::ld: this load's TMEM read is done
        result.store(values.load().to(cutlass.Float16))
        cute.autovec_copy(result, to_global[(None, None, None, 0, n_strip)])


@cute.jit
def gemm_tn(mA: cute.Tensor, mB: cute.Tensor, mD: cute.Tensor):
    """D = A B^T for row-major fp16 A (M, K), B (N, K) and D (M, N); M and N multiples of the tile (BM, BN), K of
    BK."""
    tiled_mma = blackwell_helpers.make_trivial_tiled_mma(cutlass.Float16, cutlass.Float16, OperandMajorMode.K,
                                                         OperandMajorMode.K, cutlass.Float32, tcgen05.CtaGroup.ONE,
                                                         (BM, BN))
    sA_layout = blackwell_helpers.make_smem_layout_a(tiled_mma, (BM, BN, BK), cutlass.Float16, STAGES)
    sB_layout = blackwell_helpers.make_smem_layout_b(tiled_mma, (BM, BN, BK), cutlass.Float16, STAGES)
    load = cpasync.CopyBulkTensorTileG2SOp(tcgen05.CtaGroup.ONE)
    tma_a, tma_tensor_a = cute.nvgpu.make_tiled_tma_atom_A(load, mA, cute.select(sA_layout, mode=[0, 1, 2]),
                                                           (BM, BN, BK), tiled_mma)
    tma_b, tma_tensor_b = cute.nvgpu.make_tiled_tma_atom_B(load, mB, cute.select(sB_layout, mode=[0, 1, 2]),
                                                           (BM, BN, BK), tiled_mma)
    grid = [cute.ceil_div(cute.size(mD, mode=[0]), BM), cute.ceil_div(cute.size(mD, mode=[1]), BN), 1]
    blackwell_gemm_kernel(tiled_mma, tma_a, tma_tensor_a, tma_b, tma_tensor_b, mD, sA_layout,
                          sB_layout).launch(grid=grid, block=[THREADS, 1, 1])


KNOBS = ("BN", "STAGES", "PRODUCER_WARP", "ALPHA")


def configured(**knobs):
    """Trace with these module settings (the kernel reads them as compile-time constants), then restore."""
    return settings.overridden(globals(), "blackwell_gemm", KNOBS, knobs)
