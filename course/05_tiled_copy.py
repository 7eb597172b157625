# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-all
#     formats: ipynb,py:percent
#     notebook_metadata_filter: kernelspec,jupytext
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: CuTe by Hand
#     language: python
#     name: cute-by-hand
# ---

# %% [markdown]
# # 05 · TiledCopy: a reduction written four ways
#
# **Why.** A CUDA reduction over the rows of a matrix starts with the loads: thread `t` of a block reads
# `x[row * N + t]`, `x[row * N + t + blockDim.x]`, ... and, to use 128-bit loads, casts the pointer to
# `float4*`, checks that `N` is a multiple of 4 and that the address is 16-byte aligned, and writes a
# separate loop for the last, partial vector. Each of those formulas is yours to get right.
#
# CuTe puts the formulas in one object. A **copy atom** is one copy instruction (for example "move 4 fp32
# values, 128 bits, at once"). A **TiledCopy** repeats the atom over the threads of a block with a
# thread-value layout (chapter 02), so it knows which elements of a tile each thread moves and in which
# vectors. `tiled_copy.get_slice(t).partition_S(tile)` hands thread `t` its elements of any tile the
# TiledCopy divides, and `cute.copy` moves them with the atom's instruction.
#
# This chapter builds a row sum (`torch.sum(x, dim=-1)`) four ways, from CUDA-style index math to a
# TiledCopy over a "super tile", then any reduced dimension; each version is checked against torch on
# shapes the tiles do not divide. Then: what CuTeDSL compiles and when, and why a cache keyed by dtype alone
# breaks. The chapter ends with a capstone: a row softmax, kernel and launch, written from a blank cell.

# %%
from cutekit import cute, render, widgets
from cutekit.checks import check

# %% [markdown]
# ## See it
#
# A small TiledCopy: 16 threads as 2 rows of 8 (row-major: thread 1 is right of thread 0), each thread
# moving 4 contiguous fp32 values with one 128-bit copy. Left, who reads each source element; right, who
# writes each destination element (the same here: a plain copy does not shuffle values between threads).
# Build it up takes the cell apart: `cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cute.Float32,
# num_bits_per_copy=128)` is the atom (a plain copy of `Float32` values, 128 bits per instruction),
# `cute.make_tiled_copy_tv(atom, threads, values)` repeats it over the threads, and the TiledCopy's
# `layout_tv_tiled` is its TV layout.

# %%
atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cute.Float32, num_bits_per_copy=128)
small_threads = cute.make_ordered_layout((2, 8), order=(1, 0))
small_values = cute.make_layout((1, 4))
small_copy = cute.make_tiled_copy_tv(atom, small_threads, small_values)
print(small_copy)
assert str(small_copy.layout_tv_tiled) == "((8,2),4):((8,1),2)"
render.tiled_copy(small_copy, highlight=1)

# %% [markdown]
# cutekit prints a TiledCopy as real CuTeDSL 4.8.1 does (traced on the CPU, the same lines; C++ prints `_8`
# for a static 8). `Tiler MN` is the tile one round of the copy covers, 2x32; `TV Layout tiled` maps
# (thread, value) to a position in that tile (column-major index); the atom's `(1,4):(0,1)` says one thread
# moves 4 consecutive values per instruction.
#
# ## Play
#
# Predict before you move the slider, with chapter 02's rule (a row-major thread layout numbers threads along
# a row; each thread's value block sits at its thread coordinate times the block's shape): with 4x32 threads
# row-major and 1x4 values each, which 4 elements does thread 33 own?

# %%
widgets.tv_explorer(cute.make_ordered_layout((4, 32), order=(1, 0)), cute.make_layout((1, 4)))

# %% [markdown]
# ## Build it up
#
# ### 1. The copy atom: how many bits one instruction moves
#
# `make_copy_atom(op, dtype, num_bits_per_copy=...)`: `CopyUniversalOp` is a plain load or store; the bit
# count picks the vector width. Its TV layout is (thread, value) for one instruction: one thread, and 4
# fp32 values for 128 bits, 1 for 32 bits. An atom has two, `layout_src_tv` for what each thread reads and
# `layout_dst_tv` for what it writes (the same for a plain copy; chapter 06's `ldmatrix` has two different
# ones). `cute.Float16` is the 16-bit float type: 8 of them fill 128 bits.

# %%
for bits in (32, 64, 128):
    one = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cute.Float32, num_bits_per_copy=bits)
    print(bits, "bits:", one.layout_src_tv)
assert str(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cute.Float32,
                               num_bits_per_copy=128).layout_src_tv) == "(1,4):(0,1)"
assert str(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cute.Float16,
                               num_bits_per_copy=128).layout_src_tv) == "(1,8):(0,1)"

# %% [markdown]
# ### 2. make_tiled_copy_tv: the atom over a thread layout and a value layout
#
# The block of the row-sum kernels below: 128 threads as 4 rows of 32 (one warp per row), 1x4 values each.
# The tile is 4x128, and the TV layout is the same one `make_layout_tv` gives for these two layouts
# (chapter 02): the TiledCopy adds the instruction. `tiled_copy.tiler_mn` is that tile (one layout per
# mode) and `tiled_copy.layout_tv_tiled` the TV layout.

# %%
threads = cute.make_ordered_layout((4, 32), order=(1, 0))
values = cute.make_layout((1, 4))
tiled_copy = cute.make_tiled_copy_tv(atom, threads, values)
tiler, tv = cute.make_layout_tv(threads, values)
print("tiler:", tiled_copy.tiler_mn, " tv:", tiled_copy.layout_tv_tiled, " make_layout_tv:", tiler, tv)
assert str(tiled_copy.layout_tv_tiled) == str(tv) == "((32,4),4):((16,1),4)"
assert tuple(t.shape for t in tiled_copy.tiler_mn) == tuple(tiler) == (4, 128)
render.tv_layout(tv, tiler, highlight=33)

# %% [markdown]
# ### 3. get_slice and partition_S: one thread's elements of a bigger tile
#
# Give the TiledCopy a tile four times wider than its own (a 4x512 **super tile**). Thread 5 gets a
# tensor of shape `((4,1),1,4)`: mode 0 is (values of one atom, atoms per copy tile) = one 128-bit vector;
# modes 1 and 2 count how often the 4x128 copy tile repeats down and across the super tile (1 and 4).
# An identity tensor shows the (m, n) of each element (a list comprehension reads them, in cutekit and in
# CuTeDSL alike).

# %%
super_tile = cute.make_identity_tensor((4, 512))
mine = tiled_copy.get_slice(5).partition_S(super_tile)
mine_cells = [mine[i] for i in range(cute.size(mine))]
print(mine)
print(mine_cells)
assert str(mine) == "tensor<(0,20) o ((4,1),1,4):((1@1,0),0,128@1)>"     # as real CuTeDSL prints it
assert mine.shape == ((4, 1), 1, 4)
assert mine_cells[:5] == [(0, 20), (0, 21), (0, 22), (0, 23), (0, 148)]

# %% [markdown]
# Thread 5 is in row 0 (threads 0..31 are the first warp) and reads columns 20..23, then the same 4
# columns of the next copy tile (148 = 20 + 128), and so on: four independent 128-bit loads per super
# tile. `partition_D` does the same for a destination (it uses the atom's destination layout).
#
# ### 4. What partition_S does to the coordinate space: tidfrg_S
#
# `partition_S(tensor)` is two steps. `tidfrg_S` (C++ `tile2thrfrg`) first divides the tensor by the
# tiler (`zipped_divide`, chapter 03), then composes the tile mode with the TV layout, so the result is
# indexed `(thread, (atom values, atoms), (rest m, rest n))`; `get_slice(t)` then fixes the thread.
# CuTeDSL 4.8.1's Python `TiledCopy` does not expose `tidfrg_S` (its public names are `get_slice`, `retile`,
# `tiler_mn`, `size`, `thr_id`, `op`, `value_type`, the `layout_*` properties, `get`, `set`, `type` and
# `with_`); cutekit computes it so we can look inside, as a function of its own module
# `cutekit.cute.not_in_cutedsl` (the name says where the line runs: on cutekit only). In CuTeDSL the same
# layout is one composition away, shown after this one.

# %%
from cutekit.cute import not_in_cutedsl

by_thread = not_in_cutedsl.tidfrg_S(tiled_copy, cute.make_layout((4, 512), stride=(512, 1)))
print(by_thread)
assert str(by_thread) == "((32,4),(4,1),(1,4)):((4,512),(1,0),(0,128))"
assert [str(cute.get(by_thread, mode=[i])) for i in range(3)] == ["(32,4):(4,512)", "(4,1):(1,0)", "(1,4):(0,128)"]
# the same with what CuTeDSL has: the tile mode of the divide composed with the TV layout
as_in_cutedsl = cute.composition(cute.zipped_divide(cute.make_layout((4, 512), stride=(512, 1)), tiled_copy.tiler_mn),
                                 (tiled_copy.layout_tv_tiled, None))
print(as_in_cutedsl)
assert str(as_in_cutedsl) == "(((32,4),4),(1,4)):(((4,512),1),(0,128))"    # printed by real CuTeDSL too

# %% [markdown]
# Read it against a row-major 4x512 tensor: thread mode `(32,4):(4,512)` (lane t starts at column 4t, warp
# w at row w), value mode `(4,1):(1,0)` (4 contiguous elements), rest mode `(1,4):(0,128)` (the next copy
# tile is 128 columns on). The picture is the one above, repeated four times across.
#
# Drawn small: 8 threads as 2x4, 2 fp32 each per 64-bit copy, so one copy tile is 2x8, over a 4x16 tensor
# (four copy tiles). Each cell names the thread whose `partition_S` holds it; thread 5's cells show which
# of its values (V0, V1) they are and in which copy tile (rest m, rest n): its partition is
# `((2,1),2,2)`, values first, then the copy tiles.

# %%
tiny_atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cute.Float32, num_bits_per_copy=64)
tiny_copy = cute.make_tiled_copy_tv(tiny_atom, cute.make_ordered_layout((2, 4), order=(1, 0)),
                                    cute.make_layout((1, 2)))
thread_5 = tiny_copy.get_slice(5).partition_S(cute.make_identity_tensor((4, 16)))
print(thread_5)
assert str(thread_5) == "tensor<(1,2) o ((2,1),2,2):((1@1,0),2@0,8@1)>"    # as real CuTeDSL prints it
render.copy_partition(tiny_copy, (4, 16), 5)

# %% [markdown]
# ### 5. Vector width: one 128-bit copy or four 32-bit ones
#
# With a 32-bit atom the same threads and values give `((1,4),1,4)`: one value per atom, four atoms. The
# elements are the same, the instructions are not. `cute.autovec_copy(src, dst)` copies without a TiledCopy:
# CuTeDSL picks the widest vector the two tensors' static layouts and alignment allow.

# %%
scalar_atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cute.Float32, num_bits_per_copy=32)
scalar_copy = cute.make_tiled_copy_tv(scalar_atom, threads, values)
scalar_mine = scalar_copy.get_slice(5).partition_S(super_tile)
print(scalar_mine.shape, mine.shape)
assert scalar_mine.shape == ((1, 4), 1, 4)
assert [scalar_mine[i] for i in range(cute.size(scalar_mine))] == mine_cells

# %% [markdown]
# ### 6. Dividing a tensor by the threads' tile
#
# The reduce-sum tutorial "CuTe DSL Intro" divides a row-major 64x32 fp32 tensor by the tiles of three
# thread arrangements, one value per thread. The same divides here print what that tutorial printed, and
# real CuTeDSL 4.8.1 prints the same (traced on the CPU). Each rest mode counts tiles: the tensor's extent
# over the tile's, mode by mode.

# %%
x64 = cute.make_layout((64, 32), stride=(32, 1))
for thread_layout, expected in [(cute.make_layout((4, 8), stride=(8, 1)), "((4,8),(16,4)):((32,1),(128,8))"),
                                (cute.make_layout(((2, 4), 8), stride=((32, 8), 1)),
                                 "((8,8),(8,4)):((32,1),(256,8))")]:
    tile_mn, _ = cute.make_layout_tv(thread_layout, cute.make_layout((1, 1)))
    divided = cute.zipped_divide(x64, tile_mn)
    print(thread_layout, "->", tile_mn, divided)
    assert str(divided) == expected
assert cute.zipped_divide(x64, (1, 32)).shape == ((1, 32), (64, 1))     # one 1x32 tile per row: 64 tiles

# %% [markdown]
# > **Elsewhere you may read**, for the `(4,8)` threads, that "we get 64 / 4 == 16 and 32 / 4 == 8" ("CuTe DSL
# > Intro", explaining the rest shape `(16,4)`). The second is 32 / 8 == 4: the tile is 8 wide, and the
# > printout above says 4.

# %% [markdown]
# ## Exercises 1 and 2
#
# These two are about the algebra, so they come now, while `cute` is still cutekit's reference algebra
# (after `cutekit.use`, `cute` is the kernel language). Exercises 3 to 6 are at the end; 6 is the capstone.
#
# ### Exercise 1 · Build a tiled copy
#
# Write `tiled_copy_for(thread_shape, value_shape, dtype)`: a TiledCopy for threads arranged as
# `thread_shape` **row-major** (thread 1 right of thread 0), each thread owning a row-major `value_shape`
# block of elements, and a copy atom that moves one row of a thread's values at once
# (`value_shape[1] * dtype.width` bits). Use `cute.make_copy_atom` and `cute.make_tiled_copy_tv`.

# %%
def tiled_copy_for(thread_shape, value_shape, dtype):
    # YOUR CODE HERE
    return None


check("ch05.tiled_copy_for", tiled_copy_for)

# %% [markdown]
# ### Exercise 2 · Predict partition_S's shape
#
# Threads `thread_shape` row-major, values `value_shape` row-major, and an atom moving `vector` values
# (`vector` divides `value_shape[1]`; when a thread has several rows of values, `vector` is a whole row).
# Write `partition_shape(thread_shape, value_shape, vector, tile_shape)`: the shape of
# `tiled_copy.get_slice(t).partition_S(tensor)` for a tensor of `tile_shape` (a multiple of the copy tile).
# Work it out: the tiled-copy constructors are switched off while it is checked.

# %%
def partition_shape(thread_shape, value_shape, vector, tile_shape):
    # YOUR CODE HERE
    return None


check("ch05.partition_shape", partition_shape)

# %% [markdown]
# ## Run it
#
# From here on the code is a CuTeDSL program. `cutekit.use("auto")` makes `import cutlass` the real
# CuTeDSL on a machine with an sm_80+ GPU, and cutekit's CPU simulator everywhere else.

# %%
import cutekit

backend = cutekit.use("auto")
print(backend)

import torch

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack

from cutekit.checks import ch05_tiled_copy as chapter05      # compiles this notebook's kernels with real CuTeDSL

# %% [markdown]
# All four row sums end the same way. Each thread holds a partial sum; `warp_reduction_sum` adds the 32
# partials of a warp with shuffles; one value per warp goes through shared memory to thread 0. This
# helper is that ending (a `@cute.jit` function called from a kernel is inlined into it).
# `cute.arch.warp_idx()` is the thread's warp in the block and `cute.arch.lane_idx()` its lane in the warp
# (0..31); `cute.arch.sync_threads()` is CUDA's `__syncthreads()`. `cutlass.Float32` is CuTeDSL's fp32 type:
# as an annotation (`partial: cutlass.Float32`), a run-time fp32 argument; called, `cutlass.Float32(0.0)`, an
# fp32 value in the kernel.

# %%
@cute.jit
def block_sum(partial: cutlass.Float32, warp_sums: cute.Tensor):
    warp_total = cute.arch.warp_reduction_sum(partial)
    warp = cute.arch.warp_idx()          # a warp-wide shuffle: all 32 lanes must be here (see below)
    if cute.arch.lane_idx() == 0:
        warp_sums[warp] = warp_total
    cute.arch.sync_threads()
    total = cutlass.Float32(0.0)
    for w in cutlass.range_constexpr(4):         # 4 warps per block in these kernels
        total = total + warp_sums[w]
    return total


# %% [markdown]
# `warp_idx()` stands before the `if` for a reason the next section shows, once version 1 has run.
#
# ### Version 1 · CUDA style
#
# One block of 128 threads per row; thread t reads elements t, t + 128, ... (consecutive threads,
# consecutive addresses: coalesced). The loop bound is the tail check. The four warp sums live in shared
# memory: `cutlass.memory.SmemAllocator()` hands out a block's shared memory, and its
# `allocate_tensor(cutlass.Float32, cute.make_layout(4), 16)` returns a tensor of that element type and
# layout there, starting on a 16-byte boundary (CUDA's `__shared__ float warp_sums[4]`). CuTeDSL 4.8.1
# moved the allocator there from `cutlass.utils`, where the old name still works and warns that it is
# deprecated.

# %%
@cute.kernel
def cuda_style_kernel(mX: cute.Tensor, mOut: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    row, _, _ = cute.arch.block_idx()
    warp_sums = cutlass.memory.SmemAllocator().allocate_tensor(cutlass.Float32, cute.make_layout(4), 16)
    partial = cutlass.Float32(0.0)
    for n in cutlass.range(tidx, cute.size(mX, mode=[1]), 128):
        partial = partial + mX[row, n]
    total = block_sum(partial, warp_sums)
    if tidx == 0:
        mOut[row] = total


@cute.jit
def sum_rows_cuda_style(mX: cute.Tensor, mOut: cute.Tensor):
    cuda_style_kernel(mX, mOut).launch(grid=[cute.size(mX, mode=[0]), 1, 1], block=[128, 1, 1])


def on_backend(*tensors):
    return [t.cuda() for t in tensors] if backend.name == "gpu" else list(tensors)


generator = torch.Generator().manual_seed(5)
x = torch.randn(16, 1000, generator=generator)
out = torch.full((16,), float("nan"))
x_here, out_here = on_backend(x, out)
sum_rows_cuda_style(from_dlpack(x_here, assumed_align=16), from_dlpack(out_here))
assert torch.allclose(out_here.cpu(), x.sum(dim=-1), atol=1e-4)
print("cuda style, 16x1000: equal to torch.sum on", backend.name)

# %% [markdown]
# **Why `warp_idx()` comes before the `if`.** In CuTeDSL `cute.arch.warp_idx()` is not a plain division of
# the thread index: it broadcasts lane 0's value with a `shfl.sync` over all 32 lanes (so the compiler knows
# it is the same in the whole warp). Called inside `if lane_idx() == 0:`, only one lane reaches that
# shuffle, which names all 32 lanes. CUDA calls that undefined (every lane a shuffle's mask names must execute
# it); PTX for sm_70 and later has the lane wait for the other 31, which never come: on an H100 such a kernel
# hung. (Compiled for sm_80 on the CPU, such a kernel's PTX has
# `shfl.sync.idx.b32 ..., -1` inside the branch only lane 0 takes.) The simulator holds every warp
# collective until all the lanes it names arrive, so it stops there with a `DeadlockError` naming the
# lanes that came and where the others wait. Below, version 1 with that one line moved into the `if`
# (run on the simulator only: on a GPU it would hang the notebook):

# %%
@cute.kernel
def warp_idx_in_the_if_kernel(mX: cute.Tensor, mOut: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    row, _, _ = cute.arch.block_idx()
    warp_sums = cutlass.memory.SmemAllocator().allocate_tensor(cutlass.Float32, cute.make_layout(4), 16)
    partial = cutlass.Float32(0.0)
    for n in cutlass.range(tidx, cute.size(mX, mode=[1]), 128):
        partial = partial + mX[row, n]
    warp_total = cute.arch.warp_reduction_sum(partial)
    if cute.arch.lane_idx() == 0:
        warp_sums[cute.arch.warp_idx()] = warp_total       # only lane 0 reaches this shuffle
    cute.arch.sync_threads()
    if tidx == 0:
        mOut[row] = warp_sums[0] + warp_sums[1] + warp_sums[2] + warp_sums[3]


@cute.jit
def sum_rows_warp_idx_in_the_if(mX: cute.Tensor, mOut: cute.Tensor):
    warp_idx_in_the_if_kernel(mX, mOut).launch(grid=[cute.size(mX, mode=[0]), 1, 1], block=[128, 1, 1])


if backend.name == "sim":
    from cutekit.sim import DeadlockError
    try:
        sum_rows_warp_idx_in_the_if(from_dlpack(x, assumed_align=16), from_dlpack(out))
    except DeadlockError as stopped:
        print(str(stopped)[:600])
        assert "cute.arch.warp_idx()" in str(stopped) and "reached by lane 0 of warp 0" in str(stopped)
    else:
        raise AssertionError("the simulator ran the hanging kernel to the end")
else:
    print(f"not run on {backend.name}: on a GPU this kernel hangs")

# %% [markdown]
# ### Version 2 · composition: the tile seen through the TV layout
#
# The row is cut into tiles of 128 * V elements (`zipped_divide`), and each tile is viewed through a TV
# layout of shape (128, V) and strides (V, 1) with `composition(tile, tv)`: entry `[t, None]` is thread t's
# V contiguous values, so they load as one vector. The last tile may be partial: an identity tensor divided the same
# way gives each thread its first element's coordinate, and `elem_less(coordinate, shape)` says whether the
# vector exists (V divides N, so a vector is wholly inside or wholly outside).
#
# Each thread adds its vectors in registers. `cute.make_rmem_tensor(layout, dtype)` is a tensor in the thread's
# registers (a **fragment**), and `cute.make_fragment_like(t)` one with the shape and element type of `t`.
# `.fill(v)` sets every element; `.load()` reads the whole fragment as one value that computes element by
# element (`partials.load() + fragment.load()`), and `.store(value)` writes such a value back.
# `value.reduce(cute.ReductionOp.ADD, init, 0)` folds all its elements into one number, starting from `init`
# (`ReductionOp.MAX`, `MIN` and `MUL` are the other operations; a profile other than 0 keeps some modes).
# The host's `vector: cutlass.Constexpr` is a compile-time argument: a plain Python int while CuTeDSL traces,
# so the layouts built from it are static, and each value of it compiles a kernel of its own.

# %%
@cute.kernel
def composition_kernel(mX: cute.Tensor, mOut: cute.Tensor, tv_layout: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    row, _, _ = cute.arch.block_idx()
    warp_sums = cutlass.memory.SmemAllocator().allocate_tensor(cutlass.Float32, cute.make_layout(4), 16)
    x_row = mX[row, None]
    tiles = cute.zipped_divide(x_row, (cute.size(tv_layout),))                    # ((tile), (tiles))
    coordinates = cute.zipped_divide(cute.make_identity_tensor(x_row.shape), (cute.size(tv_layout),))
    fragment = cute.make_rmem_tensor(cute.make_layout(cute.size(tv_layout, mode=[1])), cutlass.Float32)
    partials = cute.make_fragment_like(fragment)
    partials.fill(0.0)
    for k in cutlass.range(cute.size(tiles, mode=[1])):
        mine = cute.composition(tiles[(None, k)], tv_layout)[tidx, None]
        my_coordinates = cute.composition(coordinates[(None, k)], tv_layout)[tidx, None]
        fragment.fill(0.0)
        if cute.elem_less(my_coordinates[0], x_row.shape):
            cute.autovec_copy(mine, fragment)
        partials.store(partials.load() + fragment.load())
    total = block_sum(partials.load().reduce(cute.ReductionOp.ADD, cutlass.Float32(0.0), 0), warp_sums)
    if tidx == 0:
        mOut[row] = total


@cute.jit
def sum_rows_composition(mX: cute.Tensor, mOut: cute.Tensor, vector: cutlass.Constexpr = 4):
    tv_layout = cute.make_layout((128, vector), stride=(vector, 1))
    composition_kernel(mX, mOut, tv_layout).launch(grid=[cute.size(mX, mode=[0]), 1, 1], block=[128, 1, 1])


for M, N in [(16, 1000), (3, 7)]:
    x = torch.randn(M, N, generator=generator)
    out = torch.full((M,), float("nan"))
    x_here, out_here = on_backend(x, out)
    sum_rows_composition(from_dlpack(x_here, assumed_align=16), from_dlpack(out_here), 4 if N % 4 == 0 else 1)
    assert torch.allclose(out_here.cpu(), x.sum(dim=-1), atol=1e-4), (M, N)
    print(f"composition, {M}x{N}: equal to torch.sum on {backend.name}")

# %% [markdown]
# ### Version 3 · TiledCopy over a super tile
#
# The TiledCopy of section 2 (4 rows x 32 threads, 1x4 values, 128-bit atom) partitions a super tile two
# copy tiles wide: 4 rows x 256 columns. The block loops over the super tiles of its 4 rows; per step each
# thread issues two independent 128-bit loads, both in flight before the first add (the benchmark version,
# `benchmarks/kernels/reduce_sum.py`, uses four). Each warp owns one row, so a warp reduction finishes the
# row: no shared memory. (`cute.arch.warp_reduction_sum(x)` adds `x` over the 32 lanes of a warp with 5
# butterfly shuffles, and every lane gets the total; `threads_in_group=16` adds within each group of 16
# lanes instead, lanes 0-15 and 16-31 apart, with 4. `cute.arch.warp_reduction_max(x)` is the same with the
# maximum.)
#
# **Tails.** `partition_S` takes no mask; the mask goes to the copy. Partition an identity tensor with the
# same TiledCopy (`tXcX`: each element's (m, n)), make one Boolean per atom (`elem_less` of the atom's first
# coordinate with the shape, in a register tensor of `cutlass.Boolean`), and
# `cute.copy(tiled_copy, src, dst, pred=inside)` skips the atoms outside. The fragment is zeroed first, so a
# skipped atom adds nothing.

# %%
@cute.kernel
def tiled_copy_kernel(gX: cute.Tensor, cX: cute.Tensor, mOut: cute.Tensor, shape: cute.Shape,
                      tiled_copy: cute.TiledCopy):
    tidx, _, _ = cute.arch.thread_idx()
    row_block, _, _ = cute.arch.block_idx()
    thread = tiled_copy.get_slice(tidx)
    partials = cute.make_fragment_like(thread.partition_S(gX[(None, None), (row_block, 0)]))   # ((4,1),1,SUPER)
    partials.fill(0.0)
    fragment = cute.make_fragment_like(partials)
    for k in cutlass.range(cute.size(gX, mode=[1, 1])):
        tXgX = thread.partition_S(gX[(None, None), (row_block, k)])
        tXcX = thread.partition_S(cX[(None, None), (row_block, k)])
        inside = cute.make_rmem_tensor(cute.make_layout(
            (cute.size(tXcX, mode=[0, 1]), cute.size(tXcX, mode=[1]), cute.size(tXcX, mode=[2]))), cutlass.Boolean)
        for atom in cutlass.range_constexpr(cute.size(inside, mode=[0])):
            for n in cutlass.range_constexpr(cute.size(inside, mode=[2])):
                inside[atom, 0, n] = cute.elem_less(tXcX[(0, atom), 0, n], shape)
        fragment.fill(0.0)
        cute.copy(tiled_copy, tXgX, fragment, pred=inside)
        partials.store(partials.load() + fragment.load())
    row_total = cute.arch.warp_reduction_sum(partials.load().reduce(cute.ReductionOp.ADD, cutlass.Float32(0.0), 0))
    row = row_block * cute.size(gX, mode=[0, 0]) + cute.arch.warp_idx()
    if cute.arch.lane_idx() == 0:
        if row < shape[0]:
            mOut[row] = row_total


@cute.jit
def sum_rows_tiled_copy(mX: cute.Tensor, mOut: cute.Tensor, vector: cutlass.Constexpr = 4):
    threads = cute.make_ordered_layout((4, 32), order=(1, 0))
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32, num_bits_per_copy=32 * vector)
    tiled_copy = cute.make_tiled_copy_tv(atom, threads, cute.make_layout((1, vector)))
    super_tile = (4, 32 * vector * 2)                    # SUPER = 2 copy tiles per step
    gX = cute.zipped_divide(mX, super_tile)              # ((4, W), (row blocks, steps))
    cX = cute.zipped_divide(cute.make_identity_tensor(mX.shape), super_tile)
    tiled_copy_kernel(gX, cX, mOut, mX.shape, tiled_copy).launch(
        grid=[cute.size(gX, mode=[1, 0]), 1, 1], block=[128, 1, 1])


for M, N in [(16, 1000), (5, 7), (9, 300)]:
    x = torch.randn(M, N, generator=generator)
    out = torch.full((M,), float("nan"))
    x_here, out_here = on_backend(x, out)
    sum_rows_tiled_copy(from_dlpack(x_here, assumed_align=16), from_dlpack(out_here), 4 if N % 4 == 0 else 1)
    assert torch.allclose(out_here.cpu(), x.sum(dim=-1), atol=1e-4), (M, N)
    print(f"tiled copy, {M}x{N}: equal to torch.sum on {backend.name}")
if backend.name == "sim":
    print(cutekit.sim.last_launch())

# %% [markdown]
# **Alignment.** A 128-bit load needs an address that is a multiple of 16 bytes, and CuTeDSL emits one only
# where it can prove that when it compiles. `from_dlpack(t, assumed_align=16)` is the caller's promise that
# `t.data_ptr()` is a multiple of 16 (the cells above call it so); nothing checks the promise when the kernel
# runs. Without it CuTeDSL knows only the element's 4 bytes, and it does not fall back to narrower loads: the
# 128-bit copy atom refuses to compile. A tensor torch allocates starts on such an address; a view that starts
# one element into another tensor does not:

# %%
import re

print("a fresh tensor:", x.data_ptr() % 16, "  a view one element in:", torch.zeros(33)[1:].data_ptr() % 16)
assert x.data_ptr() % 16 == 0 and torch.zeros(33)[1:].data_ptr() % 16 == 4
if cutekit.backend.probe_cutedsl_cpu().available:       # compiled by real CuTeDSL for sm_80, on this CPU
    unaligned = chapter05.compile_notebook_kernel(sum_rows_tiled_copy, ("Float32", 2, 1), ("Float32", 1, 1), 4)
    error = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", unaligned.error).split())      # without colours and line breaks
    message = re.search(r"'cute.copy' op .*? of atom", error).group(0)
    print("4-byte alignment, 128-bit atom:", message)
    assert not unaligned.ok and "does not meet requirement (128 bits)" in message
else:
    print("needs the cutedsl-cpu tier (nvidia-cutlass-dsl installed): `python -m cutekit doctor`")

# %% [markdown]
# ### A super tile as wide as the row, and no tails
#
# A shorter TiledCopy kernel makes the super tile as wide as the row, rounded up to 32 (`(4,
# ceil_div(N, 32) * 32)`), with one 32-bit value per atom, and no predicate: one copy, no loop. It is the
# TiledCopy kernel of "CuTe DSL Intro". Here it is; on rows of 1024 it is right:

# %%
@cute.kernel
def whole_row_kernel(mX: cute.Tensor, mOut: cute.Tensor, super_tile: cute.Shape, tiled_copy: cute.TiledCopy):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    tXgX = tiled_copy.get_slice(tidx).partition_S(cute.local_tile(mX, super_tile, (bidx, 0)))
    registers = cute.make_fragment_like(tXgX)
    cute.autovec_copy(tXgX, registers)
    row_total = cute.arch.warp_reduction_sum(registers.load().reduce(cute.ReductionOp.ADD, cutlass.Float32(0.0), 0))
    row = bidx * 4 + cute.arch.warp_idx()
    if cute.arch.lane_idx() == 0:
        mOut[row] = row_total


@cute.jit
def sum_rows_whole_row(mX: cute.Tensor, mOut: cute.Tensor, n: cutlass.Constexpr):
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32, num_bits_per_copy=32)
    tiled_copy = cute.make_tiled_copy_tv(atom, cute.make_ordered_layout((4, 32), order=(1, 0)),
                                         cute.make_layout((1, 1)))
    super_tile = (4, cute.ceil_div(n, 32) * 32)
    whole_row_kernel(mX, mOut, super_tile, tiled_copy).launch(
        grid=[cute.ceil_div(cute.size(mX, mode=[0]), 4), 1, 1], block=[128, 1, 1])


x = torch.randn(8, 1024, generator=generator)
out = torch.full((8,), float("nan"))
x_here, out_here = on_backend(x, out)
sum_rows_whole_row(from_dlpack(x_here), from_dlpack(out_here), 1024)
assert torch.allclose(out_here.cpu(), x.sum(dim=-1), atol=1e-4)
print("whole row, 8x1024: right")

# %% [markdown]
# On rows of 1000 the tile is 1024 wide, and its last 24 columns do not exist. The tensor is row-major, so
# "column 1000 + j of row r" is offset 1000 (r + 1) + j: the kernel reads the first 24 values of the *next*
# row, and row r's sum comes out too large by exactly their sum. The last row reads past the tensor. On a GPU
# nothing checks; the simulator writes what the first block computed (rows 0 to 3), then stops at the last
# row's first access past the tensor:

# %%
x = torch.randn(8, 1000, generator=generator)
out = torch.full((8,), float("nan"))
x_here, out_here = on_backend(x, out)
try:
    sum_rows_whole_row(from_dlpack(x_here), from_dlpack(out_here), 1000)
except cutekit.sim.KernelError as error:          # only the simulator checks bounds
    print(type(error).__name__, ":", str(error)[:200])
    assert "out-of-bounds" in str(error)
checked = 4 if backend.name == "sim" else 7        # rows whose next row exists (the simulator stopped at row 7)
excess = out_here.cpu()[:checked] - x.sum(dim=-1)[:checked]
next_rows = x[1:checked + 1, :24].sum(dim=-1)
print("each sum minus the row's true sum:", excess)
print("the next row's first 24 values:   ", next_rows)
assert torch.allclose(excess, next_rows, atol=1e-4)

# %% [markdown]
# The other cost of a whole-row tile: each thread's fragment holds N / 32 values, all loaded at once, and
# the tile width is a compile-time constant, so every N is a new kernel. Compiled for sm_80 on the CPU
# (real CuTeDSL, no GPU needed), this kernel for N = 16384 has 512 scalar loads per thread, fully unrolled;
# the super-tile loop of version 3 has a handful of 128-bit loads whatever N is:

# %%
if cutekit.backend.probe_cutedsl_cpu().available:
    whole = chapter05.compile_notebook_kernel(sum_rows_whole_row, ("Float32", 2, 1), ("Float32", 1, 1), 16384)
    looped = chapter05.compile_notebook_kernel(sum_rows_tiled_copy, ("Float32", 2, 4), ("Float32", 1, 1), 4)
    for name, report in (("whole row, N=16384", whole), ("tiled copy, any N", looped)):
        print(f"{name:20s} global loads: {report.count('ld.global'):4d} (128-bit: {report.count('ld.global.v4')}),"
              f" PTX {len(report.ptx):6d} characters, local memory {report.local_memory}", report.error[-300:])
    if backend.name == "sim":     # the sm_80 compile runs in a subprocess; on a GPU host it may target that GPU
        assert whole.count("ld.global.b32") == 512 and whole.count("ld.global.v4") == 0
        assert looped.count("ld.global") == looped.count("ld.global.v4") > 0 and looped.local_memory == 0
else:
    print("needs the cutedsl-cpu tier (nvidia-cutlass-dsl installed): `python -m cutekit doctor`")

# %% [markdown]
# > **Elsewhere you may read** that `partition_S` lacks "an optional mask parameter, like we have in Triton,
# > that we might want to give to `partition_S`", so that "if your shapes are irregular or not an exact
# > multiple of the tile size, you would need to add explicit "tail" logic (perhaps in the form of a
# > compositional kernel) to handle that" ("CuTe DSL Intro", after its whole-row kernel above). The mask
# > belongs to the copy, not to the partition: version 3 stays a TiledCopy kernel and takes every tail with
# > one `elem_less` per atom and `cute.copy(..., pred=)`, on the ragged shapes it was run on above.

# %% [markdown]
# ### Version 4 · any reduced dimension
#
# A contiguous tensor reduced over dim `d` is a 3-D tensor `(outer, reduced, inner)`: `outer` is the
# product of the sizes before `d`, `inner` of those after. `cute.make_tensor(mX.iterator, layout)` gives
# that view without moving data (a tensor's `iterator` is its pointer, where its element 0 is). When
# `inner` is 1 the reduced dim is the contiguous one and version 3 applies. Otherwise the coalesced choice
# is threads along `inner` (neighbouring threads, neighbouring addresses), each thread adding its column
# down `reduced`:

# %%
@cute.kernel
def inner_sum_kernel(mX: cute.Tensor, mOut: cute.Tensor):
    """mX: (outer, reduced, inner); mOut: (outer, inner)."""
    tidx, _, _ = cute.arch.thread_idx()
    inner_block, outer, _ = cute.arch.block_idx()
    j = inner_block * 128 + tidx
    if j < cute.size(mX, mode=[2]):
        total = cutlass.Float32(0.0)
        for r in cutlass.range(cute.size(mX, mode=[1])):
            total = total + mX[outer, r, j]
        mOut[outer, j] = total


@cute.jit
def sum_any_dim(mX: cute.Tensor, mOut: cute.Tensor, dim: cutlass.Constexpr):
    shape = mX.shape
    outer, inner = 1, 1
    for size in shape[:dim]:
        outer *= size
    for size in shape[dim + 1:]:
        inner *= size
    reduced = shape[dim]
    view = cute.make_tensor(mX.iterator, cute.make_layout((outer, reduced, inner), stride=(reduced * inner, inner, 1)))
    out_view = cute.make_tensor(mOut.iterator, cute.make_layout((outer, inner), stride=(inner, 1)))
    inner_sum_kernel(view, out_view).launch(grid=[cute.ceil_div(inner, 128), outer, 1], block=[128, 1, 1])


for shape, dim in [((3, 50, 40), 1), ((6, 5, 7), 0), ((2, 3, 4, 5), 2)]:
    x = torch.randn(*shape, generator=generator)
    out = torch.full(x.sum(dim=dim).shape, float("nan"))
    x_here, out_here = on_backend(x, out)
    sum_any_dim(from_dlpack(x_here), from_dlpack(out_here), dim)
    assert torch.allclose(out_here.cpu(), x.sum(dim=dim), atol=1e-4), (shape, dim)
    print(f"any dim, {shape} over dim {dim}: equal to torch.sum on {backend.name}")

# %% [markdown]
# > **Elsewhere you may read** an N-d reduction whose constructor defaults to `dim=-1` and computes
# > `self.after_shape = shape[dim + 1:]` ("CuTe DSL Intro"). With `dim = -1`, `dim + 1` is 0 and "after" is
# > the whole shape, not the empty tuple, so the default reduction views the tensor wrongly (normalize
# > `dim % rank` first):

# %%
shape, dim = (2, 3, 4), -1
print("shape[dim + 1:] =", shape[dim + 1:], "  with dim % rank:", shape[dim % len(shape) + 1:])
assert shape[dim + 1:] == (2, 3, 4) and shape[dim % len(shape) + 1:] == ()

# %% [markdown]
# > The same kernel says that "each _warp_ should operate on a region of shape `(1, reduce_size, 1)`": each
# > warp has one output, and its 32 lanes lie along the reduced mode, whose stride is `inner`. For a reduction
# > over dim 1 of a (3, 50, 40) tensor, lane t and lane t + 1 read addresses 40 elements (160 bytes) apart, so
# > one warp load touches 32 different 128-byte lines. Version 4 puts the lanes along `inner` (stride 1):

# %%
# host-side algebra, so cutekit's reference (real CuTeDSL builds layouts only inside @cute.jit)
view = cutekit.cute.make_layout((3, 50, 40), stride=(50 * 40, 40, 1))
print(view, " reduced mode stride:", view.stride[1], " inner mode stride:", view.stride[2])
assert view.stride[1] == 40 and view.stride[2] == 1

# %% [markdown]
# ## Compilation in practice
#
# With real CuTeDSL 4.8.1, calling a `@cute.jit` function runs its Python (traces it) on **every call**;
# CuTeDSL then looks the traced program up in its JIT cache, by a hash of the program, and compiles only
# when it is not there. `cute.compile(f, *args)` traces and compiles every time it is called (it does not use
# that cache) and returns the compiled function; calling that function neither traces nor compiles. (Seen on
# the CPU with `CUTE_DSL_LOG_LEVEL=20 CUTE_DSL_LOG_TO_CONSOLE=1`: a second call of a `@cute.jit` function logs
# "JIT cache hit", each `cute.compile` a "JIT cache miss".) What a compiled function was compiled for is the
# argument *types*, and a tensor's type includes its layout where the layout is static. `from_dlpack(t)` is
# fully static: shape and stride are part of the type, so the kernel is specialized to that shape.
# `.mark_layout_dynamic()` makes them run-time values (`?`), except the stride that is 1. Or compile
# against a fake tensor with a symbolic size (`cute.sym_int()`): here M dynamic and N static. Printed by real
# CuTeDSL (in a subprocess: this notebook's `cutlass` may be the simulator):

# %%
if cutekit.backend.probe_cutedsl_cpu().available and backend.name == "sim":
    static, dynamic, fake = chapter05.tensor_types_in_cutedsl(16, 1024)
    print("from_dlpack:          ", static)
    print("mark_layout_dynamic():", dynamic)
    print("fake, (sym_int, 1024):", fake)
    assert static == "Tensor<0x...@generic o (16,1024):(1024,1)>"
    assert dynamic == "Tensor<0x...@generic o (?,?):(?{i64},1)>"
    assert fake == "FakeTensor<Float32, (?{div=1}, 1024), (1024, 1)>"
else:
    print("needs the cutedsl-cpu tier (nvidia-cutlass-dsl installed): `python -m cutekit doctor`")

# %% [markdown]
# A cache of your own for `cute.compile`d kernels needs a key that names everything the compiled code
# depends on: the dtype, every *static* extent and stride, and the alignment that `assumed_align` promised;
# it leaves out what is dynamic, so that one compiled kernel serves every M (exercise 4). A key with less
# hands a kernel compiled for one static shape a tensor of another, whose loop bounds and strides it does not
# know.
#
# What a compile costs: this cell times one, on this machine's CPU with real CuTeDSL for sm_80 (the time
# includes starting a Python process and importing CuTeDSL), and on a GPU also `cute.compile` there and a
# call of the compiled kernel:

# %%
import time

if cutekit.backend.probe_cutedsl_cpu().available:
    started = time.perf_counter()
    report = chapter05.compile_notebook_kernel(sum_rows_tiled_copy, ("Float32", 2, 4), ("Float32", 1, 1), 4)
    compile_seconds = time.perf_counter() - started
    print(f"compile (with process start): {compile_seconds:.2f} s", report.error[-300:])
    assert report.ok or backend.name == "gpu"
else:
    print("needs the cutedsl-cpu tier to measure compile time")
if backend.name == "gpu":
    x = torch.randn(4096, 4096, device="cuda")
    out = torch.empty(4096, device="cuda")
    arguments = [from_dlpack(x, assumed_align=16), from_dlpack(out)]
    started = time.perf_counter()
    compiled = cute.compile(sum_rows_tiled_copy, *arguments, 4)
    print(f"cute.compile on this GPU: {time.perf_counter() - started:.2f} s")
    torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(100):
        compiled(*arguments)
    torch.cuda.synchronize()
    print(f"one call of the compiled kernel (host overhead + kernel): {(time.perf_counter() - started) * 10:.3f} ms")
else:
    print("call overheads are measured on the gpu tier only (the simulator compiles nothing)")

# %% [markdown]
# > **Elsewhere you may read** a cache of compiled kernels keyed `key = f'reduce_sum_{gInput.dtype}'` ("CuTe
# > DSL Intro"), filled with kernels compiled from `from_dlpack` tensors. The kernel compiled for a static
# > 1024x1024 tensor is then handed a 256x256 one: its loop bounds and strides are 1024's, it reads past the
# > smaller tensor, and the tutorial reports "CUDA error: an illegal memory access was encountered". A key
# > that names the static extents and strides, as above, keeps the two kernels apart.

# %% [markdown]
# ## On a GPU: time and bandwidth against torch.sum
#
# On a GPU this cell times the four row sums and `torch.sum` on a 16384x16384 fp32 tensor (CUDA events,
# median of 20 launches) and plots the bandwidth. On the simulator it prints the numbers measured for the
# benchmark versions of these kernels (`benchmarks/kernels/reduce_sum.py`) in `benchmarks/RESULTS.md`: an
# H100 on 2026-11-23, where on 16384x16384 fp32 they ran at 0.991 to 1.003 of torch.sum's bandwidth, about
# 3.1 TB/s.

# %%
if backend.name == "gpu":
    import statistics

    import matplotlib.pyplot as plt

    x = torch.randn(16384, 16384, device="cuda")
    out = torch.empty(16384, device="cuda")
    arguments = [from_dlpack(x, assumed_align=16), from_dlpack(out)]
    versions = {"cuda style": cute.compile(sum_rows_cuda_style, *arguments),
                "composition": cute.compile(sum_rows_composition, *arguments, 4),
                "tiled copy": cute.compile(sum_rows_tiled_copy, *arguments, 4)}
    runs = {name: (lambda f=f: f(*arguments)) for name, f in versions.items()}
    runs["torch.sum"] = lambda: torch.sum(x, dim=-1, out=out)
    bandwidth = {}
    for name, run in runs.items():
        run()
        torch.cuda.synchronize()
        assert torch.allclose(out, x.sum(dim=-1), rtol=1e-3, atol=1e-2), name
        times = []
        for _ in range(20):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            run()
            stop.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(stop) / 1000)
        bandwidth[name] = x.numel() * 4 / statistics.median(times) / 1e9
    for name, rate in bandwidth.items():
        print(f"{name:12s} {rate:7.0f} GB/s   {rate / bandwidth['torch.sum']:.3f} of torch.sum")
    figure, axes = plt.subplots(figsize=(6, 2.5))
    axes.barh(list(bandwidth), list(bandwidth.values()))
    axes.set_xlabel("GB/s, 16384x16384 fp32 row sum")
    figure
else:
    from cutekit.results import latest_table
    print("no GPU here; the latest measured numbers (benchmarks/RESULTS.md, the benchmark versions of these kernels):")
    print(latest_table("sum rows", "sum any_dim"))

# %% [markdown]
# ## Exercises 3 to 5
#
# ### Exercise 3 · Two rows per warp
#
# Version 3's block is 4 rows of 32 threads, a warp per row. Here it is 8 rows of 16 threads, row-major
# (thread 1 right of thread 0), so a block sums 8 rows and each warp holds two of them: lanes 0-15 of warp w hold
# row 2w of the block's rows, lanes 16-31 row 2w + 1. The host below builds that TiledCopy and an
# (8, 16 * vector * 2) super tile; the kernel's loop is version 3's, unchanged, since the partitions and
# predicates follow the TiledCopy. Finish the kernel from `partials`: each thread's share of its row, reduced
# over the 16 lanes of that row, and written by the row's first lane, if the row exists. The check runs it on
# random shapes (on the simulator, or your GPU) and, with CuTeDSL installed, compiles it for sm_80 and reads
# the PTX (128-bit loads only, no local memory, and 4 butterfly shuffles: a 16-lane reduction).

# %%
@cute.kernel
def two_rows_kernel(gX: cute.Tensor, cX: cute.Tensor, mOut: cute.Tensor, shape: cute.Shape,
                    tiled_copy: cute.TiledCopy):
    tidx, _, _ = cute.arch.thread_idx()
    row_block, _, _ = cute.arch.block_idx()
    thread = tiled_copy.get_slice(tidx)
    partials = cute.make_fragment_like(thread.partition_S(gX[(None, None), (row_block, 0)]))
    partials.fill(0.0)
    fragment = cute.make_fragment_like(partials)
    for k in cutlass.range(cute.size(gX, mode=[1, 1])):
        tXgX = thread.partition_S(gX[(None, None), (row_block, k)])
        tXcX = thread.partition_S(cX[(None, None), (row_block, k)])
        inside = cute.make_rmem_tensor(cute.make_layout(
            (cute.size(tXcX, mode=[0, 1]), cute.size(tXcX, mode=[1]), cute.size(tXcX, mode=[2]))), cutlass.Boolean)
        for atom in cutlass.range_constexpr(cute.size(inside, mode=[0])):
            for n in cutlass.range_constexpr(cute.size(inside, mode=[2])):
                inside[atom, 0, n] = cute.elem_less(tXcX[(0, atom), 0, n], shape)
        fragment.fill(0.0)
        cute.copy(tiled_copy, tXgX, fragment, pred=inside)
        partials.store(partials.load() + fragment.load())
    # YOUR CODE HERE
    return None


# %%
@cute.jit
def two_rows_per_warp(mX: cute.Tensor, mOut: cute.Tensor, vector: cutlass.Constexpr = 4):
    threads = cute.make_ordered_layout((8, 16), order=(1, 0))
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32, num_bits_per_copy=32 * vector)
    tiled_copy = cute.make_tiled_copy_tv(atom, threads, cute.make_layout((1, vector)))
    super_tile = (8, 16 * vector * 2)
    gX = cute.zipped_divide(mX, super_tile)
    cX = cute.zipped_divide(cute.make_identity_tensor(mX.shape), super_tile)
    two_rows_kernel(gX, cX, mOut, mX.shape, tiled_copy).launch(
        grid=[cute.size(gX, mode=[1, 0]), 1, 1], block=[128, 1, 1])


check("ch05.tiled_copy_row_sum", two_rows_per_warp)

# %% [markdown]
# ### Exercise 4 · Fix the cache key
#
# `sum_rows_tiled_copy` is compiled once per key with M dynamic, N static, the row-major strides of a
# contiguous tensor, and `assumed_align=16` (128-bit loads) when the data address is a multiple of 16
# bytes. Write `cache_key(x)` for a 2-D torch tensor `x`: equal keys exactly when one compiled kernel
# serves both tensors, and hashable (it goes in a dict). "CuTe DSL Intro"'s key was `f"reduce_sum_{x.dtype}"`.

# %%
def cache_key(x):
    # YOUR CODE HERE
    return None


check("ch05.cache_key", cache_key)

# %% [markdown]
# ### Exercise 5 · Sum over dim 0, four columns per thread
#
# Version 4 reduced over dim 0 with one thread per column: a thread reads one float of each row, a 32-bit
# load. Here a thread owns 4 adjacent columns and reads them with one 128-bit load per row: version 3's
# vector along the row, while the loop walks down the rows. Write the kernel's body and the rest of the
# host function `sum_dim0(mX, mOut)`: `mOut[n] = sum over m of mX[m, n]` for a row-major, contiguous fp32
# (M, N) tensor.
#
# - **Shapes.** Any M from 1 up, not only multiples of 4. N is a multiple of 4 and need not be one of 512:
#   every row then starts on a 16-byte boundary, and the check passes `from_dlpack(t, assumed_align=16)` for
#   `mX` and `mOut`. Nothing outside `mOut` is written, nothing outside `mX` is read.
# - **The block.** 128 threads side by side along a row, each owning 4 adjacent columns: a block owns 512
#   columns, down all M rows. The host gives the 128-bit atom and the super tile `(4, 512)`: one step of the
#   block's loop reads 4 rows of its columns, so each thread has 4 independent 128-bit loads in flight
#   (version 3's super tile grew along the row; this one grows down).
# - **The kernel's signature** is given: `gX` and `cX` are `mX` and its identity tensor divided by the super
#   tile with `zipped_divide`, so they are indexed ((row in the step, column in the block), (row step,
#   column block)); `shape` is `mX.shape`.
#
# **What you need**, by section: the TiledCopy from the atom, a thread layout and a value layout (sections 1
# and 2; which way the threads lie decides whether a warp's loads are coalesced, version 4); a thread's
# `partition_S` of one super tile and its shape (section 3, exercise 2); the loop over super tiles, one
# `elem_less` per atom, `cute.copy(..., pred=)` and the fragment cleared before each copy (version 3,
# "Tails"); register fragments, `.load()`, `.store()` and `.reduce` (version 2). A thread's 4 columns are 4
# different outputs, so here `.reduce` takes a profile: a tuple with one entry per mode of the value, `None`
# to keep that mode and `1` to fold it. The grid: one block per 512 columns, the last one partly full
# (version 4's launch, with 512 columns to a block instead of 128).
#
# **How it is graded.** `reference`: on the simulator, a shape the super tile divides, then ragged ones (M
# not a multiple of 4 over two steps and N past a multiple of 512; M below 4 and N below 512), where nothing
# outside `mOut` may be written. `cutedsl-cpu`: real CuTeDSL compiles it for sm_80 with M and N run-time
# values (N a multiple of 4); every global load must be a 128-bit `ld.global.v4`, at least one per row of
# a step, and nothing may go to local memory. A kernel that is right with 32-bit loads loses this point, and
# the hint says what its PTX lacks. `gpu`: 4096x8192 and 3001x5004 must equal `torch.sum(x, dim=0)`; the
# time is printed beside torch's and not graded.

# %%
@cute.kernel
def column_sum_kernel(gX: cute.Tensor, cX: cute.Tensor, mOut: cute.Tensor, shape: cute.Shape,
                      tiled_copy: cute.TiledCopy):
    """gX, cX: mX and its identity tensor by the super tile, ((4, 512), (row steps, column blocks))."""
    # YOUR CODE HERE
    pass


@cute.jit
def sum_dim0(mX: cute.Tensor, mOut: cute.Tensor):
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32, num_bits_per_copy=128)
    super_tile = (4, 512)                   # one step: 4 rows of the block's 512 columns
    # YOUR CODE HERE
    pass


check("ch05.sum_dim0", sum_dim0)

# %% [markdown]
# ## Exercise 6 · Capstone: a row softmax, from a blank cell
#
# Every exercise so far changed a cell you had read. This one starts from a signature: write the kernel (or
# kernels) and the body of the host function `softmax_rows(mX, mY, vector)` that launches it.
#
# - **What it computes.** For a row-major, contiguous fp32 tensor `mX` of shape (M, N), write into `mY` (same
#   shape and layout) `Y[m, :] = softmax(X[m, :])`, which is `torch.softmax(x, dim=-1)`: each element's
#   exponential over the sum of its row's exponentials. Subtract the row's max from every element before the
#   exponential: the result is the same (the factor cancels), and without it the exponential overflows
#   (next cell). Every output of a row uses the same max and the same sum.
# - **Shapes.** Any M and N from 1 up: M need not be a multiple of the rows a block holds, N need not be a
#   multiple of 4 or of any tile, and N may be 1. Nothing outside Y is written, nothing outside X is read.
# - **`vector`** (a `cutlass.Constexpr`) is 4 when N is a multiple of 4 and 1 otherwise. The check passes
#   tensors made with `from_dlpack(t, assumed_align=16)`, so with `vector` 4 every row starts on a 16-byte
#   boundary and a 128-bit copy compiles; with 1, a 32-bit one.
# - **A real kernel.** The threads of a warp (or of a block) share a row. One thread per row gets the right
#   numbers slowly: the 32 lanes of a warp then read 32 rows, far apart.
#
# **What you need**, all shown in this chapter or the one before: a TiledCopy with an atom of `vector` floats
# over a thread layout (sections 1 and 2), partitioned over a super tile with `get_slice(...).partition_S`
# and, for Y, `partition_D` (section 3); a block's rows cut into super tiles along the row (version 3's
# `zipped_divide`, or `local_tile`, one block's tiles in one call), and a loop over them; an
# identity tensor partitioned the same way, one `elem_less` per atom and `cute.copy(..., pred=)`, on the way
# in and on the way out (version 3, "Tails"); register fragments with `.fill`, `.load()`, `.store()` and
# `.reduce` (version 2); warp reductions for the row's max and its sum (version 3); the alignment promise
# (version 3, "Alignment"). `local_tile` is chapter 04's. Two names are new. `cute.math.exp(v)` is e to the
# `v`, of a scalar or, element by element, of a fragment's value; `-cutlass.Float32.inf` is minus infinity
# in fp32 (below every number, and its exponential is 0). For the larger of two run-time numbers (a
# running maximum kept across tiles, say), `cute.arch.fmax(a, b)` is the fp32 `max.f32` instruction
# (`cutlass.max(a, b)` and `cutlass.min(a, b)` do the same for any two run-time numbers); a fragment's
# value combines with a scalar element by element (`fragment.load() - m` subtracts m from each). Decide what
# an element that was not loaded holds before it meets a max or a sum.
#
# **How it is graded.** `reference`: on the simulator (tensors of static shape), against `torch.softmax`
# within a relative 1e-3 (absolute 1e-6), on a shape with M and N multiples of 4 and N = 1024; on ragged
# shapes (an odd M over several blocks, an odd N, N = 1), where nothing outside Y may be written; and on
# inputs near +1000 and near -1000. `cutedsl-cpu`: real CuTeDSL compiles it for sm_80 with M and N run-time
# values (`cute.sym_int()`, "Compilation in practice"; N a multiple of 4, `vector` 4), and its PTX must have
# only 128-bit global loads and stores (`ld.global.v4`, `st.global.v4`), warp shuffles that reduce
# (`warp_reduction_max` and `warp_reduction_sum` compile to `shfl.sync.bfly`) and no local memory; a right
# kernel without them is a slow one, and the hint says which it lacks. `gpu`: 8192x8192 and 3000x5001
# (`vector` 1) must equal `torch.softmax` (the same tolerance), and 8192x8192 must run at 0.4 of
# `torch.softmax`'s speed or more (its time over yours, both timed in the same process). A softmax
# reads X at least once and writes Y once, 8 bytes per element; each further pass over X adds 4.

# %%
rows = torch.tensor([[1000.0, 1001.0, 999.0], [-1000.0, -1001.0, -999.0]])
print("exp(88), exp(89) in fp32:     ", torch.exp(torch.tensor([88.0, 89.0])).tolist())
print("exp(x) / its row's sum:       ", (torch.exp(rows) / torch.exp(rows).sum(dim=-1, keepdim=True)).tolist())
shifted = torch.exp(rows - rows.max(dim=-1, keepdim=True).values)
print("the max subtracted first:     ", (shifted / shifted.sum(dim=-1, keepdim=True)).tolist())
print("torch.softmax:                ", torch.softmax(rows, dim=-1).tolist())
assert torch.isfinite(torch.exp(torch.tensor(88.0))) and torch.isinf(torch.exp(torch.tensor(89.0)))
assert torch.isnan(torch.exp(rows) / torch.exp(rows).sum(dim=-1, keepdim=True)).all()    # inf / inf, 0 / 0
assert torch.allclose(shifted / shifted.sum(dim=-1, keepdim=True), torch.softmax(rows, dim=-1))
for passes in (1, 2, 3):
    print(f"X read {passes} time(s), Y written once: {4 * passes + 4} bytes per element")
assert chapter05.GPU_THRESHOLD == 0.4           # the gpu criterion's bar, as the text says

# %%
# Your @cute.kernel (one or more) first; then the body of softmax_rows, which builds what they need and launches.
# YOUR CODE HERE
pass


@cute.jit
def softmax_rows(mX: cute.Tensor, mY: cute.Tensor, vector: cutlass.Constexpr):
    """Y[m, :] = softmax(X[m, :]) for a contiguous fp32 (M, N) tensor; vector is 4 when N % 4 == 0, else 1."""
    # YOUR CODE HERE
    pass


check("ch05.capstone_softmax", softmax_rows)

# %% [markdown]
# ## What to remember
#
# - A copy atom is one instruction (`num_bits_per_copy`); `make_tiled_copy_tv(atom, threads, values)` repeats
#   it over a tile, and `get_slice(t).partition_S(tile)` is `((atom values, atoms), rest m, rest n)`.
# - A super tile several copy tiles wide gives each thread several independent 128-bit loads per step.
# - Tails: partition an identity tensor the same way, one `elem_less` per atom, `cute.copy(..., pred=)`; a
#   128-bit atom compiles only with the 16-byte alignment promised (`from_dlpack(t, assumed_align=16)`).
# - A `@cute.jit` call traces every time and compiles on a JIT-cache miss; a `cute.compile`d function does
#   neither. Its cache key holds the dtype, every static extent and stride, and the alignment; nothing dynamic.
# - A whole kernel (the softmax) is these pieces again: predicated 128-bit copies in and out, register
#   fragments, a warp reduction per statistic of the row.
#
# Next: **06 · ldmatrix and retile**, from shared memory into the registers a tensor-core MMA reads.
