"""Sum over the last mode of a 2-D fp32 tensor, four ways, plus an N-d version that reduces any dim.

All four 2-D versions read each element once with 16-byte loads (when N allows) and end the same way:
each thread holds a partial sum, `warp_reduction_sum` folds a warp's 32 partials with shuffles, and one
value per warp goes through shared memory to the thread that writes the result.

  cuda_style   one CTA per row; thread t reads vectors t, t + T, t + 2T, ... of its row (the CUDA habit,
               written with a zipped_divide of the row into vectors).
  composition  one CTA per row; the row is cut into tiles of T * V elements with zipped_divide, and each
               tile is viewed through the thread-value layout with composition(tile, tv): entry [t, None]
               is thread t's V values. The last, partial tile is masked with an identity tensor.
  tiled_copy   a CTA reduces ROWS rows at once: a TiledCopy whose tile is (ROWS, T / ROWS * V) partitions a
               "super tile" SUPER times wider, so each thread issues SUPER independent 16-byte loads per step.
  any_dim      (in `run_any_dim`) a tensor of any rank, viewed as (outer, reduced, inner); threads run along
               the contiguous `inner` mode (coalesced) and loop over `reduced`; a reduction over the last
               dim goes to `tiled_copy`.

Constraints: N >= 1 any value (the vector width is the largest power of two dividing N, <= 16 bytes);
fp32 in, fp32 out.
"""
from __future__ import annotations

import cutlass
import cutlass.cute as cute

from . import tensors

THREADS = 256
WARPS = THREADS // 32
UNROLL = 4


@cute.jit
def block_sum_to_thread0(partial: cutlass.Float32, warp_sums: cute.Tensor):
    """Sum of `partial` over the CTA, valid in thread 0 (warp shuffles, then one value per warp in smem)."""
    warp_total = cute.arch.warp_reduction_sum(partial)
    warp = cute.arch.warp_idx()
    lane = cute.arch.lane_idx()
    if lane == 0:
        warp_sums[warp] = warp_total
    cute.arch.sync_threads()
    total = cutlass.Float32(0.0)
    if warp == 0:
        mine = cutlass.Float32(0.0)
        if lane < cute.size(warp_sums):
            mine = warp_sums[lane]
        total = cute.arch.warp_reduction_sum(mine)
    return total


# --------------------------------------------------------------------------------------------- cuda_style
@cute.kernel
def cuda_style_kernel(mX: cute.Tensor, mOut: cute.Tensor, vector: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    row, _, _ = cute.arch.block_idx()
    smem = cutlass.memory.SmemAllocator()
    warp_sums = smem.allocate_tensor(cutlass.Float32, cute.make_layout(WARPS), 16)

    row_vectors = cute.zipped_divide(mX[row, None], (vector,))      # ((vector), (N / vector))
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32,
                               num_bits_per_copy=32 * vector)
    accumulator = cute.make_rmem_tensor(cute.make_layout(vector), cutlass.Float32)
    accumulator.fill(0.0)
    fragment = cute.make_rmem_tensor(cute.make_layout(vector), cutlass.Float32)
    for j in cutlass.range(tidx, cute.size(row_vectors, mode=[1]), THREADS, unroll=UNROLL):
        cute.copy(atom, row_vectors[(None, j)], fragment)
        accumulator.store(accumulator.load() + fragment.load())
    partial = accumulator.load().reduce(cute.ReductionOp.ADD, cutlass.Float32(0.0), 0)
    total = block_sum_to_thread0(partial, warp_sums)
    if tidx == 0:
        mOut[row] = total


@cute.jit
def sum_rows_cuda_style(mX: cute.Tensor, mOut: cute.Tensor, vector: cutlass.Constexpr = 4):
    """mOut[m] = sum_n mX[m, n]: one CTA per row, strided 16-byte loads, warp shuffles + smem."""
    cuda_style_kernel(mX, mOut, vector).launch(grid=[cute.size(mX, mode=[0]), 1, 1], block=[THREADS, 1, 1])


# -------------------------------------------------------------------------------------------- composition
@cute.kernel
def composition_kernel(mX: cute.Tensor, mOut: cute.Tensor, vector: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    row, _, _ = cute.arch.block_idx()
    smem = cutlass.memory.SmemAllocator()
    warp_sums = smem.allocate_tensor(cutlass.Float32, cute.make_layout(WARPS), 16)

    # thread t owns the V contiguous elements [t * V, t * V + V) of each tile: (T, V) -> tile offset
    tv_layout = cute.make_layout((THREADS, vector), stride=(vector, 1))
    tile_size = THREADS * vector
    x_row = mX[row, None]
    tiles = cute.zipped_divide(x_row, (tile_size,))                 # ((T * V), (tiles))
    tile_coords = cute.zipped_divide(cute.make_identity_tensor(x_row.shape), (tile_size,))
    full_tiles = cute.size(x_row) // tile_size

    accumulator = cute.make_rmem_tensor(cute.make_layout(vector), cutlass.Float32)
    accumulator.fill(0.0)
    fragment = cute.make_rmem_tensor(cute.make_layout(vector), cutlass.Float32)
    for k in cutlass.range(full_tiles, unroll=UNROLL):
        mine = cute.composition(tiles[(None, k)], tv_layout)[tidx, None]     # (V,)
        cute.autovec_copy(mine, fragment)
        accumulator.store(accumulator.load() + fragment.load())
    if full_tiles < cute.size(tiles, mode=[1]):
        # the partial tile: N is a multiple of V, so a vector is wholly inside or wholly outside
        mine_coords = cute.composition(tile_coords[(None, full_tiles)], tv_layout)[tidx, None]
        if cute.elem_less(mine_coords[0], x_row.shape):
            mine = cute.composition(tiles[(None, full_tiles)], tv_layout)[tidx, None]
            cute.autovec_copy(mine, fragment)
            accumulator.store(accumulator.load() + fragment.load())
    partial = accumulator.load().reduce(cute.ReductionOp.ADD, cutlass.Float32(0.0), 0)
    total = block_sum_to_thread0(partial, warp_sums)
    if tidx == 0:
        mOut[row] = total


@cute.jit
def sum_rows_composition(mX: cute.Tensor, mOut: cute.Tensor, vector: cutlass.Constexpr = 4):
    """mOut[m] = sum_n mX[m, n]: each tile of the row seen through composition(tile, tv_layout)."""
    composition_kernel(mX, mOut, vector).launch(grid=[cute.size(mX, mode=[0]), 1, 1], block=[THREADS, 1, 1])


# --------------------------------------------------------------------------------------------- tiled_copy
ROWS = 4            # rows per CTA: 64 threads (two whole warps) per row
SUPER = 4           # the super tile is SUPER copy tiles wide


@cute.kernel
def tiled_copy_kernel(gX: cute.Tensor, cX: cute.Tensor, mOut: cute.Tensor, shape: cute.Shape,
                      tiled_copy: cute.TiledCopy):
    tidx, _, _ = cute.arch.thread_idx()
    row_block, _, _ = cute.arch.block_idx()
    smem = cutlass.memory.SmemAllocator()
    warp_sums = smem.allocate_tensor(cutlass.Float32, cute.make_layout(WARPS), 16)

    thread_copy = tiled_copy.get_slice(tidx)
    first = thread_copy.partition_S(gX[(None, None), (row_block, 0)])   # ((V, 1), 1, SUPER)
    accumulator = cute.make_fragment_like(first)
    accumulator.fill(0.0)
    fragment = cute.make_fragment_like(first)
    super_tiles = cute.size(gX, mode=[1, 1])
    for k in cutlass.range(super_tiles):
        tXgX = thread_copy.partition_S(gX[(None, None), (row_block, k)])
        tXcX = thread_copy.partition_S(cX[(None, None), (row_block, k)])
        last_coordinate = tXcX[cute.size(tXcX) - 1]
        if cute.elem_less(last_coordinate, shape):
            cute.copy(tiled_copy, tXgX, fragment)
        else:
            inside = cute.make_rmem_tensor(
                cute.make_layout((tXcX.shape[0][1], cute.size(tXcX, mode=[1]), cute.size(tXcX, mode=[2]))),
                cutlass.Boolean)
            for v in cutlass.range_constexpr(cute.size(inside, mode=[0])):
                for n in cutlass.range_constexpr(cute.size(inside, mode=[2])):
                    inside[v, 0, n] = cute.elem_less(tXcX[(0, v), 0, n], shape)
            fragment.fill(0.0)
            cute.copy(tiled_copy, tXgX, fragment, pred=inside)
        accumulator.store(accumulator.load() + fragment.load())
    # every value of this thread lies in one row, and each warp in one row: reduce in thread, then in warp
    partial = accumulator.load().reduce(cute.ReductionOp.ADD, cutlass.Float32(0.0), 0)
    warp_total = cute.arch.warp_reduction_sum(partial)
    warp = cute.arch.warp_idx()
    if cute.arch.lane_idx() == 0:
        warp_sums[warp] = warp_total
    cute.arch.sync_threads()
    warps_per_row = WARPS // ROWS
    if tidx < ROWS:
        total = cutlass.Float32(0.0)
        for w in cutlass.range_constexpr(warps_per_row):
            total = total + warp_sums[tidx * warps_per_row + w]
        row = row_block * ROWS + tidx
        if row < shape[0]:
            mOut[row] = total


@cute.jit
def sum_rows_tiled_copy(mX: cute.Tensor, mOut: cute.Tensor, vector: cutlass.Constexpr = 4):
    """mOut[m] = sum_n mX[m, n]: a TiledCopy over (ROWS, SUPER * copy-tile width) super tiles."""
    threads_per_row = THREADS // ROWS
    thread_layout = cute.make_ordered_layout((ROWS, threads_per_row), order=(1, 0))
    value_layout = cute.make_layout((1, vector))
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32, num_bits_per_copy=32 * vector)
    tiled_copy = cute.make_tiled_copy_tv(atom, thread_layout, value_layout)
    super_tile = (ROWS, threads_per_row * vector * SUPER)
    gX = cute.zipped_divide(mX, super_tile)                            # ((ROWS, W), (row blocks, k))
    cX = cute.zipped_divide(cute.make_identity_tensor(mX.shape), super_tile)
    tiled_copy_kernel(gX, cX, mOut, mX.shape, tiled_copy).launch(
        grid=[cute.size(gX, mode=[1, 0]), 1, 1], block=[THREADS, 1, 1])


# ------------------------------------------------------------------------------------------------ any dim
LANES_INNER = 32    # threads along the contiguous mode (one warp: coalesced)
LANES_REDUCED = THREADS // LANES_INNER


@cute.kernel
def any_dim_kernel(mX: cute.Tensor, mOut: cute.Tensor, vector: cutlass.Constexpr):
    """mX: (outer, reduced, inner), inner contiguous; mOut: (outer, inner)."""
    tidx, _, _ = cute.arch.thread_idx()
    inner_block, outer, _ = cute.arch.block_idx()
    smem = cutlass.memory.SmemAllocator()
    partials = smem.allocate_tensor(
        cutlass.Float32, cute.make_layout((LANES_REDUCED, LANES_INNER * vector), stride=(LANES_INNER * vector, 1)), 16)

    lane_inner = tidx % LANES_INNER
    lane_reduced = tidx // LANES_INNER
    x_vectors = cute.zipped_divide(mX[outer, None, None], (1, vector))  # ((1, V), (reduced, inner / V))
    out_vectors = cute.zipped_divide(mOut[outer, None], (vector,))     # ((V), (inner / V))
    j = inner_block * LANES_INNER + lane_inner
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32, num_bits_per_copy=32 * vector)
    accumulator = cute.make_rmem_tensor(cute.make_layout(vector), cutlass.Float32)
    accumulator.fill(0.0)
    fragment = cute.make_rmem_tensor(cute.make_layout(vector), cutlass.Float32)
    if j < cute.size(x_vectors, mode=[1, 1]):
        for r in cutlass.range(lane_reduced, cute.size(x_vectors, mode=[1, 0]), LANES_REDUCED, unroll=UNROLL):
            cute.copy(atom, x_vectors[(0, None), (r, j)], fragment)
            accumulator.store(accumulator.load() + fragment.load())
    cute.autovec_copy(accumulator, cute.zipped_divide(partials[lane_reduced, None], (vector,))[(None, lane_inner)])
    cute.arch.sync_threads()
    if lane_reduced == 0:
        if j < cute.size(x_vectors, mode=[1, 1]):
            for other in cutlass.range_constexpr(1, LANES_REDUCED):
                cute.autovec_copy(cute.zipped_divide(partials[other, None], (vector,))[(None, lane_inner)], fragment)
                accumulator.store(accumulator.load() + fragment.load())
            cute.copy(atom, accumulator, out_vectors[(None, j)])


@cute.jit
def sum_any_dim(mX: cute.Tensor, mOut: cute.Tensor, vector: cutlass.Constexpr = 4):
    """mOut[o, i] = sum_r mX[o, r, i] for a (outer, reduced, inner) view with inner contiguous."""
    inner_blocks = cute.ceil_div(cute.size(mX, mode=[2]) // vector, LANES_INNER)
    any_dim_kernel(mX, mOut, vector).launch(
        grid=[inner_blocks, cute.size(mX, mode=[0]), 1], block=[THREADS, 1, 1])


VARIANTS = {"cuda_style": sum_rows_cuda_style, "composition": sum_rows_composition,
            "tiled_copy": sum_rows_tiled_copy}


def compile_for_cpu(variant: str, vector: int = 4):
    """Compile one variant ('cuda_style', 'composition', 'tiled_copy', 'any_dim') for fake fp32 tensors."""
    if variant == "any_dim":
        x, out = tensors.fake_tensor(cutlass.Float32, 3, vector), tensors.fake_tensor(cutlass.Float32, 2, vector)
        return tensors.compile_with_ptx(sum_any_dim, x, out, vector)
    x, out = tensors.fake_tensor(cutlass.Float32, 2, vector), tensors.fake_tensor(cutlass.Float32, 1, 1)
    return tensors.compile_with_ptx(VARIANTS[variant], x, out, vector)


_compiled = {}


def _check(x):
    import torch
    if x.dtype != torch.float32 or not x.is_cuda or not x.is_contiguous():
        raise ValueError(f"reduce_sum needs a contiguous float32 CUDA tensor, got {x.dtype} on {x.device}")


def prepare(x, out, variant: str = "tiled_copy"):
    """Compile once per variant and vector width; returns `launch()` that writes out[m] = x[m, :].sum()."""
    _check(x)
    if x.dim() != 2 or out.shape != (x.shape[0],):
        raise ValueError(f"2-D sum needs x (M, N) and out (M,), got {tuple(x.shape)} and {tuple(out.shape)}")
    vector = tensors.vector_width(x.shape[1], 4, x.data_ptr())
    args = [tensors.from_torch(x, vector), tensors.from_torch(out, 1)]
    key = (variant, vector)
    if key not in _compiled:
        _compiled[key] = cute.compile(VARIANTS[variant], *args, vector)
    compiled = _compiled[key]
    return lambda: compiled(*args)


def run(x, variant: str = "tiled_copy"):
    """x.sum(dim=-1) for a 2-D fp32 CUDA tensor, with the named variant."""
    import torch
    out = torch.empty(x.shape[0], device=x.device, dtype=x.dtype)
    prepare(x, out, variant)()
    return out


def prepare_any_dim(x, dim: int, out):
    """`launch()` that writes x.sum(dim) into out, for a contiguous fp32 tensor of any rank."""
    _check(x)
    dim = dim % x.dim()
    outer = 1
    for size in x.shape[:dim]:
        outer *= size
    inner = x.numel() // (outer * x.shape[dim]) if x.numel() else 0
    if inner == 1:      # reducing the contiguous dim: the row kernel is the coalesced one
        return prepare(x.reshape(outer, x.shape[dim]), out.view(outer), "tiled_copy")
    view = x.view(outer, x.shape[dim], inner)
    out_view = out.view(outer, inner)
    vector = min(tensors.vector_width(inner, 4, x.data_ptr()), tensors.vector_width(inner, 4, out.data_ptr()))
    args = [tensors.from_torch(view, vector), tensors.from_torch(out_view, vector)]
    key = ("any_dim", vector)
    if key not in _compiled:
        _compiled[key] = cute.compile(sum_any_dim, *args, vector)
    compiled = _compiled[key]
    return lambda: compiled(*args)


def run_any_dim(x, dim: int):
    """x.sum(dim) for a contiguous fp32 CUDA tensor of any rank."""
    import torch
    shape = list(x.shape)
    del shape[dim % x.dim()]
    out = torch.empty(shape, device=x.device, dtype=x.dtype)
    prepare_any_dim(x, dim, out)()
    return out
