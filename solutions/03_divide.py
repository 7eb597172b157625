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

# %% [markdown]
# ## See it
#
# The CuTe documentation's example, also used by the seed notes on CuTeDSL: a 9x32 layout
# `(9,(4,8)):(59,(13,1))` divided by the tiler `<3:3, (2,4):(1,8)>`. The tiler's first layout, `3:3`,
# picks rows 0, 3, 6 (three rows, three apart); its second, `(2,4):(1,8)`, picks columns
# 0, 1, 8, 9, 16, 17, 24, 25 (pairs of columns, eight apart). One tile is those 3 x 8 = 24 cells; the picture
# colours every tile (cells of one colour form one tile).

# %%
layout = cute.make_layout((9, (4, 8)), stride=(59, (13, 1)))
tiler = (cute.make_layout(3, stride=3), cute.make_layout((2, 4), stride=(1, 8)))
render.divide(layout, tiler)

# %%
rows_of_one_tile = [tiler[0](i) for i in range(cute.size(tiler[0]))]
columns_of_one_tile = [tiler[1](i) for i in range(cute.size(tiler[1]))]
print("rows:", rows_of_one_tile, " columns:", columns_of_one_tile)
assert rows_of_one_tile == [0, 3, 6]
assert columns_of_one_tile == [0, 1, 8, 9, 16, 17, 24, 25]

divided = cute.logical_divide(layout, tiler)
print(divided)
assert str(divided) == "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))"

# %% [markdown]
# Read the result mode by mode. Mode 0 is `(3,3):(177,59)`: the first `3:177` walks the three rows *of one
# tile* (row 0, 3, 6 of the original, each 3 x 59 = 177 apart in memory), the second `3:59` walks *from tile to
# tile* (start at row 0, 1 or 2). Mode 1 is `((2,4),(2,2))`: the tile part `(2,4):(13,2)` and the rest part
# `(2,2):(26,1)`. A logical divide keeps the tile and the rest of each mode side by side, in that mode.
#
# ## Play
#
# Predict first: with the tiler `(2, 4)` on an 8x12 row-major matrix, how many tiles are there, and which
# colour is the cell at row 3, column 5? Then move the sliders and check.

# %%
widgets.divide_explorer(cute.make_layout((8, 12), stride=(12, 1)), (2, 4))

# %% [markdown]
# ## Build it up
#
# ### 1. A divide is a composition with a complement
#
# Take a one-dimensional layout `A = 24:1` and a tiler `B = 4:2`: B picks offsets 0, 2, 4, 6 of A. The
# **complement** of B up to 24 is the layout that says where *copies* of B can start so that together they
# cover 0..23 exactly once. Then
#
# `logical_divide(A, B) = composition(A, (B, complement(B, size(A))))`
#
# that is: read A through B (one tile), then through the complement (which tile).

# %%
A = cute.make_layout(24, stride=1)
B = cute.make_layout(4, stride=2)
rest = cute.complement(B, cute.size(A))
print("complement(B, 24) =", rest)
assert str(rest) == "(2,3):(1,8)"

tile_then_rest = cute.make_layout((B.shape, rest.shape), stride=(B.stride, rest.stride))
by_hand = cute.composition(A, tile_then_rest)
print("(B, complement)   =", tile_then_rest)
print("composition       =", by_hand)
print("logical_divide    =", cute.logical_divide(A, B))
assert str(by_hand) == str(cute.logical_divide(A, B)) == "(4,(2,3)):(2,(1,8))"

# %% [markdown]
# The complement `(2,3):(1,8)` starts a copy of B at 0 and 1 (filling the odd offsets B skips), then at 8
# and 16 (after the 8 offsets one B-pair spans). Every offset 0..23 appears once in the result:

# %%
offsets = sorted(by_hand(i) for i in range(cute.size(by_hand)))
assert offsets == list(range(24))
first_tile = [by_hand((i, 0)) for i in range(4)]
second_tile = [by_hand((i, 1)) for i in range(4)]
print("tile 0:", first_tile, " tile 1:", second_tile)
assert first_tile == [0, 2, 4, 6] and second_tile == [1, 3, 5, 7]

# %% [markdown]
# ### 2. A tuple tiler divides mode by mode
#
# With a tuple of layouts as the tiler, the divide happens in each mode separately: mode 0 of the example is
# `9:59` divided by `3:3`, mode 1 is `(4,8):(13,1)` divided by `(2,4):(1,8)`. Together they are the result
# printed above.

# %%
mode0 = cute.logical_divide(cute.make_layout(9, stride=59), tiler[0])
mode1 = cute.logical_divide(cute.make_layout((4, 8), stride=(13, 1)), tiler[1])
print(mode0, "|", mode1)
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
# A tiler of plain sizes, `(16,128)`, means the layouts `(16:1, 128:1)`: 16 consecutive rows and 128
# consecutive columns. A *single* layout as the tiler is different: it divides the layout as one
# one-dimensional sequence (column-major order), not mode by mode.

# %%
matrix = cute.make_layout((8, 8), stride=(8, 1))          # 8x8, row-major
by_sizes = cute.zipped_divide(matrix, (4, 4))
by_layouts = cute.zipped_divide(matrix, (cute.make_layout(4, stride=1), cute.make_layout(4, stride=1)))
by_one_layout = cute.zipped_divide(matrix, cute.make_layout(4, stride=1))
print(by_sizes, "|", by_layouts, "|", by_one_layout)
assert str(by_sizes) == str(by_layouts) == "((4,4),(2,2)):((8,1),(32,4))"
assert str(by_one_layout) == "(4,(2,8)):(8,(32,1))"   # 4 consecutive *elements* of a column, not a 4x4 block

# %% [markdown]
# ### 5. The elementwise-add tiling, and what `?` is
#
# The seed notes on CuTeDSL divide a 256x512 fp32 row-major tensor by the tiler `(16,128)` (16 rows of
# 128 values: one block's work). Each tile row is 512 elements after the previous one (a matrix row), and the
# tiles are 16 x 512 = 8192 apart down and 128 apart across:

# %%
tensor_layout = cute.make_layout((256, 512), stride=(512, 1))
tiled = cute.zipped_divide(tensor_layout, (16, 128))
print(tiled)
assert str(tiled) == "((16,128),(16,4)):((512,1),(8192,128))"

# %% [markdown]
# **A question the seed leaves open.** Compiled with a tensor from `from_dlpack(...).mark_layout_dynamic()`,
# the seed sees the block tile's layout as `(16,128):(?,1)` and asks why `?` is not a static 128. It is not
# 128 because it is not a tile quantity: it is the *row stride of the tensor*, N, which the compiler does not
# know when the layout is marked dynamic. (The static 128 in `(?{div=16},128)` is the step from one tile to the
# next along a row.) Changing N shows it:

# %%
for columns in (512, 1024, 384):
    print(columns, cute.zipped_divide(cute.make_layout((256, columns), stride=(columns, 1)), (16, 128)))
assert str(cute.zipped_divide(cute.make_layout((256, 1024), stride=(1024, 1)), (16, 128))) == \
    "((16,128),(16,8)):((1024,1),(16384,128))"
assert str(cute.zipped_divide(cute.make_layout((256, 384), stride=(384, 1)), (16, 128))) == \
    "((16,128),(16,3)):((384,1),(6144,128))"

# %% [markdown]
# The first stride follows N (512, 1024, 384); the rest stride down is 16 x N (the seed's `?{div=16}`: a
# multiple of 16); only the 128 across is fixed by the tiler.
#
# **A slip in another seed.** The CuTeDSL intro divides a 64x32 row-major tensor by `(4,8)` and writes
# "32 / 4 == 8" for the number of tiles across. The printed result says 4 (32 columns / 8 per tile):

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
# column-major, so tile 5 is rest coordinate (5, 0): rows 80..95, columns 0..127; tile 17 is (1, 1). You can
# also give the rest coordinate as a pair.

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
# strides move coordinates, not memory. `render.divide` shows the same tile:

# %%
render.divide(cute.make_layout((8, 12), stride=(12, 1)), (2, 4), tile=5)

# %% [markdown]
# ### 7. When the tile does not divide the shape
#
# A 10x12 matrix divided by `(4,8)` still gets whole tiles: the rest rounds up to `(3,2)`, and the last
# tiles reach past the matrix. The identity tensor shows it: tile 5 (rest coordinate (2, 1)) covers rows
# 8..11 and columns 8..15, but the matrix ends at row 9 and column 11. A kernel must not touch those cells.
# `cute.elem_less(coordinate, shape)` says whether a cell exists: True when every mode of the coordinate is
# less than the shape's.

# %%
ragged = cute.zipped_divide(cute.make_identity_tensor((10, 12)), (4, 8))
print(ragged)
last_tile = ragged[((None, None), 5)]
print(last_tile, "last cell:", last_tile[(3, 7)])
assert str(ragged) == "tensor<(0,0) o ((4,8),(3,2)):((1@0,1@1),(4@0,8@1))>"
assert last_tile[(3, 7)] == (11, 15)
print("(1, 3) of the tile:", last_tile[(1, 3)], cute.elem_less(last_tile[(1, 3)], (10, 12)))
print("(2, 3) of the tile:", last_tile[(2, 3)], cute.elem_less(last_tile[(2, 3)], (10, 12)))
assert cute.elem_less(last_tile[(1, 3)], (10, 12)) and not cute.elem_less(last_tile[(2, 3)], (10, 12))

# %% [markdown]
# ## Exercises
#
# Each exercise is a function of its parameters; the check calls it on random cases (the seed is printed,
# so a result reproduces) and says which criterion failed and why.
#
# ### Exercise 1 · Logical divide by hand
#
# Write `divide_by_hand(A, B)` for one-dimensional layouts A and B: the layout `cute.logical_divide(A, B)`
# prints, built from `cute.complement`, `cute.make_layout` and `cute.composition` (the divide functions are
# switched off while it is checked).

# %%
def divide_by_hand(A, B):
    ### BEGIN SOLUTION
    rest = cute.complement(B, cute.size(A))
    return cute.composition(A, cute.make_layout((B.shape, rest.shape), stride=(B.stride, rest.stride)))
    ### END SOLUTION


check("ch03.logical_divide_by_hand", divide_by_hand)

# %% [markdown]
# ### Exercise 2 · Pick the tiler for a drawn tiling
#
# `picture[m][n]` is the number of the tile that cell (m, n) of an M x N matrix belongs to, numbered as
# `zipped_divide` numbers them (the rest mode's one-dimensional index, column-major). Some pictures are
# plain blocks; in others a tile takes every k-th row. Return the tiler: a tuple of two layouts (or sizes)
# for which `cute.zipped_divide(cute.make_layout((M, N)), tiler)` draws exactly this picture.

# %%
def tiler_from_picture(picture):
    ### BEGIN SOLUTION
    rows, columns = len(picture), len(picture[0])
    tile_columns = next(n for n in range(1, columns + 1) if n == columns or picture[0][n] != picture[0][0])
    same_rows = [m for m in range(rows) if picture[m][0] == picture[0][0]]
    row_step = same_rows[1] - same_rows[0] if len(same_rows) > 1 else 1
    return (cute.make_layout(len(same_rows), stride=row_step), cute.make_layout(tile_columns, stride=1))
    ### END SOLUTION


check("ch03.tiler_from_picture", tiler_from_picture)

# %% [markdown]
# ### Exercise 3 · Predict a zipped divide
#
# Write `zipped_text(M, N, tile_m, tile_n)`: the string `print` shows for
# `cute.zipped_divide(cute.make_layout((M, N), stride=(N, 1)), (tile_m, tile_n))`, where the tile sizes
# divide M and N. Work it out from the rule, not by calling a divide (they are switched off).

# %%
def zipped_text(M, N, tile_m, tile_n):
    ### BEGIN SOLUTION
    return f"(({tile_m},{tile_n}),({M // tile_m},{N // tile_n})):(({N},1),({tile_m * N},{tile_n}))"
    ### END SOLUTION


check("ch03.predict_zipped", zipped_text)

# %% [markdown]
# ### Exercise 4 · Slice out a block's tile
#
# Write `block_tile(tensor, tiler, block)`: the tile of `tensor` that block `block` works on, where `block`
# is either a tile number (an int) or a rest coordinate `(bm, bn)`. Use `zipped_divide` and a slice
# (`cute.local_tile` is the next chapter, and is switched off here).

# %%
def block_tile(tensor, tiler, block):
    ### BEGIN SOLUTION
    return cute.zipped_divide(tensor, tiler)[((None, None), block)]
    ### END SOLUTION


check("ch03.slice_block", block_tile)

# %% [markdown]
# ### Exercise 5 · Write the predicate
#
# A kernel gives every block a whole tile, so when the tiler does not divide the shape (section 7) the edge
# blocks' tiles reach past the tensor. Each block therefore needs a **predicate**: one bool per element of
# its tile, True where the element exists. The add kernel with tails in chapter 04 builds this mask for each
# thread's share of the tile (one entry per copy atom) and passes it to `cute.copy(..., pred=...)`, which
# skips what is False; without it the copy reads and writes past the end of the tensor. CuTe builds it without `row < M && col < N` index arithmetic: divide an
# identity tensor of the tensor's shape exactly like the data, take the block's tile, and ask
# `cute.elem_less(coordinate, shape)` of each element.
#
# Write `inside(shape, tiler, block)`: block `block`'s predicate (a tile number or a rest coordinate
# `(bm, bn)`, as in Exercise 4), a list of `tile_m` rows, each a list of `tile_n` bools, where `mask[i][j]`
# says whether tile element `(i, j)` lies inside `shape`. For section 7's 10x12 matrix and tiler `(4, 8)`,
# tile 5's mask is True in rows 0-1, columns 0-3 and False elsewhere. Use an identity tensor,
# `zipped_divide`, a slice and `cute.elem_less` (`cute.local_tile` is switched off).

# %%
def inside(shape, tiler, block):
    ### BEGIN SOLUTION
    tile = cute.zipped_divide(cute.make_identity_tensor(shape), tiler)[((None, None), block)]
    return [[cute.elem_less(tile[(i, j)], shape) for j in range(tiler[1])] for i in range(tiler[0])]
    ### END SOLUTION


check("ch03.tile_predicate", inside)

# %% [markdown]
# ## What to remember
#
# - `logical_divide(A, B) = composition(A, (B, complement(B, size(A))))`: one tile, then which tile.
# - A tuple tiler divides mode by mode; sizes `(16,128)` mean `(16:1,128:1)`; one layout divides 1-D.
# - `zipped_divide` gives `((Tile),(Rest))`: `[(None, None), b]` is block b's tile, no `blockIdx * TILE`.
# - In a dynamic tensor's tile, `?` is the tensor's own stride (N), not a tile size.
# - A tiler that does not divide the shape rounds the rest up: the edge tiles need a predicate, an identity
#   tensor divided like the data and `elem_less(coordinate, shape)` per element (chapter 04 copies with it).
#
# Next: **04 · local_tile and local_partition**, the two slices as one call each, and the add kernel with tails.
