"""Elementwise add, C = A + B, on 2-D row-major tensors, with a TiledCopy of 128-bit accesses.

How it works:
  * `make_layout_tv(thread_layout, value_layout)` builds the thread-value layout of one CTA tile: 32 threads
    side by side along the contiguous mode (a warp reads 32 x 16 B = 512 B of one row per instruction) and
    `rows_per_thread` rows of one vector each per thread, so each thread has that many independent 16-byte
    loads in flight per tensor before its first add.
  * `zipped_divide(tensor, tiler)` gives ((TileM, TileN), (RestM, RestN)). The grid is (RestN, RestM): CTA
    (x, y) takes `[(None, None), (y, x)]`, so CTAs that run side by side read neighbouring pieces of the same
    rows (whole DRAM pages) instead of 512-byte pieces of rows far apart, which is what a 1-D grid over the
    column-major rest mode would do.
  * The copy atom is `CopyUniversalOp` with `num_bits_per_copy = vector * element bits`: one atom is one
    vector, so the per-thread partition is ((vector, vectors), 1, 1) and the predicate has one entry per
    vector (an identity tensor, partitioned the same way, tells which vectors lie inside the tensor).
  * A CTA whose tile lies wholly inside the tensor (all but the edge CTAs) takes the unpredicated path; the
    check is one comparison of the tile's last coordinate, uniform across the CTA.

Constraints: any M, N. The vector width is the largest power of two (<= 128 bits) dividing N and the data
pointers' alignment (`tensors.vector_width`); N a multiple of 8 (fp16) or 4 (fp32) gives 128-bit accesses.
"""
from __future__ import annotations

import cutlass
import cutlass.cute as cute

from . import tensors

THREADS = 256
THREADS_ALONG_ROW = 32       # 8 rows of 32 threads: a CTA tile of (8 * rows_per_thread, 32 * vector)
ROWS_PER_THREAD = 1          # measured best on an H100 (benchmarks/RESULTS.md)


@cute.kernel
def add_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor, cC: cute.Tensor, shape: cute.Shape,
               tiled_copy: cute.TiledCopy):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, bidy, _ = cute.arch.block_idx()
    tile = ((None, None), (bidy, bidx))
    coords = cC[tile]                           # (TileM, TileN) -> (m, n) in the whole tensor

    thread_copy = tiled_copy.get_slice(tidx)
    tAgA = thread_copy.partition_S(gA[tile])    # ((vector, vectors), 1, 1)
    tBgB = thread_copy.partition_S(gB[tile])
    tCgC = thread_copy.partition_D(gC[tile])
    tCcC = thread_copy.partition_S(coords)

    fragment_a = cute.make_fragment_like(tAgA)
    fragment_b = cute.make_fragment_like(tBgB)
    fragment_c = cute.make_fragment_like(tCgC)

    last_coordinate = coords[cute.size(coords) - 1]
    if cute.elem_less(last_coordinate, shape):
        # whole tile inside: both loads issued before the add, no predicate registers
        cute.copy(tiled_copy, tAgA, fragment_a)
        cute.copy(tiled_copy, tBgB, fragment_b)
        fragment_c.store(fragment_a.load() + fragment_b.load())
        cute.copy(tiled_copy, fragment_c, tCgC)
    else:
        # one predicate per copy atom (vector): mode 0 of the partition is (atom values, atoms)
        inside = cute.make_rmem_tensor(
            cute.make_layout((tCcC.shape[0][1], cute.size(tCcC, mode=[1]), cute.size(tCcC, mode=[2]))),
            cutlass.Boolean)
        for vector in cutlass.range_constexpr(cute.size(inside, mode=[0])):
            for m in cutlass.range_constexpr(cute.size(inside, mode=[1])):
                for n in cutlass.range_constexpr(cute.size(inside, mode=[2])):
                    inside[vector, m, n] = cute.elem_less(tCcC[(0, vector), m, n], shape)
        fragment_a.fill(0)
        fragment_b.fill(0)
        cute.copy(tiled_copy, tAgA, fragment_a, pred=inside)
        cute.copy(tiled_copy, tBgB, fragment_b, pred=inside)
        fragment_c.store(fragment_a.load() + fragment_b.load())
        cute.copy(tiled_copy, fragment_c, tCgC, pred=inside)


@cute.jit
def add(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, vector: cutlass.Constexpr = 8,
        rows_per_thread: cutlass.Constexpr = ROWS_PER_THREAD,
        threads_along_row: cutlass.Constexpr = THREADS_ALONG_ROW):
    """C = A + B for row-major (M, N) tensors; `vector` elements per access (N must be a multiple)."""
    thread_layout = cute.make_ordered_layout((THREADS // threads_along_row, threads_along_row), order=(1, 0))
    value_layout = cute.make_ordered_layout((rows_per_thread, vector), order=(1, 0))
    tiler, tv_layout = cute.make_layout_tv(thread_layout, value_layout)

    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), mA.element_type,
                               num_bits_per_copy=vector * mA.element_type.width)
    tiled_copy = cute.make_tiled_copy_tv(atom, thread_layout, value_layout)

    gA = cute.zipped_divide(mA, tiler)          # ((TileM, TileN), (RestM, RestN))
    gB = cute.zipped_divide(mB, tiler)
    gC = cute.zipped_divide(mC, tiler)
    cC = cute.zipped_divide(cute.make_identity_tensor(mC.shape), tiler=tiler)
    add_kernel(gA, gB, gC, cC, mC.shape, tiled_copy).launch(
        grid=[cute.size(gC, mode=[1, 1]), cute.size(gC, mode=[1, 0]), 1],
        block=[cute.size(tv_layout, mode=[0]), 1, 1])


def compile_for_cpu(dtype=cutlass.Float16, vector: int = 8, rows_per_thread: int = ROWS_PER_THREAD):
    """Compile `add` for fake (M, N) tensors with N a multiple of `vector`; returns the compiled function
    (its `.__ptx__` is the PTX). Needs no GPU when CUTE_DSL_ARCH is set (e.g. sm_80)."""
    fakes = [tensors.fake_tensor(dtype, 2, vector) for _ in range(3)]
    return tensors.compile_with_ptx(add, *fakes, vector, rows_per_thread)


_compiled = {}


def prepare(a, b, c, rows_per_thread: int = ROWS_PER_THREAD, threads_along_row: int = THREADS_ALONG_ROW):
    """Compile (once per dtype, vector width and tile) and return `launch()`, which computes c = a + b."""
    if threads_along_row not in (1, 2, 4, 8, 16, 32, 64, 128, 256):
        raise ValueError(f"threads_along_row must be a power of two dividing {THREADS}, got {threads_along_row}")
    if not (a.shape == b.shape == c.shape and a.dim() == 2 and a.dtype == b.dtype == c.dtype):
        raise ValueError(f"add needs three 2-D tensors of one shape and dtype, got {a.shape}, {b.shape}, {c.shape}")
    if not all(t.is_cuda and t.stride(1) == 1 and t.stride(0) == t.shape[1] for t in (a, b, c)):
        raise ValueError("add needs contiguous row-major CUDA tensors")
    vector = min(tensors.vector_width(a.shape[1], a.element_size(), t.data_ptr()) for t in (a, b, c))
    args = [tensors.from_torch(t, vector) for t in (a, b, c)]
    key = (a.dtype, vector, rows_per_thread, threads_along_row)
    if key not in _compiled:
        _compiled[key] = cute.compile(add, *args, vector, rows_per_thread, threads_along_row)
    compiled = _compiled[key]
    return lambda: compiled(*args)


def run(a, b, c=None):
    """c = a + b with the CuTe kernel (c allocated when not given); returns c."""
    import torch
    c = torch.empty_like(a) if c is None else c
    prepare(a, b, c)()
    return c
