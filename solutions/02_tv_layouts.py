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
# write the same element, or the addresses a warp loads stop being contiguous.
#
# CuTe states the assignment once, as a layout. A **thread-value layout** (TV layout) is an ordinary layout
# with two modes: mode 0 is the **thread** (which thread of the block), mode 1 the **value** (which of that
# thread's elements). Its output is a 1-D index into a **tile** of the data, an `(M, N)` block unfolded
# column-major as in chapter 01. So `tv((t, v))` answers "where is thread t's v-th element?", and thread t
# owns `tv((t, 0))`, `tv((t, 1))`, ... up to `v = size(tv, mode=[1]) - 1`. To hand a thread its elements, a
# kernel composes the *data* with the TV layout and slices that tensor at `(t, None)` (step 2); the layout
# itself is not sliced that way (`tv[(t, None)]` raises `TypeError`, in CuTeDSL and in cutekit alike).

# %%
from cutekit import cute, render, widgets
from cutekit.checks import check

# %% [markdown]
# ## See it
#
# Here is the assignment drawn in the blog post "Thread Value Layouts in CuTe" (Simon's blog): 24 elements,
# 4 threads, 6 values each. Drawn as a 4 × 6 tile (column-major: element `i` at row `i % 4`, column
# `i // 4`), each cell shows `T<thread> V<value>`.

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
# thread 3 own? (Thread mode `(2,2):(2,12)`: thread 3 is coordinate (1,1), offset 2 + 12 = 14, and its values
# add the value mode's offsets 0, 1, 4, 5, 8, 9.) Then move the slider to 3 and look.

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
# **Together.** Threads as mode 0, values as mode 1: `((2,2),(2,3)):((2,12),(1,4))`. Calling it with
# `(t, v)` for every `v` lists what thread `t` owns.

# %%
values = cute.make_layout((2, 3), stride=(1, 4))
threads = cute.make_layout((2, 2), stride=(2, 12))
print(values, threads)
assert str(values) == "(2,3):(1,4)" and str(threads) == "(2,2):(2,12)"
assert [values(v) for v in range(6)] == [0, 1, 4, 5, 8, 9]
assert [threads(t) for t in range(4)] == [0, 2, 12, 14]
together = cute.make_layout((threads.shape, values.shape), stride=(threads.stride, values.stride))
assert str(together) == str(tv)

owned = [[tv((thread, value)) for value in range(cute.size(tv, mode=[1]))] for thread in range(4)]
for thread in range(4):
    print("thread", thread, "owns tile indices", owned[thread])
assert owned == [[0, 1, 4, 5, 8, 9], [2, 3, 6, 7, 10, 11], [12, 13, 16, 17, 20, 21], [14, 15, 18, 19, 22, 23]]

# %% [markdown]
# These are the numbers the blog's kernel printed on its GPU: its data was the array `0..23`, so every
# element's value is its own index (we run that kernel at the end of the chapter).
#
# ### 2. Partition: compose the data with the TV layout, then slice a thread
#
# The TV layout maps `(thread, value)` to a tile index; a tensor over the tile maps a tile index to an
# element. Compose them (chapter 01: `composition(A, B)(c) = A(B(c))`) and you get a tensor indexed by
# `(thread, value)`; slice it with `(t, None)` (`None` keeps a mode, like `:` in NumPy) and you have thread
# t's share. That slice is what CuTe calls **partitioning**.
#
# To see *where* in the 2-D tile a thread's values are, compose an **identity tensor** instead of data: its
# elements are their own coordinates `(m, n)`. It exists in CuTeDSL and in cutekit alike
# (`cute.make_identity_tensor`), so this cell runs the same in both.

# %%
coordinates = cute.composition(cute.make_identity_tensor((4, 6)), tv)
share = coordinates[(1, None)]
print(share)
assert str(share) == "tensor<(2,0) o ((2,3)):((1@0,1@1))>"
print([share[value] for value in range(cute.size(share))])
assert [share[value] for value in range(cute.size(share))] == [(2, 0), (3, 0), (2, 1), (3, 1), (2, 2), (3, 2)]
assert str(coordinates[(3, None)]) == "tensor<(2,3) o ((2,3)):((1@0,1@1))>"

# %% [markdown]
# Read the printed slice: `(2,0)` is where it starts (thread 1's first element) and `((2,3)):((1@0,1@1))` is
# its layout, the value mode alone (`1@0` is one step along coordinate 0, a row; the next chapter says more).
# Thread 3's slice has the same layout and starts at `(2,3)`: slicing moves the thread's offset into the
# tensor's *start* and keeps the value mode. For a data tensor the start is its pointer: the blog's printout
# shows every thread's share with the value layout `(2,3):(1,4)` and thread 1's pointer 8 bytes (two `int32`)
# after thread 0's.
#
# Two habits from this cell carry into kernels. List a tensor's elements with an index,
# `[t[i] for i in range(cute.size(t))]`: a CuTeDSL tensor has no Python iteration (`list(t)` never ends
# there). And compose, then slice: the layout alone has no `[(t, None)]`.
#
# ### 3. An MMA-style TV layout: 8 logical threads, 8 values, an 8 × 8 tile
#
# Tensor-core instructions fix which thread holds which accumulator, and CuTe describes each with a TV layout.
# CUTLASS's documentation of MMA atoms takes Volta's as its example, `((2,2,2),(2,2,2)):((1,16,4),(8,2,32))`:
# the accumulators of an 8 × 8 tile, held by 8 threads. Those 8 are **logical** thread ids 0..7, not lanes
# 0..7 of a warp: Volta's MMA is issued by a **quad pair**, 8 lanes of a warp (lanes 0-3 and 16-19 for the
# first one), and CUTLASS maps a logical id to its lane with a separate layout, `(4,2):(1,16)` (called
# `SM70_QuadPair` in CUTLASS's C++).

# %%
quad_pair = cute.make_layout((4, 2), stride=(1, 16))
print(quad_pair, [quad_pair(t) for t in range(8)])
assert str(quad_pair) == "(4,2):(1,16)"
assert [quad_pair(t) for t in range(8)] == [0, 1, 2, 3, 16, 17, 18, 19]   # logical thread -> lane of the warp

# %% [markdown]
# Read the TV layout as before, logical thread by logical thread at value 0, then value by value in thread 0:

# %%
mma_tv = cute.make_layout(((2, 2, 2), (2, 2, 2)), stride=((1, 16, 4), (8, 2, 32)))
first_values = [mma_tv((t, 0)) for t in range(8)]
thread_zero = [mma_tv((0, v)) for v in range(8)]
print(first_values, thread_zero)
assert str(mma_tv) == "((2,2,2),(2,2,2)):((1,16,4),(8,2,32))"
assert first_values == [0, 1, 16, 17, 4, 5, 20, 21]
assert thread_zero == [0, 8, 2, 10, 32, 40, 34, 42]
assert sorted(mma_tv(i) for i in range(64)) == list(range(64))   # every element owned exactly once
render.tv_layout(mma_tv, (8, 8))

# %% [markdown]
# So `(T=2, V=0)` is index 16, coordinate `(0, 2)` of the column-major 8 × 8 tile, and `(T=0, V=4)` is 32,
# `(0, 4)`. The 8 threads drawn alone, without their values, stand in a 4 × 2 grid, `T0 T2 / T1 T3 / T4 T6 /
# T5 T7`, and `(2,2,2):(1,4,2)` describes it: it sends threads 0..7 to grid positions 0, 1, 4, 5, 2, 3, 6, 7
# (column-major in 4 rows). Note its direction, **thread → position**; keep it in mind for step 4, where the
# thread layout goes the other way.

# %%
grid = cute.make_layout((2, 2, 2), stride=(1, 4, 2))
assert str(grid) == "(2,2,2):(1,4,2)"
assert [grid(t) for t in range(8)] == [0, 1, 4, 5, 2, 3, 6, 7]
assert [cute.idx2crd(grid(t), (4, 2)) for t in (2, 4)] == [(0, 1), (2, 0)]

# %% [markdown]
# ### 4. `make_layout_tv`: build the TV layout from a thread grid and a value block
#
# Reading strides off a picture is fine for 4 threads; for 128 you describe the arrangement instead, with
# two layouts, and `cute.make_layout_tv(thread_layout, value_layout)` returns the **tiler** (the `(M, N)`
# extent of the tile all threads cover together) and the TV layout over that tile.
#
# Mind the direction, because it is the opposite of the TV layout's. The **thread layout** takes a *place*
# in the grid of threads, `(row, column)`, and gives the *thread id* standing there. The **value layout**
# takes a place in one thread's block of values and gives the *value id* there. `make_layout_tv` inverts
# them: its TV layout takes `(thread id, value id)` and gives the place in the tile.
#
# The elementwise-add example in CuTeDSL uses 128 threads as 4 rows of 32, row-major (threads 0..31 along the
# first row), and gives each thread 4 rows of `128 // width` elements, row-major: for fp32, a 4 × 4 block.

# %%
thread_layout = cute.make_ordered_layout((4, 32), order=(1, 0))
value_layout = cute.make_ordered_layout((4, 4), order=(1, 0))
print(thread_layout, value_layout)
assert str(thread_layout) == "(4,32):(32,1)" and str(value_layout) == "(4,4):(4,1)"
print("thread at row 1, column 0:", thread_layout((1, 0)), "  thread at row 0, column 1:", thread_layout((0, 1)))
assert thread_layout((1, 0)) == 32 and thread_layout((0, 1)) == 1      # place -> thread id
assert value_layout((1, 0)) == 4 and value_layout((0, 1)) == 1         # place -> value id

tiler, add_tv = cute.make_layout_tv(thread_layout, value_layout)
print(tiler, add_tv)
assert tiler == (16, 128)
assert str(add_tv) == "((32,4),(4,4)):((64,4),(16,1))"
first_place = {t: cute.idx2crd(add_tv((t, 0)), tiler) for t in (0, 1, 32)}
print(first_place)
assert first_place == {0: (0, 0), 1: (0, 4), 32: (4, 0)}   # thread 1 right of thread 0, thread 32 below

# %% [markdown]
# Thread 1 lands to the **right** of thread 0 and thread 32 below it, as the grid says. The inverse of the
# thread layout, `right_inverse` (chapter 01, step 9), is the thread → place direction: `(32,4):(4,1)` sends
# thread 1 to grid index 4, which in a 4-row grid is `(0, 1)`. Read the thread layout itself that way
# ("thread 1 goes to place `thread_layout(1)`") and you have the arrangement where thread ids run *down* the
# columns: that is a different thread layout, `(4,32):(1,4)`, and `make_layout_tv` gives it a different TV
# layout, with thread 1 below thread 0. (Step 3's 4 × 2 grid is its own inverse, so there the direction cannot show.)

# %%
print(cute.right_inverse(thread_layout), cute.right_inverse(thread_layout)(1))
assert str(cute.right_inverse(thread_layout)) == "(32,4):(4,1)"
assert cute.idx2crd(cute.right_inverse(thread_layout)(1), (4, 32)) == (0, 1)
assert str(cute.right_inverse(grid)) == str(grid)

ids_down_columns = cute.make_layout((4, 32), stride=(1, 4))
_, down_first_tv = cute.make_layout_tv(ids_down_columns, value_layout)
print(ids_down_columns, down_first_tv)
assert str(ids_down_columns) == "(4,32):(1,4)"
assert str(down_first_tv) == "((4,32),(4,4)):((4,64),(16,1))"
assert cute.idx2crd(down_first_tv((1, 0)), tiler) == (4, 0)   # now thread 1 sits below thread 0

# %% [markdown]
# Read the row-major result with chapter 01's rules. The tile is 16 × 128, unfolded column-major, so index
# `i` is `(i % 16, i // 16)`. Thread mode `(32,4):(64,4)`: the first 32 threads step by 64 = 4 columns, the
# next factor steps by 4 = 4 rows. Value mode `(4,4):(16,1)`: 4 values step by 16 = one column, then 4 by
# 1 = one row. So thread `t` owns rows `4 * (t // 32) + 0..3` and columns `4 * (t % 32) + 0..3`.
# (`cute.get(layout, mode=[i])`, below, is mode `i` of a layout, itself a layout.)

# %%
assert str(cute.get(add_tv, mode=[0])) == "(32,4):(64,4)" and str(cute.get(add_tv, mode=[1])) == "(4,4):(16,1)"
render.tv_layout(add_tv, tiler, highlight=33)

# %%
thread_33 = cute.composition(cute.make_identity_tensor(tiler), add_tv)[(33, None)]
thread_33_cells = [thread_33[value] for value in range(cute.size(thread_33))]
print(thread_33_cells[:5], "...")
assert thread_33_cells[0] == (4, 4) and thread_33_cells[1] == (4, 5) and thread_33_cells[4] == (5, 4)
assert sorted(thread_33_cells) == [(m, n) for m in range(4, 8) for n in range(4, 8)]

# %% [markdown]
# The tiler is the tile's extent in the tensor: rows = thread rows × value rows, columns = threads per row ×
# values per row. For fp16 a 128-bit row is 8 values, the value block is `(4, 8)` and the tile `(16, 256)`.
# With 2 rows of threads instead of 4, the tile halves in height: `make_layout_tv` takes any grid of threads.

# %%
fp16_values = cute.make_ordered_layout((4, 8), order=(1, 0))
tiler_fp16, tv_fp16 = cute.make_layout_tv(thread_layout, fp16_values)
print(tiler_fp16, tv_fp16)
assert tiler_fp16 == (16, 256)
assert str(tv_fp16) == "((32,4),(8,4)):((128,4),(16,1))"
tiler_two_rows, tv_two_rows = cute.make_layout_tv(cute.make_ordered_layout((2, 32), order=(1, 0)), fp16_values)
print(tiler_two_rows, tv_two_rows)
assert tiler_two_rows == (8, 256) and str(tv_two_rows) == "((32,2),(8,4)):((64,4),(8,1))"

# %% [markdown]
# With one value per thread the tile is the thread grid itself: a row of 32 threads covers `(32,)`, a
# row-major 4 × 8 grid `(4, 8)`, and `((2,4),8):((32,8),1)`, a 64-thread grid whose rows come in two
# interleaved groups, `(8, 8)`.

# %%
one_value = cute.make_layout((1,), stride=(1,))
one_value_tilers = [cute.make_layout_tv(cute.make_layout(shape, stride=stride), one_value)[0]
                    for shape, stride in [((32,), (1,)), ((4, 8), (8, 1)), (((2, 4), 8), ((32, 8), 1))]]
print(one_value_tilers)
assert one_value_tilers == [(32,), (4, 8), (8, 8)]
assert str(cute.make_layout(((2, 4), 8), stride=((32, 8), 1))) == "((2,4),8):((32,8),1)"

# %% [markdown]
# Elsewhere you may read that the tiler is "the tiling size `(num_vals, num_thrs)`",
# "`(4 * 128 // dtype.width, 128)` in this case", and that "Ampere GPU uses a `128 = 4 x 32` thread block
# arrangement" ("Notes on CuTeDSL", 2025-07-14). The tiler is thread grid × value block, as above: that
# formula agrees for fp32 only (for fp16 it gives `(32, 128)`, where `make_layout_tv` gives `(16, 256)`), and
# 4 × 32 is the example's choice, not Ampere's. (Its value layout, built with `make_layout(..., order=(1, 0))`,
# raises a `TypeError`: chapter 01, step 3.) The tilers "CuTe DSL Intro" prints for one value per thread are
# the ones above.

# %%
formula = (4 * 128 // 16, 128)
print("the formula for fp16:", formula, " make_layout_tv:", tiler_fp16)
assert formula == (32, 128) != tiler_fp16

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
# Mode 0, `(16,128):(512,1)`, is one tile as memory offsets from the tile's first element: it keeps the
# tensor's row stride, 512. Every tile has this same layout, only its start differs (tile 5 starts at
# `tiles(((0, 0), 5))`). Compose that tile layout with the TV layout and you have, for every
# `(thread, value)`, the memory offset from the tile's start:

# %%
tile_layout = cute.get(tiles, mode=[0])
per_thread = cute.composition(tile_layout, add_tv)
block_start = tiles(((0, 0), 5))
row_stride = 512
print(tile_layout, per_thread, block_start)
assert str(tile_layout) == "(16,128):(512,1)"
assert str(per_thread) == "((32,4),(4,4)):((4,2048),(1,512))"
assert str(cute.get(per_thread, mode=[1])) == "(4,4):(1,512)"
assert str(cute.get(per_thread, mode=[0])) == "(32,4):(4,2048)"
thread_33_offsets = [block_start + per_thread((33, value)) for value in range(16)]
print(thread_33_offsets[:8])
assert per_thread((33, 0)) == (33 % 32) * 4 + (33 // 32) * (4 * row_stride)
assert thread_33_offsets[:8] == [block_start + 4 * row_stride + 4 + k for k in range(4)] + \
    [block_start + 5 * row_stride + 4 + k for k in range(4)]

# %% [markdown]
# Thread 33's values, as a memory layout, are the value mode `(4,4):(1,512)`: values 0..3 are 4
# **contiguous** elements (the value mode's first stride, 16 in the column-major tile, is one column, which
# is 1 in a row-major tensor), and values 4, 8, 12 start the next three rows, 512 apart. Each row of a
# thread's block is 4 contiguous fp32 = 16 bytes, starting at a multiple of 4 elements: the shape of one
# 128-bit access.
#
# The thread mode, `(32,4):(4,2048)`, is each thread's offset from the tile's start,
# `(tid % 32) * 4 + (tid / 32) * (4 * 512)`: `tid % 32` picks the group of 4 **columns** (contiguous, hence
# `* 4` elements) and `tid / 32` the group of 4 **rows** (hence four row strides of 512). Compiled for a tensor
# whose shape is a run-time value, the row stride 512 is a run-time value too, printed `?`
# (chapter 03's section 8).
#
# Elsewhere you may read this offset as "(tid mod 32) * 4 + (tid / 32) * (? * 4)", and that "`tid mod 32` and
# `tid / 32` gives the row and column indices of the thread within the thread block" ("Notes on CuTeDSL",
# 2025-07-14). The formula is right, its `?` the row stride; the reading is reversed: the strides `(4,2048)`
# say that `tid mod 32` picks the columns and `tid / 32` the rows.
#
# ### 6. What the compiler makes of it: four 128-bit loads per operand per thread
#
# Does a value row of `128 // width` elements mean four 128-bit loads per thread, or 4 registers, each holding
# several values? The compiler answers. Below is the elementwise add with exactly this partition (compose, slice
# `(tidx, None)`, load, add, store), written to a file because `compile_to_ptx` compiles it in a separate
# process with real CuTeDSL, for an Ampere GPU (sm_80), on the CPU, and counts PTX instructions.
#
# New in it: `cute.Tensor` annotates a tensor argument (a pointer and a layout); `thread_a.load()` reads the
# thread's slice into registers as one value (a `TensorSSA`), `+` adds two such values element by element,
# and `thread_c.store(value)` writes one back. `mA.element_type` is the tensor's element type (`Float32`)
# and its `.width` is its size in bits (32).

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
    if not ptx.available:          # CuTeDSL is not installed here (macOS): nothing to compile
        print(ptx.error)
        break
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
# of elements in one 128-bit access, and the `4` rows of the value layout are four independent accesses per
# thread. An fp32 thread loads 16 values per operand into 16 32-bit registers, an fp16 thread 32 values into
# the same 16.
#
# Elsewhere you may read the guess that "the number of registers is always 4 per thread, but the number of
# elements per register is `128 // dtype.width`, i.e. each register is sliced" ("Notes on CuTeDSL",
# 2025-07-14, where it is given as Copilot's answer). The PTX above says otherwise: one 128-bit access per row
# of values, four rows, each access four 32-bit registers.
#
# ## Run it
#
# The blog's kernel: each thread of one block composes the tensor with the TV layout, takes its slice and
# records what it owns. Written once against CuTeDSL's API, it runs on your GPU when there is one (with
# CuTeDSL) and on cutekit's CPU simulator otherwise; `cutekit.use("auto")` picks, before `cutlass` is imported.
# `from_dlpack(t)` (from `cutlass.cute.runtime`) makes a torch tensor a `cute.Tensor`: the same memory, with
# torch's shape and strides as its layout. `cutlass.range_constexpr(n)` is a loop that Python runs while
# CuTeDSL traces, so the compiled kernel holds `n` copies of its body (`n` must be known then).

# %%
import cutekit

backend = cutekit.use("auto")
print(backend)

import torch  # noqa: E402
import cutlass  # noqa: E402,F401
import cutlass.cute as cute  # noqa: E402
from cutlass.cute.runtime import from_dlpack  # noqa: E402

tensor_layouts = []   # what the host function saw, recorded while it runs (CuTeDSL: while it is traced)


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
    tensor_layouts.append(str(mA.layout))
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
print("the tensor's layout:", tensor_layouts[-1])
print("owner of elements 0..23:", owner.flatten().tolist())
assert tensor_layouts[-1] == "(24,1):(1,1)"
assert owner.flatten().tolist() == [0, 0, 1, 1] * 3 + [2, 2, 3, 3] * 3

# %% [markdown]
# Every element has exactly one owner, and the pattern is the picture from the top of the chapter, read
# along the 1-D array: threads 0 and 1 share the first half, 2 and 3 the second.
#
# Elsewhere you may read this tensor's layout given as "mA Layout: (24, 1) : (1, 0)" (a comment in the code of
# "Thread Value Layouts in CuTe"; its text says (24, 1) : (1, 1)). `from_dlpack` of a contiguous torch tensor
# of shape (24, 1) keeps torch's strides (1, 1), as printed above. `(24,1):(1,0)` is what
# `cute.make_layout((24, 1))` builds, since CuTe gives a size-1 mode stride 0 when it chooses the strides
# itself. A size-1 mode has only coordinate 0, so its stride never matters: both read the same data.

# %%
from cutekit import cute  # noqa: E402  (the reference algebra again, outside any kernel)

assert str(cute.make_layout((24, 1))) == "(24,1):(1,0)"

# %% [markdown]
# ## Exercises
#
# From here on `cute` is the reference algebra again (after `cutekit.use` picked the GPU, `cutlass.cute`'s
# functions work only while a @cute.jit function is being compiled).
#
# **Exercise 1 · a TV layout from a picture.** `owner[m][n] = (thread, value)` says who holds tile element
# `(m, n)`. Write `tv_from_picture(owner, thread_shape, value_shape)` returning the TV layout of shape
# `(thread_shape, value_shape)` that maps each `(thread, value)` to its column-major tile index `m + n * M`.
# Step 1 is the worked example; the check draws other tiles, with other strides and shapes. This one:

# %%
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
# **Exercise 2 · compute a tiler for any thread and value layouts.** Step 4 built its tilers from row-major
# grids. A thread layout may number its threads down the columns, `(4,32):(1,4)` in step 4, or split a mode
# in two, as `((2,4),8):((32,8),1)` does with its rows, and a value layout likewise. Write
# `tiler_for(thread_layout, value_layout)`: the tiler `make_layout_tv` returns for two such two-mode layouts,
# row-major, column-major or with a nested mode (`make_layout_tv` is switched off while it is checked;
# `cute.size(layout, mode=[i])` is the number of places in mode `i`). This cell prints the example: for the
# 64-thread grid above and the column-major value block `(2,4):(1,2)`, `tiler_for(thread_layout,
# value_layout)` gives `(16, 32)`.

# %%
interleaved_threads = cute.make_layout(((2, 4), 8), stride=((32, 8), 1))
column_major_values = cute.make_layout((2, 4), stride=(1, 2))
example_tiler, example_tv = cute.make_layout_tv(interleaved_threads, column_major_values)
print(interleaved_threads, column_major_values, example_tiler, example_tv)
assert str(interleaved_threads) == "((2,4),8):((32,8),1)" and str(column_major_values) == "(2,4):(1,2)"
assert example_tiler == (16, 32) and str(example_tv) == "((8,4,2),(2,4)):((64,4,2),(1,16))"

# %%
def tiler_for(thread_layout, value_layout):
    ### BEGIN SOLUTION
    return tuple(cute.size(thread_layout, mode=[i]) * cute.size(value_layout, mode=[i]) for i in range(2))
    ### END SOLUTION


check("ch02.tiler_for", tiler_for)

# %% [markdown]
# **Exercise 3 · what does a thread own?** Write `owned_by(tv_layout, tiler, thread)`: the `(m, n)`
# coordinates of the tile elements `thread` holds, in value order, unfolding the indices yourself
# (`cute.idx2crd` is switched off). For the blog's layout, `owned_by(tv, (4, 6), 2)` is
# `[(0, 3), (1, 3), (0, 4), (1, 4), (0, 5), (1, 5)]`.

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
# access, for 8-, 16-, 32- or 64-bit elements. `elementwise_tv(16, 2, 4)` must give what step 4 printed for
# 2 rows of threads and fp16 values: the tiler `(8, 256)` and `((32,2),(8,4)):((64,4),(8,1))`. Remember which
# way the thread layout points: thread `t` stands at row `t // 32`, column `t % 32` of the thread grid.

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
# * `make_layout_tv(threads, values)`: the thread layout maps a place in the thread grid to a thread id; the
#   TV layout it returns goes back, `(thread, value)` to the place. The tiler is thread grid × value block.
# * Partitioning is `composition(tensor, tv)[(tidx, None)]`, a slice of a *tensor*: the thread's offset moves
#   into the tensor's start, the value mode stays.
# * A row of `128 // width` contiguous values is one 128-bit access, as the PTX shows.
#
# Next, chapter 03: dividing whole tensors into tiles (`logical_divide`, `zipped_divide`) and what
# `complement` does there.
