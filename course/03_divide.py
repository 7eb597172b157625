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
# # 03 · Dividing a layout into tiles
#
# **Why.** Every CUDA kernel that works on a big matrix first decides which block handles which tile:
#
# ```cuda
# int row = blockIdx.y * TILE_M + threadIdx.y;   // which tile, then where inside it
# int col = blockIdx.x * TILE_N + threadIdx.x;
# if (row < M && col < N) C[row * ldc + col] = A[row * lda + col] + B[row * ldb + col];
# ```
#
# The tile size, the matrix's strides and the block order are all folded into those two lines, and each
# kernel folds them again. CuTe does this once, as an operation on layouts: **dividing** a layout by a
# *tiler* (the shape of one tile) gives a new layout whose first mode walks *inside* a tile and whose second
# mode walks *from tile to tile*. A block then takes its tile by fixing the second mode to its block index;
# no `blockIdx * TILE` arithmetic is written by hand.
#
# Words used below: a **mode** is one entry of a layout's shape (a layout `(9,32):(32,1)` has two modes);
# a **tiler** is what we divide by: a tuple of sizes such as `(16,128)`, or a tuple of layouts when a tile
# is not a plain block; the **rest** is the part of the layout left over after taking one tile: it counts
# the tiles. Coordinates are column-major throughout (the first mode fastest), as in all of CuTe.

# %%
from cutekit import cute, render, widgets
from cutekit.checks import check

assert str(cute.make_layout((9, 32), stride=(32, 1))) == "(9,32):(32,1)"

# %% [markdown]
# ## See it
#
# The CuTe documentation's example: a 9x32 layout
# `(9,(4,8)):(59,(13,1))` divided by the tiler `<3:3, (2,4):(1,8)>`. The tiler's first layout, `3:3`,
# picks rows 0, 3, 6 (three rows, three apart); its second, `(2,4):(1,8)`, picks columns
# 0, 1, 8, 9, 16, 17, 24, 25 (pairs of columns, eight apart). One tile is those 3 x 8 = 24 cells; the picture
# colours every tile (cells of one colour form one tile).

# %%
layout = cute.make_layout((9, (4, 8)), stride=(59, (13, 1)))
tiler = (cute.make_layout(3, stride=3), cute.make_layout((2, 4), stride=(1, 8)))
render.divide(layout, tiler)

# %%
print(layout, tiler[0], tiler[1])
assert str(layout) == "(9,(4,8)):(59,(13,1))" and str(tiler[0]) == "3:3" and str(tiler[1]) == "(2,4):(1,8)"
rows_of_one_tile = [tiler[0](i) for i in range(cute.size(tiler[0]))]
columns_of_one_tile = [tiler[1](i) for i in range(cute.size(tiler[1]))]
print("rows:", rows_of_one_tile, " columns:", columns_of_one_tile)
assert rows_of_one_tile == [0, 3, 6]
assert columns_of_one_tile == [0, 1, 8, 9, 16, 17, 24, 25]

divided = cute.logical_divide(layout, tiler)
print(divided)
assert str(divided) == "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))"
assert [str(cute.get(divided, mode=[i, j])) for i in range(2) for j in range(2)] == \
    ["3:177", "3:59", "(2,4):(13,2)", "(2,2):(26,1)"]                   # (mode, tile or rest)

# %% [markdown]
# Read the result mode by mode. Mode 0 is `(3,3):(177,59)`: the first `3:177` walks the three rows *of one
# tile* (row 0, 3, 6 of the original, each 3 x 59 = 177 apart in memory), the second `3:59` walks *from tile to
# tile* (start at row 0, 1 or 2). Mode 1 is `((2,4),(2,2))`: the tile part `(2,4):(13,2)` and the rest part
# `(2,2):(26,1)`. A logical divide keeps the tile and the rest of each mode side by side, in that mode.
#
# ## Play
#
# The explorer divides an 8x12 row-major matrix by the tiler `(2, 4)`, tiles of 2 rows and 4 columns, and
# its slider picks one tile to light up. Predict first: how many tiles fit down (8 rows) and across (12
# columns), so how many in all? The cell at row 3, column 5: in which tile row and which tile column is it
# (counting from 0)? Then move the slider until that cell lights up (section 6 explains the number the
# slider shows for it).

# %%
widgets.divide_explorer(cute.make_layout((8, 12), stride=(12, 1)), (2, 4))

# %% [markdown]
# ## Build it up
#
# ### 1. A divide is a composition with a complement
#
# **The rule.** For a layout A and a tiler B that is one layout,
#
# `logical_divide(A, B) = composition(A, (B, complement(B, size(A))))`
#
# where `(B, complement(...))` is the layout with B as mode 0 and the complement as mode 1: read A through B
# (one tile), then through the complement (which tile). Both halves are chapter 01's: the **complement** of
# B up to `size(A)` says where *copies* of B start so that together they cover A's indices once (step 8), and
# the composition reads those indices in A (step 7). Take a one-dimensional `A = 24:1` and `B = 4:2`: B
# picks offsets 0, 2, 4, 6 of A.

# %%
A = cute.make_layout(24, stride=1)
B = cute.make_layout(4, stride=2)
rest = cute.complement(B, cute.size(A))
print("complement(B, 24) =", rest, " copies start at", [rest(i) for i in range(cute.size(rest))])
assert str(A) == "24:1" and str(B) == "4:2" and str(rest) == "(2,3):(1,8)"
assert [rest(i) for i in range(cute.size(rest))] == [0, 1, 8, 9, 16, 17]
assert str(cute.get(rest, mode=[0])) == "2:1" and str(cute.get(rest, mode=[1])) == "3:8"

tile_then_rest = cute.make_layout((B.shape, rest.shape), stride=(B.stride, rest.stride))
by_hand = cute.composition(A, tile_then_rest)
print("(B, complement)   =", tile_then_rest)
print("composition       =", by_hand)
print("logical_divide    =", cute.logical_divide(A, B))
assert str(by_hand) == str(cute.logical_divide(A, B)) == "(4,(2,3)):(2,(1,8))"

# %% [markdown]
# The complement `(2,3):(1,8)` starts six copies of B, at 0, 1, 8, 9, 16, 17. Its first mode, `2:1`, puts a
# second copy one step after the first, on the odd offsets B skips (0, 2, 4, 6 and 1, 3, 5, 7: together 0..7);
# its second mode, `3:8`, repeats that pair every 8 offsets. Every offset 0..23 appears once in the result:

# %%
offsets = sorted(by_hand(i) for i in range(cute.size(by_hand)))
assert offsets == list(range(24))
first_tile = [by_hand((i, 0)) for i in range(4)]
second_tile = [by_hand((i, 1)) for i in range(4)]
third_tile = [by_hand((i, 2)) for i in range(4)]
print("tile 0:", first_tile, " tile 1:", second_tile, " tile 2:", third_tile)
assert first_tile == [0, 2, 4, 6] and second_tile == [1, 3, 5, 7] and third_tile == [8, 10, 12, 14]

# %% [markdown]
# **When the tile does not divide A.** The complement rounds up (chapter 01, step 8): the rest counts whole
# tiles, and the last one reaches past A. Dividing `10:1` by `4:1`, the complement is
# `ceil(10 / 4) = 3` tiles, `3:4`, and tile 2 holds A's indices 8 to 11, though A ends at 9. Section 7 meets
# this on a matrix, where a predicate keeps a kernel inside.

# %%
short = cute.make_layout(10, stride=1)
print(cute.complement(cute.make_layout(4, stride=1), 10), cute.logical_divide(short, cute.make_layout(4, stride=1)))
assert str(short) == "10:1" and str(cute.complement(cute.make_layout(4, stride=1), 10)) == "3:4"
assert str(cute.logical_divide(short, cute.make_layout(4, stride=1))) == "(4,3):(1,4)"

# %% [markdown]
# ### 2. A tuple tiler divides mode by mode
#
# With a tuple of layouts as the tiler, the divide happens in each mode separately, as composition with a
# tuple does (chapter 01, step 7, rule 3): `logical_divide(A, (B0, B1))` is
# `(logical_divide(A0, B0), logical_divide(A1, B1))`, with A0 and A1 the modes of A, each divided by section
# 1's rule. Mode 0 of the example is `9:59` divided by `3:3`, mode 1 is `(4,8):(13,1)` divided by
# `(2,4):(1,8)`. `cute.get(layout, mode=[i])` takes mode `i` out of a layout. Together the two divides are the
# result printed above.

# %%
mode0 = cute.logical_divide(cute.get(layout, mode=[0]), tiler[0])
mode1 = cute.logical_divide(cute.get(layout, mode=[1]), tiler[1])
print(cute.get(layout, mode=[0]), cute.get(layout, mode=[1]), "|", mode0, "|", mode1)
assert str(cute.get(layout, mode=[0])) == "9:59" and str(cute.get(layout, mode=[1])) == "(4,8):(13,1)"
assert str(mode0) == "(3,3):(177,59)"
assert str(mode1) == "((2,4),(2,2)):((13,2),(26,1))"

# %% [markdown]
# ### 3. Four ways to arrange the same divide
#
# The same numbers can be grouped four ways. `logical_divide` keeps each mode's (tile, rest) together;
# `zipped_divide` gathers all tile parts into mode 0 and all rest parts into mode 1, so *one tile is one
# slice of mode 1*; `tiled_divide` is zipped with the rest modes unpacked; `flat_divide` unpacks everything.

# %%
forms = {name: str(getattr(cute, name)(layout, tiler))
         for name in ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide")}
for name, text in forms.items():
    print(f"{name:15} {text}")
assert forms["zipped_divide"] == "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))"
assert forms["tiled_divide"] == "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))"
assert forms["flat_divide"] == "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))"

# %% [markdown]
# Kernels use `zipped_divide`: its shape is `((TileM,TileN),(RestM,RestN))`, so `[(None, None), b]` is tile b.
#
# ### 4. Tilers as sizes or as layouts
#
# A tiler of plain sizes, `(4,3)`, means the layouts `(4:1, 3:1)`: 4 consecutive rows and 3 consecutive
# columns. A *single* layout as the tiler is different: it divides the layout as one one-dimensional
# sequence (column-major order), not mode by mode. Here an 8x12 row-major matrix:

# %%
matrix = cute.make_layout((8, 12), stride=(12, 1))          # 8x12, row-major
by_sizes = cute.zipped_divide(matrix, (4, 3))
by_layouts = cute.zipped_divide(matrix, (cute.make_layout(4, stride=1), cute.make_layout(3, stride=1)))
by_one_layout = cute.zipped_divide(matrix, cute.make_layout(4, stride=1))
print(by_sizes, "|", by_layouts, "|", by_one_layout)
assert str(by_sizes) == str(by_layouts) == "((4,3),(2,4)):((12,1),(48,3))"
assert str(by_one_layout) == "(4,(2,12)):(12,(48,1))"   # 4 consecutive *elements* of a column, not a block

# %% [markdown]
# `((4,3),(2,4)):((12,1),(48,3))`: a tile is 4 rows (12 apart in memory) by 3 columns; there are 2 tiles
# down, 48 = 4 rows apart, and 4 across, 3 columns apart. The one-layout tiler `4:1` instead takes 4
# elements in column-major order, 4 rows of one column, and leaves `(2,12)` of those pieces.
#
# **When a one-layout tiler meets several modes.** Section 1's composition must divide evenly (chapter 01,
# step 7), and here it meets all of A's modes. 4 rows of an 8-row column divide evenly. A 6 × 4 row-major
# matrix `(6,4):(4,1)` divided by `4:1` does not: the complement `6:4` steps 4 indices at a time through a
# column of 6, and 4 does not divide 6. CuTeDSL does not refuse (its check asks only that 4 be smaller than
# 6) and returns `(4,(2,4)):(4,(16,1))`, whose tile 1 sits at offsets 16, 20, 24, 28, where A's indices 4
# to 7 are at 16, 20, 1, 5; 24 and 28 are not in A at all. With such a shape, divide mode by mode. The cell
# asks real CuTeDSL as well, with chapter 01's `layout_algebra_in_cutedsl` (where CuTeDSL is installed).

# %%
from cutekit.checks import layout_algebra_in_cutedsl

six_by_four = cute.make_layout((6, 4), stride=(4, 1))
uneven = cute.logical_divide(six_by_four, cute.make_layout(4, stride=1))
print(uneven, [uneven((i, 1)) for i in range(4)], "but A(4..7):", [six_by_four(i) for i in range(4, 8)])
assert str(cute.complement(cute.make_layout(4, stride=1), 24)) == "6:4"
assert str(uneven) == "(4,(2,4)):(4,(16,1))" and str(six_by_four) == "(6,4):(4,1)"
assert [uneven((i, 1)) for i in range(4)] == [16, 20, 24, 28]
assert [six_by_four(i) for i in range(4, 8)] == [16, 20, 1, 5]
said = layout_algebra_in_cutedsl([("logical_divide", six_by_four, cute.make_layout(4, stride=1))])
print("CuTeDSL:", said.answers[0] if said.available else said.error)
assert not said.available or said.answers == ["(4,(2,4)):(4,(16,1))"]

# %% [markdown]
# **A mode of size 1 prints stride 0.** A tile of one row, `(1, 4)`, gives modes of size 1. A size-1 mode has
# only coordinate 0, so its stride never moves anything, and where CuTe chooses the stride itself (a divide,
# or `make_layout` without `stride=`) it writes 0. A stride you give explicitly is kept as given:

# %%
one_row = cute.zipped_divide(matrix, (1, 4))
print(one_row, "|", cute.make_layout((1, 1)), "|", cute.make_layout((1, 1), stride=(5, 7)))
assert str(one_row) == "((1,4),(8,3)):((0,1),(12,4))"
assert str(cute.make_layout((1, 1))) == "(1,1):(0,0)"
assert str(cute.make_layout((1, 1), stride=(5, 7))) == "(1,1):(5,7)"

# %% [markdown]
# ### 5. The elementwise-add tiling
#
# The elementwise-add example of chapter 02 divides a 256x512 fp32 row-major tensor by the tiler `(16,128)`
# (16 rows of 128 values: one block's work). Each tile row is 512 elements after the previous one (a matrix
# row), and the tiles are 16 x 512 = 8192 apart down and 128 apart across:

# %%
tensor_layout = cute.make_layout((256, 512), stride=(512, 1))
tiled = cute.zipped_divide(tensor_layout, (16, 128))
print(tiled)
assert str(tiled) == "((16,128),(16,4)):((512,1),(8192,128))"

# %% [markdown]
# Compiled for a tensor whose layout is marked dynamic (section 8), the block tile's row stride prints as a
# run-time `?`, not as a static 128. It is not 128 because it is not a tile quantity: it is the *row stride of
# the tensor*, N. Changing N shows which numbers follow it:

# %%
for columns in (512, 1024, 384):
    print(columns, cute.zipped_divide(cute.make_layout((256, columns), stride=(columns, 1)), (16, 128)))
assert str(cute.zipped_divide(cute.make_layout((256, 1024), stride=(1024, 1)), (16, 128))) == \
    "((16,128),(16,8)):((1024,1),(16384,128))"
assert str(cute.zipped_divide(cute.make_layout((256, 384), stride=(384, 1)), (16, 128))) == \
    "((16,128),(16,3)):((384,1),(6144,128))"

# %% [markdown]
# The first stride follows N (512, 1024, 384); the rest stride down is 16 x N; only the 128 across is fixed
# by the tiler. Section 8 compiles the divide with real CuTeDSL on a dynamic tensor and prints the `?`.
#
# Elsewhere you may read "I don't quite understand why `?` is not a static 128, though." ("Notes on CuTeDSL",
# 2025-07-14): the answer is above, the `?` is N. And for a 64x32 row-major tensor divided by `(4,8)`, "CuTe
# DSL Intro" counts the tiles across as "32 / 4 == 8". The printed result says 4, 32 columns / 8 per tile:

# %%
small = cute.zipped_divide(cute.make_layout((64, 32), stride=(32, 1)), (4, 8))
print(small)
assert str(small) == "((4,8),(16,4)):((32,1),(128,8))"
assert cute.size(small, mode=[1]) == (64 // 4) * (32 // 8) == 64

# %% [markdown]
# ### 6. Slicing out one block's tile
#
# An **identity tensor** is a tensor whose element at each coordinate *is* that coordinate; dividing it
# shows which matrix cells a tile covers. Slicing mode 1 at `b` gives tile b. The rest mode `(16,4)` is
# column-major, so tile b is rest coordinate `(b % 16, b // 16)`: tile 5 is (5, 0), rows 80..95, columns
# 0..127; tile 17 is (1, 1). You can also give the rest coordinate as a pair.

# %%
coordinates = cute.zipped_divide(cute.make_identity_tensor((256, 512)), (16, 128))
print(coordinates)
tile5 = coordinates[((None, None), 5)]
tile17 = coordinates[((None, None), 17)]
print(tile5, "|", tile17)
assert str(tile5) == "tensor<(80,0) o (16,128):(1@0,1@1)>"
assert str(tile17) == str(coordinates[((None, None), (1, 1))]) == "tensor<(16,128) o (16,128):(1@0,1@1)>"
assert tile5[(15, 127)] == (95, 127)

# %% [markdown]
# `1@0` is a stride "one step along coordinate 0" (and `1@1` along coordinate 1): an identity tensor's
# strides move coordinates, not memory. The printed tile starts at its first cell, `(80,0)` for tile 5.
#
# The same tile can be sliced out of a `logical_divide`. There each mode holds its own (tile, rest) pair,
# `((16,16),(128,4))`, so the slice keeps the tile part of each mode with `None` and fixes the rest part:
# `[(None, bm), (None, bn)]` takes the tile at rest coordinate `(bm, bn)`.

# %%
by_mode = cute.logical_divide(cute.make_identity_tensor((256, 512)), (16, 128))
print(by_mode)
assert str(by_mode) == "tensor<(0,0) o ((16,16),(128,4)):((1@0,16@0),(1@1,128@1))>"
assert str(by_mode[((None, 1), (None, 1))]) == str(tile17)

# %% [markdown]
# `render.divide` shows a tile of the explorer's matrix: 4 tiles down and 3 across, so tile 5 is rest
# coordinate (5 % 4, 5 // 4) = (1, 1), rows 2-3 and columns 4-7, the tile that holds row 3, column 5 from
# the Play question:

# %%
explorer_tile5 = cute.zipped_divide(cute.make_identity_tensor((8, 12)), (2, 4))[((None, None), 5)]
assert str(explorer_tile5) == "tensor<(2,4) o (2,4):(1@0,1@1)>" and explorer_tile5[(1, 1)] == (3, 5)
render.divide(cute.make_layout((8, 12), stride=(12, 1)), (2, 4), tile=5)

# %% [markdown]
# ### 7. When the tile does not divide the shape
#
# A 10x12 matrix divided by `(4,8)` still gets whole tiles: the rest rounds up to `(3,2)`, and the last
# tiles reach past the matrix. The identity tensor shows it: tile 5 (rest coordinate (2, 1)) covers rows
# 8..11 and columns 8..15, but the matrix ends at row 9 and column 11. A kernel must not touch those cells.
# A cell `(m, n)` exists when every mode of its coordinate is less than the shape's: `m < 10 and n < 12`.
# CuTe names that test `cute.elem_less(coordinate, shape)`; section 8 shows what it gives in CuTeDSL.

# %%
ragged = cute.zipped_divide(cute.make_identity_tensor((10, 12)), (4, 8))
print(ragged)
last_tile = ragged[((None, None), 5)]
print(last_tile, "last cell:", last_tile[(3, 7)])
assert str(ragged) == "tensor<(0,0) o ((4,8),(3,2)):((1@0,1@1),(4@0,8@1))>"
assert last_tile[(3, 7)] == (11, 15)
for i, j in ((1, 3), (2, 3), (1, 4)):
    m, n = last_tile[(i, j)]
    print(f"tile element ({i}, {j}) is cell ({m}, {n}): exists {m < 10 and n < 12}")
assert [last_tile[(i, j)] for i, j in ((1, 3), (2, 3), (1, 4))] == [(9, 11), (10, 11), (9, 12)]

# %% [markdown]
# ### 8. Compile it: what CuTeDSL knows, and what it leaves to run time
#
# So far every shape and stride was a number the algebra could see. A kernel is compiled once for many
# tensors, and `from_dlpack(tensor).mark_layout_dynamic()` tells CuTeDSL to treat the tensor's shape and
# strides as **run-time values**: it prints each such value as `?`. The cell below compiles a function with
# `cute.compile`, which needs no GPU: the function's Python body runs once while CuTeDSL traces it, and the
# body writes down the layouts it sees. It uses the real CuTeDSL where it is installed; where it is not (macOS
# has no wheels) cutekit's simulator stands in and prints the same `?` (it knows the values, and computes with
# them when the code runs), all but `elem_less`'s run-time Boolean, which it shows as its value.

# %%
import cutekit

try:
    import cutlass  # the real CuTeDSL, where it is installed
except ImportError:  # not installed here: cutekit's simulator stands in for `cutlass`
    cutekit.use("sim")
    import cutlass
ran_cutedsl = not getattr(cutlass, "__cutekit_sim__", False)   # the simulator's modules carry this mark
print("cutlass is", "CuTeDSL (compiling on the CPU)" if ran_cutedsl else "cutekit's simulator")

import torch  # noqa: E402
import cutlass.cute as cute  # noqa: E402
from cutlass.cute.runtime import from_dlpack  # noqa: E402

traced = {}   # what the function's body saw, written down while it runs


@cute.jit
def divide_and_compare(mA: cute.Tensor):
    tiles = cute.zipped_divide(mA, (16, 128))
    traced["tensor"] = str(mA.layout)
    traced["divided"] = str(tiles.layout)
    traced["tile 5"] = str(tiles[((None, None), 5)].layout)
    m, n = cute.zipped_divide(cute.make_identity_tensor((10, 12)), (4, 8))[((None, None), 5)][(1, 3)]
    traced["m < 10 and n < 12"] = str(m < 10 and n < 12)
    traced["elem_less"] = str(cute.elem_less((m, n), (10, 12)))


dynamic = from_dlpack(torch.zeros(256, 512)).mark_layout_dynamic()
compiled = cute.compile(divide_and_compare, dynamic)   # CuTeDSL runs the body here, to trace it
if not traced:       # the simulator compiles nothing: it runs the body when the function is called
    compiled(dynamic)
for name, text in traced.items():
    print(f"{name:18} {text}")
as_cutedsl_prints = {"tensor": "(?,?):(?{i64},1)",
                     "divided": "((16,128),(?,?)):((?{i64},1),(?{i64 div=16},128))",
                     "tile 5": "(16,128):(?{i64},1)", "m < 10 and n < 12": "True", "elem_less": "?"}
assert traced == (as_cutedsl_prints if ran_cutedsl else dict(as_cutedsl_prints, elem_less="True"))

from cutekit import cute  # noqa: E402  (the reference algebra again, for the rest of the chapter)

# %% [markdown]
# What CuTeDSL printed (when it ran):
#
# * The tensor is `(?,?):(?{i64},1)`: both extents and the row stride are run-time values. `{i64}` says the
#   stride is held as a 64-bit integer (the extents are 32-bit, printed as a bare `?`). The stride 1 stays a
#   number: `mark_layout_dynamic` keeps the contiguous mode's unit stride static.
# * The block tile is `(16,128):(?{i64},1)`: the `?` is the row stride N, as section 5 found, and 128
#   never appears as a stride of the tile.
# * The division is `((16,128),(?,?)):((?{i64},1),(?{i64 div=16},128))`: the number of tiles is unknown, the
#   step one tile down is 16 x N, unknown but known to be a **multiple of 16** (`div=16`), and the step across
#   stays the static 128 of the tiler.
# * `m < 10 and n < 12` is a plain `True`: an identity tensor of a static shape has plain-int coordinates.
#   But `cute.elem_less` gives a run-time `Boolean`, printed `?`, even on plain ints: its value exists only
#   when the kernel runs, and `bool()` of it raises while tracing. A kernel branches on it with an `if`
#   (chapter 04). Or the kernel stores it in a predicate tensor that `cute.copy` reads (chapter 05). On the host, compare
#   the plain ints as above. (cutekit's `elem_less` returns a Python bool; CuTeDSL's does not.)
#
# ## Exercises
#
# Each exercise is a function of its parameters; the check calls it on random cases (the random seed is
# printed, so a result reproduces) and says which criterion failed and why.
#
# ### Exercise 1 · Zip-divide a batch of matrices by hand
#
# Write `zipped_by_hand(A, tiler)`: the layout `cute.zipped_divide(A, tiler)` prints, for a batch of matrices
# `A = (M, N, L)` (three modes, stored in any order) and a tiler of two or three one-dimensional layouts.
# Build it from `cute.get`, `cute.complement`, `cute.composition` and `cute.make_layout` (the divide functions
# are switched off while it is checked): divide mode by mode (section 2) with section 1's rule, then gather
# the parts as `zipped_divide` does (section 3). A tiler shorter than the layout leaves the modes past its end
# undivided: CuTe keeps each of them whole, and `zipped_divide` counts it with the rest, after the divided
# modes' rests. With two tiler layouts the batch mode L is such a mode:

# %%
batch = cute.make_layout((12, 8, 3), stride=(8, 1, 96))       # three 12x8 row-major matrices, 96 apart
batch_tiler = (cute.make_layout(3, stride=2), cute.make_layout(2, stride=1))
print(batch, "|", cute.zipped_divide(batch, batch_tiler))
assert str(batch) == "(12,8,3):(8,1,96)" and str(batch_tiler[0]) == "3:2" and str(batch_tiler[1]) == "2:1"
assert str(cute.zipped_divide(batch, batch_tiler)) == "((3,2),((2,2),4,3)):((16,1),((8,48),2,96))"

# %%
def zipped_by_hand(A, tiler):
    # YOUR CODE HERE
    return None


check("ch03.logical_divide_by_hand", zipped_by_hand)

# %% [markdown]
# ### Exercise 2 · Pick the tiler for a drawn tiling
#
# `picture[m][n]` is the number of the tile that cell (m, n) of an M x N matrix belongs to, numbered as
# `zipped_divide` numbers them (the rest mode's one-dimensional index, column-major). Some pictures are
# plain blocks; in others a tile takes every k-th row. Return the tiler: a tuple of two layouts (or sizes)
# for which `cute.zipped_divide(cute.make_layout((M, N)), tiler)` draws exactly this picture.

# %%
def tiler_from_picture(picture):
    # YOUR CODE HERE
    return None


check("ch03.tiler_from_picture", tiler_from_picture)

# %% [markdown]
# ### Exercise 3 · Predict a zipped divide of any matrix
#
# Section 5 divided row-major matrices whose rows are N elements apart. A matrix may be stored other ways:
# column-major (stride 1 down a column, M from one column to the next), or padded, its rows (or columns) further apart than it is wide (or tall): a
# leading dimension, BLAS's `lda`, larger than N, as in `(M,N):(N+4,1)`. Write `zipped_text(shape, stride,
# tiler)`: the string `print` shows for `cute.zipped_divide(cute.make_layout(shape, stride=stride), tiler)`,
# for a two-mode `shape` `(M, N)`, its `stride`, and a tiler `(tile_m, tile_n)` whose sizes divide M and N.
# The check's matrices are column-major, padded either way, or row-major; some of its tiles are one row or one
# column thick, some as tall or as wide as the matrix. Work it out from section 4's reading of a zipped divide and its rule
# that a mode of size 1 prints stride 0 (the divides are switched off): `zipped_text((8, 12), (1, 8), (4, 3))` is `((4,3),(2,4)):((1,8),(4,24))`, as CuTe prints it:

# %%
example = cute.zipped_divide(cute.make_layout((8, 12), stride=(1, 8)), (4, 3))
print(example)
assert str(example) == "((4,3),(2,4)):((1,8),(4,24))"

# %%
def zipped_text(shape, stride, tiler):
    # YOUR CODE HERE
    return None


check("ch03.predict_zipped", zipped_text)

# %% [markdown]
# ### Exercise 4 · Slice a block's tile out of a batch of matrices
#
# A batched kernel gives each block one tile of one matrix of a batch `(M, N, L)`. Divide it by a tiler
# `(tile_m, tile_n)` of two sizes: as in Exercise 1, the batch mode L is not divided, so `zipped_divide`'s rest
# mode has three modes, `(RestM, RestN, L)`, and numbers the tiles through them column-major (section 6), and
# `logical_divide` keeps L as its own third mode:

# %%
batch_of_three = cute.make_identity_tensor((10, 12, 3))
print(cute.zipped_divide(batch_of_three, (4, 8)), "|", cute.logical_divide(batch_of_three, (4, 8)))
assert str(cute.zipped_divide(batch_of_three, (4, 8))) == "tensor<(0,0,0) o ((4,8),(3,2,3)):((1@0,1@1),(4@0,8@1,1@2))>"
assert str(cute.logical_divide(batch_of_three, (4, 8))) == "tensor<(0,0,0) o ((4,3),(8,2),3):((1@0,4@0),(1@1,8@1),1@2)>"
print(cute.zipped_divide(batch_of_three, (4, 8))[((None, None), 13)])
assert str(cute.zipped_divide(batch_of_three, (4, 8))[((None, None), 13)]) == "tensor<(4,0,2) o (4,8):(1@0,1@1)>"

# %% [markdown]
# Write `block_tile(tensor, tiler, block)` for such a batch: the 2-D tile block `block` works on, where
# `block` is either a tile number (an int, numbered as `zipped_divide` numbers tiles) or a rest coordinate
# `(bm, bn, l)`, tile row, tile column and matrix. Use `logical_divide` and one slice: `zipped_divide` is
# switched off here (and `cute.local_tile`, the next chapter's one-call version), so a tile number must become
# a rest coordinate by section 6's rule, carried to three modes. Some of the check's tensors have rows the
# tile does not divide. As the cell above prints, `block_tile(cute.make_identity_tensor((10, 12, 3)), (4, 8),
# 13)` is `tensor<(4,0,2) o (4,8):(1@0,1@1)>`: tile row 1, tile column 0 of matrix 2.

# %%
def block_tile(tensor, tiler, block):
    # YOUR CODE HERE
    return None


check("ch03.slice_block", block_tile)

# %% [markdown]
# ### Exercise 5 · Write the predicate
#
# A kernel gives every block a whole tile, so when the tiler does not divide the shape (section 7) the edge
# blocks' tiles reach past the tensor. Each block therefore needs a **predicate**: one bool per element of
# its tile, True where the element exists. Chapter 04's add kernel with tails tests each element of a
# thread's share this way, with an `if`. Chapter 05 builds the mask per copy and passes it to
# `cute.copy(..., pred=...)`, which skips what is False. Without it a kernel reads and writes past the end of
# the tensor. CuTe builds it without `row < M && col < N` index
# arithmetic on block and thread ids: divide an identity tensor of the tensor's shape exactly like the data,
# take the block's tile, and compare each element's coordinate with the shape.
#
# A tiler's layouts may have strides (section 4): `(4:2, 8:1)` takes every second row, so a tile is 4 rows
# two apart by 8 columns, and a block's tile of a ragged tensor may reach past its end in every other row.
# The identity tensor still holds each element's coordinate:

# %%
every_second_row = (cute.make_layout(4, stride=2), cute.make_layout(8, stride=1))
strided_tiles = cute.zipped_divide(cute.make_identity_tensor((10, 12)), every_second_row)
print(strided_tiles, "|", strided_tiles[((None, None), 3)])
assert str(strided_tiles) == "tensor<(0,0) o ((4,8),((2,2),2)):((2@0,1@1),((1@0,8@0),8@1))>"
assert str(strided_tiles[((None, None), 3)]) == "tensor<(9,0) o (4,8):(2@0,1@1)>"

# %% [markdown]
# Write `inside(shape, tiler, block)` for a tiler given as two `(size, stride)` pairs, the layouts
# `size:stride`, one of them strided: block `block`'s predicate (`block` a tile number), a list with one row
# per place of the tiler's mode 0, each a list with one bool per place of its mode 1, where `mask[i][j]` says
# whether tile element `(i, j)` lies inside `shape`. For the 10x12 matrix above,
# `inside((10, 12), ((4, 2), (8, 1)), 3)` is True in the tile's first row only: tile 3's rows are 9, 11, 13
# and 15. Use an identity tensor, `zipped_divide`, a slice and plain comparisons of the coordinates, as
# section 7 does (`cute.local_tile` and `cute.elem_less` are switched off: in CuTeDSL `elem_less` gives a
# run-time Boolean, not a bool; the check also runs your function with real CuTeDSL).

# %%
def inside(shape, tiler, block):
    # YOUR CODE HERE
    return None


check("ch03.tile_predicate", inside)

# %% [markdown]
# ## What to remember
#
# - `logical_divide(A, B) = composition(A, (B, complement(B, size(A))))`: one tile, then which tile.
# - A tuple tiler divides mode by mode; sizes `(16,128)` mean `(16:1,128:1)`; one layout divides 1-D.
# - `zipped_divide` gives `((Tile),(Rest))`: `[(None, None), b]` is block b's tile, tile numbers run down the
#   rest mode first; in a `logical_divide` the same tile is `[(None, bm), (None, bn)]`.
# - `?` is a run-time value: in a dynamic tensor's tile it is the tensor's own stride (N), not a tile size.
# - A tiler that does not divide the shape rounds the rest up: the edge tiles need a predicate, an identity
#   tensor divided like the data and a comparison per element (in a kernel, `elem_less`, chapter 04).
#
# Next: **04 · local_tile and local_partition**, the two slices as one call each, and the add kernel with tails.
