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
# # 06 · ldmatrix and retile: from shared memory to tensor-core registers
#
# **Why.** A tensor-core instruction such as `mma.sync.m16n8k16` does not read shared memory. Each of the
# 32 lanes of a warp must already hold, in registers, the exact 8 fp16 values of A that the hardware assigns
# to it: lane 0 holds A[0,0], A[0,1], A[8,0], A[8,1], A[0,8], ... In CUDA you would load them with
# `ldmatrix.sync.aligned.m8n8.x4.shared.b16`: every lane passes the address of one 16-byte row of an 8x8
# matrix, and the hardware shuffles the rows so that each lane receives two fp16 values of each matrix in
# one 32-bit register. Getting "which lane passes which row address" and "which register is which MMA
# value" right by hand is the index math this chapter replaces.
#
# CuTe describes the instruction as a **copy atom** (chapter 05) whose thread-value layouts say what each lane
# reads and what it receives, builds a **TiledCopy** for it straight from the MMA (`make_tiled_copy_A`), and
# lets each thread see its MMA registers in the copy's order (`retile`). We compute each piece, check it
# against the picture, work out which ldmatrix (x1, x2 or x4) fits a warp's tile, and then run a kernel whose
# every register is compared with the MMA's layouts.
#
# Words used below: a *lane* is a thread's index inside its warp (0..31); a *TV layout* maps
# (thread, value) to a position (chapter 02); a *fragment* is the set of registers one thread holds.

# %%
import cutekit
from cutekit import cute, render, widgets
from cutekit.checks import check

# %% [markdown]
# ## See it
#
# `ldmatrix.x4`: four 8x8 matrices of fp16. Left, the 32 row addresses: lane `8*j + r` points at row `r` of
# matrix `j`. Right, where the elements land: lane `t` receives, from every matrix, row `t // 4`,
# columns `2*(t % 4)` and `2*(t % 4) + 1`, packed into one 32-bit register (register `j` for matrix `j`).
# Lane 9 is highlighted.

# %%
render.ldmatrix(num_matrices=4, transpose=False, lane=9)

# %% [markdown]
# The same instruction as a copy atom, printed (CuTeDSL's printout; cutekit's reference algebra prints the
# same strings, C++ writes `_32` for a static 32). The layouts are in fp16 elements: `(32,8):(8,1)` says
# thread t's 8 source values are elements 8t .. 8t+7, one 16-byte row. The operation is
# `cute.nvgpu.warp.LdMatrix8x8x16bOp(transpose, num_matrices)`: `ldmatrix` of 8x8 matrices of 16-bit values,
# transposed or not, 1, 2 or 4 of them; `layout_src_tv` and `layout_dst_tv` are the atom's two TV layouts
# (chapter 05), section 1 below reads them.

# %%
F16 = cute.Float16
ldsm_x4 = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), F16)
print(ldsm_x4)
assert str(ldsm_x4.layout_src_tv) == "(32,8):(8,1)"
assert str(ldsm_x4.layout_dst_tv) == "(32,(2,4)):(2,(1,64))"

# %% [markdown]
# ## Build it up
#
# ### 1. Source and destination
#
# A copy atom maps (thread, value) to an element offset in one block of data (for ldmatrix: its 8x8
# matrices, one after the other), twice:
# - **source** `layout_src_tv`: what each thread reads. For ldmatrix, one row address per lane.
# - **destination** `layout_dst_tv`: what each thread's registers hold afterwards.
#
# All six ldmatrix atoms (x1, x2, x4, plain and transposed), as CuTeDSL 4.8.1 prints them (checked against
# CuTeDSL, traced on the CPU inside `@cute.jit`):

# %%
atoms = {}
for num_matrices in (1, 2, 4):
    for transpose in (False, True):
        atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(transpose, num_matrices), F16)
        atoms[num_matrices, transpose] = atom
        print(f"x{num_matrices} {'trans' if transpose else 'plain'}  src {atom.layout_src_tv}   "
              f"dst {atom.layout_dst_tv}")
assert str(atoms[1, False].layout_src_tv) == "((8,4),8):((8,0),1)"
assert str(atoms[2, False].layout_src_tv) == "((16,2),8):((8,0),1)"
assert str(atoms[1, False].layout_dst_tv) == "(32,2):(2,1)"
assert str(atoms[4, True].layout_dst_tv) == "((4,8),(1,2,4)):((16,1),(1,8,64))"

# %% [markdown]
# Read x1's source `((8,4),8):((8,0),1)`: only lanes 0..7 supply addresses; stride 0 on the `4` means lanes
# 8..31 repeat them (on sm_80 and newer the hardware ignores their addresses; the PTX ISA wants valid ones on
# sm_75, which the repeat gives). x2 uses lanes 0..15. The plain destination `(32,(2,4)):(2,(1,64))`: lane t
# holds offsets 2t and 2t+1 (one 32-bit register) of every matrix, and the matrices are 64 elements apart. The
# transposed destination gathers two elements 8 apart (two rows of a matrix) into one register.
#
# ### 2. The MMA wants, and make_tiled_copy_A
#
# The MMA atom `m16n8k16` with fp16 inputs and fp32 accumulators: one `mma.sync` instruction, written as TV
# layouts of A, B and C. The operation is `cute.nvgpu.warp.MmaF16BF16Op(input type, accumulator type,
# (M, N, K))`, the warp-wide `mma.sync`; `cute.make_tiled_mma(op)` makes it a **TiledMMA**, the atom repeated
# over more warps and a larger tile (section 6; here one warp, one atom), whose `tv_layout_A_tiled`,
# `tv_layout_B_tiled` and `tv_layout_C_tiled` are its TV layouts of A, B and C. Its A TV layout maps
# (thread, value) to an element of the 16x16 A tile (column-major index m + 16k):

# %%
mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(F16, cute.Float32, (16, 8, 16)))
print(mma)
assert str(mma.tv_layout_A_tiled) == "((4,8),((2,2,2),(1,1))):((32,1),((16,8,128),(0,0)))"

# %% [markdown]
# Play: pick a thread and predict its 8 A values (2 per register, 4 registers) before you look. Which
# rows of A does thread 5 touch?

# %%
widgets.mma_explorer(mma)

# %% [markdown]
# `make_tiled_copy_A(atom, tiled_mma)` builds the ldmatrix TiledCopy whose TV layout *is* the MMA's A layout,
# over the MMA's (M, K) tile (an *S2R* copy: shared memory to registers; `layout_src_tv_tiled`, read in
# section 3, is the same copy in the source's numbering):

# %%
s2r_A = cute.make_tiled_copy_A(ldsm_x4, mma)
print(s2r_A)
assert str(s2r_A.layout_tv_tiled) == str(mma.tv_layout_A_tiled)
assert str(s2r_A.layout_src_tv_tiled) == "((16,2),(8,1)):((1,128),(16,0))"
render.tiled_copy(s2r_A, highlight=9)

# %% [markdown]
# Left (source): each lane's 8 values are 8 consecutive k of one row: the row address it passes. The
# source TV layout `((16,2),(8,1)):((1,128),(16,0))` says lane t supplies row t % 16 of A, columns
# 8 * (t // 16) .. + 7. Right (destination): the MMA's A layout. One thread's source, as coordinates:

# %%
identity_A = cute.make_identity_tensor((16, 16))
lane = 9
rows_supplied = s2r_A.get_slice(lane).partition_S(identity_A)
print(rows_supplied)
coordinates = [rows_supplied[i] for i in range(8)]
print(f"lane {lane} passes the address of row {coordinates[0][0]}, k {coordinates[0][1]}..{coordinates[-1][1]}")
assert coordinates == [(9, k) for k in range(8)]

# %% [markdown]
# ### 3. The reference numbering is the destination
#
# A TiledCopy writes its TV layout (`layout_tv_tiled`) in one (thread, value) numbering, the atom's
# **reference**, and translates it for each side: `layout_src_tv_tiled` is the same copy in the source's
# numbering, `layout_dst_tv_tiled` in the destination's. C++ CuTe names the reference `ValLayoutRef`;
# CuTeDSL 4.8.1 keeps it inside its IR (its copy atom has only `layout_src_tv` and `layout_dst_tv`), but
# which side it is shows in the TiledCopy: coalesced (chapter 01), the destination's layout is the TiledCopy's
# own, the source's is not. For ldmatrix the reference *is* the destination:

# %%
for name, tiled_layout in [("layout_tv_tiled", s2r_A.layout_tv_tiled),
                           ("layout_dst_tv_tiled", s2r_A.layout_dst_tv_tiled),
                           ("layout_src_tv_tiled", s2r_A.layout_src_tv_tiled)]:
    print(f"{name:20} coalesced: {cute.coalesce(tiled_layout)}")
assert str(cute.coalesce(s2r_A.layout_dst_tv_tiled)) == str(cute.coalesce(s2r_A.layout_tv_tiled)) \
    == "(4,8,2,2,2):(32,1,16,8,128)"
assert str(cute.coalesce(s2r_A.layout_src_tv_tiled)) == "(16,2,8):(1,128,16)"

# %% [markdown]
# Why it must be: `make_tiled_copy_A` takes the MMA's A layout as the TiledCopy's TV layout, and that layout
# says which registers each thread must hold: a statement about the destination. With reference =
# destination nothing has to be translated on the register side. (cutekit computes the reference layout and
# the maps to it too, as `cutekit.cute.not_in_cutedsl.layout_ref_tv(atom)`, `src_to_ref(atom)` and
# `dst_to_ref(atom)`; CuTeDSL's copy atom has no such attributes, so the cells below use only
# `layout_src_tv` and `layout_dst_tv`.)
#
# To translate a (thread, value) of the source into the reference numbering: go to the offset with the
# source layout, and back to a reference (thread, value) with the reference layout's right inverse
# (`right_inverse(L)` is the layout R with L(R(i)) = i):
#
#     src2ref = composition(right_inverse(ref), src)        dst2ref = composition(right_inverse(ref), dst)
#
# with ref = dst. The result is a (thread, value) -> index layout; index i is reference thread i % 32,
# value i // 32, and a value v of ldmatrix x4's reference is (half, register) = (v % 2, v // 2).

# %%
src2ref = cute.composition(cute.right_inverse(ldsm_x4.layout_dst_tv), ldsm_x4.layout_src_tv)
dst2ref = cute.composition(cute.right_inverse(ldsm_x4.layout_dst_tv), ldsm_x4.layout_dst_tv)
print("src2ref", src2ref)
print("dst2ref", dst2ref)
assert str(src2ref) == "((8,4),(2,4)):((4,64),(32,1))"
assert str(dst2ref) == "(32,(2,4)):(1,(32,64))"

# %% [markdown]
# A sample of src2ref, (source thread, source value) -> (reference thread, (half, register)), for the first
# lane of each of the four 8x8 matrices:

# %%
samples = {}
for t in (0, 8, 16, 24):
    indices = [src2ref((t, v)) for v in range(8)]
    samples[t] = [(i % 32, ((i // 32) % 2, (i // 32) // 2)) for i in indices]
for t, row in samples.items():
    print(f"tid {t:2}:", " ".join(str(entry).replace(" ", "") for entry in row))
assert samples[8][:3] == [(0, (0, 1)), (0, (1, 1)), (1, (0, 1))]

# %% [markdown]
# dst2ref is the identity: `(32,(2,4)):(1,(32,64))` sends (t, (h, r)) to t + 32h + 64r, which is exactly the
# index of (t, (h, r)) in a (32, 8) domain. Every ldmatrix atom, transposed or not:

# %%
for key, atom in atoms.items():
    d2r = cute.composition(cute.right_inverse(atom.layout_dst_tv), atom.layout_dst_tv)
    assert all(d2r(i) == i for i in range(cute.size(d2r))), key
print("dst2ref(i) == i for every ldmatrix atom; src2ref is where the renumbering happens")

# %% [markdown]
# So `partition_D` (and everything on the register side) needs no renumbering; `partition_S` does: lane 8's
# row is matrix 1's row 0, whose elements end up in reference lanes 0..3, register 1.

# %% [markdown]
# > **Elsewhere you may read** these src2ref and dst2ref layouts and the sample table above, printed from C++
# > (with underscores), and, in Chinese, that for ldmatrix the dst2ref step is crucial ("这一步就很关键")
# > ("CuTe Layout Transformations for MMA and Copy (sgemm_sm80.cu)"). The layouts and the table hold; the
# > dst2ref step does nothing: it is the identity for every ldmatrix atom, as the cell above asserts, and the
# > renumbering is all in src2ref.

# %% [markdown]
# ### 4. retile: the MMA's registers seen by the copy
#
# The MMA partitions A for a thread as `(MMA, MMA_M, MMA_K)` = (values of one MMA, repeats down M, repeats
# along K): `tiled_mma.get_slice(t).partition_A(tensor)` is thread t's part of an A tile, as a TiledCopy's
# `partition_S` is (and `partition_B`, `partition_C` for B and C). `make_fragment_A` allocates those
# registers (from a tensor of shared memory in a kernel, or from a shape: CuTeDSL takes the partition's
# `.shape` when the partition is an identity tensor). The copy wants its destination as
# `((values of one copy atom, atoms), rest...)`. `retile` is the same registers in the copy's grouping:

# %%
thread_mma = mma.get_slice(lane)
fragment_A = mma.make_fragment_A(thread_mma.partition_A(identity_A).shape)
print("MMA fragment   ", fragment_A.layout)
for num_matrices in (4, 2, 1):
    tiled = cute.make_tiled_copy_A(atoms[num_matrices, False], mma)
    print(f"retile for x{num_matrices}  ", tiled.get_slice(lane).retile(fragment_A).layout,
          "   partition_S", tiled.get_slice(lane).partition_S(identity_A).layout.shape)
assert str(fragment_A.layout) == "((2,2,2),1,1):((1,2,4),0,0)"
assert str(s2r_A.get_slice(lane).retile(fragment_A).layout) == "((8,1),1,1):((1,0),0,0)"
assert str(cute.make_tiled_copy_A(atoms[2, False], mma).get_slice(lane).retile(fragment_A).layout) == \
    "((4,2),1,1):((1,4),0,0)"
assert str(cute.make_tiled_copy_A(atoms[1, False], mma).get_slice(lane).retile(fragment_A).layout) == \
    "((2,4),1,1):((1,2),0,0)"

# %% [markdown]
# A retiled tensor has no thread mode: it is one thread's registers. For x4 and one warp it is
# `((8,1),1,1):((1,0),0,0)`: register v of the copy is register v of the MMA, because the MMA's register order
# *is* ldmatrix's destination order (section 3). For x2 it groups the same 8 values as 2 instructions of 4,
# `((4,2),1,1):((1,4),0,0)`; for x1 as 4 instructions of 2 (one 32-bit register each),
# `((2,4),1,1):((1,2),0,0)`. CuTeDSL 4.8.1 prints the same strings.
#
# `partition_S` shows the price of fewer matrices: for x1 a thread's source is `(8,(2,2))`, 32 values (a
# 16-byte row per instruction, four instructions) for the same 8 registers, because lanes 8..31 repeat the
# row addresses of lanes 0..7 and only 2 fp16 land per lane per instruction.

# %% [markdown]
# > **Elsewhere you may read**, in Chinese, that `retile_D` rearranges the MMA fragment into a
# > `(thr, (lane,reg), ...)` view ("CuTe Layout Transformations for MMA and Copy (sgemm_sm80.cu)"). A retiled
# > tensor has no thread mode: it is one thread's registers, `((8,1),1,1):((1,0),0,0)` for x4, as asserted
# > above. Its `tCrA: ((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK)))` has thread modes, so it is not one thread's
# > fragment either: that is `(MMA, MMA_M, MMA_K)`, `((2,2,2),1,1):((1,2,4),0,0)` above.

# %% [markdown]
# ### 5. Which thread, register and half, for A and for B
#
# Element (m, k) of A lands where the MMA's A layout sends it: invert the TV layout. Value v of a thread is
# half v % 2 of register v // 2 (two fp16 in one 32-bit register).
#
# B needs one more fact. CuTe writes every operand with K last: the MMA computes
# C[m, n] = sum over k of A[m, k] * B[n, k], so B's tile is **N x K** (8 x 16 for one `m16n8k16`), indexed
# (n, k) with column-major index n + 8k. In BLAS terms that is B transposed: a B stored N x K with k
# contiguous is what the MMA reads directly (both operands "K-major"). Thread 0's B values are (n, k) =
# (0, 0), (0, 1), (0, 8), (0, 9): one n, four k. Both operands, inverted by walking every thread:

# %%
identity_B = cute.make_identity_tensor((8, 16))            # B: N x K
print("thread 0's B values (n, k):", [mma.get_slice(0).partition_B(identity_B)[v] for v in range(4)])
where_A, where_B = {}, {}
for t in range(32):
    part_A = mma.get_slice(t).partition_A(identity_A)
    part_B = mma.get_slice(t).partition_B(identity_B)
    for v in range(8):
        where_A[part_A[v]] = (t, v // 2, v % 2)
    for v in range(4):
        where_B[part_B[v]] = (t, v // 2, v % 2)
print("A[8,1] ->", where_A[8, 1], "  A[3,9] ->", where_A[3, 9], "  A[15,15] ->", where_A[15, 15])
print("B[3,9] ->", where_B[3, 9], "  B[5,2] ->", where_B[5, 2], "  B[7,15] ->", where_B[7, 15])
assert [mma.get_slice(0).partition_B(identity_B)[v] for v in range(4)] == [(0, 0), (0, 1), (0, 8), (0, 9)]
assert where_A[8, 1] == (0, 1, 1) and where_A[3, 9] == (12, 2, 1) and where_A[15, 15] == (31, 3, 1)
assert where_B[3, 9] == (12, 1, 1) and where_B[5, 2] == (21, 0, 0) and where_B[7, 15] == (31, 1, 1)

# %% [markdown]
# A[3,9] and B[3,9] sit in the same thread and half but not the same register: A's values go (k, k+1),
# then m + 8, then k + 8; B's (one n per thread) go (k, k+1), then k + 8. The same answer without the loop:
# the right inverse of B's TV layout, at B[3,9]'s index 3 + 8 * 9, is thread + 32 * value.

# %%
index_B = cute.right_inverse(mma.tv_layout_B_tiled)(3 + 8 * 9)
print("right_inverse(B's TV layout)(75) =", index_B, "-> thread", index_B % 32, ", value", index_B // 32)
assert (index_B % 32, index_B // 32) == (12, 3) and where_B[3, 9] == (12, 3 // 2, 3 % 2)

# %% [markdown]
# ### 6. The 2x2 TiledMMA of sgemm_sm80
#
# CUTLASS's C++ example `sgemm_sm80.cu` uses 2x2 atoms (4 warps) and a (32, 32, 16) tile. Here are its
# layouts, with CuTeDSL's names (C++'s `layoutA_TV`, `layoutB_TV` and `layoutC_TV` are `tv_layout_A_tiled`,
# `tv_layout_B_tiled` and `tv_layout_C_tiled`; `thr_layout_vmnk` has one name in both). Its atom accumulates
# in fp16, ours in fp32; the layouts are the same:

# %%
mma_2x2 = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(F16, cute.Float32, (16, 8, 16)), (2, 2, 1),
                              permutation_mnk=(32, 32, 16))
print(mma_2x2.thr_layout_vmnk)
print("A", mma_2x2.tv_layout_A_tiled)
print("B", mma_2x2.tv_layout_B_tiled)
print("C", mma_2x2.tv_layout_C_tiled)
assert str(mma_2x2.thr_layout_vmnk) == "(32,2,2,1):(1,32,64,0)"
assert str(mma_2x2.tv_layout_A_tiled) == "((4,8,2,2),((2,2,2),(1,1))):((64,1,16,0),((32,8,256),(0,0)))"
assert str(mma_2x2.tv_layout_B_tiled) == "((4,8,2,2),((2,2),(2,1))):((64,1,0,8),((32,256),(16,0)))"
assert str(mma_2x2.tv_layout_C_tiled) == "((4,8,2,2),((2,2),(1,2))):((64,1,16,256),((32,8),(0,512)))"
s2r_A_2x2 = cute.make_tiled_copy_A(ldsm_x4, mma_2x2)
assert str(s2r_A_2x2.layout_tv_tiled) == str(mma_2x2.tv_layout_A_tiled)
assert tuple(t.shape for t in s2r_A_2x2.tiler_mn) == (32, 16)

# %% [markdown]
# The stride 0 in A's thread mode is the N warp index: warps 0 and 2 (same M, different N) load the same A
# rows. Note B's value mode `((2,2),(2,1))`: past the atom's own 4 values, a thread's values go on along N
# (the 2: this warp's two n8 atoms) and then along K (the 1). That order decides the next section.

# %% [markdown]
# > **Elsewhere you may read** these layouts of `sgemm_sm80.cu` printed from C++, with a walk-through of
# > `thrfrg_C` ("CuTe Layout Transformations for MMA and Copy (sgemm_sm80.cu)"). They hold: the strings are
# > the ones asserted above, and chapter 07 (section 3) runs the steps of `thrfrg_C` to the same C layout.

# %% [markdown]
# ### 7. x1, x2 or x4: which ldmatrix fits
#
# One `ldmatrix.x4` fills 4 registers, 8 fp16 values, of every lane; x2 fills 4 values, x1 2. A thread's
# values of an operand come in the order of the MMA's value mode: the atom's own values (rows x K / 32 of
# one MMA: 8 for A and 4 for B of `m16n8k16`), then the repeats along M (for A) or N (for B), then the
# repeats along K. Here is B for one warp over five warp tiles (`permutation_mnk`, so the warp repeats the
# atom to cover the tile):

# %%
tiles = [(16, 8, 16), (16, 16, 16), (16, 8, 32), (16, 24, 16), (16, 24, 32)]
for tile in tiles:
    warp_mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(F16, cute.Float32, (16, 8, 16)), (1, 1, 1),
                                   permutation_mnk=tile)
    print(f"warp tile {tile}:  B's TV layout {warp_mma.tv_layout_B_tiled}")
warp_B = {tile: str(cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(F16, cute.Float32, (16, 8, 16)),
                                        (1, 1, 1), permutation_mnk=tile).tv_layout_B_tiled) for tile in tiles}
assert warp_B[16, 8, 16] == "((4,8),((2,2),(1,1))):((16,1),((8,64),(0,0)))"
assert warp_B[16, 16, 16] == "((4,8),((2,2),(2,1))):((32,1),((16,128),(8,0)))"
assert warp_B[16, 8, 32] == "((4,8),((2,2),(1,2))):((16,1),((8,64),(0,128)))"
assert warp_B[16, 24, 16] == "((4,8),((2,2),(3,1))):((48,1),((24,192),(8,0)))"
assert warp_B[16, 24, 32] == "((4,8),((2,2),(3,2))):((48,1),((24,192),(8,384)))"

# %% [markdown]
# Does an x4 copy of B fit each tile, that is: does the TiledCopy that `make_tiled_copy_B` builds load every
# register of the thread's fragment exactly once? `chapter06.ldmatrix_fit` (cutekit's, from the chapter's
# check module) asks the copy itself: thread 0's `partition_S` and its `retile` of the fragment must ask for
# the same number of ldmatrix instructions, and the retiled view must name each register once. Asked of
# cutekit's reference algebra, and of real CuTeDSL 4.8.1 in a subprocess:

# %%
from cutekit.checks import ch06_ldmatrix as chapter06

x4_cases = [("B", tile, (16, 8, 16), 4) for tile in tiles]
in_cutekit = [chapter06.ldmatrix_fit(cute, *case) for case in x4_cases]
for tile, verdict in zip(tiles, in_cutekit):
    print(f"x4 for B, {tile}:  cutekit: {verdict}")
assert [verdict == "fits" for verdict in in_cutekit] == [False, True, True, False, False]
assert in_cutekit[0] == "retile writes some values twice"
assert in_cutekit[3] == "retile writes past the thread's 12 values"
assert all(chapter06.ldmatrix_fit(cute, "B", tile, (16, 8, 16), 2) == "fits" for tile in tiles)
if cutekit.backend.probe_cutedsl_cpu().available:
    in_cutedsl = chapter06.ldmatrix_fit_in_cutedsl(x4_cases)
    for tile, verdict in zip(tiles, in_cutedsl):
        print(f"x4 for B, {tile}:  CuTeDSL: {verdict}")
    assert [verdict == "fits" for verdict in in_cutedsl] == [False, True, True, False, False]
    assert in_cutedsl[0] == "retile writes some values twice"
    assert in_cutedsl[3] == "retile writes past the thread's 12 values"
else:
    print("CuTeDSL's answers need the cutedsl-cpu tier (nvidia-cutlass-dsl installed): `python -m cutekit doctor`")

# %% [markdown]
# CuTeDSL 4.8.1's `make_tiled_copy_B` builds every one of these copies without a word; what is wrong shows
# only in `retile` and `partition_S`. At (16, 8, 16) the x4's 8 values land on the thread's 4 values (2
# registers) twice over. At (16, 24, 16) it reads 8 rows past the tile's 24 and writes 4 values (2 registers)
# past the thread's 12. At (16, 24, 32) the source asks for 4 instructions and the registers for 3; compiling such a kernel
# for sm_80 fails ("unable to retile ... with tiled copy"). cutekit's reference algebra builds all three as
# CuTeDSL does, so that code written against CuTeDSL behaves the same here, and at the first two it also says
# why the copy is wrong, with a named warning (the thread holds 4 values of B, one x4 moves 8):

# %%
import warnings

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    warp_mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(F16, cute.Float32, (16, 8, 16)), (1, 1, 1),
                                   permutation_mnk=(16, 8, 16))
    cute.make_tiled_copy_B(ldsm_x4, warp_mma)
print(f"{caught[0].category.__name__}: {caught[0].message}")
assert caught[0].category.__name__ == "AtomDoesNotFitWarning"

# %% [markdown]
# x2 fits all five.
#
# **The rule.** An ldmatrix.x_n takes 2n consecutive values of each lane, from the front of that list of
# modes. It fits when the 2n can be cut from the front: use up whole modes while their size divides what is
# still needed, and stop at a mode whose size is a multiple of what is still needed. B's modes (4, N/8, K/16):
#
# | warp tile | B's value modes | x4 needs 8 | fits |
# |---|---|---|---|
# | (16, 8, 16) | 4, 1, 1 | 4 leaves 2; nothing left to give it | x2 |
# | (16, 16, 16) | 4, 2, 1 | 4 leaves 2; the 2 N repeats give it | x4 |
# | (16, 8, 32) | 4, 1, 2 | 4 leaves 2; no N repeat; the 2 K repeats give it | x4 |
# | (16, 24, 16) | 4, 3, 1 | 4 leaves 2; 3 is no multiple of 2 | x2 |
# | (16, 24, 32) | 4, 3, 2 | 4 leaves 2; stuck at the 3 | x2 |
#
# The last row is the trap: a thread holds 24 values of B there, a whole number of x4s, and the tile's 12 8x8
# matrices are three x4s' worth; still no x4 fits, because 8 consecutive values would straddle the N repeats.
# A of `m16n8k16` has 8 values of its own, so x4 fits A over any warp tile. The same rule holds for both
# operands of `m16n8k16` and of `m16n8k8` (A 16x8, B 8x8), checked against real CuTeDSL's copies for every
# warp tile up to 64 in each mode.
#
# ## Exercises 1 to 3
#
# These use the reference algebra (`cute` here is cutekit's). Exercise 4, a kernel, is at the end.
#
# ### Exercise 1 · A round trip through the registers
#
# `cute.nvgpu.warp.StMatrix8x8x16bOp(transpose, num_matrices)` is stmatrix (sm_90), ldmatrix run backwards:
# each lane's registers go out to 8x8 fp16 matrices in shared memory, at the row addresses the lanes pass. Its
# source is the registers and its destination the row addresses, so its two layouts are ldmatrix's, swapped:

# %%
stsm_x4 = cute.make_copy_atom(cute.nvgpu.warp.StMatrix8x8x16bOp(False, 4), F16)
print("stmatrix x4  layout_src_tv", stsm_x4.layout_src_tv, "  layout_dst_tv", stsm_x4.layout_dst_tv)
assert str(stsm_x4.layout_src_tv) == str(ldsm_x4.layout_dst_tv) == "(32,(2,4)):(2,(1,64))"
assert str(stsm_x4.layout_dst_tv) == str(ldsm_x4.layout_src_tv) == "(32,8):(8,1)"

# %% [markdown]
# A warp loads with ldmatrix (transpose `load_transpose`) and stores the same registers with stmatrix
# (`store_transpose`), both with `num_matrices`, every lane passing the same row address to both. Write
# `written_from(num_matrices, load_transpose, store_transpose)` returning the layout that sends a stmatrix
# destination index (lane + 32 * element of that lane's 16-byte row) to the ldmatrix source index (the same
# numbering) whose element is written there. For example `written_from(4, False, True)` sends destination lane
# 9, element 2 (index 73) to source lane 10, element 1 (index 42). Section 3's renumbering, applied to each
# atom: which side of each is the registers? Use only `layout_src_tv` and `layout_dst_tv` (neither atom has a
# reference layout in CuTeDSL): the check also runs your function under real CuTeDSL.

# %%
def written_from(num_matrices, load_transpose, store_transpose):
    # YOUR CODE HERE
    return None


check("ch06.ref_to_src", written_from)

# %% [markdown]
# ### Exercise 2 · Who holds an element, on four warps
#
# Take section 6's TiledMMA, `mma_2x2`: 2x2 warps of `m16n8k16` over `permutation_mnk=(32, 32, 16)`, threads 0
# to 127. A is 32 x 16 (M x K), B is 32 x 16 (N x K), and each thread holds 8 values of each (4 registers, in
# the order of the TiledMMA's value mode). Write `held_by(operand, row, k)`: every `(thread, register, half)`
# that holds element (row, k) of A (row = m) or B (row = n), as a sorted list (value v is half v % 2 of
# register v // 2). For example `held_by('B', 20, 5) == [(18, 2, 1), (50, 2, 1)]`. Section 5 answered this for
# one warp; read section 6's layouts before you count on one holder per element.

# %%
def held_by(operand, row, k):
    # YOUR CODE HERE
    return None


check("ch06.lands_in", held_by)

# %% [markdown]
# ### Exercise 3 · x1, x2 or x4
#
# A single warp runs an fp16 MMA atom `atom_mnk`, `(16, 8, 16)` or `(16, 8, 8)`, over the warp tile
# `tile_mnk` (given as `permutation_mnk`). Write `ldmatrix_for(operand, tile_mnk, atom_mnk)`: the largest
# `num_matrices` (4, 2 or 1) whose ldmatrix copy fits operand `"A"` or `"B"` (section 7's rule). Reason it
# out: the TiledCopy constructors are switched off while it is checked.

# %%
def ldmatrix_for(operand, tile_mnk, atom_mnk):
    # YOUR CODE HERE
    return None


check("ch06.ldmatrix_for", ldmatrix_for)

# %% [markdown]
# ## Run it
#
# From here on the code is a CuTeDSL program: `cutekit.use("auto")` makes `import cutlass` the real CuTeDSL
# on a machine with an sm_80+ GPU, and cutekit's CPU simulator elsewhere (there, ldmatrix runs as a warp
# collective built from the atom's TV layouts).

# %%
backend = cutekit.use("auto")
print(backend)

import torch

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack

# %% [markdown]
# One warp, warp tile `permutation_mnk=(16, 16, 32)`: A is 16 x 32 (M x K) and B is 16 x 32 (N x K, k
# contiguous, as section 5 says the MMA reads it), so the warp runs two n8 atoms side by side and two k-blocks
# (a *k-block* is the K slice one MMA instruction takes, 16 here). B's value modes are (4, 2, 2): x4 fits B as
# well as A. The kernel copies both tiles into shared memory, loads each with one `cute.copy` of ldmatrix.x4
# into retiled MMA fragments (two instructions per operand, one per k-block), and writes every thread's 16
# values (8 registers) of each to a (32, 16) global tensor. Shared memory comes from
# `cutlass.memory.SmemAllocator()`, whose `allocate_tensor(type, layout, alignment)` carves a tensor out of
# the block's shared memory (CuTeDSL 4.8.1 still accepts the older `cutlass.utils.SmemAllocator`, with a
# deprecation warning).
# The TiledMMA and the TiledCopys are arguments of the kernel, annotated `cute.TiledMma` and
# `cute.TiledCopy`; `tiled_mma.make_fragment_B` allocates B's registers as `make_fragment_A` does A's.

# %%
@cute.kernel
def ldmatrix_kernel(mA: cute.Tensor, mB: cute.Tensor, mOutA: cute.Tensor, mOutB: cute.Tensor,
                    tiled_mma: cute.TiledMma, s2r_A: cute.TiledCopy, s2r_B: cute.TiledCopy):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.memory.SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float16, cute.make_layout((16, 32), stride=(32, 1)), 16)
    sB = smem.allocate_tensor(cutlass.Float16, cute.make_layout((16, 32), stride=(32, 1)), 16)
    for i in cutlass.range_constexpr(16):                # global -> shared, 16 elements per thread
        sA[tidx * 16 + i] = mA[tidx * 16 + i]
        sB[tidx * 16 + i] = mB[tidx * 16 + i]
    cute.arch.sync_threads()

    thread_mma = tiled_mma.get_slice(tidx)
    tCrA = tiled_mma.make_fragment_A(thread_mma.partition_A(sA))     # (MMA, MMA_M, MMA_K) registers
    tCrB = tiled_mma.make_fragment_B(thread_mma.partition_B(sB))     # (MMA, MMA_N, MMA_K)
    thread_A, thread_B = s2r_A.get_slice(tidx), s2r_B.get_slice(tidx)
    cute.copy(s2r_A, thread_A.partition_S(sA), thread_A.retile(tCrA))   # ldmatrix.x4 into the MMA's registers
    cute.copy(s2r_B, thread_B.partition_S(sB), thread_B.retile(tCrB))

    for v in cutlass.range_constexpr(cute.size(tCrA)):
        mOutA[tidx, v] = tCrA[v]
    for v in cutlass.range_constexpr(cute.size(tCrB)):
        mOutB[tidx, v] = tCrB[v]


@cute.jit
def load_operands(mA: cute.Tensor, mB: cute.Tensor, mOutA: cute.Tensor, mOutB: cute.Tensor):
    tiled_mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)),
                                    (1, 1, 1), permutation_mnk=(16, 16, 32))
    atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), cutlass.Float16)
    s2r_A = cute.make_tiled_copy_A(atom, tiled_mma)
    s2r_B = cute.make_tiled_copy_B(atom, tiled_mma)
    ldmatrix_kernel(mA, mB, mOutA, mOutB, tiled_mma, s2r_A, s2r_B).launch(grid=[1, 1, 1], block=[32, 1, 1])


def on_backend(*tensors):
    return [t.cuda() for t in tensors] if backend.name == "gpu" else list(tensors)


# counting tiles: A[m, k] = 32m + k and B[n, k] = 1000 + 32n + k are exact in fp16, so a value names its element
A = torch.arange(512, dtype=torch.float16).reshape(16, 32)
B = (1000 + torch.arange(512)).to(torch.float16).reshape(16, 32)
out_A = torch.full((32, 16), -1.0, dtype=torch.float16)
out_B = torch.full((32, 16), -1.0, dtype=torch.float16)
here = on_backend(A, B, out_A, out_B)
load_operands(*[from_dlpack(t, assumed_align=16) for t in here])
got_A, got_B = here[2].cpu(), here[3].cpu()
print("thread 0's A registers:", got_A[0].tolist())
print("thread 0's B registers:", got_B[0].tolist())

# %% [markdown]
# Now the same registers from the reference algebra: thread t's value v should be the element at
# `partition_A(identity)[v]` of the warp's A layout (and `partition_B` for B).

# %%
from cutekit import cute as reference

warp_mma = reference.make_tiled_mma(reference.nvgpu.warp.MmaF16BF16Op(reference.Float16, reference.Float32,
                                                                      (16, 8, 16)), (1, 1, 1),
                                    permutation_mnk=(16, 16, 32))
identity = reference.make_identity_tensor((16, 32))
want_A = torch.tensor([[float(A[warp_mma.get_slice(t).partition_A(identity)[v]]) for v in range(16)]
                       for t in range(32)], dtype=torch.float16)
want_B = torch.tensor([[float(B[warp_mma.get_slice(t).partition_B(identity)[v]]) for v in range(16)]
                       for t in range(32)], dtype=torch.float16)
assert torch.equal(got_A, want_A) and torch.equal(got_B, want_B)
assert got_A[0].tolist() == [0, 1, 256, 257, 8, 9, 264, 265, 16, 17, 272, 273, 24, 25, 280, 281]
assert got_B[0].tolist() == [1000, 1001, 1008, 1009, 1256, 1257, 1264, 1265,
                             1016, 1017, 1024, 1025, 1272, 1273, 1280, 1281]
print(f"all 32 x 16 values of A and of B match the MMA's layouts (ran on: {backend.name})")

# %% [markdown]
# Thread 0 holds A[0,0], A[0,1], A[8,0], A[8,1], A[0,8], A[0,9], A[8,8], A[8,9] in registers 0..3 (one
# x4: register r is matrix r, exactly the `m16n8k16` A fragment), then the same for k + 16 from the second
# x4. Its B registers: B[0,0], B[0,1], B[0,8], B[0,9] (the first n8 atom), B[8,0], B[8,1], B[8,8], B[8,9]
# (the second, 8 rows of N further), then both again for k + 16: B's value modes (4, 2, 2) in order.
#
# ## Exercise 4 · The S2R copy of B, one k-block at a time
#
# A GEMM's main loop loads one k-block while the tensor cores work on the previous one, so it copies a
# k-block at a time, not the whole tile. Here the operand is **B**, an 8 x 32 tile (N x K, k contiguous) in
# shared memory, and the TiledMMA is the single `m16n8k16` atom (no `permutation_mnk`), so B's fragment is
# `(MMA, MMA_N, MMA_K)` with MMA_K = 32 / 16 = 2 k-blocks. Complete `s2r_kernel`: build the S2R
# TiledCopy for B inside the kernel from `tiled_mma`, with the largest ldmatrix that fits (section 7's rule:
# the warp tile is the TiledMMA's own), and load **only k-block `k_block`** of `sB` into the MMA fragment
# `tCrB` with one `cute.copy` (section 4 says which two views it copies between). The lines around it write
# that k-block's values out. The check runs it for both k-blocks on random data (on the simulator) and
# compares every register with the MMA's layout; where CuTeDSL is installed it also compiles your kernel
# for sm_80 and counts its ldmatrix instructions, of each size.

# %%
@cute.kernel
def s2r_kernel(mB: cute.Tensor, mOut: cute.Tensor, tiled_mma: cute.TiledMma, k_block: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    sB = cutlass.memory.SmemAllocator().allocate_tensor(cutlass.Float16,
                                                        cute.make_layout((8, 32), stride=(32, 1)), 16)
    for i in cutlass.range_constexpr(8):
        sB[tidx * 8 + i] = mB[tidx * 8 + i]
    cute.arch.sync_threads()
    tCrB = tiled_mma.make_fragment_B(tiled_mma.get_slice(tidx).partition_B(sB))
    tCrB.fill(-1.0)
    # YOUR CODE HERE
    pass
    for v in cutlass.range_constexpr(cute.size(tCrB, mode=[0])):
        mOut[tidx, v] = tCrB[v, 0, k_block]


@cute.jit
def load_k_block(mB: cute.Tensor, mOut: cute.Tensor, k_block: cutlass.Constexpr):
    tiled_mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)))
    s2r_kernel(mB, mOut, tiled_mma, k_block).launch(grid=[1, 1, 1], block=[32, 1, 1])


check("ch06.s2r_k_block", load_k_block)

# %% [markdown]
# ## What to remember
#
# - A copy atom's source and destination layouts say what each lane reads and receives; for ldmatrix the
#   reference numbering is the destination, so dst2ref is the identity and src2ref (partition_S) renumbers.
# - `make_tiled_copy_A/B(atom, tiled_mma)` uses the MMA's operand layout as the copy's TV layout; B is N x K.
# - `retile(fragment)` is one thread's MMA registers grouped per copy instruction; copy into it, never into
#   the MMA fragment itself.
# - ldmatrix.x_n takes 2n consecutive values per lane: it fits when 2n can be cut from the front of the
#   value modes (atom values, then M or N repeats, then K repeats). CuTeDSL builds copies that do not fit.
#
# Next: **07**, a whole GEMM: cp.async into swizzled shared memory, ldmatrix, mma.sync.
