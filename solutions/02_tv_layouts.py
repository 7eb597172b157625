# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-all
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: CuTe by Hand
#     language: python
#     name: cute-by-hand
# ---

# %% [markdown]
# # 02 · Thread-value layouts
#
# **Why.** In a CUDA kernel, the question "which elements does this thread touch?" is answered by index
# arithmetic on `threadIdx.x`: `i = threadIdx.x * 4 + v` for four consecutive floats, or
# `row = (tid / 32) * 4 + v_row; col = (tid % 32) * 4 + v_col` for a 2-D tile, and a different formula for
# every access pattern, written again for loads, stores and predicates. Get it slightly wrong and two threads
# write the same element, or a warp's loads stop being contiguous and run four times slower.
#
# CuTe states the assignment once, as a layout. A **thread-value layout** (TV layout) is an ordinary layout
# with two modes: mode 0 is the **thread** (which thread of the block), mode 1 the **value** (which of that
# thread's elements). Its output is a 1-D index into a **tile** of the data, an `(M, N)` block unfolded
# column-major as in chapter 01. So `tv((t, v))` answers "where is thread t's v-th element?", and
# `tv[(t, None)]` lists everything thread t owns.

# %%
import numpy as np

from cutekit import cute, render, widgets
from cutekit.checks import check

# %% [markdown]
# ## See it
#
# Here is the assignment from one of the seed tutorials: 24 elements, 4 threads, 6 values each. Drawn as a
# 4 × 6 tile (column-major: element `i` at row `i % 4`, column `i // 4`), each cell shows `T<thread> V<value>`.

# %%
tv = cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4)))
render.tv_layout(tv, (4, 6))

# %%
print(tv)
assert str(tv) == "((2,2),(2,3)):((2,12),(1,4))"
assert cute.size(tv, mode=[0]) == 4 and cute.size(tv, mode=[1]) == 6

# %% [markdown]
# ## Play
#
# The explorer draws a TV layout over its tile and highlights one thread. Predict first: which cells does
# thread 3 own? (Thread mode `(2,2):(2,12)`: thread 3 is coordinate (1,1), offset 2 + 12 = 14.) Then move the
# slider to 3 and look.

# %%
widgets.tv_explorer(tv_layout=cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4))), tiler_mn=(4, 6))

# %% [markdown]
# ## Build it up
#
# ### 1. Read the layout off the picture: values first, then threads
#
# **Values.** Look at thread 0 alone. Its elements sit at tile indices 0, 1, 4, 5, 8, 9: pairs of neighbours
# (step 1), three pairs in a row (step 4). As a layout: `(2,3):(1,4)`. Every thread's values have this same
# pattern, only shifted.
#
# **Threads.** Now look only at each thread's value 0: threads 0, 1, 2, 3 start at 0, 2, 12, 14. Thread 1 is
# 2 after thread 0, thread 2 is 12 after it, thread 3 both: `(2,2):(2,12)`.
#
# **Together.** Threads as mode 0, values as mode 1: `((2,2),(2,3)):((2,12),(1,4))`.

# %%
values = cute.make_layout((2, 3), stride=(1, 4))
threads = cute.make_layout((2, 2), stride=(2, 12))
print([values(v) for v in range(6)], [threads(t) for t in range(4)])
assert [values(v) for v in range(6)] == [0, 1, 4, 5, 8, 9]
assert [threads(t) for t in range(4)] == [0, 2, 12, 14]
together = cute.make_layout((threads.shape, values.shape), stride=(threads.stride, values.stride))
assert str(together) == str(tv)

# %% [markdown]
# ### 2. Partition: compose the data with the TV layout, then slice a thread
#
# The TV layout maps `(thread, value)` to a tile index; the data tensor maps a tile index to memory. Compose
# them (chapter 01: `composition(A, B)(c) = A(B(c))`) and you get a tensor indexed by `(thread, value)`;
# slice it with `(t, None)` (`None` keeps a mode, like `:` in NumPy) and you have thread t's share. That slice
# is what CuTe calls **partitioning**. Here the data is a 1-D array `0..23`, so each value is its own index.

# %%
data = cute.make_tensor(np.arange(24, dtype=np.int32), cute.make_layout((24, 1), stride=(1, 1)))
by_thread = cute.composition(data, tv)
for thread in range(4):
    print(thread, by_thread[(thread, None)].values())
assert by_thread[(0, None)].values() == [0, 1, 4, 5, 8, 9]
assert by_thread[(1, None)].values() == [2, 3, 6, 7, 10, 11]
assert by_thread[(2, None)].values() == [12, 13, 16, 17, 20, 21]
assert by_thread[(3, None)].values() == [14, 15, 18, 19, 22, 23]

# %% [markdown]
# These are the numbers the seed's kernel printed on its GPU (we run that kernel at the end of the chapter).
# One slip in that seed: its comment calls the tensor's layout `(24,1):(1,0)`, its text `(24,1):(1,1)`.
# A contiguous torch tensor of shape (24, 1) has strides (1, 1), so `(24,1):(1,1)` is what `from_dlpack`
# gives; for a size-1 mode the stride never matters, which is why both read the same data.
#
# To see *where* in a 2-D tile a thread's values are, compose an **identity tensor** instead of data: its
# elements are their own coordinates `(m, n)`.

# %%
coordinates = cute.composition(cute.make_identity_tensor((4, 6)), tv)
owned = list(coordinates[(1, None)])
print(owned)
assert owned == [(2, 0), (3, 0), (2, 1), (3, 1), (2, 2), (3, 2)]

# %% [markdown]
# ### 3. An MMA-style TV layout: 8 threads, 8 values, an 8 × 8 tile
#
# Tensor-core instructions fix which thread holds which accumulator, and CuTe describes each with a TV layout.
# The Volta example in the CUTLASS docs (the seed notes walk through it) is
# `((2,2,2),(2,2,2)):((1,16,4),(8,2,32))`: read it as before, thread by thread at value 0, then value by value
# in thread 0.

# %%
mma_tv = cute.make_layout(((2, 2, 2), (2, 2, 2)), stride=((1, 16, 4), (8, 2, 32)))
first_values = [mma_tv((t, 0)) for t in range(8)]
thread_zero = [mma_tv((0, v)) for v in range(8)]
print(first_values, thread_zero)
assert first_values == [0, 1, 16, 17, 4, 5, 20, 21]
assert thread_zero == [0, 8, 2, 10, 32, 40, 34, 42]
assert sorted(mma_tv(i) for i in range(64)) == list(range(64))   # every element owned exactly once
render.tv_layout(mma_tv, (8, 8))

# %% [markdown]
# The seed's table checks out: `(T=2, V=0)` is index 16, coordinate `(0, 2)`; `(T=0, V=4)` is 32, `(0, 4)`.
# Its aside, that the same 8 threads drawn alone form the 4 × 2 grid `T0 T2 / T1 T3 / T4 T6 / T5 T7`,
# described by `(2,2,2):(1,4,2)`, is also right: that layout sends threads 0..7 to grid positions
# 0, 1, 4, 5, 2, 3, 6, 7 (column-major in 4 rows).

# %%
grid = cute.make_layout((2, 2, 2), stride=(1, 4, 2))
assert [grid(t) for t in range(8)] == [0, 1, 4, 5, 2, 3, 6, 7]
assert [cute.idx2crd(grid(t), (4, 2)) for t in (2, 4)] == [(0, 1), (2, 0)]

# %% [markdown]
# ### 4. `make_layout_tv`: build the TV layout from a thread grid and a value block
#
# Reading strides off a picture is fine for 4 threads; for 128 you describe the arrangement instead. Give
# `cute.make_layout_tv` a **thread layout** (thread id → its place in a grid of threads) and a **value
# layout** (value id → its place in one thread's block of values); it returns the **tiler**, the `(M, N)`
# extent of the tile all threads cover together, and the TV layout over that tile.
#
# The elementwise-add example in CuTeDSL uses 128 threads as 4 rows of 32, row-major (threads 0..31 along the
# first row), and gives each thread 4 rows of `128 // width` elements, row-major: for fp32, a 4 × 4 block.

# %%
thread_layout = cute.make_ordered_layout((4, 32), order=(1, 0))
value_layout = cute.make_ordered_layout((4, 4), order=(1, 0))
tiler, add_tv = cute.make_layout_tv(thread_layout, value_layout)
print(thread_layout, value_layout, tiler, add_tv)
assert str(thread_layout) == "(4,32):(32,1)" and str(value_layout) == "(4,4):(4,1)"
assert tiler == (16, 128)
assert str(add_tv) == "((32,4),(4,4)):((64,4),(16,1))"

# %% [markdown]
# Read the result with chapter 01's rules. The tile is 16 × 128, unfolded column-major, so index `i` is
# `(i % 16, i // 16)`. Thread mode `(32,4):(64,4)`: the first 32 threads step by 64 = 4 columns, the next
# factor steps by 4 = 4 rows. Value mode `(4,4):(16,1)`: 4 values step by 16 = one column, then 4 by 1 = one
# row. So thread `t` owns rows `4 * (t // 32) + 0..3` and columns `4 * (t % 32) + 0..3`.

# %%
render.tv_layout(add_tv, tiler, highlight=33)

# %%
thread_33 = list(cute.composition(cute.make_identity_tensor(tiler), add_tv)[(33, None)])
print(thread_33[:5], "...")
assert thread_33[0] == (4, 4) and thread_33[1] == (4, 5) and thread_33[4] == (5, 4)
assert sorted(thread_33) == [(m, n) for m in range(4, 8) for n in range(4, 8)]

# %% [markdown]
# **Corrections to the seed notes.** The notes give the tiler as "`(num_vals, num_thrs)`" and as
# `(4 * 128 // width, 128)`. Neither is the rule. The tiler is the tile's extent in the tensor: rows = thread
# rows × value rows, columns = threads per row × values per row. For fp32 the seed's formula happens to agree
# (`4 * 4 = 16`, and 128); for fp16 the value block is `(4, 8)` and the tile is `(16, 256)`, not `(32, 128)`:

# %%
tiler_fp16, tv_fp16 = cute.make_layout_tv(thread_layout, cute.make_ordered_layout((4, 8), order=(1, 0)))
print(tiler_fp16, tv_fp16)
assert tiler_fp16 == (16, 256) and (4 * 128 // 16, 128) == (32, 128)
assert str(tv_fp16) == "((32,4),(8,4)):((128,4),(16,1))"

# %% [markdown]
# Two more slips in the same notes. "Ampere uses a 128 = 4 × 32 thread block" is this example's choice, not
# a property of Ampere (the course's own add kernel uses 8 × 32). And the value layout is written there as
# `cute.make_layout((4, 128 // width), order=(1, 0))`, which raises `TypeError` (chapter 01):
# `make_ordered_layout` is the function that takes `order`.
#
# Another seed (a reduce-sum tutorial) prints tilers for value layouts of one element per thread. Its three
# examples reproduce exactly, on a 64 × 32 row-major tensor, with one slip in its prose: it explains the
# `(16,4)` tile counts as "64 / 4 == 16 and 32 / 4 == 8"; the second is 32 / 8 = 4, because the tile is
# 8 wide.

# %%
tensor_64x32 = cute.make_layout((64, 32), stride=(32, 1))
one_value = cute.make_layout((1,), stride=(1,))
for shape, stride in [((4, 8), (8, 1)), (((2, 4), 8), ((32, 8), 1))]:
    seed_tiler, _ = cute.make_layout_tv(cute.make_layout(shape, stride=stride), one_value)
    print(seed_tiler, cute.zipped_divide(tensor_64x32, seed_tiler))
assert str(cute.zipped_divide(tensor_64x32, (4, 8))) == "((4,8),(16,4)):((32,1),(128,8))"
assert str(cute.zipped_divide(tensor_64x32, (8, 8))) == "((8,8),(8,4)):((32,1),(256,8))"
assert cute.make_layout_tv(cute.make_layout(((2, 4), 8), stride=((32, 8), 1)), one_value)[0] == (8, 8)

# %% [markdown]
# ### 5. From tiles to threads: the whole partition of the elementwise add
#
# A kernel first gives each block one tile and then each thread its share of that tile. `zipped_divide`
# (chapter 03 explains it fully) splits a tensor into `((tile), (which tile))`; a block takes
# `[(None, None), block]`. For a 256 × 512 row-major fp32 tensor and the `(16,128)` tiler:

# %%
matrix = cute.make_layout((256, 512), stride=(512, 1))
tiles = cute.zipped_divide(matrix, tiler)
print(tiles)
assert str(tiles) == "((16,128),(16,4)):((512,1),(8192,128))"

# %% [markdown]
# The tile `(16,128):(512,1)` keeps the tensor's row stride, 512. That answers a question the seed notes
# leave open: in their MLIR dump the tile's layout is `(16,128):(?,1)` and they ask why `?` is not a static
# 128. It is not a tile width at all: it is the tensor's row stride `N`, unknown at compile time because
# `from_dlpack(...).mark_layout_dynamic()` made the shape dynamic. The same notes read the per-thread offset
# `(tid % 32) * 4 + (tid / 32) * (? * 4)` as "`tid % 32` gives the row"; step 4 shows the opposite:
# `tid % 32` picks the group of 4 **columns** (contiguous, hence the `* 4` elements) and `tid / 32` the
# group of 4 **rows** (hence `4 * ?`, four row strides). Composing the tile with the TV layout gives exactly
# that offset:

# %%
tile = cute.make_tensor(np.arange(256 * 512, dtype=np.int32), matrix)
block_tile = cute.zipped_divide(tile, tiler)[((None, None), 5)]
mine = cute.composition(block_tile, add_tv)[(33, None)]
block_start = tiles(((0, 0), 5))
row_stride = 512
print(mine, block_start, mine.values()[:8])
assert str(mine.layout) == "((4,4)):((1,512))"
assert mine.values()[0] - block_start == (33 % 32) * 4 + (33 // 32) * (4 * row_stride)
assert mine.values()[:8] == [block_start + 4 * row_stride + 4 + k for k in range(4)] + \
    [block_start + 5 * row_stride + 4 + k for k in range(4)]

# %% [markdown]
# Thread 33's share, as a memory layout, is `((4,4)):((1,512))`: values 0..3 are 4 **contiguous** elements
# (the value mode's first stride, 16 in the column-major tile, is one column, which is 1 in a row-major
# tensor), and values 4, 8, 12 start the next three rows, 512 apart. Each row of a thread's block is
# 4 contiguous fp32 = 16 bytes, starting at a multiple of 4 elements: the shape of one 128-bit access.
#
# ### 6. What the compiler makes of it: four 128-bit loads per operand per thread
#
# The seed notes ask whether `128 // width` means "four 128-bit loads per thread" or "4 registers, each
# sliced". The compiler answers. Below is the elementwise add with exactly this partition (compose, slice
# `(tidx, None)`, load, add, store), written to a file because CuTeDSL compiles functions from their source
# file; `compile_to_ptx` compiles it for an Ampere GPU (sm_80) on the CPU and counts PTX instructions.

# %%
import pathlib
import tempfile

from cutekit.checks import compile_to_ptx
from cutekit.checks.cutedsl import FakeTensor

kernel_file = pathlib.Path(tempfile.mkdtemp(prefix="ch02-")) / "tv_add.py"

# %%
# %%writefile {kernel_file}
import cutlass
import cutlass.cute as cute


@cute.kernel
def add_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor, tv_layout: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    tile = ((None, None), bidx)                          # this block's tile
    thread_a = cute.composition(gA[tile], tv_layout)[(tidx, None)]
    thread_b = cute.composition(gB[tile], tv_layout)[(tidx, None)]
    thread_c = cute.composition(gC[tile], tv_layout)[(tidx, None)]
    thread_c.store(thread_a.load() + thread_b.load())


@cute.jit
def add(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    threads = cute.make_ordered_layout((4, 32), order=(1, 0))
    values = cute.make_ordered_layout((4, 128 // mA.element_type.width), order=(1, 0))
    tiler, tv_layout = cute.make_layout_tv(threads, values)
    gA, gB, gC = (cute.zipped_divide(t, tiler) for t in (mA, mB, mC))
    add_kernel(gA, gB, gC, tv_layout).launch(grid=[cute.size(gC, mode=[1]), 1, 1],
                                             block=[cute.size(tv_layout, mode=[0]), 1, 1])


# %%
for dtype, vector in (("Float32", 4), ("Float16", 8)):
    # three (M, N) row-major tensors of dynamic shape, N a multiple of `vector` (so rows stay 16-byte aligned)
    ptx = compile_to_ptx(str(kernel_file), "add", tuple(FakeTensor(dtype, 2, vector) for _ in range(3)))
    assert ptx.ok, ptx.error
    print(f"{dtype}: {ptx.count('ld.global.v4')} x ld.global.v4, {ptx.count('st.global.v4')} x st.global.v4, "
          f"{ptx.count('ld.global') - ptx.count('ld.global.v4')} other global loads, "
          f"{ptx.local_memory} local-memory accesses")
    assert ptx.count("ld.global.v4.b32") == 8 and ptx.count("st.global.v4.b32") == 4
    assert ptx.count("ld.global") == 8 and ptx.local_memory == 0

# %% [markdown]
# Eight `ld.global.v4.b32` for two operands: **four 128-bit loads per operand per thread**, one per row of
# the thread's 4-row block, and four 128-bit stores. The same count for fp16: there a row is 8 halves, still
# 16 bytes, still one `v4.b32` (four 32-bit registers, two halves in each). So `128 // width` is the number
# of elements in one 128-bit access, and the `4` rows of the value layout are four independent accesses in
# flight per thread; nothing is "sliced". A fp32 thread holds 16 values in 16 registers, a fp16 thread 32
# values in the same 16 registers.
#
# ## Run it
#
# The seed's kernel: each thread of one block composes the tensor with the TV layout, takes its slice and
# records what it owns. Written once against CuTeDSL's API, it runs on your GPU when there is one (with
# CuTeDSL) and on cutekit's CPU simulator otherwise; `cutekit.use("auto")` picks, before `cutlass` is imported.

# %%
import cutekit

backend = cutekit.use("auto")
print(backend)

import torch  # noqa: E402
import cutlass  # noqa: E402,F401
import cutlass.cute as cute  # noqa: E402
from cutlass.cute.runtime import from_dlpack  # noqa: E402


@cute.kernel
def show_ownership_kernel(mA: cute.Tensor, mOwner: cute.Tensor, tv_layout: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    mine = cute.composition(mA, tv_layout)[(tidx, None)]
    owner = cute.composition(mOwner, tv_layout)[(tidx, None)]
    for value in cutlass.range_constexpr(cute.size(mine)):
        cute.printf("thread {} value {} = {}", tidx, value, mine[value])
    for value in cutlass.range_constexpr(cute.size(owner)):
        owner[value] = tidx


@cute.jit
def show_ownership(mA: cute.Tensor, mOwner: cute.Tensor):
    tv_layout = cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4)))
    show_ownership_kernel(mA, mOwner, tv_layout).launch(
        grid=[1, 1, 1], block=[cute.size(tv_layout, mode=[0]), 1, 1])


device = "cuda" if backend.name == "gpu" else "cpu"
a = torch.arange(24, dtype=torch.int32, device=device).reshape(24, 1)
owner = torch.full((24, 1), -1, dtype=torch.int32, device=device)
show_ownership(from_dlpack(a), from_dlpack(owner))
if device == "cuda":
    torch.cuda.synchronize()
print("ran on:", backend.name)
print("owner of elements 0..23:", owner.flatten().tolist())
assert owner.flatten().tolist() == [0, 0, 1, 1] * 3 + [2, 2, 3, 3] * 3

# %% [markdown]
# Every element has exactly one owner, and the pattern is the picture from the top of the chapter, read
# along the 1-D array: threads 0 and 1 share the first half, 2 and 3 the second.
#
# ## Exercises
#
# **Exercise 1 · a TV layout from a picture.** `owner[m][n] = (thread, value)` says who holds tile element
# `(m, n)`. Write `tv_from_picture(owner, thread_shape, value_shape)` returning the TV layout of shape
# `(thread_shape, value_shape)` that maps each `(thread, value)` to its column-major tile index `m + n * M`.
# Step 1 is the worked example; the check draws other tiles, with other strides and shapes. This one:

# %%
# Outside a kernel, layouts come from the reference algebra again (after `cutekit.use` picked the GPU,
# `cutlass.cute`'s functions work only while a @cute.jit function is being compiled).
from cutekit import cute  # noqa: E402

render.tv_layout(cute.make_layout(((2, 3), (2, 2)), stride=((6, 1), (3, 12))), (6, 4))

# %%
def tv_from_picture(owner, thread_shape, value_shape):
    ### BEGIN SOLUTION
    rows = len(owner)
    where = {owner[m][n]: m + n * rows for m in range(rows) for n in range(len(owner[0]))}
    p, r = thread_shape[0], value_shape[0]
    # values first (thread 0: value 1, value r), then threads (value 0: thread 1, thread p)
    stride = ((where[(1, 0)], where[(p, 0)]), (where[(0, 1)], where[(0, r)]))
    return cute.make_layout((thread_shape, value_shape), stride=stride)
    ### END SOLUTION


check("ch02.tv_from_picture", tv_from_picture)

# %% [markdown]
# **Exercise 2 · compute a tiler.** Write `tiler_for(thread_shape, value_shape)`: the tiler
# `make_layout_tv` returns for a row-major thread layout and a row-major value layout of these shapes
# (`make_layout_tv` is switched off while it is checked). `tiler_for((4, 32), (4, 4))` is `(16, 128)`.

# %%
def tiler_for(thread_shape, value_shape):
    ### BEGIN SOLUTION
    return (thread_shape[0] * value_shape[0], thread_shape[1] * value_shape[1])
    ### END SOLUTION


check("ch02.tiler_for", tiler_for)

# %% [markdown]
# **Exercise 3 · what does a thread own?** Write `owned_by(tv_layout, tiler, thread)`: the `(m, n)`
# coordinates of the tile elements `thread` holds, in value order, unfolding the indices yourself
# (`cute.idx2crd` is switched off). For the seed's layout, `owned_by(tv, (4, 6), 1)` is
# `[(2, 0), (3, 0), (2, 1), (3, 1), (2, 2), (3, 2)]`.

# %%
def owned_by(tv_layout, tiler, thread):
    ### BEGIN SOLUTION
    rows = tiler[0]
    indices = [tv_layout((thread, value)) for value in range(cute.size(tv_layout, mode=[1]))]
    return [(index % rows, index // rows) for index in indices]
    ### END SOLUTION


check("ch02.thread_owns", owned_by)

# %% [markdown]
# **Exercise 4 · another dtype, another tile.** Write `elementwise_tv(bits, thread_rows, value_rows)`
# returning `(tiler, tv_layout)` by hand (`make_layout_tv` is switched off) for threads `(thread_rows, 32)`
# row-major and values `(value_rows, 128 // bits)` row-major: every row of a thread's values one 128-bit
# access, for 8-, 16-, 32- or 64-bit elements. `elementwise_tv(32, 4, 4)` is
# `((16, 128), ((32,4),(4,4)):((64,4),(16,1)))`; predict the fp16 tiler before you run it.

# %%
def elementwise_tv(bits, thread_rows, value_rows):
    ### BEGIN SOLUTION
    vector = 128 // bits
    rows = thread_rows * value_rows
    tv_layout = cute.make_layout(((32, thread_rows), (vector, value_rows)),
                                 stride=((rows * vector, value_rows), (rows, 1)))
    return (rows, 32 * vector), tv_layout
    ### END SOLUTION


check("ch02.layout_tv_for_dtype", elementwise_tv)

# %% [markdown]
# ## What to remember
#
# * A TV layout maps `(thread, value)` to an index in a tile; the tile is unfolded column-major.
# * Read one off a picture values first (thread 0), then threads (value 0 of each).
# * `make_layout_tv(threads, values)` returns `(tiler, tv)`; the tiler is thread grid × value block, per mode.
# * Partitioning is `composition(tensor, tv)[(tidx, None)]`; a row of `128 // width` contiguous values is one
#   128-bit access, as the PTX shows.
#
# Next, chapter 03: dividing whole tensors into tiles (`logical_divide`, `zipped_divide`) and what
# `complement` does there.
