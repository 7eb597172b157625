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
# Elsewhere you may read a row-major value layout built as
# `val_layout = cute.make_layout((4, 128 // dtype.width), order=(1, 0))` ("Notes on CuTeDSL", 2025-07-14).
# `make_layout` has no `order` argument: in CuTeDSL 4.8.1 that line raises `TypeError: make_layout() got an
# unexpected keyword argument 'order'` (cutekit's copy raises the same). The order belongs to
# `make_ordered_layout`, as above.

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
# Two more cases follow from the rules. A layout whose modes all have size 1 has one element, at offset 0,
# and no mode is left: CuTe writes that as `1:0`, whatever the strides were. And
# `cute.coalesce(layout, target_profile=...)` coalesces **by mode**: each top-level mode on its own, so the
# rank stays. A 4 × 4 column-major matrix written as `((2,2),(1,4)):((1,2),(4,4))` coalesces to one run,
# `16:1`, but with `target_profile=(1, 1)` (one flag per mode; the values do not matter) to `(4,4):(1,4)`,
# still a matrix. A mode of only size-1 modes keeps its place in the rank as `1:0`.

# %%
all_ones = cute.make_layout((1, (1, 1)), stride=(3, (4, 5)))
square = cute.make_layout(((2, 2), (1, 4)), stride=((1, 2), (4, 4)))
first_mode_ones = cute.make_layout(((1, 1), (2, 3)), stride=((5, 7), (1, 2)))
print(all_ones, "->", cute.coalesce(all_ones))
print(square, "->", cute.coalesce(square), "or by mode", cute.coalesce(square, target_profile=(1, 1)))
print(first_mode_ones, "-> by mode", cute.coalesce(first_mode_ones, target_profile=(1, 1)))
assert str(all_ones) == "(1,(1,1)):(3,(4,5))" and str(cute.coalesce(all_ones)) == "1:0"
assert str(square) == "((2,2),(1,4)):((1,2),(4,4))" and str(first_mode_ones) == "((1,1),(2,3)):((5,7),(1,2))"
assert str(cute.coalesce(square)) == "16:1" and str(cute.coalesce(square, target_profile=(1, 1))) == "(4,4):(1,4)"
assert str(cute.coalesce(first_mode_ones, target_profile=(1, 1))) == "(1,6):(0,1)"

# %% [markdown]
# Coalescing keeps the function of the 1-D index but not the shape: `32:1` no longer knows it was a 4 × 8
# matrix. Use it to see how contiguous a layout really is (4 fp32 values in one stride-1 run, 16-byte
# aligned, can move as one 128-bit access: chapter 02), not to replace the layout you index with.
#
# ### 7. Composition: a layout of a layout
#
# Because a layout is a function of a 1-D index, one layout's output can be another's input.
# `cute.composition(A, B)` is the layout `R` with `R(c) = A(B(c))`: B's values are **1-D indices into A**
# (B picks which elements of A, in what order); A says where they live. Three rules compute it by hand.
#
# **Rule 1 · one mode.** For `B = s:d`, `R(j) = A(j * d)` for `j < s`: B takes every d-th element of A's
# 1-D view, s of them. If A is a single mode `n:e`, that is `s:(d*e)`. Otherwise coalesce A and walk its
# modes `n:e` from the left, first *dividing out d*, then *keeping s*:
#
# * a mode with `n <= d` is skipped whole, and d becomes `d / n` (one step of d jumps over all of it);
# * the first mode with `n > d` gives `ceil(n / d)` elements, stride `d * e`;
# * B keeps s elements: if that mode gives at least s, R is s of them; if not, R takes all it gives and the
#   rest of s (s divided by their number) from the modes after it, walked the same way with d = 1. A's last
#   mode never runs out: B may read past A's size.
#
# With A the row-major `(4,8):(8,1)`: `8:4` skips mode `4:8` whole (d = 4 / 4 = 1) and keeps 8 of mode
# `8:1`: `8:1`, row 0. `4:2` gives 4 / 2 = 2 elements of mode `4:8`, stride 2 × 8 = 16, and the other 2
# from `8:1`: `(2,2):(16,1)`. `5:8` skips `4:8` (d = 8 / 4 = 2) and keeps 5 of the last mode at stride 2:
# `5:2`. It reads A's 1-D indices 0, 8, ..., 32, and A has 32 elements: its last mode runs on, and index 32
# lands at offset 8 (as if A had a ninth column). Nothing checks that B stays inside A. (The cell also uses
# `cute.get(layout, mode=[i])`, which returns mode i of a layout as a layout of its own.)

# %%
every_fourth = cute.composition(row_major, cute.make_layout(8, stride=4))
every_second = cute.composition(row_major, cute.make_layout(4, stride=2))
past_the_end = cute.composition(row_major, cute.make_layout(5, stride=8))
print(every_fourth, every_second, past_the_end, [past_the_end(j) for j in range(5)])
assert [str(cute.get(row_major, mode=[i])) for i in range(2)] == ["4:8", "8:1"]
assert [str(cute.make_layout(s, stride=d)) for s, d in ((8, 4), (4, 2), (5, 8))] == ["8:4", "4:2", "5:8"]
assert str(every_fourth) == "8:1" and [every_fourth(j) for j in range(8)] == [row_major(4 * j) for j in range(8)]
assert str(every_second) == "(2,2):(16,1)"
assert [every_second(j) for j in range(4)] == [row_major(2 * j) for j in range(4)] == [0, 16, 1, 17]
assert str(past_the_end) == "5:2" and [past_the_end(j) for j in range(5)] == [0, 2, 4, 6, 8]

# %% [markdown]
# **When CuTe composes.** The walk must divide evenly. Two conditions say so (named as in CuTe's C++ source):
#
# * *stride divisibility*: d and the modes it meets divide one another: a mode skipped whole divides d, a
#   mode d lands inside is a multiple of d. `3:6` breaks it on A's first mode, of size 4;
# * *shape divisibility*: a mode that gives fewer elements than what is left of s must give a number that
#   divides it: `3:2` breaks it, as mode `4:8` gives 2 elements and 2 does not divide 3 (`3:1` does not: the
#   mode gives 4, at least 3, and R is `3:8`).
#
# CuTe checks both while it composes, the first in a weaker form: it accepts a mode that divides d, and *any*
# mode larger than d, whether d divides it or not. cutekit raises a `CuteError` naming the condition; CuTeDSL raises while it
# traces (an `MLIRError`, "unable to compute the following composition"), so a kernel holding such a
# composition does not compile. The weaker form lets one kind of case through: `4:3` lands inside mode
# `4:8` (3 < 4, and 3 does not divide 4), and CuTeDSL returns `(2,2):(24,1)`, whose offsets `0, 24, 1, 25`
# are not `A(0), A(3), A(6), A(9)` = `0, 24, 17, 10`. No error warns you: keep d a divisor of a mode it
# lands inside.
#
# `layout_algebra_in_cutedsl` (from `cutekit.checks`) asks real CuTeDSL, in a separate process and inside a
# `@cute.jit` function, for the same calls and returns what it printed or raised, so the cell shows its
# answers next to cutekit's where CuTeDSL is installed.

# %%
from cutekit.checks import layout_algebra_in_cutedsl

tried = [cute.make_layout(8, stride=4), cute.make_layout(3, stride=6), cute.make_layout(3, stride=2),
         cute.make_layout(4, stride=3)]
for B in tried:
    try:
        print(f"cutekit:  {row_major} o {B} = {cute.composition(row_major, B)}")
    except Exception as error:
        print(f"cutekit:  {row_major} o {B}: {type(error).__name__}: {error}")
assert [str(B) for B in tried] == ["8:4", "3:6", "3:2", "4:3"]
assert str(cute.composition(row_major, cute.make_layout(3, stride=1))) == "3:8"   # 4 elements given, 3 kept
said = layout_algebra_in_cutedsl([("composition", row_major, B) for B in tried])
if said.available:
    for B, answer in zip(tried, said.answers):
        print(f"CuTeDSL:  {row_major} o {B}: {answer}")
    assert said.answers[0] == "8:1" and said.answers[3] == "(2,2):(24,1)"
    assert all(answer.startswith("MLIRError") and "unable to compute the following composition" in answer
               for answer in said.answers[1:3])
else:
    print(said.error)
lands_inside = cute.composition(row_major, cute.make_layout(4, stride=3))
print([lands_inside(j) for j in range(4)], "but A(3j):", [row_major(3 * j) for j in range(4)])
assert [lands_inside(j) for j in range(4)] == [0, 24, 1, 25]
assert [row_major(3 * j) for j in range(4)] == [0, 24, 17, 10]

# %% [markdown]
# **Rule 2 · several modes.** Composition distributes over B's modes: `A o (B0, B1) = (A o B0, A o B1)`.
# Each mode of B is composed on its own by rule 1, and R has B's modes (each may come out split in two, as
# `4:2` did). Two uses you will meet constantly:
#
# **A transposed view.** With A the row-major `(4,8):(8,1)` and B = `(8,4):(4,1)`, B sends `(n, m)` to the
# 1-D index `4n + m`, which A unfolds to its coordinate `(m, n)`. By rule 2: `8:4` gives `8:1` (above), and
# `4:1` keeps the 4 elements of mode `4:8`: `4:8`. So `composition(A, B) = (8,4):(1,8)`, and
# `composition(A, B)(n, m) = A(m, n)`: the transpose, with no data moved.

# %%
transposer = cute.make_layout((8, 4), stride=(4, 1))
transposed = cute.composition(row_major, transposer)
print(transposed)
assert str(cute.get(transposer, mode=[1])) == "4:1"
assert str(cute.composition(row_major, cute.get(transposer, mode=[1]))) == "4:8"
assert str(transposed) == "(8,4):(1,8)"
assert all(transposed((n, m)) == row_major((m, n)) for m in range(4) for n in range(8))
render.layout(transposed, title="composition((4,8):(8,1), (8,4):(4,1))")

# %% [markdown]
# **A tile.** B = `(2,4):(1,4)` sends `(i, j)` to the 1-D index `i + 4j`, which is A's coordinate `(i, j)`
# for `i < 2`: `2:1` keeps 2 of mode `4:8` (`2:8`), `4:4` skips mode `4:8` and keeps 4 of `8:1` (`4:1`),
# the top-left 2 × 4 block of A, with A's strides. Tiling (chapter 03) starts here.

# %%
tile_picker = cute.make_layout((2, 4), stride=(1, 4))
tile = cute.composition(row_major, tile_picker)
print(tile_picker, "->", tile)
assert str(tile_picker) == "(2,4):(1,4)"
assert [str(cute.get(tile_picker, mode=[i])) for i in range(2)] == ["2:1", "4:4"]
assert str(cute.composition(row_major, cute.get(tile_picker, mode=[0]))) == "2:8"
assert str(cute.composition(row_major, cute.get(tile_picker, mode=[1]))) == "4:1"
assert str(tile) == "(2,4):(8,1)"
assert all(tile((i, j)) == row_major((i, j)) for i in range(2) for j in range(4))

# %% [markdown]
# **Rule 3 · a tuple of layouts composes mode by mode.** Given a tuple `(B0, B1)` instead of one layout
# (CuTe calls it a *tiler*), `composition` composes mode 0 of A with B0 and mode 1 of A with B1, each by
# rules 1 and 2, and drops any mode of A the tuple does not reach. Now B0's values index A's *mode 0*, not A's
# 1-D view: `(2:2, 4:1)` takes rows 0 and 2 (`4:8 o 2:2 = 2:16`) and columns 0..3 (`8:1 o 4:1 = 4:1`), where
# the single layout `(2,4):(2,8)` reads the 1-D indices 0, 2, 8, 10, ...

# %%
rows_and_columns = cute.composition(row_major, (cute.make_layout(2, stride=2), cute.make_layout(4, stride=1)))
one_layout = cute.composition(row_major, cute.make_layout((2, 4), stride=(2, 8)))
print(rows_and_columns, one_layout, cute.composition(cute.make_layout((4, 8, 2)), (2, 4)))
assert str(rows_and_columns) == "(2,4):(16,1)"
assert all(rows_and_columns((i, j)) == row_major((2 * i, j)) for i in range(2) for j in range(4))
assert str(cute.make_layout((2, 4), stride=(2, 8))) == "(2,4):(2,8)" and str(one_layout) == "(2,4):(16,2)"
assert str(cute.composition(cute.make_layout((4, 8, 2)), (2, 4))) == "(2,4):(1,4)"   # mode 2 is dropped

# %% [markdown]
# ### 8. Complement: the layout that fills the gaps
#
# `4:2` touches offsets 0, 2, 4, 6. `cute.complement(A, n)` is the layout of the *repeats* of A: where copies
# of A start so that A and the copies, together, hit every offset from 0 up to n (rounded up, below) exactly
# once. For `4:2` and 24 it is `(2,3):(1,8)`: a copy shifted by 1 (the odd offsets), then the pair again at
# 8 and 16. CuTe computes it like this:
#
# 1. Drop A's modes of size 1 or stride 0 (they add no offsets), then sort the rest by stride.
# 2. Start with `reached = 1`. For each mode `s:d`, in that order, the gap before it becomes a mode
#    `(d / reached):reached` (copies of everything covered so far, up to offset d), and `reached = s * d`.
# 3. Last comes the rest: `ceil(n / reached):reached`, repeats of the whole block A now fills.
# 4. Coalesce: gaps of size 1 disappear.
#
# For `4:2`: the gap is `(2 / 1):1 = 2:1`, then reached = 4 × 2 = 8; the rest is `ceil(24 / 8):8 = 3:8`.

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
# **When n is not a multiple of the block.** The rest mode rounds up, so A and its complement cover at least
# 0 .. n-1, and possibly more. The block is `reached`, the largest stride times its size, which may be more
# than A's cosize: for `2:3` (offsets 0 and 3, cosize 4) the gap is `3:1` and the block is 2 × 3 = 6, so
# `complement(2:3, 10)` has a rest of `ceil(10 / 6) = 2` blocks: `(3,2):(1,6)`, and together with A it
# covers 0 .. 11. With n below the block the gaps are still filled: `complement(4:2, 7)` is `2:1`.

# %%
rounded = cute.complement(cute.make_layout(2, stride=3), 10)
assert str(cute.make_layout(2, stride=3)) == "2:3"
assert str(cute.complement(cute.make_layout(2, stride=3), 6)) == "3:1"      # the gap alone
with_copies = cute.make_layout((2, (3, 2)), stride=(3, (1, 6)))
print(rounded, sorted(with_copies(i) for i in range(12)), cute.complement(strided, 7))
assert str(rounded) == "(3,2):(1,6)" and cute.cosize(cute.make_layout(2, stride=3)) == 4
assert sorted(with_copies(i) for i in range(12)) == list(range(12))
assert str(cute.complement(strided, 7)) == "2:1"

# %% [markdown]
# Each gap `d / reached` must divide evenly for the copies to fit. CuTe does not check it: for
# `(2,2):(1,3)` (offsets 0, 1, 3, 4) the gap 3 / 2 rounds down to 1 and CuTeDSL, like cutekit, returns
# `2:6`, which never fills offset 2. A stride below `reached` (modes that interleave, like `(3,4):(3,4)`:
# after `3:3`, reached = 9 and the next stride is 4) even gives a gap of 4 / 9 = 0, and CuTe returns a shape
# holding a 0: `complement((3,4):(3,4), 24)` is `(3,0,2):(1,9,16)`, a layout of no elements.

# %%
uneven = cute.complement(cute.make_layout((2, 2), stride=(1, 3)), 12)
print(uneven)
assert str(cute.make_layout((2, 2), stride=(1, 3))) == "(2,2):(1,3)" and str(uneven) == "2:6"
interleaved = cute.complement(cute.make_layout((3, 4), stride=(3, 4)), 24)
print(interleaved)
assert str(cute.make_layout((3, 4), stride=(3, 4))) == "(3,4):(3,4)" and str(interleaved) == "(3,0,2):(1,9,16)"
assert str(cute.get(cute.make_layout((3, 4), stride=(3, 4)), mode=[0])) == "3:3"

# %% [markdown]
# ### 9. Inverses: from an offset back to its index
#
# A layout sends a 1-D index to an offset; an inverse goes back.
#
# **`cute.right_inverse(A)`** is the layout R with `A(R(i)) == i` for every `i < size(R)`: R(i) is the index
# at which A puts offset i, for the offsets 0, 1, 2, ... as far as A reaches them without a hole. The rule:
# coalesce A; start with `reached = 1`; while some mode `s:d` of A has `d == reached`, R gets the mode `s:p`,
# where p is the product of A's sizes *before* that mode (its step in A's 1-D index), and `reached = s * d`.
# When no mode has stride `reached`, R ends: offset `reached` is not A's. For a one-to-one A this walks the
# modes in stride order; a mode of stride 0 is never the one looked for, so it is skipped.
#
# For the row-major `(4,8):(8,1)`: the mode `8:1` comes first (stride 1 = reached; A's sizes before it:
# 4), giving `8:4`, then `4:8` (stride 8 = reached; nothing before it: 1), giving `4:1`: `R = (8,4):(4,1)`,
# step 7's transposer. `(2,3):(1,4)` hits 0, 1, 4, 5, 8, 9: R is `2:1`, as offset 2 is missing. `4:2` never
# hits 1, so R is `1:0`: only offset 0. `(8,8):(0,1)` skips its stride-0 mode: the mode `8:1` (sizes before
# it: 8) gives `R = 8:8`.

# %%
inverse = cute.right_inverse(row_major)
print(inverse, cute.right_inverse(cute.make_layout((2, 3), stride=(1, 4))), cute.right_inverse(strided))
assert str(inverse) == "(8,4):(4,1)" and all(row_major(inverse(i)) == i for i in range(32))
assert str(cute.make_layout((2, 3), stride=(1, 4))) == "(2,3):(1,4)"
assert str(cute.right_inverse(cute.make_layout((2, 3), stride=(1, 4)))) == "2:1"
assert str(cute.right_inverse(strided)) == "1:0"
broadcast = cute.make_layout((8, 8), stride=(0, 1))
print(broadcast, "->", cute.right_inverse(broadcast))
assert str(broadcast) == "(8,8):(0,1)" and str(cute.right_inverse(broadcast)) == "8:8"

# %% [markdown]
# **`cute.left_inverse(A)`** is a layout L with `L(A(i)) == i` for every index i of A: it sends each offset
# A reaches back to its index (offsets A never reaches go somewhere of no meaning). A has one when it is
# one-to-one and, in stride order, each stride is a multiple of the one before it (CuTe checks the second
# part only): for `4:2`, L is `(2,4):(0,1)`, so `L(2k) = k`. `(2,3):(3,4)` (offsets 0, 3, 4, 7, 8, 11) breaks
# the condition, as 4 is not a multiple of 3: cutekit raises a `CuteError`, CuTeDSL an `MLIRError` ("unable
# to compute the left inverse").

# %%
left = cute.left_inverse(strided)
print(left, [left(strided(i)) for i in range(4)])
assert str(left) == "(2,4):(0,1)" and [left(strided(i)) for i in range(4)] == [0, 1, 2, 3]
no_left_inverse = cute.make_layout((2, 3), stride=(3, 4))
assert str(no_left_inverse) == "(2,3):(3,4)" and [no_left_inverse(i) for i in range(6)] == [0, 3, 4, 7, 8, 11]
try:
    cute.left_inverse(no_left_inverse)
    raise AssertionError("(2,3):(3,4) has no left inverse")
except Exception as error:
    print(f"{type(error).__name__}: {error}")
    assert type(error).__name__ == "CuteError" and "divisibility" in str(error)

# %% [markdown]
# Real CuTeDSL gives the same answers for steps 6, 8 and 9, the uneven and the interleaved complement, the
# skipped stride-0 mode and the refused left inverse included:

# %%
said = layout_algebra_in_cutedsl([
    ("coalesce", all_ones), ("coalesce", square, {"target_profile": (1, 1)}),
    ("complement", cute.make_layout(2, stride=3), 10), ("complement", cute.make_layout((2, 2), stride=(1, 3)), 12),
    ("right_inverse", row_major), ("right_inverse", strided), ("left_inverse", strided),
    ("left_inverse", no_left_inverse), ("complement", cute.make_layout((3, 4), stride=(3, 4)), 24),
    ("right_inverse", broadcast)])
print(said.answers if said.available else said.error)
if said.available:
    assert said.answers[:7] == ["1:0", "(4,4):(1,4)", "(3,2):(1,6)", "2:6", "(8,4):(4,1)", "1:0", "(2,4):(0,1)"]
    assert said.answers[7].startswith("MLIRError") and "unable to compute the left inverse" in said.answers[7]
    assert said.answers[8:] == ["(3,0,2):(1,9,16)", "8:8"]

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
# built with `cute.make_layout` from `cute.flatten` and the rules of step 6, the case where every mode has
# size 1 included (the check switches `cute.coalesce` off). `coalesced((2,(1,6)), (1,(6,2)))` prints `12:1`.

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
# **Exercise 6 · compose by hand.** Write `composed(A, B)`: the layout `cute.composition(A, B)` gives, built
# with step 7's rules, or `None` where CuTe refuses to compose (stride or shape divisibility broken). A has
# two or three modes and B one or two, all plain integers; `cute.composition` (and everything built on it) is
# switched off while it is checked, `cute.coalesce`, `cute.flatten` and `cute.make_layout` stay. Your layout
# passes when its modes have B's sizes and every index gets the composition's offset, however its modes
# nest. The check's cases skip whole modes of A, land inside one, read past A's end, need A coalesced first,
# and break each condition; none lands inside a mode that d does not divide (where CuTeDSL's answer is not
# A o B). Step 7 worked `composed((4,8):(8,1), 4:2)`, which is `(2,2):(16,1)`.

# %%
def composed(A, B):
    # YOUR CODE HERE
    return None


check("ch01.compose_by_hand", composed)

# %% [markdown]
# **Exercise 7 · complement by hand.** Write `complement_of(shape, stride, n)`: the layout
# `cute.complement(cute.make_layout(shape, stride=stride), n)` gives, built with step 8's algorithm
# (`cute.complement` is switched off; `cute.flatten`, `cute.coalesce` and `cute.make_layout` stay). `shape`
# and `stride` are tuples, possibly nested; n is often not a multiple of the block A fills, and some layouts
# list their modes out of stride order, leave a gap between two of their modes, or hold a mode of size 1.
# Step 8 worked `complement_of((2,), (3,), 10)`, which is `(3,2):(1,6)`; any layout with the complement's
# offsets, in the same order, passes.

# %%
def complement_of(shape, stride, n):
    # YOUR CODE HERE
    return None


check("ch01.complement_by_hand", complement_of)

# %% [markdown]
# **Exercise 8 · a right inverse by hand.** Write `right_inverse_of(shape, stride)`: the layout R that
# `cute.right_inverse(cute.make_layout(shape, stride=stride))` gives, built with step 9's rule
# (`cute.right_inverse` and `cute.left_inverse` are switched off). R passes when `A(R(i)) == i` for every
# `i < size(R)` and R is as long as A covers 0, 1, 2, ... without a hole. The check's layouts order their
# strides in other ways than row-major, nest, leave a hole, or never reach offset 1.

# %%
def right_inverse_of(shape, stride):
    # YOUR CODE HERE
    return None


check("ch01.right_inverse_by_hand", right_inverse_of)

# %% [markdown]
# ## What to remember
#
# * A layout is `shape:stride`, a function from coordinates to offsets: the sum of coordinate × stride.
# * The first mode is fastest: the default stride is column-major, and 1-D indices unfold column-major.
#   `make_ordered_layout(shape, order)` picks another order (`order=(1, 0)` is row-major).
# * `coalesce` keeps the 1-D function with fewest modes (size-1 modes go, a mode that continues the one
#   before merges; nothing left is `1:0`); `target_profile` does it mode by mode.
# * `composition(A, B)` reads A through B: each mode `s:d` of B takes every d-th element of A's 1-D view, s of
#   them, if the divisions are even; a tuple composes mode by mode.
# * `complement` fills the gaps in stride order and repeats the block, rounded up; `right_inverse` goes from
#   offsets 0, 1, 2, ... back to indices.
#
# Next, chapter 02: layouts whose coordinates are *(thread, value)*, which say which thread owns which element.
