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
# # 04 · local_tile and local_partition, and an add kernel with tails
#
# **Why.** A CUDA kernel slices its data twice: the *block* finds its tile
# (`row0 = blockIdx.x * TILE_M`), then each *thread* finds its elements inside the tile
# (`r = row0 + threadIdx.x / THR_N` ...), and at the matrix edge a bounds check (`if (r < M && c < N)`) keeps
# the last tiles from reading past the end. CuTe names the two slices:
#
# - `local_tile(tensor, tiler, coord)`: the tile at tile coordinate `coord`, the block's share (CuTe's C++
#   calls it an *inner* partition: it keeps the inside of one tile);
# - `local_partition(tile, thread_layout, thread_index)`: the elements thread `thread_index` owns (an *outer*
#   partition: it keeps one position in every thread-sized piece of the tile);
#
# and both are a `zipped_divide` (chapter 03) plus a slice. The bounds check becomes a **predicate**: an
# identity tensor, tiled and partitioned exactly like the data, tells each thread the (m, n) of every
# element it holds, and `cute.elem_less(coordinate, shape)` says whether that element exists.

# %%
from cutekit import cute, render, widgets
from cutekit.checks import check

# %% [markdown]
# ## See it
#
# An 8x18 matrix cut into 4x6 tiles: a 2x3 grid of tiles, one per block. Here is the tile of block (1, 2):
# tile coordinates count tiles, column-major like every CuTe coordinate, so (1, 2) is the second tile down
# and the third across.

# %%
render.local_tile((8, 18), (4, 6), (1, 2))

# %% [markdown]
# Inside a 4x6 tile, 6 threads arranged 2x3 (the thread layout `(2,3):(1,2)`, column-major: thread 1 sits below
# thread 0). Thread 0's cells are outlined:

# %%
render.local_partition((4, 6), cute.make_layout((2, 3)), 0)

# %% [markdown]
# Thread 0 does **not** get a contiguous 2x2 corner: it gets rows 0 and 2 of columns 0 and 3, one cell of
# every 2x3 piece of the tile. Keep that picture; section 2 below gives the rule.
#
# The same on numbers: an 8x8 column-major counting matrix (each element holds its own offset) tiled by
# 4x4, the tile partitioned over 2x2 threads. The matrix is the layout `(8,8):(1,8)` (its offset at (m, n) is
# what the counting matrix holds), the tile an identity tensor's 4x4 corner, and thread 0's part read through
# the layout. The thread index is `cute.Int32(0)`, CuTeDSL's 32-bit integer (the paragraph after the cell
# says why).

# %%
counting = cute.make_layout((8, 8))                # offset of (m, n): m + 8 n
tile = cute.local_tile(cute.make_identity_tensor((8, 8)), (4, 4), (0, 0))
thread_0 = cute.local_partition(tile, cute.make_layout((2, 2)), cute.Int32(0))
owned = [counting(thread_0[i]) for i in range(cute.size(thread_0))]
print(counting, "| thread 0:", thread_0, "| owns elements", owned)
assert str(counting) == "(8,8):(1,8)" and owned == [0, 2, 16, 18]     # not 0 1 8 9
# the same on the layout: the tile mode of the divide, then the divide of the tile by the 2x2 threads
print(cute.zipped_divide(counting, (4, 4)), cute.zipped_divide(cute.make_layout((4, 4), stride=(1, 8)), (2, 2)))
assert str(cute.zipped_divide(counting, (4, 4))) == "((4,4),(2,2)):((1,8),(4,32))"
tile_layout = cute.get(cute.zipped_divide(counting, (4, 4)), mode=[0])
by_threads = cute.zipped_divide(tile_layout, (2, 2))
assert str(tile_layout) == "(4,4):(1,8)" and str(by_threads) == "((2,2),(2,2)):((1,8),(2,16))"
assert str(cute.get(by_threads, mode=[0])) == "(2,2):(1,8)" and str(cute.get(by_threads, mode=[1])) == "(2,2):(2,16)"

# %% [markdown]
# The tile mode of the matrix is `(4,4):(1,8)`. Dividing the tile by the 2x2 threads gives
# `((2,2),(2,2)):((1,8),(2,16))`, and thread 0 keeps the *second* mode, `(2,2):(2,16)`: elements 0, 2, 16,
# 18. The first mode, `(2,2):(1,8)`, the 2x2 corner, picks the thread; it is not what a thread keeps. Real
# CuTeDSL 4.8.1 agrees (traced on the CPU: the same divides print the same, and thread 0's part of the
# identity tile prints `tensor<(0,0) o (2,2):(2@0,2@1)>`).
#
# `cute.Int32(0)`: CuTeDSL takes the thread index as a run-time integer (in a kernel it is
# `cute.arch.thread_idx()`'s value); a plain Python `0` makes CuTeDSL's `local_partition` raise
# `AttributeError: 'int' object has no attribute 'ir_value'`. cutekit's reference accepts either; the course
# writes `cute.Int32(...)` so that the line runs in both.

# %% [markdown]
# > **Elsewhere you may read** this program with thread 0 drawn owning the top-left 2x2 block and printing
# > `Thread 0 owns elements: 0 1 8 9` ("The Art of Slicing; Partitioning Data Across Blocks and Threads").
# > Its matrix and tile layouts are right (`(8,8):(1,8)` and `(4,4):(1,8)`; its C++ prints `_8` for a static
# > 8). Its thread 0 is not: `local_partition` gives thread 0 elements 0, 2, 16, 18, as the cell above
# > asserts. Its 0, 1, 8, 9 is the *blocked* assignment, `local_tile` of the tile (section 3 runs it), not
# > what its code's `local_partition` gives.

# %% [markdown]
# ## Play
#
# Move the block sliders, then the thread slider. Whatever the block, each thread's cells repeat every 2 rows
# and every 3 columns: the thread layout's shape. Section 2 says why; come back after it to predict.

# %%
widgets.partition_explorer((8, 18), (4, 6), cute.make_layout((2, 3)))

# %% [markdown]
# ## Build it up
#
# In these cells `cute` is cutekit's reference of the layout algebra, plain Python that runs anywhere. The
# same calls work in CuTeDSL inside a `@cute.jit` function; where CuTeDSL differs, the cell says so.
#
# ### 1. local_tile is a zipped divide plus a slice of the rest
#
# `zipped_divide(matrix, (4, 6))` has two modes: the tile `(4,6)` and the *rest* `(2,3)`, which counts the
# tiles (chapter 03). The tile coordinate indexes the rest; the tile mode stays whole. An identity tensor
# shows where the tile starts: `(4,12)`, row 4 and column 12.

# %%
matrix = cute.make_identity_tensor((8, 18))
print(cute.zipped_divide(matrix, (4, 6)))
by_name = cute.local_tile(matrix, (4, 6), (1, 2))
by_hand = cute.zipped_divide(matrix, (4, 6))[((None, None), (1, 2))]
print(by_name, "|", by_hand)
assert str(cute.zipped_divide(matrix, (4, 6))) == "tensor<(0,0) o ((4,6),(2,3)):((1@0,1@1),(4@0,6@1))>"
assert str(by_name) == str(by_hand) == "tensor<(4,12) o (4,6):(1@0,1@1)>"

# %% [markdown]
# ### 2. local_partition is a zipped divide plus a slice of the tile
#
# The thread layout's *shape* `(2,3)` is the tiler: it cuts the 4x6 tile into pieces of 2x3, and there are
# 2x2 of them. The thread index becomes a coordinate in that shape (the layout maps coordinate to thread
# index; `get_flat_coord` goes back), which indexes mode 0; mode 1, one cell of every piece, stays whole. So
# thread t's first cell is its coordinate, and its cells step by the thread shape: 2 rows, 3 columns.
#
# A list comprehension runs here and at trace time in CuTeDSL alike. (A `for` statement inside a
# `@cute.jit` function or a kernel is different: CuTeDSL turns it into a loop of the compiled program (on
# the device in a kernel, on the host in a `@cute.jit` function), and the loop variable is a run-time value;
# `cutlass.range_constexpr(n)` unrolls it while tracing instead. More on that in "Run it".)

# %%
threads = cute.make_layout((2, 3))                       # column-major: thread 1 below thread 0
tile = cute.local_tile(matrix, (4, 6), (0, 0))
coordinates = [threads.get_flat_coord(cute.Int32(t)) for t in range(6)]
parts = [cute.local_partition(tile, threads, cute.Int32(t)) for t in range(6)]
by_hand = [cute.zipped_divide(tile, (2, 3))[(c, (None, None))] for c in coordinates]
for t in range(6):
    print(t, coordinates[t], parts[t], [parts[t][i] for i in range(cute.size(parts[t]))])
assert [str(p) for p in parts] == [str(p) for p in by_hand]
assert str(threads) == "(2,3):(1,2)" and str(parts[1]) == "tensor<(1,0) o (2,2):(2@0,3@1)>"
assert [parts[1][i] for i in range(4)] == [(1, 0), (3, 0), (1, 3), (3, 3)]

# %% [markdown]
# Predict, then check in the explorer above: which cells of a tile does thread 4 own? (Its coordinate in
# `(2,3):(1,2)` is (0, 2): column 2, then every 2 rows and 3 columns.)
#
# The thread layout decides which thread sits where. `(2,3):(1,2)` numbers threads down a column first;
# `(2,3):(3,1)` numbers them along a row (thread 1 right of thread 0):

# %%
row_major_threads = cute.make_layout((2, 3), stride=(3, 1))
thread_1 = cute.local_partition(tile, row_major_threads, cute.Int32(1))
print(row_major_threads, [thread_1[i] for i in range(cute.size(thread_1))])
assert str(row_major_threads) == "(2,3):(3,1)"
assert [thread_1[i] for i in range(4)] == [(0, 1), (2, 1), (0, 4), (2, 4)]
render.local_partition((4, 6), row_major_threads, 1)

# %% [markdown]
# ### 3. Which threads read neighbouring addresses
#
# The 32 threads of a warp issue a load together. When they read 32 consecutive fp32 words, the load covers
# 128 contiguous bytes, the fewest 32-byte memory sectors that data can take (a *coalesced* access); when
# each thread's word lies a row away from its neighbour's, each word is in a sector of its own.
#
# `local_partition` gives neighbouring threads neighbouring cells *of the tile*, but whether those are
# neighbouring *addresses* depends on how the tensor is laid out. Take the 8x18 matrix row-major, `(8,18):(18,1)`
# (element (m, n) at offset 18 m + n), and the offset of each thread's first cell:

# %%
row_major_matrix = cute.make_layout((8, 18), stride=(18, 1))
for name, layout in (("column-major threads", threads), ("row-major threads", row_major_threads)):
    first = [row_major_matrix(cute.local_partition(tile, layout, cute.Int32(t))[0]) for t in range(6)]
    print(f"{name} {layout}: first offsets {first}")
assert str(row_major_matrix) == "(8,18):(18,1)"
assert [row_major_matrix(cute.local_partition(tile, threads, cute.Int32(t))[0])
        for t in range(6)] == [0, 18, 1, 19, 2, 20]
assert [row_major_matrix(cute.local_partition(tile, row_major_threads, cute.Int32(t))[0])
        for t in range(6)] == [0, 1, 2, 18, 19, 20]
# the add kernel below: 128 threads as (4,32):(32,1) on 16x128 tiles of a row-major matrix
add_threads = cute.make_layout((4, 32), stride=(32, 1))
row_major_16x128 = cute.make_layout((16, 128), stride=(128, 1))
warp_0 = [row_major_16x128(cute.local_partition(cute.make_identity_tensor((16, 128)), add_threads, cute.Int32(t))[0])
          for t in range(32)]
print(add_threads, "warp 0's first offsets:", warp_0)
assert str(add_threads) == "(4,32):(32,1)" and warp_0 == list(range(32))

# %% [markdown]
# With column-major threads, threads 0 and 1 are 18 elements apart; with row-major threads, 1 apart. Number
# the threads along the tensor's contiguous mode: row-major threads for a row-major matrix, column-major
# threads for a column-major one. The add kernel below puts 128 threads as `(4,32):(32,1)` on 16x128 tiles of
# a row-major matrix: the 32 threads of warp 0 start at offsets 0, 1, ..., 31.
#
# `local_partition` is *cyclic*: a thread's cells are spread over the tile, one per piece. A *blocked*
# assignment (each thread a contiguous 2x2 piece) is `local_tile` again, with the per-thread tile
# (4/2, 6/3) = (2, 2) and the thread's coordinate picking the piece:

# %%
blocked = [cute.local_tile(tile, (2, 2), row_major_threads.get_flat_coord(cute.Int32(t))) for t in range(6)]
for t in range(6):
    print(t, blocked[t], [blocked[t][i] for i in range(4)])
assert [blocked[1][i] for i in range(4)] == [(0, 2), (1, 2), (0, 3), (1, 3)]

# %% [markdown]
# On the counting matrix of "See it", thread 0's blocked piece of the 4x4 tile (2x2 threads, so pieces of
# 2x2) is the corner, elements 0, 1, 8, 9:

# %%
corner = cute.local_tile(cute.local_tile(cute.make_identity_tensor((8, 8)), (4, 4), (0, 0)), (2, 2), (0, 0))
print([counting(corner[i]) for i in range(4)])
assert [counting(corner[i]) for i in range(4)] == [0, 1, 8, 9]

# %% [markdown]
# ### 4. A `None` in the coordinate keeps every tile of a mode
#
# `local_tile(matrix, (4, 6), (1, None))` takes row of tiles 1 and keeps all 3 of its tiles as a third mode:
# shape `(4, 6, 3)`, tile k at `[None, None, k]`. A block that walks along a strip of tiles (as a GEMM walks
# along K) starts from such a tensor.

# %%
strip = cute.local_tile(matrix, (4, 6), (1, None))
print(strip, "| tile 2 of the strip:", strip[None, None, 2])
assert str(strip) == "tensor<(4,0) o (4,6,3):(1@0,1@1,6@1)>"
assert str(strip[None, None, 2]) == str(cute.local_tile(matrix, (4, 6), (1, 2))) == "tensor<(4,12) o (4,6):(1@0,1@1)>"

# %% [markdown]
# ### 5. `proj`: one tiler for the three matrices of a GEMM
#
# A GEMM block computes a `(BLK_M, BLK_N)` tile of C from a `(BLK_M, BLK_K)` strip of A and a
# `(BLK_N, BLK_K)` strip of B, walking K. One tiler `(BLK_M, BLK_N, BLK_K)` and one coordinate
# `(m, n, None)` describe all three; `proj` says which of the three modes a matrix has (`1` keeps a mode,
# `None` drops it), and the kept tiler modes and coordinates are used in their order. The `None` in the
# coordinate keeps every K tile (section 4), so A's and B's tiles gain a third mode that counts them.

# %%
mA = cute.make_identity_tensor((64, 32))     # (M, K)
mB = cute.make_identity_tensor((48, 32))     # (N, K)
mC = cute.make_identity_tensor((64, 48))     # (M, N)
tiler, coordinate = (16, 8, 4), (1, 2, None)
gA = cute.local_tile(mA, tiler, coordinate, proj=(1, None, 1))
gB = cute.local_tile(mB, tiler, coordinate, proj=(None, 1, 1))
gC = cute.local_tile(mC, tiler, coordinate, proj=(1, 1, None))
print(gA, gB, gC, sep="\n")
assert str(gA) == "tensor<(16,0) o (16,4,8):(1@0,1@1,4@1)>"     # (BLK_M, BLK_K, k tiles)
assert str(gB) == "tensor<(16,0) o (8,4,8):(1@0,1@1,4@1)>"      # (BLK_N, BLK_K, k tiles)
assert str(gC) == "tensor<(16,16) o (16,8):(1@0,1@1)>"          # (BLK_M, BLK_N)

# %% [markdown]
# Real CuTeDSL 4.8.1 prints the same three tensors for these calls (traced on the CPU).
#
# ### 6. The predicate: which of a thread's cells exist
#
# Take a 10x20 matrix, which 4x6 tiles do not divide: `zipped_divide` rounds the rest up to `(3,4)` tiles,
# and the last tiles reach past the matrix. Block (2, 3)'s tile starts at (8, 18) and covers rows 8..11 and
# columns 18..23; only rows 8..9 and columns 18..19 exist. Partition the *identity* tensor exactly as the
# data: each thread learns the (m, n) of every cell it holds, and `cute.elem_less(coordinate, shape)` (every
# mode of the coordinate less than the shape's) says whether the cell exists.

# %%
ragged = cute.make_identity_tensor((10, 20))
edge = cute.local_tile(ragged, (4, 6), (2, 3))
thread_4 = cute.local_partition(edge, row_major_threads, cute.Int32(4))
cells = [thread_4[i] for i in range(cute.size(thread_4))]
inside = [cute.elem_less(c, (10, 20)) for c in cells]
print(cute.zipped_divide(ragged, (4, 6)), edge, cells, inside, sep="\n")
assert str(cute.zipped_divide(ragged, (4, 6))) == "tensor<(0,0) o ((4,6),(3,4)):((1@0,1@1),(4@0,6@1))>"
assert str(edge) == "tensor<(8,18) o (4,6):(1@0,1@1)>"
assert cells == [(9, 19), (11, 19), (9, 22), (11, 22)] and inside == [True, False, False, False]

# %% [markdown]
# Here cutekit computes `elem_less` at once. In CuTeDSL, `elem_less` always makes a run-time `Boolean`
# (printed `?` while tracing), to be used in an `if` of the kernel: the thread loads, adds and stores a cell
# only where it is True.
#
# ## Exercises 1 to 4
#
# These four are about the algebra, so they come now, while `cute` is still cutekit's reference algebra
# (after `cutekit.use` in "Run it", `cute` is the kernel language). Exercise 5 is at the end.
#
# ### Exercise 1 · local_tile with a projection, by hand
#
# Write `tile_of(tensor, tiler, coord, proj)`: what `cute.local_tile(tensor, tiler, coord, proj=proj)`
# returns, with `zipped_divide` and one slice (`local_tile` is switched off while it is checked). The
# tiler, the coordinate and `proj` have one entry per mode of the problem: (M, N, K) for a GEMM's A (M, K),
# B (N, K) or C (M, N), as in section 5; for the other tensors one per tensor mode, `proj` all 1s; a `None`
# in `coord` keeps every tile of its mode (section 4). The check asks for the three tiles of other GEMMs, with the `None` in other places, and for 2-D and 3-D tensors
# whose every mode the tiler keeps (`proj` all 1s). Section 5's `gA` is
# `tile_of(mA, (16, 8, 4), (1, 2, None), (1, None, 1))`, which prints `tensor<(16,0) o (16,4,8):(1@0,1@1,4@1)>`.

# %%
def tile_of(tensor, tiler, coord, proj):
    # YOUR CODE HERE
    return None


check("ch04.local_tile_by_hand", tile_of)

# %% [markdown]
# ### Exercise 2 · Predict a thread's elements
#
# Write `elements_of(tile_shape, thread_shape, thread)`: the (m, n) coordinates, in order, that
# `cute.local_partition(cute.make_identity_tensor(tile_shape), cute.make_layout(thread_shape), cute.Int32(thread))`
# holds (column-major threads, as `make_layout` makes them). Work them out from section 2's rule
# (partitions and divides are switched off).

# %%
def elements_of(tile_shape, thread_shape, thread):
    # YOUR CODE HERE
    return None


check("ch04.thread_elements", elements_of)

# %% [markdown]
# ### Exercise 3 · Choose the thread layout for a picture
#
# `picture[m][n]` is the thread that should own cell (m, n) of a tile. Return the thread layout for which
# `cute.local_partition(tile, thread_layout, t)` gives every thread t exactly its cells. Some pictures number
# the threads column-major, some row-major.

# %%
def thread_layout_for(picture):
    # YOUR CODE HERE
    return None


check("ch04.thread_layout_for_picture", thread_layout_for)

# %% [markdown]
# ### Exercise 4 · Tile a GEMM whose B is stored (K, N)
#
# A torch matrix `b` of shape (K, N) wrapped as it is gives a tensor whose modes are (K, N), not the (N, K)
# of section 5. (CuTe's own GEMMs keep B as (N, K) and put the storage order in the strides, as chapter 07
# does; a tensor made straight from a (K, N) matrix has its modes the other way round.) Write
# `gemm_tiles(mA, mB, mC, tiler, m, n)` for A (M, K), **B (K, N)** and C (M, N), one
# `tiler = (BLK_M, BLK_N, BLK_K)`: block (m, n)'s `gA` (BLK_M, BLK_K, k tiles), `gB` **(BLK_K, BLK_N, k tiles)**
# and `gC` (BLK_M, BLK_N). `proj` keeps tiler modes in their order, so it cannot turn (BLK_N, BLK_K) into
# (BLK_K, BLK_N): give B's `local_tile` a tiler and a coordinate in B's own mode order.

# %%
def gemm_tiles(mA, mB, mC, tiler, m, n):
    # YOUR CODE HERE
    return None


check("ch04.gemm_tiles", gemm_tiles)

# %% [markdown]
# ## Run it
#
# From here on the code is a CuTeDSL program. `cutekit.use("auto")` makes `import cutlass` the real CuTeDSL
# on a machine with an sm_80+ GPU, and cutekit's CPU simulator everywhere else; the cell prints which.

# %%
import cutekit

backend = cutekit.use("auto")
print(backend)

import torch

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack

# %% [markdown]
# ### A kernel that records who touched what
#
# The 8x18 matrix of "See it" on a 2-D grid of 2x3 blocks: block (bx, by) takes its 4x6 tile with
# `local_tile`, each of its 6 threads its cells with `local_partition` (threads `(2,3)`, column-major), and
# writes `10 * block + thread` into them, numbering blocks column-major (`block = bx + 2 * by`). The kernel's
# argument `tiler` is annotated `cute.Shape`: a shape (here the tuple `(4, 6)`), as `cute.Tensor` and
# `cute.Layout` annotate a tensor and a layout.
#
# The loop is `cutlass.range_constexpr`: CuTeDSL unrolls it while tracing, so `i` is a Python int and
# `mine[i]` one fixed element. A plain `for i in range(...)` in a kernel would become a loop of the compiled
# program, with `i` a run-time value.

# %%
@cute.kernel
def owner_kernel(mOwner: cute.Tensor, tiler: cute.Shape, threads: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    bx, by, _ = cute.arch.block_idx()
    tile = cute.local_tile(mOwner, tiler, (bx, by))            # this block's 4x6 tile
    mine = cute.local_partition(tile, threads, tidx)            # this thread's 2x2 cells
    for i in cutlass.range_constexpr(cute.size(mine)):
        mine[i] = (bx + 2 * by) * 10 + tidx


@cute.jit
def record_owners(mOwner: cute.Tensor):
    threads = cute.make_layout((2, 3))
    owner_kernel(mOwner, (4, 6), threads).launch(grid=[2, 3, 1], block=[cute.size(threads), 1, 1])


owners = torch.full((8, 18), -1, dtype=torch.int32, device="cuda" if backend.name == "gpu" else "cpu")
record_owners(from_dlpack(owners))        # a GPU kernel needs GPU memory; the simulator takes CPU tensors
owners = owners.cpu()
print(owners)
assert owners[0].tolist() == [0, 2, 4, 0, 2, 4, 20, 22, 24, 20, 22, 24, 40, 42, 44, 40, 42, 44]
assert owners[5].tolist() == [11, 13, 15, 11, 13, 15, 31, 33, 35, 31, 33, 35, 51, 53, 55, 51, 53, 55]
assert (owners >= 0).all()                       # every element written

# %% [markdown]
# Block 1 (`bx = 1`) holds rows 4..7 of columns 0..5, and inside every tile the threads repeat every 2 rows
# and 3 columns: section 2's pattern, on every tile.
#
# ### Elementwise add, no guard yet
#
# C = A + B for row-major fp32 matrices. A block takes a 16x128 tile; its 128 threads are the thread layout
# `(4,32):(32,1)`, row-major (section 3): a warp is one row of 32 threads, so for each `i` a warp's 32 loads are
# 32 consecutive words. Each thread owns (16/4) x (128/32) = 4x4 cells of the tile, and the grid has one block
# per tile: `ceil_div(M, 16)` by `ceil_div(N, 128)`.

# %%
@cute.kernel
def add_unguarded_kernel(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, tiler: cute.Shape,
                         threads: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    bx, by, _ = cute.arch.block_idx()
    tAgA = cute.local_partition(cute.local_tile(mA, tiler, (bx, by)), threads, tidx)
    tBgB = cute.local_partition(cute.local_tile(mB, tiler, (bx, by)), threads, tidx)
    tCgC = cute.local_partition(cute.local_tile(mC, tiler, (bx, by)), threads, tidx)
    for i in cutlass.range_constexpr(cute.size(tCgC)):
        tCgC[i] = tAgA[i] + tBgB[i]


@cute.jit
def add_unguarded(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    tiler, threads = (16, 128), cute.make_layout((4, 32), stride=(32, 1))
    add_unguarded_kernel(mA, mB, mC, tiler, threads).launch(
        grid=[cute.ceil_div(cute.size(mC, mode=[0]), 16), cute.ceil_div(cute.size(mC, mode=[1]), 128), 1],
        block=[cute.size(threads), 1, 1])


def on_backend(*tensors):
    return [t.cuda() for t in tensors] if backend.name == "gpu" else list(tensors)


a, b = torch.randn(32, 256), torch.randn(32, 256)
a, b, c = on_backend(a, b, torch.zeros_like(a))
add_unguarded(from_dlpack(a), from_dlpack(b), from_dlpack(c))
assert torch.equal(c, a + b)
print("32x256: equal to torch on", backend.name)

# %% [markdown]
# On 20 rows the second row of tiles covers rows 16..31, and rows 20..31 do not exist. The simulator stops at
# the first such access and names the thread. On a GPU nothing checks: the kernel reads and writes memory
# past the tensors.

# %%
a, b = torch.randn(20, 130), torch.randn(20, 130)
c = torch.zeros_like(a)
if backend.name == "sim":
    try:
        add_unguarded(from_dlpack(a), from_dlpack(b), from_dlpack(c))
        raise AssertionError("the unguarded add should have gone out of bounds")
    except cutekit.sim.KernelError as error:
        print(type(error).__name__, ":", str(error)[:400])
        assert "out-of-bounds" in str(error)
else:
    print("on the GPU this cell does not run the unguarded add: it would write past C")

# %% [markdown]
# ### The add with tails
#
# Section 6's predicate, in the kernel: the identity tensor of C's shape is tiled and partitioned exactly
# like C, so `tCcC[i]` is the (m, n) of `tCgC[i]`; the thread adds cell i only where
# `elem_less(tCcC[i], mC.shape)`. The `if` is a run-time branch of the kernel (its condition is a run-time
# Boolean), inside a loop that is unrolled.

# %%
@cute.kernel
def add_kernel(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, tiler: cute.Shape, threads: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    bx, by, _ = cute.arch.block_idx()
    tAgA = cute.local_partition(cute.local_tile(mA, tiler, (bx, by)), threads, tidx)
    tBgB = cute.local_partition(cute.local_tile(mB, tiler, (bx, by)), threads, tidx)
    tCgC = cute.local_partition(cute.local_tile(mC, tiler, (bx, by)), threads, tidx)
    cC = cute.make_identity_tensor(mC.shape)                                    # (m, n) of every element
    tCcC = cute.local_partition(cute.local_tile(cC, tiler, (bx, by)), threads, tidx)
    for i in cutlass.range_constexpr(cute.size(tCgC)):
        if cute.elem_less(tCcC[i], mC.shape):
            tCgC[i] = tAgA[i] + tBgB[i]


@cute.jit
def add(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    tiler, threads = (16, 128), cute.make_layout((4, 32), stride=(32, 1))
    add_kernel(mA, mB, mC, tiler, threads).launch(
        grid=[cute.ceil_div(cute.size(mC, mode=[0]), 16), cute.ceil_div(cute.size(mC, mode=[1]), 128), 1],
        block=[cute.size(threads), 1, 1])


# %% [markdown]
# Shapes that 16x128 does not divide, and one it does, compared with torch; C starts as NaN, so a cell the
# kernel forgot shows.

# %%
generator = torch.Generator().manual_seed(3)
for M, N in [(20, 130), (37, 300), (5, 7), (16, 128)]:
    a, b = torch.randn(M, N, generator=generator), torch.randn(M, N, generator=generator)
    a, b, c = on_backend(a, b, torch.full((M, N), float("nan")))
    add(from_dlpack(a), from_dlpack(b), from_dlpack(c))
    assert torch.equal(c, a + b), (M, N)
    print(f"{M}x{N}: equal to torch.add on {backend.name}")

# %% [markdown]
# Each thread here loads one 32-bit word per cell (compiled for sm_80, the kernel's PTX has 32
# `ld.global.b32` per thread, 2 per cell). On a GPU this cell measures it against `torch.add` on a large
# tensor; on the simulator, which measures nothing about speed, it prints the numbers measured for the
# course's benchmark add, a TiledCopy of 128-bit loads (chapter 05's tool) on a 2-D grid
# (`benchmarks/kernels/elementwise_add.py`), from `benchmarks/RESULTS.md` (an H100, 2026-11-23).

# %%
if backend.name == "gpu":
    a, b = torch.randn(8192, 8192, device="cuda"), torch.randn(8192, 8192, device="cuda")
    c = torch.empty_like(a)
    arguments = [from_dlpack(t) for t in (a, b, c)]
    compiled = cute.compile(add, *arguments)
    compiled(*arguments)
    torch.cuda.synchronize()
    assert torch.equal(c, a + b)
    timings = {}
    for name, run in (("this chapter's add", lambda: compiled(*arguments)),
                      ("torch.add", lambda: torch.add(a, b, out=c))):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        run()
        start.record()
        for _ in range(20):
            run()
        stop.record()
        torch.cuda.synchronize()
        seconds = start.elapsed_time(stop) / 1000 / 20
        timings[name] = 3 * a.numel() * 4 / seconds / 1e9
    print({name: f"{value:.0f} GB/s" for name, value in timings.items()})
else:
    from cutekit.results import latest_table

    print(latest_table("add"))

# %% [markdown]
# > **Elsewhere you may read** a kernel that builds this coordinate tensor `cC` for the shapes a tile does not
# > divide, slices it per block, and leaves the copy itself "(TBA.)" ("Notes on CuTeDSL"). The predicated
# > copy is the `if cute.elem_less(...)` of `add_kernel`, run above on three shapes that 16x128 does not
# > divide and asserted equal to `torch.add`. The tutorial's kernel partitions with a TiledCopy (`partition_S`), which
# > chapter 05 teaches, with 128-bit loads, on a row-sum kernel.

# %% [markdown]
# ### Exercise 5 · One block per row strip
#
# A variation of the add with tails: the grid is 1-D, one block per *strip* of 16 rows
# (`ceil_div(M, 16)` blocks), and each block walks along its strip, tile by tile. Complete `strip_kernel`:
# take the block's strip with a `None` in the tile coordinate (section 4: a third mode counts the strip's
# tiles), loop over those tiles with a run-time loop (`for k in cutlass.range(n)`: the number of tiles is
# known only when the kernel runs), and in each tile do what `add_kernel` does, predicate included. The host
# function below it launches it. The check runs it on the simulator, on a shape the tile divides and two it
# does not, and on your GPU when you have one (timed against `torch.add`); with CuTeDSL installed, it compiles
# it for sm_80.

# %%
@cute.kernel
def strip_kernel(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, tiler: cute.Shape, threads: cute.Layout):
    # YOUR CODE HERE
    return None


# %%
@cute.jit
def add_strips(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    tiler, threads = (16, 128), cute.make_layout((4, 32), stride=(32, 1))
    strip_kernel(mA, mB, mC, tiler, threads).launch(
        grid=[cute.ceil_div(cute.size(mC, mode=[0]), 16), 1, 1], block=[cute.size(threads), 1, 1])


check("ch04.add_with_tails", add_strips)

# %% [markdown]
# ## What to remember
#
# - `local_tile(t, tiler, coord)` = `zipped_divide(t, tiler)[(None,...), coord]`: which tile (the block's); a
#   `None` in `coord` keeps every tile of that mode.
# - `local_partition(tile, thr, i)` = `zipped_divide(tile, shape(thr))[coord_of(i), (None,...)]`: cyclic, one
#   cell of every thread-sized piece; blocked is `local_tile(tile, tile/threads, coord_of(i))`. In CuTeDSL
#   `i` is a run-time integer (`tidx`, or `cute.Int32(i)`).
# - Number threads along the tensor's contiguous mode, so that a warp reads neighbouring addresses.
# - Tails: an identity tensor tiled and partitioned like the data, `elem_less(coord, shape)`, an `if`.
#
# Next: **05 · TiledCopy**, the copy described once for the whole block (threads, values, vector width), and a
# reduction written four ways, from CUDA style to TiledCopy.
