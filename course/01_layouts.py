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
# # 01 · Layouts
#
# **Why.** Every CUDA kernel you have written contains small functions from coordinates to memory offsets,
# spelled out by hand: `A[row * lda + col]` for a row-major matrix, `B[col * ldb + row]` for a column-major
# one, `tile[row * (32 + 1) + col]` for a padded shared-memory tile. Each is correct only together with the
# loop that walks it, and a transposed or padded variant means a new formula, written again and checked by
# eye.
#
# CuTe makes that function a value you can hold, print, draw and combine. A **layout** is a pair:
#
# * a **shape**: how many positions along each mode (a *mode* is one axis: rows, columns, ...), and
# * a **stride**: how far in memory one step along that mode moves.
#
# The offset of a coordinate is the sum of coordinate × stride over the modes. That is the whole definition;
# everything in this chapter (hierarchical shapes, coalescing, composition, complement) builds on it.
#
# Nothing here needs a GPU. The cells run `cutekit.cute`, a pure-Python copy of CuTeDSL's layout algebra with
# the same names and the same printed strings as `cutlass.cute`, so each step can be printed and asserted in
# a cell. In CuTeDSL itself these calls build the kernel's code, so they run inside a `@cute.jit` function;
# called from plain Python, `cute.make_layout` stops with an error saying it can only be called while a
# `@cute.jit` or `@cute.kernel` function is being compiled. A layout from this chapter, in a CuTeDSL program:
#
# ```python
# import cutlass
# import cutlass.cute as cute
#
# @cute.jit
# def show():
#     print(cute.make_layout((4, 8), stride=(8, 1)))   # print runs while CuTeDSL traces show()
#
# show()
# ```

# %%
from cutekit import cute, render, widgets
from cutekit.checks import check

# %% [markdown]
# ## See it
#
# A 4 × 8 row-major matrix: moving down one row skips 8 elements, moving right one column skips 1.
# Each cell of the picture shows the offset the layout gives that coordinate.

# %%
row_major = cute.make_layout((4, 8), stride=(8, 1))
render.layout(row_major, title="(4,8):(8,1), row-major")

# %%
print(row_major)
assert str(row_major) == "(4,8):(8,1)"
assert str(row_major) == "(_4,_8):(_8,_1)".replace("_", "")     # CuTe C++'s form, underscores dropped

# %% [markdown]
# CuTeDSL prints a layout as `shape:stride`. (CuTe C++ prints the same layout as `(_4,_8):(_8,_1)`, the
# underscores marking compile-time constants; CuTeDSL drops them. This course uses CuTeDSL's form.)
#
# A layout is a function: call it with a coordinate `(m, n)` and it returns `m * 8 + n * 1`.

# %%
print(row_major((1, 2)), row_major((3, 7)))
assert row_major((1, 2)) == 10 and row_major((3, 7)) == 31

# %% [markdown]
# ## Play
#
# Change the shape and the stride and watch the offsets move. Before you move anything, predict:
# what does stride `(1, 4)` draw? What changes with stride `(9, 1)` (a row padded by one element, the classic
# trick against shared-memory bank conflicts)? What does stride `(0, 1)` do?

# %%
widgets.layout_explorer(shape=(4, 8), stride=(8, 1))

# %% [markdown]
# ## Build it up
#
# ### 1. The default stride is column-major
#
# Leave the stride out and CuTe picks the *compact column-major* one: the first mode is the fastest,
# each later mode's stride is the product of the shapes before it. This is CuTe's convention everywhere:
# when a rule needs an order, the **first mode moves fastest**.

# %%
column_major = cute.make_layout((4, 8))
print(column_major)
assert str(column_major) == "(4,8):(1,4)"
render.layout(column_major, title="(4,8):(1,4), column-major (the default)")

# %% [markdown]
# ### 2. Three ways to name an element
#
# * A **natural coordinate** has one entry per mode: `(m, n)`.
# * A **1-D index** `i` is one integer; CuTe unfolds it column-major over the shape, `(i % 4, i // 4)` for
#   shape `(4, 8)`. So every layout, whatever its rank, is also a function of one integer.
# * A **hierarchical coordinate** follows a nested shape; it comes in step 4.
#
# `cute.idx2crd` shows the unfolding, `cute.crd2idx` goes back.

# %%
print(cute.idx2crd(5, (4, 8)), cute.crd2idx((1, 1), (4, 8)))
print(column_major(5), row_major(5))
assert cute.idx2crd(5, (4, 8)) == (1, 1) and cute.crd2idx((1, 1), (4, 8)) == 5
assert column_major(5) == 5       # column-major: the 1-D index is the offset
assert row_major(5) == 9          # index 5 is (1, 1), and row-major puts (1, 1) at 1*8 + 1

# %% [markdown]
# The last line is worth a pause: calling a row-major layout with 1-D index 5 does *not* give offset 5. The
# index names the coordinate `(1, 1)` (column-major unfolding), and the row-major strides place it at 9.
#
# ### 3. `make_ordered_layout`: say which mode is fastest
#
# `cute.make_ordered_layout(shape, order)` builds compact strides in the order you name: `order[i]` is the
# rank of mode `i`, from 0 (fastest, stride 1) upwards. `order=(1, 0)` makes the last mode fastest:
# row-major.

# %%
print(cute.make_ordered_layout((4, 8), order=(1, 0)))
print(cute.make_ordered_layout((2, 3, 4), order=(2, 0, 1)))
assert str(cute.make_ordered_layout((4, 8), order=(1, 0))) == "(4,8):(8,1)"
assert str(cute.make_ordered_layout((2, 3, 4), order=(2, 0, 1))) == "(2,3,4):(12,1,3)"

# %% [markdown]
# **A common mistake.** The public tutorial "Notes on CuTeDSL" (2025-07-14) builds its row-major value
# layout with `cute.make_layout((4, 128 // dtype.width), order=(1, 0))`. `make_layout` has no `order`
# argument: in CuTeDSL 4.8.1 that line raises `TypeError: make_layout() got an unexpected keyword argument
# 'order'` (cutekit's copy raises the same). The order belongs to `make_ordered_layout`, as above.

# %%
try:
    cute.make_layout((4, 8), order=(1, 0))
    raise AssertionError("make_layout should not accept order=")
except TypeError as error:
    print("TypeError:", error)
    assert "order" in str(error)

# %% [markdown]
# ### 4. Hierarchical layouts
#
# A mode's shape can itself be a tuple. `(4,(2,3)):(2,(1,8))` has 4 rows (stride 2) and 6 columns, but the
# columns are not one stride apart: they come as 3 groups of 2, stepping 1 inside a group and 8 between
# groups. A flat `(rows, columns):(a, b)` cannot say that; a nested mode can.

# %%
nested = cute.make_layout((4, (2, 3)), stride=(2, (1, 8)))
print(nested)
assert str(nested) == "(4,(2,3)):(2,(1,8))"
render.layout(nested, title="(4,(2,3)):(2,(1,8))")

# %% [markdown]
# The same element now has three names. The hierarchical coordinate `(1, (1, 2))` follows the nesting; the
# flat coordinate `(1, 5)` gives the nested mode a 1-D index, which unfolds inside it (5 in `(2,3)` is
# `(1, 2)`); the 1-D index `13` unfolds over the whole shape, column-major: `(13 % 4, 13 // 4) = (1, 3)`, and
# 3 in `(2,3)` is `(1, 1)`. `cute.idx2crd` does the same unfolding at every level.

# %%
print(nested((1, (1, 2))), nested((1, 5)), nested(13), cute.idx2crd(13, (4, (2, 3))))
assert nested((1, (1, 2))) == 1 * 2 + 1 * 1 + 2 * 8 == 19
assert nested((1, 5)) == 19
assert nested(13) == 1 * 2 + 1 * 1 + 1 * 8 == 11
assert cute.idx2crd(13, (4, (2, 3))) == (1, (1, 1)) and cute.idx2crd(5, (2, 3)) == (1, 2)

# %% [markdown]
# ### 5. Size, cosize, rank, depth
#
# * `size`: how many coordinates the layout has (the product of its shape).
# * `cosize`: one past the largest offset: how much memory the layout spans.
# * `rank`: the number of top-level modes; `depth`: how deeply the shape nests (0 for a plain integer).
#
# A padded layout is where size and cosize part: `(4,8):(9,1)` names 32 elements but spans 35 slots, the
# three padding slots (offsets 8, 17 and 26) never used.

# %%
padded = cute.make_layout((4, 8), stride=(9, 1))
for layout in (row_major, nested, padded):
    print(f"{str(layout):22} size={cute.size(layout)} cosize={cute.cosize(layout)} "
          f"rank={cute.rank(layout)} depth={cute.depth(layout)}")
assert str(padded) == "(4,8):(9,1)"
assert (cute.size(nested), cute.cosize(nested), cute.rank(nested), cute.depth(nested)) == (24, 24, 2, 2)
assert (cute.size(padded), cute.cosize(padded)) == (32, 35)
assert sorted(set(range(35)) - {padded(i) for i in range(32)}) == [8, 17, 26]
assert cute.depth(row_major) == 1 and cute.depth(cute.make_layout(8)) == 0

# %% [markdown]
# `cute.size` also counts a shape on its own, nested or not, or one mode of a layout (`mode=[i]`). A
# layout's `.shape` and `.stride` are plain (nested) tuples. You will want these whenever you walk a layout
# mode by mode: the size of a nested mode is how far a 1-D index into it reaches.

# %%
print(nested.shape, nested.stride, cute.size((2, 3)), cute.size(nested, mode=[1]), cute.size(4))
assert nested.shape == (4, (2, 3)) and nested.stride == (2, (1, 8))
assert cute.size((2, 3)) == 6 and cute.size(((2, 3), 4)) == 24
assert cute.size(nested, mode=[0]) == 4 and cute.size(nested, mode=[1]) == 6 and cute.size(4) == 4

# %% [markdown]
# ### 6. Coalesce: the same function with fewer modes
#
# `cute.coalesce` rewrites a layout into one with fewer modes that gives every **1-D index** the same
# offset. It works on the *flattened* modes: `cute.flatten` drops the nesting, of a shape (a plain tuple comes
# back) or of a layout (its shape and its stride both flattened).

# %%
example = cute.make_layout((2, (1, 6)), stride=(1, (6, 2)))
print(example, cute.flatten(example), cute.flatten(example.shape), cute.flatten(((2, 3), (4, 5))))
assert str(example) == "(2,(1,6)):(1,(6,2))"
assert str(cute.flatten(example)) == "(2,1,6):(1,6,2)"
assert cute.flatten(example.shape) == (2, 1, 6) and cute.flatten(example.stride) == (1, 6, 2)
assert cute.flatten(((2, 3), (4, 5))) == (2, 3, 4, 5)

# %% [markdown]
# (Give `flatten` a tuple. On a plain integer CuTeDSL returns the integer and cutekit a 1-tuple.)
#
# Then three rules, applied left to right over the flattened modes:
#
# * a mode of size 1 adds nothing and goes;
# * mode `i+1` merges into mode `i` when `stride[i+1] == shape[i] * stride[i]` (it just continues counting),
#   and only then;
# * what is left of a single mode is a plain integer shape and stride: it prints as `12:1`, where the one-mode
#   tuple layout `make_layout((12,), stride=(1,))` prints `(12):(1)`.
#
# `(2,(1,6)):(1,(6,2))` flattens to `(2,1,6):(1,6,2)`; the size-1 mode goes, leaving `(2,6):(1,2)`; and
# 2 = 2 × 1, so the 6 continues the 2: `12:1`. The column-major `(4,8):(1,4)` is one long run, `32:1`. The
# row-major `(4,8):(8,1)` cannot shrink: after 4 rows of stride 8 the next stride would have to be 32, and it
# is 1.

# %%
print(example, "->", cute.coalesce(example))
print(cute.coalesce(column_major), cute.coalesce(row_major), cute.coalesce(nested))
one_mode = cute.make_layout((12,), stride=(1,))
print(one_mode, "->", cute.coalesce(one_mode))
assert str(cute.coalesce(example)) == "12:1"
assert str(cute.make_layout((2, 6), stride=(1, 2))) == "(2,6):(1,2)"
assert [cute.coalesce(example)(i) for i in range(12)] == [example(i) for i in range(12)]
assert str(cute.coalesce(column_major)) == "32:1"
assert str(cute.coalesce(row_major)) == "(4,8):(8,1)"
assert str(cute.coalesce(nested)) == "(4,2,3):(2,1,8)"
assert str(one_mode) == "(12):(1)" and str(cute.coalesce(one_mode)) == "12:1"

# %% [markdown]
# Coalescing keeps the function of the 1-D index but not the shape: `32:1` no longer knows it was a 4 × 8
# matrix. Use it to see how contiguous a layout really is (4 fp32 values in one stride-1 run, 16-byte
# aligned, can move as one 128-bit access: chapter 02), not to replace the layout you index with.
#
# ### 7. Composition: a layout of a layout
#
# Because a layout is a function of a 1-D index, one layout's output can be another's input.
# `cute.composition(A, B)` is the layout `R` with `R(c) = A(B(c))`: B picks which elements of A, in what
# order; A says where they live. Two uses you will meet constantly:
#
# **A transposed view.** With A the row-major `(4,8):(8,1)` and B = `(8,4):(4,1)`, B sends `(n, m)` to the
# 1-D index `4n + m`, which A unfolds to its coordinate `(m, n)`. So `composition(A, B)(n, m) = A(m, n)`: the
# transpose, with no data moved.

# %%
transposer = cute.make_layout((8, 4), stride=(4, 1))
transposed = cute.composition(row_major, transposer)
print(transposed)
assert str(transposed) == "(8,4):(1,8)"
assert all(transposed((n, m)) == row_major((m, n)) for m in range(4) for n in range(8))
render.layout(transposed, title="composition((4,8):(8,1), (8,4):(4,1))")

# %% [markdown]
# **A tile.** B = `(2,4):(1,4)` sends `(i, j)` to the 1-D index `i + 4j`, which is A's coordinate `(i, j)`
# for `i < 2`: the top-left 2 × 4 block of A, with A's strides. Tiling (chapter 03) starts here.

# %%
tile_picker = cute.make_layout((2, 4), stride=(1, 4))
tile = cute.composition(row_major, tile_picker)
print(tile_picker, "->", tile)
assert str(tile_picker) == "(2,4):(1,4)"
assert str(tile) == "(2,4):(8,1)"
assert all(tile((i, j)) == row_major((i, j)) for i in range(2) for j in range(4))

# %% [markdown]
# ### 8. Complement: the layout that fills the gaps
#
# `4:2` touches offsets 0, 2, 4, 6. `cute.complement(layout, n)` is the layout of the *repeats* that,
# together with it, cover `0 .. n-1` exactly once: here `(2,3):(1,8)`, a shift by 1 (filling the odd
# offsets) and shifts by 8 and 16 (the next two blocks of 8).

# %%
strided = cute.make_layout(4, stride=2)
gaps = cute.complement(strided, 24)
print(strided, [strided(i) for i in range(4)], gaps)
assert str(strided) == "4:2" and [strided(i) for i in range(4)] == [0, 2, 4, 6]
assert str(gaps) == "(2,3):(1,8)"

# %% [markdown]
# Put `4:2` and its complement side by side as the two modes of one layout and you get step 4's `nested`,
# `(4,(2,3)):(2,(1,8))`, which hits every offset from 0 to 23 exactly once. That is what complement is for:
# `logical_divide` (chapter 03) uses it to build "the tile, then the rest".

# %%
offsets = sorted(nested(i) for i in range(cute.size(nested)))
print(offsets == list(range(24)))
assert offsets == list(range(24))
render.layout(gaps, title="complement(4:2, 24) = (2,3):(1,8)")

# %% [markdown]
# ## Exercises
#
# Each exercise is a function of its parameters; the check calls it on cases drawn at random, so an answer
# tuned to a worked example meets other shapes. Each check reports what passed, on which tier (`reference`
# is cutekit's algebra; `cutedsl-cpu` compares your answers with the real CuTeDSL's when it is installed),
# and for what did not, a hint naming the case and what is wrong in it.
#
# **Exercise 1 · a batch of matrices as one layout.** A batched GEMM keeps B row-major M × N matrices one
# after another in memory: element `(m, n)` of matrix `b` sits at offset `b * M * N + m * N + n`. Write
# `layout_for(M, N, B)`: the layout of shape `(M, N, B)` that gives the coordinate `(m, n, b)` that offset.
# (Step 3's rank-3 layout shows three modes with three different strides; which stride each mode needs
# here is yours to work out.)

# %%
def layout_for(M, N, B):
    # YOUR CODE HERE
    return None


check("ch01.layout_from_grid", layout_for)

# %% [markdown]
# **Exercise 2 · the layout behind a picture.** `grid[m][n]` is the offset drawn at row `m`, column `n` (the
# picture below is one such grid). Write `layout_from_picture(grid)` returning the rank-2 layout that draws
# it. The check shows you row-major grids, column-major ones, padded ones and ones with arbitrary steps.

# %%
render.layout(cute.make_layout((3, 5), stride=(7, 2)), title="which layout draws this?")

# %%
def layout_from_picture(grid):
    # YOUR CODE HERE
    return None


check("ch01.layout_from_picture", layout_from_picture)

# %% [markdown]
# **Exercise 3 · an offset by hand.** Write `index_of(shape, stride, coordinate)`: the offset a layout gives
# a 1-D, flat or hierarchical coordinate, with plain Python (the check switches `cute.make_layout`,
# `cute.Layout`, `cute.crd2idx` and `cute.idx2crd` off while it runs; `cute.size` stays). Step 4 worked
# three names of one element: `index_of((4,(2,3)), (2,(1,8)), (1,(1,2)))` is 19. The check also asks about
# layouts whose *first* mode nests, shaped like `((2,3),4)`.

# %%
def index_of(shape, stride, coordinate):
    # YOUR CODE HERE
    return None


check("ch01.index_of_coordinate", index_of)

# %% [markdown]
# **Exercise 4 · coalesce by hand.** Write `coalesced(shape, stride)`: the layout `cute.coalesce` would give,
# built with `cute.make_layout` from `cute.flatten` and the three rules of step 6 (the check switches
# `cute.coalesce` off). `coalesced((2,(1,6)), (1,(6,2)))` prints `12:1`.

# %%
def coalesced(shape, stride):
    # YOUR CODE HERE
    return None


check("ch01.coalesce_by_hand", coalesced)

# %% [markdown]
# **Exercise 5 · transpose a whole batch by composition.** Let A be exercise 1's batch, the layout of shape
# `(M, N, B)` with element `(m, n, b)` at `b * M * N + m * N + n` (the check builds A itself). Write
# `transposer(M, N, B)`: the layout X of shape `(N, M, B)` for which `cute.composition(A, X)` at `(n, m, b)`
# reads A at `(m, n, b)`: every matrix of the batch transposed, no data moved. Step 7 did this for one 4 × 8
# matrix; with a third mode, remember what X's values are: 1-D indices into A, unfolded column-major over
# A's whole shape.

# %%
def transposer(M, N, B):
    # YOUR CODE HERE
    return None


check("ch01.transpose_by_composition", transposer)

# %% [markdown]
# ## What to remember
#
# * A layout is `shape:stride`, a function from coordinates to offsets: the sum of coordinate × stride.
# * The first mode is fastest: the default stride is column-major, and 1-D indices unfold column-major.
#   `make_ordered_layout(shape, order)` picks another order (`order=(1, 0)` is row-major).
# * Nested shapes say what flat ones cannot; size counts coordinates, cosize the memory spanned.
# * `coalesce` keeps the 1-D function with fewer modes; `composition(A, B)` is `A(B(c))`: views and tiles;
#   `complement` fills the gaps.
#
# Next, chapter 02: layouts whose coordinates are *(thread, value)*, which say which thread owns which element.
