"""Hopper (sm_90a) GEMM: fp16 inputs, fp32 accumulation, fp16 output, "TN": C (M, N) = A (M, K) @ B (N, K)^T,
with A and B both K-major (row-major torch tensors `a` and `b`; torch's equivalent is `a @ b.T`).

Chapter 07's kernel (gemm_tensorcore.py) is Ampere code: every thread copies with cp.async, waits, loads
fragments with ldmatrix and issues one 16x8x16 `mma.sync` at a time. On an H100 that path stops near
470-525 TFLOP/s. Hopper adds three pieces of hardware that change the shape of the kernel, one step each:

  1. TMA (the tensor memory accelerator, `cp.async.bulk.tensor`): one thread hands a whole (128, 64) tile of
     A to a copy engine, which writes it into shared memory already swizzled. The copy engine knows the
     tensor's shape, so rows and columns past the edge come back as zeros: no predicates in the kernel.
  2. transaction-counting mbarriers: mbarriers (barriers in shared memory) exist since sm_80; sm_90 adds a
     byte count ("transaction count"): a TMA copy reports to a barrier the bytes that landed, so whoever
     waits on the barrier knows the whole tile is there. Two barriers per stage of the ring of shared-memory
     buffers make a producer/consumer pipeline: `full[s]` (the producer filled stage s) and `empty[s]` (the
     consumers are done with stage s).
  3. wgmma (warpgroup MMA, `wgmma.mma_async`): the four warps of a warpgroup (128 threads) together issue a
     64 x 256 x 16 multiply whose A and B are read by the tensor cores straight from shared memory, through
     a "matrix descriptor", and whose fp32 accumulators stay in registers. It runs asynchronously: the
     warpgroup commits a group of wgmmas and later waits until at most N groups are still running. wgmma
     is sm_90a only: no later GPU runs it (Blackwell's tensor cores take tcgen05 instructions).

With those, the work divides by role (warp specialization) instead of every thread doing everything:

    warpgroup 0 (producer):   one warp issues the TMA loads of A and B, STAGES k-tiles ahead
    warpgroups 1, 2 (consumers): each multiplies its 64 rows of the 128 x 256 tile with wgmma

and the producer gives most of its registers to the consumers (`setmaxnreg`: 40 per producer thread,
232 per consumer thread; a consumer holds 64 x 256 / 128 = 128 fp32 accumulators).

The epilogue: each consumer converts its accumulators to fp16 and writes them into shared memory with
`stmatrix` (the inverse of ldmatrix), in the same swizzled layout TMA uses; then one warp issues the TMA
store of the whole 128 x 256 tile: all 32 of its lanes execute the store instruction (the PTX has no
elect.sync before it, unlike the loads, where CuTeDSL elects one lane; NVIDIA's CuTeDSL Hopper example
stores from one warp the same way), each asking for the same tile. The copy engine clips it at the matrix
edge, so ragged M and N need no predicates either.

One more Hopper feature is a setting, off by default: CLUSTER_M = 2 launches thread-block clusters of two
CTAs that compute neighbouring tile-rows of the same tile-column. They need the same B tile, so each loads
half of it and the copy engine writes ("multicasts") both halves into both CTAs' shared memory; the empty
barriers then count the consumer warps of both CTAs, which arrive on the other CTA's barrier remotely.

Constraints (checked in `prepare`): K and N multiples of 8, because TMA needs every row of A, B and C to
start on a 16-byte boundary. M, N and K are otherwise arbitrary: partial tiles are zero-filled on load and
clipped on store by the copy engine.

Measured on an H100 (benchmarks/RESULTS.md, 2026-11-24): 564-799 TFLOP/s at 8192^3 as the clock moved,
0.981-1.023 of NVIDIA's CuTeDSL Hopper example (same tile, same stages) and 0.984-1.012 of torch.matmul
over 40 rounds (four runs) in which the three were timed in turn on the same inputs. They rise and fall together with
the card's clock under its 700 W limit; the cluster's multicast, which halves B's L2 traffic, measured
0.99 of the default.
"""
from __future__ import annotations

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync, warpgroup

from . import cta, settings, tensors

BM, BN, BK = 128, 256, 64        # CTA tile; BK = 64 fp16 = one 128-byte swizzled row per k-tile row
STAGES = 4                      # ring of shared-memory buffers: 4 x (128 + 256) x 64 x 2 B = 192 KiB
GROUP_M = 8                     # tile-rows visited together (cta.grouped_tile) so that A and B stay in L2
CLUSTER_M = 1                   # 2: CTAs in pairs along M that load B once for both (TMA multicast)
CONSUMER_WARPGROUPS = 2         # each multiplies BM / 2 = 64 rows: wgmma's M is always 64
PRODUCER_REGISTERS = 40         # setmaxnreg: what the TMA warpgroup keeps ...
CONSUMER_REGISTERS = 232        # ... and what each MMA thread gets (128 * 40 + 256 * 232 <= 65536)
WARPGROUP = 128                 # threads in a warpgroup (4 warps)
SMEM_CAPACITY = 227 * 1024      # shared memory one block may use on sm_90

# the named barrier (0 is __syncthreads) on which the consumer warpgroups meet in the epilogue
EPILOGUE_BARRIER = 1


def threads() -> int:
    return WARPGROUP * (1 + CONSUMER_WARPGROUPS)


@cute.kernel
def hopper_gemm_kernel(tma_a: cute.CopyAtom, mA: cute.Tensor, tma_b: cute.CopyAtom, mB: cute.Tensor,
                       tma_c: cute.CopyAtom, mC: cute.Tensor, tiled_mma: cute.TiledMma,
                       sA_layout: cute.ComposedLayout, sB_layout: cute.ComposedLayout,
                       sC_layout: cute.ComposedLayout):
    tidx, _, _ = cute.arch.thread_idx()
    # the warp index is the same for all 32 lanes; saying so lets the compiler branch once per warp
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    role = warp // 4                                      # 0: producer warpgroup, 1..: consumer warpgroups
    lane = tidx % 32

    # ---- 1. which tile: the CTA's linear index, GROUP_M tile-rows at a time for L2 reuse (as in chapter 07).
    # With CLUSTER_M = 2 the pair of CTAs of a cluster takes tile-rows 2p and 2p + 1 of one tile-column: the
    # same B tile, which each of them loads half of and multicasts to both
    linear, _, _ = cute.arch.block_idx()
    tiles_m = cute.ceil_div(cute.size(mC, mode=[0]), BM)
    tiles_n = cute.ceil_div(cute.size(mC, mode=[1]), BN)
    rank = cutlass.Int32(0)
    if cutlass.const_expr(CLUSTER_M > 1):
        rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
    pair_m, n_tile = cta.grouped_tile(linear // CLUSTER_M, cute.ceil_div(tiles_m, CLUSTER_M), tiles_n,
                                      max(GROUP_M // CLUSTER_M, 1))
    m_tile = pair_m * CLUSTER_M + rank      # past the last tile-row when tiles_m is odd: loads zeros, stores nothing
    # mA, mB, mC are TMA coordinate tensors: tiling them gives the coordinates a TMA copy asks for
    gA = cute.local_tile(mA, (BM, BK), (m_tile, None))    # (BM, BK, k_tiles)
    gB = cute.local_tile(mB, (BN, BK), (n_tile, None))    # (BN, BK, k_tiles)
    gC = cute.local_tile(mC, (BM, BN), (m_tile, n_tile))  # (BM, BN)
    k_tiles = cute.size(gA, mode=[2])

    # ---- 2. shared memory: the barriers, then A and B stages. The swizzle is given to the pointer (it
    # permutes byte addresses: 16-byte chunks XOR the 128-byte row index), the layout maps (row, k, stage)
    # to elements; 1024-byte alignment because the swizzle pattern repeats every 8 rows of 128 bytes
    smem = cutlass.memory.SmemAllocator()
    # barriers + s is full[s] (producer -> consumers: "stage s filled"), barriers + STAGES + s is empty[s]
    # (consumers -> producer: "stage s free")
    barriers = smem.allocate_array(cutlass.Int64, 2 * STAGES, byte_alignment=8)
    sA = smem.allocate_tensor(cutlass.Float16, sA_layout.outer, 1024, swizzle=sA_layout.inner)
    sB = smem.allocate_tensor(cutlass.Float16, sB_layout.outer, 1024, swizzle=sB_layout.inner)
    # C's tile (BM x BN fp16 = 64 KiB) reuses A's stages (4 x BM x BK fp16 = 64 KiB; B's where A's are too
    # small) once the MMAs are done
    reused = sA if cutlass.const_expr(BM * BN <= BM * BK * STAGES) else sB
    sC = cute.make_tensor(cute.recast_ptr(reused.iterator, sC_layout.inner, dtype=cutlass.Float16),
                          sC_layout.outer)

    consumer_warps = 4 * CONSUMER_WARPGROUPS
    if warp == 0:
        with cute.arch.elect_one():
            for stage in cutlass.range_constexpr(STAGES):
                # full[s] completes when the producer has arrived once AND the expected bytes have landed
                cute.arch.mbarrier_init(barriers + stage, 1)
                # empty[s] completes when every consumer warp (of every CTA that writes into this stage:
                # the cluster's, with multicast) has arrived, one lane each
                cute.arch.mbarrier_init(barriers + STAGES + stage, consumer_warps * CLUSTER_M)
    # make the initialised barriers visible to the copy engine (the "async proxy") and to the other CTA of
    # the cluster, then to every thread
    cute.arch.mbarrier_init_fence()
    if cutlass.const_expr(CLUSTER_M > 1):
        cute.arch.cluster_arrive_relaxed()
        cute.arch.cluster_wait()
    else:
        cute.arch.sync_threads()

    if role == 0:
        # ================= producer warpgroup: TMA loads =================
        cute.arch.setmaxregister_decrease(PRODUCER_REGISTERS)
        if warp == 0:
            # tAsA: this CTA's A stages as TMA sees them ((TMA box), STAGES); tAgA: ((TMA box), k_tiles)
            tAsA, tAgA = cpasync.tma_partition(tma_a, 0, cute.make_layout(1),
                                               cute.group_modes(sA, 0, 2), cute.group_modes(gA, 0, 2))
            # with multicast, this CTA's share of the B box: rows rank * BN / CLUSTER_M onwards
            tBsB, tBgB = cpasync.tma_partition(tma_b, rank, cute.make_layout(CLUSTER_M),
                                               cute.group_modes(sB, 0, 2), cute.group_modes(gB, 0, 2))
            bytes_per_stage = (BM + BN) * BK * 2              # all of B arrives, from both CTAs of a pair
            produce(tma_a, tAgA, tAsA, tma_b, tBgB, tBsB, barriers, barriers + STAGES, k_tiles, STAGES, bytes_per_stage)
    else:
        # ================= consumer warpgroups: wgmma, then the epilogue =================
        cute.arch.setmaxregister_increase(CONSUMER_REGISTERS)
        consumer_thread = tidx - WARPGROUP                 # 0 .. 128 * CONSUMER_WARPGROUPS - 1
        # a wgmma "thread" of the TiledMMA is a whole warpgroup: slice by the warpgroup's first thread
        thr_mma = tiled_mma.get_slice((role - 1) * WARPGROUP)
        tCsA = thr_mma.partition_A(sA)                     # (MMA, MMA_M, MMA_K, STAGES): this warpgroup's rows
        tCsB = thr_mma.partition_B(sB)                     # (MMA, MMA_N, MMA_K, STAGES)
        tCrA = tiled_mma.make_fragment_A(tCsA)             # matrix descriptors of shared memory, not registers
        tCrB = tiled_mma.make_fragment_B(tCsB)
        accumulators = cute.make_rmem_tensor(thr_mma.partition_C(gC).shape, cutlass.Float32)
        accumulators.fill(0.0)
        tiled_mma.set(warpgroup.Field.ACCUMULATE, True)

        consume(tiled_mma, accumulators, tCrA, tCrB, barriers, barriers + STAGES, k_tiles, STAGES, lane)

        # ---- epilogue: fp32 accumulators -> fp16 -> shared memory (stmatrix) -> global memory (TMA store)
        # sC lives in A's stages: wait until both warpgroups' wgmmas have stopped reading them
        cute.arch.barrier(barrier_id=EPILOGUE_BARRIER, number_of_threads=WARPGROUP * CONSUMER_WARPGROUPS)
        r2s = cute.make_tiled_copy_C(
            cute.make_copy_atom(cute.nvgpu.warp.StMatrix8x8x16bOp(False, 4), cutlass.Float16), tiled_mma)
        thr_r2s = r2s.get_slice(consumer_thread)
        result = cute.make_rmem_tensor(accumulators.shape, cutlass.Float16)
        result.store(accumulators.load().to(cutlass.Float16))
        cute.copy(r2s, thr_r2s.retile(result), thr_r2s.partition_D(sC))
        # stmatrix wrote through the ordinary ("generic") proxy; the TMA store reads through the async proxy
        cute.arch.fence_proxy("async.shared", space="cta")
        cute.arch.barrier(barrier_id=EPILOGUE_BARRIER, number_of_threads=WARPGROUP * CONSUMER_WARPGROUPS)
        if warp == 4:
            tCsC, tCgC = cpasync.tma_partition(tma_c, 0, cute.make_layout(1),
                                               cute.group_modes(sC, 0, 2), cute.group_modes(gC, 0, 2))
            cute.copy(tma_c, tCsC, tCgC)
            cute.arch.cp_async_bulk_commit_group()
            # the block's shared memory is released when it exits: wait until the copy engine has read sC
            cute.arch.cp_async_bulk_wait_group(0, read=True)

    if cutlass.const_expr(CLUSTER_M > 1):
        # the other CTA still arrives on this CTA's empty barriers after this one's last k-tile: neither
        # leaves (and releases its shared memory) before both are done
        cute.arch.cluster_arrive()
        cute.arch.cluster_wait()


@cute.jit
def produce(tma_a, tAgA, tAsA, tma_b, tBgB, tBsB, full, empty, k_tiles, stages, bytes_per_stage):
    """The producer warp's loop: for every k-tile, wait until its stage is free (empty + s), announce the
    stage's bytes on full + s and issue the TMA loads of A and B into it (stages and bytes_per_stage are
    Python ints: compile-time constants)."""
    stage = cutlass.Int32(0)
    # a fresh barrier is in phase 0; waiting for parity 1 means "the phase before", which counts as
    # complete, so the first pass over the ring does not wait for consumers that have not started
    phase = cutlass.Int32(1)
    for k_tile in range(k_tiles):
        filled, free = full + stage, empty + stage
        cute.arch.mbarrier_wait(free, phase)                                    # stage free?
        with cute.arch.elect_one():
            # arrive once and tell full[s] how many bytes the copies will deliver
            cute.arch.mbarrier_arrive_and_expect_tx(filled, bytes_per_stage)
        # A's box, then B's (with multicast: this CTA's share, written into every CTA of the cluster at the
        # same shared-memory offset, completing bytes on each one's full[s])
        cute.copy(tma_a, tAgA[None, k_tile], tAsA[None, stage], tma_bar_ptr=filled)
        if cutlass.const_expr(CLUSTER_M > 1):
            cute.copy(tma_b, tBgB[None, k_tile], tBsB[None, stage], tma_bar_ptr=filled,
                      mcast_mask=cutlass.Int16((1 << CLUSTER_M) - 1))
        else:
            cute.copy(tma_b, tBgB[None, k_tile], tBsB[None, stage], tma_bar_ptr=filled)
        stage = stage + 1
        if stage == stages:
            stage = cutlass.Int32(0)
            phase = phase ^ 1


@cute.jit
def consume(tiled_mma, accumulators, tCrA, tCrB, full, empty, k_tiles, stages, lane):
    """A consumer warpgroup's main loop: for every k-tile, wait until its stage is filled (full + s), issue
    its wgmmas, keep them running while the previous k-tile's are retired, then release the previous
    k-tile's stage (empty + s); at the end, wait for every wgmma."""
    k_blocks = cute.size(tCrA, mode=[2])              # BK / 16 = 4 wgmmas per k-tile
    stage = cutlass.Int32(0)
    phase = cutlass.Int32(0)
    previous_stage = cutlass.Int32(0)
    for k_tile in range(k_tiles):
        cute.arch.mbarrier_wait(full + stage, phase)                           # stage filled?
        # order the registers' last writes (the zero fill, earlier wgmmas) before the tensor cores use them
        warpgroup.fence()
        for kb in cutlass.range_constexpr(k_blocks):
            cute.gemm(tiled_mma, accumulators, tCrA[None, None, kb, stage], tCrB[None, None, kb, stage],
                      accumulators)
        warpgroup.commit_group()
        # keep this k-tile's wgmmas running, but wait for the previous k-tile's: its stage can be refilled
        warpgroup.wait_group(1)
        if k_tile > 0:
            # lane r of each warp tells CTA r of the cluster (with CLUSTER_M = 1: this CTA, lane 0)
            if lane < CLUSTER_M:
                if cutlass.const_expr(CLUSTER_M > 1):
                    cute.arch.mbarrier_arrive(empty + previous_stage, lane)
                else:
                    cute.arch.mbarrier_arrive(empty + previous_stage)
        previous_stage = stage
        stage = stage + 1
        if stage == stages:
            stage = cutlass.Int32(0)
            phase = phase ^ 1
    warpgroup.wait_group(0)


@cute.jit
def gemm_tn(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    """C = A @ B^T with A (M, K), B (N, K) K-major fp16 and C (M, N) row-major fp16 (fp32 accumulation)."""
    # the 128-byte-swizzle atom: 8 rows of 64 fp16 (128 bytes each), the 16-byte chunks of row r XORed with
    # r % 8, so that the 8 rows of one chunk column sit in 8 different bank groups. wgmma's matrix
    # descriptor and TMA both know this pattern ("SWIZZLE_128B"); it is chapter 07's S<3,3,3> in bytes
    atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cutlass.Float16)
    sA_layout = cute.tile_to_shape(atom, (BM, BK, STAGES), order=(0, 1, 2))
    sB_layout = cute.tile_to_shape(atom, (BN, BK, STAGES), order=(0, 1, 2))
    # C is N-major (row-major): the same atom with N in the role of K, BN / 64 column blocks of 128 bytes
    sC_layout = cute.tile_to_shape(atom, (BM, BN), order=(0, 1))

    # TMA atoms: one descriptor per tensor (shape, strides, box, swizzle), built on the host at launch time.
    # The second result is a coordinate tensor of A's shape whose entries are what the copy engine is asked
    tma_a, tma_tensor_a = cpasync.make_tiled_tma_atom(
        cpasync.CopyBulkTensorTileG2SOp(), mA, cute.slice_(sA_layout, (None, None, 0)), (BM, BK))
    load_b = cpasync.CopyBulkTensorTileG2SMulticastOp() if CLUSTER_M > 1 else cpasync.CopyBulkTensorTileG2SOp()
    tma_b, tma_tensor_b = cpasync.make_tiled_tma_atom(
        load_b, mB, cute.slice_(sB_layout, (None, None, 0)), (BN, BK), num_multicast=CLUSTER_M)
    tma_c, tma_tensor_c = cpasync.make_tiled_tma_atom(
        cpasync.CopyBulkTensorTileS2GOp(), mC, sC_layout, (BM, BN))

    # one 64 x BN x 16 wgmma per warpgroup, CONSUMER_WARPGROUPS of them stacked along M; A and B from
    # shared memory, both K-major
    mma = warpgroup.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (64, BN, 16), warpgroup.OperandSource.SMEM,
                                 cute.nvgpu.OperandMajorMode.K, cute.nvgpu.OperandMajorMode.K)
    tiled_mma = cute.make_tiled_mma(cute.make_mma_atom(mma), (CONSUMER_WARPGROUPS, 1, 1))

    # with clusters the tile-rows are rounded up to whole pairs
    tiles_m = cute.ceil_div(cute.ceil_div(cute.size(mC, mode=[0]), BM), CLUSTER_M) * CLUSTER_M
    tiles = tiles_m * cute.ceil_div(cute.size(mC, mode=[1]), BN)
    hopper_gemm_kernel(tma_a, tma_tensor_a, tma_b, tma_tensor_b, tma_c, tma_tensor_c, tiled_mma,
                       sA_layout, sB_layout, sC_layout).launch(grid=[tiles, 1, 1], block=[threads(), 1, 1],
                                                               cluster=[CLUSTER_M, 1, 1])


KNOBS = ("BN", "STAGES", "GROUP_M", "CLUSTER_M")
_compiled = {}


def configured(**knobs):
    """Trace with these module settings (the kernel reads them as compile-time constants), then restore."""
    return settings.overridden(globals(), "hopper_gemm", KNOBS, knobs)


def check_settings():
    """Raise ValueError if the module's settings cannot work: the stages must fit in shared memory."""
    smem_bytes = (BM + BN) * BK * 2 * STAGES + 2 * STAGES * 8
    if smem_bytes > SMEM_CAPACITY:
        raise ValueError(f"{STAGES} stages of {BM}x{BK} A and {BN}x{BK} B need {smem_bytes} bytes of shared "
                         f"memory; an sm_90 block has {SMEM_CAPACITY}")
    if CLUSTER_M not in (1, 2):
        raise ValueError(f"CLUSTER_M must be 1 or 2, got {CLUSTER_M}")
    if BN % 64 or not 64 <= BN <= 256:
        raise ValueError(f"BN must be 64, 128, 192 or 256 (a wgmma N, in 128-byte column blocks), got {BN}")


def compile_for_cpu(**knobs):
    """Compile `gemm_tn` for fake fp16 tensors without a GPU. Needs CUTE_DSL_ARCH=sm_90a in the environment
    before cutlass is first imported (wgmma exists only on sm_90a)."""
    fakes = [tensors.fake_tensor(cutlass.Float16, 2, 8) for _ in range(3)]
    with configured(**knobs):
        check_settings()
        return tensors.compile_with_ptx(gemm_tn, *fakes)


def check_shapes(M: int, N: int, K: int):
    """Raise ValueError with the rule broken, if (M, N, K) is outside what the kernel supports."""
    if M < 1 or N < 1 or K < 1:
        raise ValueError(f"empty problem M={M}, N={N}, K={K}")
    if K % 8 or N % 8:
        raise ValueError(f"hopper_gemm needs K and N to be multiples of 8 (TMA: every row starts on a 16-byte "
                         f"boundary), got N={N}, K={K}")


def prepare(a, b, c, **knobs):
    """`launch()` computing c = a @ b.T for fp16 CUDA tensors a (M, K), b (N, K), c (M, N), all row-major,
    on an sm_90 GPU. `knobs` override the module's settings for this compilation."""
    import torch
    if not (a.dtype == b.dtype == c.dtype == torch.float16):
        raise ValueError("hopper_gemm needs float16 a, b and c")
    M, K = a.shape
    N = b.shape[0]
    if b.shape[1] != K or tuple(c.shape) != (M, N):
        raise ValueError(f"shapes do not chain: a {tuple(a.shape)}, b {tuple(b.shape)}, c {tuple(c.shape)}")
    check_shapes(M, N, K)
    if not all(t.is_contiguous() and t.data_ptr() % 16 == 0 for t in (a, b, c)):
        raise ValueError("hopper_gemm needs contiguous, 16-byte aligned tensors")
    if torch.cuda.get_device_capability(a.device) != (9, 0):
        raise ValueError(f"hopper_gemm needs an sm_90 GPU (wgmma, TMA), not {torch.cuda.get_device_name(a.device)}")
    args = [tensors.from_torch(t, 8) for t in (a, b, c)]
    key = tuple(sorted(knobs.items()))
    if key not in _compiled:
        with configured(**knobs):
            check_settings()
            _compiled[key] = cute.compile(gemm_tn, *args)
    compiled = _compiled[key]
    return lambda: compiled(*args)


def run(a, b, **knobs):
    """a @ b.T (fp16, fp32 accumulation) with the Hopper kernel."""
    import torch
    c = torch.empty(a.shape[0], b.shape[0], device=a.device, dtype=torch.float16)
    prepare(a, b, c, **knobs)()
    return c
