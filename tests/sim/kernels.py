"""Small kernels written with CuTeDSL's API, each showing one behaviour of the simulator (and of a GPU).
Imported after `cutekit.use("sim")` they run on the CPU; under real CuTeDSL on a GPU, on the GPU."""
import cutlass
import cutlass.cute as cute


# ---- one thread per element, CUDA style, with a bounds guard (off_by_one plants the classic bug)
@cute.kernel
def add_one_per_thread_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor, off_by_one: cutlass.Constexpr):
    tx, ty, _ = cute.arch.thread_idx()
    bx, by, _ = cute.arch.block_idx()
    dx, dy, _ = cute.arch.block_dim()
    row = by * dy + ty
    col = bx * dx + tx
    rows, cols = cute.size(gA, mode=[0]), cute.size(gA, mode=[1])
    limit = rows + 1 if cutlass.const_expr(off_by_one) else rows
    if row < limit:
        if col < cols:
            gC[row, col] = gA[row, col] + gB[row, col]


@cute.jit
def add_one_per_thread(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, off_by_one: cutlass.Constexpr = False):
    rows, cols = cute.size(mA, mode=[0]), cute.size(mA, mode=[1])
    add_one_per_thread_kernel(mA, mB, mC, off_by_one).launch(
        grid=[cute.ceil_div(cols, 16), cute.ceil_div(rows, 16), 1], block=[16, 16, 1])


# ---- shared memory: reverse a block's 64 values (with or without the barrier)
@cute.kernel
def reverse_kernel(gIn: cute.Tensor, gOut: cute.Tensor, barrier: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.memory.SmemAllocator()
    buffer = smem.allocate_tensor(cutlass.Float32, cute.make_layout(64), 16)
    buffer[tidx] = gIn[tidx]
    if cutlass.const_expr(barrier):
        cute.arch.sync_threads()
    gOut[tidx] = buffer[63 - tidx]


@cute.jit
def reverse(mIn: cute.Tensor, mOut: cute.Tensor, barrier: cutlass.Constexpr = True):
    reverse_kernel(mIn, mOut, barrier).launch(grid=[1, 1, 1], block=[64, 1, 1])


# ---- transpose a 32x32 tile through shared memory; `padding` 1 makes the column reads conflict-free
@cute.kernel
def transpose_kernel(gIn: cute.Tensor, gOut: cute.Tensor, padding: cutlass.Constexpr):
    tx, ty, _ = cute.arch.thread_idx()
    smem = cutlass.memory.SmemAllocator()
    tile = smem.allocate_tensor(cutlass.Float32, cute.make_layout((32, 32), stride=(32 + padding, 1)), 16)
    for step in cutlass.range_constexpr(4):
        tile[ty + 8 * step, tx] = gIn[ty + 8 * step, tx]      # a warp writes one row: 32 banks
    cute.arch.sync_threads()
    for step in cutlass.range_constexpr(4):
        gOut[ty + 8 * step, tx] = tile[tx, ty + 8 * step]     # a warp reads one column

@cute.jit
def transpose(mIn: cute.Tensor, mOut: cute.Tensor, padding: cutlass.Constexpr = 0):
    transpose_kernel(mIn, mOut, padding).launch(grid=[1, 1, 1], block=[32, 8, 1])


# ---- printf from a 3-D launch
@cute.kernel
def hello_kernel():
    tx, ty, tz = cute.arch.thread_idx()
    bx, by, bz = cute.arch.block_idx()
    cute.printf("block ({},{},{}) thread ({},{},{})", bx, by, bz, tx, ty, tz)


@cute.jit
def hello(grid: cutlass.Constexpr, block: cutlass.Constexpr):
    hello_kernel().launch(grid=grid, block=block)


# ---- a warp sum, and a barrier only half the block reaches
@cute.kernel
def warp_sums_kernel(gIn: cute.Tensor, gOut: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    total = cute.arch.warp_reduction_sum(gIn[tidx])
    if cute.arch.lane_idx() == 0:
        gOut[cute.arch.warp_idx()] = total


@cute.jit
def warp_sums(mIn: cute.Tensor, mOut: cute.Tensor):
    warp_sums_kernel(mIn, mOut).launch(grid=[1, 1, 1], block=[cute.size(mIn), 1, 1])


@cute.kernel
def half_barrier_kernel(gOut: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    if tidx < 16:
        cute.arch.sync_threads()
    gOut[tidx] = 1.0


@cute.jit
def half_barrier(mOut: cute.Tensor):
    half_barrier_kernel(mOut).launch(grid=[1, 1, 1], block=[64, 1, 1])


# ---- cp.async into shared memory, with or without waiting for it
@cute.kernel
def staged_copy_kernel(gIn: cute.Tensor, gOut: cute.Tensor, wait: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.memory.SmemAllocator()
    staged = smem.allocate_tensor(cutlass.Float32, cute.make_layout(128), 16)
    atom = cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), cutlass.Float32, num_bits_per_copy=128)
    source = cute.zipped_divide(gIn, (4,))
    destination = cute.zipped_divide(staged, (4,))
    cute.copy(atom, source[(None, tidx)], destination[(None, tidx)])
    cute.arch.cp_async_commit_group()
    if cutlass.const_expr(wait):
        cute.arch.cp_async_wait_group(0)
    cute.arch.sync_threads()
    gOut[tidx] = staged[127 - tidx]


@cute.jit
def staged_copy(mIn: cute.Tensor, mOut: cute.Tensor, wait: cutlass.Constexpr = True):
    staged_copy_kernel(mIn, mOut, wait).launch(grid=[1, 1, 1], block=[32, 1, 1])


# ---- a named barrier for part of a block: warps 0-1 exchange through shared memory, warps 2-3 leave at once
@cute.kernel
def named_barrier_kernel(gOut: cute.Tensor, participants: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.memory.SmemAllocator()
    buffer = smem.allocate_tensor(cutlass.Float32, cute.make_layout(64), 16)
    if tidx < 64:
        buffer[tidx] = tidx * 1.0
        cute.arch.barrier(barrier_id=1, number_of_threads=participants)
        gOut[tidx] = buffer[63 - tidx]


@cute.jit
def named_barrier(mOut: cute.Tensor, participants: cutlass.Constexpr = 64):
    named_barrier_kernel(mOut, participants).launch(grid=[1, 1, 1], block=[128, 1, 1])


# ---- chapter 07's M-major A tile (32x64 fp16, M contiguous): cp.async along M into shared memory, ldmatrix.trans
# into the 2x2 TiledMMA's A fragments, written back out where the MMA's A layout puts them; `bits` 0 unswizzled
@cute.kernel
def m_major_tile_kernel(gA: cute.Tensor, gOut: cute.Tensor, sA_layout: cute.ComposedLayout, g2s: cute.TiledCopy,
                        tiled_mma: cute.TiledMma, s2r: cute.TiledCopy):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.memory.SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float16, sA_layout, 128)
    copier = g2s.get_slice(tidx)
    cute.copy(g2s, copier.partition_S(gA), copier.partition_D(sA))
    cute.arch.cp_async_commit_group()
    cute.arch.cp_async_wait_group(0)
    cute.arch.sync_threads()
    thr_mma = tiled_mma.get_slice(tidx)
    tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))
    tXsA, tXrA = s2r.get_slice(tidx).partition_S(sA), s2r.get_slice(tidx).retile(tCrA)
    for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
        cute.copy(s2r, tXsA[None, None, kb], tXrA[None, None, kb])
    cute.autovec_copy(tCrA, thr_mma.partition_A(gOut))


@cute.jit
def m_major_tile(mA: cute.Tensor, mOut: cute.Tensor, bits: cutlass.Constexpr = 2):
    atom = cute.make_composed_layout(cute.make_swizzle(bits, 3, 3), 0, cute.make_layout((32, 8), stride=(1, 32)))
    sA_layout = cute.tile_to_shape(atom, (32, 64), (0, 1))
    cp_async = cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), cutlass.Float16, num_bits_per_copy=128)
    g2s = cute.make_tiled_copy_tv(cp_async, cute.make_layout((4, 32), stride=(1, 4)), cute.make_layout((8, 1)))
    tiled_mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)),
                                    cute.make_layout((2, 2, 1)), permutation_mnk=(32, 32, 16))
    ldmatrix_trans = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(transpose=True, num_matrices=4),
                                         cutlass.Float16)
    m_major_tile_kernel(mA, mOut, sA_layout, g2s, tiled_mma, cute.make_tiled_copy_A(ldmatrix_trans, tiled_mma)).launch(
        grid=[1, 1, 1], block=[128, 1, 1], smem=cute.cosize(sA_layout) * 2 + 128)
